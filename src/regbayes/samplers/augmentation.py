"""Draws for data-augmentation samplers.

Inverse Gaussian ``IG(x; mu, lam) = sqrt(lam / (2 pi x^3)) exp(-lam (x - mu)^2 / (2 mu^2 x))``
by the transformation-with-multiple-roots method of Michael, Schucany & Haas (1976):
with ``v ~ N(0, 1)``, ``w = mu v^2 / (2 lam)`` the smaller root is

    x1 = mu (1 + w - sqrt(w^2 + 2 w)) = mu / (1 + w + sqrt(w^2 + 2 w)),

(the second form avoids the cancellation of the first when ``mu`` is large, and
``sqrt(w) sqrt(w + 2)`` avoids overflowing ``w^2``), and the draw
is ``x1`` with probability ``mu / (mu + x1)``, otherwise ``mu^2 / x1``.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp


def inverse_gaussian(key, mu, lam=1.0, shape=None, dtype=None):
    """Draw from IG(mu, lam); ``mu`` and ``lam`` broadcast, both must be positive."""
    mu = jnp.asarray(mu, dtype)
    lam = jnp.asarray(lam, mu.dtype)
    if shape is None:
        shape = jnp.broadcast_shapes(mu.shape, lam.shape)
    k_normal, k_unif = jax.random.split(key)
    v = jax.random.normal(k_normal, shape, mu.dtype)
    w = mu * v**2 / (2.0 * lam)
    x1 = mu / (1.0 + w + jnp.sqrt(w) * jnp.sqrt(w + 2.0))  # sqrt(w^2 + 2w) without overflow
    u = jax.random.uniform(k_unif, shape, mu.dtype)
    return jnp.where(u <= mu / (mu + x1), x1, mu**2 / x1)
