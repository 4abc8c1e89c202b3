"""Hinge losses: exact values, the subgradient 0 chosen at the kink, finite differences."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from regbayes.precision import enable_x64
from regbayes.potentials.hinge import binary_hinge, crammer_singer_hinge


def np_binary(f, y, C, margin):
    zeta = margin - y * f
    return C * np.maximum(zeta, 0.0), np.where(zeta > 0, -C * y, 0.0)


def np_crammer_singer(F, y, C, margin):
    n, K = F.shape
    loss, grad = np.zeros(n), np.zeros((n, K))
    for i in range(n):
        others = [k for k in range(K) if k != y[i]]
        star = others[int(np.argmax(F[i, others]))]
        zeta = margin + F[i, star] - F[i, y[i]]
        if zeta > 0:
            loss[i] = C * zeta
            grad[i, star], grad[i, y[i]] = C, -C
    return loss, grad


def test_binary_hinge_is_exactly_zero_with_zero_subgradient_at_the_kink():
    # zeta = margin - y f = 0 exactly (all values representable)
    y = jnp.array([1.0, -1.0, 1.0, -1.0])
    for margin in (1.0, 0.5, 0.0):
        f = margin * y
        loss, dloss = binary_hinge(f, y, 2.5, margin)
        np.testing.assert_array_equal(np.asarray(loss), 0.0)
        np.testing.assert_array_equal(np.asarray(dloss), 0.0)


def test_binary_hinge_values_on_both_sides():
    y = np.array([1.0, 1.0, -1.0, -1.0, 1.0, -1.0])
    f = np.array([0.25, 1.5, 0.25, -2.0, -3.0, 1.0])  # zeta = .75, -.5, 1.25, -1, 4, 2
    loss, dloss = binary_hinge(jnp.asarray(f), jnp.asarray(y), 2.0, 1.0)
    ref_loss, ref_grad = np_binary(f, y, 2.0, 1.0)
    np.testing.assert_allclose(np.asarray(loss), ref_loss, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(dloss), ref_grad)
    assert np.all(ref_grad[[1, 3]] == 0.0) and np.all(ref_grad[[0, 2, 4, 5]] != 0.0)


def test_binary_hinge_matches_finite_differences_away_from_kinks():
    rng = np.random.default_rng(0)
    with enable_x64():
        f = rng.normal(size=200)
        y = rng.choice([-1.0, 1.0], size=200)
        keep = np.abs(1.0 - y * f) > 1e-3
        f, y = f[keep], y[keep]
        h = 1e-6
        loss_p, _ = binary_hinge(jnp.asarray(f + h), jnp.asarray(y), 1.7, 1.0)
        loss_m, _ = binary_hinge(jnp.asarray(f - h), jnp.asarray(y), 1.7, 1.0)
        _, dloss = binary_hinge(jnp.asarray(f), jnp.asarray(y), 1.7, 1.0)
        fd = (np.asarray(loss_p) - np.asarray(loss_m)) / (2 * h)
        np.testing.assert_allclose(np.asarray(dloss), fd, atol=1e-6)


def test_crammer_singer_is_exactly_zero_with_zero_subgradient_at_the_kink():
    # margin + max_{k != y} f_k - f_y == 0 exactly
    F = jnp.array([[2.0, 1.0, 0.5], [0.25, -0.5, 1.25], [-1.0, 0.0, -1.0]])
    y = jnp.array([0, 2, 1])
    loss, dloss = crammer_singer_hinge(F, y, 3.0, 1.0)
    np.testing.assert_array_equal(np.asarray(loss), 0.0)
    np.testing.assert_array_equal(np.asarray(dloss), 0.0)


def test_crammer_singer_values():
    rng = np.random.default_rng(1)
    F = rng.normal(size=(50, 4)).astype(np.float32)
    y = rng.integers(0, 4, size=50)
    loss, dloss = crammer_singer_hinge(jnp.asarray(F), jnp.asarray(y), 1.5, 1.0)
    ref_loss, ref_grad = np_crammer_singer(F.astype(np.float64), y, 1.5, 1.0)
    assert (ref_loss > 0).any() and (ref_loss == 0).any()
    np.testing.assert_allclose(np.asarray(loss), ref_loss, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(dloss), ref_grad)
    # each active row: +C on the runner-up, -C on the true class, zero sum
    np.testing.assert_allclose(np.asarray(dloss).sum(axis=1), 0.0)


def test_crammer_singer_matches_finite_differences_away_from_kinks():
    rng = np.random.default_rng(2)
    with enable_x64():
        F = rng.normal(size=(300, 3))
        y = rng.integers(0, 3, size=300)
        # stay away from the hinge kink and from ties among the other classes
        others = np.where(np.arange(3)[None, :] == y[:, None], -np.inf, F)
        top2 = np.sort(others, axis=1)[:, -2:]
        zeta = 1.0 + top2[:, 1] - F[np.arange(300), y]
        keep = (np.abs(zeta) > 1e-3) & (top2[:, 1] - top2[:, 0] > 1e-3)
        F, y = F[keep], y[keep]
        _, dloss = crammer_singer_hinge(jnp.asarray(F), jnp.asarray(y), 2.0, 1.0)
        h = 1e-6
        for k in range(3):
            e = np.zeros(3)
            e[k] = h
            lp, _ = crammer_singer_hinge(jnp.asarray(F + e), jnp.asarray(y), 2.0, 1.0)
            lm, _ = crammer_singer_hinge(jnp.asarray(F - e), jnp.asarray(y), 2.0, 1.0)
            fd = (np.asarray(lp) - np.asarray(lm)) / (2 * h)
            np.testing.assert_allclose(np.asarray(dloss)[:, k], fd, atol=1e-6)
