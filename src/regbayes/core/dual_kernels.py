"""Dual coordinate descent kernels of :mod:`regbayes.core.duals`, compiled with numba.

Each kernel takes float64 C-contiguous arrays (the wrappers in :mod:`regbayes.core.duals`
convert), so it is compiled once, on first use, and cached on disk. Every kernel updates
its dual variables in place (the caller passes a copy), sweeps the rows in a random order
drawn from an explicit integer ``seed`` (splitmix64, one stream per call, no global
state), and after each pass recomputes the weights from the dual variables (no drift from
the incremental updates) and the primal and dual objectives; it stops when

    primal - dual <= tol * max(|primal|, |dual|)                    (relative duality gap)

or after ``max_iter`` passes (the gap is also checked before the first pass, so a start
that already meets it is returned after 0 passes). Row sub-problems are solved exactly:

* binary hinge (Hsieh et al. 2008): ``w_n <- clip(w_n - (y_n mu.x_n - 1) / ||x_n||^2, 0, C_n)``;
* epsilon-insensitive (Ho & Lin 2012, in the variable ``beta = omega - omega*``):
  ``beta_n <- clip(soft(beta_n + (y_n - mu.x_n) / ||x_n||^2, eps / ||x_n||^2), -C_n, C_n)``;
* Crammer–Singer (Keerthi et al. 2008, sequential dual method): the row's dual
  objective is exactly quadratic with Hessian ``-||x_n||^2 I``, so its maximiser is the
  Euclidean projection of ``omega_n + (f_n + l_n) / ||x_n||^2`` onto
  ``{omega >= 0, sum omega = C_n}``, found by sorting.
  A pass skips the rows whose update would leave them where they are at the ``mu`` of
  the previous objective evaluation: all of ``C_n`` on the own label ``y_n`` and a margin
  ``f_n(y_n) + l_n(y_n) > max_{y != y_n} (f_n(y) + l_n(y))`` (then the projected point is
  the vertex itself). That is most rows of a nearly separable problem; the evaluation after
  every pass covers all rows, so a skipped row that ``mu`` has since pushed over its margin
  is updated in the next pass, and the gap is always that of the whole problem.
"""
from __future__ import annotations

import numba
import numpy as np

# numba options: no reference counting (the compiled code allocates nothing: the Python
# wrappers below own the work arrays), no cfunc wrappers; helpers of compiled code get no
# CPython wrapper either. Fewer and smaller compiled functions: a shorter first fit.
_JIT = dict(cache=True, _nrt=False, no_cfunc_wrapper=True)
_HELPER = dict(_JIT, no_cpython_wrapper=True)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@numba.njit(**_HELPER)
def _splitmix(state):
    """(next state, 64 random bits) of splitmix64."""
    state = state + _GOLDEN
    z = state
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return state, z ^ (z >> np.uint64(31))


@numba.njit(**_HELPER)
def _shuffle(order, state):
    """Fisher–Yates shuffle of ``order`` in place; returns the generator's new state."""
    for i in range(order.shape[0] - 1, 0, -1):
        state, bits = _splitmix(state)
        j = np.int64(bits >> np.uint64(11)) % (i + 1)
        tmp = order[i]
        order[i] = order[j]
        order[j] = tmp
    return state


@numba.njit(**_HELPER)
def _converged(primal, dual, tol):
    return primal - dual <= tol * max(abs(primal), abs(dual))


@numba.njit(**_HELPER)
def _row_norms(X, sq):
    """The squared row norms ``||x_n||^2`` into ``sq``."""
    for n in range(X.shape[0]):
        sq[n] = np.dot(X[n], X[n])


def _pass_buffers(X):
    """The passes' work arrays: squared row norms (filled by the kernel) and the row order."""
    return np.empty(X.shape[0]), np.arange(X.shape[0])


@numba.njit(**_HELPER)
def _add_row(a, x, out):
    """``out += a * x`` in place (``out`` a weight vector, ``x`` a row of X)."""
    for k in range(out.shape[0]):
        out[k] += a * x[k]


@numba.njit(**_HELPER)
def _binary_objectives(X, y, C, w, mu):
    """Recompute ``mu = sum_n y_n w_n x_n`` in place; return (primal, dual)."""
    N, K = X.shape
    mu[:] = 0.0
    wsum = 0.0
    for n in range(N):
        wsum += w[n]
        if w[n] != 0.0:
            a = y[n] * w[n]
            for k in range(K):
                mu[k] += a * X[n, k]
    half_sq = 0.5 * np.dot(mu, mu)
    hinge = 0.0
    for n in range(N):
        if C[n] > 0.0:
            margin = 1.0 - y[n] * np.dot(mu, X[n])
            if margin > 0.0:
                hinge += C[n] * margin
    return half_sq + hinge, wsum - half_sq


@numba.njit(**_HELPER)
def _binary_pass(X, y, C, w, mu, sq, order):
    """One pass of exact row updates of the binary hinge dual, in ``order``."""
    for n in order:
        if C[n] == 0.0:
            continue
        grad = y[n] * np.dot(mu, X[n]) - 1.0
        if sq[n] > 0.0:
            new = min(max(w[n] - grad / sq[n], 0.0), C[n])
        elif grad < 0.0:
            new = C[n]
        else:
            new = w[n] if grad == 0.0 else 0.0
        if new != w[n]:
            _add_row((new - w[n]) * y[n], X[n], mu)
            w[n] = new


@numba.njit(**_JIT)
def _binary_svm_cd(X, y, C, w, tol, max_iter, seed, mu, sq, order):
    _row_norms(X, sq)
    state = np.uint64(seed)
    primal, dual = _binary_objectives(X, y, C, w, mu)
    n_iter = 0
    while n_iter < max_iter and not _converged(primal, dual, tol):
        state = _shuffle(order, state)
        _binary_pass(X, y, C, w, mu, sq, order)
        primal, dual = _binary_objectives(X, y, C, w, mu)
        n_iter += 1
    return primal, dual, n_iter, _converged(primal, dual, tol)


def binary_svm_cd(X, y, C, w, tol, max_iter, seed):
    """Dual coordinate descent for eq. 28 of paper 002; ``w`` updated in place.

    Returns ``(mu, primal, dual, n_iter, converged)``."""
    mu = np.zeros(X.shape[1])
    return (mu, *_binary_svm_cd(X, y, C, w, tol, max_iter, seed, mu, *_pass_buffers(X)))


@numba.njit(**_HELPER)
def _svr_objectives(X, y, C, epsilon, beta, mu):
    """Recompute ``mu = sum_n beta_n x_n`` in place; return (primal, dual)."""
    N, K = X.shape
    mu[:] = 0.0
    linear = 0.0
    for n in range(N):
        if beta[n] != 0.0:
            linear += beta[n] * y[n] - epsilon * abs(beta[n])
            for k in range(K):
                mu[k] += beta[n] * X[n, k]
    half_sq = 0.5 * np.dot(mu, mu)
    loss = 0.0
    for n in range(N):
        if C[n] > 0.0:
            excess = abs(np.dot(mu, X[n]) - y[n]) - epsilon
            if excess > 0.0:
                loss += C[n] * excess
    return half_sq + loss, linear - half_sq


@numba.njit(**_HELPER)
def _svr_pass(X, y, C, epsilon, beta, mu, sq, order):
    """One pass of exact row updates of the epsilon-insensitive dual, in ``order``."""
    for n in order:
        if C[n] == 0.0:
            continue
        residual = y[n] - np.dot(mu, X[n])
        if sq[n] > 0.0:
            v = beta[n] + residual / sq[n]
            shrink = epsilon / sq[n]
            if v > shrink:
                new = v - shrink
            elif v < -shrink:
                new = v + shrink
            else:
                new = 0.0
            new = min(max(new, -C[n]), C[n])
        elif residual > epsilon:
            new = C[n]
        elif residual < -epsilon:
            new = -C[n]
        else:
            new = 0.0
        if new != beta[n]:
            _add_row(new - beta[n], X[n], mu)
            beta[n] = new


@numba.njit(**_JIT)
def _svr_cd(X, y, C, epsilon, beta, tol, max_iter, seed, mu, sq, order):
    _row_norms(X, sq)
    state = np.uint64(seed)
    primal, dual = _svr_objectives(X, y, C, epsilon, beta, mu)
    n_iter = 0
    while n_iter < max_iter and not _converged(primal, dual, tol):
        state = _shuffle(order, state)
        _svr_pass(X, y, C, epsilon, beta, mu, sq, order)
        primal, dual = _svr_objectives(X, y, C, epsilon, beta, mu)
        n_iter += 1
    return primal, dual, n_iter, _converged(primal, dual, tol)


def svr_cd(X, y, C, epsilon, beta, tol, max_iter, seed):
    """Dual coordinate descent for the epsilon-insensitive dual (Lemma 11); ``beta``
    updated in place. Returns ``(mu, primal, dual, n_iter, converged)``."""
    mu = np.zeros(X.shape[1])
    return (mu, *_svr_cd(X, y, C, epsilon, beta, tol, max_iter, seed, mu, *_pass_buffers(X)))


@numba.njit(**_JIT)
def project_simplex(v, total, out, work):
    """``out = argmin_{o >= 0, sum o = total} ||o - v||^2`` (``total >= 0``), by sorting
    ``v`` (into ``work``) in decreasing order: ``o = max(0, v - theta)`` with the
    threshold ``theta`` where the sum of the positive parts equals ``total``.

    ``v`` is shifted by its maximum first (the projection commutes with a common shift):
    a row of tiny norm gives entries of order ``1 / ||x_n||^2``, against which ``total``
    is below rounding, and ``v - theta`` computed unshifted would lose it (all zeros)."""
    L = v.shape[0]
    top = v[0]
    for i in range(1, L):
        top = max(top, v[i])
    for i in range(L):  # insertion sort, decreasing (L is small)
        x = v[i] - top
        j = i - 1
        while j >= 0 and work[j] < x:
            work[j + 1] = work[j]
            j -= 1
        work[j + 1] = x
    cumsum = 0.0
    theta = work[0] - total
    for r in range(L):
        cumsum += work[r]
        candidate = (cumsum - total) / (r + 1)
        if work[r] > candidate:
            theta = candidate
        else:
            break
    for i in range(L):
        out[i] = max((v[i] - top) - theta, 0.0)


@numba.njit(**_HELPER)
def _cs_objectives(X, y, C, cost, omega, mu, scores, skip):
    """Recompute ``mu_k = sum_n (C_n 1[k = y_n] - omega_nk) x_n`` in place, mark in ``skip``
    the rows the next pass leaves out (module docstring; rows with ``C_n = 0`` too); return
    (primal, dual) of the Crammer–Singer problem."""
    N, K = X.shape
    L = omega.shape[1]
    mu[:, :] = 0.0
    linear = 0.0
    for n in range(N):
        for c in range(L):
            a = -omega[n, c]
            if c == y[n]:
                a += C[n]
            linear += omega[n, c] * cost[n, c]
            if a != 0.0:
                for k in range(K):
                    mu[c, k] += a * X[n, k]
    half_sq = 0.0
    for c in range(L):
        half_sq += 0.5 * np.dot(mu[c], mu[c])
    loss = 0.0
    for n in range(N):
        if C[n] > 0.0:
            for c in range(L):
                scores[c] = np.dot(mu[c], X[n])
            worst = -np.inf
            rival = -np.inf  # the largest cost-augmented score of the other classes
            for c in range(L):
                worst = max(worst, cost[n, c] + scores[c] - scores[y[n]])
                if c != y[n]:
                    rival = max(rival, cost[n, c] + scores[c])
            loss += C[n] * worst
            # a row whose whole weight sits on its own label and whose margin holds is left
            # where it is by its exact update at this mu: the next pass skips it
            skip[n] = omega[n, y[n]] == C[n] and scores[y[n]] + cost[n, y[n]] - rival > 0.0
        else:
            skip[n] = True
    return half_sq + loss, linear - half_sq


@numba.njit(**_HELPER)
def _cs_pass(X, C, cost, omega, mu, sq, order, v, new, work, skip):
    """One pass of exact row updates of the Crammer–Singer dual, in ``order`` (``v``,
    ``new``, ``work``: buffers of length L)."""
    L = omega.shape[1]
    for n in order:
        if skip[n]:
            continue
        if sq[n] > 0.0:
            for c in range(L):
                v[c] = omega[n, c] + (np.dot(mu[c], X[n]) + cost[n, c]) / sq[n]
            project_simplex(v, C[n], new, work)
        else:  # a zero row: the row's objective is linear, all of C_n on the largest cost
            best = 0
            for c in range(1, L):
                if cost[n, c] > cost[n, best]:
                    best = c
            new[:] = 0.0
            new[best] = C[n]
        for c in range(L):
            if new[c] != omega[n, c]:
                _add_row(-(new[c] - omega[n, c]), X[n], mu[c])
                omega[n, c] = new[c]


@numba.njit(**_JIT)
def _crammer_singer_cd(X, y, C, cost, omega, tol, max_iter, seed, mu, sq, order, v, new, work, scores, skip):
    _row_norms(X, sq)
    state = np.uint64(seed)
    primal, dual = _cs_objectives(X, y, C, cost, omega, mu, scores, skip)
    n_iter = 0
    while n_iter < max_iter and not _converged(primal, dual, tol):
        state = _shuffle(order, state)
        _cs_pass(X, C, cost, omega, mu, sq, order, v, new, work, skip)
        primal, dual = _cs_objectives(X, y, C, cost, omega, mu, scores, skip)
        n_iter += 1
    return primal, dual, n_iter, _converged(primal, dual, tol)


def crammer_singer_cd(X, y, C, cost, omega, tol, max_iter, seed):
    """Sequential dual method for the Crammer–Singer dual (eq. 34 with Lemma 12's cost
    term); ``omega`` (N, L) updated in place. Returns ``(mu, primal, dual, n_iter, converged)``."""
    L = omega.shape[1]
    mu = np.zeros((L, X.shape[1]))
    rows = (np.empty(L) for _ in range(4))  # v, new, work, scores
    return (mu, *_crammer_singer_cd(X, y, C, cost, omega, tol, max_iter, seed, mu, *_pass_buffers(X), *rows,
                                    np.empty(X.shape[0], np.bool_)))


@numba.njit(**_JIT)
def _project_segments(values, starts, totals, out, work):
    for s in range(starts.shape[0] - 1):
        a, b = starts[s], starts[s + 1]
        project_simplex(values[a:b], totals[s], out[a:b], work[: b - a])


def project_segments(values, starts, totals, out):
    """Project ``values[starts[s]:starts[s + 1]]`` onto ``{o >= 0, sum o = totals[s]}`` for
    every segment ``s`` (:func:`project_simplex`), into ``out``."""
    width = int(np.max(np.diff(starts), initial=1))
    _project_segments(values, starts, totals, out, np.empty(max(width, 1)))
