"""Checkpoints of the host loop (:func:`regbayes.inference.run`): a fit's runs, resumed exactly.

What a checkpoint holds. A fit may call the host loop more than once (MultiTaskInfiniteLatentSVC's
tempered iterations, then the rest; M2DPM's ``n_init`` restarts): each call is a *part* of
the fit's :class:`HostCheckpoint`. For every part begun so far the file records, after its
last completed iteration ``t``:

* ``t`` (the next iteration: the position in the run's stream of integer seeds, which
  :func:`regbayes.rng.host_seeds` draws from the run's key all at once, so that iteration
  ``t`` gets the same seed however the run got there);
* the algorithm's state, whatever it holds (NumPy and JAX arrays, typed PRNG keys, numbers,
  strings, bytes, tuples, lists, dicts, sets and the library's NamedTuples and dataclasses,
  nested), encoded losslessly by :func:`encode`;
* the draws kept so far and their iterations, the per-iteration trace, the wall times,
  compilation seconds, the last objective (``tol``), whether the run converged or was
  stopped, and ``carry``: what the caller accumulates on the host between iterations
  (MedLDA's running sum of Phi over the second half, the snapshots).

Why resuming is exact. An iteration is a function of (seed of ``t``, state, data) only; the
state comes back bit for bit (arrays as ``.npy`` entries with their dtype, shape and
order; floats through JSON's shortest round-trip repr; NumPy scalars as 0-d arrays), the
seed stream restarts at ``t``, and whatever outside the state feeds the result (draws,
trace, ``carry``) is restored with it. A resumed fit therefore computes exactly the
iterations an uninterrupted one computes after ``t``. Only timings differ (wall times,
compile seconds), and the user's ``callback``/``monitor`` hooks are not called again for
iterations read from the file.

Safety. The file is :mod:`regbayes.archive`'s checksummed container written atomically by
:func:`regbayes.inference.checkpoint.write` (a crash while writing leaves the previous
checkpoint). Reading never unpickles and never imports a name from the file: a record
type named in the file must be a NamedTuple or dataclass of an already imported
``regbayes`` module. Every part has a fingerprint (SHA-256 of the algorithm, run
settings, the estimator's parameters, the key, the starting state and the data): a file of
another run raises :class:`~regbayes.inference.checkpoint.CheckpointError`, as does a
damaged or truncated one.
"""
from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from ..archive import float_node, float_of_node
from ..precision import maybe_x64
from .checkpoint import CheckpointError, fingerprint, read, write

PROGRESS_KEY = "host_parts"


# --------------------------------------------------------------------------- codec
class _Encoder:
    """Turns a value into a JSON-ready node, collecting its arrays into ``self.arrays``
    under names ``<prefix><n>``. With ``describe`` (fingerprints), values the codec does
    not store are described by type and repr instead of refused."""

    def __init__(self, prefix: str = "", describe: bool = False, copy: bool = False):
        self.prefix, self.describe, self.copy = prefix, describe, copy
        self.arrays: dict[str, np.ndarray] = {}

    def array(self, value: np.ndarray) -> str:
        name = f"{self.prefix}{len(self.arrays)}"
        if not self.describe and (value.dtype.kind not in "biuf" or value.dtype.fields is not None):
            raise TypeError(f"a host-loop checkpoint stores numeric arrays only, not dtype {value.dtype}")
        self.arrays[name] = np.array(value) if self.copy else value
        return name

    def encode(self, value):
        t = type(value)
        if value is None or t in (bool, int, str):
            return value
        if t is float:
            return float_node(value)
        if isinstance(value, jax.Array):
            if jax.dtypes.issubdtype(value.dtype, jax.dtypes.prng_key):
                return {"kind": "key", "impl": str(jax.random.key_impl(value)),
                        "name": self.array(np.asarray(jax.random.key_data(value)))}
            return {"kind": "jax", "name": self.array(np.asarray(value))}
        if isinstance(value, np.ndarray):
            return {"kind": "array", "name": self.array(value)}
        if isinstance(value, np.generic):
            return {"kind": "scalar", "name": self.array(np.asarray(value))}
        if t is bytes:
            return {"kind": "bytes", "name": self.array(np.frombuffer(value, np.uint8))}
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            return {"kind": "record", "type": _type_name(t), "items": [self.encode(v) for v in value]}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {"kind": "dataclass", "type": _type_name(t),
                    "fields": {f.name: self.encode(getattr(value, f.name)) for f in dataclasses.fields(value)}}
        if t in (list, tuple):
            return {"kind": t.__name__, "items": [self.encode(v) for v in value]}
        if t in (set, frozenset):
            return {"kind": t.__name__, "items": [self.encode(v) for v in sorted(value, key=repr)]}
        if t is dict:
            return {"kind": "dict", "items": [[self.encode(k), self.encode(v)] for k, v in value.items()]}
        if self.describe:
            text = repr(value)
            return {"kind": "other", "type": _type_name(t),
                    "repr": getattr(value, "__qualname__", "") if " at 0x" in text else text}
        raise TypeError(f"a host-loop checkpoint cannot store a {_type_name(t)} (it stores arrays, numbers, strings, "
                        "bytes, containers and the library's records)")


def _type_name(t: type) -> str:
    return f"{t.__module__}:{t.__qualname__}"


def _record_type(name: str, dataclass: bool) -> type:
    """The class ``module:qualname`` of an already imported ``regbayes`` module, if it is a
    NamedTuple (or, with ``dataclass``, a dataclass); nothing is imported."""
    module, _, qualname = name.partition(":")
    cls = sys.modules.get(module) if module.split(".")[0] == "regbayes" else None
    for part in qualname.split("."):
        cls = getattr(cls, part, None)
    ok = isinstance(cls, type) and (dataclasses.is_dataclass(cls) if dataclass else issubclass(cls, tuple) and hasattr(cls, "_fields"))
    if not ok:
        raise CheckpointError(f"unknown record type {name!r} in the checkpoint")
    return cls


def decode(node, arrays: dict):
    """The value that :class:`_Encoder` encoded as ``node`` with ``arrays``."""
    if node is None or type(node) in (bool, int, str, float):
        return node
    kind = node["kind"]
    if kind == "float":
        return float_of_node(node, CheckpointError, " in the checkpoint")
    if kind == "array":  # a copy: a run may change its state in place
        return np.array(arrays[node["name"]])
    if kind == "jax":  # 64-bit arrays stay 64-bit (they were made inside enable_x64)
        value = arrays[node["name"]]
        with maybe_x64(value.dtype.itemsize == 8):
            return jnp.asarray(value)
    if kind == "key":
        return jax.random.wrap_key_data(jnp.asarray(arrays[node["name"]]), impl=node["impl"])
    if kind == "scalar":
        return arrays[node["name"]][()]
    if kind == "bytes":
        return arrays[node["name"]].tobytes()
    if kind == "record":
        return _record_type(node["type"], False)(*[decode(v, arrays) for v in node["items"]])
    if kind == "dataclass":
        return _record_type(node["type"], True)(**{k: decode(v, arrays) for k, v in node["fields"].items()})
    if kind in ("list", "tuple", "set", "frozenset"):
        return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[kind](decode(v, arrays) for v in node["items"])
    if kind == "dict":
        return {decode(k, arrays): decode(v, arrays) for k, v in node["items"]}
    raise CheckpointError(f"unknown value kind {kind!r} in the checkpoint")


def encode(value, prefix: str = "", copy: bool = False):
    """``(node, arrays)``: ``value`` as a JSON-ready node and the arrays it names (copies
    with ``copy``); :func:`decode` gives the value back. TypeError for what it cannot store."""
    encoder = _Encoder(prefix, copy=copy)
    return encoder.encode(value), encoder.arrays


def tree_fingerprint(*values) -> str:
    """SHA-256 of ``values`` (any nesting of what :func:`encode` stores, arrays by content;
    other objects, such as functions, by type and repr)."""
    encoder = _Encoder(describe=True)
    node = encoder.encode(list(values))
    return fingerprint(json.dumps(node, sort_keys=True), *encoder.arrays.values())


# --------------------------------------------------------------------------- the fit's checkpoint
class HostCheckpoint:
    """The checkpoint file of one fit's host-loop runs (module docstring).

    ``path`` is the file; it is rewritten (atomically) at the end of an iteration once
    ``every`` seconds have passed since the last write (0: after every iteration).
    ``settings`` enter every part's fingerprint: what determines the steps but is not in the
    state, the data or the key (an estimator's parameters). Make one per fit and pass it to
    every :func:`regbayes.inference.run` of the fit, in order.
    """

    def __init__(self, path, every: float = 60.0, settings=()):
        self.path, self.every = Path(path), float(every)
        self._settings = tree_fingerprint(settings)
        self._parts: list = []  # per part begun: {"fingerprint", "tree": node, "arrays"} or None (nothing yet)
        self._ids: list = []  # per part begun: its fingerprint
        self._found: list = []  # the parts the file held
        self._file_id = None
        self._last_write = time.perf_counter()

    def begin(self, run_fingerprint: str):
        """Start the next part; returns what the file holds of it (the dict that
        :func:`regbayes.inference.run` saved), or None for a fresh start."""
        index = len(self._parts)
        run_id = fingerprint(self._settings, index, run_fingerprint)
        if index == 0:
            self._file_id = run_id
            found = read(self.path, run_id)  # CheckpointError: damaged, or of another run
            if found is not None:
                self._found = self._parts_of(*found)
        self._parts.append(None)
        self._ids.append(run_id)
        if index >= len(self._found):
            return None
        part = self._found[index]
        if part["fingerprint"] != run_id:
            raise CheckpointError(f"{self.path} holds a checkpoint of another run (its part {index} had other "
                                  "settings, data or starting point): delete it or choose another path")
        self._parts[index] = part
        try:
            return decode(part["tree"], part["arrays"])
        except CheckpointError:
            raise
        except Exception as exc:
            raise CheckpointError(f"{self.path}: part {index} cannot be rebuilt ({type(exc).__name__}: {exc})") from exc

    def _parts_of(self, progress: dict, arrays: dict) -> list:
        parts = progress.get(PROGRESS_KEY)
        if not isinstance(parts, list):
            raise CheckpointError(f"{self.path} is not a checkpoint of a host-loop run")
        try:
            return [{"fingerprint": p["fingerprint"], "tree": p["tree"],
                     "arrays": {name: arrays[name] for name in arrays if name.startswith(f"p{i}.")}}
                    for i, p in enumerate(parts)]
        except Exception as exc:
            raise CheckpointError(f"{self.path} cannot be read as a host-loop checkpoint ({type(exc).__name__}: {exc})") from exc

    def update(self, snapshot, finished: bool) -> None:
        """After an iteration of the current part: ``snapshot()`` is its progress (called only
        when needed). A finished part is kept (copied) for the writes of later parts; the
        file is written when ``every`` seconds have passed since the last write."""
        due = time.perf_counter() - self._last_write >= self.every
        if not (due or finished):
            return
        index = len(self._parts) - 1
        # a finished part's arrays are copied: the next part may change its state in place
        tree, arrays = encode(snapshot(), prefix=f"p{index}.", copy=finished)
        self._parts[index] = {"fingerprint": self._ids[index], "tree": tree, "arrays": arrays}
        if due:
            self.write()

    def write(self) -> None:
        parts = [p for p in self._parts if p is not None]
        arrays = {name: a for p in parts for name, a in p["arrays"].items()}
        progress = {PROGRESS_KEY: [{"fingerprint": p["fingerprint"], "tree": p["tree"]} for p in parts]}
        write(self.path, self._file_id, progress, arrays)
        self._last_write = time.perf_counter()
