"""Table 1 of paper 001: accuracy and time of M2DPM against mixtures and single
classifiers on the synthetic Settings I and II.

Protocol (paper 001, "Results on synthetic datasets"): for each setting, random data sets
from :func:`regbayes.datasets.make_dp_mixture_svm` (Setting I: 1,000 points, CRP seating
with alpha = 1 and at most 10 clusters, Gaussian clusters; Setting II: 10,000 points in 10
disjoint uniform clusters); each is split at random 80 % / 20 %, hyper-parameters are
chosen by 5-fold cross-validation on the training part, the chosen model is refitted on
the whole training part and scored on the test part. Time is the wall time of that final
fit (cross-validation excluded), as the paper reports running time per method.

Methods: M2DPM, InfiniteSVC (Gibbs, fixed hyper-parameters: cross-validating a sampler
would multiply its cost by the grid size times the folds), DPMeansSVC, scikit-learn's
LinearSVC, SVC (RBF) and LogisticRegression (the paper's MNL; the three on standardised
features), and the oracle: one exact SVM per true cluster, the test point's true cluster
given (its C chosen by the same cross-validation). The three mixtures of SVMs choose c from
one grid. The data sets of the table are those of ``seed=1`` (the default of :func:`run`).

These synthetic settings are the paper's own data (generated as it describes), not
stand-ins. ``data`` (``regbayes reproduce sva-table1 --data TRAIN,TEST``; see
:mod:`regbayes.experiments.data_option`) runs the same protocol on one real data set
instead, as paper 001's Tables 3-4 do for Protein and Parkinson's: the data set's own
test file, or a random 80 / 20 split of a single file; cross-validation with Setting
II's grids, features as given; no oracle (it needs the true clusters).
"""
from __future__ import annotations

import time

import numpy as np

from ._common import finish, fmt, markdown_table, with_progress
from .sva_methods import (ISVM_PARAMS, ISVM_QUICK_PARAMS, checked_methods, cv_select, fit_method, m2dpm_candidates,
                          timed_fit)

NAME = "sva-table1"
TITLE = "Table 1 of paper 001: M2DPM vs DP-means+SVM, Gibbs iSVM and single classifiers"

# Paper 001, Table 1: accuracy mean (std) in %, time mean (std) in s.
PAPER = {
    "I": {
        "M2DPM": (71.1, 5.2, 0.1, 0.0),
        "InfiniteSVC (gibbs)": (70.9, 4.9, 4.2, 0.1),
        "DPMeansSVC": (70.8, 5.6, 0.1, 0.0),
        "LinearSVC": (66.4, 6.9, 0.1, 0.0),
        "SVC (RBF)": (69.5, 5.5, 0.1, 0.0),
        "LogisticRegression": (66.2, 7.2, 0.2, 0.0),
        "dpMNL": (68.8, 7.5, 29.8, 2.8),
    },
    "II": {
        "M2DPM": (64.4, 1.2, 3.6, 1.4),
        "InfiniteSVC (gibbs)": (62.9, 1.2, 40.7, 2.4),
        "DPMeansSVC": (58.9, 1.4, 2.4, 0.8),
        "LinearSVC": (54.4, 1.7, 11.1, 0.6),
        "SVC (RBF)": (65.5, 1.2, 14.3, 0.2),
        "LogisticRegression": (54.6, 1.6, 1.2, 0.1),
        "dpMNL": (54.6, 1.8, 126.2, 11.0),
    },
}
METHODS = ("M2DPM", "InfiniteSVC (gibbs)", "dpMNL", "DPMeansSVC", "LinearSVC", "SVC (RBF)", "LogisticRegression", "oracle")

# Cross-validation grids, per setting (the two settings' clusters differ in scale: in
# Setting I adjacent cluster means are D = 5 apart and a cluster's points reach D ~ 4 from
# their mean; in Setting II the cubes' points stay within D = 1.25 of their mean). M2DPM's
# lambda is given per unit of s (the clustering scale): the grid is over (s, lambda / s, c),
# with nu = 1. Every per-cluster SVM (M2DPM, DPMeansSVC, the oracle) chooses c from the
# same grid SVM_C_GRID. The ranges were set on pilot data sets drawn with other seeds than
# the table's (the table is ``seed=1``; pilots used seeds 2 and 3, Setting I): widening
# M2DPM's c grid from (0.1, 0.3) to SVM_C_GRID raised its mean accuracy from 68.5 to 69.3
# (6 pilot data sets; the oracle: 70.7); n_init = 3 restarts left it unchanged (69.25), so
# the table uses one run; s in (10, 100) instead of (1, 10) gave 69.9 against 70.0 (12
# pilot data sets). Finer s grids (same lambda / s and c grids; 24 pilot data sets, seeds
# 2, 3 and 4, 8 each; mean accuracy, paired difference to the grid below +- its standard
# error): (1, 10) 70.6, oracle 71.3; (3, 10, 30) 70.75, +0.13 +- 0.47; (1, 3, 10, 30) 70.5,
# -0.08 +- 0.41; (3, 10, 30) with lambda / s in (7, 10, 14) 70.6, +0.00 +- 0.47. None
# helps beyond the noise. Setting II keeps s in (1, 10).
# Setting I: M2DPM cross-validates c only, at s = 10, lambda / s = 7 and refit_cells (each
# component's classifier re-solved on its nearest-mean cell, the points new data are routed
# to; with s = 1 the z-step often cuts a large cluster into a +1 and a -1 component with
# nearly equal means). Development data sets, never the table's: 64 (seeds 2, 3, 4: 8 each;
# seeds 5, 6: 20 each). Over them the CV choice from the 48-candidate grid (s in (1, 10),
# lambda / s in (5, 7, 10), c in SVM_C_GRID, refit_cells in (False, True)) scores 70.80,
# this 4-candidate grid 70.95 (paired +0.14 +- 0.20), at 1/12 of the CV's cost; the oracle
# scores 71.2 on the 40 sets of seeds 5 and 6. Other remedies tried on the development sets,
# none beyond its standard error: finer lambda / s grids (5, 6, 7, 8, 10; 6, 7, 8; 6 alone),
# finer s grids (3, 10, 30; 1, 3, 10, 30), repeated 5-fold CV (2 x 5 folds), the
# one-standard-error rule towards larger s, tol = 1e-7 instead of 1e-3, n_init = 5
# restarts with this grid (-0.09 +- 0.17 on the 64 sets), and split moves (cut each
# component by 2-means after convergence and keep the cuts that lower eq. 35).
SVM_C_GRID = [0.03, 0.1, 0.3, 1.0]
M2DPM_GRID = {
    "I": {"s": [10.0], "penalty_per_s": [7.0], "C": SVM_C_GRID, "refit_cells": [True]},
    "II": {"s": [1.0, 10.0], "penalty_per_s": [3.0, 4.0], "C": SVM_C_GRID},
}
DPMEANS_GRID = {
    "I": {"cluster_penalty": [5.0, 7.0, 10.0], "C": SVM_C_GRID},
    "II": {"cluster_penalty": [3.0, 4.0], "C": SVM_C_GRID},
}
ORACLE_GRID = {"C": SVM_C_GRID}
LINEAR_GRID = {"clf__C": [0.01, 0.1, 1.0, 10.0]}
RBF_GRID = {"clf__C": [0.3, 1.0, 3.0, 10.0], "clf__gamma": ["scale"]}
LOGISTIC_GRID = {"clf__C": [0.01, 0.1, 1.0, 10.0]}

QUICK = {
    "n_samples": {"I": 200, "II": 400},
    "n_folds": 2,
    "m2dpm_grid": {"I": {"s": [1.0], "penalty_per_s": [7.0], "C": [0.1, 0.3], "refit_cells": [False, True]},
                   "II": {"s": [1.0], "penalty_per_s": [3.0], "C": [0.1, 0.3]}},
    "dpmeans_grid": {"I": {"cluster_penalty": [7.0], "C": [0.1, 0.3]},
                     "II": {"cluster_penalty": [3.0], "C": [0.1, 0.3]}},
    "isvm_params": ISVM_QUICK_PARAMS,
}


_m2dpm_grid = m2dpm_candidates
_timed_fit = timed_fit
_cv_select = cv_select


def _oracle(X_tr, y_tr, c_tr, X_te, y_te, c_te, C_grid, n_folds, rng):
    """Per-true-cluster exact SVMs (M2DPM's eta-step with the clusters given; binary
    labels, M2DPM's defaults for margin, prior scale and intercept)."""
    from ..algorithms.svm_mixture import solve_eta
    from ..potentials.svm_mixture import ComponentSVM, classifier_features, feature_shift, svm_labels

    def fit_predict(Xa, ya, ca, Xb, cb, C):
        classes, codes = np.unique(ya, return_inverse=True)
        yk = svm_labels(codes, len(classes))
        svm = ComponentSVM(len(classes), C, 1.0, 1.0)
        shift = feature_shift(Xa)
        Xt_a, Xt_b = classifier_features(Xa, *shift), classifier_features(Xb, *shift)
        pred = np.empty(len(Xb), dtype=classes.dtype)
        for k in np.unique(cb):
            tr, te = ca == k, cb == k
            if not tr.any():  # a cluster absent from training: majority label
                values, counts = np.unique(ya, return_counts=True)
                pred[te] = values[np.argmax(counts)]
                continue
            W = solve_eta(svm, Xt_a[tr], yk[tr], None)
            pred[te] = classes[(Xt_b[te] @ W > 0).astype(int)]
        return pred

    from sklearn.model_selection import StratifiedKFold

    folds = list(StratifiedKFold(n_folds, shuffle=True, random_state=int(rng.integers(2**31 - 1))).split(X_tr, y_tr))
    best_C, best = None, -np.inf
    for C in C_grid:
        acc = np.mean([np.mean(fit_predict(X_tr[a], y_tr[a], c_tr[a], X_tr[b], c_tr[b], C) == y_tr[b]) for a, b in folds])
        if acc > best:
            best_C, best = C, acc
    start = time.perf_counter()
    pred = fit_predict(X_tr, y_tr, c_tr, X_te, c_te, best_C)
    return float(np.mean(pred == y_te)), time.perf_counter() - start, {"C": best_C}


def _run_method(name, setting, X_tr, y_tr, c_tr, X_te, y_te, c_te, cfg, rng, seed):
    """``(accuracy, seconds, chosen params, extra)`` of one method on one data set."""
    if name == "oracle":
        acc, secs, params = _oracle(X_tr, y_tr, c_tr, X_te, y_te, c_te, cfg["oracle_grid"]["C"], cfg["n_folds"], rng)
        return acc, secs, params, {}
    grids = {"M2DPM": cfg["m2dpm_grid"][setting], "DPMeansSVC": cfg["dpmeans_grid"][setting],
             "LinearSVC": LINEAR_GRID, "SVC (RBF)": RBF_GRID, "LogisticRegression": LOGISTIC_GRID}
    model, secs, params, extra = fit_method(name, X_tr, y_tr, grids=grids, n_folds=cfg["n_folds"], rng=rng, seed=seed,
                                            fixed={"InfiniteSVC (gibbs)": cfg["isvm_params"]})
    return model.score(X_te, y_te), secs, params, extra


def _given_data(data, n, seed) -> dict:
    """``{name: {"split": (X_train, X_test, y_train, y_test), "record": ...}}`` for the
    ``data`` option (empty without it); ``n`` training rows read (None: all)."""
    from .data_option import CLASSIFICATION, DataError, load_classification, resolve_many

    out = {}
    for source in resolve_many(data, CLASSIFICATION):
        d = load_classification(source, n_rows=n, seed=seed, test_fraction=0.2)
        if hasattr(d["X_train"], "toarray"):
            raise DataError(f"data {source.value!r} has {d['X_train'].shape[1]:,} sparse features; the mixtures "
                            "of SVMs need dense features (at most 1,000)")
        out[source.name] = {"split": (d["X_train"], d["X_test"], d["y_train"], d["y_test"]), "record": d["record"]}
    return out


def _data_text(given) -> str:
    if not given:
        return "Data: paper 001's synthetic Settings I and II, generated as the paper describes. "
    parts = [f"{k} ({v['record']['n_train']:,} train / {v['record']['n_test']:,} test, {v['record']['split']})"
             for k, v in given.items()]
    return "Data: " + "; ".join(parts) + "; Setting II's grids. "


def run(
    out_dir,
    *,
    quick: bool = False,
    seed: int = 1,
    n_datasets: int | None = None,
    settings=("I", "II"),
    methods=METHODS,
    n_folds: int | None = None,
    n_samples: int | None = None,
    first_dataset: int = 0,
    n: int | None = None,
    data=None,
    progress: bool = False,
    **unused,
) -> dict:
    """Run Table 1 and write ``sva-table1.png``, ``sva-table1.json`` and ``results.md``.

    ``n_datasets`` random data sets per setting (default 20, as the paper; ``quick``: 2),
    ``settings`` a subset of ("I", "II"), ``methods`` a subset of :data:`METHODS`,
    ``n_folds`` cross-validation folds (default 5; quick: 2), ``n_samples`` overrides the
    data size of every setting (quick: 200 / 400); ``first_dataset`` skips that many data
    sets of the seed's sequence (to split a long run into parts); ``n`` (the CLI's
    ``--n``) is ``n_samples``. A method that cannot be imported
    (InfiniteSVC lives in another module) is reported as skipped. ``data``: a registered
    data set, an svmlight file, ``TRAIN,TEST`` or a list of them (module docstring), each
    a "setting" of one data set with Setting II's grids; ``n`` then caps the training rows
    read.
    """
    from sklearn.model_selection import train_test_split

    from ..datasets import make_dp_mixture_svm
    from ..plotting import new_figure

    start = time.perf_counter()
    if n_samples is None and n is not None:
        n_samples = int(n)
    n_datasets = int(n_datasets) if n_datasets is not None else (2 if quick else 20)
    cfg = {
        "n_folds": int(n_folds) if n_folds is not None else (QUICK["n_folds"] if quick else 5),
        "m2dpm_grid": QUICK["m2dpm_grid"] if quick else M2DPM_GRID,
        "dpmeans_grid": QUICK["dpmeans_grid"] if quick else DPMEANS_GRID,
        "oracle_grid": ORACLE_GRID,
        "isvm_params": QUICK["isvm_params"] if quick else ISVM_PARAMS,
    }
    methods = checked_methods(methods, METHODS)
    given = _given_data(data, n, seed)
    if given:
        settings, n_datasets = tuple(given), 1
        for name in given:
            for key in ("m2dpm_grid", "dpmeans_grid"):
                cfg[key] = {**cfg[key], name: cfg[key]["II"]}
    settings = tuple(settings)
    for s in settings:
        if s not in PAPER and s not in given:
            raise ValueError(f"settings must be among 'I', 'II'; got {s!r}")

    iterator = with_progress([(s, r) for s in settings for r in range(n_datasets)], progress, NAME)
    per = {s: {m: {"accuracy": [], "seconds": [], "params": [], "extra": []} for m in methods} for s in settings}
    skipped = {}
    for setting, r in iterator:
        data_seed = 1000 * seed + int(first_dataset) + r + (0 if setting == "I" else 500)
        if setting in given:
            X_tr, X_te, y_tr, y_te = given[setting]["split"]
            c_tr = c_te = None
        else:
            size = n_samples if n_samples is not None else (QUICK["n_samples"][setting] if quick else None)
            X, y, clusters, _ = make_dp_mixture_svm(setting, n_samples=size, random_state=data_seed, return_clusters=True)
            X_tr, X_te, y_tr, y_te, c_tr, c_te = train_test_split(X, y, clusters, test_size=0.2, random_state=data_seed)
        rng = np.random.default_rng(data_seed)
        for m in methods:
            if m in skipped or (m == "oracle" and c_tr is None):
                continue
            try:
                acc, secs, params, extra = _run_method(m, setting, X_tr, y_tr, c_tr, X_te, y_te, c_te, cfg, rng, data_seed)
            except ImportError as exc:
                skipped[m] = f"not available ({exc})"
                continue
            rec = per[setting][m]
            rec["accuracy"].append(100.0 * float(acc))
            rec["seconds"].append(float(secs))
            rec["params"].append(params)
            rec["extra"].append(extra)

    headers = ["setting", "method", "accuracy % mean (std)", "paper", "time s mean (std)", "paper time", "n data sets"]
    rows = []
    summary = {}
    for setting in settings:
        for m in methods:
            rec = per[setting][m]
            paper = PAPER.get(setting, {}).get(m)
            paper_acc = f"{paper[0]:.1f} ({paper[1]:.1f})" if paper else "-"
            paper_time = f"{paper[2]:.1f} ({paper[3]:.1f})" if paper else "-"
            if m in skipped:
                rows.append([setting, m, skipped[m], paper_acc, "-", paper_time, 0])
                continue
            if not rec["accuracy"]:
                rows.append([setting, m, "skipped: needs the true clusters", paper_acc, "-", paper_time, 0])
                continue
            acc, sec = np.asarray(rec["accuracy"]), np.asarray(rec["seconds"])
            summary.setdefault(setting, {})[m] = {
                "accuracy_mean": float(acc.mean()), "accuracy_std": float(acc.std()),
                "seconds_mean": float(sec.mean()), "seconds_std": float(sec.std()), "n_datasets": len(acc),
            }
            rows.append([setting, m, f"{acc.mean():.1f} ({acc.std():.1f})", paper_acc,
                         f"{fmt(sec.mean(), 2)} ({fmt(sec.std(), 2)})", paper_time, len(acc)])
    table = markdown_table(headers, rows)

    fig = new_figure(4.5 * len(settings), 3.6)
    axes = fig.subplots(1, len(settings), squeeze=False)[0]
    for ax, setting in zip(axes, settings):
        names = [m for m in methods if m in summary.get(setting, {})]
        xs = np.arange(len(names))
        ours = [summary[setting][m]["accuracy_mean"] for m in names]
        errs = [summary[setting][m]["accuracy_std"] for m in names]
        theirs = [PAPER.get(setting, {}).get(m, (np.nan,))[0] for m in names]
        ax.bar(xs - 0.2, ours, 0.4, yerr=errs, label="regbayes", color="#1f77b4")
        ax.bar(xs + 0.2, theirs, 0.4, label="paper 001", color="#bbbbbb")
        ax.set_xticks(xs, names, rotation=35, ha="right", fontsize=7)
        ax.set_ylim(40, 85 if setting in PAPER else 100)
        ax.set_ylabel("test accuracy (%)")
        ax.set_title(f"Setting {setting}" if setting in PAPER else setting)
        ax.legend(fontsize=7)

    text = (
        _data_text(given)
        + f"{n_datasets} random data set(s) per setting, 80/20 split, {cfg['n_folds']}-fold cross-validation on the "
        "training part (grids in the JSON; InfiniteSVC with fixed hyper-parameters). Time: the final fit on the "
        "training part, cross-validation excluded; timings on a shared CPU are noisy. 'oracle': one exact SVM per "
        "true cluster with the true cluster of each test point given."
    )
    return finish(out_dir, NAME, TITLE, start, fig, table, text, {
        "settings": {"quick": quick, "seed": seed, "n_datasets": n_datasets, "first_dataset": first_dataset,
                     "data": [v["record"] for v in given.values()] or None,
                     "n_folds": cfg["n_folds"],
                     "n_samples": n_samples, "grids": {"M2DPM": cfg["m2dpm_grid"], "DPMeansSVC": cfg["dpmeans_grid"],
                                                       "oracle": ORACLE_GRID, "LinearSVC": LINEAR_GRID,
                                                       "SVC (RBF)": RBF_GRID, "LogisticRegression": LOGISTIC_GRID},
                     "isvm_params": cfg["isvm_params"]},
        "summary": summary,
        "per_dataset": per,
        "skipped": skipped,
        "paper": PAPER,
    })
