"""ArviZ conversion and diagnostics."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from regbayes.inference import SampleResult, diagnostics, sample, to_inference_data
from regbayes.potentials import build_potential
from regbayes.samplers import srwm, ssgld
from tiny_svm import make_data


def fake_result(positions):
    """A SampleResult around given draws (chain, draw, *shape), for diagnostics tests."""
    n_chains, n_draws = positions.shape[:2]
    zeros = np.zeros((n_chains, n_draws))
    return SampleResult(
        positions=positions,
        stats={"potential": zeros, "n_evaluated": zeros.astype(int)},
        step_size=np.full(n_draws, 0.1),
        iteration=np.arange(n_draws),
        wall_time=np.arange(n_draws, dtype=float),
        compile_seconds=0.0,
        sampling_seconds=0.0,
        warmup_potential=np.zeros((n_chains, 0)),
        warmup_iteration=np.zeros(0, dtype=int),
        final_states=None,
    )


@pytest.fixture(scope="module")
def ssgld_result():
    init = jnp.zeros((4, 1), jnp.float32)
    return sample(ssgld(build_potential(None)), make_data(), init, jax.random.key(0), n_warmup=0, n_draws=300, step_size=0.5, n_chunks=1)


def test_inference_data_has_posterior_and_sample_stats(ssgld_result):
    r = ssgld_result
    idata = to_inference_data(r)
    assert idata.posterior["eta"].shape == (4, 300, 1)
    np.testing.assert_array_equal(idata.posterior["eta"].values, r.positions)
    stats = idata.sample_stats
    assert stats["step_size"].shape == (4, 300)
    np.testing.assert_allclose(stats["step_size"].values, 0.5, rtol=1e-6)
    np.testing.assert_array_equal(stats["potential"].values, r.potential)
    np.testing.assert_array_equal(stats["n_evaluated"].values, r.n_evaluated)
    # SSGLD has no accept step: no acceptance statistic at all rather than NaNs
    assert "acceptance_rate" not in stats


def test_inference_data_keeps_acceptance_where_defined():
    init = jnp.zeros((2, 1), jnp.float32)
    r = sample(srwm(build_potential(None)), make_data(), init, jax.random.key(1), n_warmup=0, n_draws=50, thin=4, step_size=1.0, n_chunks=1)
    stats = to_inference_data(r, var_name="w").sample_stats
    acc = stats["acceptance_rate"].values
    assert acc.shape == (2, 50) and np.all((acc >= 0) & (acc <= 1))
    assert 0.05 < acc.mean() < 0.95  # a random walk with proposal sd ~ posterior sd


def test_diagnostics_on_sampler_output(ssgld_result):
    d = diagnostics(to_inference_data(ssgld_result))
    assert set(d) >= {"min_ess", "max_rhat"}
    assert np.isfinite(d["min_ess"]) and d["min_ess"] > 0
    assert np.isfinite(d["max_rhat"]) and d["max_rhat"] > 0.9
    one_chain = fake_result(ssgld_result.positions[:1])
    d1 = diagnostics(to_inference_data(one_chain))
    assert np.isnan(d1["max_rhat"]) and np.isfinite(d1["min_ess"])


def test_diagnostics_values_on_known_draws():
    """i.i.d. N(0, 1) draws, 4 chains x 1000: bulk ESS ~ 4000 (its sampling sd is a few
    percent; require > 3000 for the minimum over 3 coordinates) and R-hat ~ 1 (< 1.01).
    Chains with shifted means: R-hat far above 1 (between-chain sd 1 vs within 1)."""
    rng = np.random.default_rng(0)
    iid = fake_result(rng.normal(size=(4, 1000, 3)))
    d = diagnostics(to_inference_data(iid))
    assert d["min_ess"] > 3000, d
    assert d["max_rhat"] < 1.01, d
    shifted = rng.normal(size=(4, 1000, 3)) + np.arange(4)[:, None, None]
    d = diagnostics(to_inference_data(fake_result(shifted)))
    assert d["max_rhat"] > 1.5 and d["min_ess"] < 100, d
