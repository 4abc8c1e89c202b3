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
  ``zbar_d`` in place of ``x_i``; one binary classifier per column of ``y_sign``; the sweep
  is :func:`regbayes.algorithms.medlda_gibbs_kernels.gibbs_medlda_sweep`, re-exported here)::

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

from .lda_conditionals import (  # noqa: F401  (the conditionals, re-exported for callers and tests)
    _gram_column, _times_lda_weights, augmented_token_weights, augmented_token_weights_gram, document_terms,
    fixed_topic_token_weights, supervised_token_weights,
)
from .lda_tokens import (  # noqa: F401  (token storage and streams, re-exported)
    MODE_BINARY, MODE_CRAMMER_SINGER, MODE_UNSUPERVISED, _draw, _frozen, _next_uniform, _stream, count_tables,
    document_keys, expected_topic_word, expected_topic_word_soft, random_assignments, tokens_from_counts,
)
from .medlda_gibbs_kernels import gibbs_medlda_sweep  # noqa: F401  (re-exported)


# error_model="numpy": a division by zero gives inf or nan rather than raising, so empty
# documents compute their unused 1 / n_d, and the topic loops vectorise.
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
