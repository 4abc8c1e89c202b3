"""Topic-model quantities of LDA (paper 000, section 4.1): the posterior mean topics of
collapsed counts and the perplexity of a corpus under given topic proportions and topics."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def collapsed_topic_word(nwk, nk, beta):
    """Posterior mean topics ``Phi_kw = (n_kw + beta) / (n_k + V beta)`` (K, V) from the
    word-major counts ``nwk`` (V, K) and topic totals ``nk`` (K,) of collapsed Gibbs."""
    V = nwk.shape[0]
    return ((nwk + beta) / (nk + V * beta)).T.copy()


def perplexity_from(X, doc_topic, topic_word):
    """``exp(-sum_dn log sum_k theta_dk phi_k,w_dn / N)`` of count matrix ``X`` (D, V) under
    document-topic ``doc_topic`` (D, K) and topic-word ``topic_word`` (K, V) (rows normalised)."""
    X = sp.csr_matrix(X)
    doc_topic = np.asarray(doc_topic, np.float64)
    topic_word = np.asarray(topic_word, np.float64)
    doc_topic = doc_topic / doc_topic.sum(axis=1, keepdims=True)
    topic_word = topic_word / topic_word.sum(axis=1, keepdims=True)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    p = np.einsum("nk,kn->n", doc_topic[rows], topic_word[:, X.indices])
    return float(np.exp(-np.sum(X.data * np.log(p)) / X.data.sum()))
