"""Tests of make_higgs_like: shape, dtypes, standardisation, balance, the ~64 % linear
accuracy it is designed for (module docstring: 1/2 + arctan(1/sqrt(1.2^2 + 1.7^2))/pi),
determinism, and speed/memory at 10^6 rows."""

import time

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from regbayes.datasets import make_higgs_like


@pytest.fixture(scope="module")
def higgs_200k():
    return make_higgs_like(200_000, random_state=0)


def test_shape_dtype_labels(higgs_200k):
    X, y = higgs_200k
    assert X.shape == (200_000, 28) and X.dtype == np.float32
    assert y.shape == (200_000,) and y.dtype == np.int64
    assert set(np.unique(y)) == {0, 1}
    assert 0.45 < y.mean() < 0.55  # roughly balanced (HIGGS: 53 % signal)


def test_columns_standardised_and_uncorrelated(higgs_200k):
    X = higgs_200k[0].astype(np.float64)
    # Standard error of a column mean is 1/sqrt(2e5) = 0.0022; of a correlation, the same.
    np.testing.assert_allclose(X.mean(axis=0), 0.0, atol=0.012)
    np.testing.assert_allclose(X.std(axis=0), 1.0, atol=0.02)
    corr = np.corrcoef(X.T)
    assert np.max(np.abs(corr - np.eye(28))) < 0.015


def test_linear_classifier_accuracy_like_higgs(higgs_200k):
    X, y = higgs_200k
    clf = LogisticRegression(max_iter=500).fit(X[:100_000], y[:100_000])
    accuracy = clf.score(X[100_000:], y[100_000:])
    assert 0.60 < accuracy < 0.70, accuracy
    # The high-level columns (last 7) carry most of the linear signal, as in HIGGS.
    low_only = LogisticRegression(max_iter=500).fit(X[:100_000, :21], y[:100_000])
    assert low_only.score(X[100_000:, :21], y[100_000:]) < accuracy - 0.05


def test_determinism_dtype_and_sizes():
    a = make_higgs_like(1000, random_state=3)
    b = make_higgs_like(1000, random_state=np.random.default_rng(3))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    X64, _ = make_higgs_like(1000, random_state=3, dtype=np.float64)
    assert X64.dtype == np.float64
    X, y = make_higgs_like(70_000, n_features=12, random_state=1)  # several blocks
    assert X.shape == (70_000, 12)
    assert not np.array_equal(X[:100], X[65_536:65_636])


def test_million_rows_fast_and_compact():
    t0 = time.perf_counter()
    X, y = make_higgs_like(10**6, random_state=0)
    elapsed = time.perf_counter() - t0
    assert X.nbytes == 10**6 * 28 * 4
    assert elapsed < 15.0, elapsed  # about 1-2 s on a 2-core machine


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_samples": 0}, "n_samples"),
        ({"n_features": 7}, "n_features"),
        ({"dtype": np.int32}, "dtype"),
        ({"dtype": "nonsense"}, "dtype"),
        ({"random_state": "x"}, "random_state"),
    ],
)
def test_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_higgs_like(**{"n_samples": 10, **kwargs})
