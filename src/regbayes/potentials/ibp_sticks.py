"""Truncated stick-breaking Indian buffet process under mean field (paper 002, section 4.4).

The IBP prior on a binary matrix ``Z`` with ``R`` rows and ``K`` columns (the truncation
level) in its stick-breaking form (section 4.1)::

    nu_k ~ Beta(alpha, 1),   pi_k = prod_{j<=k} nu_j,   z_rk | pi ~ Bernoulli(pi_k).

The rows are the data points for iLSVM (``Z`` is N x K, Appendix D.2) and the input
dimensions for MT-iLSVM (``Z`` is D x K, Appendix D.1); this module does not care which.
The mean-field family of eq. 16 is ``q(nu_k) = Beta(gamma_k1, gamma_k2)`` and
``q(z_rk) = Bernoulli(psi_rk)``.  The pieces of the evidence lower bound (ELBO) that
involve ``nu`` and ``Z`` only are

    E_q[log p(Z | nu)] + H[q(Z)] - KL(q(nu) || p(nu))

with, for every row r and column k,

    E_q[log p(z_rk | nu)] = psi_rk E[log pi_k] + (1 - psi_rk) E[log(1 - pi_k)],
    E[log pi_k]           = sum_{j<=k} (digamma(gamma_j1) - digamma(gamma_j1 + gamma_j2)).

``E[log(1 - pi_k)]`` has no closed form; Appendix D.1 (after Doshi-Velez 2009) bounds it
from below with a distribution ``q_k.`` on {1..k}::

    E[log(1 - pi_k)] >= sum_{m<=k} q_km a_m + H(q_k.) =: L_k(q),
    a_m = digamma(gamma_m2) + sum_{n<m} digamma(gamma_n1) - sum_{n<=m} digamma(gamma_n1 + gamma_n2).

(The paper's expansion of this bound regroups the same sums.)  The tightest bound is at
``q_km ∝ exp(a_m)`` (eq. 24), where ``L_k = logsumexp_{m<=k} a_m``.

With ``q`` fixed, the ``nu_k`` terms of the ELBO are ``A_k E[log nu_k] + B_k E[log(1 - nu_k)]``
minus the KL to ``Beta(alpha, 1)``, so the optimum is ``Beta(alpha + A_k, 1 + B_k)``: with
the column masses ``s_m = sum_r psi_rm`` and ``R`` rows, eqs. 26 / 32

    gamma_k1 = alpha + sum_{m>=k} s_m + sum_{m>k} (R - s_m) sum_{i=k+1}^{m} q_mi,
    gamma_k2 = 1 + sum_{m>=k} (R - s_m) q_mk.

The feature update (eqs. 27 / 33) receives the prior part of its logit from
:func:`prior_logit`: ``E[log pi_k] - L_k``.
"""
from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
from jax.scipy.special import betaln, digamma, logsumexp, xlogy


class StickBound(NamedTuple):
    """The tight lower bound of eq. 24: ``bound[k] = L_k``, ``q[k, m] = q_km`` (zero for m > k),
    and ``log_pi[k] = E[log pi_k]`` of the same ``gamma`` (the feature logit needs both)."""

    bound: jnp.ndarray
    q: jnp.ndarray
    log_pi: jnp.ndarray


def stick_digammas(gamma):
    """``(digamma(gamma_k1), digamma(gamma_k2), digamma(gamma_k1 + gamma_k2))`` from one
    ``digamma`` of the stacked arguments: XLA expands every ``digamma`` in a program into its
    own series, so one call instead of three shortens compilation."""
    d = digamma(jnp.concatenate([gamma, jnp.sum(gamma, axis=1, keepdims=True)], axis=1))
    return d[:, 0], d[:, 1], d[:, 2]


def expected_log_sticks(gamma, digammas=None):
    """``(E[log nu_k], E[log(1 - nu_k)])`` under ``q(nu_k) = Beta(gamma_k1, gamma_k2)``; ``gamma`` is (K, 2)."""
    dig1, dig2, dig12 = stick_digammas(gamma) if digammas is None else digammas
    return dig1 - dig12, dig2 - dig12


def expected_log_pi(gamma, digammas=None):
    """``E[log pi_k] = sum_{j<=k} E[log nu_j]`` for k = 1..K."""
    return jnp.cumsum(expected_log_sticks(gamma, digammas)[0])


def _bound_terms(gamma, digammas=None):
    """``a_m`` of eq. 24 for m = 1..K."""
    dig1, dig2, dig12 = stick_digammas(gamma) if digammas is None else digammas
    shifted = jnp.concatenate([jnp.zeros(1, gamma.dtype), jnp.cumsum(dig1)[:-1]])  # sum_{n<m} digamma(gamma_n1)
    return dig2 + shifted - jnp.cumsum(dig12)


def stick_bound(gamma, digammas=None) -> StickBound:
    """The optimal ``q_k.`` of eq. 24 and the tight bound ``L_k <= E[log(1 - pi_k)]``."""
    digammas = stick_digammas(gamma) if digammas is None else digammas
    a = _bound_terms(gamma, digammas)
    k = a.shape[0]
    lower = jnp.tril(jnp.ones((k, k), dtype=bool))  # row k holds m = 1..k
    logits = jnp.where(lower, a[None, :], -jnp.inf)
    bound = logsumexp(logits, axis=1)
    q = jnp.where(lower, jnp.exp(logits - bound[:, None]), 0.0)
    return StickBound(bound, q, expected_log_pi(gamma, digammas))


def bound_at(gamma, q):
    """``L_k(q) = sum_m q_km a_m + H(q_k.)`` for any rows ``q`` on the simplices (the bound before optimising q)."""
    a = _bound_terms(gamma)
    return q @ a - jnp.sum(xlogy(q, q), axis=1)


def update_sticks(column_mass, n_rows, alpha, q):
    """Eqs. 26 / 32: the optimal ``gamma`` (K, 2) given the column masses ``s_m = sum_r psi_rm`` and ``q``."""
    s = column_mass
    rest = n_rows - s  # R - s_m
    k = s.shape[0]
    # tail[k] = sum_{m>=k} s_m
    tail = jnp.cumsum(s[::-1])[::-1]
    # inner[m, k] = sum_{i=k+1}^{m} q_mi  (zero for k >= m)
    after = jnp.cumsum(q[:, ::-1], axis=1)[:, ::-1]  # after[m, k] = sum_{i>=k} q_mi
    inner = jnp.concatenate([after[:, 1:], jnp.zeros((k, 1), q.dtype)], axis=1)
    gamma1 = alpha + tail + rest @ inner
    gamma2 = 1.0 + rest @ q  # sum_{m} (R - s_m) q_mk, zero for m < k since q is lower-triangular
    return jnp.stack([gamma1, gamma2], axis=1)


def sticks_kl(gamma, alpha, digammas=None):
    """``KL(q(nu) || p(nu)) = sum_k KL(Beta(gamma_k1, gamma_k2) || Beta(alpha, 1))`` (Appendix D.1).

    ``log B(alpha, 1) = -log(alpha)``."""
    elog_nu, elog_rest = expected_log_sticks(gamma, digammas)
    return jnp.sum(
        (gamma[:, 0] - alpha) * elog_nu + (gamma[:, 1] - 1.0) * elog_rest
        - jnp.log(alpha) - betaln(gamma[:, 0], gamma[:, 1])
    )


def bernoulli_entropy(psi):
    """``H[q(Z)] = -sum psi log psi + (1 - psi) log(1 - psi)``."""
    return -jnp.sum(xlogy(psi, psi) + xlogy(1.0 - psi, 1.0 - psi))


def prior_logit(gamma, bound: StickBound):
    """The prior part of the feature logit of eqs. 27 / 33: ``E[log pi_k] - L_k`` (``bound``
    is :func:`stick_bound` of ``gamma``)."""
    return bound.log_pi - bound.bound


def ibp_elbo(psi, gamma, alpha, bound: StickBound | None = None):
    """The IBP part of the ELBO: ``E[log p(Z | nu)] (with L_k) + H[q(Z)] - KL(q(nu) || p(nu))``.

    ``psi`` is (R, K); ``bound`` defaults to the tight bound of eq. 24.
    """
    digammas = stick_digammas(gamma)
    if bound is None:
        bound = stick_bound(gamma, digammas)
    mass = jnp.sum(psi, axis=0)
    n_rows = psi.shape[0]
    expected_prior = jnp.sum(mass * expected_log_pi(gamma, digammas) + (n_rows - mass) * bound.bound)
    return expected_prior + bernoulli_entropy(psi) - sticks_kl(gamma, alpha, digammas)


def initial_sticks(n_features: int, alpha, dtype=jnp.float32):
    """Algorithm 2/3, line 3: ``gamma_k1 = alpha``, ``gamma_k2 = 1``."""
    return jnp.stack([jnp.full(n_features, alpha, dtype), jnp.ones(n_features, dtype)], axis=1)
