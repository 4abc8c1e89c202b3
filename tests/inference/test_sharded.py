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
