"""The multi-task dual with a shared prior component: tasks that borrow strength.

Paper 002's multi-task models give each task m an independent prior ``eta_m ~ N(0, I)``;
the tasks share only their features. A hierarchical Gaussian prior lets them share the
weights too (Evgeniou and Pontil 2004's regularised multi-task learning, as a prior):

    eta_m = v_m + u,    v_m ~ N(0, I) (one per task),    u ~ N(0, s0 I) (shared),

with ``s0 = shared_variance``. The expectation constraints are those of the tasks' losses
on pairs ``r = (n_r, m_r)`` (row ``n_r`` carries a label ``y_r`` of task ``m_r``), each
with its cost ``C_r``. Theorem 6 with this prior gives ``q(v, u)`` Gaussian with the
prior's covariance and the means

    V_m = sum_{r: m_r = m} a_r x_{n_r},    s0 U,    U = sum_r a_r x_{n_r},

so that ``E[eta_m] = V_m + s0 U`` and ``E[f_m(x)] = (V_m + s0 U).x``, where ``a_r = y_r w_r``
(hinge loss, Lemma 9, ``0 <= w_r <= C_r``) or ``a_r = beta_r`` (epsilon-insensitive loss,
Lemma 11, ``|beta_r| <= C_r``). The dual maximises

    hinge:  sum_r w_r                                   - 1/2 (sum_m ||V_m||^2 + s0 ||U||^2)
    eps:    sum_r (beta_r y_r - eps |beta_r|)           - 1/2 (sum_m ||V_m||^2 + s0 ||U||^2)

(the quadratic is ``log Z`` of the prior, and also ``KL(q || p)``); it is the single-task
dual of :mod:`regbayes.core.duals` on the features ``[e_m (x) x, sqrt(s0) x]`` (task block
and shared block), whose kernel is ``(1[m = m'] + s0) x.x'``; here solved without building
them. The primal is

    min  1/2 (sum_m ||V_m||^2 + s0 ||U||^2) + sum_r C_r loss((V_{m_r} + s0 U).x_{n_r}, y_r).

``s0 = 0`` gives the paper's independent tasks. Solved by dual coordinate descent (each
coordinate exactly, as in :mod:`regbayes.core.dual_kernels`, with ``||x||^2`` replaced by
``(1 + s0) ||x||^2``), pairs in a random order drawn from ``seed``, until the relative
duality gap is at most ``tol``.
"""
from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from ..validation import check_int, check_real
from .dual_kernels import _HELPER, _JIT, _converged, _row_norms, _shuffle
from .duals import _features, _float_array, _initial, _options, _row_costs

__all__ = ["MultiTaskDualSolution", "multitask_dual"]

LOSSES = ("hinge", "epsilon_insensitive")


class MultiTaskDualSolution(NamedTuple):
    """Solution of :func:`multitask_dual`.

    dual: (R,) ``w`` (hinge) or ``beta`` (epsilon-insensitive), one per pair
    coef: (M, P) ``E[eta_m] = V_m + s0 U``, the posterior mean of each task's weights
    shared_coef: (P,) ``E[u] = s0 U``
    kl: ``KL(q || p) = 1/2 (sum_m ||V_m||^2 + s0 ||U||^2)``
    primal_objective, dual_objective, gap, n_iter, converged: as :class:`regbayes.core.duals.DualSolution`
    """

    dual: np.ndarray
    coef: np.ndarray
    shared_coef: np.ndarray
    kl: float
    primal_objective: float
    dual_objective: float
    gap: float
    n_iter: int
    converged: bool


@numba.njit(**_HELPER)
def _weight(hinge, y, d):
    """``a_r``: ``y_r w_r`` (hinge) or ``beta_r``."""
    return y * d if hinge else d


@numba.njit(**_HELPER)
def _discriminant(X, n, V, t, U, s0):
    """``(V_t + s0 U).x_n``."""
    return np.dot(V[t], X[n]) + s0 * np.dot(U, X[n])


@numba.njit(**_HELPER)
def _objectives(X, rows, tasks, y, C, hinge, epsilon, s0, d, V, U):
    """Recompute ``V`` and ``U`` from the duals in place; return (primal, dual, kl)."""
    V[:, :] = 0.0
    U[:] = 0.0
    linear = 0.0
    for r in range(rows.shape[0]):
        if d[r] != 0.0:
            linear += d[r] if hinge else d[r] * y[r] - epsilon * abs(d[r])
            a = _weight(hinge, y[r], d[r])
            x = X[rows[r]]
            for k in range(x.shape[0]):
                V[tasks[r], k] += a * x[k]
                U[k] += a * x[k]
    kl = 0.5 * s0 * np.dot(U, U)
    for m in range(V.shape[0]):
        kl += 0.5 * np.dot(V[m], V[m])
    loss = 0.0
    for r in range(rows.shape[0]):
        if C[r] > 0.0:
            f = _discriminant(X, rows[r], V, tasks[r], U, s0)
            excess = 1.0 - y[r] * f if hinge else abs(f - y[r]) - epsilon
            if excess > 0.0:
                loss += C[r] * excess
    return kl + loss, linear - kl, kl


@numba.njit(**_HELPER)
def _pass(X, rows, tasks, y, C, hinge, epsilon, s0, d, V, U, sq, order):
    """One pass of exact coordinate updates over the pairs, in ``order``."""
    for r in order:
        if C[r] == 0.0:
            continue
        n, t = rows[r], tasks[r]
        f = _discriminant(X, n, V, t, U, s0)
        q = (1.0 + s0) * sq[n]
        if hinge:  # Hsieh et al. 2008
            grad = y[r] * f - 1.0
            if q > 0.0:
                new = min(max(d[r] - grad / q, 0.0), C[r])
            else:
                new = C[r] if grad < 0.0 else 0.0
        else:  # Ho and Lin 2012: soft threshold, then the box
            residual = y[r] - f
            if q > 0.0:
                v = d[r] + residual / q
                shrink = epsilon / q
                new = v - shrink if v > shrink else (v + shrink if v < -shrink else 0.0)
                new = min(max(new, -C[r]), C[r])
            else:
                new = C[r] if residual > epsilon else (-C[r] if residual < -epsilon else 0.0)
        if new != d[r]:
            a = _weight(hinge, y[r], new - d[r])
            x = X[n]
            for k in range(x.shape[0]):
                V[t, k] += a * x[k]
                U[k] += a * x[k]
            d[r] = new


@numba.njit(**_JIT)
def _multitask_cd(X, rows, tasks, y, C, hinge, epsilon, s0, d, tol, max_iter, seed, V, U, sq, order):
    _row_norms(X, sq)
    state = np.uint64(seed)
    primal, dual, kl = _objectives(X, rows, tasks, y, C, hinge, epsilon, s0, d, V, U)
    n_iter = 0
    while n_iter < max_iter and not _converged(primal, dual, tol):
        state = _shuffle(order, state)
        _pass(X, rows, tasks, y, C, hinge, epsilon, s0, d, V, U, sq, order)
        primal, dual, kl = _objectives(X, rows, tasks, y, C, hinge, epsilon, s0, d, V, U)
        n_iter += 1
    return primal, dual, kl, n_iter, _converged(primal, dual, tol)


def _index(values, name: str, n_pairs: int, upper: int, what: str) -> np.ndarray:
    out = np.asarray(values)
    if out.shape != (n_pairs,) or out.dtype.kind not in "iu":
        raise ValueError(f"{name} must be a 1-D integer array with one entry per pair ({n_pairs}), got "
                         f"shape {out.shape} and dtype {out.dtype}")
    if n_pairs and (out.min() < 0 or out.max() >= upper):
        raise ValueError(f"{name} must hold {what} in [0, {upper}), got values from {out.min()} to {out.max()}")
    return np.ascontiguousarray(out, dtype=np.int64)


def multitask_dual(features, rows, tasks, y, C, *, n_tasks: int, loss: str = "hinge", epsilon: float = 0.0,
                   shared_variance: float = 0.0, tol: float = 1e-8, max_iter: int = 1000, initial_dual=None,
                   seed: int = 0) -> MultiTaskDualSolution:
    """Solve the multi-task dual of the module docstring.

    Parameters
    ----------
    features : (N, P) array; ``x_n`` are its rows (each row's features, shared by its tasks).
    rows, tasks : (R,) integer arrays: pair ``r`` is row ``rows[r]`` labelled for task ``tasks[r]``.
    y : (R,) labels +1/-1 (hinge) or real targets (epsilon-insensitive).
    C : float >= 0 or (R,) array of them; ``C_r = 0`` removes pair r.
    n_tasks : M, the number of tasks (rows of ``coef``).
    loss : "hinge" or "epsilon_insensitive".
    epsilon : half-width of the insensitive tube (epsilon-insensitive loss).
    shared_variance : ``s0 >= 0``, the prior variance of the shared component ``u``.
    tol, max_iter, seed : relative duality gap to stop at, most passes, seed of the pair order.
    initial_dual : (R,) warm start, clipped into the box.
    """
    if loss not in LOSSES:
        raise ValueError(f"unknown loss {loss!r}; choose one of {LOSSES}")
    X = _features(features)
    n_tasks = check_int("n_tasks", n_tasks, minimum=1)
    rows = np.asarray(rows)
    if rows.ndim != 1:
        raise ValueError(f"rows must be a 1-D integer array (one entry per pair), got shape {rows.shape}")
    R = rows.shape[0]
    rows = _index(rows, "rows", R, X.shape[0], "row numbers of features")
    tasks = _index(tasks, "tasks", R, n_tasks, "task numbers")
    hinge = loss == "hinge"
    y = _float_array(y, "y", (R,), kind="a numeric array", shape_rule=f"have shape ({R},), one label per pair", first_bad=True)
    if hinge and not np.all((y == 1.0) | (y == -1.0)):
        raise ValueError(f"y must hold only +1 and -1 for the hinge loss, got {y[(y != 1.0) & (y != -1.0)][0]!r}")
    C = _row_costs(C, R)
    epsilon = check_real("epsilon", epsilon, low=0.0)
    s0 = check_real("shared_variance", shared_variance, low=0.0)
    tol, max_iter, seed = _options(tol, max_iter, seed)
    d = _initial(initial_dual, (R,))
    d = np.clip(d, 0.0, C) if hinge else np.clip(d, -C, C)
    V, U = np.zeros((n_tasks, X.shape[1])), np.zeros(X.shape[1])
    primal, dual, kl, n_iter, converged = _multitask_cd(X, rows, tasks, y, C, hinge, float(epsilon), float(s0), d,
                                                        tol, max_iter, seed, V, U, np.empty(X.shape[0]), np.arange(R))
    return MultiTaskDualSolution(dual=d, coef=V + s0 * U, shared_coef=s0 * U, kl=float(kl), primal_objective=float(primal),
                                 dual_objective=float(dual), gap=float(primal - dual), n_iter=int(n_iter),
                                 converged=bool(converged))
