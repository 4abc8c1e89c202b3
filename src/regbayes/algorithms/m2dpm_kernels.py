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

import math

import numba
import numba.np.linalg as numba_linalg
import numpy as np
from numba.core import types


# BLAS and LAPACK through the helpers numba's ``@``, ``np.dot`` and ``np.linalg.solve`` call for float64
# arrays, with the same arguments (so the same results), without their generic implementations.
_KIND = np.int8(ord("d"))
_NO_TRANS = np.int8(ord("n"))
_TRANS = np.int8(ord("t"))
_REAL = np.int8(0)  # ddot's "conjugate" flag
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

# The compiled code allocates and raises nothing (numba compiles every call form of np.empty / .copy()
# and every error as code of its own): the wrappers allocate, and raise on the kernels' status codes.
_STOP, _OK, _NOT_FINITE, _SINGULAR, _BLAS_FAILED = -1, 0, 1, 2, 3  # _STOP: no further progress possible
# Rows of ``consts`` (4 x 1): BLAS's alpha = 1 and beta = 0, ddot's result, a flag set when BLAS failed.
_ONE, _ZERO, _DOT, _FAILED = 0, 1, 2, 3
# numba options: no reference counting (nothing is allocated), no rewrite passes (there are no
# array expressions), no cfunc wrapper; no CPython wrapper for the helpers of compiled code.
_JIT = dict(cache=True, _nrt=False, no_rewrites=True, no_cfunc_wrapper=True)
_HELPER = dict(_JIT, no_cpython_wrapper=True)
_CONSTS = np.array([[1.0], [0.0], [0.0], [0.0]])  # copied for each call


def _raise_for(status, consts):
    """The error of a kernel's status code (those of the LU solve are numpy's LinAlgErrors)."""
    if status == _NOT_FINITE:
        raise np.linalg.LinAlgError("Array must not contain infs or NaNs.")
    if status == _SINGULAR:
        raise np.linalg.LinAlgError("Matrix is singular to machine precision.")
    if status == _BLAS_FAILED or consts[_FAILED, 0] != 0.0:
        raise RuntimeError("BLAS/LAPACK call failed (is scipy installed?)")


@numba.njit(**_HELPER)
def _dot(x, y, consts):
    """``np.dot(x, y)`` of two float64 vectors."""
    if _xxdot(_KIND, _REAL, len(x), x.ctypes, y.ctypes, consts[_DOT].ctypes) != 0:
        consts[_FAILED, 0] = 1.0
    return consts[_DOT, 0]


@numba.njit(**_HELPER)
def _matvec(A, x, trans, out, consts):
    """``out <- A @ x`` (``trans`` is ``_TRANS``: BLAS sees the C-contiguous ``A`` as its
    Fortran transpose) or ``out <- A.T @ x`` (``_NO_TRANS``); an int8, not a bool literal."""
    rows, cols = A.shape
    if rows == 0 or cols == 0:
        for i in range(len(out)):
            out[i] = 0.0
    elif _xxgemv(_KIND, trans, cols, rows, consts[_ONE].ctypes, A.ctypes, cols, x.ctypes, consts[_ZERO].ctypes,
                 out.ctypes) != 0:
        consts[_FAILED, 0] = 1.0


@numba.njit(**_JIT)
def _svm_hinge_sum(A, c, n_groups, w, Aw, consts):
    k = len(A) // n_groups
    _matvec(A, w, _TRANS, Aw, consts)
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
    A, consts = _float64(A), _CONSTS.copy()
    total = _svm_hinge_sum(A, _float64(c), int(n_groups), _float64(w), np.empty(A.shape[0]), consts)
    _raise_for(_OK, consts)
    return total


# The solver is one function (over the BLAS wrappers) with its loops fused as far as the data flow
# allows: numba's compile time grows with the number of loops far more than with their bodies, and
# every helper is compiled again inside each caller. Each element's operations are those of the
# textbook form, in the same order, as are the reductions. Work vectors: rows of one matrix per
# length (J rows, n groups, P weights):
_S, _LAM, _R_S, _R_C1, _AW, _DS, _DLAM, _T1, _ADW = range(9)  # J
_XI, _MU, _HE, _R_C2, _GLAM, _DXI, _DMU, _G1, _B_XI, _B_XI_HE = range(10)  # n
_BEST_W, _W, _W_DUAL, _ALAM, _DW, _AT1, _FB = range(7)  # P (_W and _W_DUAL adjacent)


@numba.njit(**_JIT)
def _svm_primal_qp(A, c, n, U, gap_tol, max_iter, VJ, Vn, VP, centred, Fr, SS, pivots, consts):
    """:func:`svm_primal_qp` on the caller's work arrays: returns ``(primal, gap, iterations,
    status)``, the weights in ``VP[_BEST_W]``."""
    J, P = A.shape
    k = J // n
    # one assignment each (numba compiles tuples of arrays into far more code)
    s = VJ[_S]
    lam = VJ[_LAM]
    r_s = VJ[_R_S]
    r_c1 = VJ[_R_C1]
    Aw = VJ[_AW]
    ds = VJ[_DS]
    dlam = VJ[_DLAM]
    t1 = VJ[_T1]
    Adw = VJ[_ADW]
    xi = Vn[_XI]
    mu = Vn[_MU]
    HE = Vn[_HE]
    r_c2 = Vn[_R_C2]
    glam = Vn[_GLAM]
    dxi = Vn[_DXI]
    dmu = Vn[_DMU]
    g1 = Vn[_G1]
    b_xi = Vn[_B_XI]
    b_xi_he = Vn[_B_XI_HE]
    w = VP[_W]
    Alam = VP[_ALAM]
    dw = VP[_DW]
    At1 = VP[_AT1]
    Fb = VP[_FB]
    F = Fr[0]
    _matvec(A, w, _TRANS, Aw, consts)  # w = best_w = 0: VP comes zeroed
    m_total = J + n
    best_primal = 0.0  # the objective at w = 0, set in the first iteration (max_iter >= 1)
    gap = dual = np.inf
    iterations = 0
    status = _OK
    alpha = sigma = tau = 0.0
    for it in range(max_iter):
        iterations = it + 1
        step = it > 0  # the previous iteration's step is taken here, in the loops over the groups
        for p in range(P * step):
            w[p] = w[p] + alpha * dw[p]
        top = 0.0
        for i in range(n):
            if step:
                xi[i] = xi[i] + alpha * dxi[i]
                mu[i] = mu[i] + alpha * dmu[i]
            else:  # the start: xi = max(0, max_j c_j) + 1, mu = U / 2, s = A w + xi - c, lam = U / 2k
                c_max = c[i * k]
                for j in range(i * k + 1, i * k + k):
                    if c[j] > c_max:
                        c_max = c[j]
                xi[i] = (c_max if not 0.0 > c_max else 0.0) + 1.0
                mu[i] = U / 2.0
            g = 0.0
            for j in range(i * k, i * k + k):
                if step:
                    s[j] = s[j] + alpha * ds[j]
                    lam[j] = lam[j] + alpha * dlam[j]
                else:
                    s[j] = Aw[j] + xi[i] - c[j]
                    lam[j] = U / (2.0 * k)
                g += lam[j]
            glam[i] = g
            if i == 0 or g > top:
                top = g
        shrink = 1.0
        if top > 0.0:
            if U / top < 1.0:
                shrink = U / top  # min(1, U / top)
        # Certificate: the dual at the feasible rescaling shrink lam; the primal at two candidates.
        for cand_index in range(2):  # w, then w_dual = A'(shrink lam)
            cand = VP[_W + cand_index]
            _matvec(A, cand, _TRANS, Aw, consts)
            h = 0.0  # svm_hinge_sum(A, c, n, cand)
            for i in range(n):
                worst = 0.0
                for j in range(i * k, i * k + k):
                    t1[j] = lam[j] * shrink
                    r = c[j] - Aw[j]
                    if r > worst:
                        worst = r
                h += worst
            if cand_index == 0:
                if it == 0:
                    best_primal = U * h  # at the starting point w = best_w = 0
                _matvec(A, t1, _NO_TRANS, VP[_W_DUAL], consts)
                dual = shrink * _dot(c, lam, consts) - 0.5 * _dot(VP[_W_DUAL], VP[_W_DUAL], consts)
            value = 0.5 * _dot(cand, cand, consts) + U * h
            if value < best_primal:
                best_primal = value
                for p in range(P):
                    VP[_BEST_W, p] = cand[p]
        gap = best_primal - dual
        scale = abs(best_primal)
        tau = (_dot(s, lam, consts) + _dot(xi, mu, consts)) / m_total
        # converged, or the complementarity at rounding level: no further progress possible
        if gap <= gap_tol * max(scale, 1e-300) or not (tau * m_total > 1e-14 * max(scale, 1.0)):
            break
        _matvec(A, lam, _NO_TRANS, Alam, consts)
        _matvec(A, w, _TRANS, Aw, consts)
        # r_s = s - A w - xi + c, barrier weights D = lam / s, E = mu / xi, HE = G D + E, F = G diag(D) A,
        # and the Schur complement S = I + A'DA - F' diag(1/HE) F as a sum of PSD terms (per group:
        # D-weighted scatter about the D-weighted mean row, plus a rank-one term with weight
        # E / (sum D (sum D + E))) so that rounding cannot make it indefinite.
        for i in range(n):
            x = xi[i]
            e = mu[i] / x
            Fi = F[i]
            Ri = Fr[1, i]
            dsum = 0.0
            lo = i * k
            for j in range(lo, lo + k):
                sj = s[j]
                r_s[j] = sj - Aw[j] - x + c[j]
                d = lam[j] / sj
                dsum += d
                Aj = A[j]
                for p in range(P):  # F = 0 + D_j A_j + ... (groups are not empty)
                    f = Fi[p]
                    if j == lo:
                        f = 0.0
                    Fi[p] = f + d * Aj[p]
            he = dsum + e
            HE[i] = he
            ok = not (dsum <= 0.0)  # else the group's terms are zero
            weight = math.sqrt(e / (dsum * he)) if ok else 0.0
            for j in range(lo, lo + k):
                root = math.sqrt(lam[j] / s[j])  # D_j
                Aj = A[j]
                Cj = centred[j]
                for p in range(P):
                    Cj[p] = 0.0
                    if ok:
                        Cj[p] = root * (Aj[p] - Fi[p] / dsum)
                    if j == lo:
                        Ri[p] = 0.0
                        if ok:
                            Ri[p] = weight * Fi[p]
        for part in range(2 * (P > 0)):  # S <- centred' centred, S_rank <- rank_one' rank_one
            B = centred if part == 0 else Fr[1]
            out = SS[part]
            if P == 1:
                info = _xxdot(_KIND, _REAL, len(B), B.ctypes, B.ctypes, out.ctypes)
            else:
                info = _xxgemm(_KIND, _NO_TRANS, _TRANS, P, P, len(B), consts[_ONE].ctypes, B.ctypes, P, B.ctypes,
                               P, consts[_ZERO].ctypes, out.ctypes, P)
            if info != 0:
                consts[_FAILED, 0] = 1.0
        finite = 1
        for p in range(P):  # S += S_rank + I; two copies of S in Fortran order for the two LU solves
            for q in range(P):
                x = SS[0, p, q] + SS[1, p, q]
                if q == p:
                    x += 1.0
                SS[0, p, q] = x
                if not math.isfinite(x):
                    finite = 0
                SS[2, q, p] = x
                SS[3, q, p] = x
        status = finite - 1  # _OK, or _STOP when S is not finite
        for corrector in range(2 * finite):  # Mehrotra: the affine direction, then the centred corrector
            # Newton direction (normal equations reduced to P x P) for the complementarity
            # residuals r_c1 = -s lam, r_c2 = -xi mu (affine), minus ds dlam, dxi dmu and plus
            # sigma tau (corrector).
            for i in range(n):
                g = 0.0
                for j in range(i * k, i * k + k):
                    sj = s[j]
                    lj = lam[j]
                    r = -sj * lj
                    if corrector:
                        r = r - ds[j] * dlam[j] + sigma * tau
                    r_c1[j] = r
                    t = (r + lj * r_s[j]) / sj
                    t1[j] = t
                    g += t
                x = xi[i]
                m = mu[i]
                r = -x * m
                if corrector:
                    r = r - dxi[i] * dmu[i] + sigma * tau
                r_c2[i] = r
                b = -(U - glam[i] - m) + g + r / x  # -r_xi + G t1 + r_c2 / xi
                b_xi[i] = b
                b_xi_he[i] = b / HE[i]
            _matvec(A, t1, _NO_TRANS, At1, consts)
            _matvec(F, b_xi_he, _NO_TRANS, Fb, consts)
            # dw <- np.linalg.solve(S, rhs) by LU with partial pivoting (LAPACK gesv), numpy's
            # errors as status codes. S >= I in exact arithmetic; LU copes when rounding blurs it.
            for p in range(P):
                x = (-(w[p] - Alam[p]) + At1[p]) - Fb[p]  # -r_w + A't1 - F'(b_xi / HE)
                dw[p] = x
                if not math.isfinite(x):
                    status = _NOT_FINITE
            if status == _OK and P > 0:
                info = _xgesv(_KIND, P, 1, SS[2 + corrector].ctypes, P, pivots.ctypes, dw.ctypes, P)
                if info < 0:
                    status = _BLAS_FAILED
                elif info > 0:
                    status = _SINGULAR
            if status != _OK:
                break
            _matvec(F, dw, _TRANS, g1, consts)  # F dw
            _matvec(A, dw, _TRANS, Adw, consts)
            # dxi, dmu, ds, dlam, and the longest step in [0, 1] keeping s, lam, xi, mu >= 0: the
            # minimum of 1 and of -v / dv over dv < 0, for each of the four in turn.
            step_s = step_lam = step_xi = step_mu = 1.0
            for i in range(n):
                x = xi[i]
                m = mu[i]
                dx = (b_xi[i] - g1[i]) / HE[i]
                dm = (r_c2[i] - m * dx) / x
                dxi[i] = dx
                dmu[i] = dm
                if dx < 0.0:
                    step_xi = min(step_xi, -x / dx)
                if dm < 0.0:
                    step_mu = min(step_mu, -m / dm)
                for j in range(i * k, i * k + k):
                    sj = s[j]
                    lj = lam[j]
                    d_s = -r_s[j] + Adw[j] + dx
                    d_l = (r_c1[j] - lj * d_s) / sj
                    ds[j] = d_s
                    dlam[j] = d_l
                    if d_s < 0.0:
                        step_s = min(step_s, -sj / d_s)
                    if d_l < 0.0:
                        step_lam = min(step_lam, -lj / d_l)
            alpha = min(min(min(step_s, step_lam), step_xi), step_mu)
            if corrector == 0:
                # sigma = (tau_aff / tau)^3, tau_aff = ((s + alpha ds)'(lam + alpha dlam) + (xi + alpha dxi)'(mu + alpha dmu)) / m_total
                for i in range(n):
                    g1[i] = xi[i] + alpha * dxi[i]
                    b_xi[i] = mu[i] + alpha * dmu[i]
                    for j in range(i * k, i * k + k):
                        t1[j] = s[j] + alpha * ds[j]
                        Adw[j] = lam[j] + alpha * dlam[j]
                tau_aff = (_dot(t1, Adw, consts) + _dot(g1, b_xi, consts)) / m_total
                sigma = (tau_aff / tau) ** 3
        if status != _OK:
            break
        alpha = min(1.0, 0.99 * alpha)
    return best_primal, gap, iterations, status * (status > 0)  # _STOP -> _OK


def svm_primal_qp(A, c, n_groups, U, gap_tol=1e-9, max_iter=200):
    """Exact minimiser of ``1/2 ||w||^2 + U sum_i max(0, max_{j in group i} c_j - A_j w)``.

    ``A`` (J, P) and ``c`` (J,) hold the rows of ``n_groups`` groups, contiguous and of
    equal size J / n_groups. Interior point on the QP ``min 1/2 w'w + U 1'xi`` subject to
    ``A w + G' xi >= c``, ``xi >= 0`` (G sums the rows of a group); its dual is
    ``max c'lam - 1/2 ||A'lam||^2`` over ``lam >= 0``, ``G lam <= U``.

    Returns ``(w, primal, gap, iterations)``: ``primal`` is the objective at ``w`` and
    ``gap`` the certified duality gap (``primal - dual``), ``<= gap_tol * primal`` unless
    ``max_iter`` was reached or the complementarity fell to rounding level first (then
    ``gap`` says how close ``w`` is). Raises ValueError unless ``n_groups`` splits the rows
    of ``A`` into equal, non-empty groups and ``c`` has one entry per row.
    """
    A, c = _float64(A), _float64(c)
    (J, P), n = A.shape, int(n_groups)
    if n < 1 or J < n or J % n:
        raise ValueError(f"n_groups must split the {J} rows of A into equal, non-empty groups; got n_groups={n_groups}")
    if c.shape != (J,):
        raise ValueError(f"c must have one entry per row of A, shape ({J},); got shape {c.shape}")
    if max_iter < 1:  # no iteration: the starting point w = 0
        w = np.zeros(P)
        return w, float(U) * svm_hinge_sum(A, c, n, w), np.inf, 0
    VJ, Vn, VP = np.empty((9, J)), np.empty((10, n)), np.zeros((7, P))
    centred, Fr, SS = np.empty((J, P)), np.empty((2, n, P)), np.empty((4, P, P))
    consts = _CONSTS.copy()
    primal, gap, iterations, status = _svm_primal_qp(A, c, n, float(U), float(gap_tol), int(max_iter), VJ,
                                                     Vn, VP, centred, Fr, SS, np.empty(P, dtype=numba_linalg.F_INT_nptype), consts)
    _raise_for(status, consts)
    return VP[_BEST_W].copy(), primal, gap, iterations


def _float64(a):
    """A C-contiguous, writable float64 copy of ``a``: one compiled specialisation of each kernel
    whatever the caller's layout, dtype or writability; O(size) against the solver's O(J P^2)."""
    return np.array(a, dtype=np.float64, order="C")


@numba.njit(**_JIT)
def _assignment_pass(order, z, counts, Q0, q_new, X, code, s, Xt, y, n_classes, seed_scale, C, margin, seeds,
                     consts):
    """The pass on ``z`` and ``counts`` in place; writes the seeds into ``seeds`` and
    returns their number."""
    n, n_features = X.shape
    _, K0 = Q0.shape
    n_new = 0
    M = n_classes
    for t in range(n):
        i = order[t]
        current = z[i]
        best = current
        best_cost = Q0[i, current] if current < K0 else math.inf  # opened components hold only their seed
        for k in range(K0):
            if k != current and counts[k] > 0 and Q0[i, k] < best_cost:
                best_cost = Q0[i, k]
                best = k
        for r in range(n_new):
            j = seeds[r]
            g = _dot(Xt[j], Xt[i], consts)
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
            div = 0.0  # D_phi(x_i, x_j): code 0 = squared Euclidean / 2, 1 = generalized KL
            for d in range(n_features):
                a = X[i, d]
                b = X[j, d]
                if code == 0:
                    div += (a - b) * (a - b)
                elif a > 0.0:
                    if b <= 0.0:
                        div = math.inf
                        break
                    div += a * math.log(a / b) - a + b
                else:
                    div += b
            if code == 0:
                div = 0.5 * div
            cost = s * div + 2.0 * C * (0.0 if 0.0 > zeta else zeta)
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
    return n_new


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
    # labels as float64 (exact for the +-1 and 0..M-1 codes): one compiled specialisation for
    # the binary, multi-class and unlabelled (DP-means) callers; z and counts are copies
    z, X = _int64(z), _float64(X)
    seeds = np.empty(X.shape[0], dtype=np.int64)
    consts = _CONSTS.copy()
    n_new = _assignment_pass(_int64(order), z, _int64(counts), _float64(Q0), _float64(q_new), X, int(code), float(s),
                             _float64(Xt), _float64(y), int(n_classes), _float64(seed_scale), float(C), float(margin),
                             seeds, consts)
    _raise_for(_OK, consts)
    return z, seeds[:n_new]


def _int64(a):
    """:func:`_float64` for int64 arrays."""
    return np.array(a, dtype=np.int64, order="C")
