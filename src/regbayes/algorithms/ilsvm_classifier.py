"""iLSVM's final classifier on the training rows' inductive features.

Algorithm 3 ends with ``q(eta) = N(mu, I)`` fitted to the features of the fit. For the
labelled rows those are the means of the RegBayes posterior (Lemma 12), which carries the
tilt ``exp{sum_y omega_n^y (eta_{y_n} - eta_y)^T z_n}``: the margin term of eq. 33
(corrected) moves every training row's ``psi_n`` towards its own label. A new row has no
label and no tilt; its features are inferred from ``q(W)`` and ``q(nu)`` alone
(:func:`regbayes.algorithms.ilsvm.infer_features`). A classifier fitted to the tilted
features sees training rows that are more separable than any test row will be, and it
scores the test rows' features out of the distribution it was fitted to.

The remedy kept here: once ``q(W)`` and ``q(nu)`` are fitted (the margin has shaped them:
that is what the joint fit contributes), the training rows' features are inferred again
as a new row's are, and the Crammer-Singer dual (eq. 34 with Lemma 12's cost,
:func:`regbayes.core.duals.crammer_singer_dual`) is solved on them::

    min_mu  ||mu||^2 / 2 + C_f sum_n max_y (l_n(y) - mu_{y_n}^T g_n + mu_y^T g_n),

``g_n`` the inductive ``psi_n`` (then ``x_n`` and the intercept's constant, as in the
fit). Its weight ``C_f`` is separate from the fit's ``C``: in the fit ``C`` also sets how
strongly the margin shapes the features (the margin logit is ``C mu_{y_n} - sum_y
omega_n^y mu_y``, of order ``C |mu|``), and the best shaping and the best classifier
regularisation differ by orders of magnitude (CHANGELOG, 2026-11-28).
:func:`select_classifier_C` picks ``C_f`` by stratified k-fold cross-validation of
accuracy on the training rows' features, which costs dual solves only (the features are
fixed).
"""
from __future__ import annotations

import numpy as np

from ..core.duals import crammer_singer_dual

#: The classifier weights that ``select_classifier_C`` compares (those of the
#: experiments' LinearSVC baselines).
CLASSIFIER_C_GRID = (0.01, 0.1, 1.0, 10.0)
#: Folds of the cross-validation.
CV_FOLDS = 3
#: The weight used when some class has fewer labelled rows than ``CV_FOLDS``
#: (scikit-learn's ``LinearSVC`` default).
FALLBACK_C = 1.0


def select_classifier_C(features, labels, n_classes: int, *, tol: float, max_iter: int, seed: int = 0,
                        grid=CLASSIFIER_C_GRID, folds: int = CV_FOLDS):
    """``(C_f, mean fold accuracy per grid value)``: the grid value with the highest mean
    accuracy over ``folds`` stratified folds (ties: the smaller C, the more regularised
    classifier). The folds are drawn from ``seed``. With a class of fewer than ``folds``
    rows there is nothing to cross-validate: ``(FALLBACK_C, None)``."""
    from sklearn.model_selection import StratifiedKFold

    labels = np.asarray(labels)
    if np.min(np.bincount(labels, minlength=n_classes)[np.unique(labels)]) < folds:
        return FALLBACK_C, None
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    scores = np.zeros(len(grid))
    for train, test in splitter.split(features, labels):
        for i, C in enumerate(grid):
            mu = crammer_singer_dual(features[train], labels[train], C, n_classes=n_classes, tol=tol,
                                     max_iter=max_iter, seed=seed, screen=True).coef
            scores[i] += np.mean(np.argmax(features[test] @ mu.T, axis=1) == labels[test]) / folds
    return float(grid[int(np.argmax(scores))]), scores
