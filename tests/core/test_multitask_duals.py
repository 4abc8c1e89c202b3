"""The multi-task dual with a shared prior component: against the single-task duals on the
augmented features it is equivalent to (an exact answer), the independent case, warm
starts, and bad input."""
import numpy as np
import pytest

from regbayes.core import binary_svm_dual, svr_dual
from regbayes.core.multitask_duals import multitask_dual

N, P, M = 60, 4, 3


@pytest.fixture(scope="module")
def pairs():
    """Every row labelled for every task (the indicator form), task weights around a common one."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, P))
    rows, tasks = np.repeat(np.arange(N), M), np.tile(np.arange(M), N)
    f = np.einsum("rp,rp->r", X[rows], (rng.standard_normal((M, P)) + 1.0)[tasks])
    return X, rows, tasks, f + 0.4 * rng.standard_normal(f.shape)


def augmented(X, rows, tasks, s0):
    """``[e_m (x) x, sqrt(s0) x]``: the features on which the dual is a single-task one."""
    A = np.zeros((len(rows), (M + 1) * P))
    for r, (n, m) in enumerate(zip(rows, tasks)):
        A[r, m * P:(m + 1) * P] = X[n]
    A[:, M * P:] = np.sqrt(s0) * X[rows]
    return A


@pytest.mark.parametrize("loss", ["hinge", "epsilon_insensitive"])
@pytest.mark.parametrize("s0", [0.0, 2.5])
def test_equals_the_single_task_dual_on_augmented_features(pairs, loss, s0):
    """coef_m = V_m + s0 U equals the augmented solution's task block plus sqrt(s0) times
    its shared block, and the objectives and KL agree (both solved to a 1e-10 relative gap)."""
    X, rows, tasks, f = pairs
    y = np.sign(f) if loss == "hinge" else f
    C = np.linspace(0.2, 1.0, len(rows))
    sol = multitask_dual(X, rows, tasks, y, C, n_tasks=M, loss=loss, epsilon=0.1, shared_variance=s0, tol=1e-10,
                         max_iter=200_000)
    A = augmented(X, rows, tasks, s0)
    ref = (binary_svm_dual(A, y, C, tol=1e-12, max_iter=200_000) if loss == "hinge"
           else svr_dual(A, y, C, 0.1, tol=1e-12, max_iter=200_000))
    assert sol.converged and ref.converged
    expected = ref.coef[:M * P].reshape(M, P) + np.sqrt(s0) * ref.coef[M * P:]
    np.testing.assert_allclose(sol.coef, expected, rtol=0, atol=1e-5 * np.abs(expected).max())
    np.testing.assert_allclose(sol.shared_coef, np.sqrt(s0) * ref.coef[M * P:], rtol=0, atol=1e-5 * np.abs(expected).max())
    np.testing.assert_allclose(sol.primal_objective, ref.primal_objective, rtol=1e-8)
    np.testing.assert_allclose(sol.kl, 0.5 * ref.coef @ ref.coef, rtol=1e-5)
    assert 0 <= sol.gap <= 1e-10 * abs(sol.primal_objective) + 1e-12


def test_independent_tasks_are_the_per_task_duals(pairs):
    """shared_variance = 0: each task's coef is the binary dual of its own pairs."""
    X, rows, tasks, f = pairs
    sol = multitask_dual(X, rows, tasks, np.sign(f), 0.5, n_tasks=M, tol=1e-10, max_iter=100_000)
    for m in range(M):
        own = tasks == m
        ref = binary_svm_dual(X[rows[own]], np.sign(f[own]), 0.5, tol=1e-12, max_iter=100_000)
        np.testing.assert_allclose(sol.coef[m], ref.coef, rtol=0, atol=1e-5)
    np.testing.assert_array_equal(sol.shared_coef, 0.0)


def test_warm_start_and_inputs_unchanged(pairs):
    X, rows, tasks, f = pairs
    y = np.sign(f)
    first = multitask_dual(X, rows, tasks, y, 1.0, n_tasks=M, shared_variance=1.0, tol=1e-6, max_iter=10_000)
    start = first.dual.copy()
    again = multitask_dual(X, rows, tasks, y, 1.0, n_tasks=M, shared_variance=1.0, tol=1e-6, max_iter=10_000,
                           initial_dual=start)
    assert again.n_iter == 0 and again.converged
    np.testing.assert_array_equal(start, first.dual)  # the caller's warm start is not written to
    np.testing.assert_array_equal(again.coef, first.coef)


@pytest.mark.parametrize("change, match", [
    (dict(loss="squared"), "unknown loss"),
    (dict(rows=np.full(N * M, N)), "rows must hold row numbers"),
    (dict(rows=np.zeros((N * M, 1), dtype=int)), "rows must be a 1-D"),
    (dict(tasks=np.full(N * M, M)), "tasks must hold task numbers"),
    (dict(tasks=np.zeros(5, dtype=int)), "one entry per pair"),
    (dict(tasks=np.zeros(N * M)), "integer array"),
    (dict(y=np.full(N * M, 0.5)), r"only \+1 and -1"),
    (dict(shared_variance=-1.0), "shared_variance"),
    (dict(C=-1.0), "C must be"),
    (dict(n_tasks=0), "n_tasks"),
])
def test_bad_input(pairs, change, match):
    X, rows, tasks, f = pairs
    args = dict(rows=rows, tasks=tasks, y=np.sign(f), C=1.0, n_tasks=M, loss="hinge", shared_variance=1.0)
    args.update(change)
    with pytest.raises((ValueError, TypeError), match=match):
        multitask_dual(X, args.pop("rows"), args.pop("tasks"), args.pop("y"), args.pop("C"), **args)
