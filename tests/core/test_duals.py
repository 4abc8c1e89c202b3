"""The duals of eq. 28, eq. 34 (with Lemma 12's cost) and Lemma 11.

References: scikit-learn's liblinear solvers of the same primal problems (agreement of
``coef`` within 1e-4 relative), and certificates computed here in NumPy, independently of
the kernels: dual feasibility, ``coef`` equal to the weighted sum of the dual variables,
primal and dual objectives whose gap is <= 1e-6 relative (weak duality makes this a
proof of optimality), and the KKT conditions.
"""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.svm import LinearSVC, LinearSVR

from regbayes.core import DualSolution, binary_svm_dual, crammer_singer_dual, svr_dual
from regbayes.core.dual_kernels import project_simplex

TIGHT = dict(tol=1e-12, max_iter=200_000)
SKLEARN = dict(fit_intercept=False, tol=1e-10, max_iter=10**6)


def rel(a, b):
    return np.linalg.norm(np.ravel(a) - np.ravel(b)) / np.linalg.norm(np.ravel(b))


def binary_data(seed, N, K):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, K))
    y = np.where(X @ rng.normal(size=K) + 0.8 * rng.normal(size=N) > 0, 1.0, -1.0)
    return X, y


def multiclass_data(seed, N, K, L):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, K))
    y = np.argmax(X @ rng.normal(size=(K, L)) + 0.8 * rng.normal(size=(N, L)), axis=1)
    return X, y


def regression_data(seed, N, K):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, K))
    return X, X @ rng.normal(size=K) + 0.3 * rng.normal(size=N)


def binary_objectives(X, y, C, w):
    mu = (y * w) @ X
    P = 0.5 * mu @ mu + np.sum(C * np.maximum(0.0, 1.0 - y * (X @ mu)))
    return mu, P, np.sum(w) - 0.5 * mu @ mu


def svr_objectives(X, y, C, eps, beta):
    mu = beta @ X
    P = 0.5 * mu @ mu + np.sum(C * np.maximum(0.0, np.abs(X @ mu - y) - eps))
    return mu, P, beta @ y - eps * np.sum(np.abs(beta)) - 0.5 * mu @ mu


def cs_objectives(X, y, C, cost, omega):
    N, L = omega.shape
    onehot = np.eye(L)[y]
    mu = ((C[:, None] * onehot - omega).T) @ X  # (L, K)
    F = X @ mu.T
    worst = np.max(cost + F - F[np.arange(N), y][:, None], axis=1)
    P = 0.5 * np.sum(mu**2) + np.sum(C * worst)
    return mu, P, np.sum(omega * cost) - 0.5 * np.sum(mu**2)


def assert_certified(sol: DualSolution, mu, P, D):
    np.testing.assert_allclose(sol.coef, mu, rtol=1e-10, atol=1e-12)
    assert sol.primal_objective == pytest.approx(P, rel=1e-10)
    assert sol.dual_objective == pytest.approx(D, rel=1e-10)
    assert -1e-9 * abs(P) <= P - D <= 1e-6 * abs(P)
    assert sol.converged and sol.gap == pytest.approx(sol.primal_objective - sol.dual_objective)


# --- binary hinge (eq. 28) -------------------------------------------------------------

@pytest.mark.parametrize("seed, N, K, C", [(0, 50, 5, 1.0), (1, 150, 12, 0.1), (2, 300, 20, 3.0)])
def test_binary_dual_matches_liblinear_and_is_certified(seed, N, K, C):
    X, y = binary_data(seed, N, K)
    sol = binary_svm_dual(X, y, C, **TIGHT)
    ref = LinearSVC(loss="hinge", dual=True, C=C, **SKLEARN).fit(X, y)
    assert rel(sol.coef, ref.coef_) <= 1e-4
    assert np.all((sol.dual >= 0.0) & (sol.dual <= C))  # exactly feasible
    assert_certified(sol, *binary_objectives(X, y, C, sol.dual))
    # KKT: w = C where the margin is violated, 0 where it is strictly satisfied
    margin = y * (X @ sol.coef)
    np.testing.assert_allclose(sol.dual[margin < 1 - 1e-6], C, rtol=0, atol=1e-9 * C)
    np.testing.assert_allclose(sol.dual[margin > 1 + 1e-6], 0.0, atol=1e-9 * C)
    assert np.all(np.abs(margin[(sol.dual > 1e-6 * C) & (sol.dual < (1 - 1e-6) * C)] - 1) < 1e-6)


def test_binary_dual_per_row_C_and_zero_rows_drop_out():
    X, y = binary_data(3, 120, 8)
    rng = np.random.default_rng(3)
    C = rng.uniform(0.2, 2.0, 120)
    C[::4] = 0.0
    sol = binary_svm_dual(X, y, C, **TIGHT)
    assert np.all(sol.dual[::4] == 0.0) and np.all(sol.dual <= C)
    assert_certified(sol, *binary_objectives(X, y, C, sol.dual))
    keep = C > 0
    dropped = binary_svm_dual(X[keep], y[keep], C[keep], **TIGHT)
    np.testing.assert_allclose(sol.coef, dropped.coef, rtol=1e-5, atol=1e-8)
    # per-row C against liblinear's sample weights (C_n = C * weight_n)
    ref = LinearSVC(loss="hinge", dual=True, C=1.0, **SKLEARN).fit(X[keep], y[keep], sample_weight=C[keep])
    assert rel(sol.coef, ref.coef_) <= 1e-4


def test_binary_dual_warm_start_from_the_optimum_takes_one_pass():
    X, y = binary_data(4, 200, 10)
    sol = binary_svm_dual(X, y, 1.0, tol=1e-13, max_iter=100_000)
    start = sol.dual.copy()
    again = binary_svm_dual(X, y, 1.0, tol=1e-10, initial_dual=start, seed=7)
    assert again.n_iter <= 1 and again.converged
    np.testing.assert_allclose(again.coef, sol.coef, rtol=1e-8, atol=1e-10)
    assert np.array_equal(start, sol.dual)  # the caller's array is not modified
    # a warm start from a slightly changed problem needs fewer passes than a cold one
    X2 = X + 0.001 * np.random.default_rng(5).normal(size=X.shape)
    cold = binary_svm_dual(X2, y, 1.0, tol=1e-10, max_iter=100_000)
    warm = binary_svm_dual(X2, y, 1.0, tol=1e-10, max_iter=100_000, initial_dual=sol.dual)
    assert warm.converged and warm.n_iter < cold.n_iter
    # an infeasible start is clipped into [0, C]
    clipped = binary_svm_dual(X, y, 1.0, tol=1e-10, max_iter=100_000, initial_dual=np.full(200, 5.0))
    np.testing.assert_allclose(clipped.coef, sol.coef, rtol=1e-4, atol=1e-6)


def test_binary_dual_reports_non_convergence_without_raising():
    X, y = binary_data(6, 200, 10)
    sol = binary_svm_dual(X, y, 10.0, tol=1e-12, max_iter=1)
    assert sol.n_iter == 1 and not sol.converged and sol.gap > 1e-12 * abs(sol.primal_objective)
    assert np.all((sol.dual >= 0) & (sol.dual <= 10.0))


def test_binary_dual_is_reproducible_and_seed_changes_only_the_path():
    X, y = binary_data(7, 100, 6)
    a, b = binary_svm_dual(X, y, 1.0, seed=3), binary_svm_dual(X, y, 1.0, seed=3)
    assert np.array_equal(a.dual, b.dual) and a.n_iter == b.n_iter
    c = binary_svm_dual(X, y, 1.0, tol=1e-12, max_iter=100_000, seed=11)
    d = binary_svm_dual(X, y, 1.0, tol=1e-12, max_iter=100_000, seed=12)
    np.testing.assert_allclose(c.coef, d.coef, rtol=1e-5)


def test_binary_dual_zero_feature_row_takes_C():
    X, y = binary_data(8, 40, 4)
    X[5] = 0.0
    sol = binary_svm_dual(X, y, 0.5, **TIGHT)
    assert sol.dual[5] == 0.5
    assert_certified(sol, *binary_objectives(X, y, np.full(40, 0.5), sol.dual))


# --- Crammer–Singer (eq. 34 with Lemma 12's cost) -------------------------------------

@pytest.mark.parametrize("seed, N, K, L, C", [(0, 60, 5, 3, 1.0), (1, 200, 10, 4, 0.3), (2, 300, 15, 5, 2.0)])
def test_crammer_singer_dual_matches_liblinear_and_is_certified(seed, N, K, L, C):
    X, y = multiclass_data(seed, N, K, L)
    sol = crammer_singer_dual(X, y, C, **TIGHT)
    ref = LinearSVC(multi_class="crammer_singer", C=C, **SKLEARN).fit(X, y)
    assert sol.coef.shape == (L, K) and sol.dual.shape == (N, L)
    assert rel(sol.coef, ref.coef_) <= 1e-4
    assert np.all(sol.dual >= 0.0)
    np.testing.assert_allclose(sol.dual.sum(axis=1), C, rtol=1e-12)
    cost = 1.0 - np.eye(L)[y]
    assert_certified(sol, *cs_objectives(X, y, np.full(N, C), cost, sol.dual))
    # KKT: omega_n^y > 0 only on the labels attaining max_y (l_n(y) + f_y - f_{y_n})
    F = X @ sol.coef.T
    slack = cost + F - F[np.arange(N), y][:, None]
    gap_to_max = slack.max(axis=1, keepdims=True) - slack
    assert np.all(sol.dual[gap_to_max > 1e-6] <= 1e-9 * C)


def test_crammer_singer_dual_with_a_cost_matrix_per_row_C_and_absent_classes():
    X, y = multiclass_data(3, 150, 8, 4)
    rng = np.random.default_rng(3)
    cost = rng.uniform(0.5, 2.0, size=(150, 5))  # class 4 never occurs in y
    cost[np.arange(150), y] = 0.0
    C = rng.uniform(0.1, 1.5, 150)
    C[::5] = 0.0
    sol = crammer_singer_dual(X, y, C, n_classes=5, cost=cost, **TIGHT)
    assert sol.coef.shape == (5, 8)
    assert np.all(sol.dual[::5] == 0.0) and np.all(sol.dual >= 0)
    np.testing.assert_allclose(sol.dual.sum(axis=1), C, rtol=1e-12, atol=1e-15)
    assert_certified(sol, *cs_objectives(X, y, C, cost, sol.dual))
    keep = C > 0
    dropped = crammer_singer_dual(X[keep], y[keep], C[keep], n_classes=5, cost=cost[keep], **TIGHT)
    np.testing.assert_allclose(sol.coef, dropped.coef, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("own_cost", [0.0, 0.3])
def test_crammer_singer_passes_alone_converge_with_rows_skipped(own_cost):
    """The kernel's passes alone (no active-set finish) reach a gap of 1e-10 on a nearly
    separable problem, where most rows sit on their own label with their margin held and
    the passes skip them; the result is certified by the NumPy objectives. A skip rule
    that left a violating row out for good would stall here."""
    from regbayes.core.dual_kernels import crammer_singer_cd

    rng = np.random.default_rng(12)
    X = rng.normal(size=(400, 6))
    y = np.argmax(X @ rng.normal(size=(6, 3)) + 0.05 * rng.normal(size=(400, 3)), axis=1)
    cost = 1.0 - np.eye(3)[y] + own_cost * np.eye(3)[y]
    C = np.full(400, 1.0)
    omega = np.zeros((400, 3))
    omega[np.arange(400), y] = 1.0
    mu, primal, dual, n_iter, converged = crammer_singer_cd(X, y, C, cost, omega, 1e-10, 100_000, np.uint64(3))
    assert converged and n_iter < 100_000
    ref_mu, P, D = cs_objectives(X, y, C, cost, omega)
    np.testing.assert_allclose(mu, ref_mu, rtol=1e-9, atol=1e-11)
    assert primal == pytest.approx(P, rel=1e-10) and dual == pytest.approx(D, rel=1e-10)
    assert P - D <= 1e-10 * abs(P)
    F = X @ mu.T
    assert np.mean(np.all(F[np.arange(400), y][:, None] + cost[np.arange(400), y][:, None] - (F + cost) > 0,
                          axis=1, where=np.eye(3, dtype=bool)[y] == 0)) > 0.5  # most rows hold their margin


def test_crammer_singer_dual_warm_start_and_projection_of_the_start():
    X, y = multiclass_data(4, 200, 10, 4)
    sol = crammer_singer_dual(X, y, 1.0, tol=1e-13, max_iter=100_000)
    start = sol.dual.copy()
    again = crammer_singer_dual(X, y, 1.0, tol=1e-10, initial_dual=start, seed=5)
    assert again.n_iter <= 1 and again.converged
    np.testing.assert_allclose(again.coef, sol.coef, rtol=1e-8, atol=1e-10)
    assert np.array_equal(start, sol.dual)
    off = crammer_singer_dual(X, y, 1.0, tol=1e-10, max_iter=100_000, initial_dual=3.0 * start - 0.1)
    np.testing.assert_allclose(off.coef, sol.coef, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("tol", [1e-2, 1e-8])
def test_crammer_singer_screening_meets_the_tolerance_on_all_columns(tol):
    """screen=True with 12 near-zero columns (1e-4 of the others) beside 6 informative ones:
    the gap is certified on the full problem, the solution is the unscreened one to the
    tolerance, and a problem without small columns is solved exactly as without screening."""
    X, y = multiclass_data(6, 300, 6, 3)
    rng = np.random.default_rng(6)
    wide = np.hstack([X[:, :3], 1e-4 * rng.standard_normal((300, 12)), X[:, 3:]])
    sol = crammer_singer_dual(wide, y, 2.0, tol=tol, max_iter=100_000, screen=True)
    plain = crammer_singer_dual(wide, y, 2.0, tol=tol, max_iter=100_000)
    assert sol.converged and sol.coef.shape == (3, 18)
    mu, P, D = cs_objectives(wide, y, np.full(300, 2.0), 1.0 - np.eye(3)[y], sol.dual)
    np.testing.assert_allclose(sol.coef, mu, rtol=1e-10, atol=1e-12)
    assert sol.primal_objective == pytest.approx(P, rel=1e-10) and sol.dual_objective == pytest.approx(D, rel=1e-10)
    assert 0 <= P - D <= tol * max(abs(P), abs(D))
    assert abs(sol.primal_objective - plain.primal_objective) <= 2 * tol * abs(plain.primal_objective)
    same = crammer_singer_dual(X, y, 2.0, tol=tol, max_iter=100_000, screen=True)
    alone = crammer_singer_dual(X, y, 2.0, tol=tol, max_iter=100_000)
    np.testing.assert_array_equal(same.coef, alone.coef)


def test_project_simplex_against_its_optimality_conditions():
    rng = np.random.default_rng(0)
    for L in (1, 2, 3, 7):
        for total in (0.0, 0.4, 2.5):
            v = rng.normal(size=L) * 2
            out, work = np.empty(L), np.empty(L)
            project_simplex(v, total, out, work)
            assert np.all(out >= 0) and out.sum() == pytest.approx(total, abs=1e-12)
            # KKT of the projection: v - out = theta where out > 0, v - out <= theta where out = 0
            theta = (v - out)[out > 0]
            if theta.size:
                assert np.ptp(theta) < 1e-12 and np.all(v[out == 0] <= theta[0] + 1e-12)


def test_project_simplex_keeps_the_total_for_huge_entries():
    """A row of squared norm 1e-16 puts entries of order 1e16 into the projection; the
    total (1) is below their rounding and must not be lost."""
    out, work = np.empty(3), np.empty(3)
    project_simplex(np.array([3e16, -2e16, 1e16]), 1.0, out, work)
    np.testing.assert_array_equal(out, [1.0, 0.0, 0.0])


def test_crammer_singer_dual_with_rows_of_tiny_norm():
    """Rows scaled by 1e-8 (squared norms 1e-16): the dual stays feasible, converges,
    and gives the solution without those rows (they carry no weight) within 1e-9."""
    X, y = multiclass_data(5, 200, 5, 3)
    X[:5] *= 1e-8
    sol = crammer_singer_dual(X, y, 1.0, tol=1e-10)
    assert sol.converged
    np.testing.assert_allclose(sol.dual.sum(axis=1), 1.0, rtol=1e-12)
    without = crammer_singer_dual(X[5:], y[5:], 1.0, tol=1e-10)
    assert rel(sol.coef, without.coef) < 1e-9


# --- epsilon-insensitive regression (Lemma 11) -----------------------------------------

@pytest.mark.parametrize("seed, N, K, C, eps", [(0, 50, 5, 1.0, 0.1), (1, 150, 10, 0.3, 0.0), (2, 300, 20, 2.0, 0.5)])
def test_svr_dual_matches_liblinear_and_is_certified(seed, N, K, C, eps):
    X, y = regression_data(seed, N, K)
    sol = svr_dual(X, y, C, eps, **TIGHT)
    ref = LinearSVR(loss="epsilon_insensitive", epsilon=eps, dual=True, C=C, **SKLEARN).fit(X, y)
    assert rel(sol.coef, ref.coef_) <= 1e-4
    assert np.all(np.abs(sol.dual) <= C)
    assert_certified(sol, *svr_objectives(X, y, C, eps, sol.dual))
    # KKT: beta = C sign(r) outside the tube, 0 strictly inside it
    r = y - X @ sol.coef
    out = np.abs(r) > eps + 1e-6
    np.testing.assert_allclose(sol.dual[out], C * np.sign(r[out]), atol=1e-9 * C)
    np.testing.assert_allclose(sol.dual[np.abs(r) < eps - 1e-6], 0.0, atol=1e-9 * C)


def test_svr_dual_per_row_C_warm_start_and_non_convergence():
    X, y = regression_data(3, 150, 8)
    C = np.random.default_rng(3).uniform(0.2, 2.0, 150)
    C[1::3] = 0.0
    sol = svr_dual(X, y, C, 0.2, **TIGHT)
    assert np.all(sol.dual[1::3] == 0.0)
    assert_certified(sol, *svr_objectives(X, y, C, 0.2, sol.dual))
    keep = C > 0
    np.testing.assert_allclose(sol.coef, svr_dual(X[keep], y[keep], C[keep], 0.2, **TIGHT).coef, rtol=1e-5, atol=1e-8)
    again = svr_dual(X, y, C, 0.2, tol=1e-10, initial_dual=sol.dual)
    assert again.n_iter <= 1 and again.converged
    short = svr_dual(X, y, C, 0.2, tol=1e-12, max_iter=2)
    assert short.n_iter == 2 and not short.converged


# --- hard cases: the default max_iter suffices ---------------------------------------------

def hard_features(kind, seed, N, K):
    rng = np.random.default_rng(seed)
    if kind == "badly scaled":  # feature scales from 1e-3 to 1e2
        return rng.normal(size=(N, K)) * np.logspace(-3, 2, K)
    if kind == "duplicated rows":
        return np.repeat(rng.normal(size=(N // 3, K)), 3, axis=0)
    return (rng.random((N, K)) < 0.3).astype(float)  # binary features, many tied rows


@pytest.mark.parametrize("kind", ["badly scaled", "duplicated rows", "binary"])
def test_hard_problems_converge_within_the_default_max_iter(kind):
    X = hard_features(kind, 4, 240, 12)
    rng = np.random.default_rng(5)
    w = rng.normal(size=12)
    score = X @ w
    y = np.where(score + 0.5 * np.std(score) * rng.normal(size=240) > np.median(score), 1.0, -1.0)
    sol = binary_svm_dual(X, y, 2.0, tol=1e-10)
    assert_certified(sol, *binary_objectives(X, y, np.full(240, 2.0), sol.dual))
    t = score + 0.3 * np.std(score) * rng.normal(size=240)
    sol = svr_dual(X, t, 2.0, 0.05 * np.std(t), tol=1e-10)
    assert_certified(sol, *svr_objectives(X, t, 2.0, 0.05 * np.std(t), sol.dual))
    labels = np.digitize(score + 0.5 * np.std(score) * rng.normal(size=240), np.quantile(score, [0.25, 0.5, 0.75]))
    sol = crammer_singer_dual(X, labels, 2.0, tol=1e-10)
    assert_certified(sol, *cs_objectives(X, labels, np.full(240, 2.0), 1.0 - np.eye(4)[labels], sol.dual))


def test_edge_cases():
    # one row, one feature: w = min(C, 1 / x^2) for the binary dual
    sol = binary_svm_dual(np.array([[2.0]]), np.array([1.0]), 1.0, tol=1e-12)
    assert sol.dual[0] == pytest.approx(0.25) and sol.coef[0] == pytest.approx(0.5)
    # all C = 0: mu = 0, both objectives 0, converged before any pass
    X, y = binary_data(10, 30, 3)
    sol = binary_svm_dual(X, y, 0.0)
    assert sol.converged and sol.n_iter == 0 and np.all(sol.coef == 0) and sol.gap == 0.0
    sol = crammer_singer_dual(X, np.arange(30) % 3, np.zeros(30))
    assert sol.converged and sol.n_iter == 0 and np.all(sol.dual == 0)
    # one label only, and separable data with a large C: still certified
    sol = binary_svm_dual(X, np.ones(30), 1.0, tol=1e-10)
    assert_certified(sol, *binary_objectives(X, np.ones(30), np.full(30, 1.0), sol.dual))
    ysep = np.where(X[:, 0] > 0, 1.0, -1.0)
    sol = binary_svm_dual(X, ysep, 1e4, tol=1e-10)
    assert_certified(sol, *binary_objectives(X, ysep, np.full(30, 1e4), sol.dual))
    assert np.all(ysep * (X @ sol.coef) >= 1 - 1e-6)  # hard margin reached


# --- validation ---------------------------------------------------------------------------

def test_bad_input_is_named():
    X, y = binary_data(9, 20, 3)
    with pytest.raises(ValueError, match="features must be a 2-D"):
        binary_svm_dual(X[:, 0], y, 1.0)
    with pytest.raises(ValueError, match="features contains NaN"):
        binary_svm_dual(np.where(np.eye(20, 3) > 0, np.nan, X), y, 1.0)
    with pytest.raises(ValueError, match="y must have shape"):
        binary_svm_dual(X, y[:-1], 1.0)
    with pytest.raises(ValueError, match=r"y must hold only \+1 and -1"):
        binary_svm_dual(X, (y > 0).astype(float), 1.0)
    with pytest.raises(ValueError, match="C must be >= 0"):
        binary_svm_dual(X, y, -1.0)
    with pytest.raises(ValueError, match="C must be a scalar or have shape"):
        binary_svm_dual(X, y, np.ones(5))
    with pytest.raises(ValueError, match="C must be >= 0"):
        binary_svm_dual(X, y, np.where(np.arange(20) == 3, -1.0, 1.0))
    with pytest.raises(ValueError, match="initial_dual must have shape"):
        binary_svm_dual(X, y, 1.0, initial_dual=np.zeros(3))
    with pytest.raises(ValueError, match="max_iter"):
        binary_svm_dual(X, y, 1.0, max_iter=0)
    with pytest.raises(ValueError, match="tol must be >= 0"):
        binary_svm_dual(X, y, 1.0, tol=-1.0)
    with pytest.raises(ValueError, match="epsilon must be >= 0"):
        svr_dual(X, y, 1.0, -0.1)
    with pytest.raises(ValueError, match="y contains NaN"):
        svr_dual(X, np.where(np.arange(20) == 2, np.nan, y), 1.0, 0.1)
    labels = np.arange(20) % 3
    with pytest.raises(ValueError, match="outside 0..n_classes-1"):
        crammer_singer_dual(X, labels, 1.0, n_classes=2)
    with pytest.raises(ValueError, match="class labels 0..L-1"):
        crammer_singer_dual(X, labels - 1, 1.0)
    with pytest.raises(ValueError, match="integer class labels"):
        crammer_singer_dual(X, labels + 0.5, 1.0)
    with pytest.raises(ValueError, match="cost must have shape"):
        crammer_singer_dual(X, labels, 1.0, cost=np.ones((20, 2)))
    with pytest.raises(ValueError, match="cost must be >= 0"):
        crammer_singer_dual(X, labels, 1.0, cost=-np.ones((20, 3)))
    with pytest.raises(ValueError, match=r"initial_dual must have shape \(20, 3\)"):
        crammer_singer_dual(X, labels, 1.0, initial_dual=np.zeros(20))


def test_loose_tolerances_start_with_a_long_chunk_of_coordinate_descent(monkeypatch):
    """At ``tol >= FINISH_BELOW_TOL`` the active-set finish waits for LOOSE_FIRST_PASSES
    passes: a problem that coordinate descent solves in fewer never calls it; one where it
    stalls (C = 10 here) still converges, with the finish."""
    from regbayes.core import duals, polish

    calls = []
    original = polish.crammer_singer_polish
    monkeypatch.setattr(polish, "crammer_singer_polish", lambda *a: calls.append(1) or original(*a))
    X, y = multiclass_data(6, 400, 10, 4)
    easy = crammer_singer_dual(X, y, 0.1, tol=duals.FINISH_BELOW_TOL)
    assert easy.converged and easy.n_iter < duals.LOOSE_FIRST_PASSES and not calls
    hard = crammer_singer_dual(X, y, 10.0, tol=duals.FINISH_BELOW_TOL)
    assert hard.converged and hard.gap <= duals.FINISH_BELOW_TOL * hard.primal_objective and calls


def test_the_warm_up_problem_runs_the_solver_and_the_finish():
    """The background warm-up's problem goes through the public solver and the active-set
    finish without error (a failure there is swallowed in the thread), and the finish's
    result is feasible; starting the warm-up twice starts one thread."""
    from regbayes.core import duals

    omega = duals._solve_a_small_problem()
    assert omega.shape == (5, 3) and np.all(omega >= 0)
    np.testing.assert_allclose(omega.sum(axis=1), 1.0, rtol=1e-12)
    duals.warm_up_crammer_singer()
    duals.warm_up_crammer_singer()
    assert len(duals._WARM_UP) == 1
    duals._WARM_UP[0].join(timeout=60)
    assert not duals._WARM_UP[0].is_alive()
