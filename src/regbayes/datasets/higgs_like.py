"""A synthetic stand-in shaped like the UCI HIGGS data set.

The real HIGGS set (Baldi, Sadowski and Whiteson, Nature Communications 5:4308, 2014;
used by paper 000, Section 5.1.2, for the Bayesian linear SVM at 10^7 rows) has 28
features: 21 low-level kinematic features and 7 high-level features that are nonlinear
functions of them; classes are nearly balanced and a linear classifier reaches about
64 % accuracy. ``make_higgs_like`` reproduces that shape without the 2.6 GB download:

* low-level features z ~ N(0, I) (n_low = n_features - n_features // 4 columns);
* high-level feature j is a function of the low-level pair (z_2j, z_2j+1): the radius
  sqrt(z_2j^2 + z_2j+1^2) (Rayleigh) for even j, |z_2j * z_2j+1| for odd j, each
  standardised with its exact population mean and variance, so all columns have mean 0,
  variance 1 and are mutually uncorrelated;
* score s = w^T x + a * q(z) + sigma * e, with ||w|| = 1 (80 % of the weight on the
  high-level features), q a sum of products of further low-level pairs scaled to unit
  variance (invisible to a linear classifier: it is uncorrelated with every column),
  a = 1.2, sigma = 1.7 and e ~ N(0, 1); y = 1[s > 0].

For Gaussian parts the best linear rule, sign(w^T x), is right with probability
1/2 + arctan(1 / sqrt(a^2 + sigma^2)) / pi, about 0.65; a rule that also sees q reaches
about 0.74. Rows are generated in blocks so that memory stays at the output arrays.
"""

from __future__ import annotations

import numpy as np

from ..rng import check_generator
from ..validation import check_float_dtype, check_int

__all__ = ["make_higgs_like"]

_NONLINEAR_SCALE = 1.2
_NOISE_SCALE = 1.7
_HIGH_LEVEL_SHARE = 0.8
_BLOCK_ROWS = 1 << 16

# Exact moments of the two high-level feature types built from independent N(0, 1) pairs.
_RAYLEIGH_MEAN = np.sqrt(np.pi / 2.0)
_RAYLEIGH_SD = np.sqrt(2.0 - np.pi / 2.0)
_ABSPROD_MEAN = 2.0 / np.pi
_ABSPROD_SD = np.sqrt(1.0 - 4.0 / np.pi**2)


def _layout(n_features: int):
    n_high = n_features // 4
    n_low = n_features - n_high
    first_free = 2 * n_high
    n_pairs = (n_low - first_free) // 2
    return n_low, n_high, first_free, n_pairs


def make_higgs_like(
    n_samples: int = 10**6,
    n_features: int = 28,
    random_state=None,
    dtype=np.float32,
):
    """Generate a HIGGS-shaped binary classification set (see the module docstring).

    Parameters
    ----------
    n_samples : int
    n_features : int >= 8
        28 as in HIGGS (21 low-level + 7 high-level columns).
    random_state : None, int or np.random.Generator
        The draws depend on ``dtype`` (float32 and float64 give different data).
    dtype : float32 (default) or float64

    Returns
    -------
    X : ndarray (n_samples, n_features) of ``dtype``; columns have population mean 0
        and variance 1.
    y : ndarray (n_samples,) int64 in {0, 1}, roughly balanced.
    """
    n_samples = check_int("n_samples", n_samples)
    n_features = check_int("n_features", n_features, 8)
    dt = check_float_dtype("dtype", dtype)
    rng = check_generator(random_state)

    n_low, n_high, first_free, n_pairs = _layout(n_features)
    even = (np.arange(n_high) % 2 == 0)
    mean = np.where(even, _RAYLEIGH_MEAN, _ABSPROD_MEAN).astype(dt)
    sd = np.where(even, _RAYLEIGH_SD, _ABSPROD_SD).astype(dt)
    sign = np.where(np.arange(n_low) % 2 == 0, 1.0, -1.0)
    w = np.concatenate([
        sign * np.sqrt((1.0 - _HIGH_LEVEL_SHARE) / n_low),
        np.full(n_high, np.sqrt(_HIGH_LEVEL_SHARE / n_high)),
    ]).astype(dt)
    qa = np.arange(first_free, first_free + 2 * n_pairs, 2)
    qb = qa + 1
    q_scale = dt.type(1.0 / np.sqrt(n_pairs))

    X = np.empty((n_samples, n_features), dtype=dt)
    y = np.empty(n_samples, dtype=np.int64)
    for start in range(0, n_samples, _BLOCK_ROWS):
        stop = min(start + _BLOCK_ROWS, n_samples)
        m = stop - start
        z = rng.standard_normal((m, n_low), dtype=dt)
        a, b = z[:, 0:first_free:2], z[:, 1:first_free:2]
        high = np.where(even, np.hypot(a, b), np.abs(a * b))
        high -= mean
        high /= sd
        block = X[start:stop]
        block[:, :n_low] = z
        block[:, n_low:] = high
        score = block @ w
        score += (_NONLINEAR_SCALE * q_scale) * np.einsum("ij,ij->i", z[:, qa], z[:, qb])
        score += _NOISE_SCALE * rng.standard_normal(m, dtype=dt)
        y[start:stop] = score > 0
    return X, y
