"""Kernels of M2DPM (paper 001, Algorithm 1): the exact eta-step solver and the
sequential assignment pass (numba). Both are pure functions: arrays in, arrays out.

eta-step. For one component with classifier features x~_i the eta-step minimises eq. 35
restricted to the component, ``||eta||^2 / (2 nu^2) + 2c sum_i hinge_i(eta)``; times
nu^2 this is the SVM primal

    min_w  1/2 ||w||^2 + U sum_i max(0, max_{j in group i} c_j - A_j w),   U = 2 c nu^2,

with one row ``A_j = y_i x~_i``, ``c_j = l`` per point for the binary hinge, and the
M - 1 rows ``A_(i,m) = (e_{y_i} - e_m) (x) x~_i``, ``c = l`` per point for Crammer-Singer.
:func:`svm_primal_qp` solves it by a primal-dual interior-point method (Mehrotra's
predictor-corrector, compiled with numba) whose Newton systems reduce to P x P (P = number of weights), so a
step costs O(J P^2) for J rows and the iteration count hardly depends on the data's
conditioning (dual coordinate descent needed >20,000 epochs on paper 001's Setting I
components, whose features are far from centred). It stops on the duality gap.
"""
from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def svm_hinge_sum(A, c, n_groups, w):
    """``sum_i max(0, max_{j in group i} c_j - A_j w)``; rows grouped contiguously, equal counts."""
    k = A.shape[0] // n_groups
    r = c - A @ w
    total = 0.0
    for i in range(n_groups):
        worst = 0.0
        for j in range(i * k, (i + 1) * k):
            if r[j] > worst:
                worst = r[j]
        total += worst
    return total


@numba.njit(cache=True)
def _group_sum(v, n, k):
    out = np.zeros(n)
    for i in range(n):
        for j in range(i * k, (i + 1) * k):
            out[i] += v[j]
    return out


@numba.njit(cache=True)
def _group_repeat(v, k):
    out = np.empty(v.shape[0] * k)
    for i in range(v.shape[0]):
        for j in range(k):
            out[i * k + j] = v[i]
    return out


@numba.njit(cache=True)
def _max_step(v, dv, alpha):
    for j in range(v.shape[0]):
        if dv[j] < 0.0:
            a = -v[j] / dv[j]
            if a < alpha:
                alpha = a
    return alpha


@numba.njit(cache=True)
def _newton(A, F, S, HE, D, s, lam, xi, mu, r_w, r_xi, r_s, r_c1, r_c2, n, k):
    """One Newton direction of the interior point (normal equations reduced to P x P)."""
    t1 = (r_c1 + lam * r_s) / s
    b_xi = -r_xi + _group_sum(t1, n, k) + r_c2 / xi
    b_w = -r_w + A.T @ t1
    rhs = b_w - F.T @ (b_xi / HE)
    dw = np.linalg.solve(S, rhs)  # S >= I in exact arithmetic; LU copes when rounding blurs it
    dxi = (b_xi - F @ dw) / HE
    ds = -r_s + A @ dw + _group_repeat(dxi, k)
    dlam = (r_c1 - lam * ds) / s
    dmu = (r_c2 - mu * dxi) / xi
    return dw, dxi, ds, dlam, dmu


@numba.njit(cache=True)
def svm_primal_qp(A, c, n_groups, U, gap_tol=1e-9, max_iter=200):
    """Exact minimiser of ``1/2 ||w||^2 + U sum_i max(0, max_{j in group i} c_j - A_j w)``.

    ``A`` (J, P) and ``c`` (J,) hold the rows of ``n_groups`` groups, contiguous and of
    equal size J / n_groups. Interior point on the QP ``min 1/2 w'w + U 1'xi`` subject to
    ``A w + G' xi >= c``, ``xi >= 0`` (G sums the rows of a group); its dual is
    ``max c'lam - 1/2 ||A'lam||^2`` over ``lam >= 0``, ``G lam <= U``.

    Returns ``(w, primal, gap, iterations)``: ``primal`` is the objective at ``w`` and
    ``gap`` the certified duality gap (``primal - dual``), ``<= gap_tol * primal`` unless
    ``max_iter`` was reached or the complementarity fell to rounding level first (then
    ``gap`` says how close ``w`` is).
    """
    J, P = A.shape
    n = n_groups
    k = J // n
    w = np.zeros(P)
    xi = np.empty(n)
    for i in range(n):
        xi[i] = max(np.max(c[i * k:(i + 1) * k]), 0.0) + 1.0
    s = A @ w + _group_repeat(xi, k) - c
    lam = np.full(J, U / (2.0 * k))
    mu = np.full(n, U / 2.0)
    m_total = J + n
    best_w = w.copy()
    best_primal = U * svm_hinge_sum(A, c, n, w)
    gap = np.inf
    iterations = 0
    for it in range(max_iter):
        iterations = it + 1
        # Certificate: the dual at a feasible rescaling of lam; the primal at two candidates.
        glam = _group_sum(lam, n, k)
        top = np.max(glam)
        shrink = min(1.0, U / top) if top > 0.0 else 1.0
        w_dual = A.T @ (lam * shrink)
        dual = shrink * np.dot(c, lam) - 0.5 * np.dot(w_dual, w_dual)
        for cand_index in range(2):
            cand = w if cand_index == 0 else w_dual
            value = 0.5 * np.dot(cand, cand) + U * svm_hinge_sum(A, c, n, cand)
            if value < best_primal:
                best_primal = value
                best_w = cand.copy()
        gap = best_primal - dual
        if gap <= gap_tol * max(abs(best_primal), 1e-300):
            break
        r_w = w - A.T @ lam
        r_xi = U - glam - mu
        r_s = s - A @ w - _group_repeat(xi, k) + c
        tau = (np.dot(s, lam) + np.dot(xi, mu)) / m_total
        if not (tau * m_total > 1e-14 * max(abs(best_primal), 1.0)):
            break  # complementarity at rounding level: no further progress possible
        D = lam / s
        E = mu / xi
        HE = _group_sum(D, n, k) + E
        F = np.zeros((n, P))
        for i in range(n):
            for j in range(i * k, (i + 1) * k):
                F[i] += D[j] * A[j]
        # Schur complement S = I + A'DA - F' diag(1/HE) F, assembled as a sum of PSD terms
        # (per group: D-weighted scatter about the D-weighted mean row, plus a rank-one
        # term with weight E / (sum D (sum D + E))) so that rounding cannot make it indefinite.
        centred = np.empty((J, P))
        rank_one = np.empty((n, P))
        for i in range(n):
            dsum = 0.0
            for j in range(i * k, (i + 1) * k):
                dsum += D[j]
            if dsum <= 0.0:
                centred[i * k:(i + 1) * k] = 0.0
                rank_one[i] = 0.0
                continue
            mean_row = F[i] / dsum
            for j in range(i * k, (i + 1) * k):
                centred[j] = np.sqrt(D[j]) * (A[j] - mean_row)
            rank_one[i] = np.sqrt(E[i] / (dsum * HE[i])) * F[i]
        S = centred.T @ centred + rank_one.T @ rank_one
        for p in range(P):
            S[p, p] += 1.0
        if not np.all(np.isfinite(S)):
            break
        dw, dxi, ds, dlam, dmu = _newton(A, F, S, HE, D, s, lam, xi, mu, r_w, r_xi, r_s,
                                         -s * lam, -xi * mu, n, k)
        a_aff = _max_step(mu, dmu, _max_step(xi, dxi, _max_step(lam, dlam, _max_step(s, ds, 1.0))))
        tau_aff = (np.dot(s + a_aff * ds, lam + a_aff * dlam) + np.dot(xi + a_aff * dxi, mu + a_aff * dmu)) / m_total
        sigma = (tau_aff / tau) ** 3
        dw, dxi, ds, dlam, dmu = _newton(A, F, S, HE, D, s, lam, xi, mu, r_w, r_xi, r_s,
                                         -s * lam - ds * dlam + sigma * tau, -xi * mu - dxi * dmu + sigma * tau, n, k)
        alpha = min(1.0, 0.99 * _max_step(mu, dmu, _max_step(xi, dxi, _max_step(lam, dlam, _max_step(s, ds, 1.0)))))
        w = w + alpha * dw
        xi = xi + alpha * dxi
        s = s + alpha * ds
        lam = lam + alpha * dlam
        mu = mu + alpha * dmu
    return best_w, best_primal, gap, iterations


@numba.njit(cache=True)
def _divergence_row(code, x, mu):
    """D_phi(x, mu) for one pair: code 0 = squared Euclidean / 2, 1 = generalized KL."""
    total = 0.0
    if code == 0:
        for j in range(x.shape[0]):
            diff = x[j] - mu[j]
            total += diff * diff
        return 0.5 * total
    for j in range(x.shape[0]):
        if x[j] > 0.0:
            if mu[j] <= 0.0:
                return np.inf
            total += x[j] * np.log(x[j] / mu[j]) - x[j] + mu[j]
        else:
            total += mu[j]
    return total


@numba.njit(cache=True)
def assignment_pass(order, z, counts, Q0, q_new, X, code, s, Xt, y, n_classes, seed_scale, C, margin):
    """One sequential z-step of Algorithm 1: ``z_i <- argmin_k Q_i(k)`` (eqs. 31-32).

    ``Q0[i, k]`` is the cost (eq. 31) of the existing component k for point i and
    ``q_new[i]`` the cost (eq. 32) of opening a component at x_i. A component opened at
    seed j has mean x_j and the one-example classifier, whose discriminant on x~_i is
    ``seed_scale[j] * (x~_j . x~_i)`` times ``y_j`` (binary, ``n_classes == 0``) or, for
    the Crammer-Singer case, ``(M-1)/M * m_j * g`` for class y_j and ``-m_j/M * g`` for
    the others with ``m_j = seed_scale[j]``, ``g = x~_j . x~_i``.

    A component emptied during the pass is closed (it cannot be rejoined); ties keep the
    current component. Returns ``(z, seeds)``: new labels and the seed index of every
    component opened, numbered from ``Q0.shape[1]`` on.
    """
    n = X.shape[0]
    K0 = Q0.shape[1]
    z = z.copy()
    counts = counts.copy()
    seeds = np.empty(n, dtype=np.int64)
    n_new = 0
    M = n_classes
    for t in range(n):
        i = order[t]
        current = z[i]
        best = current
        if current < K0:
            best_cost = Q0[i, current]
        else:
            best_cost = np.inf  # cannot happen: opened components hold only their seed
        for k in range(K0):
            if k != current and counts[k] > 0 and Q0[i, k] < best_cost:
                best_cost = Q0[i, k]
                best = k
        for r in range(n_new):
            j = seeds[r]
            g = np.dot(Xt[j], Xt[i])
            if M == 0:
                zeta = margin - y[i] * seed_scale[j] * y[j] * g
            else:
                m = seed_scale[j]
                if y[i] == y[j]:
                    zeta = margin - m * g
                else:
                    other = -m * g / M
                    top = (M - 1) * m * g / M
                    if M > 2 and other > top:
                        top = other
                    zeta = margin + top + m * g / M
            cost = s * _divergence_row(code, X[i], X[j]) + 2.0 * C * max(zeta, 0.0)
            if cost < best_cost:
                best_cost = cost
                best = K0 + r
        if q_new[i] < best_cost:
            seeds[n_new] = i
            best = K0 + n_new
            n_new += 1
        if best != current:
            counts[current] -= 1
            z[i] = best
            if best < K0:
                counts[best] += 1
    return z, seeds[:n_new]
