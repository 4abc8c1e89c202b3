"""Token-level Gibbs kernels of MedLDA, compiled with numba (DESIGN.md, "Compute stack").

Tokens are stored flat: document ``d`` owns tokens ``doc_ptr[d]:doc_ptr[d + 1]`` of ``words``
(word ids) and ``z`` (topic ids). Topic-word arrays are word-major, ``(V, K)``, so that the K
values a token needs are contiguous. Every kernel is pure: it copies what it changes and
returns it; randomness comes from an explicit integer ``seed`` through a counter-based
generator (splitmix64), one stream per document, so results do not depend on threads.

The public functions are thin Python wrappers: they convert every argument to the one
dtype and layout its compiled kernel takes (read-only inputs as read-only views), so each
kernel is compiled once, on first use, whatever arrays the caller holds.

Two token conditionals, each exposed as a function for the enumeration tests:

* collapsed Gibbs MedLDA with data augmentation (Theta, Phi collapsed; paper 001, eq. 13 with
  ``zbar_d`` in place of ``x_i``; one binary classifier per column of ``y_sign``)::

      p(z_dn = k | ...) ∝ (n_dk^-n + alpha) (n_kw^-n + beta) / (n_k^-n + V beta)
                          * prod_m exp(-c' zeta_dm(k) - c'^2 zeta_dm(k)^2 / (2 omega_dm))

  with ``zeta_dm(k) = l - y_dm eta_m^T zbar_d(k)``, ``zbar_d(k)`` the average assignment with
  ``z_dn = k``, and ``c' = C / 2`` (the augmented likelihood of
  :mod:`regbayes.algorithms.gibbs_svm`, whose marginal over omega is ``exp(-C zeta_+)``).

* paper 000, eq. 22 (Theta collapsed, Phi and eta given)::

      p(z_dn = k | ...) ∝ (n_dk^-n + alpha) Phi_kw psi(y_d | zbar_d(k), eta)

  with psi of eq. 20: ``mode`` 0 is a product of binary hinges (``exp(-C sum_m (l - y_dm
  f_m)_+)``, one per classifier), 1 the Crammer–Singer hinge of eq. 17 on class ``y_class``,
  2 no label (psi = 1: LDA inference for new documents). The sweeps evaluate it with
  :func:`supervised_token_weights`, which skips hinges that are inactive for every topic
  and reads hinges active for every topic from per-document exponential tables (O(M) +
  O(K) per such token instead of O(M K) and K exponentials).
"""
from __future__ import annotations

import concurrent.futures
import os

import numba
import numpy as np

MODE_BINARY = 0
MODE_CRAMMER_SINGER = 1
MODE_UNSUPERVISED = 2


@numba.njit(inline="always")
def _next_uniform(state):
    """splitmix64: returns the advanced state and a uniform draw in [0, 1)."""
    state = state + np.uint64(0x9E3779B97F4A7C15)
    x = state
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    x = x ^ (x >> np.uint64(31))
    return state, np.float64(x >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@numba.njit(inline="always")
def _stream(seed, index):
    """Initial state of the stream ``index`` of ``seed`` (decorrelated by one mixing round)."""
    state = np.uint64(seed) * np.uint64(0xD1B54A32D192ED03) + np.uint64(index) * np.uint64(0x9E3779B97F4A7C15)
    state, _ = _next_uniform(state)
    return state


@numba.njit(inline="always")
def _draw(weights, K, state):
    """Index drawn with probability proportional to ``weights[:K]`` (non-negative)."""
    total = 0.0
    for k in range(K):
        total += weights[k]
    state, u = _next_uniform(state)
    target = u * total
    acc = 0.0
    for k in range(K):
        acc += weights[k]
        if target < acc:
            return k, state
    return K - 1, state


@numba.njit(inline="always")
def _times_lda_weights(out, top, ndk_minus, nwk_minus_w, nk_minus, alpha, beta, vbeta):
    """``out`` holds log-likelihood terms with maximum ``top``: turn them into the token's
    unnormalised topic weights, the collapsed LDA factor times ``exp(out - top)``."""
    for k in range(out.shape[0]):
        out[k] = (ndk_minus[k] + alpha) * (nwk_minus_w[k] + beta) / (nk_minus[k] + vbeta) * np.exp(out[k] - top)
    return out


@numba.njit(cache=True)
def augmented_token_weights(ndk_minus, nwk_minus_w, nk_minus, n_d, f_minus, eta, y_sign, inv_omega,
                            alpha, beta, vbeta, C, margin, out):
    """Unnormalised collapsed Gibbs MedLDA conditional of one token (module docstring).

    ``ndk_minus`` (K,), ``nwk_minus_w`` (K,) (counts of the token's word), ``nk_minus`` (K,):
    counts without the token. ``f_minus`` (M,) holds ``eta_m^T n_d^-n`` (unnormalised
    discriminants without the token); ``eta`` (M, K); ``y_sign`` and ``inv_omega`` (M,).
    Writes the weights to ``out`` (K,) and returns it.
    """
    K = ndk_minus.shape[0]
    M = eta.shape[0]
    if M == 0:
        for k in range(K):
            out[k] = (ndk_minus[k] + alpha) * (nwk_minus_w[k] + beta) / (nk_minus[k] + vbeta)
        return out
    c = 0.5 * C
    top = -np.inf
    for k in range(K):  # log of the augmented likelihood, kept in out until normalised
        s = 0.0
        for m in range(M):
            zeta = margin - y_sign[m] * (f_minus[m] + eta[m, k]) / n_d
            s -= c * zeta + 0.5 * c * c * zeta * zeta * inv_omega[m]
        out[k] = s
        if s > top:
            top = s
    return _times_lda_weights(out, top, ndk_minus, nwk_minus_w, nk_minus, alpha, beta, vbeta)


@numba.njit(cache=True)
def document_terms(eta, y_sign, inv_omega, n_d, C, margin, linear, quadratic, b):
    """Per-document terms of the O(K) form of :func:`augmented_token_weights`.

    With ``u_m(k) = eta_m^T (n_d^-n + e_k)`` (the discriminant times ``n_d`` when the token
    takes topic k) and ``c' = C / 2``, the log augmented likelihood is, up to terms free of k,

        sum_m a_m u_m(k) - b_m u_m(k)^2,   a_m = c' y_m (1 + c' l / omega_m) / n_d,
                                           b_m = c'^2 / (2 omega_m n_d^2)
        = A_k - 2 (G n_d^-n)_k - Q_k,       A_k = sum_m a_m eta_mk, Q_k = sum_m b_m eta_mk^2,
                                           G = eta^T diag(b) eta   (K, K).

    Writes ``A`` to ``linear`` (K,), ``Q`` to ``quadratic`` (K,) and ``b`` (M,).
    """
    K = eta.shape[1]
    M = eta.shape[0]
    c = 0.5 * C
    for k in range(K):
        linear[k] = 0.0
        quadratic[k] = 0.0
    for m in range(M):
        a = c * y_sign[m] * (1.0 + c * margin * inv_omega[m]) / n_d
        b[m] = 0.5 * c * c * inv_omega[m] / (n_d * n_d)
        for k in range(K):
            linear[k] += a * eta[m, k]
            quadratic[k] += b[m] * eta[m, k] * eta[m, k]


@numba.njit(inline="always")
def _gram_column(eta, b, j, gram, gram_exp, with_exp, known):
    """Column ``j`` of ``G = eta^T diag(b) eta`` and, ``with_exp``, its factors
    ``exp(-2 G[:, j])``, computed on first use (a document touches few topics, so most of G
    is never needed). G is symmetric: the column is stored as row ``gram[j]``, contiguous
    for the loops that read it."""
    if not known[j]:
        K = eta.shape[1]
        row = gram[j]
        for k in range(K):
            row[k] = 0.0
        for m in range(eta.shape[0]):
            bj = b[m] * eta[m, j]
            for k in range(K):
                row[k] += bj * eta[m, k]
        if with_exp:
            for k in range(K):
                gram_exp[j, k] = np.exp(-2.0 * row[k])
        known[j] = True


@numba.njit(cache=True)
def augmented_token_weights_gram(ndk_minus, nwk_minus_w, nk_minus, linear, quadratic, g, alpha, beta, vbeta, out):
    """:func:`augmented_token_weights` in O(K): ``linear``, ``quadratic`` from
    :func:`document_terms` and ``g = G n_d^-n`` (K,), kept current token by token
    (``G[:, old]`` out, ``G[:, new]`` in)."""
    K = ndk_minus.shape[0]
    top = -np.inf
    for k in range(K):
        s = linear[k] - 2.0 * g[k] - quadratic[k]
        out[k] = s
        if s > top:
            top = s
    return _times_lda_weights(out, top, ndk_minus, nwk_minus_w, nk_minus, alpha, beta, vbeta)


# The two eq. 22 conditionals below are the reference the sweeps are tested against; the
# sweeps (_fixed_topic_sweeps_range) write the same arithmetic out in their token loop
# rather than calling them. As calls, or inlined at numba IR level (inline="always"), every
# array argument becomes a new variable whose reference count numba updates, atomically,
# once per token: a large share of the token loop's time, and the IR inlining made up most
# of the kernel's compile time.
@numba.njit(cache=True)
def fixed_topic_token_weights(ndk_minus, phi_w, n_d, f_minus, eta, y_sign, y_class, mode, C, margin, alpha, out):
    """Unnormalised eq. 22 conditional of one token with Phi and eta given (module docstring).

    ``phi_w`` (K,) is ``Phi[:, w]``; ``f_minus`` (M,) is ``eta_m^T n_d^-n``; ``y_sign`` (M,)
    the +-1 labels of the binary classifiers (mode 0); ``y_class`` the class (mode 1).
    """
    K = ndk_minus.shape[0]
    M = eta.shape[0]
    if mode == MODE_UNSUPERVISED or M == 0:
        for k in range(K):
            out[k] = (ndk_minus[k] + alpha) * phi_w[k]
        return out
    # log psi, accumulated in out until normalised. The classifier loop is outside the topic
    # loop, so that the inner loop runs over contiguous eta[m, :] with no division or branch
    # and vectorises (about 2x faster than the topic-outer loop at K = 50, M = 20).
    if mode == MODE_BINARY:
        for k in range(K):
            out[k] = 0.0
        inv_n = 1.0 / n_d
        for m in range(M):
            slope = y_sign[m] * inv_n  # zeta_m(k) = margin - y_m (f_m + eta_mk) / n_d
            offset = margin - slope * f_minus[m]
            for k in range(K):
                out[k] += max(offset - slope * eta[m, k], 0.0)
        for k in range(K):
            out[k] = -C * out[k]
    else:
        for k in range(K):  # out holds the largest competing discriminant first
            out[k] = -np.inf
        inv_n = 1.0 / n_d
        for m in range(M):  # unnormalised: max_m (f_m + eta_mk), divided by n_d below
            if m != y_class:
                f_m = f_minus[m]
                for k in range(K):
                    out[k] = max(out[k], f_m + eta[m, k])
        f_y = f_minus[y_class]
        for k in range(K):
            zeta = margin + (out[k] - f_y - eta[y_class, k]) * inv_n
            out[k] = -C * max(zeta, 0.0)
    top = -np.inf
    for k in range(K):
        if out[k] > top:
            top = out[k]
    for k in range(K):
        out[k] = (ndk_minus[k] + alpha) * phi_w[k] * np.exp(out[k] - top)
    return out


@numba.njit(inline="always")
def _factor_row(eta, m, y_class, y_m, n_d, C, mode, table, known):
    """Row ``m`` of a document's factor table, filled on first use (:func:`supervised_token_weights`):
    ``exp(C y_m (eta_mk - max_k y_m eta_mk) / n_d)`` (binary, values in (0, 1]) or
    ``exp(-C (eta_mk - eta_yk) / n_d)`` (Crammer–Singer, ``y = y_class``)."""
    if not known[m]:
        K = eta.shape[1]
        if mode == MODE_BINARY:
            top = -np.inf
            for k in range(K):
                top = max(top, y_m * eta[m, k])
            for k in range(K):
                table[m, k] = np.exp(C * (y_m * eta[m, k] - top) / n_d)
        else:
            for k in range(K):
                table[m, k] = np.exp(-C * (eta[m, k] - eta[y_class, k]) / n_d)
        known[m] = True


@numba.njit(cache=True)
def supervised_token_weights(ndk_minus, phi_w, n_d, f_minus, eta, row_max, row_min, y_sign, y_class, mode, C,
                             margin, alpha, table, known, out):
    """:func:`fixed_topic_token_weights` for the supervised modes, with few exponentials.

    The hinge arguments are affine in the candidate topic's ``eta_mk``, so their range over k
    follows from ``row_max[m] = max_k eta_mk`` and ``row_min[m]`` in O(M). Where a hinge is
    inactive for every k its factor is 1; where it is active for every k its factor is,
    up to a constant, a per-document row of exponentials (``table``, rows filled on first
    use, ``known`` reset per document), so most tokens need no exponential:

    * binary: ``zeta_m(k) = margin - y_m (f_m + eta_mk) / n_d``; active for every k, the
      factor ``exp(-C zeta_m(k))`` is proportional to ``exp(C y_m eta_mk / n_d)``;
    * Crammer–Singer: ``zeta(k) = margin + (F_k - f_y - eta_yk) / n_d`` with
      ``F_k = max_{m != y} (f_m + eta_mk)``. Only classes with ``f_m + row_max[m] >= H =
      max_m (f_m + row_min[m])`` can attain ``F_k``; active for every k,
      ``exp(-C zeta(k))`` is proportional to
      ``min_m exp(-C (f_m - H) / n_d) exp(-C (eta_mk - eta_yk) / n_d)`` over those classes.

    Hinges active for some topics only take the exact path (``exp`` per topic); so does a
    token whose product of factors underflows. Same distribution as
    :func:`fixed_topic_token_weights`, to rounding.
    """
    K = ndk_minus.shape[0]
    M = eta.shape[0]
    inv_n = 1.0 / n_d
    for k in range(K):  # out holds psi (up to a constant) until the last loop
        out[k] = 1.0
    if mode == MODE_BINARY:
        for m in range(M):
            y_m = y_sign[m]
            offset = margin - y_m * f_minus[m] * inv_n
            if y_m > 0.0:
                lo, hi = offset - row_max[m] * inv_n, offset - row_min[m] * inv_n
            else:
                lo, hi = offset + row_min[m] * inv_n, offset + row_max[m] * inv_n
            if hi <= 0.0:
                continue  # inactive for every topic
            if lo >= 0.0:
                _factor_row(eta, m, y_class, y_m, n_d, C, mode, table, known)
                for k in range(K):
                    out[k] *= table[m, k]
            else:  # the exact minimum over k of the hinge is 0 (lo < 0): factors in (0, 1]
                for k in range(K):
                    out[k] *= np.exp(-C * max(offset - y_m * eta[m, k] * inv_n, 0.0))
    else:
        H = -np.inf
        G = -np.inf
        for m in range(M):
            if m != y_class:
                H = max(H, f_minus[m] + row_min[m])
                G = max(G, f_minus[m] + row_max[m])
        f_y = f_minus[y_class]
        hi = margin + (G - f_y - row_min[y_class]) * inv_n
        if hi > 0.0:
            lo = margin + (H - f_y - row_max[y_class]) * inv_n
            if lo < 0.0:
                return fixed_topic_token_weights(ndk_minus, phi_w, n_d, f_minus, eta, y_sign, y_class, mode, C,
                                                 margin, alpha, out)
            for k in range(K):
                out[k] = np.inf
            for m in range(M):
                if m != y_class and f_minus[m] + row_max[m] >= H:
                    _factor_row(eta, m, y_class, 0.0, n_d, C, mode, table, known)
                    scale = np.exp(-C * (f_minus[m] - H) * inv_n)
                    for k in range(K):
                        out[k] = min(out[k], scale * table[m, k])
    total = 0.0
    for k in range(K):
        out[k] *= (ndk_minus[k] + alpha) * phi_w[k]
        total += out[k]
    if not (total > 0.0 and total < np.inf):
        return fixed_topic_token_weights(ndk_minus, phi_w, n_d, f_minus, eta, y_sign, y_class, mode, C, margin,
                                         alpha, out)
    return out


@numba.njit(cache=True)
def _count_tables(doc_ptr, words, z, n_topics, n_words):
    D = doc_ptr.shape[0] - 1
    ndk = np.zeros((D, n_topics))
    nwk = np.zeros((n_words, n_topics))
    nk = np.zeros(n_topics)
    for d in range(D):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            k = z[i]
            ndk[d, k] += 1.0
            nwk[words[i], k] += 1.0
            nk[k] += 1.0
    return ndk, nwk, nk


def count_tables(doc_ptr, words, z, n_topics, n_words):
    """``(ndk (D, K), nwk (V, K), nk (K,))`` from the assignments (float64 counts)."""
    return _count_tables(_frozen(doc_ptr, np.int64), _frozen(words, np.int32), _frozen(z, np.int32), int(n_topics),
                         int(n_words))


# error_model="numpy": the divisors of the token loop are positive (n_k + V beta with beta > 0,
# and exp(-2 G) within exp(+-300)), and without the zero checks of the "python" model the
# topic loops vectorise.
@numba.njit(cache=True, error_model="numpy")
def _gibbs_medlda_sweep(doc_ptr, words, z, ndk, nwk, nk, eta, y_sign, inv_omega, alpha, beta, C, margin, seed,
                        multiplicative):
    """:func:`gibbs_medlda_sweep` in place on ``z, ndk, nwk, nk`` (copies made by the caller)."""
    D = doc_ptr.shape[0] - 1
    K = ndk.shape[1]
    V = nwk.shape[0]
    M = eta.shape[0]
    vbeta = V * beta
    weights = np.empty(K)
    linear = np.zeros(K)
    quadratic = np.zeros(K)
    b = np.empty(M)
    g = np.zeros(K)
    factor = np.empty(K)
    gram = np.empty((K, K))
    gram_exp = np.empty((K, K))
    known = np.zeros(K, dtype=np.bool_)
    eta_abs_max = np.zeros(M)
    for m in range(M):
        for k in range(K):
            eta_abs_max[m] = max(eta_abs_max[m], abs(eta[m, k]))
    state = _stream(seed, 0)
    for d in range(D):
        start, stop = doc_ptr[d], doc_ptr[d + 1]
        if stop == start:
            continue
        n_d = float(stop - start)
        fast = False
        if M > 0:
            document_terms(eta, y_sign[d], inv_omega[d], n_d, C, margin, linear, quadratic, b)
            # The supervised factor exp(A_k - 2 g_k - Q_k) is kept up to a constant by
            # multiplying with exp(+-2 G[j, :]) as tokens leave and join topics (no exponential
            # per token). |G_jk| <= bound, and g moves within 2 n_d bound over the document, so
            # with 4 n_d bound <= 300 the factors stay within exp(+-300) of their start.
            bound = 0.0
            for m in range(M):
                bound += b[m] * eta_abs_max[m] * eta_abs_max[m]
            fast = multiplicative and 4.0 * n_d * bound <= 300.0
            for k in range(K):
                known[k] = False
                g[k] = 0.0
            for j in range(K):  # g = G n_d
                if ndk[d, j] > 0.0:
                    _gram_column(eta, b, j, gram, gram_exp, fast, known)
                    for k in range(K):
                        g[k] += gram[j, k] * ndk[d, j]
            if fast:
                top = -np.inf
                for k in range(K):
                    top = max(top, linear[k] - 2.0 * g[k] - quadratic[k])
                for k in range(K):
                    factor[k] = np.exp(linear[k] - 2.0 * g[k] - quadratic[k] - top)
        for i in range(start, stop):
            w = words[i]
            old = z[i]
            ndk[d, old] -= 1.0
            nwk[w, old] -= 1.0
            nk[old] -= 1.0
            if fast:
                for k in range(K):
                    factor[k] /= gram_exp[old, k]
                    weights[k] = (ndk[d, k] + alpha) * (nwk[w, k] + beta) / (nk[k] + vbeta) * factor[k]
            else:  # augmented_token_weights_gram, written out (see _fixed_topic_sweeps_range)
                if M > 0:
                    for k in range(K):
                        g[k] -= gram[old, k]
                top = -np.inf
                for k in range(K):
                    s = linear[k] - 2.0 * g[k] - quadratic[k]
                    weights[k] = s
                    if s > top:
                        top = s
                for k in range(K):
                    weights[k] = (ndk[d, k] + alpha) * (nwk[w, k] + beta) / (nk[k] + vbeta) * np.exp(weights[k] - top)
            total = 0.0  # _draw, written out
            for k in range(K):
                total += weights[k]
            state, u = _next_uniform(state)
            target = u * total
            acc = 0.0
            new = K - 1
            for k in range(K):
                acc += weights[k]
                if target < acc:
                    new = k
                    break
            z[i] = new
            ndk[d, new] += 1.0
            nwk[w, new] += 1.0
            nk[new] += 1.0
            if M > 0:
                if not known[new]:  # _gram_column, written out
                    for k in range(K):
                        gram[new, k] = 0.0
                    for m in range(M):
                        bj = b[m] * eta[m, new]
                        for k in range(K):
                            gram[new, k] += bj * eta[m, k]
                    if fast:
                        for k in range(K):
                            gram_exp[new, k] = np.exp(-2.0 * gram[new, k])
                    known[new] = True
                if fast:
                    for k in range(K):
                        factor[k] *= gram_exp[new, k]
                else:
                    for k in range(K):
                        g[k] += gram[new, k]


def gibbs_medlda_sweep(doc_ptr, words, z, ndk, nwk, nk, eta, y_sign, inv_omega, alpha, beta, C, margin, seed,
                       multiplicative=True):
    """One collapsed Gibbs sweep over every token (documents in order), Gibbs MedLDA with DA.

    ``ndk, nwk, nk`` are the count tables of ``z`` (see :func:`count_tables`); ``eta`` (M, K),
    ``y_sign`` (D, M) +-1, ``inv_omega`` (D, M) = 1/lambda_dm. ``M = 0`` gives plain
    collapsed LDA. Returns new ``(z, ndk, nwk, nk)``; the inputs are not modified.
    Sequential by nature: every token changes the shared topic-word counts.

    Each token costs O(K) whatever M is (:func:`augmented_token_weights_gram`): per document,
    O(M K) for the terms of :func:`document_terms` and O(M K) plus K exponentials per topic
    the document touches for the columns of G. With ``multiplicative`` (default) a token
    needs no exponential: the supervised factor is updated by multiplying with the cached
    ``exp(-2 G[:, j])`` of the topics it leaves and joins, wherever the bound in the code
    keeps every factor within exp(+-300) of its start (else, and with
    ``multiplicative=False``, the factor is exponentiated per token from ``g = G n_d``).
    """
    z_dtype = np.asarray(z).dtype
    z = np.array(z, dtype=np.int32, order="C")  # copies: the inputs are not modified
    ndk = np.array(ndk, dtype=np.float64, order="C")
    nwk = np.array(nwk, dtype=np.float64, order="C")
    nk = np.array(nk, dtype=np.float64, order="C")
    _gibbs_medlda_sweep(_frozen(doc_ptr, np.int64), _frozen(words, np.int32), z, ndk, nwk, nk,
                        _frozen(eta, np.float64), _frozen(y_sign, np.float64), _frozen(inv_omega, np.float64),
                        float(alpha), float(beta), float(C), float(margin), int(seed), bool(multiplicative))
    if z_dtype != np.int32:
        z = z.astype(z_dtype)
    return z, ndk, nwk, nk


# error_model="numpy" (a division by zero gives inf or nan rather than raising) is what the
# prange body of the former parallel build ran under; here it also lets empty documents
# compute their unused 1 / n_d.
@numba.njit(cache=True, nogil=True, error_model="numpy")
def _fixed_topic_sweeps_range(d_start, d_stop, doc_ptr, words, z, phi_t, eta, y_sign, y_class, mode, C, margin,
                              alpha, n_sweeps, n_burnin, seed, record, doc_keys, init_random, record_probabilities,
                              row_max, row_min, ndk_mean, z_kept, p_kept):
    """The sweeps of documents ``d_start..d_stop - 1`` (:func:`fixed_topic_sweeps`): writes
    their tokens of ``z``, ``z_kept`` and ``p_kept`` and their rows of ``ndk_mean``. It
    releases the GIL, so that threads can run disjoint document ranges at once.

    The token conditional is :func:`supervised_token_weights` where ``mode`` is supervised
    (falling back to :func:`fixed_topic_token_weights` where it does) and
    :func:`fixed_topic_token_weights` otherwise, written out here with the same arithmetic
    (see the note above :func:`fixed_topic_token_weights`)."""
    K = phi_t.shape[1]
    M = eta.shape[0]
    n_kept = n_sweeps - n_burnin
    supervised = mode != MODE_UNSUPERVISED and M > 0
    rao_blackwell = mode == MODE_UNSUPERVISED
    weights = np.empty(K)
    ndk = np.empty(K)
    f = np.empty(M)
    table = np.empty((M, K))  # per-document factor rows of supervised_token_weights
    known = np.empty(M, dtype=np.bool_)
    for d in range(d_start, d_stop):
        start, stop = doc_ptr[d], doc_ptr[d + 1]
        n_d = float(stop - start)
        inv_n = 1.0 / n_d
        yc = y_class[d]
        state = _stream(seed, doc_keys[d])
        for k in range(K):
            ndk[k] = 0.0
        for i in range(start, stop):
            if init_random:
                state, u = _next_uniform(state)
                z[i] = min(int(u * K), K - 1)
            ndk[z[i]] += 1.0
        for m in range(M):
            f[m] = 0.0
            known[m] = False
            for k in range(K):
                f[m] += eta[m, k] * ndk[k]
        for sweep in range(n_sweeps):
            kept = sweep >= n_burnin
            for i in range(start, stop):
                w = words[i]
                old = z[i]
                ndk[old] -= 1.0
                for m in range(M):
                    f[m] -= eta[m, old]
                exact = not supervised
                if supervised:  # supervised_token_weights
                    for k in range(K):  # weights hold psi (up to a constant) until the last loop
                        weights[k] = 1.0
                    if mode == MODE_BINARY:
                        for m in range(M):
                            y_m = y_sign[d, m]
                            offset = margin - y_m * f[m] * inv_n
                            if y_m > 0.0:
                                lo, hi = offset - row_max[m] * inv_n, offset - row_min[m] * inv_n
                            else:
                                lo, hi = offset + row_min[m] * inv_n, offset + row_max[m] * inv_n
                            if hi <= 0.0:
                                continue  # inactive for every topic
                            if lo >= 0.0:
                                if not known[m]:  # _factor_row, binary
                                    top = -np.inf
                                    for k in range(K):
                                        top = max(top, y_m * eta[m, k])
                                    for k in range(K):
                                        table[m, k] = np.exp(C * (y_m * eta[m, k] - top) / n_d)
                                    known[m] = True
                                for k in range(K):
                                    weights[k] *= table[m, k]
                            else:
                                for k in range(K):
                                    weights[k] *= np.exp(-C * max(offset - y_m * eta[m, k] * inv_n, 0.0))
                    else:
                        H = -np.inf
                        G = -np.inf
                        for m in range(M):
                            if m != yc:
                                H = max(H, f[m] + row_min[m])
                                G = max(G, f[m] + row_max[m])
                        f_y = f[yc]
                        hi = margin + (G - f_y - row_min[yc]) * inv_n
                        if hi > 0.0:
                            lo = margin + (H - f_y - row_max[yc]) * inv_n
                            if lo < 0.0:
                                exact = True
                            else:
                                for k in range(K):
                                    weights[k] = np.inf
                                for m in range(M):
                                    if m != yc and f[m] + row_max[m] >= H:
                                        if not known[m]:  # _factor_row, Crammer-Singer
                                            for k in range(K):
                                                table[m, k] = np.exp(-C * (eta[m, k] - eta[yc, k]) / n_d)
                                            known[m] = True
                                        scale = np.exp(-C * (f[m] - H) * inv_n)
                                        for k in range(K):
                                            weights[k] = min(weights[k], scale * table[m, k])
                    if not exact:
                        total = 0.0
                        for k in range(K):
                            weights[k] *= (ndk[k] + alpha) * phi_t[w, k]
                            total += weights[k]
                        exact = not (total > 0.0 and total < np.inf)
                if exact:  # fixed_topic_token_weights
                    if mode == MODE_UNSUPERVISED or M == 0:
                        for k in range(K):
                            weights[k] = (ndk[k] + alpha) * phi_t[w, k]
                    else:
                        if mode == MODE_BINARY:
                            for k in range(K):
                                weights[k] = 0.0
                            for m in range(M):
                                slope = y_sign[d, m] * inv_n
                                offset = margin - slope * f[m]
                                for k in range(K):
                                    weights[k] += max(offset - slope * eta[m, k], 0.0)
                            for k in range(K):
                                weights[k] = -C * weights[k]
                        else:
                            for k in range(K):
                                weights[k] = -np.inf
                            for m in range(M):
                                if m != yc:
                                    f_m = f[m]
                                    for k in range(K):
                                        weights[k] = max(weights[k], f_m + eta[m, k])
                            f_y = f[yc]
                            for k in range(K):
                                zeta = margin + (weights[k] - f_y - eta[yc, k]) * inv_n
                                weights[k] = -C * max(zeta, 0.0)
                        top = -np.inf
                        for k in range(K):
                            if weights[k] > top:
                                top = weights[k]
                        for k in range(K):
                            weights[k] = (ndk[k] + alpha) * phi_t[w, k] * np.exp(weights[k] - top)
                if kept and (rao_blackwell or record_probabilities):
                    # Rao-Blackwellised E[n_dk]: add the token's conditional p(z_dn = k | z_-dn),
                    # whose expectation is that of the indicator of its draw, at lower variance
                    total = 0.0
                    for k in range(K):
                        total += weights[k]
                    for k in range(K):
                        p = weights[k] / total
                        if rao_blackwell:
                            ndk_mean[d, k] += p
                        if record_probabilities:
                            p_kept[i, k] += p / n_kept
                new, state = _draw(weights, K, state)
                z[i] = new
                ndk[new] += 1.0
                for m in range(M):
                    f[m] += eta[m, new]
            if kept:
                if not rao_blackwell:
                    for k in range(K):
                        ndk_mean[d, k] += ndk[k]
                if record:
                    for i in range(start, stop):
                        z_kept[sweep - n_burnin, i] = z[i]
        if n_kept > 0:
            for k in range(K):
                ndk_mean[d, k] /= n_kept


def _frozen(a, dtype):
    """``a`` as a C-contiguous, read-only array of ``dtype`` (a view where no conversion is
    needed). numba compiles one specialisation per argument type, and writability is part
    of the type: read-only inputs (e.g. arrays from JAX) and writable ones share a build."""
    a = np.ascontiguousarray(a, dtype=dtype)
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


_POOL = None


def _thread_pool():
    """Worker threads of :func:`fixed_topic_sweeps`, started on first use."""
    global _POOL
    if _POOL is None:
        _POOL = concurrent.futures.ThreadPoolExecutor(numba.config.NUMBA_NUM_THREADS, "regbayes-sweeps")
    return _POOL


def _forget_thread_pool():
    global _POOL
    _POOL = None  # a forked child has none of the parent's threads


os.register_at_fork(after_in_child=_forget_thread_pool)


def _chunks(doc_ptr, n_chunks):
    """Document boundaries splitting the tokens into ``n_chunks`` ranges of about equal size."""
    bounds = np.searchsorted(doc_ptr, np.linspace(0, doc_ptr[-1], n_chunks + 1)[1:-1])
    return np.concatenate([[0], bounds, [doc_ptr.shape[0] - 1]]).astype(np.int64)


def _run_fixed_topic_sweeps(threaded, doc_ptr, words, z, phi_t, eta, y_sign, y_class, mode, C, margin, alpha, n_sweeps,
                            n_burnin, seed, record, doc_keys, init_random, record_probabilities):
    """Arguments converted to the one type each kernel argument is compiled for, outputs
    allocated, then the documents swept: with ``threaded``, in ``numba.get_num_threads()``
    ranges of about equal token counts at once (documents are independent and each has its
    own stream, so the split does not change the results)."""
    doc_ptr = _frozen(doc_ptr, np.int64)
    words = _frozen(words, np.int32)
    phi_t = _frozen(phi_t, np.float64)
    eta = _frozen(eta, np.float64)
    y_sign = _frozen(y_sign, np.float64)
    y_class = _frozen(y_class, np.int64)
    doc_keys = _frozen(doc_keys, np.int64)
    z_dtype = np.asarray(z).dtype
    z_new = np.array(z, dtype=np.int32, order="C")  # always a copy
    n_sweeps, n_burnin = int(n_sweeps), int(n_burnin)
    record, record_probabilities = bool(record), bool(record_probabilities)
    D = doc_ptr.shape[0] - 1
    K = phi_t.shape[1]
    M = eta.shape[0]
    n_kept = n_sweeps - n_burnin
    n_tokens = words.shape[0]
    ndk_mean = np.zeros((D, K))
    z_kept = np.empty((max(n_kept, 0), n_tokens) if record else (0, 0), dtype=np.int32)
    p_kept = np.zeros((n_tokens, K) if record_probabilities else (0, K))
    row_max = eta.max(axis=1) if K > 0 else np.zeros(M)
    row_min = eta.min(axis=1) if K > 0 else np.zeros(M)
    args = (doc_ptr, words, z_new, phi_t, eta, y_sign, y_class, int(mode), float(C), float(margin), float(alpha),
            n_sweeps, n_burnin, int(seed), record, doc_keys, bool(init_random), record_probabilities, row_max, row_min,
            ndk_mean, z_kept, p_kept)
    n_threads = min(numba.get_num_threads(), D) if threaded else 1
    if n_threads <= 1:
        _fixed_topic_sweeps_range(0, D, *args)
    else:
        bounds = _chunks(doc_ptr, n_threads)
        futures = [_thread_pool().submit(_fixed_topic_sweeps_range, bounds[j], bounds[j + 1], *args)
                   for j in range(1, n_threads)]
        _fixed_topic_sweeps_range(bounds[0], bounds[1], *args)
        for future in futures:
            future.result()
    if z_dtype != np.int32:
        z_new, z_kept = z_new.astype(z_dtype), z_kept.astype(z_dtype)
    return z_new, ndk_mean, z_kept, p_kept


def fixed_topic_sweeps(doc_ptr, words, z, phi_t, eta, y_sign, y_class, mode, C, margin, alpha,
                       n_sweeps, n_burnin, seed, record, doc_keys, init_random, record_probabilities=False):
    """Gibbs sweeps of eq. 22 over documents sampled in parallel (Phi and eta fixed).

    The documents are split into ``numba.get_num_threads()`` ranges of about equal token
    counts, swept at once by threads (the compiled kernel releases the GIL).

    ``phi_t`` (V, K) is Phi transposed; ``y_sign`` (D, M), ``y_class`` (D,) as in
    :func:`fixed_topic_token_weights`. Each document runs ``n_sweeps`` sweeps from ``z``; the
    last ``n_sweeps - n_burnin`` are recorded (``z_kept`` is empty unless ``record``).
    Returns ``(z_new, ndk_mean (D, K), z_kept (n_sweeps - n_burnin, n_tokens), p_kept
    (n_tokens, K))``: the final assignments, the document-topic counts averaged over the
    recorded sweeps, the recorded assignments (for expected topic-word counts), and, with
    ``record_probabilities``, each token's conditional ``p(z_dn = k | z_-dn, Phi, eta)``
    averaged over the recorded sweeps (empty otherwise): a Rao-Blackwellised estimate of
    the indicator of its topic, whose expectation is the same at lower variance.

    Without labels (``MODE_UNSUPERVISED``: ``transform``) ``ndk_mean`` is Rao-Blackwellised:
    each token adds its conditional probabilities, computed when it is resampled, rather
    than its drawn topic. The supervised modes of training average the drawn counts, as
    Algorithm 1 does: there the smoother E[zbar] lowered SSGRLD's test accuracy on
    ``medlda-fig8``'s 3,000-document corpus (K = 20, 500 iterations, two seeds) from
    0.823-0.832 to 0.747-0.759.

    With ``init_random`` the starting topics are drawn uniformly inside the kernel (``z``
    is then only read for its shape). The stream of document ``d`` is
    ``(seed, doc_keys[d])``: with keys from the documents' content
    (:func:`document_keys`) a document gets the same draws wherever it sits in the corpus,
    so predictions do not depend on row order or on the other rows, nor on the number of
    threads: :func:`fixed_topic_sweeps_serial` gives identical results.
    """
    return _run_fixed_topic_sweeps(True, doc_ptr, words, z, phi_t, eta, y_sign, y_class, mode,
                                   C, margin, alpha, n_sweeps, n_burnin, seed, record, doc_keys, init_random,
                                   record_probabilities)


def fixed_topic_sweeps_serial(doc_ptr, words, z, phi_t, eta, y_sign, y_class, mode, C, margin, alpha,
                              n_sweeps, n_burnin, seed, record, doc_keys, init_random, record_probabilities=False):
    """:func:`fixed_topic_sweeps` in the calling thread only (same arguments, same results;
    same compiled kernel)."""
    return _run_fixed_topic_sweeps(False, doc_ptr, words, z, phi_t, eta, y_sign, y_class, mode,
                                   C, margin, alpha, n_sweeps, n_burnin, seed, record, doc_keys, init_random,
                                   record_probabilities)


@numba.njit(cache=True)
def _document_keys(doc_ptr, words):
    D = doc_ptr.shape[0] - 1
    keys = np.empty(D, dtype=np.int64)
    for d in range(D):
        h = np.uint64(0x243F6A8885A308D3) + np.uint64(doc_ptr[d + 1] - doc_ptr[d])
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            h, _ = _next_uniform(h ^ np.uint64(words[i]))
        keys[d] = np.int64(h >> np.uint64(1))
    return keys


def document_keys(doc_ptr, words):
    """A 63-bit key of each document's content (its word ids in order; see
    :func:`tokens_from_counts` for the canonical order): equal documents, equal keys."""
    return _document_keys(_frozen(doc_ptr, np.int64), _frozen(words, np.int32))


@numba.njit(cache=True)
def _random_assignments(n_tokens, n_topics, seed):
    z = np.empty(n_tokens, dtype=np.int32)
    state = _stream(seed, 0)
    for i in range(n_tokens):
        state, u = _next_uniform(state)
        k = int(u * n_topics)
        z[i] = min(k, n_topics - 1)
    return z


def random_assignments(n_tokens, n_topics, seed):
    """Uniform initial topics for ``n_tokens`` tokens (int32)."""
    return _random_assignments(int(n_tokens), int(n_topics), int(seed))


def expected_topic_word(words, z_kept, n_topics, n_words):
    """Topic-word counts (K, V) averaged over the recorded sweeps ``z_kept`` (S, n_tokens)."""
    n_kept = z_kept.shape[0]
    if n_kept == 0 or words.shape[0] == 0:
        return np.zeros((n_topics, n_words))
    index = z_kept.astype(np.int64) * n_words + words[None, :]
    counts = np.bincount(index.ravel(), minlength=n_topics * n_words).astype(np.float64)
    return counts.reshape(n_topics, n_words) / n_kept


@numba.njit(cache=True)
def _expected_topic_word_soft(words, p_kept, n_words):
    K = p_kept.shape[1]
    counts = np.zeros((n_words, K))
    for i in range(words.shape[0]):
        for k in range(K):
            counts[words[i], k] += p_kept[i, k]
    return counts.T.copy()


def expected_topic_word_soft(words, p_kept, n_words):
    """Topic-word counts (K, V) from per-token topic probabilities ``p_kept`` (n_tokens, K)."""
    return _expected_topic_word_soft(_frozen(words, np.int32), _frozen(p_kept, np.float64), int(n_words))


def tokens_from_counts(X):
    """Flatten a CSR count matrix into ``(doc_ptr (D+1,) int64, words (N,) int32)``.

    Counts must be non-negative integers (checked by the caller); document ``d``'s tokens
    are its words repeated by their counts, in column order.
    """
    X = X.tocsr(copy=True)
    X.sum_duplicates()  # also sorts the column indices: a canonical token order per document
    counts = X.data.astype(np.int64)
    cumulative = np.concatenate([np.zeros(1, np.int64), np.cumsum(counts)])
    doc_ptr = cumulative[X.indptr]
    words = np.repeat(X.indices.astype(np.int32), counts)
    return doc_ptr, words
