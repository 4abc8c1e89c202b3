"""Stochastic subgradient Langevin dynamics, SSGLD (paper 000, eq. 13).

    theta_{t+1} = theta_t - (h^2 / 2) dU~(theta_t) + h nu_t,     nu_t ~ N(0, I)

with the subgradient evaluated at ``theta_t`` (eq. 13 prints ``theta_{t+1}``, which
would make the update implicit; the Langevin discretisation it cites is explicit).

``preconditioner="adagrad"`` (section 5.1.2) scales each coordinate by AdaGrad's
accumulated squared subgradients ``G_t = sum_{s<=t} (dU~_s)^2``:

    a_t = (h_t^2 / 2) / (delta + sqrt(G_t / t)),
    theta_{t+1} = theta_t - a_t * dU~(theta_t) + sqrt(2 a_t) * nu_t,

i.e. Langevin dynamics with the diagonal mass ``1 / a_t`` that depends only on the
past, so the noise stays matched to the drift and no correction term appears. The
accumulator is divided by ``t``: AdaGrad's own ``1/sqrt(t)`` decay is then carried by
the step schedule ``h_t`` (constant by default, or polynomial), which keeps the two
separate and makes ``h`` dimensionless — the per-coordinate scale comes from the
root-mean-square subgradient, whatever the data size.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from .base import Potential, SamplingAlgorithm, StepInfo, nan_like


class SGLDState(NamedTuple):
    position: jnp.ndarray
    sq_grad_sum: jnp.ndarray  # AdaGrad accumulator (zeros when unused)
    count: jnp.ndarray


@functools.lru_cache(maxsize=None)
def ssgld(potential: Potential, preconditioner: str | None = None, delta: float = 1e-8) -> SamplingAlgorithm:
    """Build the SSGLD kernel. ``preconditioner`` is ``None`` or ``"adagrad"``."""
    if preconditioner not in (None, "adagrad"):
        raise ValueError(f"unknown preconditioner {preconditioner!r}; use None or 'adagrad'")

    def init(key, position, data):
        del key, data
        return SGLDState(position, jnp.zeros_like(position), jnp.zeros((), position.dtype))

    def step(key, state, data, step_size):
        key_batch, key_noise = jax.random.split(key)
        u, g = potential.stochastic_value_and_subgrad(key_batch, state.position, data)
        noise = jax.random.normal(key_noise, state.position.shape, state.position.dtype)
        if preconditioner == "adagrad":
            sq = state.sq_grad_sum + g**2
            a = 0.5 * step_size**2 / (delta + jnp.sqrt(sq / (state.count + 1.0)))
        else:
            sq = state.sq_grad_sum
            a = 0.5 * step_size**2
        position = state.position - a * g + jnp.sqrt(2.0 * a) * noise
        n_eval = potential.batch_size or potential.n_data(data)
        info = StepInfo(u, nan_like(u), jnp.asarray(n_eval))
        return SGLDState(position, sq, state.count + 1.0), info

    return SamplingAlgorithm(init, step, "ssgld")
