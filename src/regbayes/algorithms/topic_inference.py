"""Token-level inference with the topics fixed: the Gibbs sweeps of paper 000, eq. 22
(Theta collapsed, Phi and eta given), run over documents in parallel, for MedLDA's
minibatch step and for the topic proportions of new documents (LDA inference, no label).

    p(z_dn = k | z_-dn, Phi, eta) ∝ (n_dk^-n + alpha) Phi_kw psi(y_d | zbar_d(k), eta)   (eq. 22)

with ``psi = 1`` for a document without label. The kernels are those of
:mod:`regbayes.algorithms.lda_kernels`; this module chooses the thread count and turns
their expected counts into ``E[zbar_d]`` and topic proportions.
"""
from __future__ import annotations

import numba
import numpy as np

from . import lda_kernels as kern


def fixed_topic_sweeps(n_jobs, *args):
    """:func:`~regbayes.algorithms.lda_kernels.fixed_topic_sweeps` (same arguments after
    ``n_jobs``) on ``n_jobs`` threads: None is numba's default (all cores), 1 the one-thread
    build. Results do not depend on the thread count; numba's is restored afterwards."""
    if n_jobs == 1:
        return kern.fixed_topic_sweeps_serial(*args)
    previous = numba.get_num_threads()
    numba.set_num_threads(min(n_jobs or numba.config.NUMBA_NUM_THREADS, numba.config.NUMBA_NUM_THREADS))
    try:
        return kern.fixed_topic_sweeps(*args)
    finally:
        numba.set_num_threads(previous)


def gather(doc_ptr, words, z, docs):
    """Tokens of documents ``docs``: ``(doc_ptr_b, token_index, words_b, z_b)``, with
    ``token_index`` the positions of the minibatch's tokens in ``words`` and ``z``."""
    lengths = doc_ptr[docs + 1] - doc_ptr[docs]
    doc_ptr_b = np.zeros(len(docs) + 1, np.int64)
    np.cumsum(lengths, out=doc_ptr_b[1:])
    index = np.repeat(doc_ptr[docs] - doc_ptr_b[:-1], lengths) + np.arange(doc_ptr_b[-1])
    return doc_ptr_b, index, words[index], z[index]


def expected_counts(doc_ptr, words, topic_word, alpha, n_sweeps, seed, n_jobs=None):
    """E[n_dk] (D, K) of each document under LDA with Phi = ``topic_word`` (K, V) and no
    label: ``n_sweeps`` sweeps from uniform topics, the second half averaged and
    Rao-Blackwellised (each token adds its conditional probabilities). A document's random
    stream is ``(seed, key of its content)``, so its result depends neither on its row nor
    on the other documents."""
    K = topic_word.shape[0]
    D = doc_ptr.shape[0] - 1
    _, ndk_mean, _, _ = fixed_topic_sweeps(
        n_jobs, doc_ptr, words, np.empty(words.shape[0], np.int32), np.ascontiguousarray(topic_word.T),
        np.zeros((0, K)), np.zeros((D, 0)), np.zeros(D, np.int64), kern.MODE_UNSUPERVISED, 0.0, 0.0,
        alpha, n_sweeps, n_sweeps // 2, seed, False, kern.document_keys(doc_ptr, words), True,
    )
    return ndk_mean


def expected_zbar(doc_ptr, words, topic_word, alpha, n_sweeps, seed, n_jobs=None):
    """E[zbar_d] (D, K), the average topic assignment (eq. 16) of each document with Phi
    fixed; empty documents get the prior mean 1/K."""
    ndk = expected_counts(doc_ptr, words, topic_word, alpha, n_sweeps, seed, n_jobs)
    lengths = np.diff(doc_ptr).astype(np.float64)
    zbar = np.full(ndk.shape, 1.0 / ndk.shape[1])
    filled = lengths > 0
    zbar[filled] = ndk[filled] / lengths[filled, None]
    return zbar


def topic_proportions(doc_ptr, words, topic_word, alpha, n_sweeps, seed, n_jobs=None):
    """Posterior mean topic proportions ``E[(n_dk + alpha) / (N_d + K alpha)]`` (D, K) with
    Phi fixed at ``topic_word``; an empty document gets ``1/K``."""
    lengths = np.diff(doc_ptr).astype(np.float64)
    K = topic_word.shape[0]
    ndk = expected_counts(doc_ptr, words, topic_word, alpha, n_sweeps, seed, n_jobs)
    return (ndk + alpha) / (lengths[:, None] + K * alpha)
