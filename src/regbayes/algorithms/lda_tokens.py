"""Token storage, counts and the random streams of MedLDA's numba kernels.

Tokens are stored flat: document ``d`` owns tokens ``doc_ptr[d]:doc_ptr[d + 1]`` of ``words``
(word ids) and ``z`` (topic ids). Randomness comes from an explicit integer ``seed`` through
a counter-based generator (splitmix64), one stream per document, so results do not depend
on threads. The public functions convert every argument to the one dtype and layout its
compiled kernel takes (:func:`_frozen`), so each kernel is compiled once.
"""
from __future__ import annotations

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


def _frozen(a, dtype):
    """``a`` as a C-contiguous, read-only array of ``dtype`` (a view where no conversion is
    needed). numba compiles one specialisation per argument type, and writability is part
    of the type: read-only inputs (e.g. arrays from JAX) and writable ones share a build."""
    a = np.ascontiguousarray(a, dtype=dtype)
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


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
