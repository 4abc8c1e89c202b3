"""One iteration of M2DPM, max-margin DP-means (paper 001, Algorithm 1), on the algorithm
protocol: ``m2dpm_step(seed, state, data) -> (state, info)``.

Algorithm 1 minimises eq. 35 (:func:`regbayes.potentials.svm_mixture.sva_objective`)

    L_sv(z, mu, eta) = sum_k ||eta_k||^2 / (2 nu^2) + 2c sum_i hinge_i(eta_{z_i})
                       + s sum_i D_phi(x_i, mu_{z_i}) + lambda K

by a k-means-like loop that never increases it (Theorem 1). One iteration:

1. z-step, sequentially over the points in a random order (drawn from ``seed``):
   ``z_i <- argmin_k Q_i(k)`` with ``Q_i(k) = s D_phi(x_i, mu_k) + 2c hinge_i(eta_k)`` for
   an existing component (eq. 31) and ``Q_i(new) = lambda + min_eta [2c hinge_i(eta) +
   ||eta||^2 / (2 nu^2)]`` (eq. 32) for a new one, which opens at ``mu = x_i`` with the
   one-example classifier. A component emptied during the pass is closed (rejoining it
   would cost lambda again); ties keep the current component. Each move lowers eq. 35 by
   at least the difference of the two costs. The numba kernel
   :func:`regbayes.algorithms.m2dpm_kernels.assignment_pass` does the pass.
2. mu-step: ``mu_k <- mean of the points of component k``.
3. eta-step: ``eta_k <- argmin ||eta||^2 / (2 nu^2) + 2c sum_{i in k} hinge_i(eta)``,
   exactly (:func:`regbayes.algorithms.svm_mixture.solve_eta`). It depends on a
   component's members only, so a component whose members did not change keeps its
   (already exact) classifier: the state carries the solutions of the last iteration,
   keyed by member set.

The loop starts (:func:`m2dpm_init`) from one component holding all points, its mean and
exact classifier. ``info`` records eq. 35 after the iteration and the number of
components; the driver runs the steps until eq. 35's relative change is below ``tol``.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..potentials.bregman import DIVERGENCES, pairwise_divergence
from ..potentials.svm_mixture import ComponentSVM, hinge_matrix, one_example, one_example_weights, sva_objective
from .m2dpm_kernels import assignment_pass
from .svm_mixture import close_empty, component_means, fit_classifiers, solve_eta


class M2DPMData(NamedTuple):
    """Data and constants of eq. 35; build with :func:`m2dpm_data`."""

    X: np.ndarray  # (n, d) points, the divergence's argument
    Xt: np.ndarray  # (n, p) classifier features x~
    y: np.ndarray  # labels in the classifier's coding
    svm: ComponentSVM
    divergence: str
    s: float
    cluster_penalty: float
    q_new: np.ndarray  # (n,) Q_i(new) of eq. 32
    seed_scale: np.ndarray  # (n,) scale of the one-example classifier at each point


class M2DPMState(NamedTuple):
    labels: np.ndarray  # (n,) z, components 0 .. K-1
    means: np.ndarray  # (K, d) mu
    weights: np.ndarray  # (K, [M,] p) eta on x~
    solutions: dict  # member set (bytes of the sorted indices) -> exact classifier


class M2DPMInfo(NamedTuple):
    objective: float  # eq. 35 after the iteration
    n_components: int


def m2dpm_data(X, Xt, y, svm: ComponentSVM, divergence: str, s: float, cluster_penalty: float) -> M2DPMData:
    """The step's data, with the one-example costs of eq. 32 computed once."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    Xt = np.ascontiguousarray(Xt, dtype=np.float64)
    scale, cost = one_example(svm, Xt)
    return M2DPMData(X, Xt, y, svm, divergence, float(s), float(cluster_penalty),
                     float(cluster_penalty) + cost, scale)


def m2dpm_init(data: M2DPMData) -> M2DPMState:
    """Algorithm 1's start: one component holding every point, its mean and its exact
    classifier. The same for every restart."""
    n = data.X.shape[0]
    W0 = solve_eta(data.svm, data.Xt, data.y, None)
    return M2DPMState(np.zeros(n, dtype=np.int64), data.X.mean(axis=0, keepdims=True), W0[None].copy(),
                      {np.arange(n).tobytes(): W0.copy()})


def m2dpm_objective(state: M2DPMState, data: M2DPMData) -> float:
    """Eq. 35 at the state."""
    return sva_objective(data.svm, data.divergence, data.s, data.cluster_penalty, data.X, data.Xt, data.y,
                         state.labels, state.means, state.weights)


def m2dpm_step(seed: int, state: M2DPMState, data: M2DPMData):
    """One iteration of Algorithm 1 (z-, mu- and eta-step; module docstring). The inputs
    are not modified."""
    X, Xt, y, svm = data.X, data.Xt, data.y, data.svm
    n = X.shape[0]
    mu, W = state.means, state.weights
    K0 = mu.shape[0]
    # z-step (eqs. 31-32), sequential, in a random order.
    Q0 = data.s * pairwise_divergence(data.divergence, X, mu) + 2.0 * float(svm.C) * hinge_matrix(svm, Xt, W, y)
    counts = np.bincount(state.labels, minlength=K0).astype(np.int64)
    order = np.random.default_rng(seed).permutation(n).astype(np.int64)
    z_new, seeds = assignment_pass(
        order, state.labels, counts, Q0, data.q_new, X, DIVERGENCES.index(data.divergence), data.s, Xt, y,
        0 if svm.n_classes == 2 else svm.n_classes, data.seed_scale, float(svm.C), float(svm.margin),
    )
    if len(seeds):
        mu = np.vstack([mu, X[seeds]])
        W = np.concatenate([W, one_example_weights(svm, Xt[seeds], y[seeds], data.seed_scale[seeds])])
    z, used = close_empty(z_new, mu.shape[0])
    W = W[used]  # a copy: the state passed in stays as it was
    # mu-step.
    mu = component_means(X, z, len(used))
    # eta-step, exact per component; unchanged members keep their classifier.
    solved = {}
    for k in range(len(used)):
        members = np.flatnonzero(z == k)
        key = members.tobytes()
        if key in state.solutions:
            W[k] = state.solutions[key]
        else:
            W[k] = solve_eta(svm, Xt[members], y[members], W[k])
        solved[key] = W[k].copy()
    new = M2DPMState(z, mu, W, solved)
    return new, M2DPMInfo(m2dpm_objective(new, data), len(used))


def m2dpm_compile(state: M2DPMState, data: M2DPMData) -> None:
    """Compile (or load from numba's cache) the z-step kernel for the data's types, on two
    points, so that the driver counts it as compilation."""
    m = min(2, data.X.shape[0])
    assignment_pass(
        np.arange(m, dtype=np.int64), np.zeros(m, dtype=np.int64), np.array([m], dtype=np.int64), np.zeros((m, 1)),
        np.zeros(m), data.X[:m], 0, 1.0, data.Xt[:m], data.y[:m],
        0 if data.svm.n_classes == 2 else data.svm.n_classes, np.zeros(m), 1.0, 1.0,
    )


def cell_classifiers(state: M2DPMState, data: M2DPMData) -> np.ndarray:
    """Exact eta-step of every component on its nearest-mean cell of the training points
    (``refit_cells``), ``argmin ||eta||^2 / (2 nu^2) + 2c sum_{i : k(x_i) = k} hinge_i(eta)``
    with ``k(x) = argmin_k D_phi(x, mu_k)``; a component with an empty cell keeps its
    classifier."""
    cells = np.argmin(pairwise_divergence(data.divergence, data.X, state.means), axis=1)
    return fit_classifiers(data.svm, data.Xt, data.y, cells, state.weights)
