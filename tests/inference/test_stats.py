"""Each kernel's own ``info``: what the driver records per kept draw and hands to ArviZ."""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from regbayes.inference import block, sample, to_inference_data
from regbayes.potentials import build_potential
from regbayes.samplers import SamplingAlgorithm, shmc, srwm, ssgld, ssgnht
from regbayes.schedules import Constant
from tiny_svm import N_ROWS, make_data


def run(kernel, n_chains=3, **kwargs):
    settings = dict(n_warmup=0, n_draws=40, thin=3, step_size=0.3, n_chunks=2)
    settings.update(kwargs)
    init = jnp.linspace(-1.0, 1.0, n_chains, dtype=jnp.float32)[:, None]
    return sample(kernel, make_data(), init, jax.random.key(7), **settings)


@pytest.mark.parametrize("n_warmup", [0, 120])
def test_ssgnht_records_its_thermostat(n_warmup):
    """xi of the kept step, per draw: finite, positive after warm-up's restart at A = 1 and
    equal to the final state's thermostat at the last draw."""
    r = run(ssgnht(build_potential(2)), n_warmup=n_warmup, step_size=0.05)
    assert set(r.stats) == {"potential", "thermostat", "n_evaluated"}
    xi = r.stats["thermostat"]
    assert xi.shape == (3, 40) and np.all(np.isfinite(xi))
    np.testing.assert_array_equal(xi[:, -1], np.asarray(r.final_states.thermostat))
    assert np.ptp(xi) > 0  # it moves from draw to draw
    assert "thermostat" in to_inference_data(r).sample_stats
    np.testing.assert_array_equal(r.n_evaluated, 3 * 2)  # minibatch of 2 rows, summed over thin 3


@pytest.mark.parametrize("mh_correction", [True, False])
def test_hmc_acceptance_is_a_probability(mh_correction):
    """With the MH test: the mean of min(1, exp(H - H')) over the thinned steps, in [0, 1]
    and not constant; without it, the constant 1 (recorded once, broadcast per draw)."""
    r = run(shmc(build_potential(None), n_leapfrog=3, mh_correction=mh_correction), step_size=0.8)
    acc = r.acceptance
    assert acc.shape == (3, 40) and np.all((acc >= 0) & (acc <= 1))
    if mh_correction:
        assert np.ptp(acc) > 0
    else:
        np.testing.assert_array_equal(acc, 1.0)
    np.testing.assert_array_equal(r.n_evaluated, 3 * 3 * N_ROWS)  # L = 3 full-data subgradients per step
    stats = to_inference_data(r).sample_stats
    np.testing.assert_array_equal(stats["acceptance_rate"].values, acc)
    assert np.all(np.isfinite(r.potential))


def test_srwm_records_acceptance_and_rows_but_no_potential():
    r = run(srwm(build_potential(2)), step_size=1.0)
    assert set(r.stats) == {"acceptance", "n_evaluated"}
    assert np.all(np.isnan(r.potential))  # read through the NaN-filled attribute
    assert np.all((r.acceptance >= 0) & (r.acceptance <= 1))
    # the sequential test reads at least one minibatch of 2 rows per step, at most all 5
    assert np.all((r.n_evaluated >= 3 * 2) & (r.n_evaluated <= 3 * N_ROWS))
    assert "potential" not in to_inference_data(r).sample_stats


def test_ssgld_records_potential_and_a_constant_row_count():
    r = run(ssgld(build_potential(None), "adagrad"))
    assert set(r.stats) == {"potential", "n_evaluated"}
    assert np.all(np.isfinite(r.potential)) and np.all(np.isnan(r.acceptance))
    np.testing.assert_array_equal(r.n_evaluated, 3 * N_ROWS)


def test_constant_fields_are_not_written_per_draw():
    """A field that is a NumPy constant (SSGLD's row count) comes out of the compiled block
    once per chunk; only the varying potential has a row per kept draw."""
    kernel = ssgld(build_potential(2))
    states = jax.vmap(kernel.init, in_axes=(0, 0, None))(jax.random.split(jax.random.key(0), 2), jnp.zeros((2, 1)), make_data())
    keys = jax.random.split(jax.random.key(1), 2)
    schedule = Constant(jnp.float32(0.3))
    _, _, (positions, per_draw, per_chunk) = block._run_block(
        states, keys, make_data(), jnp.float32(0), jnp.int32(4), jnp.int32(5), schedule,
        kernel=kernel, schedule_fn=None, capacity=4,
    )
    assert positions.shape == (2, 4, 1)
    assert set(per_draw) == {"potential"} and per_draw["potential"].shape == (2, 4)
    assert set(per_chunk) == {"n_evaluated"}
    np.testing.assert_array_equal(per_chunk["n_evaluated"], [5 * 2, 5 * 2])


class _CountingState(NamedTuple):
    position: jnp.ndarray
    count: jnp.ndarray


class _CountingInfo(NamedTuple):
    acceptance: jnp.ndarray
    n_evaluated: jnp.ndarray
    marker: jnp.ndarray
    tag: np.ndarray


def _counting_kernel():
    """Step t (from 1) moves the position by 1 and reports acceptance t, n_evaluated t and
    marker 10 t, so each condensation over ``thin`` steps can be checked by hand."""

    def init(key, position, data):
        return _CountingState(position, jnp.zeros((), jnp.int32))

    def step(key, state, data, step_size):
        count = state.count + 1
        info = _CountingInfo(count.astype(jnp.float32), count, 10.0 * count, np.asarray(3.0, np.float32))
        return _CountingState(state.position + 1.0, count), info

    return SamplingAlgorithm(init, step, "counting")


def test_thin_reductions_mean_sum_and_last():
    """THIN_REDUCTIONS: ``acceptance`` is averaged and ``n_evaluated`` summed over the
    ``thin`` steps behind a draw; any other field is its value at the kept step; a
    constant field is broadcast."""
    thin = 4
    r = sample(_counting_kernel(), None, jnp.zeros((2, 1)), jax.random.key(0), n_warmup=0, n_draws=6, thin=thin,
               step_size=1.0, n_chunks=2)
    last = thin * np.arange(1, 7)  # step count at each kept step
    steps = last[:, None] - np.arange(thin)[::-1]  # the thin steps behind each draw
    np.testing.assert_array_equal(r.positions[0, :, 0], last)
    np.testing.assert_allclose(r.stats["acceptance"][0], steps.mean(axis=1))
    np.testing.assert_array_equal(r.stats["n_evaluated"][0], steps.sum(axis=1))
    np.testing.assert_array_equal(r.stats["marker"][0], 10.0 * last)
    np.testing.assert_array_equal(r.stats["tag"], 3.0)
    assert r.stats["tag"].shape == (2, 6)
