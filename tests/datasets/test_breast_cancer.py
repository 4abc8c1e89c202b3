"""load_breast_cancer_standardized: stratified split, scaler fitted on training rows only."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from regbayes.datasets import load_breast_cancer_standardized


def test_shapes_types_and_labels():
    X_tr, X_te, y_tr, y_te = load_breast_cancer_standardized()
    assert X_tr.shape == (398, 30) and X_te.shape == (171, 30)
    assert X_tr.dtype == X_te.dtype == np.float64
    assert y_tr.dtype == y_te.dtype == np.int64
    assert set(np.unique(y_tr)) == set(np.unique(y_te)) == {0, 1}
    # stratified: class proportions agree to within one row
    assert abs(y_tr.mean() - y_te.mean()) < 1.0 / len(y_te) + 1.0 / len(y_tr)


def test_standardised_with_training_statistics_only():
    X_tr, X_te, y_tr, y_te = load_breast_cancer_standardized(test_size=0.3, random_state=0)
    np.testing.assert_allclose(X_tr.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(X_tr.std(axis=0), 1.0, rtol=1e-12)
    # The test part is not centred on its own statistics...
    assert np.max(np.abs(X_te.mean(axis=0))) > 0.05
    # ...but is the raw test rows under the training rows' affine map.
    X, y = load_breast_cancer(return_X_y=True)
    idx_tr, idx_te = train_test_split(
        np.arange(len(y)), test_size=0.3, random_state=0, stratify=y
    )
    mu, sd = X[idx_tr].mean(axis=0), X[idx_tr].std(axis=0)
    np.testing.assert_allclose(X_te, (X[idx_te] - mu) / sd, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(y_te, y[idx_te])
    # Statistics of all rows (a leak) would give a different test matrix.
    leak = (X[idx_te] - X.mean(axis=0)) / X.std(axis=0)
    assert not np.allclose(X_te, leak, atol=1e-3)


def test_determinism_and_arguments():
    a = load_breast_cancer_standardized(random_state=4)
    b = load_breast_cancer_standardized(random_state=4)
    c = load_breast_cancer_standardized(random_state=5)
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[1], c[1])
    assert load_breast_cancer_standardized(test_size=100)[1].shape == (100, 30)
    g = load_breast_cancer_standardized(random_state=np.random.default_rng(0))
    assert g[0].shape == (398, 30)
    for bad in (0.0, 1.0, -0.1, 1, 568, 0.001, "0.3", True):
        with pytest.raises(ValueError, match="test_size"):
            load_breast_cancer_standardized(test_size=bad)
    with pytest.raises(ValueError, match="random_state"):
        load_breast_cancer_standardized(random_state=-1)
