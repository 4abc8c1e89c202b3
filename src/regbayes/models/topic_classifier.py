"""What the max-margin topic classifiers (``MedLDA``, ``PassiveAggressiveMedLDA``) share
after sampling: targets (classes or a label-indicator matrix), topic proportions of new
documents, and the Gibbs classifier's votes.

Targets. Class labels give ``classes_`` and, per document, its class code and ``y_sign``
(D, M): one +-1 column for two classes, one per class for more (one-vs-rest). A
label-indicator matrix Y (D, L) of 0/1 (:func:`regbayes.models.topic_input.indicator_matrix`)
gives ``classes_ = [0, ..., L - 1]`` (label indices) and ``y_sign = 2 Y - 1``: one binary
classifier per label sharing the topics, the same machinery as one-vs-rest.

Prediction (paper 000, section 4.1.2). For each posterior draw ``eta_s`` of the classifier
and the topic proportions (or ``E[zbar_d]``, eq. 16) ``x_d`` of a new document, the
discriminant ``f_s(d) = eta_s x_d`` (one entry per binary classifier) votes: for the sign
(two classes, and each label), or for ``argmax`` (several classes). ``predict_proba`` gives
the vote fractions (per label for a label matrix), ``decision_function`` the mean
discriminant; ``predict`` the class with most votes (ties: larger mean discriminant), or
for a label matrix the indicators ``[mean f_l(d) > 0]``.

The estimator sets ``components_``, ``topic_word_samples_``, ``coef_samples_``,
``_refitted`` (whether ``coef_samples_`` vote on :meth:`transform`'s proportions) and
``_inference_seed``; ``snapshots_`` for :meth:`staged_predict`.
"""
from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..algorithms import lda_kernels as kern
from ..algorithms.topic_inference import expected_zbar, topic_proportions
from ..potentials.topics import perplexity_from
from ..validation import check_int
from .base import vote_fractions


class TopicClassifierMixin:
    """Targets and the Gibbs classifier's prediction for a topic model (module docstring);
    mixed into an estimator with ``alpha``, ``n_transform_sweeps``, ``n_jobs`` and the
    count input of :class:`regbayes.models.topic_input.CountInputMixin`."""

    # ------------------------------------------------------------------ targets
    def _encode_targets(self, y):
        """``(codes (D,), y_sign (D, M))`` and ``classes_`` from class labels or a 0/1
        label matrix (already checked by ``_training_documents``); ``codes`` are zeros
        for a label matrix (no class to code)."""
        self._multilabel = np.ndim(y) == 2
        if self._multilabel:
            self.classes_ = np.arange(y.shape[1])
            return np.zeros(y.shape[0], np.int64), 2.0 * y.astype(np.float64) - 1.0
        codes = self._encode_labels(y)
        n_classes = len(self.classes_)
        if n_classes == 2:
            return codes, (2.0 * codes - 1.0)[:, None]
        return codes, np.where(codes[:, None] == np.arange(n_classes)[None, :], 1.0, -1.0)

    # ------------------------------------------------------------------ inference
    def _tokens(self, X):
        check_is_fitted(self, "components_")
        counts = self._counts(X, fit=False)
        if counts.shape[1] != self.components_.shape[1]:
            raise ValueError(f"X has {counts.shape[1]} words (columns); this {type(self).__name__} was fitted on "
                             f"{self.components_.shape[1]}")
        return kern.tokens_from_counts(counts)

    def _zbar(self, doc_ptr, words, topic_word, seed):
        return expected_zbar(doc_ptr, words, topic_word, self.alpha, self.n_transform_sweeps, seed, self.n_jobs)

    def _proportions(self, doc_ptr, words):
        return topic_proportions(doc_ptr, words, self.components_, self.alpha, self.n_transform_sweeps,
                                 self._inference_seed, self.n_jobs)

    def transform(self, X):
        """Topic proportions (n_docs, K): posterior mean ``(E[n_dk] + alpha) / (N_d + K alpha)``
        with Phi fixed at the posterior mean topics ``components_`` (``n_transform_sweeps``
        Gibbs sweeps of eq. 22 without label, the second half averaged, Rao-Blackwellised).
        Empty documents get ``1/K``. One Phi rather than each kept draw:
        :mod:`regbayes.models.medlda_refit`."""
        return self._proportions(*self._tokens(X))

    def _scores_per_draw(self, doc_ptr, words):
        """Yield the discriminants (D, M) of each posterior draw of the classifier: eta_j on
        :meth:`transform`'s proportions (``_refitted``), else the kept (Phi_s, eta_s)
        pairs, eta_s on E[zbar | Phi_s]."""
        if self._refitted:
            proportions = self._proportions(doc_ptr, words)
            for eta in self.coef_samples_:
                yield proportions @ eta.T
            return
        for s, (phi, eta) in enumerate(zip(self.topic_word_samples_, self.coef_samples_)):
            yield self._zbar(doc_ptr, words, phi, self._inference_seed + s) @ eta.T

    def _winners(self, scores):
        """Each draw's vote: label indicators (label matrix), the sign (one column), else argmax."""
        if self._multilabel:
            return (scores > 0).astype(int)
        return (scores[..., 0] > 0).astype(int) if scores.shape[-1] == 1 else np.argmax(scores, axis=-1)

    def _votes_and_mean(self, X):
        """Vote fractions (n, n_classes), or per label (n, L), and the mean discriminant (n, M)."""
        winners, total = [], 0.0
        for scores in self._scores_per_draw(*self._tokens(X)):
            winners.append(self._winners(scores))
            total = total + scores
        mean = total / len(winners)
        if self._multilabel:
            return np.mean(winners, axis=0), mean
        return vote_fractions(np.stack(winners), len(self.classes_)), mean

    def predict_proba(self, X):
        """Vote fractions of the Gibbs classifier over the posterior draws of eta: per class
        (n, n_classes), or for a label matrix the fraction voting each label on (n, L)."""
        return self._votes_and_mean(X)[0]

    def decision_function(self, X):
        """Discriminant ``eta^T E[zbar]`` averaged over the draws ((n,) two classes, else (n, M),
        one column per class or label)."""
        scores = self._votes_and_mean(X)[1]
        return scores[:, 0] if scores.shape[1] == 1 and not self._multilabel else scores

    def predict(self, X):
        """The class with most votes over the draws (ties: larger mean discriminant); for a
        label matrix the indicators (n, L) of a positive mean discriminant."""
        votes, mean = self._votes_and_mean(X)
        if self._multilabel:
            return (mean > 0).astype(np.int64)
        tie_break = np.concatenate([-mean, mean], axis=1) if mean.shape[1] == 1 else mean
        # votes are fractions of the draws: a tie-break below half a vote never overturns a majority
        votes = votes + 0.49 / len(self.coef_samples_) * np.tanh(tie_break) / (1.0 + 1e-9)
        return self.classes_[np.argmax(votes, axis=1)]

    def staged_predict(self, X):
        """Yield ``(snapshot, labels)`` for each entry of ``snapshots_``: the Gibbs classifier
        of that single (Phi, eta) snapshot (labels, or label indicators), for accuracy against
        documents processed (``snapshot["n_docs"]``) or wall time (``snapshot["wall_time"]``)."""
        doc_ptr, words = self._tokens(X)
        for i, snap in enumerate(self.snapshots_):
            scores = self._zbar(doc_ptr, words, snap["topic_word"], self._inference_seed + 10_000 + i) @ snap["coef"].T
            winners = self._winners(scores)
            yield snap, winners if self._multilabel else self.classes_[winners]

    def top_words(self, n=10):
        """The ``n`` most probable words of each topic: a list of K lists (vocabulary terms
        when fitted on texts, column indices otherwise)."""
        check_is_fitted(self, "components_")
        check_int("n", n, 1)
        order = np.argsort(-self.components_, axis=1)[:, :n]
        if hasattr(self, "vectorizer_"):
            names = self.vectorizer_.get_feature_names_out()
            return [[str(names[j]) for j in row] for row in order]
        return [[int(j) for j in row] for row in order]

    def perplexity(self, X):
        """``exp(-sum_dn log sum_k theta_dk phi_k,w_dn / N)`` with theta from ``transform`` and
        Phi = ``components_`` (:func:`regbayes.potentials.topics.perplexity_from`)."""
        check_is_fitted(self, "components_")
        return perplexity_from(self._counts(X, fit=False), self.transform(X), self.components_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        return tags


def multilabel_tags(tags):
    """``tags`` of a topic classifier (after ``ClassifierMixin`` set its classifier tags)
    marked as accepting a label-indicator matrix."""
    tags.classifier_tags.multi_label = True
    return tags
