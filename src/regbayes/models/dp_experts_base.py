"""Base of the Dirichlet-process mixtures of linear experts: each component ``k`` has a
Gaussian model of the features with a collapsed Normal–inverse-Wishart prior
(:mod:`regbayes.potentials.niw`) and a linear expert on the inputs ``x~ = (x - xbar, s)``
(paper 001, "Gibbs Infinite SVMs", eq. 11; Shahbaba & Neal 2009 for multinomial-logit
experts).

The base owns what such an estimator does around its sampler: the shared parameters and
their checks, the NIW prior resolved from the data, the experts' inputs (``xbar`` the
training mean, ``s = intercept_scaling`` by default the RMS distance of the rows from it,
so that an intercept ``b`` with ``eta = (w, b / s)`` has the prior sd of ``w^T (x - xbar)``
at a typical row), the starting assignments, the kept draws as fitted arrays, and
prediction.

Prediction. For each kept draw a test point joins component ``k`` with probability
``∝ n_k t(x | X_k)`` (the CRP times the Student-t predictive) or a new component with
probability ``∝ alpha t(x | prior)``; a new component's expert is a prior draw, whose
class probabilities average to ``1 / M`` by the symmetry of the prior. ``predict_proba``
is the expert's class probabilities (:meth:`DPExpertsClassifier._expert_proba`) averaged
over these weights and over the draws; ``predict`` takes its argmax.
"""
from __future__ import annotations

import math
import time
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..potentials import niw
from ..rng import host_seeds
from ..validation import FLOAT64_LARGEST, check_feature_scale, check_finite_features
from .base import CHECKPOINT_CONSTRAINTS, RegBayesEstimator

POSITIVE = Interval(Real, 0, None, closed="neither")

#: the parameters every DP mixture of experts has
DP_CONSTRAINTS = {
    "alpha": [POSITIVE],
    "prior_scale": [POSITIVE],
    "n_iter": [Interval(Integral, 1, None, closed="left")],
    "n_warmup": [Interval(Integral, 0, None, closed="left")],
    "n_auxiliary": [Interval(Integral, 1, None, closed="left")],
    "init": [StrOptions({"kmeans", "sequential"})],
    "init_components": [Interval(Integral, 1, None, closed="left")],
    "niw_mean": ["array-like", None],
    "niw_kappa": [POSITIVE, None],
    "niw_dof": [POSITIVE, None],
    "niw_covariance": [POSITIVE, "array-like"],
    "intercept_scaling": [POSITIVE, None],
    "random_state": ["random_state"],
    "progress": ["boolean"],
    **CHECKPOINT_CONSTRAINTS,
}


class DPExpertsClassifier(ClassifierMixin, RegBayesEstimator):
    """A DP mixture of linear experts (module docstring); subclasses run the sampler and
    define :meth:`_expert_proba`."""

    _parameter_constraints: dict = dict(DP_CONSTRAINTS)

    # ------------------------------------------------------------------ fit helpers
    def _prepare(self, X, y):
        """Check parameters and data; set ``classes_``, ``prior_``, ``x_offset_`` and
        ``intercept_scaling_``. Returns ``(X, integer class codes)``."""
        self._validate_params()
        X, y = self._validate_X(X, True, y)
        check_feature_scale(X, type(self).__name__, largest=FLOAT64_LARGEST)
        self._check_data_params(X.shape[1])
        codes = self._encode_labels(y)
        self.prior_ = self._prior(X)
        self.x_offset_ = X.mean(axis=0)
        radius = math.sqrt(float(np.mean(np.sum((X - self.x_offset_) ** 2, axis=1))))
        self.intercept_scaling_ = float(self.intercept_scaling or (radius if radius > 0 else 1.0))
        return X, codes

    def _check_data_params(self, d):
        """The checks that need the data or compare parameters."""
        if self.n_warmup >= self.n_iter:
            raise ValueError(f"n_warmup={self.n_warmup} must be smaller than n_iter={self.n_iter} "
                             f"(no draws would be kept)")
        if self.niw_dof is not None and self.niw_dof <= d + 1:
            raise ValueError(f"niw_dof must exceed n_features + 1 = {d + 1}, got {self.niw_dof}")

    def _prior(self, X):
        """The NIW prior of the components' features, defaults resolved from ``X``."""
        try:
            return niw.default_prior(X, self.niw_kappa, self.niw_dof, self.niw_covariance, self.niw_mean)
        except ValueError as exc:  # name the estimator's parameter
            message = str(exc).replace("the NIW covariance", "niw_covariance").replace("the NIW mean", "niw_mean")
            raise ValueError(message) from None

    def _validate_X(self, X, reset, y=None):
        kwargs = dict(accept_sparse="csr", dtype=[np.float64, np.float32])
        if reset:
            X, y = validate_data(self, X, y, **kwargs)
        else:
            X = validate_data(self, X, reset=False, **kwargs)
        check_finite_features(X)
        X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
        return (X, y) if reset else X

    def _design(self, X):
        """The experts' inputs ``x~ = (x - xbar, s)``."""
        return np.hstack([X - self.x_offset_, np.full((X.shape[0], 1), self.intercept_scaling_)])

    def _initial_assignments(self, X, seed):
        """k-means labels (``init="kmeans"``) or all -1 (the first sweep seats the rows)."""
        n = X.shape[0]
        if self.init != "kmeans" or n <= 1:
            return np.full(n, -1, np.int64)
        from sklearn.cluster import KMeans

        with warnings.catch_warnings():  # fewer distinct rows than clusters: fine here
            warnings.simplefilter("ignore", ConvergenceWarning)
            k = min(self.init_components, n)
            return KMeans(k, n_init=1, random_state=seed).fit_predict(X).astype(np.int64)

    def _store_draws(self, result, d):
        """Stack the kept draws (counts, NIW means and factors, experts) over the largest
        slot count used; set ``component_sizes_``, ``component_active_``, ``labels_``,
        ``n_components_`` and ``n_components_trace_``. Returns the experts (S, K, L, D)."""
        draws = result.draws
        K, S, L = max(len(s.counts) for s in draws), len(draws), draws[0].eta.shape[1]
        eta = np.zeros((S, K, L, d + 1))
        counts = np.zeros((S, K), np.int64)
        means = np.broadcast_to(self.prior_.mean, (S, K, d)).copy()
        chols = np.broadcast_to(self.prior_.chol, (S, K, d, d)).copy()
        for s, kept in enumerate(draws):
            k = len(kept.counts)
            counts[s, :k], means[s, :k], chols[s, :k], eta[s, :k] = kept
        self.component_sizes_ = counts
        self.component_active_ = counts > 0
        self._expert_samples = eta
        self._component_means = means
        self._component_chols = chols
        z = result.state.z
        _, first = np.unique(z, return_index=True)
        order = z[np.sort(first)]
        relabel = np.empty(result.state.capacity, np.int64)
        relabel[order] = np.arange(len(order))
        self.labels_ = relabel[z]
        self.n_components_ = int(len(order))
        self.n_components_trace_ = np.asarray(result.trace["n_components"], np.int64)
        return eta

    def _start(self, X):
        """The fit's two random streams from ``random_state``: the starting assignments
        (:meth:`_initial_assignments`) and the sampler's seed. Returns ``(z0, seed,
        seconds spent on z0)``."""
        seed_kmeans, seed_run = (int(s) for s in host_seeds(self._fit_key(), 2))
        start = time.perf_counter()
        z0 = self._initial_assignments(X, seed_kmeans)
        return z0, seed_run, time.perf_counter() - start

    def _run_trace(self, result, init_seconds, fields):
        """``trace_``: the per-iteration ``fields`` of the run, ``n_components``,
        ``wall_time`` and the totals ``compile_seconds``, ``init_seconds``,
        ``sampling_seconds``."""
        return {
            **{name: result.trace[name] for name in fields if name in result.trace},
            "n_components": self.n_components_trace_,
            "wall_time": result.wall_time,
            "compile_seconds": result.compile_seconds,
            "init_seconds": init_seconds,
            "sampling_seconds": result.sampling_seconds,
        }

    def _coef_and_intercept(self, eta):
        """Experts on ``x~`` to weights and intercepts in the original coordinates:
        ``f(x) = coef x + intercept``."""
        d = eta.shape[-1] - 1
        weights = eta[..., :d]
        return weights, self.intercept_scaling_ * eta[..., d] - weights @ self.x_offset_

    # ------------------------------------------------------------------ predict
    def _component_weights(self, X, s):
        """(m, K_s + 1) predictive component probabilities of draw ``s`` (last: new)."""
        active = np.flatnonzero(self.component_active_[s])
        logw = np.empty((X.shape[0], len(active) + 1))
        for j, k in enumerate(active):
            n_k = self.component_sizes_[s, k]
            post = niw.NIW(self._component_means[s, k], self.prior_.kappa + n_k, self.prior_.dof + n_k,
                           self._component_chols[s, k])
            logw[:, j] = math.log(n_k) + niw.log_predictive(post, X)
        logw[:, -1] = math.log(self.alpha) + niw.log_predictive(self.prior_, X)
        logw -= logw.max(axis=1, keepdims=True)
        w = np.exp(logw)
        return active, w / w.sum(axis=1, keepdims=True)

    def _expert_proba(self, design, eta):
        """(m, n_classes) class probabilities of one expert ``eta`` (L, D) on inputs
        ``design`` (m, D)."""
        raise NotImplementedError

    def predict_proba(self, X, max_draws=100):
        """Class probabilities: each expert's, averaged over each test point's predictive
        component weights and over at most ``max_draws`` kept draws (evenly spaced)."""
        check_is_fitted(self, "_expert_samples")
        X = self._validate_X(X, False)
        design = self._design(X)
        n_classes = len(self.classes_)
        S = self._expert_samples.shape[0]
        index = np.unique(np.linspace(0, S - 1, min(S, max_draws)).astype(int))
        proba = np.zeros((X.shape[0], n_classes))
        for s in index:
            active, w = self._component_weights(X, s)
            for j, k in enumerate(active):
                proba += w[:, j : j + 1] * self._expert_proba(design, self._expert_samples[s, k])
            proba += w[:, -1:] / n_classes
        return proba / len(index)

    def predict(self, X):
        """The class with the largest :meth:`predict_proba`."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.non_deterministic = False
        return tags
