"""The active-set finish's compiled ray cascade against a NumPy transcription of the same
steps (the loop as first written in :mod:`regbayes.core.polish`, in the coordinates of
``a``): the same variables held, the same ``a`` to rounding, the same return value."""
from __future__ import annotations

import numpy as np
import pytest

from regbayes.core import polish


def reference_cascade(U, h, plus, minus, a, lower, upper, tied):
    U, h = U.copy(), h.copy()
    moved = False
    for _ in range(plus.size):
        ray = h - U @ (U.T @ h)
        if np.linalg.norm(ray) <= 1e-9 * np.linalg.norm(h) or float(h @ ray) <= 0.0:
            break
        d = np.zeros_like(a)
        np.add.at(d, plus, ray)
        np.add.at(d, minus[minus >= 0], -ray[minus >= 0])
        moving = np.flatnonzero(d)
        room = polish._room(a[moving], d[moving], lower[moving], upper[moving])
        j = int(np.argmin(room))
        tau = max(float(room[j]), 0.0)
        if not np.isfinite(tau):
            break
        a[moving] = np.clip(a[moving] + tau * d[moving], lower[moving], upper[moving])
        var = moving[j]
        a[var] = upper[var] if d[var] > 0 and not tied[var] else lower[var]
        moved = True
        hit = np.flatnonzero((plus == var) & (h != 0.0))
        if hit.size == 0:
            break
        k = hit[0]
        u = U[k].copy()
        nu2 = float(u @ u)
        if nu2 > 0.0:
            c = 1.0 / np.sqrt(1.0 - nu2) - 1.0 if nu2 < 1.0 - 1e-12 else -1.0
            U += np.outer(U @ u, u) * (c / nu2)
        U[k] = 0.0
        h[k] = 0.0
    return moved


def face(seed, n_plain, n_groups, width, dim):
    """A random feasible point with box variables and equality groups, its face's basis and
    a matrix ``M`` of rank ``dim`` (fewer directions than variables: rays exist)."""
    rng = np.random.default_rng(seed)
    n = n_plain + n_groups * width
    group = np.r_[np.full(n_plain, -1), np.repeat(np.arange(n_groups), width)]
    tied = group >= 0
    lower = np.zeros(n)
    upper = np.where(tied, np.inf, rng.uniform(0.5, 2.0, n))
    a = np.where(tied, rng.uniform(0.1, 1.0, n), rng.uniform(0.05, 0.45, n))
    free = rng.uniform(size=n) < 0.9
    plus, minus = polish._face_basis(free, group, a)
    M = rng.normal(size=(plus.size, dim)) @ rng.normal(size=(dim, 3 * dim))
    U, _ = polish._range_basis(M)
    h = rng.normal(size=plus.size)
    return U, h, plus, minus, a, lower, upper, tied


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shape", [(40, 0, 0, 3), (0, 15, 3, 4), (12, 10, 2, 5)])
def test_compiled_ray_cascade_matches_the_numpy_steps(seed, shape):
    U, h, plus, minus, a, lower, upper, tied = face(seed, *shape)
    expected_a = a.copy()
    expected = reference_cascade(U, h, plus, minus, expected_a, lower, upper, tied)
    U0, h0 = U.copy(), h.copy()
    moved = polish._ray_cascade(U, h, plus, minus, a, lower, upper, tied)
    assert moved == expected
    np.testing.assert_allclose(a, expected_a, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(U, U0)  # the caller's basis and gradient are not modified
    np.testing.assert_array_equal(h, h0)
    held = (a == lower) | (a == upper)
    np.testing.assert_array_equal(held, (expected_a == lower) | (expected_a == upper))
    if shape[0]:
        assert expected  # the plain faces have rays: the test exercises the loop


@pytest.mark.parametrize("shape", [(30, 12, 5), (12, 30, 7), (20, 20, 20), (25, 8, 8)])
def test_range_basis_and_newton_direction_match_the_svd(shape):
    """The pivoted-QR basis spans the range of ``M`` (the projector ``U U^T`` equals the
    SVD's), and the Newton direction equals ``pinv(M M^T) h``, for ``M`` of every shape and
    of deficient rank."""
    m, dim, rank = shape
    rng = np.random.default_rng(m * dim)
    M = rng.normal(size=(m, rank)) @ rng.normal(size=(rank, dim))
    h = rng.normal(size=m)
    U, R = polish._range_basis(M)
    assert U.shape == (m, min(rank, m, dim)) and R.shape == (U.shape[1], dim)
    np.testing.assert_allclose(U.T @ U, np.eye(U.shape[1]), atol=1e-12)
    Us, S, _ = np.linalg.svd(M, full_matrices=False)
    Us = Us[:, S > S[0] * 1e-10]
    np.testing.assert_allclose(U @ U.T, Us @ Us.T, atol=1e-9)
    expected = np.linalg.pinv(M @ M.T, rcond=1e-10, hermitian=True) @ h
    np.testing.assert_allclose(polish._newton_direction(U, R, h), expected, rtol=1e-7,
                               atol=1e-9 * np.abs(expected).max())


def test_newton_direction_of_a_zero_face_is_zero():
    U, R = polish._range_basis(np.zeros((4, 3)))
    assert U.shape == (4, 0)
    np.testing.assert_array_equal(polish._newton_direction(U, R, np.ones(4)), np.zeros(4))
