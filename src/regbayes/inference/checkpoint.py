"""Checkpoints of a run of the driver: written atomically, read back verified.

A checkpoint file is the checksummed ``.npz`` container of :mod:`regbayes.archive`: a
``checkpoint.json`` entry (``format`` ``"regbayes-checkpoint"``, ``format_version`` 1, the
run's ``fingerprint``, what the run records about its progress, the names of the arrays)
and the arrays. Each checkpoint replaces the previous one atomically, so a crash while
writing leaves the previous checkpoint whole.

The fingerprint is a SHA-256 of everything that determines the run's draws (settings, the
starting positions, the key, the data): a checkpoint of another run is refused with a
:class:`CheckpointError` rather than resumed from.
"""
from __future__ import annotations

import hashlib
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from .. import archive

FORMAT = "regbayes-checkpoint"
FORMAT_VERSION = 1
METADATA = "checkpoint.json"
TRAILER = b"regbayes-checkpoint sha256:"


class CheckpointError(ValueError):
    """A checkpoint that cannot be resumed from (damaged, of another run or format)."""


def fingerprint(*parts) -> str:
    """SHA-256 of ``parts``: arrays by dtype, shape and bytes, anything else by ``repr``."""
    digest = hashlib.sha256()
    for part in parts:
        if isinstance(part, np.ndarray):
            a = np.ascontiguousarray(part)
            digest.update(f"{a.dtype.str}{a.shape}".encode())
            digest.update(a.tobytes())
        else:
            digest.update(repr(part).encode())
        digest.update(b"\x00")
    return digest.hexdigest()


def write(path, run_fingerprint: str, progress: dict, arrays: dict) -> None:
    """Write ``arrays`` (name -> numeric NumPy array) and ``progress`` (JSON-able) to
    ``path``, replacing the previous checkpoint atomically."""
    arrays = {name: np.asarray(a) for name, a in arrays.items()}
    for name, a in arrays.items():
        if a.dtype.kind not in "biuf":
            raise TypeError(f"checkpoint entry {name!r} has dtype {a.dtype}; only numeric arrays are written")
    metadata = {"format": FORMAT, "format_version": FORMAT_VERSION, "fingerprint": run_fingerprint,
                "progress": progress, "arrays": list(arrays)}
    archive.write_atomic(path, archive.pack(METADATA, metadata, arrays, TRAILER))


def read(path, run_fingerprint: str):
    """``(progress, arrays)`` of the checkpoint at ``path``, or None when there is none.

    Raises :class:`CheckpointError` when the file is not a readable checkpoint, is damaged,
    or was written by another run (another fingerprint)."""
    path = Path(path)
    if not path.exists():
        return None
    metadata, npz = archive.unpack(path, path.read_bytes(), METADATA, TRAILER, CheckpointError, "regbayes checkpoint")
    with npz:
        if metadata.get("format") != FORMAT or metadata.get("format_version") != FORMAT_VERSION:
            raise CheckpointError(f"{path} is not a regbayes checkpoint of format version {FORMAT_VERSION}")
        if metadata.get("fingerprint") != run_fingerprint:
            raise CheckpointError(f"{path} holds a checkpoint of another run (other settings, data, starting point or "
                                  "seed): resume with the same arguments, or delete it or choose another path")
        try:
            arrays = {name: npz[name] for name in metadata["arrays"]}
        except Exception as exc:
            raise CheckpointError(f"{path} cannot be read as a regbayes checkpoint ({type(exc).__name__}: {exc})") from exc
    return metadata["progress"], arrays


def _is_key(leaf) -> bool:
    return isinstance(leaf, jax.Array) and jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key)


def host_leaves(tree) -> list:
    """The leaves of a pytree as NumPy arrays (typed PRNG keys as their key data)."""
    return [np.asarray(jax.random.key_data(leaf) if _is_key(leaf) else leaf) for leaf in jax.tree_util.tree_leaves(tree)]


class RunCheckpoint:
    """The checkpoint of one run of :func:`regbayes.inference.sample`, chunk by chunk.

    The run hands every chunk it ran to :meth:`add_chunk` (its kept positions, or None
    where the chunk keeps none, its records and its seconds) with the kernel states and
    keys after it; the file is rewritten when ``every`` seconds have passed since the
    last write. A run that finds a checkpoint of itself takes its chunks in order from
    :meth:`next_chunk` while :meth:`holds_next`, then continues from
    :meth:`states_and_keys`, the states after the last of them. ``template`` is the
    run's (states, keys) pytree: the saved leaves are put back into its structure.
    """

    def __init__(self, path, run_id: str, every: float, template):
        self.path, self.run_id, self.every = Path(path), run_id, every
        self._template = template
        self._chunks, self._saved_leaves, self._next = [], None, 0
        found = read(self.path, run_id)
        if found is not None:
            progress, arrays = found
            for i, chunk in enumerate(progress["chunks"]):
                positions = arrays[f"chunk{i}.positions"] if chunk["positions"] else None
                stats = {name: arrays[f"chunk{i}.stats.{name}"] for name in chunk["stats"]}
                self._chunks.append((positions, stats, float(chunk["seconds"])))
            self._saved_leaves = [arrays[f"leaf{j}"] for j in range(progress["n_leaves"])]
        self._restored = len(self._chunks)
        self._last_write = time.perf_counter()

    def holds_next(self) -> bool:
        return self._next < self._restored

    def next_chunk(self):
        chunk = self._chunks[self._next]
        self._next += 1
        return chunk

    def states_and_keys(self):
        """The (states, keys) saved with the checkpoint's last chunk, in the template's structure."""
        leaves, treedef = jax.tree_util.tree_flatten(self._template)
        if len(leaves) != len(self._saved_leaves):
            raise CheckpointError(f"{self.path}: the saved sampler state does not fit this run's")
        restored = []
        for leaf, saved in zip(leaves, self._saved_leaves):
            expected = jax.random.key_data(leaf) if _is_key(leaf) else leaf
            if saved.shape != expected.shape or saved.dtype != expected.dtype:
                raise CheckpointError(f"{self.path}: a saved state array is {saved.dtype}{saved.shape}, this run's is "
                                      f"{expected.dtype}{expected.shape}")
            value = jnp.asarray(saved)
            restored.append(jax.random.wrap_key_data(value, impl=jax.random.key_impl(leaf)) if _is_key(leaf) else value)
        return jax.tree_util.tree_unflatten(treedef, restored)

    def add_chunk(self, positions, stats: dict, seconds: float, states_and_keys) -> None:
        self._chunks.append((positions, dict(stats), float(seconds)))
        if time.perf_counter() - self._last_write >= self.every:
            self.write(states_and_keys)

    def write(self, states_and_keys) -> None:
        arrays, chunks = {}, []
        for i, (positions, stats, seconds) in enumerate(self._chunks):
            if positions is not None:
                arrays[f"chunk{i}.positions"] = positions
            arrays.update({f"chunk{i}.stats.{name}": np.asarray(v) for name, v in stats.items()})
            chunks.append({"positions": positions is not None, "stats": list(stats), "seconds": seconds})
        leaves = host_leaves(states_and_keys)
        arrays.update({f"leaf{j}": leaf for j, leaf in enumerate(leaves)})
        write(self.path, self.run_id, {"chunks": chunks, "n_leaves": len(leaves)}, arrays)
        self._last_write = time.perf_counter()
