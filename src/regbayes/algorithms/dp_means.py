"""One pass of DP-means (Kulis & Jordan 2012, Algorithm 1) on the algorithm protocol:
``dp_means_step(seed, state, data) -> (state, info)``; the clustering of the
"DPmeans+SVM" pipeline of paper 001, Table 1.

DP-means minimises (:func:`regbayes.potentials.svm_mixture.dp_means_objective`)

    sum_i D_phi(x_i, mu_{z_i}) + lambda K

by k-means-like passes: a point whose divergence to every mean exceeds lambda opens a
cluster at itself, otherwise it joins the nearest mean; then the means are recomputed.
The sequential pass is M2DPM's assignment kernel
(:func:`regbayes.algorithms.m2dpm_kernels.assignment_pass`) with the hinge switched off
(c = 0, s = 1), visiting the points in a random order drawn from ``seed``; a cluster
emptied during the pass is closed and ties keep the current cluster (both only lower the
objective). The loop starts (:func:`dp_means_init`) from one cluster at the global mean;
``info`` records the objective after the pass and the number of clusters. Once the
assignments stop changing the objective repeats exactly, so the driver's relative-change
test with any positive ``tol`` stops the run.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..potentials.bregman import DIVERGENCES, pairwise_divergence
from ..potentials.svm_mixture import dp_means_objective
from .m2dpm_kernels import assignment_pass
from .svm_mixture import close_empty, component_means


class DPMeansData(NamedTuple):
    """Points and constants; build with :func:`dp_means_data`."""

    X: np.ndarray  # (n, d)
    divergence: str
    cluster_penalty: float
    q_new: np.ndarray  # (n,) lambda, the cost of opening a cluster at each point


class DPMeansState(NamedTuple):
    labels: np.ndarray  # (n,) z, clusters 0 .. K-1
    means: np.ndarray  # (K, d)


class DPMeansInfo(NamedTuple):
    objective: float  # the DP-means objective after the pass
    n_components: int


def dp_means_data(X, divergence: str, cluster_penalty: float) -> DPMeansData:
    X = np.ascontiguousarray(X, dtype=np.float64)
    return DPMeansData(X, divergence, float(cluster_penalty), np.full(X.shape[0], float(cluster_penalty)))


def dp_means_init(data: DPMeansData) -> DPMeansState:
    """One cluster holding every point, at the global mean."""
    return DPMeansState(np.zeros(data.X.shape[0], dtype=np.int64), data.X.mean(axis=0, keepdims=True))


def dp_means_step(seed: int, state: DPMeansState, data: DPMeansData):
    """One DP-means pass (assign sequentially, then the means; module docstring)."""
    X = data.X
    n = X.shape[0]
    mu = state.means
    D = pairwise_divergence(data.divergence, X, mu)
    counts = np.bincount(state.labels, minlength=mu.shape[0]).astype(np.int64)
    order = np.random.default_rng(seed).permutation(n).astype(np.int64)
    z_new, seeds = assignment_pass(order, state.labels, counts, D, data.q_new, X, DIVERGENCES.index(data.divergence),
                                   1.0, X, np.ones(n), 0, np.zeros(n), 0.0, 1.0)
    if len(seeds):
        mu = np.vstack([mu, X[seeds]])
    z, used = close_empty(z_new, mu.shape[0])
    mu = component_means(X, z, len(used))
    info = DPMeansInfo(dp_means_objective(data.divergence, data.cluster_penalty, X, z, mu), len(used))
    return DPMeansState(z, mu), info


def dp_means_compile(state: DPMeansState, data: DPMeansData) -> None:
    """Compile (or load from numba's cache) the assignment kernel on two points."""
    m = min(2, data.X.shape[0])
    assignment_pass(np.arange(m, dtype=np.int64), np.zeros(m, dtype=np.int64), np.array([m], dtype=np.int64),
                    np.zeros((m, 1)), np.zeros(m), data.X[:m], 0, 1.0, data.X[:m], np.ones(m), 0, np.zeros(m), 0.0, 1.0)
