"""Document corpora from the generative models of MedLDA: labelled (LDA + max-margin
labels, one label per document or several), and with a real response (supervised-LDA
regression).

Paper 000, section 4.1.1 (Fig. 2): topics ``phi_k ~ Dir(beta)`` over ``n_words`` words;
for each document ``theta_d ~ Dir(alpha)``, a length ``N_d ~ 1 + Poisson(doc_length - 1)``,
``z_dn ~ theta_d`` and ``w_dn ~ phi_{z_dn}``. Classifier weights ``eta_y ~ N(0, nu^2 I_K)``
(one row per class; one row for two classes) and the label is drawn from the hinge
pseudo-likelihood of the average topic assignment ``zbar_d``, normalised over the classes:

    two classes:  P(y = +1) ∝ exp(-c (l - eta^T zbar_d)_+),  P(y = -1) ∝ exp(-c (l + eta^T zbar_d)_+)
    more:         P(y) ∝ psi(y | zbar_d, eta) = exp(-c (l + max_{y' != y} eta_{y'}^T zbar_d - eta_y^T zbar_d)_+)

(eq. 20 with the Crammer–Singer discriminant of eq. 16). Large ``c`` makes labels nearly a
deterministic function of ``zbar_d``.

:func:`make_multilabel_topic_corpus` draws the same documents with ``L`` labels each
switched on or off by its own binary max-margin classifier ``eta_l ~ N(b 1, nu^2 I_K)``
(the two-class case above, once per label, independently given ``zbar_d``)::

    P(y_dl = 1) ∝ exp(-c (l - eta_l^T zbar_d)_+),   P(y_dl = 0) ∝ exp(-c (l + eta_l^T zbar_d)_+)

A shared shift ``b`` of the weights is an intercept (``sum_k zbar_dk = 1``): ``b < 0``
makes labels sparse, as in real multi-label corpora.

:func:`make_topic_regression_corpus` draws the same LDA documents with a real response on
``zbar_d`` (paper 002, Appendix B: MedLDA regression predicts ``y_d`` by ``eta^T zbar_d``)::

    y_d = eta^T zbar_d + b + noise_d,   eta ~ N(0, nu^2 I_K),   noise_d ~ N(0, sigma^2)

and returns ``zbar_d`` itself, so that the generator's own predictions ``eta^T zbar_d + b``
give a reference R^2 (an upper reference: they use the true assignments, which a model of
the words can only infer).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..rng import check_generator
from ..validation import check_int, check_real

__all__ = ["TopicRegressionCorpus", "make_multilabel_topic_corpus", "make_topic_corpus", "make_topic_regression_corpus"]


def _label_probabilities(zbar, coef, c, margin):
    """(D, L) label probabilities of the module docstring; ``coef`` is (1, K) or (L, K)."""
    f = zbar @ coef.T
    if coef.shape[0] == 1:
        f = f[:, 0]
        log_psi = -c * np.stack([np.maximum(0.0, margin + f), np.maximum(0.0, margin - f)], axis=1)
    else:
        L = f.shape[1]
        others = np.where(np.eye(L, dtype=bool)[None, :, :], -np.inf, f[:, None, :])  # (D, y, y')
        log_psi = -c * np.maximum(0.0, margin + others.max(axis=2) - f)
    log_psi -= log_psi.max(axis=1, keepdims=True)
    p = np.exp(log_psi)
    return p / p.sum(axis=1, keepdims=True)


def _checked_lda_settings(n_docs, n_topics, n_words, doc_length, alpha, beta):
    """The LDA part's arguments, checked: D >= 1, K >= 2, V >= 2, mean length >= 1 and
    positive Dirichlet parameters."""
    return (check_int("n_docs", n_docs), check_int("n_topics", n_topics, 2), check_int("n_words", n_words, 2),
            check_real("doc_length", doc_length, low=1.0), check_real("alpha", alpha, low=0.0, low_inclusive=False),
            check_real("beta", beta, low=0.0, low_inclusive=False))


def _checked_label_settings(C, margin, prior_scale):
    """The max-margin label model's ``c > 0``, ``l >= 0`` and ``nu > 0``, checked."""
    return (check_real("C", C, low=0.0, low_inclusive=False), check_real("margin", margin, low=0.0),
            check_real("prior_scale", prior_scale, low=0.0, low_inclusive=False))


def _lda_documents(rng, topic_word, n_docs, doc_length, alpha):
    """LDA documents under the topics ``topic_word`` (K, V): ``theta_d ~ Dir(alpha)``,
    ``N_d ~ 1 + Poisson(doc_length - 1)``, ``n_d ~ Mult(N_d, theta_d)`` and each token's word
    by inverse CDF of its topic's phi (draw order: theta, lengths, topic counts, words).
    Returns the CSR counts (D, V), theta (D, K) and the average assignments ``zbar_d = n_d / N_d``."""
    n_topics, n_words = topic_word.shape
    doc_topic = rng.dirichlet(np.full(n_topics, alpha), size=n_docs)
    lengths = 1 + rng.poisson(doc_length - 1.0, size=n_docs)
    topic_counts = rng.multinomial(lengths, doc_topic)  # (D, K): n_dk

    # words: token topics in document order, each word by inverse-CDF of its topic's phi
    token_doc = np.repeat(np.arange(n_docs), lengths)
    token_topic = np.repeat(np.tile(np.arange(n_topics), n_docs), topic_counts.ravel())
    uniforms = rng.uniform(size=token_topic.shape[0])
    cdf = np.cumsum(topic_word, axis=1)
    token_word = np.empty(token_topic.shape[0], dtype=np.int64)
    for k in range(n_topics):
        at_k = token_topic == k
        token_word[at_k] = np.minimum(np.searchsorted(cdf[k], uniforms[at_k] * cdf[k, -1], side="right"), n_words - 1)
    X = sp.csr_matrix(
        (np.ones(token_word.shape[0], dtype=np.int64), (token_doc, token_word)), shape=(n_docs, n_words)
    )
    X.sum_duplicates()
    return X, doc_topic, topic_counts / lengths[:, None]


def make_topic_corpus(
    n_docs: int = 1000,
    n_topics: int = 10,
    n_words: int = 500,
    doc_length: float = 100.0,
    n_classes: int = 2,
    alpha: float = 0.1,
    beta: float = 0.05,
    C: float = 10.0,
    margin: float = 1.0,
    prior_scale: float = 3.0,
    random_state=None,
    return_coef: bool = False,
):
    """Draw a labelled corpus from the LDA + max-margin model (module docstring).

    Parameters
    ----------
    n_docs, n_topics, n_words : int
        D, K (>= 2) and the vocabulary size V (>= 2).
    doc_length : float >= 1
        Mean document length; lengths are ``1 + Poisson(doc_length - 1)`` (never empty).
    n_classes : int >= 2
    alpha, beta : float > 0
        Symmetric Dirichlet parameters of theta_d and phi_k.
    C, margin, prior_scale : float
        c > 0, l >= 0 and nu > 0 of the label model.
    random_state : None, int or np.random.Generator
        Draw order: topics, classifier weights, theta, lengths, topic assignments, words,
        labels.
    return_coef : bool
        Also return eta.

    Returns
    -------
    X : scipy.sparse.csr_matrix (n_docs, n_words) of int64 word counts
    y : ndarray (n_docs,) int64 labels in ``0 .. n_classes - 1``
    topic_word : ndarray (n_topics, n_words), rows sum to 1 (phi)
    doc_topic : ndarray (n_docs, n_topics), rows sum to 1 (theta)
    coef : ndarray (1 or n_classes, n_topics), only if ``return_coef``
    """
    n_docs, n_topics, n_words, doc_length, alpha, beta = _checked_lda_settings(n_docs, n_topics, n_words, doc_length,
                                                                               alpha, beta)
    n_classes = check_int("n_classes", n_classes, 2)
    C, margin, prior_scale = _checked_label_settings(C, margin, prior_scale)
    rng = check_generator(random_state)

    topic_word = rng.dirichlet(np.full(n_words, beta), size=n_topics)
    coef = rng.normal(0.0, prior_scale, size=(1 if n_classes == 2 else n_classes, n_topics))
    X, doc_topic, zbar = _lda_documents(rng, topic_word, n_docs, doc_length, alpha)
    probs = _label_probabilities(zbar, coef, C, margin)
    u = rng.uniform(size=(n_docs, 1))
    y = np.minimum((u > np.cumsum(probs, axis=1)).sum(axis=1), n_classes - 1).astype(np.int64)
    if return_coef:
        return X, y, topic_word, doc_topic, coef
    return X, y, topic_word, doc_topic


def make_multilabel_topic_corpus(
    n_docs: int = 1000,
    n_topics: int = 10,
    n_words: int = 500,
    doc_length: float = 100.0,
    n_labels: int = 5,
    alpha: float = 0.1,
    beta: float = 0.05,
    C: float = 10.0,
    margin: float = 1.0,
    prior_scale: float = 3.0,
    intercept: float = -2.0,
    random_state=None,
    return_coef: bool = False,
):
    """Draw a multi-label corpus: LDA documents, each of ``n_labels`` labels on or off by its
    own binary hinge pseudo-likelihood on ``zbar_d`` (module docstring; eq. 20, two-class
    form, per label).

    Parameters
    ----------
    n_docs, n_topics, n_words : int
        D, K (>= 2) and the vocabulary size V (>= 2).
    doc_length : float >= 1
        Mean document length; lengths are ``1 + Poisson(doc_length - 1)`` (never empty).
    n_labels : int >= 2
        L, the number of labels (columns of Y).
    alpha, beta : float > 0
        Symmetric Dirichlet parameters of theta_d and phi_k.
    C, margin, prior_scale : float
        c > 0, l >= 0 and nu > 0 of the label model.
    intercept : float
        b, the mean of every classifier weight (``eta_lk ~ N(b, nu^2)``); negative values
        make labels rarer. A label may still occur in no document, or in all: callers
        that need both values in every column drop the others.
    random_state : None, int or np.random.Generator
        Draw order: topics, classifier weights (L, K), theta, lengths, topic assignments,
        words, labels (D, L uniforms).
    return_coef : bool
        Also return eta (L, K), the shift b included.

    Returns
    -------
    X : scipy.sparse.csr_matrix (n_docs, n_words) of int64 word counts
    Y : ndarray (n_docs, n_labels) int64 label indicators (0 or 1)
    topic_word : ndarray (n_topics, n_words), rows sum to 1 (phi)
    doc_topic : ndarray (n_docs, n_topics), rows sum to 1 (theta)
    coef : ndarray (n_labels, n_topics), only if ``return_coef``
    """
    n_docs, n_topics, n_words, doc_length, alpha, beta = _checked_lda_settings(n_docs, n_topics, n_words, doc_length,
                                                                               alpha, beta)
    n_labels = check_int("n_labels", n_labels, 2)
    C, margin, prior_scale = _checked_label_settings(C, margin, prior_scale)
    intercept = check_real("intercept", intercept)
    rng = check_generator(random_state)

    topic_word = rng.dirichlet(np.full(n_words, beta), size=n_topics)
    coef = intercept + rng.normal(0.0, prior_scale, size=(n_labels, n_topics))
    X, doc_topic, zbar = _lda_documents(rng, topic_word, n_docs, doc_length, alpha)
    f = zbar @ coef.T  # (D, L)
    # P(y = 1) = psi(+1) / (psi(+1) + psi(-1)), computed from log psi without overflow
    log_on, log_off = -C * np.maximum(0.0, margin - f), -C * np.maximum(0.0, margin + f)
    p_on = 1.0 / (1.0 + np.exp(np.clip(log_off - log_on, -700.0, 700.0)))
    Y = (rng.uniform(size=f.shape) < p_on).astype(np.int64)
    if return_coef:
        return X, Y, topic_word, doc_topic, coef
    return X, Y, topic_word, doc_topic


class TopicRegressionCorpus(NamedTuple):
    """What :func:`make_topic_regression_corpus` returns (a tuple with names).

    X : scipy.sparse.csr_matrix (n_docs, n_words) of int64 word counts
    y : ndarray (n_docs,) real responses
    topic_word : ndarray (n_topics, n_words), rows sum to 1 (phi)
    doc_topic : ndarray (n_docs, n_topics), rows sum to 1 (theta)
    coef : ndarray (n_topics,), eta
    intercept : float, b
    zbar : ndarray (n_docs, n_topics), the average topic assignments the responses were drawn on
    """

    X: sp.csr_matrix
    y: np.ndarray
    topic_word: np.ndarray
    doc_topic: np.ndarray
    coef: np.ndarray
    intercept: float
    zbar: np.ndarray

    def oracle_predictions(self):
        """The generator's own predictions ``eta^T zbar_d + b`` (noise-free responses)."""
        return self.zbar @ self.coef + self.intercept


def make_topic_regression_corpus(
    n_docs: int = 1000,
    n_topics: int = 10,
    n_words: int = 500,
    doc_length: float = 100.0,
    alpha: float = 0.1,
    beta: float = 0.05,
    prior_scale: float = 1.0,
    intercept: float = 0.0,
    noise: float = 0.1,
    random_state=None,
) -> TopicRegressionCorpus:
    """Draw a corpus with real responses from supervised-LDA regression (module docstring).

    Parameters
    ----------
    n_docs, n_topics, n_words : int
        D, K (>= 2) and the vocabulary size V (>= 2).
    doc_length : float >= 1
        Mean document length; lengths are ``1 + Poisson(doc_length - 1)`` (never empty).
    alpha, beta : float > 0
        Symmetric Dirichlet parameters of theta_d and phi_k.
    prior_scale : float > 0
        nu: the regression weights are ``eta ~ N(0, nu^2 I_K)``.
    intercept : float
        b, added to every response.
    noise : float >= 0
        sigma, standard deviation of the Gaussian noise on the responses.
    random_state : None, int or np.random.Generator
        Draw order: topics, regression weights, theta, lengths, topic assignments, words,
        noise.

    Returns
    -------
    TopicRegressionCorpus ``(X, y, topic_word, doc_topic, coef, intercept, zbar)``; its
    ``oracle_predictions()`` are ``zbar @ coef + intercept``.
    """
    n_docs, n_topics, n_words, doc_length, alpha, beta = _checked_lda_settings(n_docs, n_topics, n_words, doc_length,
                                                                               alpha, beta)
    prior_scale = check_real("prior_scale", prior_scale, low=0.0, low_inclusive=False)
    intercept = check_real("intercept", intercept)
    noise = check_real("noise", noise, low=0.0)
    rng = check_generator(random_state)

    topic_word = rng.dirichlet(np.full(n_words, beta), size=n_topics)
    coef = rng.normal(0.0, prior_scale, size=n_topics)
    X, doc_topic, zbar = _lda_documents(rng, topic_word, n_docs, doc_length, alpha)
    y = zbar @ coef + intercept + noise * rng.standard_normal(n_docs)
    return TopicRegressionCorpus(X, y, topic_word, doc_topic, coef, intercept, zbar)
