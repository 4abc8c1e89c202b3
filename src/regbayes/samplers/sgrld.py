"""Stochastic gradient Riemannian Langevin dynamics for probability simplices (SGRLD).

Patterson & Teh (2013), eq. 10, in the expanded-mean parameterisation used by paper 000,
section 4.1.2: each row ``k`` of the simplex parameter is ``pi_k = |theta_k| / sum_w |theta_kw|``
with ``theta_kw`` a priori independent Gamma(beta, 1), and one step is

    theta_kw <- | theta_kw + (eps / 2) (beta - theta_kw + s * (n_kw - pi_kw n_k.))
                  + sqrt(theta_kw) xi_kw |,          xi_kw ~ N(0, eps),

where ``n_kw`` are the expected counts of category ``w`` in row ``k`` on a minibatch (for LDA:
topic-word counts from Gibbs samples of the minibatch's topic assignments), ``n_k. =
sum_w n_kw`` and ``s = |D| / |D~|`` scales the minibatch to the full data. The mirroring
``|.|`` keeps theta positive. The metric is ``G(theta) = diag(1 / theta)``, hence the
``sqrt(theta)`` noise; the step needs no correction term in these coordinates.

With exact counts (``s = 1``, one batch) the stationary distribution of ``pi_k`` tends to the
conjugate posterior ``Dir(beta + n_k)`` as ``eps -> 0``.

Sign convention of the package: the drift above is ``-(eps/2) G^{-1} dU/dtheta + (eps/2)
d(G^{-1})/dtheta`` for the potential ``U = -log p(theta | counts)``; callers only pass
counts, so no potential appears here.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from .base import SamplingAlgorithm


class SimplexCounts(NamedTuple):
    """Data of one SGRLD step: expected counts (K, V) on a minibatch, the scale ``|D| /
    |D~|`` and the Dirichlet prior ``beta`` (scalar or broadcastable to (K, V))."""

    counts: jnp.ndarray
    scale: jnp.ndarray
    prior: jnp.ndarray


class SGRLDState(NamedTuple):
    position: jnp.ndarray  # expanded-mean theta (K, V), positive


class SGRLDInfo(NamedTuple):
    """SGRLD reports nothing per step: its data are counts, not a potential."""


def simplex_mean(theta):
    """``pi = theta / sum_w theta`` row by row."""
    return theta / jnp.sum(theta, axis=-1, keepdims=True)


@jax.jit
def sgrld_simplex_step(key, theta, counts, scale, prior, step_size):
    """One SGRLD step of Patterson & Teh (2013), eq. 10 (module docstring). Returns new theta."""
    pi = simplex_mean(theta)
    row_totals = jnp.sum(counts, axis=-1, keepdims=True)
    drift = prior - theta + scale * (counts - pi * row_totals)
    # The N(0, 1) draws are made in float32 (a float64 theta is updated in float64): a 24-bit
    # mantissa is far finer than the step's own Monte Carlo noise, and on CPU a float64
    # threefry normal costs more than a float32 one (CHANGELOG.md, "moved out of the code").
    standard = jax.random.normal(key, theta.shape, jnp.float32).astype(theta.dtype)
    noise = jnp.sqrt(step_size) * standard
    moved = jnp.abs(theta + 0.5 * step_size * drift + jnp.sqrt(theta) * noise)
    # a draw of exactly 0 would freeze the coordinate (its noise scale is sqrt(theta))
    return jnp.maximum(moved, jnp.finfo(theta.dtype).tiny)


@functools.lru_cache(maxsize=None)
def sgrld() -> SamplingAlgorithm:
    """SGRLD as a :class:`SamplingAlgorithm` over :class:`SimplexCounts` data.

    ``position`` is the expanded-mean theta; ``simplex_mean(state.position)`` the simplex
    parameter. ``info`` is an empty :class:`SGRLDInfo`.
    """

    def init(key, position, data):
        del key, data
        return SGRLDState(position)

    def step(key, state, data: SimplexCounts, step_size):
        theta = sgrld_simplex_step(key, state.position, data.counts, data.scale, data.prior, step_size)
        return SGRLDState(theta), SGRLDInfo()

    return SamplingAlgorithm(init, step, "sgrld")
