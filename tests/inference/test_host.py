"""The host loop of the driver: seeds, kept draws, trace, convergence, divergence."""
import warnings
from typing import NamedTuple

import jax
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from regbayes.inference import Algorithm, DivergenceError, run


class Info(NamedTuple):
    objective: float
    step_size: float


def _halving(seed, state, data):
    """x <- x / 2 + data: objective |x - 2 data| halves every step (converges to 2 data)."""
    x = state / 2 + data
    return x, Info(abs(x - 2 * data), 0.1)


def test_trace_draws_and_seeds_are_reproducible():
    seen = []

    def step(seed, state, data):
        seen.append(seed)
        return state + 1, Info(float(state), 0.1)

    algorithm = Algorithm(step, "count")
    result = run(algorithm, 0, None, jax.random.key(3), n_iter=6, keep=[2, 5], draw=lambda s: s * 10)
    assert result.draws == [30, 60] and result.kept_iterations.tolist() == [2, 5]
    np.testing.assert_array_equal(result.trace["objective"], np.arange(6))
    assert result.n_iter == 6 and result.state == 6 and result.converged is None
    assert np.all(np.diff(result.wall_time) >= 0) and result.sampling_seconds >= result.wall_time[-1] - 1e-12
    first = list(seen)
    seen.clear()
    run(algorithm, 0, None, jax.random.key(3), n_iter=6)
    assert seen == first and len(set(first)) == 6 and all(0 <= s < 2**31 for s in first)


def test_until_converged_stops_at_the_tolerance():
    # x_t = 2 - 2^-t (x_0 = 0, data 1): F_t = |x_t - 2| = 2^-t, so the relative change
    # |F_{t-1} - F_t| / F_{t-1} is 1/2 at every step: never converged at tol < 1/2 ...
    with pytest.warns(ConvergenceWarning):
        result = run(Algorithm(_halving, "halving"), 0.0, 1.0, jax.random.key(0), n_iter=30, tol=0.4)
    assert result.converged is False and result.n_iter == 30

    # ... and converged at the first comparison when tol >= 1/2 (F_{-1} = 2 given)
    result = run(Algorithm(_halving, "halving"), 0.0, 1.0, jax.random.key(0), n_iter=30, tol=0.5,
                 initial_objective=2.0)
    assert result.converged is True and result.n_iter == 1


def test_until_converged_on_a_flat_objective_and_the_warning():
    def settle(seed, state, data):
        state = min(state + 1, 3)
        return state, Info(10.0 - state, 0.1)

    result = run(Algorithm(settle, "settle"), 0, None, jax.random.key(0), n_iter=50, tol=1e-9)
    assert result.converged is True and result.n_iter == 4  # F: 9, 8, 7, 7
    with pytest.warns(ConvergenceWarning, match="did not converge in 2 iterations"):
        result = run(Algorithm(settle, "settle"), 0, None, jax.random.key(0), n_iter=2, tol=1e-9)
    assert result.converged is False
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # tol=0: all n_iter iterations were asked for
        result = run(Algorithm(settle, "settle"), 0, None, jax.random.key(0), n_iter=2, tol=0.0)
    assert result.converged is False and result.n_iter == 2


def test_callback_stops_and_is_not_timed():
    result = run(Algorithm(_halving, "halving"), 0.0, 1.0, jax.random.key(0), n_iter=10,
                 callback=lambda t, state, info: t == 3)
    assert result.stopped_early and result.n_iter == 4


def test_divergence_names_iteration_and_step_size():
    def explode(seed, state, data):
        state = state * 1e300
        return state, Info(state, 0.25)

    with pytest.raises(DivergenceError, match="non-finite objective") as err:
        run(Algorithm(explode, "explode"), 1.0, None, jax.random.key(0), n_iter=5)
    assert err.value.iteration == 1 and err.value.step_size == 0.25 and err.value.algorithm == "explode"


def test_model_check_and_compile_time_apart():
    compiled = []
    algorithm = Algorithm(_halving, "checked", compile=lambda state, data: compiled.append(state),
                          check=lambda state, info: "too large" if state > 1.5 else None)
    with pytest.raises(DivergenceError, match="iteration 2: too large"):
        run(algorithm, 0.0, 1.0, jax.random.key(0), n_iter=5)
    assert compiled == [0.0]


def test_keys_and_host_seeds_compile_nothing_and_match_jax():
    from regbayes.rng import host_seeds, key_from_seed, make_key

    for seed in (0, 1, 123456, 2**31 - 2):
        np.testing.assert_array_equal(jax.random.key_data(key_from_seed(seed)),
                                      jax.random.key_data(jax.random.key(seed, impl="threefry2x32")))
    key = make_key(7)
    first = host_seeds(key, 5)
    np.testing.assert_array_equal(host_seeds(key, 8)[:5], first)  # a longer run extends the same stream
    assert not np.array_equal(host_seeds(make_key(8), 5), first)
    with pytest.raises(ValueError, match="seed must be in"):
        key_from_seed(-1)


def test_monitor_sees_the_sampling_wall_time_and_can_stop():
    seen = []

    def monitor(t, state, info, wall_time):
        seen.append(wall_time)
        return t == 4

    result = run(Algorithm(_halving, "halving"), 0.0, 1.0, jax.random.key(0), n_iter=10, monitor=monitor)
    assert result.stopped_early and result.n_iter == 5
    np.testing.assert_array_equal(seen, result.wall_time)
