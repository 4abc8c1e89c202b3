"""``DPMeansSVC``: DP-means clustering, then one linear SVM per cluster (the
"DPmeans+SVM" pipeline of paper 001, Table 1).

DP-means (Kulis & Jordan 2012, Algorithm 1) minimises

    sum_i D_phi(x_i, mu_{z_i}) + lambda K

by k-means-like passes: a point whose divergence to every mean exceeds lambda opens a
cluster at itself, otherwise it joins the nearest mean; then the means are recomputed.
With ``divergence="euclidean"`` D_phi is ``||x - mu||^2 / 2`` (so Kulis and Jordan's
lambda, which is compared with ``||x - mu||^2``, is twice ``cluster_penalty``); with
``"kl"`` it is the generalized KL (Jiang, Kulis & Jordan 2012).

One pass is :func:`regbayes.algorithms.dp_means.dp_means_step`; the driver
(:func:`regbayes.inference.run`) runs the passes until the objective's relative change is
below ``tol``. The clusters are then fixed and each gets the classifier of M2DPM's
eta-step (:func:`regbayes.algorithms.svm_mixture.solve_eta`), the exact minimiser of
``||eta||^2 / (2 nu^2) + 2c sum_{i in k} hinge_i(eta)`` (binary hinge for two classes,
Crammer-Singer otherwise; intercept and its prior as in
:mod:`regbayes.potentials.svm_mixture`). So ``C``, ``margin``, ``prior_scale`` mean what
they mean for M2DPM, and the two estimators differ only in whether the clusters see the
labels. New points go to the nearest mean.
"""
from __future__ import annotations

import numpy as np

from ..algorithms.dp_means import dp_means_compile, dp_means_data, dp_means_init, dp_means_step
from ..algorithms.svm_mixture import fit_classifiers, weight_shape
from ..inference import Algorithm, run
from ..validation import scale_errors
from .svm_mixture_base import SVMMixtureClassifier


class DPMeansSVC(SVMMixtureClassifier):
    """DP-means clusters, then an independent linear SVM in each cluster.

    Parameters
    ----------
    cluster_penalty : float, default=10.0
        lambda, the cost of opening a cluster (against ``D_phi``).
    C, margin, prior_scale : float, default=1.0
        c, l and nu of each cluster's SVM (as in :class:`~regbayes.models.m2dpm.M2DPM`).
    divergence : {"euclidean", "kl"}, default="euclidean"
    max_iter : int, default=100
        Maximum DP-means passes; a run that ends without converging warns with
        :class:`~sklearn.exceptions.ConvergenceWarning`.
    tol : float, default=1e-3
        Stop when the relative change of the DP-means objective is below ``tol`` (it is 0
        once the assignments no longer change).
    fit_intercept : bool, default=True
    random_state : None, int or RandomState
        Seeds the fit's one key, from which the visiting orders of the passes are drawn.
    checkpoint : str or path-like, default=None
        A file where the fit writes a checkpoint, atomically, every ``checkpoint_every``
        seconds (0: every iteration); a fit interrupted and started again with the same
        arguments and data continues from it to the fitted attributes of an uninterrupted
        fit (:meth:`regbayes.models.base.RegBayesEstimator._host_checkpoint`).
    checkpoint_every : float, default=60.0

    Attributes
    ----------
    classes_, labels_, n_components_, cluster_centers_, component_sizes_, coef_,
    intercept_, feature_mean_, intercept_scale_ : as in :class:`~regbayes.models.m2dpm.M2DPM`
    objective_ : list of float, the DP-means objective after each pass
    n_iter_ : int, passes run
    converged_ : bool, whether the passes met ``tol`` within ``max_iter``
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
        checkpoint=None,
        checkpoint_every=60.0,
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
        self.checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every

    def fit(self, X, y):
        """Cluster X by DP-means, then fit the SVM of every cluster."""
        X, Xt, yk, svm = self._prepare(X, y)
        data = dp_means_data(X, self.divergence, self.cluster_penalty)
        algorithm = Algorithm(dp_means_step, "DPMeansSVC", compile=dp_means_compile)
        result = run(algorithm, dp_means_init(data), data, self._fit_key(), n_iter=self.max_iter, tol=self.tol,
                     checkpoint=self._host_checkpoint())
        z, mu = result.state
        with scale_errors(X, "DPMeansSVC"):
            W = fit_classifiers(svm, Xt, yk, z, np.zeros((mu.shape[0], *weight_shape(svm, Xt.shape[1]))))
        self._store_components(z, mu, W, X.shape[1])
        self.objective_ = [float(v) for v in result.trace["objective"]]
        self.n_iter_ = result.n_iter
        self.converged_ = bool(result.converged)
        return self
