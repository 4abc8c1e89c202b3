"""Argument checks shared by the data-set generators and loaders.

Nothing here implements a paper's equation: these helpers turn user arguments into
validated values (or clear ``ValueError``s) once, at the edge of each public function.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "check_generator",
    "int_seed",
    "check_positive_int",
    "check_real",
    "check_float_dtype",
]


def check_generator(random_state) -> np.random.Generator:
    """Return a ``np.random.Generator`` for ``random_state``.

    ``None`` gives fresh OS entropy, an ``int`` (>= 0) a seeded generator, and a
    ``Generator`` is returned as is (so its state advances: callers share the stream).
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (bool, np.bool_)):
        raise ValueError("random_state must be None, an int or a np.random.Generator, got a bool")
    if isinstance(random_state, numbers.Integral):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative int, got {random_state}")
        return np.random.default_rng(int(random_state))
    raise ValueError(
        "random_state must be None, an int or a np.random.Generator, "
        f"got {type(random_state).__name__}"
    )


def int_seed(random_state) -> int:
    """An int seed for APIs that take only ints (scikit-learn): an int is kept as is,
    so results equal the wrapped function's with that seed; a Generator (or None)
    supplies one draw."""
    rng = check_generator(random_state)
    if random_state is None or isinstance(random_state, np.random.Generator):
        return int(rng.integers(2**31 - 1))
    return int(random_state)


def check_positive_int(value, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an int, raising ``ValueError`` unless it is an integer >= minimum."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def check_real(value, name: str, *, low=None, low_inclusive: bool = True) -> float:
    """Return ``value`` as a finite float, optionally bounded below."""
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


def check_float_dtype(dtype, name: str = "dtype") -> np.dtype:
    """Return ``np.dtype(dtype)``, which must be float32 or float64."""
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise ValueError(f"{name} must be float32 or float64, got {dtype!r}") from exc
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"{name} must be float32 or float64, got {dt}")
    return dt
