"""Minibatches from data larger than memory: a pool of row blocks streamed from disk.

The sampler's data are a *pool* of ``P`` slots on the device, each as long as the
largest block of the data set (a Parquet row group, a Zarr chunk, an svmlight file, a
Dask chunk: :mod:`regbayes.datasets.row_blocks`) and each holding one block, drawn with
probability ``m_B / N`` (``m_B`` its rows). A minibatch row is a slot drawn uniformly
and then one of its block's rows (:func:`~regbayes.potentials.minibatch.rows_from_slots`),
scaled by ``N / b`` (paper 000, eq. 7): over the pool's draws every row of the data has
probability ``1 / N``, so the estimate stays unbiased. Only the pool and a few blocks
read ahead by a background thread are in memory.

Every ``r = steps_per_block`` steps one slot (the one filled longest ago) takes a fresh
block; the sampler runs in chunks of ``R = steps_per_chunk`` steps on a fixed pool, and
between chunks the ``R / r`` slots due are refilled (at most ``P``: the pool has at least
``R / r`` slots). A block's deviation from the data, ``delta_B = N (g_B - g)`` (``g_B`` the
mean row subgradient of the block, ``g`` that of the data), stays in the estimate with
weight ``1 / P`` while the block is in the pool; summed over the chunks that share blocks,
the pool's deviation adds noise of long-run variance ``r Var_B(delta_B)`` per step on top
of the minibatch's own ``V`` (``R Var_B(delta_B) / P^2`` per step of a chunk, times the
``P^2 / q`` of the chunks' overlaps, ``q = R / r``). For rows in random order
``Var_B(delta_B) = N^2 s^2 / m`` (``s^2`` the rows' variance, ``m`` the rows of a block), so
the added noise is ``(b r / m) V``: ``b r / m`` is how often each row read is used. Blocks
of sorted data differ more, and add more. Warm-up's calibration measures that term and
treats it as minibatch noise (:func:`regbayes.models.svm_noise.stream_noise_calibration`).
That holds while the pool's life, at least ``R`` steps, is short next to the chain's
relaxation time, about ``N / b`` steps for minibatches of ``b`` rows: the pool must hold a
small share of the data. With a pool as large as the data that bound is lost, and
:class:`BlockStream` warns. The chains of one run share the pool, so their deviations are
alike: agreement between chains (R-hat) does not see the pool's noise.
"""
from __future__ import annotations

import functools
import queue
import threading
import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np

#: Bound on the pool's size on the device, in bytes.
POOL_BYTES = 512 * 2**20
#: The pool's largest share of the data's rows before :class:`BlockStream` warns.
POOL_SHARE = 0.125


@functools.partial(jax.jit, donate_argnums=0)
def _write_slot(pool, block, start):
    """``pool`` (a pytree of (P * c, ...) arrays) with rows ``start:start + c`` replaced by
    ``block`` (the same pytree of (c, ...) arrays), in place."""
    return jax.tree_util.tree_map(lambda p, b: jax.lax.dynamic_update_slice_in_dim(p, b, start, axis=0), pool, block)


def _pad_rows(tree, capacity: int):
    """Each array of ``tree`` zero-padded along its first axis to ``capacity`` rows."""
    def pad(a):
        a = np.asarray(a)
        out = np.zeros((capacity, *a.shape[1:]), a.dtype)
        out[: a.shape[0]] = a
        return out
    return jax.tree_util.tree_map(pad, tree)


class BlockStream:
    """A pool of blocks of ``blocks`` (a :class:`~regbayes.datasets.row_blocks.RowBlocks`)
    on the device, refilled as the sampler runs (module docstring).

    ``prepare(X, y, i)`` turns block ``i`` as read into the arrays the sampler reads (a
    pytree of arrays with one row per data row; it validates them and raises on bad
    values) and ``make_data(rows, slot_rows)`` builds the sampler's data from the pool's
    arrays and the rows each slot holds. The blocks are drawn from a NumPy generator
    seeded with ``seed``, in an order that does not depend on timing: the same seed gives
    the same pools at the same steps, so the same draws.

    The driver (:func:`regbayes.inference.sample`) reads :attr:`data`, runs at most
    :attr:`steps_per_chunk` steps on it, and calls :meth:`advance` with the steps run;
    the pool has ``max(2, ceil(steps_per_chunk / steps_per_block))`` slots.
    """

    def __init__(self, blocks, prepare, make_data, *, steps_per_block: int, steps_per_chunk: int, seed: int,
                 row_bytes: int | None = None, prefetch: int = 4):
        sizes = np.asarray(blocks.block_sizes, np.int64)
        if sizes.sum() <= 0:
            raise ValueError(f"{blocks.source} holds no rows")
        if steps_per_block < 1 or steps_per_chunk < 1:
            raise ValueError(f"steps_per_block and steps_per_chunk must be >= 1, got {steps_per_block}, {steps_per_chunk}")
        self.blocks = blocks
        self.capacity = int(sizes.max())
        self.steps_per_block = int(steps_per_block)
        self.steps_per_chunk = int(steps_per_chunk)
        self.n_slots = max(2, -(-self.steps_per_chunk // self.steps_per_block))
        row_bytes = row_bytes or 4 * (blocks.n_features + 2)
        pool_bytes = self.n_slots * self.capacity * row_bytes
        if pool_bytes > POOL_BYTES:
            raise ValueError(
                f"a pool of {self.n_slots} blocks of {self.capacity} rows ({pool_bytes / 2**20:.0f} MiB) exceeds "
                f"{POOL_BYTES / 2**20:.0f} MiB: store the data in smaller blocks (row groups, chunks, files)")
        share = self.n_slots * sizes.mean() / sizes.sum()
        if share > POOL_SHARE:
            warnings.warn(
                f"the pool of {self.n_slots} blocks holds about {100 * min(share, 1):.0f}% of the {sizes.sum()} rows: the "
                f"noise of the pool's changes is no longer negligible next to the posterior's relaxation, and the draws "
                f"may be too wide. Data of this size fit in memory: pass arrays, or store the data in smaller blocks.",
                UserWarning, stacklevel=3)
        self._make_data = make_data
        self._rng = np.random.default_rng(seed)
        self._p = sizes / sizes.sum()
        self._queue: queue.Queue = queue.Queue(maxsize=max(2, prefetch))
        self._stop = threading.Event()
        self._prepare = prepare
        self._thread = threading.Thread(target=self._read_ahead, name="regbayes-block-reader", daemon=True)
        self._thread.start()
        self.blocks_read = 0
        self.wait_seconds = 0.0  # the sampler's time waiting for blocks from disk
        self._steps = 0
        self._next_slot = 0
        self._slot_rows = np.zeros(self.n_slots, np.int32)
        first = [self._take() for _ in range(self.n_slots)]
        self._pool = jax.tree_util.tree_map(
            lambda *parts: jnp.asarray(np.concatenate(parts)), *[rows for rows, _ in first])
        self._slot_rows[:] = [n for _, n in first]
        self.data = self._make_data(self._pool, jnp.asarray(self._slot_rows))

    def _read_ahead(self):
        """The background thread: read and prepare blocks in the generator's order."""
        while not self._stop.is_set():
            i = int(self._rng.choice(len(self._p), p=self._p))
            try:
                X, y = self.blocks.read(i)
                item = (_pad_rows(self._prepare(X, y, i), self.capacity), len(y))
            except BaseException as error:  # handed to the sampler's thread, which raises it
                item = error
            while not self._stop.is_set():
                try:
                    self._queue.put(item, timeout=0.1)
                    break
                except queue.Full:
                    continue
            if isinstance(item, BaseException):
                return

    def _take(self):
        start = time.perf_counter()
        item = self._queue.get()
        self.wait_seconds += time.perf_counter() - start
        if isinstance(item, BaseException):
            self.close()
            raise item
        self.blocks_read += 1
        return item

    def advance(self, n_steps: int):
        """After ``n_steps`` more steps: refill one slot per ``steps_per_block`` steps
        (counted over the whole run) and return the new data."""
        due = (self._steps + n_steps) // self.steps_per_block - self._steps // self.steps_per_block
        self._steps += n_steps
        for _ in range(int(min(due, self.n_slots))):  # a block replaced within the same refill would never be read
            rows, n = self._take()
            slot = self._next_slot
            self._pool = _write_slot(self._pool, rows, np.int32(slot * self.capacity))
            self._slot_rows[slot] = n
            self._next_slot = (slot + 1) % self.n_slots
        if due:
            self.data = self._make_data(self._pool, jnp.asarray(self._slot_rows))
        return self.data

    def close(self):
        """Stop the reader thread (the pool stays readable)."""
        self._stop.set()
        self._thread.join(timeout=5.0)
