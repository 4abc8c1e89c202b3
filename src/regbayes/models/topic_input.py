"""Word-count input of the topic-model estimators: a document-term count matrix (dense or
scipy.sparse) or raw texts turned into counts by a ``CountVectorizer``; empty documents
dropped from training with a warning. Targets are class labels or a label-indicator
matrix (``MedLDA``, ``PassiveAggressiveMedLDA``) or finite real responses
(``MedLDARegressor``).

A label-indicator matrix Y (n_docs, L) of 0/1 gives one binary classifier per label (the
one-vs-rest machinery of several classes, with ``y_dl = 2 Y_dl - 1`` instead of the
indicator of a class); :func:`indicator_matrix` checks it: only 0 and 1, and (after the
empty documents are dropped) both values in every column.

:func:`run_trace` is the ``trace_`` the three estimators keep of their run."""
from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import column_or_1d, validate_data

from ..validation import check_counts, check_labels, is_text
from .base import CHECKPOINT_CONSTRAINTS

POSITIVE = Interval(Real, 0, np.inf, closed="neither")


def at_least(n):
    """The constraint "an integer >= n"."""
    return Interval(Integral, n, None, closed="left")


#: The parameters both topic-model estimators have (LDA's K, alpha, beta; the pseudo-likelihood's
#: C; the Gaussian prior's nu; the run, inference for new documents, input and threads).
TOPIC_CONSTRAINTS = {
    "n_topics": [at_least(2)],
    "alpha": [POSITIVE],
    "beta": [POSITIVE],
    "C": [POSITIVE],
    "prior_scale": [POSITIVE],
    "n_iter": [at_least(1), None],
    "n_transform_sweeps": [at_least(2)],
    "vectorizer": [HasMethods(["fit_transform", "transform"]), None],
    "n_jobs": [at_least(1), None],
    "random_state": ["random_state"],
    "progress": ["boolean"],
    **CHECKPOINT_CONSTRAINTS,
}
#: What the max-margin topic classifiers (``MedLDA``, ``PassiveAggressiveMedLDA``) add.
TOPIC_CLASSIFIER_CONSTRAINTS = {
    "margin": [POSITIVE],
    "batch_size": [at_least(1)],
    "n_inner_sweeps": [at_least(1)],
    "n_inner_burnin": [at_least(0)],
    "n_draws": [at_least(1)],
    "refit_classifier": ["boolean"],
    "snapshot_every": [at_least(1), None],
    "callback": [callable, None],
}


class CountInputMixin:
    """``_counts(X, fit)`` and ``_training_documents(X, y)`` for an estimator with a
    ``vectorizer`` parameter (None: ``CountVectorizer(stop_words="english")``); the fitted
    copy is ``vectorizer_``. The error messages name the class."""

    def _counts(self, X, fit):
        """Validated CSR counts from a count matrix or raw texts (``vectorizer_`` fitted on them)."""
        if is_text(X):
            texts = list(X)
            for i, text in enumerate(texts):
                if not isinstance(text, (str, bytes)):
                    raise ValueError(f"X is a list of texts, but document {i} is a {type(text).__name__} ({text!r}), "
                                     f"not a string")
            if fit:
                for stale in ("n_features_in_", "feature_names_in_"):
                    if hasattr(self, stale):
                        delattr(self, stale)
                base = self.vectorizer if self.vectorizer is not None else CountVectorizer(stop_words="english")
                self.vectorizer_ = clone(base)
                return check_counts(self.vectorizer_.fit_transform(texts), type(self).__name__)
            if not hasattr(self, "vectorizer_"):
                raise ValueError(f"this {type(self).__name__} was fitted on a count matrix; pass a count matrix, not texts")
            return check_counts(self.vectorizer_.transform(texts), type(self).__name__)
        if not fit and hasattr(self, "vectorizer_"):
            raise ValueError(f"this {type(self).__name__} was fitted on raw texts; pass texts (a list of strings)")
        if fit and hasattr(self, "vectorizer_"):
            del self.vectorizer_
        X = validate_data(self, X, accept_sparse="csr", dtype="numeric", reset=fit, ensure_all_finite=False)
        return check_counts(X, type(self).__name__)

    def _training_documents(self, X, y, responses=False):
        """Counts and labels with the empty documents dropped (with a warning); with
        ``responses``, y must be finite real numbers and comes back as float64 (a copy)."""
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        counts = self._counts(X, fit=True)
        multilabel = not responses and is_label_matrix(y)
        y = indicator_matrix(y, type(self).__name__) if multilabel else column_or_1d(y, warn=True)
        if y.shape[0] != counts.shape[0]:
            noun = "responses" if responses else "labels"
            raise ValueError(f"X has {counts.shape[0]} documents but y has {y.shape[0]} {noun}")
        if responses:
            y = _real_responses(y, type(self).__name__)
        elif not multilabel:
            check_labels(y)
        if counts.shape[1] == 0:
            raise ValueError("empty vocabulary: X has no columns (no words)")
        empty = np.asarray(counts.sum(axis=1)).ravel() == 0
        if empty.all():
            raise ValueError("every document is empty (no words): nothing to learn topics from")
        if empty.any():
            warnings.warn(
                f"{int(empty.sum())} empty documents (no words) dropped from training", UserWarning, stacklevel=3
            )
            counts, y = counts[~empty], y[~empty]
        if multilabel:
            check_label_columns(y)
        return counts, y


def is_label_matrix(y) -> bool:
    """Whether a classification target is a label-indicator matrix: a 2-D array (or sparse
    matrix) with two or more columns (one column is read as a 1-D target)."""
    if sp.issparse(y):
        return True
    try:
        shape = np.asarray(y).shape
    except ValueError:  # ragged: not a matrix (column_or_1d explains)
        return False
    return len(shape) == 2 and shape[1] >= 2


def indicator_matrix(y, model) -> np.ndarray:
    """A label-indicator matrix as an int64 copy; ``ValueError`` naming ``model`` unless every
    entry is 0 or 1."""
    Y = y.toarray() if sp.issparse(y) else np.array(y)
    if Y.dtype.kind not in "biuf":
        raise ValueError(f"y is a 2-D label matrix, which {model} reads as one 0/1 indicator column per label; "
                         f"it must be numeric or boolean, got dtype {Y.dtype}")
    bad = ~((Y == 0) | (Y == 1))
    if bad.any():
        example = Y[bad].ravel()[0].item()
        raise ValueError(f"y is a 2-D label matrix, which {model} reads as one 0/1 indicator column per label; "
                         f"it holds values other than 0 and 1 ({int(bad.sum())} entries, e.g. {example!r}); "
                         "give the labels of each document as 0/1 indicators (MultiLabelBinarizer) or a 1-D "
                         "array of classes")
    return Y.astype(np.int64)


def check_label_columns(Y):
    """``ValueError`` naming the first label column that holds one value only (each label's
    binary classifier needs documents with it and without it)."""
    positives = Y.sum(axis=0)
    for label, count in enumerate(positives):
        if count == 0 or count == Y.shape[0]:
            value = "0 (no document has the label)" if count == 0 else "1 (every document has the label)"
            raise ValueError(f"label column {label} of y holds the value {value}; each label needs documents with "
                             f"it and without it: drop that column")


def _real_responses(y, model):
    """y as a float64 copy; refuses non-numeric or non-finite responses, naming ``model``."""
    try:
        y = np.array(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"y must hold real numbers (the responses {model} regresses on), got dtype {y.dtype}") from exc
    if not np.all(np.isfinite(y)):
        raise ValueError(f"y contains NaN or infinity; {model} needs finite real responses")
    return y


def run_trace(result) -> dict:
    """``trace_`` of a topic-model run (a :func:`regbayes.inference.run` result whose trace
    counts ``n_tokens``): ``iteration`` (1-based), the run's trace, ``wall_time``,
    ``tokens_per_second`` and ``compile_seconds``."""
    trace = {"iteration": np.arange(1, result.n_iter + 1), **result.trace, "wall_time": result.wall_time}
    trace["tokens_per_second"] = trace["n_tokens"] / np.maximum(trace["wall_time"], 1e-12)
    trace["compile_seconds"] = float(result.compile_seconds)
    return trace
