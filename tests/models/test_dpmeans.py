"""DPMeansSVC: DP-means (Kulis & Jordan 2012) then one exact linear SVM per cluster."""
import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from regbayes.algorithms.svm_mixture import solve_eta
from regbayes.potentials.bregman import divergence_to
from regbayes.potentials.svm_mixture import ComponentSVM
from regbayes.models.dpmeans import DPMeansSVC
from regbayes.models.m2dpm import M2DPM


def _blobs(rng, n_per, centers, n_classes=2):
    X, y, z = [], [], []
    for k, c in enumerate(centers):
        Xk = c + 0.5 * rng.standard_normal((n_per, centers.shape[1]))
        Wk = rng.standard_normal((n_classes, centers.shape[1]))
        yk = np.argmax((Xk - c) @ Wk.T, axis=1)
        X.append(Xk), y.append(yk), z.append(np.full(n_per, k))
    return np.vstack(X), np.concatenate(y), np.concatenate(z)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_recovers_separated_clusters(n_classes):
    rng = np.random.default_rng(n_classes)
    centers = np.array([[0, 0], [30, 0], [0, 30], [30, 30]], dtype=float)  # all far from the global mean
    X, y, z = _blobs(rng, 40, centers, n_classes)
    model = DPMeansSVC(cluster_penalty=20.0, C=0.5, random_state=0).fit(X, y)
    assert model.n_components_ == 4
    assert adjusted_rand_score(z, model.labels_) == 1.0
    assert model.score(X, y) > 0.9


@pytest.mark.parametrize("seed", range(6))
def test_dp_means_objective_never_increases(seed):
    # Each DP-means pass (assign, then means) lowers sum D + lambda K (Kulis & Jordan 2012,
    # Theorem 3.1); only floating-point rounding may raise it: relative 1e-12.
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((120, 3)) * 4
    y = rng.integers(0, 2, 120)
    model = DPMeansSVC(cluster_penalty=float(rng.uniform(2, 30)), max_iter=15, tol=1e-15, random_state=seed).fit(X, y)
    obj = np.asarray(model.objective_)
    assert np.all(np.diff(obj) <= 1e-12 * obj[:-1])
    final = sum(divergence_to("euclidean", X[model.labels_ == k], c).sum() for k, c in enumerate(model.cluster_centers_))
    assert obj[-1] == pytest.approx(final + model.cluster_penalty * model.n_components_, rel=1e-12)


def test_cluster_classifiers_are_m2dpm_eta_steps():
    # With the clusters fixed, each cluster's SVM is M2DPM's exact eta-step on its points.
    rng = np.random.default_rng(5)
    X, y, _ = _blobs(rng, 30, np.array([[0.0, 0.0], [10.0, 10.0]]))
    model = DPMeansSVC(cluster_penalty=10.0, C=0.3, prior_scale=2.0, random_state=0).fit(X, y)
    ref = M2DPM(C=0.3, prior_scale=2.0, max_iter=1).fit(X, y)  # same feature shift and scale
    Xt = ref._features(X)
    yk = np.where(y == 1, 1.0, -1.0)
    svm = ComponentSVM(n_classes=2, C=0.3, margin=1.0, prior_scale=2.0)
    for k in range(model.n_components_):
        members = model.labels_ == k
        assert np.allclose(model._W[k], solve_eta(svm, Xt[members], yk[members], None), atol=1e-8)


def test_same_random_state_same_result():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((100, 2)) * 5
    y = rng.integers(0, 2, 100)
    a = DPMeansSVC(cluster_penalty=4.0, random_state=2).fit(X, y)
    b = DPMeansSVC(cluster_penalty=4.0, random_state=2).fit(X, y)
    assert np.array_equal(a.labels_, b.labels_) and np.array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize(
    "params, message",
    [({"cluster_penalty": 0.0}, "cluster_penalty"), ({"C": 0}, "'C' parameter of DPMeansSVC must be"),
     ({"divergence": "l1"}, "'divergence' parameter"), ({"divergence": "kl"}, "nonnegative")],
)
def test_bad_input_errors(params, message):
    X = np.random.default_rng(0).standard_normal((10, 2))
    with pytest.raises(ValueError, match=message):
        DPMeansSVC(**params).fit(X, np.tile([0, 1], 5))
