"""The IBP projection likelihood of MT-iLSVM under mean field (paper 002, section 4.3, Appendix D.1).

A binary projection ``Z`` (D x K, the input dimensions are its rows) with the stick-breaking
IBP prior (:mod:`regbayes.potentials.ibp_sticks`) explains every input row through its
own loading vector::

    x_n | Z, w_n ~ N(Z w_n, lambda_n^2 I_D),      w_n ~ N(0, sigma_0^2 I_K).

The paper indexes the likelihood by (task, example) pairs ``x_mn``; when one row carries
the labels of several tasks (multi-label data) this module keeps one ``w_n`` per row, so
that a row's likelihood is counted once, whatever the number of its labels.  The
mean-field family of eq. 16 is ``q(z_dk) = Bernoulli(psi_dk)`` and
``q(w_n) = N(Phi_n, sigma_n^2 I_K)``.  Write ``a_n = 1 / lambda_n^2``.

Expected log-likelihood (Appendix D.1, ``L_mn(q)``), with ``U = E[Z^T Z]``::

    E[log p(x_n | Z, w_n)] = -a_n/2 (x_n.x_n - 2 x_n^T psi Phi_n + E[w_n^T U w_n]) - D/2 log(2 pi lambda_n^2),
    U_jk = sum_d psi_dj psi_dk  (j != k),     U_kk = sum_d psi_dk,
    E[w_n^T U w_n] = Phi_n^T U Phi_n + sigma_n^2 tr(U).

Corrections of Appendix D.1 as printed: ``x^T E[Z w_n]`` is ``sum_k phi_nk psi_.k^T x``
(the printed ``sum_k x^T psi_.k`` drops ``phi_nk``), and ``E[w^T U w]`` is
``sum_k U_kk (sigma_n^2 + phi_nk^2) + 2 sum_{j<k} phi_nj phi_nk U_jk`` (the printed
``sum_k U_kk (K sigma^2 + Phi^T Phi)`` counts ``K sigma^2 + ||Phi||^2`` in every term of
the sum, ``K^2 sigma^2`` in all, instead of ``sigma^2 + phi_k^2`` in term ``k``).

KL of the loadings (Appendix D.1, correct as printed)::

    KL(q(W) || p(W)) = sum_n (K sigma_n^2 + Phi_n.Phi_n) / (2 sigma_0^2) - K/2 (1 + log(sigma_n^2 / sigma_0^2)).

Closed-form block maxima of the ELBO, derived from the two terms above:

* loadings (eq. 25): the ELBO is concave quadratic in ``Phi_n`` with Hessian
  ``-(a_n U + I / sigma_0^2)``, so the joint maximum over all k at once is
  ``Phi_n = (U + r_n I)^{-1} psi^T x_n`` with ``r_n = lambda_n^2 / sigma_0^2`` (eq. 25 gives
  its coordinate-wise form, which has this point as its fixed point); and
  ``sigma_n^2 = (1 / sigma_0^2 + tr(U) / (K lambda_n^2))^{-1}``, as printed.
* features (eq. 27): with ``A = sum_n a_n (Phi_n Phi_n^T + sigma_n^2 I)`` (K x K) and
  ``B = X^T diag(a) Phi`` (D x K), the likelihood's part of the logit of ``psi_dk`` is

      B_dk - A_kk / 2 - sum_{j != k} A_jk psi_dj,

  i.e. ``sum_n a_n (x_nd phi_nk - (sigma_n^2 + phi_nk^2) / 2 - sum_{j != k} phi_nj phi_nk psi_dj)``.
  Correction: eq. 27 as printed has ``K sigma_mn^2`` where the ELBO gives ``sigma_n^2``
  (``sigma_n^2`` enters ``E[z_dk w_nk^2]`` once).  The logit is exact for column ``k`` given
  the others, so the update is coordinate ascent, sequential in k and vectorised over d;
  ``A`` and ``B`` are formed once per sweep, which costs ``O(N D K + N K^2 + D K^2)``.
* hyper-parameters (optional eqs. 29, 30): ``sigma_0^2 = sum_n (K sigma_n^2 + Phi_n.Phi_n) / (K N)``
  and ``lambda_n^2 = E||x_n - Z w_n||^2 / D``, each the maximum of the ELBO in that variable.

All functions are pure JAX and follow the dtype of their arguments (the algorithm runs
them in float64, :mod:`regbayes.algorithms.mt_ilsvm`).
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from . import ibp_sticks


class Loadings(NamedTuple):
    """``q(w_n) = N(phi[n], sigma2[n] I_K)``: ``phi`` (N, K), ``sigma2`` (N,)."""

    phi: jnp.ndarray
    sigma2: jnp.ndarray


def feature_moments(psi):
    """``U = E[Z^T Z]`` (K x K) under ``q(z_dk) = Bernoulli(psi_dk)``: ``psi^T psi`` off the
    diagonal, ``sum_d psi_dk`` on it (``E[z^2] = E[z]`` for a binary z)."""
    gram = psi.T @ psi
    mass = jnp.sum(psi, axis=0)
    return gram - jnp.diag(jnp.diag(gram)) + jnp.diag(mass)


def expected_sq_residual(X, psi, loadings: Loadings):
    """``E||x_n - Z w_n||^2 = x_n.x_n - 2 x_n^T psi Phi_n + Phi_n^T U Phi_n + sigma_n^2 tr(U)`` (N,)."""
    U = feature_moments(psi)
    phi, sigma2 = loadings
    fit = jnp.sum((X @ psi) * phi, axis=1)
    quad = jnp.sum((phi @ U) * phi, axis=1) + sigma2 * jnp.trace(U)
    return jnp.sum(X * X, axis=1) - 2.0 * fit + quad


def expected_log_likelihood(X, psi, loadings: Loadings, noise_variance):
    """``sum_n E_q[log N(x_n | Z w_n, lambda_n^2 I)]`` (Appendix D.1, corrected as in the
    module docstring); ``noise_variance`` is ``lambda_n^2``, (N,) or a scalar."""
    D = X.shape[1]
    lam2 = jnp.broadcast_to(noise_variance, X.shape[:1])
    residual = expected_sq_residual(X, psi, loadings)
    return jnp.sum(-0.5 * residual / lam2 - 0.5 * D * jnp.log(2.0 * jnp.pi * lam2))


def loadings_kl(loadings: Loadings, loading_variance):
    """``KL(q(W) || p(W))`` with ``p(w_n) = N(0, sigma_0^2 I_K)`` (Appendix D.1)."""
    phi, sigma2 = loadings
    K = phi.shape[1]
    return jnp.sum(
        (K * sigma2 + jnp.sum(phi * phi, axis=1)) / (2.0 * loading_variance)
        - 0.5 * K * (1.0 + jnp.log(sigma2 / loading_variance))
    )


def latent_elbo(X, psi, gamma, loadings: Loadings, alpha, noise_variance, loading_variance):
    """The ELBO of the latent-feature model (all but the classifiers' ``eta``)::

        E[log p(X | Z, W)] - KL(q(W) || p(W)) + E[log p(Z | nu)] + H[q(Z)] - KL(q(nu) || p(nu)),

    with ``E[log(1 - pi_k)]`` replaced by the tight bound ``L_k`` of eq. 24."""
    return (
        expected_log_likelihood(X, psi, loadings, noise_variance)
        - loadings_kl(loadings, loading_variance)
        + ibp_sticks.ibp_elbo(psi, gamma, alpha)
    )


def update_loadings(X, psi, noise_variance, loading_variance) -> Loadings:
    """The joint maximum of the ELBO over ``q(W)`` (eq. 25, exact for all k at once).

    ``Phi_n = (U + r_n I)^{-1} psi^T x_n`` with ``r_n = lambda_n^2 / sigma_0^2``, solved for every
    row with one eigendecomposition of ``U`` (symmetric positive semi-definite, ``r_n > 0``);
    ``sigma_n^2 = (1 / sigma_0^2 + tr(U) / (K lambda_n^2))^{-1}``.
    """
    N, K = X.shape[0], psi.shape[1]
    lam2 = jnp.broadcast_to(noise_variance, (N,))
    U = feature_moments(psi)
    values, vectors = jnp.linalg.eigh(U)
    values = jnp.maximum(values, 0.0)  # U is PSD; rounding may give -1e-16
    projected = (X @ psi) @ vectors  # (N, K): psi^T x_n in U's eigenbasis
    ratio = lam2 / loading_variance
    phi = (projected / (values[None, :] + ratio[:, None])) @ vectors.T
    sigma2 = 1.0 / (1.0 / loading_variance + jnp.trace(U) / (K * lam2))
    return Loadings(phi, sigma2)


class FeatureStats(NamedTuple):
    """What a sweep of the feature update needs from ``q(W)``: ``A`` (K x K) and ``B`` (D x K)."""

    A: jnp.ndarray
    B: jnp.ndarray


def feature_stats(X, loadings: Loadings, noise_variance) -> FeatureStats:
    """``A = sum_n a_n (Phi_n Phi_n^T + sigma_n^2 I)`` and ``B = X^T diag(a) Phi`` with
    ``a_n = 1 / lambda_n^2``: formed once per sweep (``O(N D K + N K^2)``)."""
    phi, sigma2 = loadings
    a = 1.0 / jnp.broadcast_to(noise_variance, phi.shape[:1])
    weighted = phi * a[:, None]
    A = phi.T @ weighted + jnp.eye(phi.shape[1], dtype=phi.dtype) * jnp.sum(a * sigma2)
    B = X.T @ weighted
    return FeatureStats(A, B)


def column_logit(psi, k, stats: FeatureStats, extra_logit):
    """The logit of column ``k`` of ``psi`` given the other columns (eq. 27, corrected)::

        extra_dk + B_dk - A_kk / 2 - sum_{j != k} A_jk psi_dj,

    ``extra_logit`` (D x K) the non-likelihood part: the prior's ``E[log pi_k] - L_k`` and,
    in MT-iLSVM, the margin term."""
    A, B = stats
    a_col = A[:, k]
    a_kk = a_col[k]
    others = psi @ a_col - psi[:, k] * a_kk
    return extra_logit[:, k] + B[:, k] - 0.5 * a_kk - others


def update_feature_column(psi, k, stats: FeatureStats, extra_logit):
    """``psi_.k <- sigmoid(column_logit)``: the exact maximum of the ELBO (plus any term
    linear in ``psi`` given by ``extra_logit``) over column ``k``, the other columns fixed."""
    return psi.at[:, k].set(jax.nn.sigmoid(column_logit(psi, k, stats, extra_logit)))


def update_features(psi, stats: FeatureStats, extra_logit):
    """One coordinate-ascent sweep of eq. 27 over the columns k = 1..K in order."""
    K = psi.shape[1]
    return jax.lax.fori_loop(0, K, lambda k, p: update_feature_column(p, k, stats, extra_logit), psi)


def update_loading_variance(loadings: Loadings):
    """Eq. 29: ``sigma_0^2 = sum_n (K sigma_n^2 + Phi_n.Phi_n) / (K N)``, the maximum of
    ``-KL(q(W) || p(W))`` over ``sigma_0^2``."""
    phi, sigma2 = loadings
    N, K = phi.shape
    return jnp.sum(K * sigma2 + jnp.sum(phi * phi, axis=1)) / (K * N)


def update_noise_variance(X, psi, loadings: Loadings, floor=0.0):
    """Eq. 30: ``lambda_n^2 = E||x_n - Z w_n||^2 / D`` (N,), the maximum of the expected
    log-likelihood over ``lambda_n^2``; values below ``floor`` are raised to it (a row that
    the features explain exactly would otherwise get zero variance and infinite weight)."""
    return jnp.maximum(expected_sq_residual(X, psi, loadings) / X.shape[1], floor)
