"""Model math of the mixtures of linear SVMs (paper 001, eqs. 31, 32 and 35).

The small-variance limit of the Gibbs infinite SVM is the deterministic objective (eq. 35)

    L_sv(z, mu, eta) = sum_k ||eta_k||^2 / (2 nu^2) + 2c sum_i hinge_i(eta_{z_i})
                       + s sum_i D_phi(x_i, mu_{z_i}) + lambda K,

whose pieces are here, shared by M2DPM (which minimises it) and the DP-means + SVM
pipeline (which minimises its clustering part ``sum_i D_phi(x_i, mu_{z_i}) + lambda K``,
then the classifier part with the clusters fixed): the hinge of every point under every
component's classifier, the rows of the eta-step's quadratic program, the closed-form
one-example classifier of eq. 32 and the objectives themselves.

Multi-class (paper 001's Appendix C is not available; derivation). With M >= 3 classes a
component's classifier is W_k = (w_k1, ..., w_kM), its prior N(0, nu^2 I) on every row,
and the hinge is Crammer-Singer's, ``hinge_i(W) = max(0, max_{m != y_i} l + (w_m -
w_{y_i})^T x_i)`` (paper 000, eq. 16). The SVA derivation of eqs. 22-32 goes through
unchanged with ``(zeta_i)_+`` replaced by this hinge, so eqs. 31, 32 and 35 keep their
form. The one-example problem of eq. 32, ``min_W ||W||^2/(2 nu^2) + 2c hinge(W; x, y)``,
has a closed form: the hinge depends on W only through the scores ``w_m^T x``, so
``w_m = a_m x``; the problem is symmetric in the M - 1 wrong classes, so (convexity) an
optimum has ``a_m = -b`` for ``m != y``. For a fixed score gap ``gamma = a_y + b``,
``||W||^2 = ||x||^2 (a_y^2 + (M-1) b^2)`` is smallest at ``a_y = (M-1) gamma / M``,
``b = gamma / M``, where it is ``||x||^2 (M-1) gamma^2 / M``. Minimising
``||x||^2 (M-1) gamma^2 / (2 M nu^2) + 2c (l - ||x||^2 gamma)_+`` over gamma gives

    gamma* = min(2 c nu^2 M / (M - 1), l / ||x||^2),

and ``Q_i(new) = lambda + ||x||^2 (M-1) gamma*^2 / (2 M nu^2) + 2c (l - ||x||^2 gamma*)_+``.
For two classes the binary form is used, ``eta* = min(2 c nu^2, l / ||x||^2) y x``
(paper 001 after eq. 32, Crammer et al. 2006, with margin l).

Intercept. With an intercept each component's discriminant is
``f_k(x) = eta_k^T (x - xbar) + b_k`` with xbar the training mean (a fixed shift of the
classifier's features, which leaves eq. 35 and its monotone decrease intact), and
``b_k ~ N(0, nu^2 R^2)`` with ``R = max_i ||x_i - xbar||``: b_k is the weight of a constant
feature of value R, so the intercept is penalised on the data's own scale rather than
pinned near zero (``b_k^2 / (2 nu^2 R^2)`` joins the prior term of eq. 35). Everything
then holds with the classifier features x~ = (x - xbar, R) in place of x. Without an
intercept the features are used as they are, as in the paper.

Labels in the classifier's coding: +1/-1 (float) for two classes, 0 .. M-1 (int)
otherwise; a component's classifier is a (p,) vector or an (M, p) matrix on x~.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .bregman import divergence_to


class ComponentSVM(NamedTuple):
    """The constants of every component's linear SVM: M, c, l and nu."""

    n_classes: int
    C: float
    margin: float
    prior_scale: float


def svm_labels(codes, n_classes: int) -> np.ndarray:
    """Class codes 0 .. M-1 in the classifier's coding: +1/-1 floats for two classes
    (code 1 is +1), the codes as int64 otherwise."""
    codes = np.asarray(codes, dtype=np.int64)
    if n_classes == 2:
        return np.where(codes == 1, 1.0, -1.0)
    return codes


def feature_shift(X) -> tuple[np.ndarray, float]:
    """``(xbar, R)``: the training mean and ``R = max_i ||x_i - xbar||`` (1 if 0)."""
    X = np.asarray(X, dtype=np.float64)
    mean = X.mean(axis=0)
    radius = float(np.sqrt(np.max(np.sum((X - mean) ** 2, axis=1))))
    return mean, (radius if radius > 0 else 1.0)


def classifier_features(X, mean=None, radius=1.0) -> np.ndarray:
    """Classifier features x~: ``(x - xbar, R)`` with an intercept (``mean`` given), x
    itself otherwise (``mean=None``). C-contiguous float64."""
    X = np.asarray(X, dtype=np.float64)
    if mean is None:
        return np.ascontiguousarray(X)
    return np.ascontiguousarray(np.hstack([X - mean, np.full((X.shape[0], 1), float(radius))]))


def coef_and_intercept(W, n_features: int, mean=None, radius=1.0):
    """``(coef, intercept)`` in the original coordinates, ``f_k(x) = coef[k] @ x +
    intercept[k]``, from the weights ``W`` (K, [M,] p) on x~."""
    if mean is None:
        return W.copy(), np.zeros(W.shape[:-1])
    coef = W[..., :n_features]
    return coef, W[..., n_features] * float(radius) - coef @ mean


def hinge_matrix(svm: ComponentSVM, Xt, W, y) -> np.ndarray:
    """``H[i, k]``: hinge of point i under component k's classifier, (n, K)."""
    l = float(svm.margin)
    if svm.n_classes == 2:
        return np.maximum(0.0, l - y[:, None] * (Xt @ W.T))
    S = np.einsum("ip,kmp->ikm", Xt, W)
    n = Xt.shape[0]
    s_true = S[np.arange(n), :, y]  # (n, K)
    S = S + l
    S[np.arange(n), :, y] = -np.inf
    return np.maximum(0.0, S.max(axis=2) - s_true)


def qp_rows(svm: ComponentSVM, Xt, y):
    """Rows ``(A, c)`` of the eta-step's QP (see
    :func:`regbayes.algorithms.m2dpm_kernels.svm_primal_qp`): one row ``y_i x~_i`` per point
    (binary), or the M - 1 rows ``(e_{y_i} - e_m) (x) x~_i`` (Crammer-Singer); ``c = l``."""
    l = float(svm.margin)
    n = Xt.shape[0]
    if svm.n_classes == 2:
        return y[:, None] * Xt, np.full(n, l)
    M, p = svm.n_classes, Xt.shape[1]
    others = np.array([[m for m in range(M) if m != c] for c in range(M)])[y]  # (n, M-1)
    A = np.zeros((n, M - 1, M, p))
    rows = np.arange(n)[:, None]
    cols = np.arange(M - 1)[None, :]
    A[rows, cols, y[:, None], :] = Xt[:, None, :]
    A[rows, cols, others, :] = -Xt[:, None, :]
    return A.reshape(n * (M - 1), M * p), np.full(n * (M - 1), l)


def one_example(svm: ComponentSVM, Xt):
    """Closed-form one-example classifiers of eq. 32 (module docstring): per point the
    scale (``t*`` binary, ``gamma*`` Crammer-Singer) and the cost
    ``min_eta 2c hinge_i(eta) + ||eta||^2 / (2 nu^2)``."""
    c, l, nu2 = float(svm.C), float(svm.margin), float(svm.prior_scale) ** 2
    sq = np.einsum("ij,ij->i", Xt, Xt)
    with np.errstate(divide="ignore"):
        cap = np.where(sq > 0, l / np.where(sq > 0, sq, 1.0), np.inf)
    if svm.n_classes == 2:
        t = np.minimum(2.0 * c * nu2, cap)
        t = np.where(sq > 0, t, 0.0)
        cost = t**2 * sq / (2.0 * nu2) + 2.0 * c * np.maximum(0.0, l - t * sq)
        return t, cost
    M = svm.n_classes
    gamma = np.minimum(2.0 * c * nu2 * M / (M - 1), cap)
    gamma = np.where(sq > 0, gamma, 0.0)
    cost = sq * (M - 1) * gamma**2 / (2.0 * M * nu2) + 2.0 * c * np.maximum(0.0, l - gamma * sq)
    return gamma, cost


def one_example_weights(svm: ComponentSVM, Xt, y, scale) -> np.ndarray:
    """The classifier of a component opened at each given point (rows of Xt), from the
    scales of :func:`one_example`."""
    if svm.n_classes == 2:
        return (scale * y)[:, None] * Xt
    M = svm.n_classes
    coeff = np.full((len(y), M), -1.0 / M)
    coeff[np.arange(len(y)), y] = (M - 1) / M
    return (coeff * scale[:, None])[:, :, None] * Xt[:, None, :]


def sva_objective(svm: ComponentSVM, divergence: str, s: float, cluster_penalty: float, X, Xt, y, z, mu, W) -> float:
    """Eq. 35 at ``(z, mu, W)`` (the intercept's prior inside ``||W_k||^2``)."""
    nu2 = float(svm.prior_scale) ** 2
    K = mu.shape[0]
    prior = float(np.sum(W**2)) / (2.0 * nu2)
    hinge = 0.0
    data = 0.0
    for k in range(K):
        members = z == k
        hinge += float(hinge_matrix(svm, Xt[members], W[k][None], y[members]).sum())
        data += float(divergence_to(divergence, X[members], mu[k]).sum())
    return prior + 2.0 * float(svm.C) * hinge + float(s) * data + float(cluster_penalty) * K


def dp_means_objective(divergence: str, cluster_penalty: float, X, z, mu) -> float:
    """The DP-means objective ``sum_i D_phi(x_i, mu_{z_i}) + lambda K`` (Kulis & Jordan
    2012; eq. 35's clustering part with s = 1)."""
    K = mu.shape[0]
    value = float(sum(divergence_to(divergence, X[z == k], mu[k]).sum() for k in range(K)))
    return value + float(cluster_penalty) * K
