"""The LDA + LinearSVC baseline of the MedLDA experiments: its documented configuration at
equal K, its accuracy on a corpus drawn from the LDA + max-margin model, and the online
accuracy curve's bookkeeping."""
from __future__ import annotations

import numpy as np
import pytest

from regbayes.datasets.topic_corpus import make_topic_corpus
from regbayes.experiments.topic_baseline import (
    BASELINE_CONFIG,
    lda_bayes_svm_accuracy,
    lda_svm_pipeline,
    online_lda_svm_curve,
)


@pytest.fixture(scope="module")
def corpus():
    # 3 classes (309 / 121 / 170 of 800 documents), labels nearly a function of zbar_d (c = 10)
    X, y, _, _ = make_topic_corpus(800, n_topics=4, n_words=100, doc_length=50, n_classes=3, C=10.0,
                                   random_state=1)
    return X[:500], X[500:], y[:500], y[500:]


def test_pipeline_configuration_at_equal_k():
    pipe = lda_svm_pipeline(7, alpha=0.5, beta=0.02, random_state=3)
    assert [name for name, _ in pipe.steps] == ["lda", "scale", "svm"]
    lda = pipe.named_steps["lda"]
    assert lda.n_components == 7 and lda.doc_topic_prior == 0.5 and lda.topic_word_prior == 0.02
    assert lda.learning_method == BASELINE_CONFIG["learning_method"] and lda.max_iter == BASELINE_CONFIG["max_iter"]
    assert pipe.named_steps["svm"].C == BASELINE_CONFIG["svm_C"]
    with pytest.raises(ValueError, match="n_topics must be an integer >= 2"):
        lda_svm_pipeline(1)


def test_pipeline_classifies_topic_labeled_documents(corpus):
    X_train, X_test, y_train, y_test = corpus
    pipe = lda_svm_pipeline(4, max_iter=20, random_state=0).fit(X_train, y_train)
    assert pipe.named_steps["lda"].transform(X_test).shape == (300, 4)
    accuracy = np.mean(pipe.predict(X_test) == y_test)
    majority = np.bincount(y_test).max() / len(y_test)  # 0.53
    # Measured 0.963 with 300 test documents (binomial s.e. 0.011); 0.85 is 10 s.e. below,
    # and 0.32 above the majority rate, which a pipeline without topic signal stays near.
    assert majority < 0.6 and accuracy > 0.85


def test_online_curve_bookkeeping(corpus):
    X_train, X_test, y_train, y_test = corpus
    curve = online_lda_svm_curve(X_train, y_train, X_test, y_test, 4, n_passes=2, batch_size=50,
                                 n_checkpoints=5, random_state=1)
    # 2 passes of 500 documents in batches of 50: 20 minibatches, checkpoints log-spaced
    assert curve["n_docs"] == [50, 100, 200, 450, 1000]
    assert len(curve["times"]) == len(curve["accuracy"]) == 5 and min(curve["times"]) > 0
    assert curve["final_accuracy"] == curve["accuracy"][-1]
    majority = np.bincount(y_test).max() / len(y_test)
    # Online VB can stall in a poor local optimum (random_state=0 ends at 0.68), so the bound
    # is loose: 0.1 above the majority rate (measured 0.96 with random_state=1).
    assert curve["final_accuracy"] > majority + 0.1


def test_refit_classifier_on_lda_topics(corpus):
    """MedLDA's refit classifier on the baseline's LDA proportions classifies the corpus."""
    X_train, X_test, y_train, y_test = corpus
    pipe = lda_svm_pipeline(4, max_iter=20, random_state=0).fit(X_train, y_train)
    accuracy = lda_bayes_svm_accuracy(pipe.named_steps["lda"], X_train, y_train, X_test, y_test)
    # same topics as test_pipeline_classifies_topic_labeled_documents (LinearSVC: 0.963);
    # measured 0.987; 0.85 is more than 10 binomial standard errors (0.011 on 300 documents) below
    assert accuracy > 0.85
