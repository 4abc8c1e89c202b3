"""eta | z of the Gibbs infinite SVM by data augmentation (paper 001, eqs. 17-18).

Given the assignments, the components' classifiers are independent: component ``k``'s
``eta_k`` (one row per one-vs-rest problem) is updated by one sweep

    omega_i^{-1} | eta_k ~ IG(1 / (c' |zeta_i|), 1)                                  (eq. 17)
    eta_k | omega      ~ N(Lambda b, Lambda),                                        (eq. 18)
        Lambda^{-1} = I / nu^2 + c'^2 sum_{i: z_i = k} x~_i x~_i^T / omega_i,
        b           = c' sum_{i: z_i = k} y_i (omega_i + c' l) / omega_i x~_i

of :func:`regbayes.algorithms.gibbs_svm.binary_sweep` on the component's members, in
float64 (the caller enables it). The members are gathered into a block padded with zero
rows to a power of two, at least :data:`MIN_BLOCK` (one compiled program per block
size); a zero row adds nothing to the precision nor to ``b``, so the conditional is exact.
"""
from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor

import jax
import jax.numpy as jnp
import numpy as np

from ..precision import maybe_x64
from .gibbs_svm import binary_sweep

# Smallest padded member block: every component of a data set of a few hundred rows shares
# one compiled program (each block size is a program of its own, compiled on first use).
MIN_BLOCK = 512


@jax.jit
def gibbs_component_sweep(key, eta, X, Y, valid, C, margin, prior_scale):
    """One omega | eta, eta | omega sweep for one component (eqs. 17-18).

    ``eta`` (L, D); ``X`` (B, D) the component's rows padded to a block size ``B``;
    ``Y`` (L, B) +1/-1; ``valid`` (B,) marks real members. Padding rows are zeroed.
    """
    mask = valid.astype(X.dtype)
    X = X * mask[:, None]
    y = Y * mask[None, :]
    keys = jax.random.split(key, eta.shape[0])
    sweep = jax.vmap(binary_sweep, in_axes=(0, 0, None, 0, None, None, None))
    eta_new, _ = sweep(keys, eta, X, y, C, margin, prior_scale)
    return eta_new


#: one background thread for :func:`compile_ahead` (XLA's compiler releases the GIL)
_COMPILER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="regbayes-compile")


def compile_ahead(key, eta, hyper, block: int = MIN_BLOCK) -> Future:
    """Compile the program of a ``block``-row component in a background thread; a Future
    of the seconds it took. Started before a run's first z-sweep, XLA compiles this
    program on one core while numba compiles the sweep on the other (a fresh process
    waits for both once). ``key``, ``eta`` (K, L, D) and ``hyper`` are examples of the
    step's arguments: the program is the one :func:`gibbs_eta_step` then runs."""
    L, D = eta.shape[1:]
    dtype = hyper[0].dtype
    spec = jax.ShapeDtypeStruct
    args = (spec(key.shape, key.dtype), spec((L, D), dtype), spec((block, D), dtype), spec((L, block), dtype),
            spec((block,), bool), *(spec(h.shape, h.dtype, weak_type=h.weak_type) for h in hyper))

    def compile_program():
        start = time.perf_counter()
        with maybe_x64(dtype == jnp.float64):
            gibbs_component_sweep.lower(*args).compile()
        return time.perf_counter() - start

    return _COMPILER.submit(compile_program)


def block_size(n_k: int) -> int:
    """Rows of the padded block of a component with ``n_k`` members."""
    return max(MIN_BLOCK, 1 << (int(n_k) - 1).bit_length())


def gibbs_eta_step(key, eta, counts, members, starts, design, Y, hyper, compiled=frozenset()):
    """eta | z for every non-empty slot; empty slots keep their classifier.

    ``eta`` (K, L, D) float64; ``members``, ``starts`` from
    :func:`regbayes.potentials.component_svm.group_members`; ``design`` (n, D) and ``Y``
    (n, L) NumPy arrays; ``hyper`` the arrays ``(C, margin, prior_scale)`` in the step's
    dtype. ``compiled`` holds the block sizes whose program this run has already
    compiled: a new one is compiled first (``lower().compile()``, the same program
    ``jax.jit`` then runs) and timed apart.

    Returns ``(eta, compiled, compile_seconds)``.
    """
    dtype = hyper[0].dtype
    keys = jax.random.split(key, counts.shape[0])
    new = eta.copy()
    compile_seconds = 0.0
    for k in np.flatnonzero(counts):
        n_k = int(counts[k])
        block = block_size(n_k)
        idx = np.zeros(block, np.int64)
        idx[:n_k] = members[starts[k] : starts[k] + n_k]
        args = (keys[k], jnp.asarray(eta[k], dtype), jnp.asarray(design[idx], dtype),
                jnp.asarray(Y[idx].T, dtype), jnp.asarray(np.arange(block) < n_k), *hyper)
        if block not in compiled:
            start = time.perf_counter()
            gibbs_component_sweep.lower(*args).compile()
            compile_seconds += time.perf_counter() - start
            compiled = compiled | {block}
        new[k] = np.asarray(gibbs_component_sweep(*args))
    return new, compiled, compile_seconds
