"""Per-datum CRP assignment pass of the Gibbs infinite SVM, compiled with numba
(DESIGN.md, "Compute stack": sequential discrete Gibbs loops).

One sweep visits every datum ``i`` in order and draws ``z_i`` from its conditional with
the component parameters ``(mu, Sigma)`` and the augmentation variables ``omega`` integrated
out (paper 001, eqs. 15-16; paper 000, section 4.2.2), classifiers ``eta`` held fixed:

    p(z_i = k | ...)   ∝ n_{-i,k} t(x_i | X_{k,-i}) psi(y_i | eta_k, x_i)         (eq. 15)
    p(z_i = new | ...) ∝ alpha p(x_i) ∫ psi(y_i | eta, x_i) p0(eta) d eta           (eq. 16)

with the Student-t predictive ``t`` of :mod:`regbayes.potentials.niw` and the hinge
pseudo-likelihood ``psi``: one-vs-rest, ``psi = exp(-C sum_l (l - y_il eta_l^T x~_i)_+)``
(``Y`` holds +1/-1 per problem), or Crammer–Singer (paper 000, eqs. 24 and 26),

    psi = exp(-C max_m (l Delta(y_i, m) + f_m - f_{y_i})),   f_m = eta_m^T x~_i,

with ``Delta(y, m) = 1 - [m = y]`` (the term ``m = y_i`` is the 0 of ``max(0, .)``), where
``Y`` holds the class code ``y_i`` in its one column and ``eta_k`` has one row per class.

The same sweep serves the Dirichlet-process mixture of multinomial-logit experts (dpMNL,
Shahbaba & Neal 2009, :mod:`regbayes.algorithms.dpmnl`): with ``likelihood=LOGIT`` the
expert's term is ``log psi = log softmax_{y_i}(eta x~_i)`` (``eta`` of shape (M, D), one
row per class, ``Y`` +1 at the row's class and -1 elsewhere; ``C`` and ``margin`` unused).

The integral of eq. 16 is handled by Neal's (2000) Algorithm 8: ``m`` auxiliary
classifiers are drawn from the prior ``N(0, nu^2 I)`` (the first one is the current
classifier of ``x_i``'s component when ``x_i`` is alone in it), each stands for a new
component with weight ``alpha / m * p(x_i) psi(y_i | eta_aux)``, and a chosen auxiliary
classifier becomes the new component's. The chain then leaves the exact posterior
invariant for any ``m``; importance sampling of the integral (the papers' suggestion)
would only approximate eq. 16 and would still need a draw of the new component's
classifier from ``psi p0``.

Sufficient statistics change by rank-one up/downdates of the Cholesky factor of each
component's NIW scale matrix (O(d^2) per move); the caller recomputes them from scratch
before every sweep, so rounding does not accumulate.

A datum with ``z_i = -1`` is not seated yet: it is added without being removed first,
so a first sweep from ``z = -1`` seats the data one at a time, as the CRP generates them.

Slots with ``counts == 0`` are free and must hold the prior's mean and Cholesky factor.
When a datum would open a component and every slot is taken, the kernel stops and
returns that datum's index: the caller grows the buffers and resumes there.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np


# numba options: no reference counting (the kernel allocates nothing: the wrapper passes
# its work buffers), no cfunc wrapper; helpers
# of compiled code get no CPython wrapper either. Fewer, smaller functions compile faster.
_JIT = dict(cache=True, _nrt=False, no_cfunc_wrapper=True)
_HELPER = dict(_JIT, no_cpython_wrapper=True)


@numba.njit(**_HELPER)
def _chol_rank_one(L, v, sign):
    """``L L^T + sign v v^T`` in place (``v`` is overwritten); sign +1 update, -1 downdate."""
    d = L.shape[0]
    for k in range(d):
        lkk = L[k, k]
        r2 = lkk * lkk + sign * v[k] * v[k]
        if r2 < 1e-300:  # rounding on a downdate that must stay positive definite
            r2 = 1e-300
        r = math.sqrt(r2)
        c = r / lkk
        s = v[k] / lkk
        L[k, k] = r
        for j in range(k + 1, d):
            L[j, k] = (L[j, k] + sign * s * v[j]) / c
            v[j] = c * v[j] - s * L[j, k]


@numba.njit(**_HELPER)
def _log_student_t(x, mean, L, kappa, dof, work):
    """``log t_{dof-d+1}(x; mean, Psi (kappa+1)/(kappa (dof-d+1)))`` with ``Psi = L L^T``."""
    d = x.shape[0]
    df = dof - d + 1.0
    maha = 0.0
    logdet = 0.0
    for j in range(d):  # forward substitution L w = x - mean
        acc = x[j] - mean[j]
        for k in range(j):
            acc -= L[j, k] * work[k]
        work[j] = acc / L[j, j]
        maha += work[j] * work[j]
        logdet += 2.0 * math.log(L[j, j])
    ratio = (kappa + 1.0) / (kappa * df)
    return (
        math.lgamma(0.5 * (df + d))
        - math.lgamma(0.5 * df)
        - 0.5 * d * math.log(df * math.pi)
        - 0.5 * (d * math.log(ratio) + logdet)
        - 0.5 * (df + d) * math.log1p(kappa / (kappa + 1.0) * maha)
    )


#: ``likelihood`` codes of the sweep: the iSVM's one-vs-rest hinge, dpMNL's multinomial
#: logit, the iSVM's Crammer–Singer hinge
HINGE, LOGIT, CRAMMER_SINGER = 0, 1, 2
LIKELIHOODS = {"hinge": HINGE, "logit": LOGIT}


@numba.njit(**_JIT)
def log_expert(likelihood, eta_k, x, y, C, margin, scores):
    """The expert's log-likelihood term of eqs. 15-16 from the scores ``f_l = eta_l^T x``
    (written to the buffer ``scores``, one per row of ``eta_k``):

    * ``HINGE``: ``-C sum_l max(0, margin - y_l f_l)`` (one-vs-rest, ``y`` +1/-1);
    * ``CRAMMER_SINGER``: ``-C max_m (margin [m != y] + f_m - f_y)``, ``y[0]`` the class
      code (the term ``m = y`` is the 0 of the max);
    * ``LOGIT``: ``log softmax_c(f)`` for the class ``c`` where ``y_c > 0``, by a
      streaming log-sum-exp (``C`` and ``margin`` unused).
    """
    n_cls = eta_k.shape[0]
    for l in range(n_cls):
        acc = 0.0
        for j in range(x.shape[0]):
            acc += eta_k[l, j] * x[j]
        scores[l] = acc
    if likelihood == LOGIT:
        top = -np.inf
        total = 0.0
        chosen = 0.0
        for l in range(n_cls):
            if y[l] > 0.0:
                chosen = scores[l]
            if scores[l] > top:
                total = total * math.exp(top - scores[l]) + 1.0
                top = scores[l]
            else:
                total += math.exp(scores[l] - top)
        return chosen - top - math.log(total)
    hinge = 0.0
    if likelihood == CRAMMER_SINGER:
        code = int(y[0])
        for m in range(n_cls):
            if m != code:
                zeta = margin + scores[m] - scores[code]
                if zeta > hinge:
                    hinge = zeta
    else:
        for l in range(n_cls):
            zeta = margin - y[l] * scores[l]
            if zeta > 0.0:
                hinge += zeta
    return -(C * hinge)


class SweepBuffers(NamedTuple):
    """Work arrays of :func:`crp_sweep_kernel` (the kernel allocates nothing)."""

    work: np.ndarray  # (d,) forward substitution
    v: np.ndarray  # (d,) rank-one up/downdate vector
    aux: np.ndarray  # (n_aux, n_cls, D) auxiliary classifiers
    logw: np.ndarray  # (K + n_aux,) log weights of the choices
    scores: np.ndarray  # (n_cls,) the expert's scores


def sweep_buffers(d, K, n_aux, n_cls, D):
    """The work arrays of a kernel call with ``K`` slots."""
    return SweepBuffers(np.empty(d), np.empty(d), np.empty((n_aux, n_cls, D)), np.empty(K + n_aux), np.empty(n_cls))


@numba.njit(**_JIT)
def crp_sweep_kernel(
    X, design, Y, z, counts, means, chols, eta, fresh,
    alpha, C, margin, prior_scale, prior_mean, prior_kappa, prior_dof, prior_chol,
    n_aux, seed, start, likelihood, work, v, aux, logw, scores,
):
    """Sweep data ``start..n-1``; updates ``z, counts, means, chols, eta, fresh`` in place.

    X (n, d) likelihood features; design (n, D) classifier inputs; Y (n, L) +1/-1
    one-vs-rest labels and eta (K, L, D), or with ``CRAMMER_SINGER`` Y (n, 1) class codes
    and eta (K, M, D), or with ``LOGIT`` Y (n, M) +1 at the row's class and eta (K, M, D);
    ``likelihood`` the expert's term; ``work .. scores`` the buffers of
    :func:`sweep_buffers`. Returns the index where it stopped (``n`` when done, ``i`` when
    datum ``i`` may need a new slot and none is free).
    """
    np.random.seed(seed)
    n, d = X.shape
    K = counts.shape[0]
    n_cls, D = eta.shape[1], eta.shape[2]
    log_alpha_m = math.log(alpha / n_aux)
    for i in range(start, n):
        k_old = z[i]
        assigned = k_old >= 0  # -1: not seated yet (the first, sequential sweep)
        singleton = assigned and counts[k_old] == 1
        if not singleton:
            has_free = False
            for k in range(K):
                if counts[k] == 0:
                    has_free = True
                    break
            if not has_free:
                return i
        x = X[i]
        # remove x_i from its component
        if singleton:
            counts[k_old] = 0
            for j in range(d):
                means[k_old, j] = prior_mean[j]
                for l in range(d):
                    chols[k_old, j, l] = prior_chol[j, l]
        elif assigned:
            kap = prior_kappa + counts[k_old]
            f = math.sqrt(kap / (kap - 1.0))
            for j in range(d):
                v[j] = f * (x[j] - means[k_old, j])
            _chol_rank_one(chols[k_old], v, -1.0)
            for j in range(d):
                means[k_old, j] = (kap * means[k_old, j] - x[j]) / (kap - 1.0)
            counts[k_old] -= 1
        # auxiliary classifiers from the prior (Neal 2000, Algorithm 8)
        for a in range(n_aux):
            for l in range(n_cls):
                for j in range(D):
                    aux[a, l, j] = prior_scale * np.random.standard_normal()
        if singleton:
            for l in range(n_cls):
                for j in range(D):
                    aux[0, l, j] = eta[k_old, l, j]
        # log weights of the existing components and of the auxiliary ones
        y = Y[i]
        xd = design[i]
        best = -np.inf
        for k in range(K):
            if counts[k] > 0:
                lt = _log_student_t(x, means[k], chols[k], prior_kappa + counts[k], prior_dof + counts[k], work)
                logw[k] = math.log(counts[k]) + lt + log_expert(likelihood, eta[k], xd, y, C, margin, scores)
            else:
                logw[k] = -np.inf
            if logw[k] > best:
                best = logw[k]
        lt0 = _log_student_t(x, prior_mean, prior_chol, prior_kappa, prior_dof, work)
        for a in range(n_aux):
            logw[K + a] = log_alpha_m + lt0 + log_expert(likelihood, aux[a], xd, y, C, margin, scores)
            if logw[K + a] > best:
                best = logw[K + a]
        total = 0.0
        for c in range(K + n_aux):
            logw[c] = math.exp(logw[c] - best)
            total += logw[c]
        u = np.random.random() * total
        choice = K + n_aux - 1
        acc = 0.0
        for c in range(K + n_aux):
            acc += logw[c]
            if u < acc and logw[c] > 0.0:
                choice = c
                break
        if choice < K:
            k_new = choice
        else:
            a = choice - K
            if singleton:
                k_new = k_old
            else:
                k_new = -1
                for k in range(K):
                    if counts[k] == 0:
                        k_new = k
                        break
            if not (singleton and a == 0):
                for l in range(n_cls):
                    for j in range(D):
                        eta[k_new, l, j] = aux[a, l, j]
                fresh[k_new] = True
        # add x_i to its new component
        kap = prior_kappa + counts[k_new]
        f = math.sqrt(kap / (kap + 1.0))
        for j in range(d):
            v[j] = f * (x[j] - means[k_new, j])
        _chol_rank_one(chols[k_new], v, 1.0)
        for j in range(d):
            means[k_new, j] = (kap * means[k_new, j] + x[j]) / (kap + 1.0)
        counts[k_new] += 1
        z[i] = k_new
    return n


def grow(capacity, counts, means, chols, eta, fresh, prior_mean, prior_chol):
    """Buffers with ``capacity`` slots (new slots free: prior statistics, zero classifier)."""
    K = counts.shape[0]
    extra = capacity - K
    counts = np.concatenate([counts, np.zeros(extra, counts.dtype)])
    means = np.concatenate([means, np.broadcast_to(prior_mean, (extra, *prior_mean.shape))])
    chols = np.concatenate([chols, np.broadcast_to(prior_chol, (extra, *prior_chol.shape))])
    eta = np.concatenate([eta, np.zeros((extra, *eta.shape[1:]), eta.dtype)])
    fresh = np.concatenate([fresh, np.zeros(extra, bool)])
    return counts, means, chols, eta, fresh


def crp_sweep(X, design, Y, z, counts, means, chols, eta, *, alpha, C, margin, prior_scale,
              prior_mean, prior_kappa, prior_dof, prior_chol, n_aux, seed, crammer_singer=False, likelihood="hinge"):
    """One CRP sweep over all data. Returns new arrays ``(z, counts, means, chols, eta,
    fresh)``; the inputs are not modified. The slot buffers double whenever a datum may
    need a new component and all slots are taken (``fresh`` marks slots that received a
    new classifier in this sweep). ``likelihood`` is ``"hinge"`` (the iSVM; with
    ``crammer_singer`` the multi-class hinge, ``Y`` (n, 1) class codes, ``eta`` one row per
    class) or ``"logit"`` (dpMNL; ``C`` and ``margin`` are then unused)."""
    if likelihood not in LIKELIHOODS:
        raise ValueError(f"unknown likelihood {likelihood!r}; choose one of {tuple(LIKELIHOODS)}")
    code = CRAMMER_SINGER if (likelihood == "hinge" and crammer_singer) else LIKELIHOODS[likelihood]
    # one dtype and layout per kernel argument (read-only inputs as read-only views), so that
    # the kernel is compiled once whatever arrays the caller holds
    X, design, Y = (_frozen(a) for a in (X, design, Y))
    z, counts = (np.array(a, dtype=np.int64, order="C") for a in (z, counts))
    # the prior's mean and factor go to the same helpers as the components' (writable) ones
    means, chols, eta, prior_mean, prior_chol = (np.array(a, dtype=np.float64, order="C")
                                                 for a in (means, chols, eta, prior_mean, prior_chol))
    fresh = np.zeros(counts.shape[0], bool)
    start, n, call = 0, X.shape[0], 0
    while True:
        start = crp_sweep_kernel(
            X, design, Y, z, counts, means, chols, eta, fresh,
            float(alpha), float(C), float(margin), float(prior_scale),
            prior_mean, float(prior_kappa), float(prior_dof), prior_chol,
            int(n_aux), (int(seed) + 7919 * call) % (2**31 - 1), start, code,
            *sweep_buffers(X.shape[1], counts.shape[0], int(n_aux), eta.shape[1], eta.shape[2]),
        )
        if start >= n:
            return z, counts, means, chols, eta, fresh
        counts, means, chols, eta, fresh = grow(2 * counts.shape[0], counts, means, chols, eta, fresh, prior_mean, prior_chol)
        call += 1


def _frozen(a):
    """``a`` as a C-contiguous, read-only float64 array (a view where no conversion is needed)."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a
