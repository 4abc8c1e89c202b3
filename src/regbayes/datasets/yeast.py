"""The Yeast multi-label data (Elisseeff and Weston 2002) in Mulan's version, read offline
from the copy the ``river`` package ships.

Paper 002, Section 5.2.1 ("Scene and Yeast Data"; results in Table 2 and Figure 8):
2,417 genes, 103 real features (micro-array expression and phylogenetic profiles), 14
functional categories, each label a binary task of MT-iLSVM; 1,500 training and 917 test
examples. No paper equation is implemented here.

The file, ``river/datasets/yeast.csv.gz`` (shipped from river 0.26 on), is a CSV with the header ``Att1..Att103,
Class1..Class14`` and one gene a row (river says it matches OpenML data set 40597). Its
rows are Mulan's two files one after the other, **test first**: rows 0..916 are
``yeast-test.arff`` (917 rows) and rows 917..2416 are ``yeast-train.arff`` (1,500 rows),
row for row and value for value (compared with Mulan's two ARFF files). So Mulan's split is
*not* the first 1,500 rows: it is ``train = 917..2416`` and ``test = 0..916``, which is what
:func:`load_yeast` returns. Published statistics that the bundled file reproduces: label
cardinality 4.237 (4.228 on the training part, 4.252 on the test part), label density
0.303, 198 distinct label sets.
"""

from __future__ import annotations

import io
import os
from typing import NamedTuple

import numpy as np

from ._bundled import bundled_file
from ._compression import names_its_file, open_decompressed
from ..validation import check_float_dtype

__all__ = [
    "YeastData",
    "load_yeast",
    "YEAST_FEATURES",
    "YEAST_LABELS",
    "YEAST_N_TRAIN",
    "YEAST_N_TEST",
]

#: Column names of the bundled file, as in Mulan's ARFF header.
YEAST_FEATURES = tuple(f"Att{i}" for i in range(1, 104))
YEAST_LABELS = tuple(f"Class{i}" for i in range(1, 15))
#: Mulan's split: the file holds the 917 test rows, then the 1,500 training rows.
YEAST_N_TEST = 917
YEAST_N_TRAIN = 1500
_RIVER_FILE = ("datasets", "yeast.csv.gz")


class YeastData(NamedTuple):
    """The Yeast data in the bundled file's row order, with Mulan's split.

    ``X`` (2417, 103) float features, ``Y`` (2417, 14) int64 0/1 label indicators (column
    j is ``Class{j+1}``), ``train`` / ``test`` int64 row indices (Mulan's 1,500 / 917),
    ``feature_names``, ``label_names`` and ``source`` (the file read).
    """

    X: np.ndarray
    Y: np.ndarray
    train: np.ndarray
    test: np.ndarray
    feature_names: tuple
    label_names: tuple
    source: str

    def split(self):
        """``X_train, X_test, Y_train, Y_test`` (copies) of Mulan's split."""
        return self.X[self.train], self.X[self.test], self.Y[self.train], self.Y[self.test]


def _read_header(f, path) -> list[str]:
    header = f.readline().strip()
    names = [name.strip().strip('"') for name in header.split(",")]
    expected = list(YEAST_FEATURES + YEAST_LABELS)
    if names != expected:
        shown = ",".join(names[:3]) + (",..." if len(names) > 3 else "")
        raise ValueError(
            f"{path}: the header is not river's yeast layout ({len(expected)} columns Att1..Att103,"
            f"Class1..Class14); found {len(names)} columns starting {shown!r}"
        )
    return names


@names_its_file("path")
def load_yeast(path=None, *, dtype=np.float64) -> YeastData:
    """Mulan's Yeast multi-label set (2,417 x 103, 14 labels) and its 1,500 / 917 split.

    Parameters
    ----------
    path : path, optional
        A CSV file (plain or gzip/bz2/xz-compressed) with river's layout: the header
        ``Att1,...,Att103,Class1,...,Class14`` and 2,417 rows, Mulan's test file then its
        training file. Default: the ``yeast.csv.gz`` that the installed ``river``
        package ships (nothing is imported from river and nothing is downloaded).
    dtype : float32 or float64
        dtype of ``X``.

    Returns
    -------
    YeastData
        ``X``, ``Y`` (int64 0/1), ``train = arange(917, 2417)``, ``test = arange(917)``,
        names and source; ``.split()`` gives ``X_train, X_test, Y_train, Y_test``.

    Raises
    ------
    ModuleNotFoundError
        No ``path`` and ``river`` is not installed (the message gives the pip command).
    ValueError
        The file is not the yeast data in this layout (header, column count, labels other
        than 0/1, non-finite features, or not 2,417 rows).
    """
    dt = check_float_dtype("dtype", dtype)
    if path is None:
        path = bundled_file("river", _RIVER_FILE, "load_yeast", requirement="river>=0.26")
    path = os.fspath(path)
    with open_decompressed(path) as raw, io.TextIOWrapper(raw, encoding="ascii") as f:
        _read_header(f, path)
        try:
            table = np.loadtxt(f, delimiter=",", dtype=np.float64, ndmin=2)
        except ValueError as exc:
            raise ValueError(f"Could not parse {path} as the yeast CSV: {exc}") from exc
    n_columns = len(YEAST_FEATURES) + len(YEAST_LABELS)
    if table.shape[1] != n_columns:
        raise ValueError(f"{path}: expected {n_columns} columns, found {table.shape[1]}")
    n_rows = YEAST_N_TEST + YEAST_N_TRAIN
    if table.shape[0] != n_rows:
        raise ValueError(
            f"{path}: expected {n_rows} rows (Mulan's {YEAST_N_TEST} test rows then {YEAST_N_TRAIN} "
            f"training rows), found {table.shape[0]}; the split is positional and needs the whole file"
        )
    X, labels = table[:, : len(YEAST_FEATURES)], table[:, len(YEAST_FEATURES):]
    if not np.isin(labels, (0.0, 1.0)).all():
        raise ValueError(f"{path}: the label columns Class1..Class14 must hold 0 or 1 only")
    if not np.isfinite(X).all():
        raise ValueError(f"{path}: the feature columns hold NaN or infinity")
    return YeastData(
        X=X.astype(dt),
        Y=labels.astype(np.int64),
        train=np.arange(YEAST_N_TEST, n_rows, dtype=np.int64),
        test=np.arange(YEAST_N_TEST, dtype=np.int64),
        feature_names=YEAST_FEATURES,
        label_names=YEAST_LABELS,
        source=str(path),
    )
