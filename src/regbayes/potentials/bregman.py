"""Bregman divergences of exponential families (paper 001, eqs. 3-5).

An exponential family written with its mean parameter has the likelihood
``p(x | mu) = exp(-D_phi(x, mu)) f_phi(x)`` (eq. 3), with

    D_phi(x, mu) = phi(x) - phi(mu) - <x - mu, grad phi(mu)>,

phi the Legendre conjugate of the log-partition function (Banerjee et al. 2005). Two
families are provided:

* ``"euclidean"`` -- the Gaussian N(mu, I): phi(x) = ||x||^2 / 2, so
  ``D(x, mu) = ||x - mu||^2 / 2``. Any real features.
* ``"kl"`` -- the product of Poissons: phi(x) = sum_j x_j log x_j - x_j, so
  ``D(x, mu) = sum_j x_j log(x_j / mu_j) - x_j + mu_j`` (generalized Kullback-Leibler,
  I-divergence), with 0 log 0 = 0. Features must be nonnegative (counts, frequencies);
  a point with x_j > 0 is at infinite divergence from a mean with mu_j = 0.

For both, the mean of a set of points minimises the sum of divergences to it
(Banerjee et al. 2005, Proposition 1), which is M2DPM's mu-step (Algorithm 1).
"""
from __future__ import annotations

import numpy as np
from scipy.special import rel_entr

DIVERGENCES = ("euclidean", "kl")


def check_divergence_domain(name: str, X) -> None:
    """Refuse data outside the divergence's domain (negative values for ``"kl"``)."""
    if name == "kl":
        X = np.asarray(X)
        if X.size and np.min(X) < 0:
            row, col = np.argwhere(X < 0)[0]
            raise ValueError(
                "divergence='kl' (generalized KL, a Poisson likelihood) needs nonnegative features; "
                f"X[{row}, {col}] = {X[row, col]!r} is negative. Use divergence='euclidean' or shift the data."
            )


def pairwise_divergence(name: str, X, centers) -> np.ndarray:
    """``D[i, k] = D_phi(X[i], centers[k])``, shape (n, K), float64 (``inf`` where undefined)."""
    X = np.asarray(X, dtype=np.float64)
    centers = np.asarray(centers, dtype=np.float64)
    if name == "euclidean":
        sq = (
            np.einsum("ij,ij->i", X, X)[:, None]
            - 2.0 * X @ centers.T
            + np.einsum("kj,kj->k", centers, centers)[None, :]
        )
        return 0.5 * np.maximum(sq, 0.0)
    if name == "kl":
        # sum_j x log x - x log mu - x + mu; columns of centres with a zero coordinate are
        # done elementwise (rel_entr handles 0 log 0 and x > 0 = mu -> inf).
        out = np.empty((X.shape[0], centers.shape[0]))
        positive = np.all(centers > 0, axis=1)
        if positive.any():
            base = rel_entr(X, 1.0).sum(axis=1) - X.sum(axis=1)
            out[:, positive] = (
                base[:, None] - X @ np.log(centers[positive]).T + centers[positive].sum(axis=1)[None, :]
            )
        for k in np.flatnonzero(~positive):
            out[:, k] = divergence_to(name, X, centers[k])
        return out
    raise ValueError(f"unknown divergence {name!r}; choose one of {', '.join(map(repr, DIVERGENCES))}")


def divergence_to(name: str, X, center) -> np.ndarray:
    """``D_phi(X[i], center)`` for every row (n,), computed elementwise."""
    X = np.asarray(X, dtype=np.float64)
    center = np.asarray(center, dtype=np.float64)
    if name == "euclidean":
        diff = X - center
        return 0.5 * np.einsum("ij,ij->i", diff, diff)
    if name == "kl":
        return np.sum(rel_entr(X, center[None, :]) - X + center[None, :], axis=1)
    raise ValueError(f"unknown divergence {name!r}; choose one of {', '.join(map(repr, DIVERGENCES))}")
