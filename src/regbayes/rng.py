"""Randomness from user ``random_state`` values: one place for every rule.

* estimators: :func:`make_key`, one JAX key per ``fit`` (scikit-learn's ``random_state``
  semantics); host-loop steps get integer seeds from it (:func:`host_seeds`);
* data generators and loaders: :func:`check_generator` / :func:`int_seed` (NumPy).
"""
from __future__ import annotations

import numbers

import jax
import numpy as np
from sklearn.utils import check_random_state

# JAX's default threefry keys, whose streams are the same on every backend. XLA's
# RngBitGenerator ("rbg") draws the driver's noise faster (BENCHMARKS.md, the rbg columns)
# but its streams may differ between backends and XLA versions.
KEY_IMPL = "threefry2x32"


def make_key(random_state) -> jax.Array:
    """A typed JAX key seeded from ``random_state`` (None, an int or a ``RandomState``).

    The seed is one draw of ``check_random_state(random_state)``, so an int gives the
    same key on every call and a ``RandomState`` advances, as in scikit-learn.
    """
    seed = int(check_random_state(random_state).randint(2**31 - 1))
    return key_from_seed(seed)


def host_seeds(key: jax.Array, n: int):
    """``n`` integer seeds in [0, 2^31 - 1) from ``key``, for steps that run on the host
    (numba kernels take integer seeds). A NumPy int64 array.

    NumPy's generator is seeded with the key's words: nothing is compiled, whatever ``n``
    (a JAX draw of ``n`` bits would compile one program per ``n``).
    """
    words = np.asarray(jax.random.key_data(key), dtype=np.uint32).ravel()
    return np.random.default_rng(words).integers(0, 2**31 - 1, size=max(int(n), 0), dtype=np.int64)


def key_from_seed(seed: int) -> jax.Array:
    """A typed JAX key (the library's implementation) from an integer seed in [0, 2^32).

    The same key as ``jax.random.key(seed, impl=KEY_IMPL)`` (threefry's key of a 32-bit
    seed is the pair of words ``(0, seed)``), wrapped without compiling a program.
    """
    seed = int(seed)
    if not 0 <= seed < 2**32:
        raise ValueError(f"seed must be in [0, 2^32), got {seed}")
    return jax.random.wrap_key_data(np.array([0, seed], np.uint32), impl=KEY_IMPL)


def check_generator(random_state) -> np.random.Generator:
    """Return a ``np.random.Generator`` for ``random_state``.

    ``None`` gives fresh OS entropy, an ``int`` (>= 0) a seeded generator, and a
    ``Generator`` is returned as is (so its state advances: callers share the stream).
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (bool, np.bool_)):
        raise ValueError("random_state must be None, an int or a np.random.Generator, got a bool")
    if isinstance(random_state, numbers.Integral):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative int, got {random_state}")
        return np.random.default_rng(int(random_state))
    raise ValueError(
        "random_state must be None, an int or a np.random.Generator, "
        f"got {type(random_state).__name__}"
    )


def int_seed(random_state) -> int:
    """An int seed for APIs that take only ints (scikit-learn): an int is kept as is,
    so results equal the wrapped function's with that seed; a Generator (or None)
    supplies one draw."""
    rng = check_generator(random_state)
    if random_state is None or isinstance(random_state, np.random.Generator):
        return int(rng.integers(2**31 - 1))
    return int(random_state)
