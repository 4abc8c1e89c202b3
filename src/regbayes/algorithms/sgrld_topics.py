"""SGRLD for MedLDA's topics in one numba pass (paper 000, Algorithm 1, step 2; Patterson &
Teh 2013, eq. 10, in the expanded-mean parameterisation)::

    theta_kw <- | theta_kw + eps / 2 (beta - theta_kw + s (n_kw - pi_kw n_k)) + sqrt(eps theta_kw) xi_kw |

with ``pi_kw = theta_kw / sum_w theta_kw``, ``n_kw`` the minibatch's expected topic-word
counts, ``n_k = sum_w n_kw``, ``s = |D| / |D~|`` and ``xi ~ N(0, 1)``; a result of exactly 0
becomes the smallest normal float (its noise scale is ``sqrt(theta)``). The same step as
:func:`regbayes.samplers.sgrld.sgrld_simplex_step`, here fused with the new Phi = theta / row
sums, written transposed (V, K) for the token kernels, and its finiteness check: one pass
over the K x V entries where the JAX program made several. The normal variates are
float32 draws of NumPy's generator (a 24-bit mantissa is far finer than the step's own
noise), made by the wrapper: the kernel allocates nothing.

The topics are split into :data:`NOISE_BLOCKS` blocks of rows, each with its own generator
seeded from the step's ``rng``; a block's variates and its step run together on one thread
(NumPy's bulk draws and the kernel release the GIL), the blocks at once when numba has
more than one thread. The draws depend on the blocks, not on the threads: one thread gives
the same result. The normal variates are the larger part of this step's cost, and the step
costs more than the minibatch's token sweeps on a vocabulary of thousands of words.
"""
from __future__ import annotations

import math

import numba
import numpy as np

_JIT = dict(cache=True, _nrt=False, no_cfunc_wrapper=True, error_model="numpy", nogil=True)
_TINY = float(np.finfo(np.float64).tiny)

#: Blocks of topics with their own normal variates (module docstring).
NOISE_BLOCKS = 2


@numba.njit(**_JIT)
def _sgrld_topics(theta, expected, scale, prior, eps, normals, theta_new, phi_t, k_start, k_stop):
    """The step of topics ``k_start:k_stop`` into ``theta_new`` (K, V) and ``phi_t`` (V, K);
    True if those rows of Phi are finite."""
    V = theta.shape[1]
    finite = True
    root_eps = math.sqrt(eps)
    for k in range(k_start, k_stop):
        theta_total = 0.0
        count_total = 0.0
        for w in range(V):
            theta_total += theta[k, w]
            count_total += expected[k, w]
        inv_total = 1.0 / theta_total
        new_total = 0.0
        for w in range(V):
            t = theta[k, w]
            drift = prior - t + scale * (expected[k, w] - t * inv_total * count_total)
            moved = abs(t + 0.5 * eps * drift + math.sqrt(t) * (root_eps * normals[k, w]))
            moved = max(moved, _TINY)
            theta_new[k, w] = moved
            new_total += moved
        inv_new = 1.0 / new_total
        for w in range(V):
            p = theta_new[k, w] * inv_new
            phi_t[w, k] = p
            if not (abs(p) < np.inf):
                finite = False
    return finite


def sgrld_topics(rng, theta, expected, scale, prior, eps):
    """One SGRLD step of the topics (module docstring) with normal variates seeded from
    ``rng``. Returns ``(theta (K, V), phi_t (V, K), finite)``; the inputs are not modified."""
    from .lda_kernels import _thread_pool

    theta = np.ascontiguousarray(theta, dtype=np.float64)
    expected = np.ascontiguousarray(expected, dtype=np.float64)
    K = theta.shape[0]
    bounds = np.linspace(0, K, NOISE_BLOCKS + 1).round().astype(np.int64)
    seeds = rng.integers(2**63, size=NOISE_BLOCKS)
    normals = np.empty(theta.shape, dtype=np.float32)
    theta_new = np.empty_like(theta)
    phi_t = np.empty((theta.shape[1], K))

    def block(j):
        a, b = int(bounds[j]), int(bounds[j + 1])
        if a == b:
            return True
        np.random.Generator(np.random.PCG64(int(seeds[j]))).standard_normal(out=normals[a:b], dtype=np.float32)
        return _sgrld_topics(theta, expected, float(scale), float(prior), float(eps), normals, theta_new, phi_t, a, b)

    if numba.get_num_threads() > 1 and K > 1:
        futures = [_thread_pool().submit(block, j) for j in range(1, NOISE_BLOCKS)]
        finite = block(0)
        finite = all([f.result() for f in futures]) and finite
    else:
        finite = all([block(j) for j in range(NOISE_BLOCKS)])
    return theta_new, phi_t, bool(finite)
