"""scikit-learn's classifiers as anchors.

``run_linear_svc``: ``LinearSVC(loss="hinge")``, whose objective
``1/2 ||w||^2 + C_svm sum_i max(0, 1 - y_i (w x_i + b))`` with the intercept penalised like
a weight (liblinear's ``intercept_scaling=1``) is the negative log posterior of
``BayesianSVC`` up to scale when ``C_svm = C * prior_scale^2 / margin`` and
``eta = margin * [w, b]``: it returns the posterior mode (MAP).

``anchor_classifiers``: LinearSVC, RBF SVC and LogisticRegression with their defaults, the
anchors of the DP-mixture benchmark.
"""
from __future__ import annotations

import time
import warnings

import numpy as np
from metrics import accuracy


def run_linear_svc(X, y, Xt, yt, hyper, ref_mean, ref_acc):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    C_svm = hyper["C"] * hyper["prior_scale"] ** 2 / hyper["margin"]
    model = LinearSVC(C=C_svm, loss="hinge", dual=True, fit_intercept=True, intercept_scaling=1.0, tol=1e-4, max_iter=1000)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(X, y)
    fit_s = time.perf_counter() - start
    eta = hyper["margin"] * np.concatenate([model.coef_.ravel(), model.intercept_]).astype(np.float64)
    return {
        "C_svm": C_svm,
        "fit_s": fit_s,
        "n_iter": int(np.max(model.n_iter_)),
        "converged": not any(issubclass(w.category, ConvergenceWarning) for w in caught),
        "final_accuracy": float(accuracy(eta[None], Xt, yt)[0]),
        "rel_error": float(np.linalg.norm(eta - ref_mean) / np.linalg.norm(ref_mean)),
        "accuracy_gap_points": float(accuracy(eta[None], Xt, yt)[0] - ref_acc),
    }


def anchor_classifiers():
    """name -> factory(seed) of scikit-learn's LinearSVC, RBF SVC and LogisticRegression."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import SVC, LinearSVC

    return {
        "LinearSVC": lambda seed: LinearSVC(),
        "SVC (RBF)": lambda seed: SVC(kernel="rbf", gamma="scale"),
        "LogisticRegression": lambda seed: LogisticRegression(max_iter=2000),
    }
