"""The numba kernels of Gibbs MedLDA (:mod:`regbayes.algorithms.medlda_gibbs`): the
collapsed token sweep and the classifier update, allocation-free (the Python wrappers pass
every work buffer).

* :func:`gibbs_medlda_sweep`: one collapsed Gibbs sweep over every token with the
  augmented likelihood (paper 001, eq. 13 with ``zbar_d`` in place of ``x_i``; the
  conditional is :func:`regbayes.algorithms.lda_conditionals.augmented_token_weights`,
  written out in its O(K) form :func:`~regbayes.algorithms.lda_conditionals.augmented_token_weights_gram`)::

      p(z_dn = k | ...) ∝ (n_dk^-n + alpha) (n_kw^-n + beta) / (n_k^-n + V beta)
                          * exp(A_k - 2 (G n_d^-n)_k - Q_k)

  (:func:`~regbayes.algorithms.lda_conditionals.document_terms` defines ``A``, ``Q`` and
  ``G = eta^T diag(b) eta``). Per token it needs no division and, on the multiplicative
  path, no exponential: ``1 / (n_k + V beta)`` is kept per topic (two topics change per
  token), and the document's factors ``(n_dk + alpha) exp(A_k - 2 (G n_d)_k - Q_k) /
  (n_k + V beta)`` are kept in one array, multiplied by ``exp(+-2 G[j, :])`` as tokens
  leave and join topics (the columns of G and their exponentials are computed on the
  document's first use of a topic; an exponential of a small argument by its series,
  :func:`_exp_pair`). A token then costs two multiplications and one addition per topic,
  and the draw searches blocks of 8 topics' sums.
* :func:`gibbs_classifier_update`: ``lambda_dm^{-1} | Z, eta`` (inverse Gaussian, paper 001,
  eq. 17), then ``eta_m | Z, lambda`` (Gaussian, eq. 18) for each binary classifier m, in
  one pass over the documents: the precision ``I / nu^2 + c'^2 sum_d lambda_dm^{-1} zbar_d
  zbar_d^T`` accumulated from each document's nonzero topics, its Cholesky factor, and the
  draw ``mean + L^-T z``. The normal and uniform variates come from NumPy's generator
  seeded with the step's seed.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from .lda_conditionals import document_terms
from .lda_tokens import _frozen, _next_uniform, _stream

# numba options: no reference counting (nothing is allocated in compiled code), no cfunc
# wrapper; helpers get no CPython wrapper either. error_model="numpy": the divisors are
# positive (n_k + V beta, exponentials within exp(+-300), document lengths), and without the
# zero checks the topic loops vectorise.
_JIT = dict(cache=True, _nrt=False, no_cfunc_wrapper=True, error_model="numpy")
_HELPER = dict(_JIT, no_cpython_wrapper=True)

#: |x| up to which :func:`_exp_pair` sums the series of exp(+-x) (truncation below 1e-18 relative)
SERIES_LIMIT = 0.5
#: |x| up to which the shorter series of :func:`_exp_pair_short` is as exact
SHORT_LIMIT = 1.0 / 32
#: topics per block of the draw's search
BLOCK = 8


@numba.njit(**_HELPER)
def _exp_pair(x):
    """``(exp(x), exp(-x))`` for ``|x| <= SERIES_LIMIT`` from the series' even and odd parts
    (terms to x^15; the first omitted term is below 1e-18 relative): multiplications and
    additions only (numba's ``np.exp`` is a libm call per element, about five times slower
    here)."""
    t = x * x
    even = 1.0 + t * (1.0 / 2 + t * (1.0 / 24 + t * (1.0 / 720 + t * (1.0 / 40320 + t * (
        1.0 / 3628800 + t * (1.0 / 479001600 + t * (1.0 / 87178291200)))))))
    odd = x * (1.0 + t * (1.0 / 6 + t * (1.0 / 120 + t * (1.0 / 5040 + t * (1.0 / 362880 + t * (
        1.0 / 39916800 + t * (1.0 / 6227020800 + t * (1.0 / 1307674368000))))))))
    return even + odd, even - odd


@numba.njit(**_HELPER)
def _exp_pair_short(x):
    """:func:`_exp_pair` for ``|x| <= SHORT_LIMIT``: terms to x^7 (the first omitted term is
    below 2.3e-17 relative, a fifth of float64's rounding)."""
    t = x * x
    even = 1.0 + t * (1.0 / 2 + t * (1.0 / 24 + t * (1.0 / 720)))
    odd = x * (1.0 + t * (1.0 / 6 + t * (1.0 / 120 + t * (1.0 / 5040))))
    return even + odd, even - odd


@numba.njit(**_HELPER)
def _gram_column(eta, b, j, gram, gram_exp, gram_inv, with_exp):
    """Column ``j`` of ``G = eta^T diag(b) eta`` (stored as the row ``gram[j]``; G is
    symmetric) and, ``with_exp``, ``gram_exp[j] = exp(-2 G[j, :])`` and ``gram_inv[j]`` its
    reciprocal."""
    K = eta.shape[1]
    M = eta.shape[0]
    for k in range(K):
        gram[j, k] = 0.0
    m = 0
    while m + 4 <= M:  # four classifiers per pass over the row: a quarter of the loads and stores
        c0, c1, c2, c3 = b[m] * eta[m, j], b[m + 1] * eta[m + 1, j], b[m + 2] * eta[m + 2, j], b[m + 3] * eta[m + 3, j]
        for k in range(K):
            gram[j, k] += (c0 * eta[m, k] + c1 * eta[m + 1, k]) + (c2 * eta[m + 2, k] + c3 * eta[m + 3, k])
        m += 4
    for m in range(m, M):
        bj = b[m] * eta[m, j]
        for k in range(K):
            gram[j, k] += bj * eta[m, k]
    if with_exp:
        largest = 0.0
        for k in range(K):
            largest = max(largest, abs(gram[j, k]))
        if 2.0 * largest <= SHORT_LIMIT:  # the usual case: |G| is of order C^2 / (8 omega n_d^2)
            for k in range(K):
                gram_exp[j, k], gram_inv[j, k] = _exp_pair_short(-2.0 * gram[j, k])
        elif 2.0 * largest <= SERIES_LIMIT:
            for k in range(K):
                gram_exp[j, k], gram_inv[j, k] = _exp_pair(-2.0 * gram[j, k])
        else:
            for k in range(K):
                gram_exp[j, k] = np.exp(-2.0 * gram[j, k])
                gram_inv[j, k] = np.exp(2.0 * gram[j, k])


@numba.njit(**_HELPER)
def _draw_blocked(weights, block_sums, K, state):
    """Index drawn with probability proportional to ``weights[:K]`` (non-negative, finite sum):
    the sums of blocks of ``BLOCK`` topics (independent, so they add in parallel), then the
    block, then the topic within it."""
    n_blocks = (K + BLOCK - 1) // BLOCK
    total = 0.0
    for blk in range(n_blocks):
        s = 0.0
        for k in range(blk * BLOCK, min(blk * BLOCK + BLOCK, K)):
            s += weights[k]
        block_sums[blk] = s
        total += s
    state, u = _next_uniform(state)
    target = u * total
    blk = 0
    while blk < n_blocks - 1 and target >= block_sums[blk]:
        target -= block_sums[blk]
        blk += 1
    new = -1
    acc = 0.0
    for k in range(blk * BLOCK, min(blk * BLOCK + BLOCK, K)):
        if weights[k] > 0.0:
            new = k  # rounding may leave target at or above the block's last sum: its last positive weight
            acc += weights[k]
            if target < acc:
                break
    if new < 0:  # a last block of underflowed weights: the last positive weight
        for k in range(K - 1, -1, -1):
            if weights[k] > 0.0:
                return k, state
    return new, state


@numba.njit(nogil=True, **_JIT)
def _gibbs_medlda_sweep(doc_ptr, words, z, ndk, nwk, nk, eta, y_sign, inv_omega, alpha, beta, C, margin, seed,
                        multiplicative, weights, doc_factor, factor, inv_nk, linear, quadratic, g, b, eta_max2, gram,
                        gram_exp, gram_inv, known, block_sums):
    """:func:`gibbs_medlda_sweep` in place on ``z, ndk, nwk, nk``; the other arrays after
    ``multiplicative`` are work buffers (K, or (K, K) for the columns of G, M for ``b``)."""
    D = doc_ptr.shape[0] - 1
    K = ndk.shape[1]
    V = nwk.shape[0]
    M = eta.shape[0]
    vbeta = V * beta
    for k in range(K):
        inv_nk[k] = 1.0 / (nk[k] + vbeta)
    for m in range(M):  # sum_m b_m max_k eta_mk^2 bounds |G_jk| (b per document)
        eta_max2[m] = 0.0
        for k in range(K):
            eta_max2[m] = max(eta_max2[m], eta[m, k] * eta[m, k])
    state = _stream(seed, 0)
    for d in range(D):
        start, stop = doc_ptr[d], doc_ptr[d + 1]
        if stop == start:
            continue
        n_d = float(stop - start)
        fast = True
        if M > 0:
            document_terms(eta, y_sign[d], inv_omega[d], n_d, C, margin, linear, quadratic, b)
            # The supervised factor exp(A_k - 2 g_k - Q_k), g = G n_d, is kept up to a constant by
            # multiplying with exp(+-2 G[j, :]) as tokens leave and join topics. |G_jk| <= bound,
            # and g moves within 2 n_d bound over the document, so with 4 n_d bound <= 300 the
            # factors stay within exp(+-300) of their start; beyond, the exact path below.
            bound = 0.0
            for m in range(M):
                bound += b[m] * eta_max2[m]
            fast = multiplicative and 4.0 * n_d * bound <= 300.0
            for k in range(K):
                known[k] = False
                g[k] = 0.0
            for j in range(K):  # g = G n_d
                if ndk[d, j] > 0.0:
                    _gram_column(eta, b, j, gram, gram_exp, gram_inv, fast)
                    known[j] = True
                    for k in range(K):
                        g[k] += gram[j, k] * ndk[d, j]
            top = -np.inf
            for k in range(K):
                factor[k] = linear[k] - 2.0 * g[k] - quadratic[k]
                top = max(top, factor[k])
            for k in range(K):
                factor[k] = np.exp(factor[k] - top) if fast else 1.0
        else:
            for k in range(K):
                factor[k] = 1.0
        for k in range(K):  # the token-independent part of the weights
            doc_factor[k] = (ndk[d, k] + alpha) * inv_nk[k] * factor[k]
        for i in range(start, stop):
            w = words[i]
            old = z[i]
            ndk[d, old] -= 1.0
            nwk[w, old] -= 1
            nk[old] -= 1.0
            inv_nk[old] = 1.0 / (nk[old] + vbeta)
            doc_factor[old] = (ndk[d, old] + alpha) * inv_nk[old] * factor[old]
            if M == 0:
                for k in range(K):
                    weights[k] = doc_factor[k] * (nwk[w, k] + beta)
            elif fast:  # without the token: doc_factor / exp(-2 G[old, :])
                for k in range(K):
                    weights[k] = doc_factor[k] * gram_inv[old, k] * (nwk[w, k] + beta)
            else:  # augmented_token_weights_gram, written out: an exponential per topic
                for k in range(K):
                    g[k] -= gram[old, k]
                top = -np.inf
                for k in range(K):
                    weights[k] = linear[k] - 2.0 * g[k] - quadratic[k]
                    top = max(top, weights[k])
                for k in range(K):
                    weights[k] = doc_factor[k] * (nwk[w, k] + beta) * np.exp(weights[k] - top)
            new, state = _draw_blocked(weights, block_sums, K, state)
            z[i] = new
            ndk[d, new] += 1.0
            nwk[w, new] += 1
            nk[new] += 1.0
            inv_nk[new] = 1.0 / (nk[new] + vbeta)
            if M > 0:
                if not known[new]:
                    _gram_column(eta, b, new, gram, gram_exp, gram_inv, fast)
                    known[new] = True
                if fast:
                    if new != old:
                        for k in range(K):
                            r = gram_inv[old, k] * gram_exp[new, k]
                            factor[k] *= r
                            doc_factor[k] *= r
                else:
                    for k in range(K):
                        g[k] += gram[new, k]
            doc_factor[new] = (ndk[d, new] + alpha) * inv_nk[new] * factor[new]


def gibbs_medlda_sweep(doc_ptr, words, z, ndk, nwk, nk, eta, y_sign, inv_omega, alpha, beta, C, margin, seed,
                       multiplicative=True):
    """One collapsed Gibbs sweep over every token (documents in order), Gibbs MedLDA with DA.

    ``ndk, nwk, nk`` are the count tables of ``z`` (see
    :func:`regbayes.algorithms.lda_tokens.count_tables`); ``eta`` (M, K), ``y_sign`` (D, M)
    +-1, ``inv_omega`` (D, M) = 1/lambda_dm. ``M = 0`` gives plain collapsed LDA. Returns new
    ``(z, ndk, nwk, nk)``; the inputs are not modified. Sequential by nature: every token
    changes the shared topic-word counts. One stream, ``(seed, 0)``.

    Each token costs O(K) whatever M is: per document, O(M K) for the terms of
    :func:`~regbayes.algorithms.lda_conditionals.document_terms` and O(M K) plus K
    exponentials per topic the document touches for the columns of G. With
    ``multiplicative`` (default) a token needs no exponential: the supervised factor is
    updated by multiplying with the cached ``exp(+-2 G[:, j])`` of the topics it leaves and
    joins, wherever the bound in the code keeps every factor within exp(+-300) of its start
    (else, and with ``multiplicative=False``, the factor is exponentiated per token from
    ``g = G n_d``).
    """
    z_dtype = np.asarray(z).dtype
    z = np.array(z, dtype=np.int32, order="C")  # copies: the inputs are not modified
    ndk = np.array(ndk, dtype=np.float64, order="C")
    nwk = np.array(nwk, dtype=np.int32, order="C")  # int32: half the cache lines per token's row
    nk = np.array(nk, dtype=np.float64, order="C")
    K, M = ndk.shape[1], np.shape(eta)[0]
    vectors = [np.empty(K) for _ in range(7)]
    tables = [np.empty((K, K)) for _ in range(3)]
    _gibbs_medlda_sweep(_frozen(doc_ptr, np.int64), _frozen(words, np.int32), z, ndk, nwk, nk,
                        _frozen(eta, np.float64), _frozen(y_sign, np.float64), _frozen(inv_omega, np.float64),
                        float(alpha), float(beta), float(C), float(margin), int(seed), bool(multiplicative),
                        *vectors, np.empty(M), np.empty(M), *tables, np.empty(K, np.bool_),
                        np.empty((K + BLOCK - 1) // BLOCK))
    if z_dtype != np.int32:
        z = z.astype(z_dtype)
    return z, ndk, nwk.astype(np.float64), nk


@numba.njit(nogil=True, **_JIT)
def _classifier_update(ndk, lengths, eta, y_sign, C, margin, prior_scale, normal_omega, uniform_omega, normal_eta,
                       inv_omega, eta_new, precision, rhs, x, nonzero, m_start, m_stop):
    """:func:`gibbs_classifier_update` of classifiers ``m_start:m_stop`` into their columns of
    ``inv_omega`` (D, M) and rows of ``eta_new`` (M, K); ``precision`` (M, K, K), ``rhs``
    (M, K), ``x`` (K,) and ``nonzero`` (K,) are work buffers (``x`` and ``nonzero`` one pair
    per thread). Each classifier's sums run over the documents in order, whatever the range."""
    D, K = ndk.shape
    c = 0.5 * C
    tiny = 1.4916681462400413e-154  # sqrt of the smallest normal float64: the guard of zeta = 0
    for m in range(m_start, m_stop):
        for k in range(K):
            rhs[m, k] = 0.0
            for j in range(K):
                precision[m, k, j] = 0.0
    for d in range(D):
        inv_n = 1.0 / lengths[d]
        s = 0
        for k in range(K):
            x[k] = ndk[d, k] * inv_n
            if ndk[d, k] != 0.0:
                nonzero[s] = k
                s += 1
        for m in range(m_start, m_stop):
            u = 0.0
            for t in range(s):
                u += eta[m, nonzero[t]] * x[nonzero[t]]
            y = y_sign[d, m]
            # 1/omega | zbar, eta ~ IG(1 / (c' |zeta|), 1) (paper 001, eq. 17), by Michael,
            # Schucany & Haas (1976), as regbayes.samplers.augmentation.inverse_gaussian
            mu = 1.0 / (c * max(abs(margin - y * u), tiny))
            v = normal_omega[d, m]
            w = 0.5 * mu * v * v
            x1 = mu / (1.0 + w + math.sqrt(w) * math.sqrt(w + 2.0))
            io = x1 if uniform_omega[d, m] <= mu / (mu + x1) else mu * mu / x1
            inv_omega[d, m] = io
            # eq. 18: precision += c'^2 / omega zbar zbar^T (lower triangle), rhs += c' y (1 + c' l / omega) zbar
            weight = c * c * io
            r = c * y * (1.0 + c * margin * io)
            for t in range(s):
                i = nonzero[t]
                rhs[m, i] += r * x[i]
                a = weight * x[i]
                for j in range(i + 1):
                    precision[m, i, j] += a * x[j]
    prior = 1.0 / (prior_scale * prior_scale)
    for m in range(m_start, m_stop):  # Cholesky factor L (lower, in place), then eta = L^-T (L^-1 rhs + z)
        P = precision[m]
        for i in range(K):
            P[i, i] += prior
        for j in range(K):
            diagonal = P[j, j]
            for t in range(j):
                diagonal -= P[j, t] * P[j, t]
            diagonal = math.sqrt(diagonal)
            P[j, j] = diagonal
            for i in range(j + 1, K):
                acc = P[i, j]
                for t in range(j):
                    acc -= P[i, t] * P[j, t]
                P[i, j] = acc / diagonal
        for i in range(K):  # L v = rhs; then v + z, the mean's whitened form plus the noise
            acc = rhs[m, i]
            for t in range(i):
                acc -= P[i, t] * x[t]
            x[i] = acc / P[i, i]
        for i in range(K):
            x[i] += normal_eta[m, i]
        for i in range(K - 1, -1, -1):  # L^T eta = v + z
            acc = x[i]
            for t in range(i + 1, K):
                acc -= P[t, i] * eta_new[m, t]
            eta_new[m, i] = acc / P[i, i]


def classifier_variates(seed, n_docs: int, n_classifiers: int, n_topics: int):
    """The variates of :func:`gibbs_classifier_update` for ``seed``: normals and uniforms
    (D, M) of the inverse-Gaussian draws, normals (M, K) of eta's, from
    ``numpy.random.default_rng(seed)`` in that order. They do not depend on the sweep, so
    :func:`regbayes.algorithms.medlda_gibbs.step` draws them on a second thread while the
    sweep runs (NumPy's bulk draws and the sweep release the GIL)."""
    rng = np.random.default_rng(int(seed))
    normal_omega = rng.standard_normal((n_docs, n_classifiers))
    uniform_omega = rng.random((n_docs, n_classifiers))
    return normal_omega, uniform_omega, rng.standard_normal((n_classifiers, n_topics))


def gibbs_classifier_update(seed, eta, ndk, lengths, y_sign, C, margin, prior_scale, variates=None):
    """``lambda | Z, eta`` then ``eta | Z, lambda`` for each binary classifier: paper 001,
    eqs. 17-18, with ``zbar_d = ndk[d] / lengths[d]`` (rows of ``eta`` (M, K), columns of
    ``y_sign`` (D, M) +-1). The variates are :func:`classifier_variates` of ``seed`` (or
    ``variates``, drawn by it beforehand).
    Returns new ``(eta, inv_omega (D, M))``.

    The mean of eta_m is ``P^-1 b`` with ``P = I / nu^2 + c'^2 sum_d zbar_d zbar_d^T /
    omega_dm`` and ``b = c' sum_d y_dm (1 + c' l / omega_dm) zbar_d``; with ``P = L L^T``,
    ``eta_m = L^-T (L^-1 b + z)``, ``z ~ N(0, I)``. The precision is accumulated over each
    document's nonzero topics (``M s_d K / 2`` operations for ``s_d`` of them).

    The classifiers are independent given Z: with more than one numba thread and more than
    one classifier, two threads each take half of them (the kernel releases the GIL). The
    variates are drawn first and each classifier's sums keep their order, so the result does
    not depend on the threads."""
    ndk = _frozen(ndk, np.float64)
    eta = _frozen(eta, np.float64)
    D, K = ndk.shape
    M = eta.shape[0]
    normal_omega, uniform_omega, normal_eta = classifier_variates(seed, D, M, K) if variates is None else variates
    inv_omega = np.empty((D, M))
    eta_new = np.empty((M, K))
    args = (ndk, _frozen(lengths, np.float64), eta, _frozen(y_sign, np.float64), float(C), float(margin),
            float(prior_scale), normal_omega, uniform_omega, normal_eta, inv_omega, eta_new, np.empty((M, K, K)),
            np.empty((M, K)))
    if M > 1 and numba.get_num_threads() > 1:
        from .lda_kernels import _thread_pool  # here: lda_kernels imports this module

        half = M // 2
        other = _thread_pool().submit(_classifier_update, *args, np.empty(K), np.empty(K, np.int64), half, M)
        _classifier_update(*args, np.empty(K), np.empty(K, np.int64), 0, half)
        other.result()
    else:
        _classifier_update(*args, np.empty(K), np.empty(K, np.int64), 0, M)
    return eta_new, inv_omega
