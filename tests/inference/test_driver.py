"""The chain driver: reproducibility, thinning, chunking, divergence, result layout."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from regbayes.inference import DivergenceError, SampleResult, sample
from regbayes.potentials import build_potential
from regbayes.samplers import ssgld
from regbayes.schedules import polynomial
from tiny_svm import N_ROWS, make_data

N_CHAINS = 3


def run(seed=0, **kwargs):
    settings = dict(n_warmup=0, n_draws=40, step_size=0.3, n_chunks=1)
    settings.update(kwargs)
    init = jnp.linspace(-1.0, 1.0, N_CHAINS, dtype=jnp.float32)[:, None]
    return sample(ssgld(build_potential(None)), make_data(), init, jax.random.key(seed), **settings)


def test_same_key_gives_identical_draws_and_another_key_different_ones():
    a, b, c = run(seed=0), run(seed=0), run(seed=1)
    np.testing.assert_array_equal(a.positions, b.positions)
    np.testing.assert_array_equal(a.potential, b.potential)
    assert not np.allclose(a.positions, c.positions)
    # chains get their own keys: their increments are not copies of each other
    steps = np.diff(a.positions[..., 0], axis=1)
    assert not np.allclose(steps[0], steps[1])


@pytest.mark.parametrize("n_warmup", [0, 25])
def test_thinning_keeps_every_thin_th_step(n_warmup):
    """Documented: after warm-up every ``thin``-th step is kept, and ``iteration`` is the
    kernel-step index of each saved draw, ``n_warmup + thin * (k + 1) - 1``. With the
    same key the random stream does not depend on ``thin``, so draw k of a thin=3 run is
    draw 3k+2 of the thin=1 run (both have step index n_warmup + 3k + 2)."""
    full = run(seed=5, n_warmup=n_warmup, n_draws=60, thin=1)
    thinned = run(seed=5, n_warmup=n_warmup, n_draws=20, thin=3)
    np.testing.assert_array_equal(full.iteration, n_warmup + np.arange(60))
    np.testing.assert_array_equal(thinned.iteration, n_warmup + 3 * np.arange(1, 21) - 1)
    np.testing.assert_array_equal(thinned.iteration, full.iteration[2::3])
    np.testing.assert_allclose(thinned.positions, full.positions[:, 2::3], rtol=1e-6, atol=1e-6)
    # neighbouring draws differ by O(h), far more than the tolerance: an off-by-one fails
    assert np.min(np.abs(full.positions[:, 1::3] - full.positions[:, 2::3])) > 1e-4
    np.testing.assert_allclose(thinned.potential, full.potential[:, 2::3], rtol=1e-6)
    # the rows evaluated behind a saved draw add up over the thinned steps
    np.testing.assert_array_equal(thinned.n_evaluated, 3 * N_ROWS)
    np.testing.assert_array_equal(full.n_evaluated, N_ROWS)


def test_chunking_does_not_change_the_draws():
    """Chunks exist for the progress bar and wall-time records only."""
    one = run(seed=2, n_warmup=20, n_draws=40, n_chunks=1)
    four = run(seed=2, n_warmup=20, n_draws=40, n_chunks=4)
    np.testing.assert_allclose(four.positions, one.positions, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("n_warmup,n_chunks", [(30, 1), (99, 10)])
def test_result_layout(n_warmup, n_chunks):
    """Shapes as documented on SampleResult, including ``warmup_potential`` of shape
    (chain, recorded warm-up step) with the step index of each in ``warmup_iteration``."""
    r = run(seed=3, n_warmup=n_warmup, n_draws=40, thin=2, n_chunks=n_chunks)
    assert isinstance(r, SampleResult)
    assert r.positions.shape == (N_CHAINS, 40, 1)
    for name in ("potential", "acceptance", "n_evaluated"):
        assert getattr(r, name).shape == (N_CHAINS, 40), name
    for name in ("step_size", "iteration", "wall_time"):
        assert getattr(r, name).shape == (40,), name
    assert r.warmup_potential.shape == (N_CHAINS, len(r.warmup_iteration))
    steps = r.warmup_iteration
    assert steps[0] >= 0 and steps[-1] == n_warmup - 1 and np.all(np.diff(steps) > 0)
    assert np.all(np.isfinite(r.positions)) and np.all(np.isfinite(r.potential))
    assert np.all(np.isnan(r.acceptance))  # SSGLD has no accept step
    np.testing.assert_allclose(r.step_size, 0.3, rtol=1e-6)
    assert np.all(np.diff(r.wall_time) >= 0) and r.wall_time[0] >= 0
    assert r.compile_seconds >= 0 and r.sampling_seconds >= 0
    np.testing.assert_array_equal(np.asarray(r.final_states.position), r.positions[:, -1])


def test_schedule_is_evaluated_at_the_iteration_of_each_draw():
    schedule = polynomial(0.3, b=10.0, gamma=0.55)
    r = run(seed=4, n_warmup=10, n_draws=30, thin=2, step_size=schedule)
    np.testing.assert_allclose(r.step_size, 0.3 * (1.0 + r.iteration / 10.0) ** -0.55, rtol=1e-5)


@pytest.mark.parametrize("n_warmup", [0, 40])
def test_divergence_raises_with_a_step_size_hint(n_warmup):
    """SSGLD with h = 1e4 (move (h^2/2) dU ~ 1e7 per step) overflows within a few steps,
    in warm-up or in the draws."""
    with pytest.raises(DivergenceError, match="step_size") as err:
        run(seed=0, n_warmup=n_warmup, n_draws=40, step_size=1e4)
    assert isinstance(err.value, FloatingPointError)
    assert "ssgld" in str(err.value)


@pytest.mark.parametrize(
    "kwargs",
    [dict(n_draws=0), dict(thin=0), dict(n_warmup=-1), dict(step_size=-0.1), dict(step_size=float("nan"))],
)
def test_invalid_arguments_are_rejected(kwargs):
    with pytest.raises(ValueError):
        run(**kwargs)


@pytest.mark.parametrize(
    "kernel_name, n_warmup, n_draws, fixed_draw_count",
    [("ssgld", 150, 30, False), ("shmc", 150, 30, False), ("ssgld", 0, 30, True), ("shmc", 0, 30, True), ("ssgld", 0, 31, False)],
)
def test_programs_with_a_fixed_thin_give_the_same_draws(monkeypatch, kernel_name, n_warmup, n_draws, fixed_draw_count):
    """On a GPU every distinct thin gets its own program with fixed-length loops
    (``static_thin=True``); draws, potentials, acceptance and row counts must not change.
    Warm-up with adaptation (150 steps) runs several phases with their own thinning, and
    the draws reuse warm-up's program of their thin. Without warm-up, 30 draws in 3
    equal chunks run in a program whose draw count is fixed too; 31 draws (chunks of 11,
    11 and 9) keep the traced count rather than compile a second program."""
    from regbayes.inference import driver
    from regbayes.samplers import shmc

    kernel = ssgld(build_potential(None)) if kernel_name == "ssgld" else shmc(build_potential(None), 3, True)
    init = jnp.linspace(-1.0, 1.0, N_CHAINS, dtype=jnp.float32)[:, None]

    def go(static_thin):
        return sample(kernel, make_data(), init, jax.random.key(4), n_warmup=n_warmup, n_draws=n_draws, thin=7,
                      step_size=0.3, n_chunks=3, static_thin=static_thin)

    traced = go(False)
    compiled = []
    original = driver._compile
    monkeypatch.setattr(driver, "_compile", lambda *a, **k: compiled.append(k) or original(*a, **k))
    fixed = go(True)
    thins = [k["static_thin"] for k in compiled]
    assert 7 in thins  # a program of the draws' thin
    assert any(k.get("static_saved") == 10 for k in compiled) is fixed_draw_count
    assert len(thins) == len(set(thins))  # one program per thin
    np.testing.assert_allclose(fixed.positions, traced.positions, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(fixed.potential, traced.potential, rtol=1e-6)
    np.testing.assert_allclose(fixed.acceptance, traced.acceptance, rtol=1e-6)
    np.testing.assert_array_equal(fixed.n_evaluated, traced.n_evaluated)
    np.testing.assert_array_equal(fixed.n_evaluated, 7 * N_ROWS * (1 if kernel_name == "ssgld" else 3))
    if kernel_name == "shmc":  # a traced acceptance: averaged over the 7 steps behind a draw
        assert np.all((traced.acceptance >= 0) & (traced.acceptance <= 1)) and np.ptp(traced.acceptance) > 0


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="the CPU's default choice of loops")
@pytest.mark.parametrize(
    "n_warmup, thin, fixed",
    [(0, 7, True), (14, 7, True), (15, 7, False), (150, 7, False), (0, 1, False)],
)
def test_cpu_fixes_thin_only_where_one_program_serves_the_run(monkeypatch, n_warmup, thin, fixed):
    """By default the CPU runs loops of fixed length (``static_thin``) only where the whole
    run then needs one program: thin > 1, and warm-up (if any) in whole multiples of thin
    without adaptation windows (those keep draws of other thins). One program is compiled
    either way, and the draws equal those of traced loops."""
    from regbayes.inference import driver

    kernel = ssgld(build_potential(None))
    init = jnp.linspace(-1.0, 1.0, N_CHAINS, dtype=jnp.float32)[:, None]

    def go(static_thin=None):
        return sample(kernel, make_data(), init, jax.random.key(6), n_warmup=n_warmup, n_draws=30, thin=thin,
                      step_size=0.3, n_chunks=3, static_thin=static_thin)

    traced = go(False)
    compiled = []
    original = driver._compile
    monkeypatch.setattr(driver, "_compile", lambda *a, **k: compiled.append(k) or original(*a, **k))
    default = go()
    assert [k.get("static_thin") for k in compiled] == [thin if fixed else None]
    np.testing.assert_allclose(default.positions, traced.positions, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(default.potential, traced.potential, rtol=1e-6)


def test_traced_warm_up_keeps_every_step_and_thins_the_adaptation_draws_on_the_host():
    """With a traced thin, warm-up runs one step per record: every warm-up step has its
    potential recorded, and the adaptation windows take every keep-th position on the
    host. The transform they estimate, hence the draws, equal those of programs that
    thin on the device (``static_thin=True``: one program per keep)."""
    kernel = ssgld(build_potential(None))
    init = jnp.linspace(-1.0, 1.0, N_CHAINS, dtype=jnp.float32)[:, None]

    def go(static_thin):
        return sample(kernel, make_data(), init, jax.random.key(8), n_warmup=3000, n_draws=20, thin=3,
                      step_size=0.3, n_chunks=2, static_thin=static_thin)

    traced, fixed = go(False), go(True)
    np.testing.assert_array_equal(traced.warmup_iteration, np.arange(3000))
    assert traced.warmup_potential.shape == (N_CHAINS, 3000) and np.all(np.isfinite(traced.warmup_potential))
    np.testing.assert_allclose(traced.positions, fixed.positions, rtol=1e-5, atol=1e-6)
