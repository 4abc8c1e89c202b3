"""Sharded stochastic-gradient sampling on a 2-worker local cluster (regbayes.inference.sharded):
shards of about equal rows, the posterior of the paper's 2-D data against Gibbs DA, the
same draws for the same seed, bad input."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

from regbayes import BayesianSVC  # noqa: E402
from regbayes.datasets import make_bayes_svm_2d  # noqa: E402
from regbayes.diagnostics import compare_to_reference  # noqa: E402
from regbayes.inference.sharded import shard_blocks  # noqa: E402
from regbayes.models import svm_stream  # noqa: E402
from regbayes.models.svm_noise import ShardNoiseCalibration, pull_noise_factor  # noqa: E402


@pytest.fixture
def short_trajectories(monkeypatch):
    """Trajectories of 1,000 steps (N / b on 20,000 rows with batch 20), so that the test's
    run visits each shard about 40 times per chain."""
    monkeypatch.setattr(svm_stream, "STEPS_PER_CHUNK", 1_000)


def test_shard_blocks_are_contiguous_runs_of_about_equal_rows():
    shards = shard_blocks([100, 0, 100, 100, 50, 50, 100], 2)
    assert [s.tolist() for s in shards] == [[0, 2], [3, 4, 5, 6]]
    assert [s.tolist() for s in shard_blocks([10, 1000, 10], 3)] == [[0], [1], [2]]
    with pytest.raises(ValueError, match="cannot make 3 shards"):
        shard_blocks([10, 0, 10], 3)


@pytest.mark.parametrize("u", [0.3, 3.0, 10.0])
def test_a_held_pull_widens_a_langevin_chain_as_its_white_noise_equivalent(u):
    """``x' = x - a k x + a f + sqrt(2 a) xi`` with ``f = +-sigma`` drawn afresh every ``L``
    steps (2,000 chains, 20,000 steps): the stationary variance is the one of white noise of
    per-step variance ``W = c(u) L sigma^2`` in place of ``f``, ``(2a + a^2 W) / (a k (2 - a k))``,
    within 3 % (Monte Carlo error about 0.7 %). Treating the pull as white (``c = 1``) is
    wrong by 60 % at ``u = 3``."""
    rng = np.random.default_rng(0)
    a, kappa = 0.005, 1.0
    L = int(round(u / (a * kappa)))
    sigma = kappa / np.sqrt(kappa * (1.0 - (1.0 - np.exp(-u)) / u))  # sigma^2 g(u) / kappa^2 = 1 / kappa: twice the variance
    x = rng.standard_normal(2_000) / np.sqrt(kappa)
    f = np.zeros_like(x)
    total, n, steps = 0.0, 0, 20_000
    phase = rng.integers(0, L, x.size)  # the chains' holds start at different steps
    for t in range(steps):
        renew = (t + phase) % L == 0
        f = np.where(renew, sigma * rng.choice([-1.0, 1.0], x.size), f)
        x = x - a * kappa * x + a * f + np.sqrt(2 * a) * rng.standard_normal(x.size)
        if t >= 10 * max(L, int(1 / (a * kappa))) // 4:
            total, n = total + np.sum(x * x), n + x.size
    W = pull_noise_factor(u) * L * sigma**2
    predicted = (2 * a + a * a * W) / (a * kappa * (2 - a * kappa))
    assert total / n == pytest.approx(predicted, rel=0.03)
    assert pull_noise_factor(1e-6) == pytest.approx(1.0, rel=1e-6) and pull_noise_factor(1e3) == pytest.approx(2e-3, rel=1e-3)


def test_the_shard_calibration_solves_for_its_own_steps():
    """The noise that ``ShardNoiseCalibration`` hands the kernel holds the pull at the factor
    of the adapted steps it returns (the fixed point), not the white-noise one."""

    class Chains:
        q, shard_rows, offsets = np.array([0.5, 0.5]), np.array([10, 10]), None

    class Sharded:
        chains, steps_per_chunk = Chains(), 1_000

    V_batch, pull = np.array([1.0, 50.0, 400.0]), np.array([0.2, 0.5, 0.05])
    for kind in ("langevin", "adagrad"):
        calibration = ShardNoiseCalibration(Sharded(), None, kind, 0.004, 3, None)
        calibration.curvature = np.array([1.0, 2.0, 0.5])
        s2, V = calibration._adapt((V_batch, pull))
        u = 1_000 * calibration.effective_steps(s2, V) * calibration.curvature
        np.testing.assert_allclose(V, V_batch + 1_000 * pull * pull_noise_factor(u), rtol=1e-7)
        np.testing.assert_allclose(s2, calibration._limit(V), rtol=1e-12)
        assert np.all(V < V_batch + 1_000 * pull)


def test_sharded_ssgld_matches_the_exact_posterior(client, short_trajectories):
    """SSGLD with 4 chains moving between 2 shards of the paper's 2-D data (20,000 rows as a
    Dask array of 200 chunks) against Gibbs DA on the same rows: means within 0.15 posterior
    sds, sds 0.9-1.1 (Monte Carlo errors about 0.05 and 0.03). The same seed gives the same draws."""
    X, y = make_bayes_svm_2d(20_000, random_state=0)[:2]
    X = X.astype(np.float32)
    settings = dict(sampler="ssgld", n_draws=300, n_chains=4, thin=200, batch_size=20, n_warmup=20_000, random_state=1,
                    chain_method="dask")
    model = BayesianSVC(**settings).fit(da.from_array(X, chunks=(100, 2)), y)
    assert model.trace_["shard_rows"] == [10_000, 10_000]
    exact = BayesianSVC(sampler="gibbs", n_draws=2000, random_state=0).fit(X, y)
    draws = np.concatenate([model.coef_draws_, model.intercept_draws_[..., None]], -1)
    comparison = compare_to_reference(draws, np.concatenate([exact.coef_draws_, exact.intercept_draws_[..., None]], -1))
    assert np.all(np.abs(comparison.mean_error) < 0.15)
    assert np.all((comparison.sd_ratio > 0.9) & (comparison.sd_ratio < 1.1))
    short = dict(settings, n_draws=10, n_warmup=400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # too short to mix
        first, again = (BayesianSVC(**short).fit(da.from_array(X, chunks=(100, 2)), y) for _ in range(2))
    np.testing.assert_array_equal(first.coef_draws_, again.coef_draws_)


def test_sharded_bad_input(client, tmp_path):
    X, y = make_bayes_svm_2d(2_000, random_state=0)[:2]
    with pytest.raises(ValueError, match="cannot make 2 shards"):
        BayesianSVC(sampler="ssgld", chain_method="dask", n_chains=2, n_warmup=0, n_draws=5).fit(
            da.from_array(X, chunks=(2_000, 2)), y)
    with pytest.raises(ValueError, match="without a checkpoint"):
        BayesianSVC(sampler="ssgld", chain_method="dask", checkpoint=str(tmp_path / "c")).fit(da.from_array(X, chunks=(100, 2)), y)
