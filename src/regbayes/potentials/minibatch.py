"""How every minibatch of the library is drawn (paper 000, eq. 7).

The stochastic potential ``U~ = -log p0 - (|D| / |D~|) sum_{d in D~} log psi_d`` is
unbiased when ``D~`` is drawn uniformly. Two draws serve the library's models:

* :func:`rows_with_replacement` (JAX, inside compiled steps): ``batch_size`` rows of
  ``n``, with replacement, so that the shape is static even when ``n`` is traced (the
  members of one mixture component). Used by the linear-SVM potential and InfiniteSVC's
  per-component potential.
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


def rows_without_replacement(rng: np.random.Generator, n: int, batch_size: int) -> np.ndarray:
    """``batch_size`` distinct row indices of ``range(n)``, sorted (for gathers in row order)."""
    return np.sort(rng.choice(n, size=batch_size, replace=False))
