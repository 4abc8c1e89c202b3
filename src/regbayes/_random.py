"""JAX random keys from scikit-learn style ``random_state`` values."""
from __future__ import annotations

import jax
import numpy as np
from sklearn.utils import check_random_state

# XLA's RngBitGenerator ("rbg") draws the random bits; key splitting stays threefry.
# Measured in the driver (SSGLD, 29 coordinates, batch 100, 2 CPU cores): 27.3 µs per
# step with threefry keys, 23.2 µs with rbg -- drawing the noise is a fifth of a step.
# Draws are reproducible for a given platform and JAX version, as with threefry.
KEY_IMPL = "rbg"


def make_key(random_state) -> jax.Array:
    """A typed JAX key seeded from ``random_state`` (None, an int or a ``RandomState``).

    The seed is one draw of ``check_random_state(random_state)``, so an int gives the
    same key on every call and a ``RandomState`` advances, as in scikit-learn.
    """
    seed = int(check_random_state(random_state).randint(2**31 - 1))
    return jax.random.key(seed, impl=KEY_IMPL)
