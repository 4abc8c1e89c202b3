"""Conjugates of Lemmas 9-11 against their definition ``g*(mu) = sup_x (mu.x - g(x))``.

Each ``g`` is piecewise linear, so the supremum of ``mu.x - g(x)`` over a box ``[-B, B]^L``
is attained at a vertex of the pieces (a kink or a corner): it is computed exactly, by
enumerating those points (1-D) or by a linear program (``g1``). A finite conjugate equals
the box supremum once the box holds the kinks, and does not grow with ``B``; an infinite
one grows linearly in ``B``. Fenchel–Young: ``g(x) + g*(mu) >= mu.x``, with equality
exactly when ``mu`` is a subgradient of ``g`` at ``x``.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from regbayes.core import g0, g0_conjugate, g1, g1_conjugate, g2, g2_conjugate

RNG = np.random.default_rng(20240611)


def sup_1d(mu, g, kinks, B):
    """Exact ``sup_{|x| <= B} mu x - g(x)`` for a piecewise linear ``g`` with ``kinks``."""
    points = np.concatenate([[-B, B], np.asarray(kinks, dtype=float)])
    return np.max(mu * points - g(points))


@pytest.mark.parametrize("C", [0.0, 0.7, 3.0])
def test_g0_conjugate_is_the_supremum_of_its_definition(C):
    mus = np.concatenate([RNG.uniform(-1, C + 1, 200), [0.0, C, -1e-3, C + 1e-3]])
    got = g0_conjugate(mus, C, feasibility_tol=0.0)
    for mu, value in zip(mus, got):
        s1, s2 = (sup_1d(mu, lambda x: g0(x, C), [0.0], B) for B in (1e3, 2e3))
        if np.isfinite(value):
            assert value == 0.0 and s1 == pytest.approx(0.0, abs=1e-12) and s2 == pytest.approx(0.0, abs=1e-12)
        else:
            assert s2 - s1 >= 1e3 * min(abs(mu), abs(mu - C)) * (1 - 1e-12) > 0


@pytest.mark.parametrize("C", [0.5, 2.0])
@pytest.mark.parametrize("L", [2, 4])
def test_g1_conjugate_is_the_supremum_of_its_definition(C, L):
    """sup over the box by the LP  max mu.x - C t  s.t.  x_i <= t,  -B <= x <= B."""

    def box_sup(mu, B):
        c = -np.concatenate([mu, [-C]])
        A = np.hstack([np.eye(L), -np.ones((L, 1))])
        res = linprog(c, A_ub=A, b_ub=np.zeros(L), bounds=[(-B, B)] * L + [(None, None)], method="highs")
        assert res.status == 0
        return -res.fun

    feasible = [C * RNG.dirichlet(np.ones(L)) for _ in range(15)] + [C * np.eye(L)[0]]
    infeasible = [C * RNG.dirichlet(np.ones(L)) * 1.1, np.concatenate([[-0.1], C * RNG.dirichlet(np.ones(L - 1)) + 0.1 / (L - 1)])]
    for mu in feasible:
        assert g1_conjugate(mu, C) == 0.0
        assert box_sup(mu, 1e3) == pytest.approx(0.0, abs=1e-9) and box_sup(mu, 2e3) == pytest.approx(0.0, abs=1e-9)
    for mu in infeasible:
        assert g1_conjugate(mu, C) == np.inf
        assert box_sup(mu, 2e3) - box_sup(mu, 1e3) > 10.0
    # vectorised over leading axes
    stacked = np.stack(feasible + infeasible)
    assert np.array_equal(g1_conjugate(stacked, C), np.array([0.0] * len(feasible) + [np.inf] * len(infeasible)))


@pytest.mark.parametrize("eps", [0.0, 0.3])
@pytest.mark.parametrize("C", [0.5, 2.0])
def test_g2_conjugate_is_the_supremum_of_its_definition(eps, C):
    for _ in range(200):
        y = RNG.normal()
        mu = RNG.uniform(-1.5 * C, 1.5 * C)
        value = g2_conjugate(mu, y, eps, C, feasibility_tol=0.0)

        def g(x, y=y):
            return g2(x, y, eps, C)

        kinks = [y - eps, y + eps]
        s1, s2 = sup_1d(mu, g, kinks, 1e3), sup_1d(mu, g, kinks, 2e3)
        if abs(mu) <= C:
            assert value == pytest.approx(mu * y + eps * abs(mu), abs=1e-14)
            assert s1 == pytest.approx(value, abs=1e-10) and s2 == pytest.approx(value, abs=1e-10)
        else:
            assert value == np.inf
            assert s2 - s1 >= 1e3 * (abs(mu) - C) * (1 - 1e-9)


def test_fenchel_young_inequality_and_equality_at_subgradients():
    C, eps = 1.3, 0.25
    # g0: random pairs satisfy the inequality; subgradients give equality
    x = RNG.normal(size=500)
    mu = RNG.uniform(0, C, 500)
    assert np.all(g0(x, C) + g0_conjugate(mu, C) >= x * mu - 1e-12)
    x = np.concatenate([RNG.normal(size=100), np.zeros(20)])
    sub = np.where(x > 0, C, 0.0)
    sub[x == 0] = RNG.uniform(0, C, 20)
    np.testing.assert_allclose(g0(x, C) + g0_conjugate(sub, C), x * sub, atol=1e-12)
    # g1: subgradients are C times convex combinations of the argmax coordinates
    L = 4
    X = RNG.normal(size=(300, L))
    M = C * RNG.dirichlet(np.ones(L), 300)
    assert np.all(g1(X, C) + g1_conjugate(M, C) >= np.sum(X * M, axis=1) - 1e-12)
    X[:50, 1] = X[:50, 0] = np.max(X[:50], axis=1) + 1.0  # ties between coordinates 0 and 1
    S = np.zeros_like(X)
    S[np.arange(300), np.argmax(X, axis=1)] = C
    t = RNG.uniform(size=50)
    S[:50, 0], S[:50, 1] = C * t, C * (1 - t)
    np.testing.assert_allclose(g1(X, C) + g1_conjugate(S, C), np.sum(X * S, axis=1), atol=1e-12)
    # g2: the subgradient is C sign(x - y) outside the tube, 0 inside, [0, C] or [-C, 0] on its edges
    y = RNG.normal(size=400)
    x = y + np.concatenate([RNG.uniform(-2, 2, 394), [eps, eps, -eps, -eps, 0.0, 0.1]])
    mu = RNG.uniform(-C, C, 400)
    assert np.all(g2(x, y, eps, C) + g2_conjugate(mu, y, eps, C) >= x * mu - 1e-12)
    r = x - y
    sub = np.where(r > eps, C, np.where(r < -eps, -C, 0.0))
    sub[394:396], sub[396:398] = [0.3 * C, C], [-0.6 * C, -C]
    np.testing.assert_allclose(g2(x, y, eps, C) + g2_conjugate(sub, y, eps, C), x * sub, atol=1e-12)
    # a point that is not a subgradient gives a strict inequality
    assert g0(2.0, C) + g0_conjugate(0.5 * C, C) > 2.0 * 0.5 * C


def test_feasibility_tolerance_admits_rounding_only():
    assert g0_conjugate(-1e-13, 1.0) == 0.0 and g0_conjugate(-1e-13, 1.0, feasibility_tol=0.0) == np.inf
    assert g0_conjugate(1.0 + 1e-6, 1.0) == np.inf
    assert g1_conjugate([0.5, 0.5 + 1e-13], 1.0) == 0.0 and g1_conjugate([0.5, 0.5 + 1e-6], 1.0) == np.inf
    assert g2_conjugate(1.0 + 1e-13, 0.0, 0.1, 1.0) == pytest.approx(0.1)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="C must be >= 0"):
        g0(1.0, C=-1.0)
    with pytest.raises(ValueError, match="epsilon must be >= 0"):
        g2(1.0, 0.0, -0.1)
    with pytest.raises(ValueError, match="feasibility_tol"):
        g0_conjugate(0.5, 1.0, feasibility_tol=-1.0)
    with pytest.raises(ValueError, match="last axis"):
        g1(np.float64(1.0))
