"""An exact finish for the duals of :mod:`regbayes.core.duals`: a primal active-set method.

Dual coordinate descent finds quickly which dual variables sit on a bound (rows strictly
inside or outside the margin) and then converges slowly among the others (rows on the
margin), where it is Gauss–Seidel on a system of rank at most ``dim(mu)``. Each dual here
is a concave quadratic

    f(a) = c.a - 1/2 ||mu||^2,   mu = mu0 + R^T a   (R: one row per dual variable),

on a box ``lower <= a <= upper``, some variables also tied by equalities ``sum_{i in G}
a_i = const`` (the Crammer–Singer rows). The active-set method (Nocedal & Wright 2006,
section 16.5) holds the variables on their bounds and maximises over the others on their
face: with ``N`` a basis of the face's directions (unit vectors; differences
``e_j - e_first`` inside an equality group), ``h = N^T grad f`` and ``M = R^T N``,

* if ``h`` has a part ``r`` that ``M`` maps to 0, ``f`` rises linearly along ``N r``: go
  along it to the first bound;
* else the Newton step ``t = (M^T M)^+ h`` (SVD of ``M``, O(m dim(mu)^2) for m free
  directions), stopped at the first bound it meets.

A variable that meets its bound is held there; at the face's maximum, the held variable
whose gradient points most into the feasible set is released; when none does, the
Karush–Kuhn–Tucker conditions hold and the point is optimal. Every iterate is feasible
and ``f`` never decreases. The duals module keeps the result only if it raises the dual
objective, and resumes coordinate descent otherwise.
"""
from __future__ import annotations

import numpy as np

from .dual_kernels import project_segments

def _face_basis(free: np.ndarray, group: np.ndarray):
    """Directions of the face: ``(var_plus, var_minus)``, direction k being
    ``e[var_plus[k]] - e[var_minus[k]]`` (``var_minus = -1``: a unit vector)."""
    idx = np.flatnonzero(free)
    g = group[idx]
    plain = idx[g < 0]
    tied = idx[g >= 0]
    plus, minus = [plain], [np.full(plain.size, -1)]
    if tied.size:
        order = np.argsort(group[tied], kind="stable")
        tied = tied[order]
        gt = group[tied]
        starts = np.flatnonzero(np.r_[True, gt[1:] != gt[:-1]])
        first = np.repeat(tied[starts], np.diff(np.r_[starts, tied.size]))
        rest = tied != first
        plus.append(tied[rest])
        minus.append(first[rest])
    return np.concatenate(plus), np.concatenate(minus)


def _direction(M: np.ndarray, h: np.ndarray):
    """``(t, is_newton)``: the part of ``h`` that ``M^T`` maps to 0 (a ray of linear ascent)
    when it is not negligible, else the Newton step ``t = (M M^T)^+ h``. Computed from the
    eigen-decomposition of the small Gram matrix ``M^T M`` (dim(mu) square)."""
    lam, V = np.linalg.eigh(M.T @ M)
    keep = lam > max(float(lam[-1]), 0.0) * 1e-12
    if not keep.any():
        return h, False
    V, lam = V[:, keep], lam[keep]
    z = V @ ((V.T @ (M.T @ h)) / lam)  # (M^T M)^+ M^T h
    ray = h - M @ z
    if np.linalg.norm(ray) > 1e-8 * np.linalg.norm(h):
        return ray, False
    return M @ (V @ ((V.T @ z) / lam)), True


def _clip_box(values, idx, lower, upper, group, current):
    return np.clip(values, lower[idx], upper[idx])


def _project_groups(values, idx, lower, upper, group, current):
    """Box clip of the untied variables; each tied group's moving part projected onto
    ``{a >= lower, sum a = its current sum}`` (the group's held variables stay on their bound)."""
    out = np.clip(values, lower[idx], upper[idx])
    sel = np.flatnonzero(group[idx] >= 0)
    if sel.size:
        sel = sel[np.argsort(group[idx[sel]], kind="stable")]
        gid = group[idx[sel]]
        starts = np.flatnonzero(np.r_[True, gid[1:] != gid[:-1], True])
        base = lower[idx[sel]]
        totals = np.add.reduceat(current[idx[sel]] - base, starts[:-1])
        shifted = np.empty(sel.size)
        project_segments(np.ascontiguousarray(values[sel] - base), starts.astype(np.int64), totals, shifted)
        out[sel] = shifted + base
    return out


def active_set(rows_of, grad_of, lower, upper, group, a, mu, *, max_iter):
    """Maximise ``c.a - 1/2 ||mu||^2`` from the feasible ``a`` (``mu`` its weights, flat).

    ``rows_of(idx)`` gives the rows of ``R`` for the variables ``idx``; ``grad_of(mu)`` the
    gradient ``c - R mu`` of all variables; ``group[i]`` the equality group of variable i
    (-1 for none). Variables with ``lower == upper`` stay fixed. Returns ``(a, mu)``.

    A step blocked by a bound continues along the projected arc ``P(a + s d)`` (halving
    ``s`` from the unconstrained maximiser) while that beats stopping at the first bound,
    so that many variables can reach their bounds in one step (Moré & Toraldo 1991)."""
    a, mu = a.copy(), mu.copy()
    fixed = lower >= upper
    tied = group >= 0
    box = ~tied
    scale = 1.0
    released = np.zeros(a.size, dtype=bool)
    for _ in range(max_iter):
        free = released | (~fixed & (a > lower) & ((a < upper) | tied))
        released[:] = False
        g = grad_of(mu)
        scale = max(scale, float(np.max(np.abs(g), initial=0.0)))
        plus, minus = _face_basis(free, group)
        at_face_max = True
        if plus.size:
            M = rows_of(plus) - np.where(minus[:, None] >= 0, rows_of(np.maximum(minus, 0)), 0.0)
            h = g[plus] - np.where(minus >= 0, g[np.maximum(minus, 0)], 0.0)
            t, newton = _direction(M, h)
            slope = float(h @ t)
            if slope > 1e-15 * scale * float(np.abs(t).sum()):
                dmu = M.T @ t
                curvature = float(dmu @ dmu)
                best = slope / curvature if curvature > 1e-14 * slope * (1.0 + abs(slope)) else np.inf
                d = np.zeros_like(a)
                np.add.at(d, plus, t)
                np.add.at(d, minus[minus >= 0], -t[minus >= 0])
                moving = np.flatnonzero(d)
                dm = d[moving]
                with np.errstate(divide="ignore", invalid="ignore"):
                    room = np.where(dm > 0, (upper[moving] - a[moving]) / dm, (lower[moving] - a[moving]) / dm)
                first = float(np.min(room))
                if best <= first:  # not blocked
                    a[moving] += best * dm
                    mu += best * dmu
                    at_face_max = newton
                else:
                    rows = rows_of(moving)
                    project = _project_groups if tied.any() else _clip_box
                    floor = slope * first - 0.5 * curvature * first**2  # the gain of stopping at the first bound
                    s = best if np.isfinite(best) else float(np.max(room[np.isfinite(room)], initial=first))
                    step = None
                    for _ in range(40):
                        if s <= first:
                            break
                        trial = project(a[moving] + s * dm, moving, lower, upper, group, a)
                        delta = trial - a[moving]
                        dmu_s = rows.T @ delta
                        if g[moving] @ delta - 0.5 * dmu_s @ dmu_s >= floor:
                            step = (trial, dmu_s)
                            break
                        s *= 0.5
                    if step is None:
                        trial = project(a[moving] + first * dm, moving, lower, upper, group, a)
                        j = int(np.argmin(room))
                        trial[j] = upper[moving[j]] if dm[j] > 0 and box[moving[j]] else lower[moving[j]]
                        if tied[moving[j]]:
                            trial = project(trial, moving, lower, upper, group, a)
                        step = (trial, rows.T @ (trial - a[moving]))
                    a[moving] = step[0]
                    mu += step[1]
                    at_face_max = False
        if not at_face_max:
            continue
        # at the face's maximum: release the held variables that most want to move in
        pull = np.where(box & ~free & ~fixed & (a <= lower), g, 0.0) - np.where(box & ~free & ~fixed & (a >= upper), g, 0.0)
        if tied.any():
            level = np.full(int(group.max()) + 1, -np.inf)
            np.maximum.at(level, group[tied & free], g[tied & free])
            pull[tied] = np.where(~free[tied] & ~fixed[tied], g[tied] - level[group[tied]], 0.0)
        wanted = np.flatnonzero(pull > 1e-12 * scale)
        if wanted.size == 0:
            break
        released[wanted[np.argsort(-pull[wanted])[: max(1, mu.size)]]] = True
    return a, mu


def binary_polish(X, y, C, w, mu, max_iter):
    """Active-set finish for eq. 28: ``a = w``, ``R = y x``, ``c = 1``, box ``[0, C]``."""
    n = w.size
    return active_set(lambda idx: y[idx, None] * X[idx], lambda m: 1.0 - y * (X @ m), np.zeros(n), C,
                      np.full(n, -1), w, mu, max_iter=max_iter)[0]


def svr_polish(X, y, C, epsilon, beta, mu, max_iter):
    """Active-set finish for the epsilon-insensitive dual in the split form ``beta = omega -
    omega*``, ``omega, omega* in [0, C]``: ``c = (y - eps, -y - eps)``, ``R = (x, -x)``. Its
    objective equals the dual's where at most one of ``omega_n, omega*_n`` is non-zero."""
    n = beta.size

    def rows(idx):
        return np.where((idx < n)[:, None], X[idx % n], -X[idx % n])

    def grad(m):
        f = X @ m
        return np.concatenate([y - epsilon - f, -y - epsilon + f])

    start = np.concatenate([np.maximum(beta, 0.0), np.maximum(-beta, 0.0)])
    a, _ = active_set(rows, grad, np.zeros(2 * n), np.concatenate([C, C]), np.full(2 * n, -1), start, mu,
                      max_iter=max_iter)
    return a[:n] - a[n:]


def crammer_singer_polish(X, labels, C, cost, omega, mu, max_iter):
    """Active-set finish for the Crammer–Singer dual: ``a = omega`` (flattened), variable
    ``(n, k)`` has ``R`` row ``-x_n`` in block ``k`` of ``mu`` (L, K), gradient
    ``l_nk + mu_k.x_n``, bound ``omega_nk >= 0`` and group ``n`` (``sum_k omega_nk = C_n``)."""
    N, L = omega.shape
    K = X.shape[1]

    def rows(idx):
        out = np.zeros((idx.size, L, K))
        out[np.arange(idx.size), idx % L] = -X[idx // L]
        return out.reshape(idx.size, L * K)

    def grad(m):
        return (cost + X @ m.reshape(L, K).T).ravel()

    upper = np.repeat(np.where(C > 0, np.inf, 0.0), L)
    group = np.repeat(np.arange(N), L)
    a, _ = active_set(rows, grad, np.zeros(N * L), upper, group, omega.ravel(), mu.ravel(), max_iter=max_iter)
    a = a.reshape(N, L)
    a *= np.where(C > 0, C / np.maximum(a.sum(axis=1), 1e-300), 0.0)[:, None]  # rounding of the row sums
    return a
