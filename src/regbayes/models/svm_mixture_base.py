"""Base of the mixtures of linear SVMs (:class:`~regbayes.models.m2dpm.M2DPM`,
:class:`~regbayes.models.dpmeans.DPMeansSVC`): their shared parameters, the preparation
of the data (labels, classifier features with the intercept of
:mod:`regbayes.potentials.svm_mixture`), the fitted components, and prediction.

New data (paper 001, eq. 31 without its label term). A test point's label is unknown, so
the hinge term of eq. 31 cannot be evaluated; it is assigned to the component whose mean
is closest in the Bregman divergence, ``k(x) = argmin_k D_phi(x, mu_k)`` (a test point
cannot open a component), and predicted by that component's classifier.
"""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..potentials.bregman import DIVERGENCES, check_divergence_domain, pairwise_divergence
from ..potentials.svm_mixture import ComponentSVM, classifier_features, coef_and_intercept, feature_shift, svm_labels
from ..validation import FLOAT64_LARGEST, check_feature_scale, check_finite_features
from .base import CHECKPOINT_CONSTRAINTS, RegBayesEstimator

POSITIVE = Interval(Real, 0, np.inf, closed="neither")  # positive and finite

SHARED_CONSTRAINTS = {
    "cluster_penalty": [POSITIVE],
    "C": [POSITIVE],
    "margin": [POSITIVE],
    "prior_scale": [POSITIVE],
    "divergence": [StrOptions(set(DIVERGENCES))],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "tol": [POSITIVE],
    "fit_intercept": ["boolean"],
    "random_state": ["random_state"],
    **CHECKPOINT_CONSTRAINTS,
}


class SVMMixtureClassifier(ClassifierMixin, RegBayesEstimator):
    """A mixture of linear SVMs: components with means ``cluster_centers_`` and one
    classifier each; new points go to the component with the nearest mean (module
    docstring). Subclasses fit the components."""

    _parameter_constraints: dict = dict(SHARED_CONSTRAINTS)

    # ------------------------------------------------------------------ fit helpers
    def _prepare(self, X, y):
        """Check parameters and data; set ``classes_``, ``feature_mean_`` (xbar) and
        ``intercept_scale_`` (R). Returns ``(X, x~, labels in the classifier's coding,
        ComponentSVM)``."""
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False)
        check_finite_features(X)
        check_feature_scale(X, type(self).__name__, largest=FLOAT64_LARGEST)
        codes = self._encode_labels(y)
        check_divergence_domain(self.divergence, X)
        mean, radius = feature_shift(X)
        self._store_settings(feature_mean=mean, intercept_scale=radius)
        n_classes = len(self.classes_)
        svm = ComponentSVM(n_classes, float(self.C), float(self.margin), float(self.prior_scale))
        return X, self._features(X), svm_labels(codes, n_classes), svm

    def _features(self, X):
        """Classifier features x~: ``(x - xbar, R)`` with an intercept, x otherwise."""
        if not self.fit_intercept:
            return classifier_features(X)
        return classifier_features(X, self.feature_mean_, self.intercept_scale_)

    def _store_components(self, z, mu, W, n_features):
        """Assignments, components and their classifiers (``coef_``, ``intercept_`` in the
        original coordinates; ``_W`` on x~)."""
        self.labels_ = z
        self.n_components_ = int(mu.shape[0])
        self.cluster_centers_ = mu
        self.component_sizes_ = np.bincount(z, minlength=self.n_components_)
        self._W = W
        shift = (self.feature_mean_, self.intercept_scale_) if self.fit_intercept else (None, 1.0)
        self.coef_, self.intercept_ = coef_and_intercept(W, n_features, *shift)

    # ------------------------------------------------------------------ prediction
    def _check_X(self, X):
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        check_finite_features(X)
        check_divergence_domain(self.divergence, X)
        return X

    def predict_component(self, X):
        """Component of each row: ``argmin_k D_phi(x, mu_k)`` (the data term of eq. 31).

        With ``divergence="kl"`` a row can be at infinite divergence from every mean (a
        positive count where every mean is zero); it then goes to component 0."""
        return self._component(self._check_X(X))

    def _component(self, X):
        return np.argmin(pairwise_divergence(self.divergence, X, self.cluster_centers_), axis=1)

    def decision_function(self, X):
        """Discriminant of each row's component: (n,) for two classes (positive means
        ``classes_[1]``), (n, n_classes) otherwise."""
        X = self._check_X(X)
        k = self._component(X)
        coef, intercept = self.coef_[k], self.intercept_[k]
        if self.coef_.ndim == 2:
            return np.einsum("ij,ij->i", coef, X) + intercept
        return np.einsum("imj,ij->im", coef, X) + intercept

    def predict(self, X):
        """Label by the classifier of each row's component."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]
