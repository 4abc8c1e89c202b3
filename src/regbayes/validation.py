"""Argument checks shared by the whole library: clear errors that name the argument.

Every check takes the argument's name first, then its value; the value checks return
the value converted (an int, a float, a dtype). Estimators declare their parameters with
scikit-learn's ``_parameter_constraints`` and use these for data-dependent checks.
"""
from __future__ import annotations

import numbers
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp


def check_positive(name: str, value, allow_none: bool = False):
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")


def check_int(name: str, value, minimum: int = 1) -> int:
    """``value`` as an int; ``ValueError`` unless it is an integer >= ``minimum``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_real(name: str, value, *, low=None, low_inclusive: bool = True) -> float:
    """``value`` as a finite float, optionally bounded below."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if low is not None:
        if low_inclusive and value < low:
            raise ValueError(f"{name} must be >= {low}, got {value}")
        if not low_inclusive and value <= low:
            raise ValueError(f"{name} must be > {low}, got {value}")
    return value


def check_float_dtype(name: str, dtype) -> np.dtype:
    """``np.dtype(dtype)``, which must be float32 or float64."""
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise ValueError(f"{name} must be float32 or float64, got {dtype!r}") from exc
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"{name} must be float32 or float64, got {dt}")
    return dt


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


def is_text(X) -> bool:
    """Whether ``X`` is a collection of raw documents (strings) rather than a matrix.

    A single string is refused: a list of documents is meant."""
    if sp.issparse(X) or isinstance(X, np.ndarray) and X.dtype.kind not in "OU":
        return False
    if isinstance(X, str):
        raise ValueError("X is a single string; pass a list of documents")
    try:
        first = next(iter(X))
    except (TypeError, StopIteration):
        return False
    return isinstance(first, str)


#: The largest word count :func:`check_counts` takes: 2**53, beyond which float64 counts are not exact integers.
MAX_COUNT = 2**53


def check_counts(X, model: str = "MedLDA"):
    """CSR int64 copy of a word-count matrix (duplicates summed, zeros dropped); refuses
    negative, non-integer or non-finite counts, naming ``model`` in the message."""
    values = X.data if sp.issparse(X) else np.asarray(X)
    if values.size and not np.all(np.isfinite(values)):
        raise ValueError(f"X contains NaN or infinity; {model} needs word counts")
    if values.size and values.min() < 0:
        raise ValueError(f"Negative values in data passed to {model}: X contains negative counts; word counts must be >= 0")
    if values.size and values.max() > MAX_COUNT:
        raise ValueError(f"X holds a count of {values.max():.3g}, too large for {model}: counts are integers up to "
                         f"{MAX_COUNT} (2**53, the exact integers of float64)")
    if values.size and np.any(values != np.round(values)):
        raise ValueError(f"X contains non-integer counts; {model} needs integer word counts (use a CountVectorizer)")
    X = sp.csr_matrix(X, dtype=np.int64)
    X.sum_duplicates()
    X.eliminate_zeros()
    return X


def check_labels(y):
    """scikit-learn's ``check_classification_targets``, with a clear ``ValueError`` for labels
    of mixed types (numbers and strings), which cannot be sorted into classes."""
    from sklearn.utils.multiclass import check_classification_targets

    try:
        check_classification_targets(y)
    except TypeError as exc:
        kinds = sorted({type(v).__name__ for v in np.asarray(y, dtype=object).ravel()})
        raise ValueError(f"y mixes label types ({', '.join(kinds)}); the labels must be all numbers or all "
                         f"strings") from exc


#: Bounds on the largest absolute feature value of a model computed in float32 (squares and
#: sums of squares stay finite and above float32's smallest normal number) and in float64.
FLOAT32_SCALE = (1e-15, 1e15)
FLOAT64_LARGEST = 1e100


def _largest_magnitude(X) -> float:
    values = X.data if sp.issparse(X) else np.asarray(X)
    return float(np.max(np.abs(values))) if values.size else 0.0


def check_feature_scale(X, model: str, *, largest: float, smallest: float = 0.0):
    """Refuse features (finite, dense or sparse) whose largest absolute value is above
    ``largest``, or not zero and below ``smallest``: the range where ``model``'s arithmetic
    (squares and sums in its working precision) stays finite and non-zero."""
    top = _largest_magnitude(X)
    if top > largest:
        raise ValueError(f"X has values up to {top:.3g} in absolute value, too large for {model} (at most {largest:g}): "
                         f"its priors are on the scale of standardised features; rescale X (e.g. StandardScaler)")
    if 0 < top < smallest:
        raise ValueError(f"X's values are at most {top:.3g} in absolute value, too small for {model} (the largest must be at "
                         f"least {smallest:g}): its priors are on the scale of standardised features; rescale X "
                         f"(e.g. StandardScaler)")


@contextmanager
def scale_errors(X, model: str):
    """Turn a numerical failure (``LinAlgError``) of ``model``'s fit into a ``ValueError`` that
    names the scale of the features, its usual cause."""
    try:
        yield
    except np.linalg.LinAlgError as exc:
        raise ValueError(f"{model}'s fit failed numerically ({exc}) on features with values up to "
                         f"{_largest_magnitude(X):.3g} in absolute value: its priors are on the scale of standardised "
                         f"features; rescale X (e.g. StandardScaler)") from exc
