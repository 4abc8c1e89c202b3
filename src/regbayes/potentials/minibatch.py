"""How every minibatch of the library is drawn (paper 000, eq. 7).

The stochastic potential ``U~ = -log p0 - (|D| / |D~|) sum_{d in D~} log psi_d`` is
unbiased when ``D~`` is drawn uniformly. Two draws serve the library's models:

* :func:`rows_with_replacement` (JAX, inside compiled steps): ``batch_size`` rows of
  ``n``, with replacement, so that the shape is static even when ``n`` is traced (the
  members of one mixture component). Used by the linear-SVM potential and InfiniteSVC's
  per-component potential.
* :func:`rows_from_slots` (JAX): rows of a pool of blocks streamed from disk
  (:mod:`regbayes.inference.streaming`), a slot uniformly and then a row of its block.
* :func:`rows_without_replacement` (NumPy, on the host): for steps whose minibatch
  indexes host state row by row (MedLDA's per-document topic assignments, written back
  after the sweep), where a repeated row would be updated twice.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def rows_with_replacement(key, n, batch_size: int):
    """``batch_size`` row indices drawn uniformly from ``range(n)`` with replacement
    (``n`` an int or a traced scalar; ``n = 0`` gives zeros)."""
    return jax.random.randint(key, (batch_size,), 0, jnp.maximum(n, 1))


def rows_from_slots(key, slot_rows, slot_capacity: int, batch_size: int):
    """``batch_size`` rows of a pool of equal slots of ``slot_capacity`` rows, slot ``s``
    holding its first ``slot_rows[s]`` rows: each a slot drawn uniformly, then one of its
    rows uniformly (with replacement). When each slot holds a block of the data drawn with
    probability ``m_B / N`` (``m_B`` its rows), every row of the data is drawn with
    probability ``1 / N`` over the pools, so ``(N / b)`` times the rows' sum stays an
    unbiased estimate (eq. 7): ``sum_B (m_B / N) (N / m_B) sum_{i in B} g_i = sum_i g_i``."""
    key_slot, key_row = jax.random.split(key)
    slot = jax.random.randint(key_slot, (batch_size,), 0, slot_rows.shape[0])
    rows = slot_rows[slot]
    within = jnp.minimum((jax.random.uniform(key_row, (batch_size,)) * rows).astype(jnp.int32), jnp.maximum(rows - 1, 0))
    return slot * slot_capacity + within


def rows_without_replacement(rng: np.random.Generator, n: int, batch_size: int) -> np.ndarray:
    """``batch_size`` distinct row indices of ``range(n)``, sorted (for gathers in row order)."""
    return np.sort(rng.choice(n, size=batch_size, replace=False))
