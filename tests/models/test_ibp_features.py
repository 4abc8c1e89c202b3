"""IBPFeatures: the unsupervised IBP linear-Gaussian model as a scikit-learn transformer."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from regbayes import IBPFeatures
from regbayes.algorithms.ilsvm import expected_features, pca_noise_variance


def _planted(seed, n=200, d=10, k=3):
    rng = np.random.default_rng(seed)
    Z = (rng.uniform(size=(n, k)) < 0.5).astype(float)
    X = Z @ (2.0 * rng.normal(size=(k, d))) + 0.3 * rng.normal(size=(n, d))
    return X, Z


def test_fit_transform_and_fitted_attributes():
    X, Z = _planted(0)
    copy = X.copy()
    est = IBPFeatures(truncation=8, random_state=0).fit(X)
    np.testing.assert_array_equal(X, copy)
    psi = est.transform(X)
    assert psi.shape == (200, 8) and est.components_.shape == (8, 10)
    assert np.all((psi >= 0) & (psi <= 1))
    assert 3 <= est.n_active_features_ <= 8
    assert len(est.elbo_) == est.n_iter_ and len(est.objective_) == est.n_iter_ + 1
    np.testing.assert_allclose(est.objective_[1:], -est.elbo_, rtol=1e-6)  # no classifier: F = -ELBO
    np.testing.assert_allclose(est.noise_variance_, pca_noise_variance(X, round(expected_features(1.0, 200))))
    # the planted features are linear functions of the inferred ones (R^2 of a least-squares fit)
    design = np.hstack([psi, np.ones((200, 1))])
    residual = Z - design @ np.linalg.lstsq(design, Z, rcond=None)[0]
    assert np.all(1 - residual.var(axis=0) / Z.var(axis=0) > 0.9)
    # same random_state, same result
    np.testing.assert_array_equal(IBPFeatures(truncation=8, random_state=0).fit(X).transform(X), psi)


def test_ibp_svm_pipeline_is_the_two_stage_baseline():
    X, Z = _planted(1, n=400)
    y = Z[:, 0].astype(int)
    pipe = make_pipeline(IBPFeatures(truncation=8, random_state=1), LinearSVC()).fit(X[:200], y[:200])
    assert pipe.score(X[200:], y[200:]) > 0.9


def test_sparse_input_gives_the_dense_result():
    X, _ = _planted(2)
    X[X < 0.5] = 0.0
    dense = IBPFeatures(truncation=8, n_iter=3, random_state=0).fit(X)
    sparse = IBPFeatures(truncation=8, n_iter=3, random_state=0).fit(sp.csr_matrix(X))
    np.testing.assert_allclose(sparse.components_, dense.components_)
    np.testing.assert_allclose(sparse.transform(sp.csr_matrix(X)), dense.transform(X))


def test_set_variances_and_their_estimates():
    X, _ = _planted(3)
    est = IBPFeatures(truncation=8, n_iter=3, noise_variance=0.5, loading_variance=2.0, random_state=0).fit(X)
    assert est.noise_variance_ == 0.5 and est.loading_variance_ == 2.0
    est = IBPFeatures(truncation=8, n_iter=3, noise_variance=0.5, estimate_variances=True, random_state=0).fit(X)
    assert est.noise_variance_ != 0.5 and est.noise_variance_ > 0 and est.loading_variance_ > 0


@pytest.mark.parametrize("params, message", [
    ({"truncation": 0}, "truncation"), ({"alpha": 0.0}, "alpha"), ({"alpha": -1.0}, "alpha"),
    ({"noise_variance": 0.0}, "noise_variance"), ({"loading_variance": -1.0}, "loading_variance"),
    ({"n_iter": 0}, "n_iter"), ({"tol": -1.0}, "tol"),
])
def test_bad_parameters_are_named(params, message):
    X, _ = _planted(4, n=20)
    with pytest.raises(ValueError, match=message):
        IBPFeatures(**params).fit(X)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input_is_refused_and_nothing_is_changed(bad):
    X, _ = _planted(5)
    X[3, 2] = bad
    copy = X.copy()
    with pytest.raises(ValueError, match="NaN|infinity"):
        IBPFeatures().fit(X)
    np.testing.assert_array_equal(X, copy)
    est = IBPFeatures(truncation=8, n_iter=2).fit(np.nan_to_num(X, posinf=0.0))
    with pytest.raises(ValueError, match="NaN|infinity"):
        est.transform(X)
