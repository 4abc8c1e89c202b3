"""The linear-Gaussian IBP factor model under mean field (paper 002, section 4.2, Appendix D.2).

The likelihood of iLSVM and of the unsupervised IBP feature model (section 4.2)::

    x_n | z_n, W ~ N(W z_n, s_n I_D),    w_dk ~ N(0, sigma_0^2),

with ``X`` (N x D), binary ``z_n`` (K columns, the truncation level), ``s_n = sigma_n0^2``
the noise variance of row n (one value or one per row) and ``sigma_0^2`` the loading
variance. The mean-field family of Appendix D.2 is ``q(W_.k) = N(Phi_.k, sigma_k^2 I_D)``
and ``q(z_nk) = Bernoulli(psi_nk)``; this module holds the ELBO terms that involve ``W``
and the closed-form updates derived from them. The ``nu`` and ``Z`` prior terms are
:mod:`regbayes.potentials.ibp_sticks`.

Expected likelihood (Appendix D.2, ``L_n(q)``; z_nk^2 = z_nk and E[W_.k^T W_.k] =
D sigma_k^2 + Phi_.k^T Phi_.k give)::

    E||x_n - W z_n||^2 = ||x_n||^2 - 2 sum_k psi_nk x_n^T Phi_.k
                         + sum_{j != k} psi_nj psi_nk Phi_.j^T Phi_.k
                         + sum_k psi_nk (D sigma_k^2 + Phi_.k^T Phi_.k),
    L_n(q) = -E||x_n - W z_n||^2 / (2 s_n) - D log(2 pi s_n) / 2.

Corrections of Appendix D.2's expansion: ``x_n^T Phi E[z_n]`` is ``sum_k psi_nk x_n^T Phi_.k``,
not twice it (the factor 2 belongs to the cross term of the square only); and
``E[z_n A z_n^T]`` with ``A_kk = E[W_.k^T W_.k] = D sigma_k^2 + Phi_.k^T Phi_.k`` is
``2 sum_{j<k} psi_nj psi_nk A_jk + sum_k psi_nk A_kk``: the printed
``sum_k psi_nk (D sigma_k^2 + A_kk)`` counts ``D sigma_k^2`` twice.

KL of the loadings::

    KL(q(W) || p(W)) = sum_k [ (D sigma_k^2 + Phi_.k^T Phi_.k) / (2 sigma_0^2)
                               - D/2 - (D/2) log(sigma_k^2 / sigma_0^2) ].

All sums over rows go through :class:`DataStats` (``sum_n x_n psi_nk / s_n``,
``sum_n psi_nj psi_nk / s_n``, ...), formed once per sweep, so that an ELBO evaluation
and the loading update cost O(N D K + N K^2) and the feature sweep O(N K^2) given
``X Phi``. Every function is pure JAX and keeps the dtype of its inputs.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.scipy.linalg import cho_factor, cho_solve
from jax.scipy.special import xlogy


class DataStats(NamedTuple):
    """Row sums of the data term, given ``psi`` and the noise variances ``s_n``.

    cross: (D, K) ``sum_n x_n psi_nk / s_n``  (``X^T (psi / s)``)
    gram: (K, K) ``sum_n psi_nj psi_nk / s_n``  (``psi^T (psi / s)``, diagonal ``sum psi^2 / s``)
    mass: (K,) ``sum_n psi_nk / s_n``
    sq: () ``sum_n ||x_n||^2 / s_n``
    log_noise: () ``D sum_n log(2 pi s_n)``
    """

    cross: jnp.ndarray
    gram: jnp.ndarray
    mass: jnp.ndarray
    sq: jnp.ndarray
    log_noise: jnp.ndarray


def _row_noise(noise, n_rows, dtype):
    """``s_n`` as an (N,) array from a scalar or an (N,) array."""
    return jnp.broadcast_to(jnp.asarray(noise, dtype), (n_rows,))


def data_stats(X, sq_norms, psi, noise) -> DataStats:
    """The sums of :class:`DataStats`; ``sq_norms[n] = ||x_n||^2``, ``noise`` scalar or (N,)."""
    n, d = X.shape
    s = _row_noise(noise, n, psi.dtype)
    weighted = psi / s[:, None]
    return DataStats(
        cross=X.T @ weighted,
        gram=psi.T @ weighted,
        mass=jnp.sum(weighted, axis=0),
        sq=jnp.sum(sq_norms / s),
        log_noise=d * jnp.sum(jnp.log(2.0 * math.pi * s)),
    )


def expected_sq_residual(X, psi, Phi, sigma2):
    """``E_q||x_n - W z_n||^2`` for every row (module docstring), (N,). O(N D K)."""
    d = X.shape[1]
    xphi = X @ Phi
    gram_phi = Phi.T @ Phi
    a_diag = d * sigma2 + jnp.diagonal(gram_phi)
    quad = jnp.einsum("nj,jk,nk->n", psi, gram_phi, psi) - jnp.sum(psi**2 * jnp.diagonal(gram_phi), axis=1)
    return jnp.sum(X**2, axis=1) - 2.0 * jnp.sum(psi * xphi, axis=1) + quad + psi @ a_diag


def expected_log_likelihood(X, psi, Phi, sigma2, noise):
    """``sum_n L_n(q)`` (Appendix D.2, corrected; module docstring), computed row by row."""
    n, d = X.shape
    s = _row_noise(noise, n, psi.dtype)
    return jnp.sum(-expected_sq_residual(X, psi, Phi, sigma2) / (2.0 * s) - 0.5 * d * jnp.log(2.0 * math.pi * s))


def expected_log_likelihood_stats(stats: DataStats, Phi, sigma2):
    """``sum_n L_n(q)`` from :class:`DataStats` (the same value as
    :func:`expected_log_likelihood`, in O(D K^2) given the statistics)."""
    d = Phi.shape[0]
    gram_phi = Phi.T @ Phi
    diag_phi = jnp.diagonal(gram_phi)
    quad = jnp.sum(stats.gram * gram_phi) - jnp.sum(jnp.diagonal(stats.gram) * diag_phi)
    residual = stats.sq - 2.0 * jnp.sum(Phi * stats.cross) + quad + stats.mass @ (d * sigma2 + diag_phi)
    return -0.5 * residual - 0.5 * stats.log_noise


def loadings_kl(Phi, sigma2, loading_variance):
    """``KL(q(W) || p(W))`` for ``q(W_.k) = N(Phi_.k, sigma_k^2 I_D)``, ``p(w_dk) = N(0, sigma_0^2)``."""
    d = Phi.shape[0]
    s0 = loading_variance
    return jnp.sum((d * sigma2 + jnp.sum(Phi**2, axis=0)) / (2.0 * s0) - 0.5 * d - 0.5 * d * jnp.log(sigma2 / s0))


def update_loadings(stats: DataStats, loading_variance):
    """The maximum of the ELBO over ``q(W)`` given ``psi`` (eq. 31, corrected): ``(Phi, sigma2)``.

    Setting the derivatives of ``sum_n L_n(q) - KL(q(W) || p(W))`` to zero gives::

        sigma_k^2 = (1 / sigma_0^2 + sum_n psi_nk / s_n)^(-1),
        Phi_.k    = sigma_k^2 sum_n (psi_nk / s_n) (x_n - sum_{j != k} psi_nj Phi_.j),

    the second for every k at once: ``Phi M = X^T (psi / s)`` with the symmetric positive
    definite ``M_jk = sum_n psi_nj psi_nk / s_n`` (j != k), ``M_kk = 1 / sigma_0^2 +
    sum_n psi_nk / s_n``, solved by Cholesky: the exact block maximum, the fixed point of
    eq. 31's updates column by column. Correction of eq. 31: it has ``1 + sum_n psi_nk /
    s_n``, the prior precision ``1 / sigma_0^2`` taken as 1 (the value of line 3 of
    Algorithm 3), which is wrong once ``sigma_0^2`` is set or estimated (eq. 35).
    """
    precision0 = 1.0 / loading_variance
    sigma2 = 1.0 / (precision0 + stats.mass)
    k = stats.mass.shape[0]
    M = stats.gram - jnp.diag(jnp.diagonal(stats.gram)) + jnp.diag(stats.mass + precision0)
    M = 0.5 * (M + M.T)
    Phi = cho_solve(cho_factor(M, lower=True), stats.cross.T).T
    return Phi.reshape(stats.cross.shape[0], k), sigma2


def feature_logit(xphi, psi, Phi, sigma2, noise, offset):
    """The logit ``theta_nk`` of eq. 33 for every (n, k), each given the other columns of ``psi``::

        theta_nk = offset_nk - (D sigma_k^2 + Phi_.k^T Phi_.k) / (2 s_n)
                   + Phi_.k^T (x_n - sum_{j != k} psi_nj Phi_.j) / s_n,

    ``xphi = X Phi``; ``offset`` (broadcast to (N, K)) holds the prior part
    ``E[log pi_k] - L_k`` (:func:`regbayes.potentials.ibp_sticks.prior_logit`) and, for
    labelled rows, the margin term. ``psi_nk = sigmoid(theta_nk)`` maximises the ELBO in
    ``psi_nk`` with every other variational parameter fixed. (Eq. 33's likelihood part is
    printed correctly; it follows from the corrected expansion in the module docstring.)
    """
    n, d = xphi.shape[0], Phi.shape[0]
    s = _row_noise(noise, n, psi.dtype)
    gram_phi = Phi.T @ Phi
    diag_phi = jnp.diagonal(gram_phi)
    others = psi @ gram_phi - psi * diag_phi  # sum_{j != k} psi_nj Phi_j^T Phi_k
    return offset + (xphi - others - 0.5 * (d * sigma2 + diag_phi)) / s[:, None]


def feature_sweep(xphi, psi, Phi, sigma2, noise, offset):
    """One coordinate-ascent sweep of eq. 33 over the columns k = 1..K in turn, each column
    for all rows at once: ``psi_.k <- sigmoid(theta_.k)`` (:func:`feature_logit`) with the
    columns before k already updated. Every column update maximises the ELBO in that
    column (rows are independent given the other columns), so the sweep never lowers it.
    O(N K^2) given ``xphi = X Phi`` (formed once per sweep)."""
    n, d = xphi.shape[0], Phi.shape[0]
    k = psi.shape[1]
    s = _row_noise(noise, n, psi.dtype)
    gram_phi = Phi.T @ Phi
    diag_phi = jnp.diagonal(gram_phi)
    base = (xphi.T - 0.5 * (d * sigma2 + diag_phi)[:, None]) / s[None, :] + jnp.broadcast_to(offset, psi.shape).T  # (K, N)

    def column(j, psiT):
        others = gram_phi[j] @ psiT - diag_phi[j] * psiT[j]
        return psiT.at[j].set(jax.nn.sigmoid(base[j] - others / s))

    return jax.lax.fori_loop(0, k, column, psi.T).T


def row_objective(xphi, psi, Phi, sigma2, noise, offset):
    """The part of the ELBO that depends on row n's ``q(z_n)``, for every row, (N,)::

        (2 psi_n^T (Phi^T x_n) - sum_{j != k} psi_nj psi_nk Phi_.j^T Phi_.k
         - sum_k psi_nk (D sigma_k^2 + Phi_.k^T Phi_.k)) / (2 s_n) + psi_n^T offset_n + H[q(z_n)],

    ``xphi = X Phi``: ``L_n(q)`` without its terms free of ``psi_n``, the linear terms of
    ``offset`` (as in :func:`feature_logit`) and the Bernoulli entropy. It ranks candidate
    ``psi_n`` of one row with ``q(W)`` and ``q(nu)`` fixed."""
    n, d = xphi.shape[0], Phi.shape[0]
    s = _row_noise(noise, n, psi.dtype)
    gram_phi = Phi.T @ Phi
    diag_phi = jnp.diagonal(gram_phi)
    quad = jnp.sum((psi @ gram_phi) * psi, axis=1) - jnp.sum(psi**2 * diag_phi, axis=1)
    data = (2.0 * jnp.sum(psi * xphi, axis=1) - quad - psi @ (d * sigma2 + diag_phi)) / (2.0 * s)
    entropy = -jnp.sum(xlogy(psi, psi) + xlogy(1.0 - psi, 1.0 - psi), axis=1)
    return data + jnp.sum(psi * jnp.broadcast_to(offset, psi.shape), axis=1) + entropy


def update_loading_variance(Phi, sigma2):
    """Eq. 35: ``sigma_0^2 = sum_k (D sigma_k^2 + Phi_.k^T Phi_.k) / (K D)``, the maximum of
    ``-KL(q(W) || p(W))`` over ``sigma_0^2`` (printed correctly)."""
    d, k = Phi.shape
    return jnp.sum(d * sigma2 + jnp.sum(Phi**2, axis=0)) / (k * d)


def update_noise_variance(X, psi, Phi, sigma2):
    """Eq. 36 per row: ``s_n = E_q||x_n - W z_n||^2 / D``, the maximum of ``L_n(q)`` over
    ``s_n``; with the corrected expansion of the module docstring (the printed eq. 36
    carries the two misprints of Appendix D.2's ``L_n(q)``). A noise variance shared by
    all rows has the maximum ``mean_n`` of these values."""
    return expected_sq_residual(X, psi, Phi, sigma2) / X.shape[1]
