"""Steps shared by the mixtures of linear SVMs (paper 001, Algorithm 1): the exact
eta-step of one component, the classifiers of given clusters, and the bookkeeping of the
sequential z-step (closing emptied components) and of the mu-step.

eta-step. ``eta_k <- argmin ||eta||^2 / (2 nu^2) + 2c sum_{i in k} hinge_i(eta)`` is solved
exactly (to a certified relative duality gap of 1e-9) by the interior-point method of
:func:`regbayes.algorithms.m2dpm_kernels.svm_primal_qp`; 1e-7, then 1e-5, where its
Newton system turns singular to machine precision near the optimum. Algorithm 1 writes
it as one update of the Gaussian ``eta_k <- lambda_k`` (eq. 18) with ``omega_i = c |zeta_i|``:
that update minimises the quadratic bound ``(omega_i + c zeta_i)^2 / (2 omega_i) >= 2c
(zeta_i)_+``, which touches the hinge at the current margins, so repeating it is a
majorise-minimise (iteratively reweighted least-squares) scheme aimed at the same
minimiser. The interior-point solver never forms ``omega``, so the division by
``omega_i = c |zeta_i| = 0`` of points exactly on the margin cannot occur, and the
objective decreases at least as much as with one reweighted update. As a last safeguard,
a component keeps its previous classifier if the solver's answer is not better on the
component's current points, so eq. 35 never increases.

mu-step. ``mu_k <- mean of the points of component k``, the minimiser of the divergence
term for every Bregman divergence (Banerjee et al. 2005, Proposition 1).
"""
from __future__ import annotations

import numpy as np

from ..potentials.svm_mixture import ComponentSVM, hinge_matrix, qp_rows
from .m2dpm_kernels import svm_primal_qp

GAP_TOL = 1e-9  # relative duality gap at which the eta-step stops
# Looser gaps tried in turn when the interior point's Newton system turns singular to
# machine precision near the optimum (it stops earlier, before the barrier weights blow up).
FALLBACK_GAP_TOLS = (1e-7, 1e-5)


def solve_eta(svm: ComponentSVM, Xt, y, W_old=None):
    """Exact eta-step of one component on its points ``(Xt, y)``; keeps ``W_old`` unless
    the solution is better (eq. 35 cannot increase). Raises ``LinAlgError`` only when the
    solver fails at every tolerance and there is no ``W_old`` to keep."""
    U = 2.0 * float(svm.C) * float(svm.prior_scale) ** 2
    A, c = qp_rows(svm, Xt, y)
    for tol in (GAP_TOL, *FALLBACK_GAP_TOLS):
        try:
            w, primal, _, _ = svm_primal_qp(A, c, Xt.shape[0], U, tol)
            break
        except np.linalg.LinAlgError:
            continue
    else:  # no tolerance worked: keep the previous classifier (eq. 35 cannot increase)
        if W_old is None:
            raise np.linalg.LinAlgError("the eta-step's interior point failed at every tolerance")
        return W_old
    W = w.reshape(svm.n_classes, Xt.shape[1]) if svm.n_classes > 2 else w
    if W_old is not None:
        old = 0.5 * float(np.sum(W_old**2)) + U * float(hinge_matrix(svm, Xt, W_old[None], y).sum())
        if old <= primal:
            return W_old
    return W


def weight_shape(svm: ComponentSVM, n_weights: int) -> tuple:
    """Shape of one component's classifier on ``n_weights`` features x~."""
    return (n_weights,) if svm.n_classes == 2 else (svm.n_classes, n_weights)


def fit_classifiers(svm: ComponentSVM, Xt, y, labels, W):
    """The exact eta-step of every component k on the points with ``labels == k``; a
    component without points keeps ``W[k]``. Returns a new array."""
    W = np.array(W, dtype=np.float64, copy=True)
    for k in range(W.shape[0]):
        members = np.flatnonzero(labels == k)
        if len(members):
            W[k] = solve_eta(svm, Xt[members], y[members], None)
    return W


def close_empty(z_new, n_open: int):
    """After a z-step: ``(z, used)`` with the components still holding points renumbered
    0 .. K-1 in their order, and ``used`` the old numbers of those kept."""
    used = np.unique(z_new)
    relabel = np.full(n_open, -1, dtype=np.int64)
    relabel[used] = np.arange(len(used))
    return relabel[z_new], used


def component_means(X, z, n_components: int) -> np.ndarray:
    """The mu-step: the mean of the points of every component (all non-empty)."""
    mu = np.zeros((n_components, X.shape[1]))
    np.add.at(mu, z, X)
    mu /= np.bincount(z, minlength=n_components)[:, None]
    return mu
