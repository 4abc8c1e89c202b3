"""``DPMeansSVC``: DP-means clustering, then one linear SVM per cluster (the
"DPmeans+SVM" pipeline of paper 001, Table 1).

DP-means (Kulis & Jordan 2012, Algorithm 1) minimises

    sum_i D_phi(x_i, mu_{z_i}) + lambda K

by k-means-like passes: a point whose divergence to every mean exceeds lambda opens a
cluster at itself, otherwise it joins the nearest mean; then the means are recomputed.
With ``divergence="euclidean"`` D_phi is ``||x - mu||^2 / 2`` (so Kulis and Jordan's
lambda, which is compared with ``||x - mu||^2``, is twice ``cluster_penalty``); with
``"kl"`` it is the generalized KL (Jiang, Kulis & Jordan 2012).

The clusters are then fixed and each gets the classifier of M2DPM's eta-step, the exact
minimiser of ``||eta||^2 / (2 nu^2) + 2c sum_{i in k} hinge_i(eta)`` (binary hinge for two
classes, Crammer-Singer otherwise; intercept and its prior as in :class:`M2DPM`). So
``C``, ``margin``, ``prior_scale`` mean what they mean for M2DPM, and the two estimators
differ only in whether the clusters see the labels. New points go to the nearest mean.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ..potentials.bregman import DIVERGENCES, divergence_to, pairwise_divergence
from ..algorithms.m2dpm_kernels import assignment_pass
from .m2dpm import MixtureOfSVMsMixin


class DPMeansSVC(MixtureOfSVMsMixin, ClassifierMixin, BaseEstimator):
    """DP-means clusters, then an independent linear SVM in each cluster.

    Parameters
    ----------
    cluster_penalty : float, default=10.0
        lambda, the cost of opening a cluster (against ``D_phi``).
    C, margin, prior_scale : float, default=1.0
        c, l and nu of each cluster's SVM (as in :class:`M2DPM`).
    divergence : {"euclidean", "kl"}, default="euclidean"
    max_iter : int, default=100
        Maximum DP-means passes.
    tol : float, default=1e-3
        Stop when the relative change of the DP-means objective is below ``tol`` (or the
        assignments no longer change).
    fit_intercept : bool, default=True
    random_state : None, int or numpy Generator
        Seeds the visiting order of the passes.

    Attributes
    ----------
    classes_, labels_, n_components_, cluster_centers_, component_sizes_, coef_,
    intercept_ : as in :class:`M2DPM`
    objective_ : list of float, the DP-means objective after each pass
    n_iter_ : int
    """

    def __init__(
        self,
        cluster_penalty=10.0,
        C=1.0,
        margin=1.0,
        prior_scale=1.0,
        divergence="euclidean",
        max_iter=100,
        tol=1e-3,
        fit_intercept=True,
        random_state=None,
    ):
        self.cluster_penalty = cluster_penalty
        self.C = C
        self.margin = margin
        self.prior_scale = prior_scale
        self.divergence = divergence
        self.max_iter = max_iter
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _check_params(self):
        self._check_shared_params()

    def _dp_means(self, X, rng):
        """Kulis & Jordan's DP-means from one cluster at the global mean.

        The sequential pass is M2DPM's assignment kernel with the hinge switched off
        (c = 0, s = 1): a point joins the nearest open mean unless every divergence
        exceeds lambda, when it opens a cluster at itself; a cluster emptied during the
        pass is closed and ties keep the current cluster (both only lower the objective).
        """
        lam = float(self.cluster_penalty)
        n = X.shape[0]
        code = DIVERGENCES.index(self.divergence)
        z = np.zeros(n, dtype=np.int64)
        mu = X.mean(axis=0, keepdims=True)
        q_new = np.full(n, lam)
        no_labels, no_scale = np.ones(n), np.zeros(n)
        objective = []
        n_iter = 0
        for _ in range(int(self.max_iter)):
            n_iter += 1
            D = pairwise_divergence(self.divergence, X, mu)
            counts = np.bincount(z, minlength=mu.shape[0]).astype(np.int64)
            order = rng.permutation(n).astype(np.int64)
            z_new, seeds = assignment_pass(order, z, counts, D, q_new, X, code, 1.0, X, no_labels, 0, no_scale,
                                           0.0, 1.0)
            if len(seeds):
                mu = np.vstack([mu, X[seeds]])
            used = np.unique(z_new)
            relabel = np.full(mu.shape[0], -1, dtype=np.int64)
            relabel[used] = np.arange(len(used))
            z_prev, z = z, relabel[z_new]
            mu = np.zeros((len(used), X.shape[1]))
            np.add.at(mu, z, X)
            mu /= np.bincount(z, minlength=len(used))[:, None]
            value = float(sum(divergence_to(self.divergence, X[z == k], mu[k]).sum() for k in range(len(used))))
            objective.append(value + lam * len(used))
            if n_iter > 1 and np.array_equal(z_prev, z):
                break
            if len(objective) > 1 and abs(objective[-2] - objective[-1]) <= float(self.tol) * abs(objective[-2]):
                break
        return z, mu, objective, n_iter

    def fit(self, X, y):
        """Cluster X by DP-means, then fit the SVM of every cluster."""
        X, yk = self._encode(X, y)
        rng = np.random.default_rng(self.random_state)
        z, mu, objective, n_iter = self._dp_means(X, rng)
        Xt = self._features(X)
        W = []
        for k in range(mu.shape[0]):
            members = np.flatnonzero(z == k)
            W.append(self._solve_eta(Xt[members], yk[members], None))
        self._store_fit(z, mu, np.stack(W), objective, n_iter, X.shape[1])
        return self
