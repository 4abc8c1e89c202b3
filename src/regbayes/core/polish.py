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
``e_j - e_ref`` inside an equality group), ``h = N^T grad f`` and ``M = N^T R``, and ``U``
an orthonormal basis of the range of ``M`` (its column-pivoted QR factorisation,
O(m dim(mu) min(m, dim(mu))) for m directions),

* if ``h`` has a part ``r = h - U U^T h`` that ``M^T`` maps to 0, ``f`` rises linearly
  along ``N r`` and ``mu`` does not move: go along it to the first bound, hold that
  variable, update ``U`` for the face without it (a rank-one correction, O(m rank)) and
  repeat, until no such part is left;
* then the Newton step ``t = (M M^T)^+ h``, stopped at the first bound it meets, or
  beyond it along the projected arc ``P(a + s t)`` when that is better (Moré & Toraldo
  1991), which holds many variables at once.

At the face's maximum, the held variable whose gradient points most into the feasible
set is released; when none does, the Karush–Kuhn–Tucker conditions hold and the point is
optimal. Every iterate is feasible and ``f`` never decreases. Before starting, Gap Safe
screening (Ndiaye et al. 2017) holds for good the variables whose optimal value the
duality gap already proves. The duals module keeps the result only if it raises the
dual objective, and resumes coordinate descent otherwise.
"""
from __future__ import annotations

import numba
import numpy as np
import scipy.linalg

from .dual_kernels import _JIT, project_segments

_ARC_TRIALS = 12


def _face_basis(free: np.ndarray, group: np.ndarray, a: np.ndarray):
    """Directions of the face: ``(plus, minus)``, direction k being ``e[plus[k]] -
    e[minus[k]]`` (``minus[k] = -1``: the unit vector ``e[plus[k]]``). In an equality group
    the reference variable is the largest, the one least likely to reach its bound."""
    idx = np.flatnonzero(free)
    g = group[idx]
    plain = idx[g < 0]
    tied = idx[g >= 0]
    plus, minus = [plain], [np.full(plain.size, -1)]
    if tied.size:
        tied = tied[np.lexsort((-a[tied], group[tied]))]
        gt = group[tied]
        starts = np.flatnonzero(np.r_[True, gt[1:] != gt[:-1]])
        ref = np.repeat(tied[starts], np.diff(np.r_[starts, tied.size]))
        rest = tied != ref
        plus.append(tied[rest])
        minus.append(ref[rest])
    return np.concatenate(plus), np.concatenate(minus)


def _range_basis(M: np.ndarray):
    """``(U, R)``: an orthonormal basis ``U`` (m, rank) of the range of ``M`` and the
    leading rows ``R`` (rank, dim) of its column-pivoted QR factorisation ``M P = Q R``, so
    that ``M M^T = U R R^T U^T``. Diagonal entries of ``R`` below ``max(m, dim) eps`` of the
    first count as 0 (they do not increase in magnitude along the diagonal). Cheaper than an
    SVD of the same matrix (CHANGELOG, 2026-11-28)."""
    Q, R, _ = scipy.linalg.qr(M, mode="economic", pivoting=True, check_finite=False)
    diag = np.abs(np.diagonal(R))
    rank = int(np.sum(diag > (diag[0] if diag.size else 0.0) * max(M.shape) * np.finfo(float).eps))
    return Q[:, :rank], R[:rank]


def _newton_direction(U, R, h):
    """``(M M^T)^+ h = U (R R^T)^(-1) U^T h`` with ``R R^T = T^T T`` from the QR
    factorisation ``R^T = Q' T`` (two triangular solves, no product that squares the
    condition number); 0 when ``M = 0``."""
    if R.shape[0] == 0:
        return np.zeros(U.shape[0])
    T = scipy.linalg.qr(R.T, mode="r", check_finite=False)[0][: R.shape[0]]
    w = scipy.linalg.solve_triangular(T, U.T @ h, trans="T", check_finite=False)
    return U @ scipy.linalg.solve_triangular(T, w, check_finite=False)


def _room(a, d, lower, upper):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(d > 0, (upper - a) / d, np.where(d < 0, (lower - a) / d, np.inf))


@numba.njit(**_JIT)
def _ray_cascade_kernel(U, h, plus, minus, a, lower, upper, tied, d, seen, moving, proj, ray, u, Uu):
    """The loop of :func:`_ray_cascade` in face coordinates: O(m rank) per held variable
    instead of O(size of ``a``). ``d`` and ``seen`` are zero on entry and on return."""
    m, r = U.shape
    moved = False
    for _ in range(m):
        for c in range(r):  # ray = h - U U^T h
            s = 0.0
            for i in range(m):
                s += U[i, c] * h[i]
            proj[c] = s
        ray_sq, h_sq, h_ray = 0.0, 0.0, 0.0
        for i in range(m):
            s = 0.0
            for c in range(r):
                s += U[i, c] * proj[c]
            ray[i] = h[i] - s
            ray_sq += ray[i] * ray[i]
            h_sq += h[i] * h[i]
            h_ray += h[i] * ray[i]
        if np.sqrt(ray_sq) <= 1e-9 * np.sqrt(h_sq) or h_ray <= 0.0:
            break
        count = 0  # d = sum_k ray_k (e[plus_k] - e[minus_k]) on the variables it touches
        for i in range(m):
            p = plus[i]
            d[p] += ray[i]
            if not seen[p]:
                seen[p] = True
                moving[count] = p
                count += 1
        for i in range(m):
            q = minus[i]
            if q >= 0:
                d[q] -= ray[i]
                if not seen[q]:
                    seen[q] = True
                    moving[count] = q
                    count += 1
        tau, var = np.inf, -1  # the first bound along d; ties: the lowest index, as argmin
        for t in range(count):
            i = moving[t]
            if d[i] > 0.0:
                room = (upper[i] - a[i]) / d[i]
            elif d[i] < 0.0:
                room = (lower[i] - a[i]) / d[i]
            else:
                continue
            if var < 0 or room < tau or (room == tau and i < var):
                tau, var = room, i
        k = -1
        if var >= 0 and np.isfinite(tau):
            tau = max(tau, 0.0)
            for t in range(count):
                i = moving[t]
                if d[i] != 0.0:
                    a[i] = min(max(a[i] + tau * d[i], lower[i]), upper[i])
            a[var] = upper[var] if d[var] > 0.0 and not tied[var] else lower[var]
            moved = True
            for i in range(m):
                if plus[i] == var and h[i] != 0.0:
                    k = i
                    break
        for t in range(count):
            d[moving[t]] = 0.0
            seen[moving[t]] = False
        if k < 0:  # no finite bound, or a group's reference variable held: the basis changes
            break
        nu2 = 0.0
        for c in range(r):
            u[c] = U[k, c]
            nu2 += u[c] * u[c]
        if nu2 > 0.0:
            coef = (1.0 / np.sqrt(1.0 - nu2) - 1.0 if nu2 < 1.0 - 1e-12 else -1.0) / nu2
            for i in range(m):
                s = 0.0
                for c in range(r):
                    s += U[i, c] * u[c]
                Uu[i] = s
            for i in range(m):
                for c in range(r):
                    U[i, c] += Uu[i] * u[c] * coef
        for c in range(r):
            U[k, c] = 0.0
        h[k] = 0.0
    return moved


def _ray_cascade(U, h, plus, minus, a, lower, upper, tied):
    """Follow the rays of linear ascent of the face (``mu`` fixed), holding one variable
    per step, until ``h`` has no part outside the range of ``U`` or a group's reference
    variable is held (then the basis is recomputed). Updates ``a``; returns True if it moved.
    A held direction's row of ``U`` is zeroed after the rank-one re-orthonormalisation
    ``U <- U + (1 / sqrt(1 - |u|^2) - 1) U u u^T / |u|^2``, ``u`` the held row."""
    m, r = U.shape
    return bool(_ray_cascade_kernel(
        np.array(U, np.float64, order="C"), np.array(h, np.float64), plus.astype(np.int64), minus.astype(np.int64), a,
        lower, upper, tied, np.zeros(a.size), np.zeros(a.size, np.bool_), np.empty(2 * m, np.int64), np.empty(r),
        np.empty(m), np.empty(r), np.empty(m)))


def active_set(rows_of, grad_of, lower, upper, group, a, mu, *, budget):
    """Maximise ``c.a - 1/2 ||mu||^2`` from the feasible ``a`` (``mu`` its weights, flat).

    ``rows_of(idx)`` gives the rows of ``R`` for the variables ``idx``; ``grad_of(mu)`` the
    gradient ``c - R mu`` of all variables; ``group[i]`` the equality group of variable i
    (-1 for none; a tied variable's ``upper`` is ignored). Variables with ``lower ==
    upper`` stay fixed. Stops before an iteration would take the work past ``budget``
    floating-point operations (estimated: the QR factorisation of the face, O(m dim min(m, dim)), and
    the ray cascade, O((m - dim)_+ m dim)), so that a large face is left to coordinate
    descent to shrink; at most ``4 dim(mu) + 20`` iterations. Returns ``(a, mu)``."""
    a, mu = a.copy(), mu.copy()
    tied = group >= 0
    upper = np.where(tied & (upper > lower), np.inf, upper)
    fixed = lower >= upper
    scale = 1.0
    released = np.zeros(a.size, dtype=bool)
    project = _project_groups if tied.any() else _clip_box
    spent = 0.0
    for _ in range(4 * mu.size + 20):
        free = released | (~fixed & (a > lower) & (a < upper))
        released[:] = False
        g = grad_of(mu)
        scale = max(scale, float(np.max(np.abs(g), initial=0.0)))
        plus, minus = _face_basis(free, group, a)
        m, dim = plus.size, mu.size
        spent += 2.0 * a.size * dim + m * dim * min(m, dim) + 3.0 * max(m - dim, 0) * m * dim
        if spent > budget:
            break
        if plus.size:
            M = rows_of(plus) - np.where(minus[:, None] >= 0, rows_of(np.maximum(minus, 0)), 0.0)
            h = g[plus] - np.where(minus >= 0, g[np.maximum(minus, 0)], 0.0)
            U, R = _range_basis(M)
            if _ray_cascade(U, h, plus, minus, a, lower, upper, tied):
                continue
            t = _newton_direction(U, R, h)
            slope = float(h @ t)
            if slope > 1e-15 * scale * float(np.abs(t).sum()):
                dmu = M.T @ t
                curvature = float(dmu @ dmu)
                d = np.zeros_like(a)
                np.add.at(d, plus, t)
                np.add.at(d, minus[minus >= 0], -t[minus >= 0])
                moving = np.flatnonzero(d)
                dm = d[moving]
                room = _room(a[moving], dm, lower[moving], upper[moving])
                first = float(np.min(room))
                best = slope / curvature if curvature > 0.0 else np.inf
                if best <= first:  # the face's maximum
                    a[moving] += best * dm
                    mu += best * dmu
                else:
                    rows = rows_of(moving)
                    floor = slope * first - 0.5 * curvature * first**2  # the gain of stopping at the first bound
                    s, step = (best if np.isfinite(best) else 2.0 * first), None
                    for _ in range(_ARC_TRIALS):
                        if s <= first:
                            break
                        trial = project(a[moving] + s * dm, moving, lower, upper, group, a)
                        dmu_s = rows.T @ (trial - a[moving])
                        if g[moving] @ (trial - a[moving]) - 0.5 * dmu_s @ dmu_s >= floor:
                            step = (trial, dmu_s)
                            break
                        s *= 0.5
                    if step is None:
                        j = int(np.argmin(room))
                        trial = np.clip(a[moving] + first * dm, lower[moving], upper[moving])
                        trial[j] = upper[moving[j]] if dm[j] > 0 and not tied[moving[j]] else lower[moving[j]]
                        step = (trial, rows.T @ (trial - a[moving]))
                    a[moving] = step[0]
                    mu += step[1]
                    continue
        # at the face's maximum: release the held variable that most wants to move in
        pull = np.where(~tied & ~free & ~fixed & (a <= lower), g, 0.0) - np.where(~tied & ~free & ~fixed & (a >= upper), g, 0.0)
        if tied.any():
            level = np.full(int(group.max()) + 1, -np.inf)
            np.maximum.at(level, group[tied & free], g[tied & free])
            pull[tied] = np.where(~free[tied] & ~fixed[tied], g[tied] - level[group[tied]], 0.0)
        i = int(np.argmax(pull))
        if pull[i] <= 1e-12 * scale:
            break
        released[i] = True
    return a, mu


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


def _radius(X, gap):
    """Gap Safe radius per row: ``|x_n.(mu - mu*)| <= ||x_n|| sqrt(2 gap)``, because the
    primal ``1/2 ||mu||^2 + loss`` is 1-strongly convex, so ``||mu - mu*||^2 / 2 <=
    P(mu) - P* <= P(mu) - D(a) = gap`` (Ndiaye et al. 2017)."""
    return np.sqrt(np.einsum("nk,nk->n", X, X)) * np.sqrt(2.0 * max(gap, 0.0))


def binary_polish(X, y, C, w, mu, gap, budget):
    """Active-set finish for eq. 28: ``a = w``, ``R = y x``, ``c = 1``, box ``[0, C]``.

    Screening first: the gradient ``1 - y_n x_n.mu`` is within ``r_n`` (:func:`_radius`)
    of its value at the optimum, where its sign fixes ``w*_n``: ``C_n`` if positive, 0 if
    negative. The rows whose sign is certain are held there for good."""
    g = 1.0 - y * (X @ mu)
    r = _radius(X, gap)
    lower, upper = np.zeros(w.size), C.copy()
    lower[g > r] = C[g > r]
    upper[g < -r] = 0.0
    a = np.clip(w, lower, upper)
    a, _ = active_set(lambda idx: y[idx, None] * X[idx], lambda m: 1.0 - y * (X @ m), lower, upper,
                      np.full(w.size, -1), a, (y * a) @ X, budget=budget)
    return a


def svr_polish(X, y, C, epsilon, beta, mu, gap, budget):
    """Active-set finish for the epsilon-insensitive dual in the split form ``beta = omega -
    omega*``, ``omega, omega* in [0, C]``: ``c = (y - eps, -y - eps)``, ``R = (x, -x)``. Its
    objective equals the dual's where at most one of ``omega_n, omega*_n`` is non-zero.
    Screened as in :func:`binary_polish`, with the gradients ``+-(y_n - x_n.mu) - eps``."""
    n = beta.size

    def rows(idx):
        return np.where((idx < n)[:, None], X[idx % n], -X[idx % n])

    def grad(m):
        f = X @ m
        return np.concatenate([y - epsilon - f, -y - epsilon + f])

    g = grad(mu)
    r = np.tile(_radius(X, gap), 2)
    CC = np.concatenate([C, C])
    lower, upper = np.zeros(2 * n), CC.copy()
    lower[g > r] = CC[g > r]
    upper[g < -r] = 0.0
    a = np.clip(np.concatenate([np.maximum(beta, 0.0), np.maximum(-beta, 0.0)]), lower, upper)
    a, _ = active_set(rows, grad, lower, upper, np.full(2 * n, -1), a, (a[:n] - a[n:]) @ X, budget=budget)
    return a[:n] - a[n:]


def crammer_singer_polish(X, labels, C, cost, omega, mu, gap, budget):
    """Active-set finish for the Crammer–Singer dual: ``a = omega`` (flattened), variable
    ``(n, k)`` has ``R`` row ``-x_n`` in block ``k`` of ``mu`` (L, K), gradient
    ``g_nk = l_nk + mu_k.x_n``, bound ``omega_nk >= 0`` and group ``n`` (``sum_k omega_nk = C_n``).

    Screening first: ``omega*_nk > 0`` only where ``g*_nk`` is the row's largest, and each
    ``g_nk`` is within ``r_n`` of ``g*_nk``; so an entry with ``g_nk < max_k' g_nk' - 2 r_n``
    is 0 at the optimum and is held there (a row left with one entry holds ``C_n`` on it)."""
    N, L = omega.shape
    K = X.shape[1]

    def rows(idx):
        out = np.zeros((idx.size, L, K))
        out[np.arange(idx.size), idx % L] = -X[idx // L]
        return out.reshape(idx.size, L * K)

    def grad(m):
        return (cost + X @ m.reshape(L, K).T).ravel()

    g = grad(mu.ravel()).reshape(N, L)
    out = g < g.max(axis=1, keepdims=True) - 2.0 * _radius(X, gap)[:, None]
    out[C == 0] = True
    start = np.where(out, 0.0, omega)
    kept = ~out
    for n in np.flatnonzero(np.any(out & (omega > 0), axis=1) & np.any(kept, axis=1)):  # rows that lost mass
        sel = np.flatnonzero(kept[n])
        shifted = np.empty(sel.size)
        project_segments(np.ascontiguousarray(start[n, sel]), np.array([0, sel.size]), np.array([C[n]]), shifted)
        start[n, sel] = shifted
    single = kept.sum(axis=1) == 1
    upper = np.where(out, 0.0, np.inf)
    upper[single] = np.where(kept[single], C[single, None], 0.0)
    lower = np.where(single[:, None] & kept, C[:, None], 0.0)
    onehot = np.zeros((N, L))
    onehot[np.arange(N), labels] = C
    mu0 = ((onehot - start).T @ X).ravel()
    group = np.repeat(np.arange(N), L)
    a, _ = active_set(rows, grad, lower.ravel(), upper.ravel(), group, start.ravel(), mu0, budget=budget)
    a = a.reshape(N, L)
    a *= np.where(C > 0, C / np.maximum(a.sum(axis=1), 1e-300), 0.0)[:, None]  # rounding of the row sums
    return a
