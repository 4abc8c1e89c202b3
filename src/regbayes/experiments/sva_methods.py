"""The methods of paper 001's tables (Tables 1, 3 and 4) and how each is fitted.

Every table compares the same columns: M2DPM (Algorithm 1, eq. 35), DP-means followed by
one SVM per cluster (``DPMeansSVC``), the Gibbs infinite SVM (``InfiniteSVC``), dpMNL
(Shahbaba and Neal 2009), and scikit-learn's LinearSVC, SVC (RBF) and LogisticRegression
(the paper's MNL; the three in a pipeline after ``StandardScaler``).

Two kinds of methods:

* cross-validated ones (the mixtures of SVMs and the scikit-learn classifiers): the
  candidate with the best mean validation accuracy over stratified folds is refitted on
  the whole training part (:func:`fit_method`);
* sampled ones, run with fixed parameters (cross-validating a sampler would multiply its
  cost by the grid size times the folds): :data:`SAMPLED`, one entry per estimator;
  dpMNL (``DPMNLClassifier``) runs with its defaults.

No paper equation is implemented here: the estimators implement them.
"""
from __future__ import annotations

import importlib
import time
from typing import NamedTuple

import numpy as np

__all__ = [
    "ISVM_PARAMS",
    "ISVM_QUICK_PARAMS",
    "MIXTURES",
    "PAPER_LABELS",
    "SAMPLED",
    "SKLEARN",
    "SampledMethod",
    "candidates",
    "checked_methods",
    "cv_select",
    "data_text",
    "fit_method",
    "m2dpm_candidates",
    "make_estimator",
    "sklearn_pipeline",
    "timed_fit",
]

#: Gibbs iSVM's fixed parameters in the tables (and their ``quick`` version).
ISVM_PARAMS = {"alpha": 1.0, "C": 1.0, "prior_scale": 1.0, "sampler": "gibbs", "n_iter": 100, "n_warmup": 50}
ISVM_QUICK_PARAMS = {**ISVM_PARAMS, "n_iter": 6, "n_warmup": 3}


class SampledMethod(NamedTuple):
    """A regbayes estimator run with fixed parameters: ``regbayes.models.<module>.<cls>``
    with ``params`` (``quick_params`` for quick runs)."""

    module: str
    cls: str
    params: dict
    quick_params: dict


#: The sampled methods by table label.
SAMPLED = {
    "InfiniteSVC (gibbs)": SampledMethod("isvm", "InfiniteSVC", ISVM_PARAMS, ISVM_QUICK_PARAMS),
    "dpMNL": SampledMethod("dpmnl", "DPMNLClassifier", {}, {"n_iter": 6, "n_warmup": 3}),
}

#: The scikit-learn classifiers by table label.
SKLEARN = ("LinearSVC", "SVC (RBF)", "LogisticRegression")
#: The mixtures of SVMs, cross-validated.
MIXTURES = ("M2DPM", "DPMeansSVC")
#: Paper 001's column names for our table labels.
PAPER_LABELS = {
    "LogisticRegression": "MNL", "LinearSVC": "LSVM", "SVC (RBF)": "RBF-SVM", "dpMNL": "dpMNL",
    "DPMeansSVC": "DP+SVM", "InfiniteSVC (gibbs)": "Gibbs-iSVM", "M2DPM": "M2DPM",
}


def checked_methods(methods, known) -> tuple:
    """``methods`` as a tuple; ValueError for one that is not in ``known`` (a table's
    ``METHODS``)."""
    methods = tuple(methods)
    for m in methods:
        if m not in known:
            raise ValueError(f"unknown method {m!r}; choose among {known}")
    return methods


def data_text(record, stand_in_of: str, files: str = "") -> str:
    """The sentence of a table's ``results.md`` that names its data: the generated stand-in
    of ``stand_in_of`` when ``record`` is one, else ``record["value"]`` followed by ``files``."""
    if record.get("stand_in"):
        return (f"Data: a generated stand-in of {stand_in_of}, not the real data; its numbers are not comparable "
                "with the paper's. ")
    return f"Data: {record['value']}{files}. "


def m2dpm_candidates(grid) -> list:
    """M2DPM's candidates from a grid over ``s``, ``penalty_per_s`` (lambda / s), ``C``
    and optionally ``refit_cells``."""
    return [{"s": s, "cluster_penalty": s * p, "C": c, **({"refit_cells": True} if refit else {})}
            for refit in grid.get("refit_cells", [False])
            for s in grid["s"] for p in grid["penalty_per_s"] for c in grid["C"]]


def candidates(name: str, grid) -> list:
    """The parameter dicts a cross-validated method chooses from: M2DPM by
    :func:`m2dpm_candidates`, DPMeansSVC over ``cluster_penalty`` x ``C``, a scikit-learn
    classifier over its pipeline grid (keys ``clf__...``)."""
    if name == "M2DPM":
        return m2dpm_candidates(grid)
    if name == "DPMeansSVC":
        return [{"cluster_penalty": p, "C": c} for p in grid["cluster_penalty"] for c in grid["C"]]
    if name in SKLEARN:
        from sklearn.model_selection import ParameterGrid

        return list(ParameterGrid(grid))
    raise ValueError(f"{name!r} is not a cross-validated method; choose among M2DPM, DPMeansSVC, {', '.join(SKLEARN)}")


def timed_fit(model, X, y):
    """``(model, seconds)``: ``model.fit(X, y)`` and its wall time."""
    start = time.perf_counter()
    model.fit(X, y)
    return model, time.perf_counter() - start


def cv_select(make, cands, X, y, n_folds, rng):
    """The candidate with the best mean validation accuracy over ``n_folds`` stratified
    folds (shuffled with a seed drawn from ``rng``), and that accuracy."""
    from sklearn.model_selection import StratifiedKFold

    folds = list(StratifiedKFold(n_folds, shuffle=True, random_state=int(rng.integers(2**31 - 1))).split(X, y))
    best, best_score = None, -np.inf
    for params in cands:
        scores = []
        for train, val in folds:
            model = make(**params).fit(X[train], y[train])
            scores.append(model.score(X[val], y[val]))
        if np.mean(scores) > best_score:
            best, best_score = params, float(np.mean(scores))
    return best, best_score


def sklearn_pipeline(name):
    """``StandardScaler`` then the scikit-learn classifier called ``name``."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC, LinearSVC

    clf = {
        "LinearSVC": lambda: LinearSVC(max_iter=20000),
        "SVC (RBF)": lambda: SVC(kernel="rbf"),
        "LogisticRegression": lambda: LogisticRegression(max_iter=5000),
    }[name]()
    return Pipeline([("scale", StandardScaler()), ("clf", clf)])


def _sampled_class(name):
    spec = SAMPLED[name]
    module = importlib.import_module(f"regbayes.models.{spec.module}")
    try:
        return getattr(module, spec.cls)
    except AttributeError:
        raise ImportError(f"regbayes.models.{spec.module} has no {spec.cls}") from None


def make_estimator(name: str, params: dict, seed: int):
    """An unfitted estimator of method ``name`` with ``params``; the regbayes ones get
    ``random_state=seed``. A sampled method missing from this version raises ImportError."""
    if name in SKLEARN:
        return sklearn_pipeline(name).set_params(**params)
    if name == "M2DPM":
        from ..models.m2dpm import M2DPM

        return M2DPM(random_state=seed, **params)
    if name == "DPMeansSVC":
        from ..models.dpmeans import DPMeansSVC

        return DPMeansSVC(random_state=seed, **params)
    if name in SAMPLED:
        return _sampled_class(name)(random_state=seed, **params)
    raise ValueError(f"unknown method {name!r}")


def fit_method(name, X, y, *, grids, n_folds, rng, seed, fixed=None):
    """Fit method ``name`` on the training part ``(X, y)``: ``(model, seconds, params,
    extra)``.

    A cross-validated method chooses its parameters from ``grids[name]`` by
    ``n_folds``-fold cross-validation (one fold seed drawn from ``rng``), then is refitted
    on all of ``(X, y)``; ``seconds`` is that final fit's wall time. A sampled method is
    fitted once with ``fixed[name]`` (default: its :data:`SAMPLED` parameters). ``extra``
    holds ``n_components`` for the mixtures.
    """
    if name in MIXTURES:
        params, _ = cv_select(lambda **p: make_estimator(name, p, seed), candidates(name, grids[name]),
                              X, y, n_folds, rng)
        model, secs = timed_fit(make_estimator(name, params, seed), X, y)
        return model, secs, params, {"n_components": model.n_components_}
    if name in SAMPLED:
        cls = _sampled_class(name)
        params = dict((fixed or {}).get(name, SAMPLED[name].params))
        model, secs = timed_fit(cls(random_state=seed, **params), X, y)
        return model, secs, params, {"n_components": int(getattr(model, "n_components_", -1))}
    if name not in SKLEARN:
        raise ValueError(f"unknown method {name!r}")
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    search = GridSearchCV(sklearn_pipeline(name), grids[name], refit=False,
                          cv=StratifiedKFold(n_folds, shuffle=True, random_state=int(rng.integers(2**31 - 1))))
    search.fit(X, y)
    model, secs = timed_fit(sklearn_pipeline(name).set_params(**search.best_params_), X, y)
    return model, secs, search.best_params_, {}
