"""Stochastic subgradient Nosé–Hoover thermostat, SSGNHT (paper 000, eq. 14).

    r_{t+1}  = r_t - h xi_t r_t - h dU~(theta_t) + sqrt(2 A) N(0, h)
    theta_{t+1} = theta_t + h r_{t+1}
    xi_{t+1} = xi_t + h (r^T r / n - 1)

with ``r_0 ~ N(0, I)`` and ``xi_0 = A`` (``initial_momentum="zero"`` starts at rest,
``r_0 = 0``, instead; see :func:`ssgnht`). The thermostat update uses the new momentum
``r_{t+1}`` as in eq. 8 and Ding et al. (2014); eq. 14 prints ``r_t``, an index slip
relative to eq. 8. ``n`` is the dimension of ``theta``. The dynamics run in the whitened
coordinates of :mod:`regbayes.samplers.base`: ``dU~`` is replaced by ``T^T dU~`` and the
position moves by ``h T r_{t+1}`` (a constant mass matrix ``(T T^T)^{-1}``). Installing a
new ``T`` (``adapt``, during warm-up) restarts the thermostat at ``xi = A``.
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


class SGNHTState(NamedTuple):
    position: jnp.ndarray
    momentum: jnp.ndarray
    thermostat: jnp.ndarray
    transform: jnp.ndarray
    noise_var: jnp.ndarray | None = None  # V of the minibatch subgradient per whitened coordinate (noise_correction)


class SGNHTInfo(NamedTuple):
    """One SSGNHT step: the potential estimate ``U~(theta_t)``, the new thermostat
    ``xi_{t+1}`` (it settles where the kinetic energy per coordinate is 1) and the data
    rows read."""

    potential: jnp.ndarray
    thermostat: jnp.ndarray
    n_evaluated: jnp.ndarray


INITIAL_MOMENTA = ("normal", "zero")


@functools.lru_cache(maxsize=None)
def ssgnht(potential: Potential, diffusion: float = 1.0, initial_momentum: str = "normal",
           noise_correction: bool = False) -> SamplingAlgorithm:
    """Build the SSGNHT kernel with diffusion factor ``A = diffusion``.

    With ``noise_correction`` the state carries ``noise_var``, the variance ``V`` of the
    whitened minibatch subgradient per coordinate (installed by ``adapt(state, T, V)``;
    zeros until then), and the injected noise is ``N(0, 2 h (A - h V / 2))`` per
    coordinate instead of ``N(0, 2 A h)``: the minibatch noise ``h^2 V`` makes up the
    rest (SGHMC's ``B`` correction, Chen et al. 2014), so that every coordinate, not only
    their average, is at the thermostat's temperature. It needs ``h V / 2 <= A``; warm-up's
    step adaptation keeps it at most ``A / 2`` (:mod:`regbayes.inference.step_adaptation`).

    ``initial_momentum="normal"`` draws ``r_0 ~ N(0, I)`` as eq. 14 prescribes (the
    stationary momentum distribution). ``"zero"`` starts at rest. Only a run without
    warm-up can tell them apart: from a start far from the posterior, the first steps move
    the position by ``h T r_t`` while ``r_t`` is the sum of ``r_0`` and ``-h`` times the
    subgradients so far, so ``r_0`` acts as a random kick worth ``|r_0| / (h |T^T dU~|)``
    steps of drift, which the minibatch noise must then average away
    (``benchmarks/ssgnht_start.py`` measures the time to accuracy both ways).
    """
    if diffusion <= 0:
        raise ValueError(f"diffusion A must be positive, got {diffusion}")
    if initial_momentum not in INITIAL_MOMENTA:
        raise ValueError(f"initial_momentum must be one of {INITIAL_MOMENTA}, got {initial_momentum!r}")

    def init(key, position, data):
        del data
        if initial_momentum == "zero":
            momentum = jnp.zeros_like(position)
        else:
            momentum = jax.random.normal(key, position.shape, position.dtype)
        noise_var = jnp.zeros_like(position) if noise_correction else None
        return SGNHTState(position, momentum, jnp.asarray(diffusion, position.dtype), identity_transform(position), noise_var)

    def adapt(state, transform, noise_var=None):
        # A new transform restarts the thermostat at xi = A. Falling from a start far from
        # the posterior heats it far above its equilibrium, and xi falls by at most h per
        # step, so the over-damped chain would crawl for tens of thousands of steps after
        # warm-up. Restarting it halved the default fit's posterior-mean error (CHANGELOG.md,
        # "moved out of the code").
        if noise_correction and noise_var is not None:
            state = state._replace(noise_var=jnp.reshape(noise_var, state.position.shape).astype(state.position.dtype))
        return state._replace(transform=transform, thermostat=jnp.asarray(diffusion, state.position.dtype))

    def step(key, state, data, step_size):
        key_batch, key_noise = jax.random.split(key)
        h = step_size
        u, g_theta = potential.stochastic_value_and_subgrad(key_batch, state.position, data)
        g = transform_apply_t(state.transform, g_theta)
        noise = jax.random.normal(key_noise, state.position.shape, state.position.dtype)
        if noise_correction:
            injected = jnp.sqrt(2.0 * h * jnp.maximum(diffusion - 0.5 * h * state.noise_var, 0.0))
        else:
            injected = jnp.sqrt(2.0 * diffusion * h)
        r = state.momentum - h * state.thermostat * state.momentum - h * g + injected * noise
        position = state.position + h * transform_apply(state.transform, r)
        xi = state.thermostat + h * (jnp.mean(r**2) - 1.0)
        n_eval = potential.batch_size or potential.n_data(data)
        return SGNHTState(position, r, xi, state.transform, state.noise_var), SGNHTInfo(u, xi, fixed_count(n_eval))

    return SamplingAlgorithm(init, step, "ssgnht", adapt)
