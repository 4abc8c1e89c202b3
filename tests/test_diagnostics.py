"""regbayes.diagnostics: ESS against autoregressive chains of known ESS, the reference
comparison's errors and their standard errors by repetition, SBC on a conjugate model."""
import warnings

import numpy as np
import pytest

from regbayes import BayesianSVC
from regbayes.diagnostics import (PosteriorWarning, compare_to_reference, effective_sample_size, plot_reference_comparison,
                                  plot_sbc_ranks, posterior_draws, simulation_based_calibration)


def ar1(rho, n_chains, n_draws, n_params, seed):
    """Stationary AR(1) chains with unit marginal variance: ESS = n (1 - rho) / (1 + rho)."""
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal((n_chains, n_draws, n_params)) * np.sqrt(1 - rho**2)
    x = np.empty_like(noise)
    x[:, 0] = rng.standard_normal((n_chains, n_params))
    for t in range(1, n_draws):
        x[:, t] = rho * x[:, t - 1] + noise[:, t]
    return x


def test_ess_of_independent_and_autocorrelated_draws():
    with warnings.catch_warnings():
        warnings.simplefilter("error", PosteriorWarning)
        iid = effective_sample_size(ar1(0.0, 4, 1000, 3, 0))
    assert iid.per_chain.shape == (4, 3) and iid.pooled.shape == (3,)
    np.testing.assert_allclose(iid.pooled, 4000, rtol=0.15)
    np.testing.assert_allclose(iid.per_chain, 1000, rtol=0.35)  # split-chain estimates of 1,000 draws scatter more
    assert 0.85 < iid.min_fraction <= 1.2
    rho = 0.9
    correlated = effective_sample_size(ar1(rho, 4, 20000, 3, 1))
    np.testing.assert_allclose(correlated.pooled, 80000 * (1 - rho) / (1 + rho), rtol=0.2)


def test_ess_warns_when_the_draws_are_too_correlated():
    draws = ar1(0.995, 2, 500, 2, 2)
    before = draws.copy()
    with pytest.warns(PosteriorWarning, match="too correlated"):
        report = effective_sample_size(draws)
    assert report.pooled.min() < 100
    np.testing.assert_array_equal(draws, before)


@pytest.mark.parametrize("bad, match", [
    (np.zeros(10), "shaped"), (np.zeros((2, 3, 1)), "at least 4"), (np.full((2, 10, 1), np.nan), "NaN"),
])
def test_bad_draws(bad, match):
    with pytest.raises(ValueError, match=match):
        effective_sample_size(bad)


def test_reference_comparison_detects_shift_and_scale():
    rng = np.random.default_rng(3)
    ref = rng.normal(size=(4, 2000, 3))
    same = compare_to_reference(rng.normal(size=(2, 2000, 3)), ref)
    assert same.agrees() and same.within_monte_carlo_error()
    shifted = compare_to_reference(rng.normal(0.5, 1.0, size=(2, 2000, 3)), ref)
    np.testing.assert_allclose(shifted.mean_error, 0.5, atol=0.1)
    assert not shifted.agrees() and not shifted.within_monte_carlo_error()
    wide = compare_to_reference(rng.normal(0.0, 1.3, size=(2000, 3)), ref)
    np.testing.assert_allclose(wide.sd_ratio, 1.3, rtol=0.05)
    assert not wide.agrees()
    with pytest.raises(ValueError, match="coordinates"):
        compare_to_reference(ref[..., :2], ref)


def test_reference_comparison_standard_errors_cover():
    """Two correct runs (autocorrelated): about 95 % of the differences fall within 2 se."""
    covered_mean, covered_sd = [], []
    for seed in range(60):
        c = compare_to_reference(ar1(0.8, 2, 600, 3, 100 + seed), ar1(0.8, 2, 600, 3, 500 + seed))
        covered_mean.append(np.abs(c.mean_error) <= 2 * c.mean_error_se)
        covered_sd.append(np.abs(c.sd_ratio - 1) <= 2 * c.sd_ratio_se)
    assert 0.88 <= np.mean(covered_mean) <= 0.995
    assert 0.85 <= np.mean(covered_sd) <= 0.995


def normal_model(n_obs=5):
    """theta ~ N(0, 1), x_i | theta ~ N(theta, 1): theta | x ~ N(sum x / (n + 1), 1 / (n + 1))."""
    def simulate(rng):
        theta = rng.standard_normal()
        return np.array([theta]), theta + rng.standard_normal(n_obs)

    def posterior(x, seed, sd_factor=1.0):
        rng = np.random.default_rng(seed)
        return x.sum() / (n_obs + 1) + sd_factor * rng.standard_normal((99, 1)) / np.sqrt(n_obs + 1)

    return simulate, posterior


def test_sbc_accepts_the_exact_posterior_and_rejects_a_narrow_one():
    simulate, posterior = normal_model()
    exact = simulation_based_calibration(simulate, posterior, 400, random_state=0)
    assert exact.ranks.shape == (400, 1) and exact.n_draws == 99
    assert exact.ranks.min() >= 0 and exact.ranks.max() <= 99
    assert exact.pvalues(10)[0] > 1e-3
    narrow = simulation_based_calibration(simulate, lambda x, s: posterior(x, s, 0.5), 400, random_state=0)
    assert narrow.pvalues(10)[0] < 1e-6
    with pytest.raises(ValueError, match="multiple"):
        exact.pvalues(7)
    assert len(plot_sbc_ranks(exact).axes) == 1


def test_posterior_draws_of_a_fit_and_its_comparison_plot():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)
    clf = BayesianSVC(sampler="gibbs", n_chains=2, n_draws=50, n_warmup=20, batch_size=60, random_state=0).fit(X, y)
    draws = posterior_draws(clf)
    assert draws.shape == (2, 50, 4)
    np.testing.assert_array_equal(draws[..., :3], clf.coef_draws_)
    np.testing.assert_array_equal(draws[..., 3], clf.intercept_draws_)
    fig = plot_reference_comparison(compare_to_reference(draws, draws), labels=["w1", "w2", "w3", "b"])
    assert len(fig.axes) == 2
    with pytest.raises(TypeError, match="coef_draws_"):
        posterior_draws(BayesianSVC())
