"""Warm-up's dual averaging of the step size (Hoffman and Gelman 2014, Algorithm 5)."""
from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from regbayes.inference import sample
from regbayes.inference.step_size_tuning import DualAveraging, block_steps
from regbayes.potentials import build_potential
from regbayes.samplers import shmc, srwm, ssgld
from regbayes.schedules import polynomial
from tiny_svm import make_data


def acceptance(h):
    """A smooth acceptance curve, 1 at h = 0, falling like exp(-(h / 0.2)^2)."""
    return math.exp(-((h / 0.2) ** 2))


ROOT = 0.2 * math.sqrt(-math.log(0.65))  # acceptance(ROOT) = 0.65


@pytest.mark.parametrize("start", [1e-4, 0.13, 30.0])
def test_dual_averaging_finds_the_step_of_the_target_acceptance(start):
    tuner = DualAveraging(start, 0.65)
    for _ in range(300):
        tuner.update(acceptance(tuner.step_size))
    assert tuner.final_step_size == pytest.approx(ROOT, rel=0.03)


def test_dual_averaging_with_noisy_acceptances():
    """Each update sees the mean of 40 Bernoulli draws (a block of 10 steps, 4 chains)."""
    rng = np.random.default_rng(0)
    tuner = DualAveraging(1.0, 0.65)
    for _ in range(200):
        tuner.update(rng.random(40) < acceptance(tuner.step_size))
    assert tuner.final_step_size == pytest.approx(ROOT, rel=0.1)


def test_restart_begins_from_the_step_given_and_nan_blocks_are_skipped():
    tuner = DualAveraging(0.5, 0.8)
    tuner.update(0.0)
    tuner.restart(0.05)
    assert tuner.step_size == pytest.approx(0.05) and tuner.final_step_size == pytest.approx(0.05)
    tuner.update(np.full(4, np.nan))
    assert tuner.m == 0
    tuner.update(1.0)  # every proposal accepted: the step grows
    assert tuner.step_size > 0.05


@pytest.mark.parametrize("target", [0.0, 1.0, -0.5, 2.0])
def test_target_outside_zero_one_is_refused(target):
    with pytest.raises(ValueError, match="target_acceptance must be in"):
        DualAveraging(0.1, target)


def _shmc_run(**kwargs):
    init = jnp.zeros((4, 1), jnp.float32)
    settings = dict(n_warmup=300, n_draws=200, step_size=20.0, target_acceptance=0.65)
    settings.update(kwargs)
    return sample(shmc(build_potential(None), n_leapfrog=5), make_data(), init, jax.random.key(0), **settings)


KERNELS = {"shmc": (lambda: shmc(build_potential(None), n_leapfrog=5), 0.65),
           "srwm": (lambda: srwm(build_potential(2)), 0.234)}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_the_driver_tunes_a_step_far_too_large_and_samples_with_the_tuned_one(name):
    make, target = KERNELS[name]
    init = jnp.zeros((8, 1), jnp.float32)
    settings = dict(n_warmup=1000, n_draws=500, step_size=50.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the fixed step's rejections
        fixed = sample(make(), make_data(), init, jax.random.key(0), **settings)
    tuned = sample(make(), make_data(), init, jax.random.key(0), target_acceptance=target, **settings)
    assert fixed.stats["acceptance"].mean() < target / 3  # the step as given: most proposals rejected
    assert abs(tuned.stats["acceptance"].mean() - target) < 0.1  # 4,000 steps: se under 0.01
    assert np.all(tuned.step_size == tuned.step_size[0]) and tuned.step_size[0] < 5.0


def test_tuning_is_deterministic_and_chunking_does_not_change_it():
    a, b = _shmc_run(n_chunks=1), _shmc_run(n_chunks=7)
    np.testing.assert_array_equal(a.positions, b.positions)
    assert a.step_size[0] == b.step_size[0]


def test_tuning_needs_a_constant_step_and_a_kernel_that_accepts():
    with pytest.raises(ValueError, match="constant step size"):
        _shmc_run(step_size=polynomial(1.0))
    init = jnp.zeros((2, 1), jnp.float32)
    with pytest.raises(ValueError, match="records none"):
        sample(ssgld(build_potential(None)), make_data(), init, jax.random.key(0), n_warmup=20, n_draws=5,
               step_size=0.1, target_acceptance=0.65)


@pytest.mark.parametrize("phase, updates", [(20, 20), (60, 20), (150, 30), (600, 50), (6000, 50)])
def test_a_phase_gets_between_twenty_and_about_fifty_updates(phase, updates):
    assert phase // block_steps(phase) == updates
