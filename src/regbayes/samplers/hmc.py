"""Subgradient Hamiltonian Monte Carlo (paper 000, eq. 9), identity mass.

L leapfrog steps of

    r_{1/2} = r - (h/2) dU(theta),  theta' = theta + h r_{1/2},  r' = r_{1/2} - (h/2) dU(theta')

with ``r ~ N(0, I)`` redrawn each iteration, run in the whitened coordinates of
:mod:`regbayes.samplers.base` (mass matrix ``(T T^T)^{-1}``). With ``mh_correction=True`` the end point is
accepted with probability ``min(1, exp(H(theta, r) - H(theta', r')))`` on the full-data
potential, which makes the chain exact for the piecewise-smooth posterior up to the
measure-zero kinks (section 3.1). With a ``batch_size`` in the potential and no
correction, the subgradients are the minibatch estimates of eq. 7 (stochastic variant).
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .base import (
    Potential,
    SamplingAlgorithm,
    fixed_count,
    identity_transform,
    transform_apply,
    transform_apply_t,
)


class HMCState(NamedTuple):
    position: jnp.ndarray
    potential: jnp.ndarray
    subgrad: jnp.ndarray
    transform: jnp.ndarray


class HMCInfo(NamedTuple):
    """One iteration: the potential at the chain's new position, the MH acceptance
    probability ``min(1, exp(H - H'))`` (1 without the correction) and the data rows read
    by the ``L`` subgradients."""

    potential: jnp.ndarray
    acceptance: jnp.ndarray
    n_evaluated: jnp.ndarray


@functools.lru_cache(maxsize=None)
def shmc(potential: Potential, n_leapfrog: int = 10, mh_correction: bool = True) -> SamplingAlgorithm:
    """Build the subgradient HMC kernel."""
    if n_leapfrog < 1:
        raise ValueError(f"n_leapfrog must be >= 1, got {n_leapfrog}")
    exact = mh_correction or potential.batch_size is None

    def grad_fn(key, theta, data):
        if exact:
            return potential.value_and_subgrad(theta, data)
        return potential.stochastic_value_and_subgrad(key, theta, data)

    def init(key, position, data):
        u, g = grad_fn(key, position, data)
        return HMCState(position, u, g, identity_transform(position))

    def adapt(state, transform):
        return state._replace(transform=transform)

    def step(key, state, data, step_size):
        h = step_size
        T = state.transform
        key_r, key_u, key_path = jax.random.split(key, 3)
        r0 = jax.random.normal(key_r, state.position.shape, state.position.dtype)

        def leapfrog(carry, key_l):
            theta, r, g, _ = carry
            r = r - 0.5 * h * transform_apply_t(T, g)
            theta = theta + h * transform_apply(T, r)
            u, g = grad_fn(key_l, theta, data)
            r = r - 0.5 * h * transform_apply_t(T, g)
            return (theta, r, g, u), None

        keys = jax.random.split(key_path, n_leapfrog)
        (theta, r, g, u), _ = jax.lax.scan(leapfrog, (state.position, r0, state.subgrad, state.potential), keys)
        if mh_correction:
            h0 = state.potential + 0.5 * jnp.sum(r0**2)
            h1 = u + 0.5 * jnp.sum(r**2)
            log_ratio = jnp.where(jnp.isfinite(h1), h0 - h1, -jnp.inf)
            accept_prob = jnp.exp(jnp.minimum(0.0, log_ratio))
            accept = jax.random.uniform(key_u) < accept_prob
            new = HMCState(
                jnp.where(accept, theta, state.position),
                jnp.where(accept, u, state.potential),
                jnp.where(accept, g, state.subgrad),
                T,
            )
        else:
            accept_prob = np.ones((), jnp.result_type(u))  # a constant: recorded once, not per draw
            new = HMCState(theta, u, g, T)
        n_eval = potential.n_data(data) if exact else potential.batch_size
        return new, HMCInfo(new.potential, accept_prob, fixed_count(n_eval * n_leapfrog))

    return SamplingAlgorithm(init, step, "shmc", adapt)
