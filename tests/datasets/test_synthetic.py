"""Tests of the paper generators: make_bayes_svm_2d (paper 000, Sec. 5.1.1),
make_dp_mixture_svm (paper 001, Settings I/II) and make_multiclass_blobs.

Frequency tests compare label counts with the model's probabilities: under the model
z = (count - sum p) / sqrt(sum p (1 - p)) is approximately N(0, 1); we require |z| < 4.5
per check (false alarm about 7e-6 each), and show the same statistic rejects a wrong
link function (|z| > 10), so the test has power.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from regbayes.datasets import (
    hinge_label_probability,
    make_bayes_svm_2d,
    make_dp_mixture_svm,
    make_multiclass_blobs,
)

Z_TOL = 4.5


def psi(y, f, c, margin):
    """Hinge pseudo-likelihood of paper 000, Sec. 3.3, written out directly."""
    return np.exp(-c * np.maximum(0.0, margin - y * f))


def binned_z(y_pos, p, n_bins=10):
    """z statistic of observed vs expected positives, overall and per p-decile."""
    edges = np.quantile(p, np.linspace(0, 1, n_bins + 1))
    idx = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, n_bins - 1)
    zs = []
    for b in [None, *range(n_bins)]:
        m = slice(None) if b is None else idx == b
        var = np.sum(p[m] * (1 - p[m]))
        zs.append((np.sum(y_pos[m]) - np.sum(p[m])) / np.sqrt(var))
    return np.array(zs)


def test_bayes_svm_2d_shapes_types_and_labels():
    X, y = make_bayes_svm_2d(random_state=0)
    assert X.shape == (1000, 2) and X.dtype == np.float64
    assert y.shape == (1000,) and y.dtype == np.int64
    assert set(np.unique(y)) == {-1, 1}
    assert X.min() >= 0.0 and X.max() < 1.0
    X, y, coef = make_bayes_svm_2d(50, random_state=1, return_coef=True)
    assert coef.shape == (2,) and coef.dtype == np.float64


def test_bayes_svm_2d_determinism_and_generator():
    a = make_bayes_svm_2d(300, random_state=7, return_coef=True)
    b = make_bayes_svm_2d(300, random_state=7, return_coef=True)
    c = make_bayes_svm_2d(300, random_state=np.random.default_rng(7), return_coef=True)
    d = make_bayes_svm_2d(300, random_state=8, return_coef=True)
    for u, v, w in zip(a, b, c):
        np.testing.assert_array_equal(u, v)
        np.testing.assert_array_equal(u, w)
    assert not np.array_equal(a[0], d[0])
    rng = np.random.default_rng(3)
    first = make_bayes_svm_2d(10, random_state=rng)[0]
    second = make_bayes_svm_2d(10, random_state=rng)[0]
    assert not np.array_equal(first, second)  # a Generator's stream advances


def test_hinge_label_probability_matches_psi_ratio_and_is_stable():
    f = np.linspace(-3, 3, 61)
    for c, margin in [(1.0, 1.0), (2.5, 0.5), (0.3, 0.0)]:
        expected = psi(1, f, c, margin) / (psi(1, f, c, margin) + psi(-1, f, c, margin))
        np.testing.assert_allclose(hinge_label_probability(f, c, margin), expected, rtol=1e-12)
    # Inside the margin band |f| <= l the log-odds is 2 c f; beyond it, c (l + f) for f > l.
    np.testing.assert_allclose(hinge_label_probability(0.25, 2.0, 1.0), 1 / (1 + np.exp(-1.0)))
    np.testing.assert_allclose(hinge_label_probability(5.0, 2.0, 1.0), 1 / (1 + np.exp(-12.0)))
    np.testing.assert_allclose(hinge_label_probability(-5.0, 2.0, 1.0), 1 / (1 + np.exp(12.0)))
    extreme = hinge_label_probability(np.array([-1e6, 1e6]), c=1e3, margin=1e3)
    assert np.all(np.isfinite(extreme))
    np.testing.assert_allclose(extreme, [0.0, 1.0], atol=1e-300)


@pytest.mark.parametrize("c, margin, prior_var", [(1.0, 1.0, 4.0), (3.0, 0.5, 1.0)])
def test_bayes_svm_2d_label_frequencies_match_psi(c, margin, prior_var):
    n = 200_000
    X, y, coef = make_bayes_svm_2d(
        n, c=c, margin=margin, prior_var=prior_var, random_state=11, return_coef=True
    )
    f = X @ coef
    p = psi(1, f, c, margin) / (psi(1, f, c, margin) + psi(-1, f, c, margin))
    z = binned_z(y == 1, p)
    assert np.all(np.abs(z) < Z_TOL), z
    # Power: a logistic link on the raw score would be rejected by the same statistic.
    wrong = 1.0 / (1.0 + np.exp(-c * f))
    assert np.max(np.abs(binned_z(y == 1, wrong))) > 10


def test_bayes_svm_2d_prior_variance_of_coef():
    # 3000 independent draws of eta; the sample variance of each coordinate has
    # standard error sqrt(2 / 2999) * var = 2.6 % of var; allow 5 SE (13 %).
    coefs = np.array([
        make_bayes_svm_2d(1, prior_var=0.5, random_state=s, return_coef=True)[2]
        for s in range(3000)
    ])
    np.testing.assert_allclose(coefs.var(axis=0), 0.5, rtol=0.13)
    assert np.all(np.abs(coefs.mean(axis=0)) < 5 * np.sqrt(0.5 / 3000))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_samples": 0}, "n_samples"),
        ({"n_samples": 2.5}, "n_samples"),
        ({"n_samples": True}, "n_samples"),
        ({"c": 0.0}, "c must be > 0"),
        ({"c": np.inf}, "finite"),
        ({"margin": -1.0}, "margin"),
        ({"prior_var": -1.0}, "prior_var"),
        ({"prior_var": "big"}, "prior_var"),
        ({"random_state": -3}, "random_state"),
        ({"random_state": "seed"}, "random_state"),
        ({"random_state": 1.5}, "random_state"),
    ],
)
def test_bayes_svm_2d_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_bayes_svm_2d(**kwargs)


def test_dp_mixture_setting_one():
    X, y, clusters, coef = make_dp_mixture_svm("I", random_state=0, return_clusters=True)
    assert X.shape == (1000, 10) and X.dtype == np.float64
    assert y.dtype == np.int64 and set(np.unique(y)) <= {-1, 1}
    assert clusters.min() == 1 and clusters.max() <= 10
    assert coef.shape == (10, 10)
    # CRP seats in order of creation: the first instance opens cluster 1, and every new
    # cluster id is one more than the largest seen so far.
    running_max = np.maximum.accumulate(clusters)
    assert clusters[0] == 1 and np.all(clusters <= np.concatenate([[1], running_max[:-1] + 1]))
    # Within-cluster mean (k, ..., k) and sd 0.5, for clusters with >= 30 members.
    for k in np.unique(clusters):
        Xk = X[clusters == k]
        if len(Xk) >= 30:
            np.testing.assert_allclose(Xk.mean(), k, atol=5 * 0.5 / np.sqrt(Xk.size))
            np.testing.assert_allclose(Xk.std(), 0.5, rtol=0.15)


def test_dp_mixture_setting_two_and_eq37_frequencies():
    X, y, clusters, coef = make_dp_mixture_svm("II", random_state=1, return_clusters=True)
    assert X.shape == (10000, 10)
    np.testing.assert_array_equal(np.bincount(clusters)[1:], np.full(10, 1000))
    k = clusters[:, None].astype(float)
    assert np.all(X >= k - 0.5) and np.all(X <= k + 0.5)
    score = np.sum(coef[clusters - 1] * (X - k), axis=1)
    p = 1.0 / (1.0 + np.exp(-score))  # eq. (37)
    z = binned_z(y == 1, p)
    assert np.all(np.abs(z) < Z_TOL), z
    # Power: ignoring the cluster offset mu_k (score on raw x) is rejected.
    wrong = 1.0 / (1.0 + np.exp(-np.sum(coef[clusters - 1] * X, axis=1)))
    assert np.max(np.abs(binned_z(y == 1, wrong))) > 10


def test_dp_mixture_determinism_and_errors():
    a = make_dp_mixture_svm("I", n_samples=200, random_state=5)
    b = make_dp_mixture_svm("I", n_samples=200, random_state=5)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert make_dp_mixture_svm("I", n_samples=500, max_clusters=3, random_state=0,
                               return_clusters=True)[2].max() <= 3
    with pytest.raises(ValueError, match="setting"):
        make_dp_mixture_svm("III")
    with pytest.raises(ValueError, match="alpha"):
        make_dp_mixture_svm("I", alpha=0.0)
    with pytest.raises(ValueError, match="sigma"):
        make_dp_mixture_svm("I", sigma=-1.0)


def test_multiclass_blobs_wraps_make_classification():
    X, y = make_multiclass_blobs(500, n_features=4, n_classes=5, class_sep=2.0, random_state=3)
    assert X.shape == (500, 4) and X.dtype == np.float64
    assert y.dtype == np.int64 and set(np.unique(y)) == set(range(5))
    X_ref, y_ref = make_classification(
        n_samples=500, n_features=4, n_informative=4, n_redundant=0, n_repeated=0,
        n_classes=5, n_clusters_per_class=1, class_sep=2.0, flip_y=0.0, random_state=3,
    )
    np.testing.assert_array_equal(X, X_ref)
    np.testing.assert_array_equal(y, y_ref)
    g1 = make_multiclass_blobs(50, 3, 3, random_state=np.random.default_rng(0))
    g2 = make_multiclass_blobs(50, 3, 3, random_state=np.random.default_rng(0))
    np.testing.assert_array_equal(g1[0], g2[0])
    with pytest.raises(ValueError, match="n_features"):
        make_multiclass_blobs(100, n_features=2, n_classes=5)
    with pytest.raises(ValueError, match="n_classes"):
        make_multiclass_blobs(100, n_features=2, n_classes=1)
    with pytest.raises(ValueError, match="class_sep"):
        make_multiclass_blobs(100, class_sep=0.0)


def test_dp_mixture_center_scale_draws_means_from_base_measure():
    # Means from N(0, tau^2 I): the RMS of the cluster means over K clusters x 10 features
    # estimates tau with relative standard error about 1/sqrt(2 K 10) (<= 0.09 for K >= 6);
    # rtol 0.35 is about four of them. Within-cluster sd stays sigma.
    tau = 5.0
    X, y, clusters, coef = make_dp_mixture_svm("I", n_samples=3000, alpha=3.0, max_clusters=50,
                                               center_scale=tau, random_state=3, return_clusters=True)
    means = np.array([X[clusters == k].mean(axis=0) for k in np.unique(clusters) if np.sum(clusters == k) >= 30])
    assert len(means) >= 6
    np.testing.assert_allclose(np.sqrt(np.mean(means**2)), tau, rtol=0.35)
    big = np.bincount(clusters).argmax()
    np.testing.assert_allclose(X[clusters == big].std(axis=0).mean(), 0.5, rtol=0.15)
    # The default (the paper's Setting I) is unchanged by the option's existence.
    for u, v in zip(make_dp_mixture_svm("I", n_samples=100, random_state=2),
                    make_dp_mixture_svm("I", n_samples=100, random_state=2, center_scale=None)):
        np.testing.assert_array_equal(u, v)
    with pytest.raises(ValueError, match="Setting I only"):
        make_dp_mixture_svm("II", center_scale=1.0)
    with pytest.raises(ValueError, match="center_scale"):
        make_dp_mixture_svm("I", center_scale=0.0)
