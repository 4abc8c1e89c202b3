"""The Wisconsin diagnostic breast-cancer data (569 x 30, bundled with scikit-learn),
split and standardised for quick, download-free tests of the binary classifiers.

No paper equation: a real, small, nearly linearly separable data set. The scaler is
fitted on the training part only, so no test-set statistic leaks into training.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from ..rng import int_seed

__all__ = ["load_breast_cancer_standardized"]


def load_breast_cancer_standardized(test_size=0.3, random_state=0):
    """Stratified train/test split of the breast-cancer data, standardised with the
    training part's mean and standard deviation.

    Parameters
    ----------
    test_size : float in (0, 1) or int
        Fraction (or number) of rows held out; at least 2 rows in each part.
    random_state : int or np.random.Generator
        Seed of the split (a Generator supplies one int seed).

    Returns
    -------
    X_train, X_test : float64 arrays with 30 columns
    y_train, y_test : int64 arrays in {0, 1} (0 = malignant, 1 = benign)
    """
    X, y = load_breast_cancer(return_X_y=True)
    n = X.shape[0]
    if isinstance(test_size, (bool, np.bool_)) or not isinstance(test_size, numbers.Real):
        raise ValueError(f"test_size must be a float in (0, 1) or an int, got {test_size!r}")
    if isinstance(test_size, numbers.Integral):
        test_size = int(test_size)
        n_test = test_size
    else:
        test_size = float(test_size)
        if not 0.0 < test_size < 1.0:
            raise ValueError(f"test_size as a float must be in (0, 1), got {test_size}")
        n_test = int(np.ceil(test_size * n))
    if not 2 <= n_test <= n - 2:
        raise ValueError(
            f"test_size={test_size} leaves {n_test} of {n} rows for testing; the stratified "
            f"split needs between 2 and {n - 2}"
        )
    seed = int_seed(random_state)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=test_size, random_state=seed, stratify=y
    )
    scaler = StandardScaler().fit(X_train)
    return (
        scaler.transform(X_train),
        scaler.transform(X_test),
        y_train.astype(np.int64),
        y_test.astype(np.int64),
    )
