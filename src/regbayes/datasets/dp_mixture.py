"""Synthetic DP-mixture-of-SVMs data of paper 001 (small-variance asymptotics for DP
mixtures of SVMs, M2DPM), section "Results on synthetic datasets", Settings I and II.

Setting I: n = 1000 instances are seated by a Chinese restaurant process with
concentration alpha = 1, capped at 10 clusters; instance i in cluster k has
x_i ~ N(mu_k, sigma^2 I_d) with sigma = 0.5 and mu_k = (k, ..., k); each cluster has
its own classifier eta_k ~ N(0, I_d), and the label follows eq. (37):

    p(y_i = 1 | x_i, k) = sigmoid(eta_k^T (x_i - mu_k)).

Setting II: n = 10000 instances split uniformly (equal sizes) into 10 clusters, features
x_ij ~ U[k - 0.5, k + 0.5], eta_k and labels as in Setting I. Clusters are disjoint.

``center_scale`` (Setting I only) replaces the means (k, ..., k) by draws from the base
measure N(0, center_scale^2 I) of a Gaussian DP mixture, for experiments that need a
DP-mixture sample whose cluster means do not lie on one line (paper 001's Table 2 does
not specify its generator's means).
"""

from __future__ import annotations

import numpy as np

from ..rng import check_generator
from ..validation import check_int, check_real

__all__ = ["make_dp_mixture_svm"]

_DEFAULT_N = {"I": 1000, "II": 10000}


def _crp_assignments(n: int, alpha: float, max_clusters: int, rng) -> np.ndarray:
    """Sequential CRP seating (0-based cluster ids in order of creation); once
    ``max_clusters`` tables exist a new table has probability zero."""
    z = np.empty(n, dtype=np.int64)
    counts = np.zeros(max_clusters + 1, dtype=np.float64)
    n_tables = 0
    u = rng.uniform(size=n)
    for i in range(n):
        # Weights of the occupied tables, then of a new table while one may open.
        if n_tables < max_clusters:
            counts[n_tables] = alpha
            weights = counts[: n_tables + 1]
        else:
            weights = counts[:n_tables]
        cdf = np.cumsum(weights)
        k = min(int(np.searchsorted(cdf, u[i] * cdf[-1], side="right")), len(weights) - 1)
        if k == n_tables:
            counts[k] = 0.0
            n_tables += 1
        counts[k] += 1.0
        z[i] = k
    return z


def make_dp_mixture_svm(
    setting: str = "I",
    n_samples: int | None = None,
    n_features: int = 10,
    alpha: float = 1.0,
    max_clusters: int = 10,
    sigma: float = 0.5,
    random_state=None,
    return_clusters: bool = False,
    center_scale: float | None = None,
):
    """Generate paper 001's Setting I (CRP + Gaussian) or Setting II (uniform) data.

    Parameters
    ----------
    setting : {"I", "II"}
    n_samples : int or None
        Default 1000 for Setting I, 10000 for Setting II (the paper's sizes).
    n_features : int
        Dimension d (the paper: 10).
    alpha : float > 0
        CRP concentration (Setting I only).
    max_clusters : int
        Cap on the number of clusters in Setting I; the number of clusters in Setting II.
    sigma : float > 0
        Within-cluster standard deviation (Setting I only).
    random_state : None, int or np.random.Generator
    return_clusters : bool
        Also return the cluster index of every instance (1-based: cluster k has
        mu_k = (k, ..., k)) and the classifiers eta (max_clusters, n_features).
    center_scale : float > 0 or None
        Setting I only: draw mu_k ~ N(0, center_scale^2 I) instead of (k, ..., k).
        ``None`` (default) is the paper's Setting I.

    Returns
    -------
    X : (n_samples, n_features) float64
    y : (n_samples,) int64 in {-1, +1}
    clusters : (n_samples,) int64 in {1, ..., max_clusters}, if ``return_clusters``
    coef : (max_clusters, n_features) float64, row k-1 is eta_k, if ``return_clusters``
    """
    if setting not in _DEFAULT_N:
        raise ValueError(f"setting must be 'I' or 'II', got {setting!r}")
    if n_samples is None:
        n_samples = _DEFAULT_N[setting]
    n_samples = check_int("n_samples", n_samples)
    n_features = check_int("n_features", n_features)
    max_clusters = check_int("max_clusters", max_clusters)
    alpha = check_real("alpha", alpha, low=0.0, low_inclusive=False)
    sigma = check_real("sigma", sigma, low=0.0, low_inclusive=False)
    rng = check_generator(random_state)
    if center_scale is not None:
        if setting != "I":
            raise ValueError("center_scale applies to Setting I only")
        center_scale = check_real("center_scale", center_scale, low=0.0, low_inclusive=False)

    if setting == "I":
        z = _crp_assignments(n_samples, alpha, max_clusters, rng)
    else:
        z = rng.permutation(np.arange(n_samples) % max_clusters)
    k = (z + 1).astype(np.float64)  # cluster k = 1..K has mu_k = (k, ..., k)
    means = np.broadcast_to(k[:, None], (n_samples, n_features))
    if setting == "I":
        X = k[:, None] + sigma * rng.standard_normal((n_samples, n_features))
        if center_scale is not None:
            centers = center_scale * rng.standard_normal((max_clusters, n_features))
            means = centers[z]
            X = X - k[:, None] + means
    else:
        X = k[:, None] + rng.uniform(-0.5, 0.5, size=(n_samples, n_features))
    coef = rng.standard_normal((max_clusters, n_features))
    scores = np.einsum("ij,ij->i", coef[z], X - means)
    p_pos = 0.5 * (1.0 + np.tanh(0.5 * scores))  # sigmoid, eq. (37)
    y = np.where(rng.uniform(size=n_samples) < p_pos, 1, -1).astype(np.int64)
    if return_clusters:
        return X, y, (z + 1).astype(np.int64), coef
    return X, y
