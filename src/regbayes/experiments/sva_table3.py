"""Table 3 of paper 001: protein fold classification (Ding and Dubchak 2001).

Protocol (paper 001, "Protein Fold Classification"): 27 folds, 21 features (the
percentages of the 20 amino acids and the sequence length), the previous setup's split
of 313 training and 385 test proteins; hyper-parameters chosen by 5-fold cross-validation
on the training set; accuracy, F1 and running time on the test set.

Here: every method of the paper's table that regbayes has (:mod:`.sva_methods`: M2DPM,
DPMeansSVC, InfiniteSVC with fixed parameters, scikit-learn's LinearSVC, SVC (RBF) and
LogisticRegression for the paper's LSVM, RBF-SVM and MNL, and ``DPMNLClassifier`` for
dpMNL).
Features are standardised with the training rows' means and deviations (the length is
two orders of magnitude larger than the percentages; the paper does not say how it
scaled them). F1 is the macro average over the folds present in the test set (the paper
does not say which average); time is the final fit plus the prediction of the test set,
cross-validation excluded.

Data. Without ``data``: :func:`regbayes.datasets.make_protein_fold_like`, a generated
stand-in of the same shape, named as one in the outputs. ``data="protein-fold"`` reads
the registered files (from the cache folder, or downloaded), ``data="TRAIN,TEST"`` two
files in the layouts :func:`regbayes.datasets.load_protein_fold` reads. ``quick``: the
stand-in with 4 folds and 40 / 40 rows, or the given data's 4 largest folds, 2-fold
cross-validation and one candidate per mixture.
"""
from __future__ import annotations

import time

import numpy as np

from ._common import finish, fmt, markdown_table, with_progress
from .sva_methods import PAPER_LABELS, SAMPLED, checked_methods, data_text, fit_method
from .sva_table1 import LINEAR_GRID, LOGISTIC_GRID, RBF_GRID

NAME = "sva-table3"
TITLE = "Table 3 of paper 001: protein fold classification (27 folds, 313 / 385 proteins)"

#: Paper 001, Table 3: accuracy %, F1 %, time s, in the paper's row order.
PAPER = {
    "LogisticRegression": (50.0, 41.2, 2.9),
    "LinearSVC": (50.5, 47.3, 0.5),
    "SVC (RBF)": (53.1, 49.5, 1.6),
    "dpMNL": (56.3, 49.5, 98.2),
    "DPMeansSVC": (51.2, 47.9, 0.2),
    "InfiniteSVC (gibbs)": (55.8, 50.1, 223.4),
    "M2DPM": (54.6, 49.9, 8.1),
}
METHODS = tuple(PAPER)

# Grids on standardised features. M2DPM's multi-class eta-step is slow with 27 classes
# (one fit on the stand-in takes minutes on one core), so its grid is kept small.
GRIDS = {
    "M2DPM": {"s": [1.0], "penalty_per_s": [10.0, 30.0], "C": [0.1, 1.0]},
    "DPMeansSVC": {"cluster_penalty": [10.0, 20.0, 40.0], "C": [0.1, 1.0]},
    "LinearSVC": LINEAR_GRID,
    "SVC (RBF)": RBF_GRID,
    "LogisticRegression": LOGISTIC_GRID,
}
QUICK = {
    "n_folds": 2,
    "n_classes": 4,
    "n_rows": (40, 40),
    "grids": {**GRIDS, "M2DPM": {"s": [1.0], "penalty_per_s": [10.0], "C": [0.3]},
              "DPMeansSVC": {"cluster_penalty": [10.0], "C": [0.3]}},
}


def _read(data, seed):
    """``(X_train, X_test, y_train, y_test, record)`` of the stand-in or the given data."""
    from ..datasets import load_protein_fold, make_protein_fold_like

    if data is None:
        d = make_protein_fold_like(random_state=seed)
        return d.X_train, d.X_test, d.y_train, d.y_test, {
            "name": "protein-fold-like", "kind": "stand-in", "stand_in": True, "stands_in_for": "protein fold data"}
    from .data_option import DataError, resolve_own

    source = resolve_own(data, NAME)
    try:
        if source.kind == "registered":
            from ..datasets import fetch_dataset_files

            paths = fetch_dataset_files(source.name)
            train, test = paths["train"], paths["test"]
        else:
            train, test = source.paths
        d = load_protein_fold(train, test)
    except (ValueError, OSError) as exc:
        raise DataError(f"data {source.value!r}: {exc}") from exc
    return d.X_train, d.X_test, d.y_train, d.y_test, source.record()


def _largest_classes(X_tr, X_te, y_tr, y_te, k):
    values, counts = np.unique(y_tr, return_counts=True)
    keep = values[np.argsort(-counts, kind="stable")[:k]]
    a, b = np.isin(y_tr, keep), np.isin(y_te, keep)
    return X_tr[a], X_te[b], y_tr[a], y_te[b]


def _scores(model, X_te, y_te):
    from sklearn.metrics import f1_score

    start = time.perf_counter()
    pred = model.predict(X_te)
    seconds = time.perf_counter() - start
    f1 = f1_score(y_te, pred, average="macro", labels=np.unique(y_te), zero_division=0)
    return 100.0 * float(np.mean(pred == y_te)), 100.0 * float(f1), seconds


def run(out_dir, *, quick: bool = False, seed: int = 0, methods=METHODS, n_folds: int | None = None, data=None,
        progress: bool = False, **unused) -> dict:
    """Run Table 3 and write ``sva-table3.png``, ``sva-table3.json`` and ``results.md``.

    ``methods`` a subset of :data:`METHODS` (a method regbayes does not have is reported
    as not available), ``n_folds`` cross-validation folds on the training set (default
    5; quick: 2), ``data`` None (the stand-in), "protein-fold" or "TRAIN,TEST" (module
    docstring); ``seed`` seeds the stand-in, the folds and the estimators.
    """
    from sklearn.preprocessing import StandardScaler

    from ..plotting import new_figure

    start = time.perf_counter()
    methods = checked_methods(methods, METHODS)
    X_tr, X_te, y_tr, y_te, record = _read(data, seed)
    if quick:
        if data is None:
            from ..datasets import make_protein_fold_like

            d = make_protein_fold_like(*QUICK["n_rows"], n_classes=QUICK["n_classes"], random_state=seed)
            X_tr, X_te, y_tr, y_te = d.X_train, d.X_test, d.y_train, d.y_test
        else:
            X_tr, X_te, y_tr, y_te = _largest_classes(X_tr, X_te, y_tr, y_te, QUICK["n_classes"])
    scaler = StandardScaler().fit(X_tr)
    X_tr, X_te = scaler.transform(X_tr), scaler.transform(X_te)
    folds = int(n_folds) if n_folds is not None else (QUICK["n_folds"] if quick else 5)
    grids = QUICK["grids"] if quick else GRIDS
    fixed = {name: (spec.quick_params if quick else spec.params) for name, spec in SAMPLED.items()}
    rng = np.random.default_rng(seed)
    results = {}
    for m in with_progress(methods, progress, NAME):
        model, fit_seconds, params, extra = fit_method(m, X_tr, y_tr, grids=grids, n_folds=folds, rng=rng, seed=seed,
                                                       fixed=fixed)
        acc, f1, predict_seconds = _scores(model, X_te, y_te)
        results[m] = {"accuracy": acc, "f1": f1, "seconds": fit_seconds + predict_seconds,
                      "fit_seconds": fit_seconds, "predict_seconds": predict_seconds, "params": params, **extra}

    headers = ["method", "paper's name", "accuracy %", "paper", "F1 %", "paper", "time s", "paper"]
    rows = []
    for m in methods:
        p = [f"{v:.1f}" for v in PAPER[m]]
        r = results[m]
        rows.append([m, PAPER_LABELS[m], f"{r['accuracy']:.1f}", p[0], f"{r['f1']:.1f}", p[1], fmt(r["seconds"], 2), p[2]])
    table = markdown_table(headers, rows)

    fig = new_figure(7.0, 3.6)
    ax = fig.subplots()
    xs = np.arange(len(methods))
    ax.bar(xs - 0.2, [results.get(m, {}).get("accuracy", np.nan) for m in methods], 0.4, label="regbayes",
           color="#1f77b4")
    ax.bar(xs + 0.2, [PAPER[m][0] for m in methods], 0.4, label="paper 001", color="#bbbbbb")
    ax.set_xticks(xs, [PAPER_LABELS[m] for m in methods], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("test accuracy (%)")
    ax.set_title("protein folds" + (" (stand-in)" if record.get("stand_in") else ""))
    ax.legend(fontsize=7)

    n_classes = len(np.unique(y_tr))
    text = (data_text(record, "the protein fold data (make_protein_fold_like)",
                      " (the data set's own training and test files)")
            + f"{len(y_tr)} training / {len(y_te)} test rows, {X_tr.shape[1]} standardised features, "
            f"{n_classes} classes{' (quick run)' if quick else ''}; {folds}-fold cross-validation on the training "
            "rows (grids in the JSON; InfiniteSVC with fixed parameters). F1: macro average. Time: final fit plus "
            "test prediction, cross-validation excluded; timings on a shared CPU are noisy.")
    return finish(out_dir, NAME, TITLE, start, fig, table, text, {
        "settings": {"quick": quick, "seed": seed, "n_folds": folds, "data": record, "grids": grids,
                     "fixed_params": fixed, "n_train": int(len(y_tr)), "n_test": int(len(y_te)),
                     "n_features": int(X_tr.shape[1]), "n_classes": n_classes},
        "results": results,
        "paper": {m: {"accuracy": p[0], "f1": p[1], "seconds": p[2], "paper_name": PAPER_LABELS[m]}
                  for m, p in PAPER.items()},
    })
