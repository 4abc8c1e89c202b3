"""Normal–inverse-Wishart (NIW) conjugate Gaussian likelihood, collapsed.

Paper 000, section 4.2 (iSVM): each component's features follow ``N(mu_k, Sigma_k)`` with
the conjugate prior

    Sigma ~ IW(Psi_0, nu_0),     mu | Sigma ~ N(m_0, Sigma / kappa_0).

Given ``n`` points with mean ``xbar`` and scatter ``S = sum (x - xbar)(x - xbar)^T`` the
posterior is NIW with (Murphy 2007, "Conjugate Bayesian analysis of the Gaussian
distribution", eqs. 250-254)

    kappa_n = kappa_0 + n,   nu_n = nu_0 + n,
    m_n     = (kappa_0 m_0 + n xbar) / kappa_n,
    Psi_n   = Psi_0 + S + kappa_0 n / kappa_n (xbar - m_0)(xbar - m_0)^T,

and, with ``(mu, Sigma)`` integrated out, a new point has the multivariate Student-t
predictive (paper 001, eq. 15's ``p(x_i | mu_k)`` collapsed; eq. 16's ``p(x_i)`` is the
case ``n = 0``)

    p(x | X_k) = t_{nu_n - d + 1}(x; m_n, Psi_n (kappa_n + 1) / (kappa_n (nu_n - d + 1))).

One point at a time the posterior moves by a rank-one change (used by the CRP sweep in
:mod:`regbayes.algorithms.crp_kernels`)::

    add x:     Psi <- Psi + kappa / (kappa + 1) (x - m)(x - m)^T,   m <- (kappa m + x) / (kappa + 1)

The marginal likelihood of a block (for tests and for the partition enumeration) is

    log p(X) = -n d / 2 log pi + log Gamma_d(nu_n / 2) - log Gamma_d(nu_0 / 2)
               + nu_0 / 2 log|Psi_0| - nu_n / 2 log|Psi_n| + d / 2 log(kappa_0 / kappa_n).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.linalg import solve_triangular
from scipy.special import gammaln, multigammaln


class NIW(NamedTuple):
    """NIW parameters; ``chol`` is the lower Cholesky factor of ``Psi``."""

    mean: np.ndarray  # m, (d,)
    kappa: float
    dof: float  # nu
    chol: np.ndarray  # (d, d) lower, Psi = chol chol^T

    @property
    def scale(self) -> np.ndarray:
        return self.chol @ self.chol.T


def niw_prior(mean, kappa, dof, scale) -> NIW:
    """The prior as an :class:`NIW`; ``scale`` is ``Psi_0`` (symmetric positive definite)."""
    mean = np.asarray(mean, dtype=np.float64)
    scale = np.asarray(scale, dtype=np.float64)
    d = mean.shape[0]
    if scale.shape != (d, d):
        raise ValueError(f"NIW scale matrix must have shape ({d}, {d}), got {scale.shape}")
    if dof <= d - 1:
        raise ValueError(f"NIW degrees of freedom must exceed d - 1 = {d - 1}, got {dof}")
    if kappa <= 0:
        raise ValueError(f"NIW kappa must be positive, got {kappa}")
    try:
        chol = np.linalg.cholesky(scale)
    except np.linalg.LinAlgError:
        raise ValueError("NIW scale matrix must be symmetric positive definite") from None
    return NIW(mean, float(kappa), float(dof), chol)


def default_prior(X, kappa=None, dof=None, covariance=0.1, mean=None) -> NIW:
    """The prior with data-driven defaults (those of :class:`~regbayes.models.isvm.InfiniteSVC`).

    ``E[Sigma] = Psi_0 / (nu_0 - d - 1)`` is ``covariance`` if it is a matrix, else
    ``covariance * diag(var X)`` (a component a tenth as wide as the data along every
    feature by default; constant features get a floor of 1e-6 times the largest
    variance); ``nu_0 = d + 2`` (the weakest prior with a finite mean covariance) unless
    given (> d + 1); ``m_0`` = the data mean unless given; ``kappa_0 = r / (1 - r)`` with
    ``r = tr E[Sigma] / tr var X`` (1 if r >= 1), so that a new component's prior
    predictive, covariance ``(1 + 1/kappa_0) E[Sigma]``, is as wide as the data.
    """
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[1]
    dof = float(d + 2) if dof is None else float(dof)
    if dof <= d + 1:
        raise ValueError(f"NIW degrees of freedom must exceed n_features + 1 = {d + 1}, got {dof}")
    var = X.var(axis=0)
    if np.ndim(covariance) == 0:
        floor = 1e-6 * var.max() if var.max() > 0 else 1.0
        expected = float(covariance) * np.diag(np.maximum(var, floor))
    else:
        expected = np.asarray(covariance, dtype=np.float64)
        if expected.shape != (d, d) or not np.all(np.isfinite(expected)):
            raise ValueError(f"the NIW covariance must be a positive float or a finite ({d}, {d}) matrix, "
                             f"got shape {expected.shape}")
    mean = X.mean(axis=0) if mean is None else np.asarray(mean, dtype=np.float64)
    if mean.shape != (d,) or not np.all(np.isfinite(mean)):
        raise ValueError(f"the NIW mean must be a finite vector of length {d}, got shape {mean.shape}")
    if kappa is None:
        r = float(np.trace(expected) / max(np.sum(var), 1e-300))
        kappa = r / (1.0 - r) if r < 1.0 else 1.0
    return niw_prior(mean, kappa, dof, (dof - d - 1) * expected)


def posterior(prior: NIW, X) -> NIW:
    """NIW posterior given the rows of ``X`` (eqs. 250-254 of Murphy 2007)."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if n == 0:
        return prior
    xbar = X.mean(axis=0)
    centred = X - xbar
    scatter = centred.T @ centred
    kappa_n = prior.kappa + n
    diff = xbar - prior.mean
    scale = prior.scale + scatter + prior.kappa * n / kappa_n * np.outer(diff, diff)
    mean = (prior.kappa * prior.mean + n * xbar) / kappa_n
    return NIW(mean, kappa_n, prior.dof + n, np.linalg.cholesky(scale))


def predictive_params(post: NIW):
    """``(df, loc, shape matrix)`` of the Student-t predictive."""
    d = post.mean.shape[0]
    df = post.dof - d + 1
    shape = post.scale * (post.kappa + 1) / (post.kappa * df)
    return df, post.mean, shape


def log_predictive(post: NIW, X) -> np.ndarray:
    """``log t_{df}(x; m, Psi (kappa + 1) / (kappa df))`` for every row of ``X``, through
    the Cholesky factor of ``Psi`` (O(d^2) per row)."""
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    d = post.mean.shape[0]
    df = post.dof - d + 1
    inv_chol = solve_triangular(post.chol, np.eye(d), lower=True)
    v = (X - post.mean) @ inv_chol.T
    maha = np.sum(v * v, axis=1)  # (x - m)^T Psi^{-1} (x - m)
    logdet_psi = 2.0 * np.sum(np.log(np.diag(post.chol)))
    ratio = (post.kappa + 1) / (post.kappa * df)
    return (
        gammaln((df + d) / 2)
        - gammaln(df / 2)
        - d / 2 * np.log(df * np.pi)
        - 0.5 * (d * np.log(ratio) + logdet_psi)
        - (df + d) / 2 * np.log1p(post.kappa / (post.kappa + 1) * maha)
    )


def log_marginal_likelihood(prior: NIW, X) -> float:
    """``log p(X)`` with ``(mu, Sigma)`` integrated out (closed form above)."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    post = posterior(prior, X)
    logdet0 = 2.0 * np.sum(np.log(np.diag(prior.chol)))
    logdetn = 2.0 * np.sum(np.log(np.diag(post.chol)))
    return float(
        -n * d / 2 * np.log(np.pi)
        + multigammaln(post.dof / 2, d)
        - multigammaln(prior.dof / 2, d)
        + prior.dof / 2 * logdet0
        - post.dof / 2 * logdetn
        + d / 2 * np.log(prior.kappa / post.kappa)
    )


def component_posteriors(prior: NIW, X, labels, n_slots):
    """Posterior ``(counts, means, chols)`` of every slot ``0..n_slots-1`` (prior for
    empty slots), vectorised over slots: counts (K,), means (K, d), chols (K, d, d)."""
    X = np.asarray(X, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    d = X.shape[1]
    counts = np.bincount(labels, minlength=n_slots).astype(np.int64)
    means = np.broadcast_to(prior.mean, (n_slots, d)).copy()
    chols = np.broadcast_to(prior.chol, (n_slots, d, d)).copy()
    order = np.argsort(labels, kind="stable")
    ends = np.cumsum(counts)
    for k in np.flatnonzero(counts):
        post = posterior(prior, X[order[ends[k] - counts[k] : ends[k]]])
        means[k], chols[k] = post.mean, post.chol
    return counts, means, chols
