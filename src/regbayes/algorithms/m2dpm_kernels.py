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
import numba.np.linalg as numba_linalg
import numpy as np
from numba.core import types


# BLAS and LAPACK through the same helper functions numba's ``@``, ``np.dot`` and
# ``np.linalg.solve`` call for float64 arrays, with the same arguments (so the same
# results), without compiling their generic implementations and error formatting, which
# made up most of this module's compile time.
_KIND = np.int8(ord("d"))
_NO_TRANS = np.int8(ord("n"))
_TRANS = np.int8(ord("t"))
_xxgemv = types.ExternalFunction("numba_xxgemv", types.intc(
    types.char, types.char, types.intp, types.intp, types.voidptr, types.voidptr, types.intp, types.voidptr,
    types.voidptr, types.voidptr))
_xxgemm = types.ExternalFunction("numba_xxgemm", types.intc(
    types.char, types.char, types.char, types.intp, types.intp, types.intp, types.voidptr, types.voidptr,
    types.intp, types.voidptr, types.intp, types.voidptr, types.voidptr, types.intp))
_xxdot = types.ExternalFunction("numba_xxdot", types.intc(
    types.char, types.char, types.intp, types.voidptr, types.voidptr, types.voidptr))
_xgesv = types.ExternalFunction("numba_xgesv", types.intc(
    types.char, types.intp, types.intp, types.voidptr, types.intp, types.voidptr, types.voidptr, types.intp))
_LAPACK_INT = numba_linalg.F_INT_nptype


@numba.njit(cache=True)
def _check(status):
    if status != 0:
        raise RuntimeError("BLAS/LAPACK call failed (is scipy installed?)")


@numba.njit(cache=True)
def _dot(x, y):
    """``np.dot(x, y)`` of two float64 vectors."""
    out = np.empty(1)
    _check(_xxdot(_KIND, np.int8(0), x.shape[0], x.ctypes, y.ctypes, out.ctypes))
    return out[0]


@numba.njit(cache=True)
def _matvec(A, x, trans):
    """``A @ x`` (``trans`` is ``_TRANS``: BLAS sees the C-contiguous ``A`` as its Fortran
    transpose) or ``A.T @ x`` (``_NO_TRANS``). ``trans`` is an int8 rather than a bool:
    a literal bool would compile one specialisation per value."""
    rows, cols = A.shape
    m, n = (rows, cols) if trans == _TRANS else (cols, rows)
    if n == 0 or m == 0:
        return np.zeros(m)
    out = np.empty(m)
    one = np.ones(1)
    zero = np.zeros(1)
    _check(_xxgemv(_KIND, trans, cols, rows, one.ctypes, A.ctypes, cols, x.ctypes, zero.ctypes, out.ctypes))
    return out


@numba.njit(cache=True)
def _gram(B):
    """``B.T @ B`` for a C-contiguous matrix ``B``."""
    rows, cols = B.shape
    out = np.zeros((cols, cols))
    if rows == 0 or cols == 0:
        return out
    if cols == 1:
        _check(_xxdot(_KIND, np.int8(0), rows, B.ctypes, B.ctypes, out.ctypes))
        return out
    one = np.ones(1)
    zero = np.zeros(1)
    _check(_xxgemm(_KIND, _NO_TRANS, _TRANS, cols, cols, rows, one.ctypes, B.ctypes, cols, B.ctypes, cols,
                   zero.ctypes, out.ctypes, cols))
    return out


@numba.njit(cache=True)
def _solve(S, rhs):
    """``np.linalg.solve(S, rhs)`` (LU with partial pivoting, LAPACK gesv) for a square
    C-contiguous ``S`` and a vector ``rhs``, with its errors."""
    n = S.shape[0]
    for i in range(n):
        if not np.isfinite(rhs[i]):
            raise np.linalg.LinAlgError("Array must not contain infs or NaNs.")
        for j in range(n):
            if not np.isfinite(S[i, j]):
                raise np.linalg.LinAlgError("Array must not contain infs or NaNs.")
    lu = np.empty((n, n))  # S in Fortran order: its transpose in C order
    for i in range(n):
        for j in range(n):
            lu[j, i] = S[i, j]
    x = rhs.copy()
    if n == 0:
        return x
    pivots = np.empty(n, dtype=_LAPACK_INT)
    status = _xgesv(_KIND, n, 1, lu.ctypes, n, pivots.ctypes, x.ctypes, n)
    if status < 0:
        raise RuntimeError("LAPACK gesv failed")
    if status > 0:
        raise np.linalg.LinAlgError("Matrix is singular to machine precision.")
    return x


@numba.njit(cache=True)
def _svm_hinge_sum(A, c, n_groups, w):
    k = A.shape[0] // n_groups
    Aw = _matvec(A, w, _TRANS)
    total = 0.0
    for i in range(n_groups):
        worst = 0.0
        for j in range(i * k, (i + 1) * k):
            r = c[j] - Aw[j]
            if r > worst:
                worst = r
        total += worst
    return total


def svm_hinge_sum(A, c, n_groups, w):
    """``sum_i max(0, max_{j in group i} c_j - A_j w)``; rows grouped contiguously, equal counts."""
    return _svm_hinge_sum(_float64(A), _float64(c), int(n_groups), _float64(w))


# The solver below is written with explicit loops where it could use array expressions
# and slice assignments: numba compiles every array expression as a function of its own
# and every broadcasting assignment with its error-message formatting. The arithmetic is
# the same, element by element; the matrix products, dot products and the linear solve
# are the BLAS/LAPACK calls above.
@numba.njit(cache=True)
def _group_sum(v, n, k):
    out = np.zeros(n)
    for i in range(n):
        for j in range(i * k, (i + 1) * k):
            out[i] += v[j]
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
def _newton(A, F, S, HE, s, lam, xi, mu, r_w, r_xi, r_s, r_c1, r_c2, n, k):
    """One Newton direction of the interior point (normal equations reduced to P x P)."""
    J = s.shape[0]
    t1 = np.empty(J)
    for j in range(J):
        t1[j] = (r_c1[j] + lam[j] * r_s[j]) / s[j]
    g1 = _group_sum(t1, n, k)
    b_xi = np.empty(n)
    b_xi_he = np.empty(n)
    for i in range(n):
        b_xi[i] = -r_xi[i] + g1[i] + r_c2[i] / xi[i]
        b_xi_he[i] = b_xi[i] / HE[i]
    At1 = _matvec(A, t1, _NO_TRANS)
    Fb = _matvec(F, b_xi_he, _NO_TRANS)
    rhs = np.empty(r_w.shape[0])
    for p in range(r_w.shape[0]):
        rhs[p] = (-r_w[p] + At1[p]) - Fb[p]
    dw = _solve(S, rhs)  # S >= I in exact arithmetic; LU copes when rounding blurs it
    Fdw = _matvec(F, dw, _TRANS)
    dxi = np.empty(n)
    dmu = np.empty(n)
    for i in range(n):
        dxi[i] = (b_xi[i] - Fdw[i]) / HE[i]
        dmu[i] = (r_c2[i] - mu[i] * dxi[i]) / xi[i]
    Adw = _matvec(A, dw, _TRANS)
    ds = np.empty(J)
    dlam = np.empty(J)
    for j in range(J):
        ds[j] = -r_s[j] + Adw[j] + dxi[j // k]
        dlam[j] = (r_c1[j] - lam[j] * ds[j]) / s[j]
    return dw, dxi, ds, dlam, dmu


@numba.njit(cache=True)
def _shifted_dot(x, dx, y, dy, a, tmp_x, tmp_y):
    """``np.dot(x + a dx, y + a dy)``."""
    for j in range(x.shape[0]):
        tmp_x[j] = x[j] + a * dx[j]
        tmp_y[j] = y[j] + a * dy[j]
    return _dot(tmp_x, tmp_y)


@numba.njit(cache=True)
def _svm_primal_qp(A, c, n_groups, U, gap_tol, max_iter):
    J, P = A.shape
    n = n_groups
    k = J // n
    w = np.zeros(P)
    xi = np.empty(n)
    for i in range(n):
        top = c[i * k]
        for j in range(i * k + 1, (i + 1) * k):
            if c[j] > top:
                top = c[j]
        xi[i] = max(top, 0.0) + 1.0
    Aw = _matvec(A, w, _TRANS)
    s = np.empty(J)
    for j in range(J):
        s[j] = Aw[j] + xi[j // k] - c[j]
    lam = np.full(J, U / (2.0 * k))
    mu = np.full(n, U / 2.0)
    m_total = J + n
    best_w = w.copy()
    best_primal = U * _svm_hinge_sum(A, c, n, w)
    gap = np.inf
    iterations = 0
    lam_shrunk = np.empty(J)
    r_s = np.empty(J)
    r_xi = np.empty(n)
    r_w = np.empty(P)
    D = np.empty(J)
    E = np.empty(n)
    HE = np.empty(n)
    r_c1 = np.empty(J)
    r_c2 = np.empty(n)
    tmp_J1 = np.empty(J)
    tmp_J2 = np.empty(J)
    tmp_n1 = np.empty(n)
    tmp_n2 = np.empty(n)
    for it in range(max_iter):
        iterations = it + 1
        # Certificate: the dual at a feasible rescaling of lam; the primal at two candidates.
        glam = _group_sum(lam, n, k)
        top = glam[0]
        for i in range(1, n):
            if glam[i] > top:
                top = glam[i]
        shrink = min(1.0, U / top) if top > 0.0 else 1.0
        for j in range(J):
            lam_shrunk[j] = lam[j] * shrink
        w_dual = _matvec(A, lam_shrunk, _NO_TRANS)
        dual = shrink * _dot(c, lam) - 0.5 * _dot(w_dual, w_dual)
        for cand_index in range(2):
            cand = w if cand_index == 0 else w_dual
            value = 0.5 * _dot(cand, cand) + U * _svm_hinge_sum(A, c, n, cand)
            if value < best_primal:
                best_primal = value
                best_w = cand.copy()
        gap = best_primal - dual
        if gap <= gap_tol * max(abs(best_primal), 1e-300):
            break
        Alam = _matvec(A, lam, _NO_TRANS)
        for p in range(P):
            r_w[p] = w[p] - Alam[p]
        for i in range(n):
            r_xi[i] = U - glam[i] - mu[i]
        Aw = _matvec(A, w, _TRANS)
        for j in range(J):
            r_s[j] = s[j] - Aw[j] - xi[j // k] + c[j]
        tau = (_dot(s, lam) + _dot(xi, mu)) / m_total
        if not (tau * m_total > 1e-14 * max(abs(best_primal), 1.0)):
            break  # complementarity at rounding level: no further progress possible
        for j in range(J):
            D[j] = lam[j] / s[j]
        for i in range(n):
            E[i] = mu[i] / xi[i]
        gD = _group_sum(D, n, k)
        for i in range(n):
            HE[i] = gD[i] + E[i]
        F = np.zeros((n, P))
        for i in range(n):
            for j in range(i * k, (i + 1) * k):
                for p in range(P):
                    F[i, p] += D[j] * A[j, p]
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
                for j in range(i * k, (i + 1) * k):
                    for p in range(P):
                        centred[j, p] = 0.0
                for p in range(P):
                    rank_one[i, p] = 0.0
                continue
            for j in range(i * k, (i + 1) * k):
                root = np.sqrt(D[j])
                for p in range(P):
                    centred[j, p] = root * (A[j, p] - F[i, p] / dsum)
            weight = np.sqrt(E[i] / (dsum * HE[i]))
            for p in range(P):
                rank_one[i, p] = weight * F[i, p]
        S = _gram(centred)
        S_rank = _gram(rank_one)
        finite = True
        for p in range(P):
            for q in range(P):
                S[p, q] += S_rank[p, q]
            S[p, p] += 1.0
            for q in range(P):
                finite = finite and np.isfinite(S[p, q])
        if not finite:
            break
        for j in range(J):
            r_c1[j] = -s[j] * lam[j]
        for i in range(n):
            r_c2[i] = -xi[i] * mu[i]
        dw, dxi, ds, dlam, dmu = _newton(A, F, S, HE, s, lam, xi, mu, r_w, r_xi, r_s, r_c1, r_c2, n, k)
        a_aff = _max_step(mu, dmu, _max_step(xi, dxi, _max_step(lam, dlam, _max_step(s, ds, 1.0))))
        tau_aff = (_shifted_dot(s, ds, lam, dlam, a_aff, tmp_J1, tmp_J2)
                   + _shifted_dot(xi, dxi, mu, dmu, a_aff, tmp_n1, tmp_n2)) / m_total
        sigma = (tau_aff / tau) ** 3
        for j in range(J):
            r_c1[j] = -s[j] * lam[j] - ds[j] * dlam[j] + sigma * tau
        for i in range(n):
            r_c2[i] = -xi[i] * mu[i] - dxi[i] * dmu[i] + sigma * tau
        dw, dxi, ds, dlam, dmu = _newton(A, F, S, HE, s, lam, xi, mu, r_w, r_xi, r_s, r_c1, r_c2, n, k)
        alpha = min(1.0, 0.99 * _max_step(mu, dmu, _max_step(xi, dxi, _max_step(lam, dlam, _max_step(s, ds, 1.0)))))
        for p in range(P):
            w[p] = w[p] + alpha * dw[p]
        for i in range(n):
            xi[i] = xi[i] + alpha * dxi[i]
            mu[i] = mu[i] + alpha * dmu[i]
        for j in range(J):
            s[j] = s[j] + alpha * ds[j]
            lam[j] = lam[j] + alpha * dlam[j]
    return best_w, best_primal, gap, iterations


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
    return _svm_primal_qp(_float64(A), _float64(c), int(n_groups), float(U), float(gap_tol), int(max_iter))


def _float64(a):
    """A C-contiguous, writable float64 copy of ``a``: one compiled specialisation of each
    kernel (and of the BLAS helpers it calls) whatever layout, dtype or writability the
    caller's array has. The copies are O(size) against the solver's O(rows * weights^2)."""
    return np.array(a, dtype=np.float64, order="C")


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
def _assignment_pass(order, z, counts, Q0, q_new, X, code, s, Xt, y, n_classes, seed_scale, C, margin):
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
            g = _dot(Xt[j], Xt[i])
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
    # labels as float64 (exact for the +-1 and 0..M-1 codes): one compiled specialisation
    # for the binary, the multi-class and the unlabelled (DP-means) callers
    return _assignment_pass(_int64(order), _int64(z), _int64(counts), _float64(Q0), _float64(q_new),
                            _float64(X), int(code), float(s), _float64(Xt), _float64(y), int(n_classes),
                            _float64(seed_scale), float(C), float(margin))


def _int64(a):
    """:func:`_float64` for int64 arrays."""
    return np.array(a, dtype=np.int64, order="C")
