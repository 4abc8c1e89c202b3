"""The protein fold data of Ding and Dubchak (2001): reading its files, and a generated
stand-in of the same shape.

Paper 001, "Results on Real Datasets" (Table 3), and paper 000 Section 5.3: 698 proteins,
each in one of 27 SCOP folds, described by "its percentage composition of 20 amino acids
as well as its length" (21 features); the previous setup's split is 313 training and 385
test proteins. No paper equation is implemented here.

Files. Two layouts are read, detected from the first data line of each file:

* svmlight / LIBSVM (``label index:value ...``, one-based indices), the layout in which
  such data sets are usually redistributed;
* a plain table: one protein a line, the fold label (an integer) first, then the
  feature values, separated by whitespace or commas; blank lines and lines starting
  with ``#`` are skipped.

The canonical files could not be checked offline (no copy was at hand when this was
written), so which of the two layouts, and which feature columns, they hold is not
pinned: :func:`load_protein_fold` reads both files, checks they agree, and with
``n_features=21`` (the paper's) refuses files of another width. ``features`` selects
columns of wider files (e.g. the composition and length columns out of a file holding
Ding and Dubchak's other feature sets too).

Stand-in. :func:`make_protein_fold_like` generates data of the same shape (27 classes,
20 composition percentages summing to 100 plus a length, 313 / 385 rows); each fold is a
mixture of 1 to 3 families with their own mean composition and typical length, so that
a mixture of classifiers has structure to find. It is not the real data.
"""
from __future__ import annotations

import io
import os
from typing import NamedTuple

import numpy as np

from ._compression import names_its_file, open_decompressed
from .svmlight import load_svmlight
from ..validation import check_float_dtype, check_int

__all__ = [
    "AMINO_ACIDS",
    "PROTEIN_FOLD_FEATURES",
    "PROTEIN_FOLD_N_CLASSES",
    "PROTEIN_FOLD_N_TEST",
    "PROTEIN_FOLD_N_TRAIN",
    "ProteinFoldData",
    "load_protein_fold",
    "make_protein_fold_like",
    "read_protein_fold_file",
]

AMINO_ACIDS = "ACDEFGHIKLMNPQRSTVWY"
#: The paper's 21 features: percentage of each amino acid, then the sequence length.
PROTEIN_FOLD_FEATURES = tuple(f"pct_{a}" for a in AMINO_ACIDS) + ("length",)
PROTEIN_FOLD_N_TRAIN = 313
PROTEIN_FOLD_N_TEST = 385
PROTEIN_FOLD_N_CLASSES = 27


class ProteinFoldData(NamedTuple):
    """Training and test rows: ``X_train`` (313, 21), ``X_test`` (385, 21) for the
    paper's data, ``y_train``, ``y_test`` (int64 fold labels), ``feature_names``,
    ``source`` (the files read, or "generated") and ``stand_in`` (True for
    :func:`make_protein_fold_like`)."""

    X_train: np.ndarray
    X_test: np.ndarray
    y_train: np.ndarray
    y_test: np.ndarray
    feature_names: tuple
    source: str
    stand_in: bool


def _first_data_line(path) -> str:
    with open_decompressed(path) as raw, io.TextIOWrapper(raw, encoding="ascii", errors="replace") as f:
        for line in f:
            text = line.strip()
            if text and not text.startswith("#"):
                return text
    raise ValueError(f"{path} contains no data rows")


def _read_table(path, dtype):
    with open_decompressed(path) as raw, io.TextIOWrapper(raw, encoding="ascii") as f:
        rows = []
        for number, line in enumerate(f, start=1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            try:
                rows.append([float(v) for v in text.replace(",", " ").split()])
            except ValueError:
                raise ValueError(f"{path}, line {number}: not numbers separated by whitespace or commas: "
                                 f"{text[:60]!r}") from None
            if len(rows[-1]) != len(rows[0]):
                raise ValueError(f"{path}, line {number}: {len(rows[-1])} columns, the first row has {len(rows[0])}")
    table = np.asarray(rows, dtype=np.float64)
    if table.shape[1] < 2:
        raise ValueError(f"{path}: a row needs the fold label and at least one feature, found {table.shape[1]} column(s)")
    return table[:, 1:].astype(dtype), table[:, 0]


@names_its_file("path")
def read_protein_fold_file(path, *, dtype=np.float64):
    """``(X, y)`` of one file in either layout of the module docstring: ``X`` a dense
    ``dtype`` array, ``y`` int64. Raises ValueError for a file in neither layout, with
    non-integer labels or non-finite values."""
    dt = check_float_dtype("dtype", dtype)
    path = os.fspath(path)
    first = _first_data_line(path)
    if ":" in first:
        try:
            X, y = load_svmlight(path, dtype=dt, zero_based=False)
        except ValueError as exc:
            raise ValueError(f"Could not parse {path} as svmlight/LIBSVM: {exc}") from exc
        X = X.toarray()
    else:
        X, y = _read_table(path, dt)
    y = np.asarray(y, dtype=np.float64)
    if not (np.all(np.isfinite(y)) and np.all(y == np.round(y))):
        raise ValueError(f"{path}: the fold labels (first column) must be integers")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{path}: the features hold NaN or infinity")
    return X, y.astype(np.int64)


@names_its_file("train", "test")
def load_protein_fold(train, test, *, n_features=21, features=None, dtype=np.float64) -> ProteinFoldData:
    """Ding and Dubchak's training and test files (paper 001, Table 3: 313 / 385 rows).

    Parameters
    ----------
    train, test : path
        The two files, plain or gzip/bz2/xz-compressed, in either layout of the module
        docstring (each file's layout is detected on its own).
    n_features : int or None, default=21
        The width required after ``features`` is applied (the paper's 21: 20 amino-acid
        percentages and the length); None accepts any width.
    features : sequence of int, optional
        Zero-based feature columns to keep (in that order), for files holding more
        columns than the paper used.
    dtype : float32 or float64

    Returns
    -------
    ProteinFoldData
        ``stand_in`` False, ``source`` "TRAIN,TEST".

    Raises
    ------
    ValueError
        A file in neither layout, of another width than the other file or than
        ``n_features``, a column of ``features`` out of range, or labels that are not
        integers.
    """
    if n_features is not None:
        n_features = check_int("n_features", n_features)
    X_train, y_train = read_protein_fold_file(train, dtype=dtype)
    X_test, y_test = read_protein_fold_file(test, dtype=dtype)
    width = max(X_train.shape[1], X_test.shape[1])
    if X_train.shape[1] != X_test.shape[1]:
        # svmlight files omit trailing zero features: widen the narrower one
        if ":" not in _first_data_line(train) + _first_data_line(test):
            raise ValueError(f"the training file has {X_train.shape[1]} features and the test file "
                             f"{X_test.shape[1]}; they must have the same columns")
        X_train = np.pad(X_train, ((0, 0), (0, width - X_train.shape[1])))
        X_test = np.pad(X_test, ((0, 0), (0, width - X_test.shape[1])))
    names = PROTEIN_FOLD_FEATURES if width == len(PROTEIN_FOLD_FEATURES) else tuple(f"x{j}" for j in range(width))
    if features is not None:
        cols = np.asarray(features)
        if cols.ndim != 1 or cols.size == 0 or cols.dtype.kind not in "iu" or cols.min() < 0 or cols.max() >= width:
            raise ValueError(f"features must be a non-empty list of column indices in 0..{width - 1}, got {features!r}")
        X_train, X_test = X_train[:, cols], X_test[:, cols]
        names = tuple(names[j] for j in cols) if len(cols) != len(PROTEIN_FOLD_FEATURES) else PROTEIN_FOLD_FEATURES
        width = len(cols)
    if n_features is not None and width != n_features:
        raise ValueError(f"the files hold {width} features, expected {n_features} (paper 001 uses 21: 20 amino-acid "
                         "percentages and the length); pass features=[...] to choose columns or n_features=None")
    return ProteinFoldData(X_train, X_test, y_train, y_test, names, f"{os.fspath(train)},{os.fspath(test)}", False)


def make_protein_fold_like(n_train: int = PROTEIN_FOLD_N_TRAIN, n_test: int = PROTEIN_FOLD_N_TEST, *,
                           n_classes: int = PROTEIN_FOLD_N_CLASSES, random_state=0) -> ProteinFoldData:
    """A generated stand-in of the protein fold data (not the real data).

    Fold k has 1 to 3 families; family f has a mean composition ``p_f ~ Dirichlet(120 b)``
    around a shared background ``b ~ Dirichlet(20 * 1)`` and a median length
    ``exp(N(log 200, 0.4^2))``. A protein of family f has composition
    ``100 * Dirichlet(80 p_f)`` (percentages summing to 100) and length
    ``round(median * exp(N(0, 0.3^2)))``. Fold sizes are unequal (proportions
    ``~ Dirichlet(3 * 1)``), every fold with at least 5 training and 1 test protein.

    Returns :class:`ProteinFoldData` with ``stand_in`` True and ``source`` "generated".
    """
    n_train = check_int("n_train", n_train)
    n_test = check_int("n_test", n_test)
    n_classes = check_int("n_classes", n_classes)
    if n_classes < 2:
        raise ValueError(f"n_classes must be at least 2, got {n_classes}")
    if n_train < 5 * n_classes or n_test < n_classes:
        raise ValueError(f"n_train must be at least 5 * n_classes ({5 * n_classes}) and n_test at least n_classes "
                         f"({n_classes}); got n_train={n_train}, n_test={n_test}")
    rng = np.random.default_rng(random_state)
    background = rng.dirichlet(np.full(len(AMINO_ACIDS), 20.0))
    n_families = rng.integers(1, 4, size=n_classes)
    family_means = [rng.dirichlet(120.0 * background, size=m) for m in n_families]
    family_lengths = [np.exp(rng.normal(np.log(200.0), 0.4, size=m)) for m in n_families]
    share = rng.dirichlet(np.full(n_classes, 3.0))

    def counts(n, minimum):
        extra = rng.multinomial(n - minimum * n_classes, share)
        return extra + minimum

    def draw(sizes):
        X, y = [], []
        for k, size in enumerate(sizes):
            fam = rng.integers(0, n_families[k], size=size)
            comp = np.stack([rng.dirichlet(80.0 * family_means[k][f]) for f in fam]) if size else np.empty((0, 20))
            length = np.round(family_lengths[k][fam] * np.exp(rng.normal(0.0, 0.3, size=size)))
            X.append(np.column_stack([100.0 * comp, np.maximum(length, 20.0)]))
            y.append(np.full(size, k + 1, dtype=np.int64))
        X, y = np.concatenate(X), np.concatenate(y)
        order = rng.permutation(len(y))
        return X[order], y[order]

    X_train, y_train = draw(counts(n_train, 5))
    X_test, y_test = draw(counts(n_test, 1))
    return ProteinFoldData(X_train, X_test, y_train, y_test, PROTEIN_FOLD_FEATURES, "generated", True)
