"""Normal–inverse-Wishart posterior and Student-t predictive against direct computations.

* predictive: ``scipy.stats.multivariate_t`` with the textbook parameters (exact, to
  rounding);
* marginal likelihood: the chain rule ``log p(X) = sum_i log p(x_i | x_<i)`` (an identity
  that ties the predictive and the closed form together), and in one dimension a
  two-dimensional grid integration over (mu, sigma^2) of ``prod_i N(x_i; mu, sigma^2)`` times
  the prior density written from scipy's inverse-gamma and normal distributions;
* the vectorised per-slot posteriors equal the one-block posterior.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from regbayes.potentials import niw as _niw


def _prior(d, rng):
    A = rng.normal(size=(d, d))
    return _niw.niw_prior(rng.normal(size=d), 0.3, d + 3.5, A @ A.T + d * np.eye(d))


@pytest.mark.parametrize("d,n", [(1, 0), (1, 7), (3, 5), (5, 40)])
def test_predictive_is_scipy_multivariate_t(d, n):
    rng = np.random.default_rng(d * 100 + n)
    prior = _prior(d, rng)
    X = rng.normal(size=(n, d)) * 2 + 1
    post = _niw.posterior(prior, X)
    df, loc, shape = _niw.predictive_params(post)
    x_new = rng.normal(size=(6, d)) * 3
    expected = stats.multivariate_t(loc=loc, shape=shape, df=df).logpdf(x_new)
    np.testing.assert_allclose(_niw.log_predictive(post, x_new), expected, rtol=1e-10, atol=1e-10)
    # the posterior parameters themselves, from Murphy (2007) eqs. 250-254 written out
    if n:
        xbar = X.mean(axis=0)
        S = (X - xbar).T @ (X - xbar)
        kn = prior.kappa + n
        np.testing.assert_allclose(post.mean, (prior.kappa * prior.mean + n * xbar) / kn)
        np.testing.assert_allclose(
            post.scale, prior.scale + S + prior.kappa * n / kn * np.outer(xbar - prior.mean, xbar - prior.mean)
        )
        assert post.kappa == kn and post.dof == prior.dof + n


@pytest.mark.parametrize("d", [1, 2, 4])
def test_marginal_likelihood_chain_rule(d):
    rng = np.random.default_rng(d)
    prior = _prior(d, rng)
    X = rng.normal(size=(9, d)) + 0.5
    chain = sum(float(_niw.log_predictive(_niw.posterior(prior, X[:i]), X[i : i + 1])[0]) for i in range(len(X)))
    assert _niw.log_marginal_likelihood(prior, X) == pytest.approx(chain, rel=1e-10, abs=1e-9)


def test_marginal_likelihood_by_quadrature_1d():
    """d = 1: Sigma = sigma^2 ~ IW(psi, nu) = InvGamma(nu / 2, psi / 2), mu | sigma^2 ~
    N(m, sigma^2 / kappa); integrate the joint on a fine (mu, log sigma^2) grid (the
    trapezoid rule on this smooth, well-contained integrand: halving the grid changes the
    answer by < 1e-7, so 1e-5 is safe)."""
    prior = _niw.niw_prior(np.array([0.4]), 0.5, 3.0, np.array([[2.0]]))
    X = np.array([0.1, 1.3, -0.4, 0.9])
    shape, scale = prior.dof / 2, prior.scale[0, 0] / 2

    def log_evidence(n_grid):
        mu = np.linspace(-8, 8, n_grid)[:, None]
        log_s2 = np.linspace(-6, 9, n_grid)[None, :]
        s2 = np.exp(log_s2)
        logp = stats.invgamma(shape, scale=scale).logpdf(s2) + log_s2  # d sigma^2 = sigma^2 d log sigma^2
        logp = logp + stats.norm.logpdf(mu, prior.mean[0], np.sqrt(s2 / prior.kappa))
        logp = logp + stats.norm.logpdf(X[:, None, None], mu, np.sqrt(s2)).sum(axis=0)
        top = logp.max()
        inner = integrate.trapezoid(np.exp(logp - top), log_s2[0], axis=1)
        return top + np.log(integrate.trapezoid(inner, mu[:, 0]))

    fine = log_evidence(1601)
    assert abs(fine - log_evidence(801)) < 1e-6
    assert _niw.log_marginal_likelihood(prior, X[:, None]) == pytest.approx(fine, abs=1e-5)


def test_component_posteriors_match_blocks():
    rng = np.random.default_rng(3)
    prior = _prior(3, rng)
    X = rng.normal(size=(30, 3))
    labels = rng.integers(0, 4, size=30)
    labels[labels == 2] = 0  # slot 2 empty
    counts, means, chols = _niw.component_posteriors(prior, X, labels, 5)
    assert counts.tolist() == [np.sum(labels == k) for k in range(5)]
    for k in range(5):
        post = _niw.posterior(prior, X[labels == k])
        np.testing.assert_allclose(means[k], post.mean, atol=1e-12)
        np.testing.assert_allclose(chols[k], post.chol, atol=1e-12)


def test_default_prior_and_errors():
    X = np.column_stack([np.arange(10.0), np.ones(10)])  # second feature constant
    prior = _niw.default_prior(X)
    r = 0.1 * (X[:, 0].var() + 1e-6 * X[:, 0].var()) / X[:, 0].var()
    assert prior.dof == 4.0 and prior.kappa == pytest.approx(r / (1 - r))
    np.testing.assert_allclose(prior.mean, X.mean(axis=0))
    np.testing.assert_allclose(prior.scale, np.diag([0.1 * X[:, 0].var(), 1e-7 * X[:, 0].var()]))
    # the new-component predictive is as wide as the data: (1 + 1/kappa) tr E[Sigma] = tr var X
    assert (1 + 1 / prior.kappa) * np.trace(prior.scale) / (prior.dof - 3) == pytest.approx(X.var(axis=0).sum())
    with pytest.raises(ValueError, match="exceed"):
        _niw.default_prior(X, dof=3.0)
    with pytest.raises(ValueError, match="degrees of freedom"):
        _niw.niw_prior(np.zeros(2), 1.0, 0.5, np.eye(2))
    with pytest.raises(ValueError, match="positive definite"):
        _niw.niw_prior(np.zeros(2), 1.0, 3.0, -np.eye(2))
    with pytest.raises(ValueError, match="shape"):
        _niw.niw_prior(np.zeros(2), 1.0, 3.0, np.eye(3))
    with pytest.raises(ValueError, match="kappa"):
        _niw.niw_prior(np.zeros(2), 0.0, 3.0, np.eye(2))
