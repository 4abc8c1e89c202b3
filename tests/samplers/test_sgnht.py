"""SSGNHT's ``init`` (r_0 ~ N(0, I) or at rest) and ``adapt`` (a new whitening transform
restarts the thermostat at xi = A)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from regbayes.potentials import SVMData, build_potential
from regbayes.samplers import ssgnht


def _data():
    rng = np.random.default_rng(0)
    X = jnp.asarray(rng.normal(size=(40, 3)), jnp.float32)
    y = jnp.asarray(np.where(rng.random(40) < 0.5, -1.0, 1.0), jnp.float32)
    return SVMData(X, y, 1.0, 1.0, 1.0)


def test_adapt_installs_the_transform_and_restarts_the_thermostat():
    data = _data()
    kernel = ssgnht(build_potential(None), diffusion=2.0)
    state = kernel.init(jax.random.key(0), jnp.zeros(3, jnp.float32), data)
    state, _ = kernel.step(jax.random.key(1), state, data, 0.1)
    state = state._replace(thermostat=jnp.asarray(25.0, jnp.float32))  # as after a hot start
    T = jnp.asarray([0.5, 2.0, 1.0], jnp.float32)
    adapted = kernel.adapt(state, T)
    assert float(adapted.thermostat) == 2.0
    np.testing.assert_array_equal(adapted.transform, T)
    np.testing.assert_array_equal(adapted.position, state.position)
    np.testing.assert_array_equal(adapted.momentum, state.momentum)


def test_initial_momentum_is_standard_normal_by_default_and_zero_at_rest():
    data, position = _data(), jnp.zeros(4000, jnp.float32)
    drawn = ssgnht(build_potential(None)).init(jax.random.key(3), position, data)
    # 4000 N(0, 1) draws: mean within 4 standard errors (0.063), variance within 0.1
    assert abs(float(drawn.momentum.mean())) < 4.0 / np.sqrt(4000)
    assert abs(float(drawn.momentum.var()) - 1.0) < 0.1
    assert float(drawn.thermostat) == 1.0
    rest = ssgnht(build_potential(None), initial_momentum="zero").init(jax.random.key(3), position, data)
    assert not np.any(np.asarray(rest.momentum))
    assert float(rest.thermostat) == 1.0


def test_a_start_at_rest_moves_along_the_negative_subgradient():
    # r_1 = -h dU(theta_0) + sqrt(2 A h) N(0, I); with A tiny the first move is the drift
    data = _data()
    potential = build_potential(None)
    kernel = ssgnht(potential, diffusion=1e-12, initial_momentum="zero")
    state = kernel.init(jax.random.key(0), jnp.zeros(3, jnp.float32), data)
    state, _ = kernel.step(jax.random.key(1), state, data, 0.01)
    _, g = potential.stochastic_value_and_subgrad(jax.random.key(2), jnp.zeros(3, jnp.float32), data)
    np.testing.assert_allclose(state.position, -(0.01**2) * np.asarray(g), rtol=1e-4, atol=1e-9)


def test_unknown_initial_momentum_is_refused():
    with pytest.raises(ValueError, match="initial_momentum"):
        ssgnht(build_potential(None), initial_momentum="uniform")
