"""Input checks shared by the estimators: clear errors that name the problem."""
from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp


def check_positive(name: str, value, allow_none: bool = False):
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")


def check_int(name: str, value, minimum: int):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")


def check_bool(name: str, value):
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")


def check_choice(name: str, value, choices):
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}; choose one of {', '.join(repr(c) for c in choices)}")


def check_finite_features(X):
    """Refuse NaN or infinity in X (dense or sparse) with the location of the first bad entry."""
    values = X.data if sp.issparse(X) else np.asarray(X)
    bad = ~np.isfinite(values)
    if bad.any():
        if sp.issparse(X):
            raise ValueError("X contains NaN or infinity (in the stored sparse entries); clean or impute it first")
        row, col = np.argwhere(bad)[0][:2] if values.ndim == 2 else (np.argwhere(bad)[0][0], 0)
        raise ValueError(f"X contains NaN or infinity (first at row {row}, column {col}); clean or impute it first")
