"""The Gibbs-classifier posterior builder: against the linear-SVM potential and BayesianSVC
(the same model written by hand), the minibatch estimate of eq. 7 row by row, the
subgradient at the hinge's kink, finite differences, and the non-linear example of the
docstring on two concentric circles."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from sklearn.datasets import make_classification

from regbayes import BayesianSVC
from regbayes.core import gibbs_posterior
from regbayes.inference import sample
from regbayes.potentials import SVMData, build_potential
from regbayes.potentials.minibatch import rows_with_replacement
from regbayes.precision import enable_x64
from regbayes.rng import make_key
from regbayes.samplers import ssgld

NU = 2.0


def linear(theta, X):
    return X @ theta[:-1] + theta[-1]


def gaussian_prior(theta):
    return -0.5 * jnp.sum(theta**2) / NU**2


@pytest.fixture(scope="module")
def binary():
    X, labels = make_classification(n_samples=200, n_features=4, n_informative=3, n_redundant=0, class_sep=1.0,
                                    random_state=0)
    return X.astype(np.float32), np.where(labels == 1, 1.0, -1.0).astype(np.float32)


def svm_data(X, y, C, margin):
    X1 = np.hstack([X, np.ones((X.shape[0], 1), X.dtype)])
    return SVMData(jnp.asarray(X1), jnp.asarray(y), jnp.asarray(C, jnp.float32), jnp.asarray(margin, jnp.float32),
                   jnp.asarray(NU, jnp.float32))


def test_linear_case_equals_the_linear_svm_potential(binary):
    X, y = binary
    post = gibbs_posterior(linear, gaussian_prior, X, y, C=0.7, margin=1.3, batch_size=32)
    reference = build_potential(32)
    data = svm_data(X, y, 0.7, 1.3)
    rng = np.random.default_rng(1)
    full, full_ref = jax.jit(post.potential.value_and_subgrad), jax.jit(reference.value_and_subgrad)
    mini, mini_ref = jax.jit(post.potential.stochastic_value_and_subgrad), jax.jit(reference.stochastic_value_and_subgrad)
    for _ in range(5):
        theta = jnp.asarray(rng.normal(size=5), jnp.float32)
        u, g = full(theta, post.data)
        u_ref, g_ref = full_ref(theta, data)
        np.testing.assert_allclose(u, u_ref, rtol=1e-5)
        np.testing.assert_allclose(g, g_ref, rtol=1e-5, atol=1e-4)
        key = jax.random.key(int(rng.integers(1000)))
        u, g = mini(key, theta, post.data)
        u_ref, g_ref = mini_ref(key, theta, data)
        np.testing.assert_allclose(u, u_ref, rtol=1e-5)
        np.testing.assert_allclose(g, g_ref, rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(post.potential.log_prior(theta, post.data), reference.log_prior(theta, data), rtol=1e-6)
        idx = jnp.arange(10)
        np.testing.assert_allclose(post.potential.log_lik_terms(theta, post.data, idx),
                                   reference.log_lik_terms(theta, data, idx), rtol=1e-5, atol=1e-6)
    assert post.potential.n_data(post.data) == 200 and post.potential.batch_size == 32


def test_linear_case_gives_bayesian_svc_draws(binary):
    """The same sampler, settings and key on the same model: BayesianSVC's draws. Warm-up
    shorter than 100 steps: no whitening and no step calibration, which for BayesianSVC
    measures the SVM potential's own minibatch noise (the builder's kernel runs without)."""
    X, y = binary
    clf = BayesianSVC(C=1.0, prior_scale=NU, sampler="ssgld", n_draws=100, n_warmup=60, n_chains=2, batch_size=50,
                      random_state=3).fit(X, y)
    post = gibbs_posterior(linear, gaussian_prior, X, y, C=1.0, margin=1.0, batch_size=50)
    result = sample(ssgld(post.potential, clf.preconditioner_), post.data, jnp.zeros((2, 5), jnp.float32), make_key(3),
                    n_warmup=clf.n_warmup_, n_draws=100, thin=clf.thin_, step_size=clf.step_size_,
                    initial_scale=clf.initial_scale_)
    draws = np.asarray(result.positions, np.float64)
    # float32 programs that differ in form (a vector-Jacobian product against an explicit
    # X^T r): equal up to rounding (here, bit for bit)
    np.testing.assert_allclose(draws[..., :4], clf.coef_draws_, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(draws[..., 4], clf.intercept_draws_, rtol=1e-5, atol=1e-5)


def test_minibatch_estimate_is_eq7_on_the_drawn_rows():
    """U~ = -log p0 + (n / b) sum_{rows} (c hinge - log lik), with the rows the key draws."""

    def quadratic(theta, X):
        return theta[0] * X[:, 0] ** 2 + theta[1] * X[:, 1] + theta[2]

    def log_lik(theta, X, y):  # a Gaussian likelihood of the first feature, mean theta[3]
        return -0.5 * (X[:, 0] - theta[3]) ** 2

    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 2))
    y = np.where(rng.random(60) < 0.5, 1.0, -1.0)
    with enable_x64():
        post = gibbs_posterior(quadratic, gaussian_prior, X, y, C=0.5, margin=1.0, log_likelihood=log_lik,
                               batch_size=16, dtype=np.float64)
        theta = jnp.asarray([0.3, -0.8, 0.1, 0.2])
        key = jax.random.key(7)
        u, g = post.potential.stochastic_value_and_subgrad(key, theta, post.data)
        idx = np.asarray(rows_with_replacement(key, 60, 16))

        def by_hand(t):
            f = t[0] * X[idx, 0] ** 2 + t[1] * X[idx, 1] + t[2]
            data = 0.5 * np.maximum(0.0, 1.0 - y[idx] * f) - (-0.5 * (X[idx, 0] - t[3]) ** 2)
            return 0.5 * np.sum(t**2) / NU**2 + (60 / 16) * np.sum(data)

        theta_np = np.asarray(theta)
        assert float(u) == pytest.approx(by_hand(theta_np), rel=1e-12)
        eps = 1e-6  # central differences, away from the kinks for these rows
        margins = 1.0 - y[idx] * (theta_np[0] * X[idx, 0] ** 2 + theta_np[1] * X[idx, 1] + theta_np[2])
        assert np.min(np.abs(margins)) > 1e-3
        fd = [(by_hand(theta_np + eps * e) - by_hand(theta_np - eps * e)) / (2 * eps) for e in np.eye(4)]
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)
        # the full-data potential is the same formula on every row
        u_full, _ = post.potential.value_and_subgrad(theta, post.data)
        f = theta_np[0] * X[:, 0] ** 2 + theta_np[1] * X[:, 1] + theta_np[2]
        expected = 0.5 * np.sum(theta_np**2) / NU**2 + np.sum(0.5 * np.maximum(0, 1 - y * f) + 0.5 * (X[:, 0] - theta_np[3]) ** 2)
        assert float(u_full) == pytest.approx(expected, rel=1e-12)


def test_subgradient_at_the_kink_is_the_prior_alone():
    """At y f = l exactly the hinge's subgradient is 0 (the documented choice); just inside
    the margin it is -c y df/dtheta."""

    def cubic(theta, X):  # non-linear in theta
        return theta[0] ** 3 * X[:, 0] + theta[1] * X[:, 1]

    X = np.array([[1.0, 0.5]])
    theta = jnp.asarray([1.0, 0.0], jnp.float32)  # f = 1 exactly
    post = gibbs_posterior(cubic, gaussian_prior, X, np.array([1.0]), C=2.0, margin=1.0)
    u, g = post.potential.value_and_subgrad(theta, post.data)
    assert float(u) == pytest.approx(0.5 / NU**2)
    np.testing.assert_array_equal(np.asarray(g), np.asarray(theta) / NU**2)
    post = gibbs_posterior(cubic, gaussian_prior, X, np.array([1.0]), C=2.0, margin=1.5)  # active: 1.5 - 1 > 0
    u, g = post.potential.value_and_subgrad(theta, post.data)
    assert float(u) == pytest.approx(0.5 / NU**2 + 2.0 * 0.5)
    np.testing.assert_allclose(g, np.asarray(theta) / NU**2 - 2.0 * np.array([3.0, 0.5]), rtol=1e-6)


def test_the_docstring_example_separates_two_circles():
    rng = np.random.default_rng(0)
    radius = np.where(rng.random(400) < 0.5, 1.0, 2.0)
    angle = rng.uniform(0, 2 * np.pi, 400)
    X = np.c_[radius * np.cos(angle), radius * np.sin(angle)] + 0.2 * rng.normal(size=(400, 2))
    y = np.where(radius > 1.5, 1.0, -1.0)

    def discriminant(theta, X):
        feats = jnp.stack([X[:, 0], X[:, 1], X[:, 0] ** 2, X[:, 1] ** 2, X[:, 0] * X[:, 1], jnp.ones(X.shape[0])], axis=1)
        return feats @ theta

    def log_prior(theta):
        return -0.5 * jnp.sum(theta**2) / 10.0**2

    post = gibbs_posterior(discriminant, log_prior, X, y, C=1.0, batch_size=50)
    result = sample(ssgld(post.potential, "adagrad"), post.data, jnp.zeros((2, 6)), make_key(0), n_warmup=1000,
                    n_draws=500, step_size=0.5)
    thetas = result.positions.reshape(-1, 6)
    votes = np.mean(np.sign(jax.vmap(discriminant, (0, None))(thetas, X)), axis=0)
    accuracy = np.mean(np.where(votes >= 0, 1.0, -1.0) == y)
    assert accuracy > 0.9
    # the linear discriminant cannot separate the circles: the quadratic terms carry it
    assert np.all(np.mean(thetas[:, 2:4], axis=0) > 1.0)


def test_bad_arguments_are_named():
    X, y = np.zeros((4, 2)), np.array([1.0, -1.0, 1.0, -1.0])
    with pytest.raises(TypeError, match="discriminant must be a function"):
        gibbs_posterior(None, gaussian_prior, X, y)
    with pytest.raises(TypeError, match="log_likelihood must be None or a function"):
        gibbs_posterior(linear, gaussian_prior, X, y, log_likelihood=3)
    with pytest.raises(ValueError, match=r"y must hold only \+1 and -1"):
        gibbs_posterior(linear, gaussian_prior, X, np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError, match="y must have shape"):
        gibbs_posterior(linear, gaussian_prior, X, y[:3])
    with pytest.raises(ValueError, match="C must be > 0"):
        gibbs_posterior(linear, gaussian_prior, X, y, C=0.0)
    with pytest.raises(ValueError, match="margin must be >= 0"):
        gibbs_posterior(linear, gaussian_prior, X, y, margin=-1.0)
    with pytest.raises(ValueError, match="batch_size"):
        gibbs_posterior(linear, gaussian_prior, X, y, batch_size=0)
    with pytest.raises(ValueError, match="NaN or infinity"):
        gibbs_posterior(linear, gaussian_prior, np.full((4, 2), np.nan), y)
