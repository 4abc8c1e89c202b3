"""Stochastic subgradient Langevin dynamics, SSGLD (paper 000, eq. 13).

    theta_{t+1} = theta_t - (h^2 / 2) dU~(theta_t) + h nu_t,     nu_t ~ N(0, I)

with the subgradient evaluated at ``theta_t`` (eq. 13 prints ``theta_{t+1}``, which
would make the update implicit; the Langevin discretisation it cites is explicit).
The kernel runs in the whitened coordinates ``u`` of :mod:`regbayes.samplers.base`
(``theta = theta_0 + T u``), i.e. with the constant preconditioner ``T T^T``:

    theta_{t+1} = theta_t - a T T^T dU~(theta_t) + sqrt(2 a) T nu_t,   a = h^2 / 2.

``preconditioner="adagrad"`` (section 5.1.2) adds AdaGrad's per-coordinate scaling from
the accumulated squared (whitened) subgradients ``G_t = sum_{s<=t} g_s^2``:

    a_t = (h_t^2 / 2) / max(delta, sqrt(G_t / t)).

The floor ``delta`` (default 1) matters where a coordinate's subgradient is exactly zero
(a class absent from the minibatch, a feature that is zero in every row of it): with a
tiny floor such a coordinate would get the step ``h^2 / (2 delta)`` and noise of that
size. In whitened coordinates a unit-scale posterior has subgradients of RMS about 1, so
the floor 1 means AdaGrad never moves further than plain SSGLD with the same ``h``.

The preconditioner depends only on the past, so the noise stays matched to the drift
and no correction term appears. The accumulator is divided by ``t``: AdaGrad's own
``1/sqrt(t)`` decay is carried by the step schedule ``h_t`` (constant by default, or
polynomial), which keeps the two separate and makes ``h`` dimensionless — the scale per
coordinate is the root-mean-square of the minibatch subgradient, so noisier minibatches
get smaller steps.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from .base import (
    Potential,
    SamplingAlgorithm,
    fixed_count,
    identity_transform,
    transform_apply,
    transform_apply_t,
)


class SGLDState(NamedTuple):
    position: jnp.ndarray
    sq_grad_sum: jnp.ndarray  # AdaGrad accumulator G_t (zeros when unused)
    count: jnp.ndarray  # steps t in G_t, one per coordinate: updated in the same fused loop as G_t
    transform: jnp.ndarray
    noise_var: jnp.ndarray | None = None  # V of the minibatch subgradient per whitened coordinate (noise_correction)


class SGLDInfo(NamedTuple):
    """One SSGLD step: the potential estimate ``U~(theta_t)`` (eq. 7) at the point of the
    subgradient, and the data rows it read."""

    potential: jnp.ndarray
    n_evaluated: jnp.ndarray


@functools.lru_cache(maxsize=None)
def ssgld(potential: Potential, preconditioner: str | None = None, delta: float = 1.0,
          noise_correction: bool = False) -> SamplingAlgorithm:
    """Build the SSGLD kernel. ``preconditioner`` is ``None`` or ``"adagrad"``.

    With ``noise_correction`` the state carries ``noise_var``, the variance ``V`` of the
    whitened minibatch subgradient per coordinate (installed by ``adapt(state, T, V)``;
    zeros until then), and the injected noise has variance ``2a - a^2 V`` instead of
    ``2a``: the minibatch noise ``a^2 V`` makes up the rest, so the step's total diffusion
    stays ``2a`` (the correction of Chen et al. 2014's SGHMC, for Langevin). It needs
    ``a V <= 2``; warm-up's step adaptation keeps ``a V / 2`` at most 1/2
    (:mod:`regbayes.inference.step_adaptation`).
    """
    if preconditioner not in (None, "adagrad"):
        raise ValueError(f"unknown preconditioner {preconditioner!r}; use None or 'adagrad'")

    def init(key, position, data):
        del key, data
        noise_var = jnp.zeros_like(position) if noise_correction else None
        return SGLDState(position, jnp.zeros_like(position), jnp.zeros_like(position), identity_transform(position), noise_var)

    def adapt(state, transform, noise_var=None):
        if noise_correction and noise_var is not None:
            state = state._replace(noise_var=jnp.reshape(noise_var, state.position.shape).astype(state.position.dtype))
        return state._replace(sq_grad_sum=jnp.zeros_like(state.sq_grad_sum), count=jnp.zeros_like(state.count), transform=transform)

    def step(key, state, data, step_size):
        key_batch, key_noise = jax.random.split(key)
        u, g_theta = potential.stochastic_value_and_subgrad(key_batch, state.position, data)
        g = transform_apply_t(state.transform, g_theta)
        noise = jax.random.normal(key_noise, state.position.shape, state.position.dtype)
        if preconditioner == "adagrad":
            sq, count = state.sq_grad_sum + g**2, state.count + 1.0
            a = 0.5 * step_size**2 / jnp.maximum(delta, jnp.sqrt(sq / count))
        else:
            sq, count = state.sq_grad_sum, state.count
            a = 0.5 * step_size**2
        if noise_correction:
            injected = jnp.sqrt(jnp.maximum(2.0 * a - a * a * state.noise_var, 0.0))
        else:
            injected = jnp.sqrt(2.0 * a)
        move = -a * g + injected * noise
        position = state.position + transform_apply(state.transform, move)
        n_eval = potential.batch_size or potential.n_data(data)
        return SGLDState(position, sq, count, state.transform, state.noise_var), SGLDInfo(u, fixed_count(n_eval))

    return SamplingAlgorithm(init, step, "ssgld", adapt)
