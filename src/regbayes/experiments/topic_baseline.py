"""The two-stage baseline of the MedLDA experiments: unsupervised LDA topics, then a
linear SVM on the documents' topic proportions, at the same number of topics K.

This is the "LDA + SVM" comparison of the MedLDA papers (paper 002, Appendix B; Zhu et
al. 2014), built from scikit-learn:

* ``LatentDirichletAllocation(n_components=K, doc_topic_prior=alpha,
  topic_word_prior=beta)`` -- variational Bayes (Hoffman, Blei & Bach 2010), batch
  updates by default;
* ``StandardScaler`` -- topic proportions are small numbers on the simplex; centring and
  scaling them lets one SVM constant serve every K;
* ``LinearSVC(C=svm_C)`` -- one-vs-rest linear SVM (squared hinge, liblinear).

:func:`lda_svm_pipeline` returns the unfitted ``Pipeline`` (documented configuration);
:func:`online_lda_svm_curve` trains the LDA stage with online minibatch updates and
records the test accuracy of the pipeline against documents processed and wall time, the
baseline curve of the accuracy-vs-time figure (paper 000, Fig. 8);
:func:`lda_bayes_svm_accuracy` puts the classifier that ``MedLDA(refit_classifier=True)``
predicts with on a fitted LDA stage's topic proportions, which separates what the
supervised topics add from what that classifier adds.
"""
from __future__ import annotations

import time

import numpy as np

__all__ = ["BASELINE_CONFIG", "lda_bayes_svm_accuracy", "lda_svm_pipeline", "online_lda_svm_curve"]

#: The configuration used by the experiments (also written into their JSON output).
BASELINE_CONFIG = {
    "lda": "sklearn LatentDirichletAllocation, variational Bayes",
    "learning_method": "batch",
    "max_iter": 30,
    "svm": "StandardScaler + LinearSVC (one-vs-rest, squared hinge)",
    "svm_C": 1.0,
}


def lda_svm_pipeline(
    n_topics: int,
    *,
    alpha: float | None = None,
    beta: float | None = None,
    learning_method: str = BASELINE_CONFIG["learning_method"],
    max_iter: int = BASELINE_CONFIG["max_iter"],
    batch_size: int = 128,
    svm_C: float = BASELINE_CONFIG["svm_C"],
    random_state: int = 0,
):
    """``Pipeline([("lda", LatentDirichletAllocation), ("scale", StandardScaler),
    ("svm", LinearSVC)])`` on a document-term count matrix, K = ``n_topics``.

    ``alpha`` / ``beta`` are the symmetric Dirichlet parameters (None: scikit-learn's
    ``1 / K``); pass MedLDA's values to compare at equal priors.
    """
    from sklearn.decomposition import LatentDirichletAllocation
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    from ..validation import check_int

    check_int("n_topics", n_topics, 2)
    lda = LatentDirichletAllocation(
        n_components=n_topics, doc_topic_prior=alpha, topic_word_prior=beta,
        learning_method=learning_method, max_iter=max_iter, batch_size=batch_size,
        random_state=random_state,
    )
    svm = LinearSVC(C=svm_C, max_iter=10000, random_state=random_state)
    return Pipeline([("lda", lda), ("scale", StandardScaler()), ("svm", svm)])


def online_lda_svm_curve(
    X_train,
    y_train,
    X_test,
    y_test,
    n_topics: int,
    *,
    n_passes: float = 2.0,
    batch_size: int = 128,
    n_checkpoints: int = 12,
    alpha: float | None = None,
    beta: float | None = None,
    svm_C: float = BASELINE_CONFIG["svm_C"],
    random_state: int = 0,
) -> dict:
    """Accuracy of LDA + LinearSVC against documents processed, with online LDA.

    The LDA stage runs ``partial_fit`` on minibatches of ``batch_size`` documents in a
    shuffled order for ``n_passes`` passes (online variational Bayes: each document of a
    minibatch seen once, then the topics move). At ``n_checkpoints`` log-spaced numbers
    of minibatches, the SVM stage is fitted on the current topic proportions of the
    training documents and scored on the test documents.

    Time: the time of a checkpoint is the cumulative ``partial_fit`` time plus the fit of
    the SVM stage there. The topic proportions of the training set that the SVM is fitted
    on are computed outside that time (``transform_seconds`` lists them; they shrink as
    the topics sharpen, which would make the curve run backwards), as the test-set
    scoring is, and as the MedLDA curves leave out their snapshots' scoring.

    Returns a dict with lists ``n_docs``, ``times``, ``accuracy``, ``transform_seconds``
    and ``final_accuracy``.
    """
    from sklearn.base import clone

    pipe = lda_svm_pipeline(n_topics, alpha=alpha, beta=beta, learning_method="online",
                            batch_size=batch_size, svm_C=svm_C, random_state=random_state)
    lda, head = pipe.named_steps["lda"], pipe[1:]
    n = X_train.shape[0]
    rng = np.random.default_rng(random_state)
    n_batches = max(1, int(np.ceil(n_passes * n / batch_size)))
    stops = set(np.unique(np.geomspace(1, n_batches, num=min(n_checkpoints, n_batches)).round().astype(int)))
    order = np.empty(0, dtype=np.int64)
    train_seconds, n_docs, out = 0.0, 0, {"n_docs": [], "times": [], "accuracy": [],
                                       "transform_seconds": []}
    for b in range(1, n_batches + 1):
        if len(order) < batch_size:
            order = np.concatenate([order, rng.permutation(n)])
        idx, order = order[:batch_size], order[batch_size:]
        start = time.perf_counter()
        lda.partial_fit(X_train[idx])
        train_seconds += time.perf_counter() - start
        n_docs += len(idx)
        if b in stops:
            start = time.perf_counter()
            features = lda.transform(X_train)
            transform_seconds = time.perf_counter() - start
            start = time.perf_counter()
            classifier = clone(head).fit(features, y_train)
            svm_seconds = time.perf_counter() - start
            accuracy = float(np.mean(classifier.predict(lda.transform(X_test)) == np.asarray(y_test)))
            out["n_docs"].append(n_docs)
            out["times"].append(train_seconds + svm_seconds)
            out["transform_seconds"].append(transform_seconds)
            out["accuracy"].append(accuracy)
    out["final_accuracy"] = out["accuracy"][-1]
    return out


def lda_bayes_svm_accuracy(lda, X_train, y_train, X_test, y_test, *, random_state: int = 0) -> float:
    """Test accuracy of the classifier of ``MedLDA``'s ``refit_classifier`` on the topic
    proportions of a fitted ``LatentDirichletAllocation`` ``lda``.

    Standardised proportions, then a :class:`~regbayes.models.bayes_svm.BayesianSVC` with an
    intercept: Crammer–Singer SSGLD with ``REFIT_RUNS["ssgld"]`` for three or more classes,
    Gibbs with data augmentation and ``REFIT_RUNS["gibbs"]`` for two.
    """
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from ..models.bayes_svm import BayesianSVC
    from ..samplers.defaults import REFIT_BATCH_SIZE, REFIT_RUNS

    sampler = "ssgld" if len(np.unique(y_train)) > 2 else "gibbs"
    run = REFIT_RUNS[sampler]
    if sampler == "ssgld":
        svm = BayesianSVC(sampler="ssgld", batch_size=min(REFIT_BATCH_SIZE, len(y_train)), random_state=random_state,
                          **run)
    else:
        svm = BayesianSVC(sampler="gibbs", n_warmup=run["n_warmup"], n_draws=run["n_draws"], random_state=random_state)
    classifier = make_pipeline(StandardScaler(), svm).fit(lda.transform(X_train), y_train)
    return float(np.mean(classifier.predict(lda.transform(X_test)) == np.asarray(y_test)))
