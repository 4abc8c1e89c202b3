"""``InfiniteLatentSVC``: the infinite latent SVM (iLSVM, paper 002, section 4.2, Lemma 12,
Appendix D.2, Algorithm 3)."""
from __future__ import annotations

from numbers import Real

import jax
import numpy as np
from sklearn.base import ClassifierMixin, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from ..algorithms.ilsvm import DUAL_MAX_ITER, classifier_features
from ..algorithms.ilsvm_classifier import select_classifier_C
from ..core.duals import crammer_singer_dual
from ..rng import host_seeds
from ..validation import check_finite_features
from .latent_base import LATENT_CONSTRAINTS, POSITIVE, LatentFeatureModel, data_digest


class InfiniteLatentSVC(ClassifierMixin, TransformerMixin, LatentFeatureModel):
    """Infinite latent SVM: binary latent features with an IBP prior, learned together with
    a max-margin classifier on them by RegBayes.

    The latent features explain the inputs through the linear-Gaussian IBP model
    (``x_n ~ N(W z_n, sigma_n0^2 I)``, ``w_dk ~ N(0, sigma_0^2)``, ``Z ~ IBP(alpha)``), and
    the classifier ``eta ~ N(0, I)`` acts on them through the effective discriminant
    (eq. 10) ``f(y, x_n) = E_q[eta_y^T z_n] = mu_y^T psi_n``. The posterior minimises
    ``KL(q || p(Z, eta, W, D)) + C sum_n max_y (l_n(y) - f(y_n, x_n) + f(y, x_n))`` (eq. 12,
    0/1 cost), so the margin shapes the features. Fitted by truncated mean field,
    Algorithm 3 (:mod:`regbayes.algorithms.ilsvm`): mean-field phases over ``q(nu)``,
    ``q(W)``, ``q(Z)`` with the margin term in the feature logit (eq. 33, corrected), and
    the Crammer-Singer dual (eq. 34 with Lemma 12's cost) for ``q(eta) = N(mu, I)``; two
    classes take the same multi-class path.

    The classifier (``refit_classifier=True``, the default). The fit's features of a
    training row carry the margin's tilt towards its label; a new row's cannot. So after
    the fit the training rows' features are inferred again as a new row's are, and the
    Crammer-Singer classifier of ``coef_`` is fitted to them with its own weight
    ``classifier_C`` (:mod:`regbayes.algorithms.ilsvm_classifier`). The margin still
    shapes the features through ``q(W)`` and ``q(nu)``. ``refit_classifier=False`` keeps
    Algorithm 3's classifier, fitted at ``C`` to the fit's own features.

    New rows (``predict``, ``decision_function``, ``transform``). By default the features of
    a new row are inferred inductively: ``q(W)`` and ``q(nu)`` fixed, the row's ``psi``
    updated without a margin term to convergence
    (:func:`regbayes.algorithms.ilsvm.infer_features`). The paper's protocol (section 4.2,
    "Testing") is transductive: ``fit(X, y, X_unlabeled=X_test)`` infers the test rows'
    features jointly with the training rows (they inform ``q(W)`` and ``q(nu)`` but carry
    no margin constraint). The rule: a matrix passed to ``predict``, ``decision_function``
    or ``transform`` that equals ``X_unlabeled`` (same shape, same values) gets those
    jointly inferred features, row for row; any other matrix (a subset or reordering
    included) is inferred inductively.

    Parameters
    ----------
    C : float, default=10.0
        Weight of the hinge loss in the fit (the regularisation constant of eq. 12). The
        margin term of a feature's logit is of order ``C |mu|`` and competes with
        likelihood terms of order ``D |W_.k|^2 / noise_variance``; with C = 1 the features
        are nearly those of the unsupervised model, and the margin shapes them only at
        larger C. A large C can make the first outer iterations oscillate
        (:mod:`regbayes.algorithms.ilsvm`) and the dual steps slow; choose C by
        cross-validation, as the paper does.
    refit_classifier : bool, default=True
        Fit the final classifier to the training rows' features inferred as a new row's
        are, without the margin term (as ``MedLDA(refit_classifier=True)`` does with topic
        proportions); False keeps Algorithm 3's classifier on the fit's own features.
    classifier_C : float or "cv", default="cv"
        Weight of the hinge loss of the final classifier with ``refit_classifier=True``;
        ``"cv"`` picks it from ``(0.01, 0.1, 1, 10)`` by 3-fold stratified
        cross-validation of accuracy on the training rows' features (dual solves only;
        1.0 when a class has fewer than 3 rows). Ignored with ``refit_classifier=False``, whose
        classifier is the fit's (weight ``C``).
    include_inputs : bool, default=False
        Add the raw inputs beside the latent features in the discriminant (footnote 8):
        ``f(y, x_n) = mu_y^T (psi_n, x_n)``.
    dual_tol : float, default=1e-2
        Relative duality gap of the final Crammer-Singer dual (eq. 34) on the fitted
        features, ``primal - dual <= dual_tol * primal``, and the tightest gap of the dual
        steps within the outer iterations (:mod:`regbayes.algorithms.ilsvm`).
    fit_intercept : bool, default=True
        Append a constant 1 to the classifier's features, so that each class has an
        intercept (penalised with ``mu``, as in liblinear). Eq. 10 has none; without it a
        class boundary must pass through the origin of the feature means, which costs
        accuracy whenever no feature is on for every row.
    truncation, alpha, n_iter, n_inner, tol, inner_tol, noise_variance, loading_variance,
    estimate_variances, random_state, progress :
        As in :class:`~regbayes.models.ibp_features.IBPFeatures`; ``tol`` applies to the
        RegBayes objective of eq. 12 (``objective_``).
    checkpoint : str or path-like, default=None
        A file where the fit writes a checkpoint, atomically, every ``checkpoint_every``
        seconds (0: every iteration); a fit interrupted and started again with the same
        arguments and data continues from it to the fitted attributes of an uninterrupted
        fit (:meth:`regbayes.models.base.RegBayesEstimator._host_checkpoint`).
    checkpoint_every : float, default=60.0

    Attributes
    ----------
    classes_ : (n_classes,) labels
    coef_ : (n_classes, K [+ n_features] [+ 1]) ``mu``, the mean of ``q(eta)``, one row per
        class, over ``[psi, x (include_inputs), 1 (fit_intercept)]``
    dual_coef_ : (n_train, n_classes) ``omega`` of the final classifier's dual (eq. 34)
    classifier_C_ : float, the weight of the final classifier's hinge (``C`` with
        ``refit_classifier=False``)
    classifier_cv_scores_ : (4,) mean fold accuracies of the ``classifier_C="cv"``
        grid, or None
    components_, component_variances_, sticks_, n_active_features_, noise_variance_,
    loading_variance_, elbo_, n_iter_, converged_, trace_ :
        As in :class:`~regbayes.models.ibp_features.IBPFeatures`.
    objective_ : (n_iter_ + 1,) the RegBayes objective at the start and after every
        outer iteration
    duality_gap_ : float, the duality gap of the final classifier's dual (at most
        ``dual_tol`` relative)
    unlabeled_features_ : (n_unlabeled, K) the jointly inferred ``psi`` of ``X_unlabeled``
        (0 rows without it)
    """

    _parameter_constraints: dict = {**LATENT_CONSTRAINTS, "C": [POSITIVE], "include_inputs": ["boolean"],
                                    "fit_intercept": ["boolean"], "dual_tol": [Interval(Real, 0, 1, closed="neither")],
                                    "refit_classifier": ["boolean"],
                                    "classifier_C": [POSITIVE, StrOptions({"cv"})]}

    def __init__(self, C=10.0, truncation=50, alpha=1.0, n_iter=20, n_inner=10, tol=1e-4, inner_tol=1e-3,
                 noise_variance=None, loading_variance=1.0, estimate_variances=False, include_inputs=False,
                 fit_intercept=True, dual_tol=1e-2, refit_classifier=True, classifier_C="cv", random_state=None,
                 progress=False, checkpoint=None, checkpoint_every=60.0):
        super().__init__(truncation, alpha, n_iter, n_inner, tol, inner_tol, noise_variance, loading_variance, estimate_variances,
                         random_state, progress, checkpoint, checkpoint_every)  # LatentParameters' order
        self.C = C
        self.include_inputs = include_inputs
        self.fit_intercept = fit_intercept
        self.dual_tol = dual_tol
        self.refit_classifier = refit_classifier
        self.classifier_C = classifier_C

    def fit(self, X, y, X_unlabeled=None):
        """Fit on labelled rows ``X``, ``y`` (any labels, two classes or more); rows of
        ``X_unlabeled`` (same features) join the feature model without a margin
        constraint (the transductive protocol; class docstring). Nothing passed is modified."""
        self._validate_params()
        X, y = validate_data(self, X, y, accept_sparse=["csr", "csc", "coo"], dtype=np.float64)
        X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
        codes = self._encode_labels(y)
        rows = X
        extra = None
        if X_unlabeled is not None:
            extra = check_array(X_unlabeled, accept_sparse=["csr", "csc", "coo"], dtype=np.float64, input_name="X_unlabeled")
            extra = extra.toarray() if hasattr(extra, "toarray") else np.asarray(extra)
            check_finite_features(extra)
            if extra.shape[1] != X.shape[1]:
                raise ValueError(f"X_unlabeled has {extra.shape[1]} features, but X has {X.shape[1]}")
            rows = np.vstack([X, extra])
        key = self._fit_key()
        result = self._fit_latent(rows, codes, len(self.classes_), C=float(self.C), include_inputs=self.include_inputs,
                                  intercept_scaling=1.0 if self.fit_intercept else 0.0, dual_tol=self.dual_tol, key=key)
        state = result.state
        self.coef_ = np.asarray(state.coef, np.float64)
        self.dual_coef_ = np.asarray(state.dual, np.float64)
        self.classifier_C_, self.classifier_cv_scores_ = float(self.C), None
        psi = np.asarray(state.psi, np.float64)
        self.unlabeled_features_ = psi[len(codes):]
        self._unlabeled_digest = data_digest(extra) if extra is not None and len(extra) else None
        if self.refit_classifier:
            self._fit_inductive_classifier(X, codes, key)
        return self

    def _fit_inductive_classifier(self, X, codes, key):
        """The final classifier on the training rows' inductive features (class docstring);
        the cross-validation's folds come from the fit's ``key``."""
        features = self._classifier_inputs(self._infer(X), X)
        seed = int(host_seeds(jax.random.fold_in(key, 1), 1)[0])
        if self.classifier_C == "cv":
            C, scores = select_classifier_C(features, codes, len(self.classes_), tol=self.dual_tol,
                                            max_iter=DUAL_MAX_ITER, seed=seed)
        else:
            C, scores = float(self.classifier_C), None
        solution = crammer_singer_dual(features, codes, C, n_classes=len(self.classes_), tol=self.dual_tol,
                                       max_iter=DUAL_MAX_ITER, screen=True)
        self.coef_ = np.asarray(solution.coef, np.float64)
        self.dual_coef_ = np.asarray(solution.dual, np.float64)
        self.duality_gap_ = float(solution.gap)
        self.classifier_C_, self.classifier_cv_scores_ = C, scores

    def _classifier_inputs(self, psi, X):
        """``g_n = [psi_n, x_n (include_inputs), 1 (fit_intercept)]`` of every row."""
        return classifier_features(psi, X if self.include_inputs else None, 1.0 if self.fit_intercept else 0.0)

    # ------------------------------------------------------------------ prediction
    def _features_of(self, X):
        """``(psi, X)``: jointly inferred features for ``X_unlabeled``, inductive otherwise."""
        check_is_fitted(self, "coef_")
        X = self._check_X(X, reset=False)
        if self._unlabeled_digest is not None and data_digest(X) == self._unlabeled_digest:
            return self.unlabeled_features_.copy(), X
        return self._infer(X), X

    def transform(self, X):
        """``psi``: (n_samples, truncation) posterior feature means of the rows of X (the rule
        of the class docstring)."""
        return self._features_of(X)[0]

    def _scores(self, X):
        psi, X = self._features_of(X)
        return self._classifier_inputs(psi, X) @ self.coef_.T

    def decision_function(self, X):
        """``f(y, x) = mu_y^T psi(x)`` (eq. 10): (n_samples, n_classes), or for two classes
        (n_samples,) ``f(classes_[1], x) - f(classes_[0], x)``."""
        scores = self._scores(X)
        return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores

    def predict(self, X):
        """``argmax_y f(y, x)`` (eq. 13)."""
        scores = self._scores(X)
        return self.classes_[np.argmax(scores, axis=1)]
