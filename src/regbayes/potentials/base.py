"""The protocol between model math and the samplers: a model's potential.

Sign convention, kept everywhere: potentials ``U = -log density`` and their (stochastic)
subgradients. A model builds a :class:`Potential`; every gradient kernel of
:mod:`regbayes.samplers` runs on one without knowing the model.
"""
from __future__ import annotations

from typing import Callable, NamedTuple


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
