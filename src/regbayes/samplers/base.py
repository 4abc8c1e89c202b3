"""The protocol shared by every kernel and every model potential."""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax.numpy as jnp


class Potential(NamedTuple):
    """What a model hands to a kernel: ``U(theta; D) = -log p0(theta) - sum_d log psi_d``.

    value_and_subgrad(theta, data) -> (U, dU)                     full data
    stochastic_value_and_subgrad(key, theta, data) -> (U~, dU~)   eq. 7 of paper 000
    log_prior(theta, data) -> log p0(theta)
    log_lik_terms(theta, data, idx) -> log psi_d(theta) for rows idx
    n_data(data) -> |D| (a Python int: shapes are static)
    batch_size: minibatch size of the stochastic estimate (None = all rows)
    """

    value_and_subgrad: Callable
    stochastic_value_and_subgrad: Callable
    log_prior: Callable
    log_lik_terms: Callable
    n_data: Callable
    batch_size: int | None


class StepInfo(NamedTuple):
    """Per-step record: potential (exact or minibatch estimate), acceptance
    probability (NaN where a kernel has no accept step), data rows evaluated."""

    potential: jnp.ndarray
    acceptance: jnp.ndarray
    n_evaluated: jnp.ndarray


class SamplingAlgorithm(NamedTuple):
    """``init(key, position, data) -> state``; ``step(key, state, data, step_size) -> (state, info)``.

    ``name`` labels the kernel in diagnostics and error messages.
    """

    init: Callable[..., Any]
    step: Callable[..., Any]
    name: str


def nan_like(x):
    return jnp.full((), jnp.nan, dtype=jnp.result_type(x))
