"""SSGNHT's ``adapt``: a new whitening transform restarts the thermostat at xi = A."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from regbayes.potentials import SVMData, build_potential
from regbayes.samplers import ssgnht


def test_adapt_installs_the_transform_and_restarts_the_thermostat():
    rng = np.random.default_rng(0)
    X = jnp.asarray(rng.normal(size=(40, 3)), jnp.float32)
    y = jnp.asarray(np.where(rng.random(40) < 0.5, -1.0, 1.0), jnp.float32)
    data = SVMData(X, y, 1.0, 1.0, 1.0)
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
