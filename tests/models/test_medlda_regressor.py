"""MedLDARegressor: predictive R^2 on a corpus drawn from supervised-LDA regression against
LDA + support vector regression and against the generator's own predictions, bad input,
inputs left unchanged, determinism, texts, empty documents.

The conditionals themselves are checked against exact answers in
tests/algorithms/test_medlda_regression.py.

Reference points for the R^2 test (corpus below: 300 training and 1000 held-out documents,
K = 5, V = 200, 30 words per document, beta = 0.1, noise sd 0.1; C = 20, eps = 0.05, 150
sweeps), measured for corpus seeds 0-7: the regressor's held-out R^2 0.949-0.980, at 0.989-0.994
of the generator's own R^2 (0.957-0.991); scikit-learn's LDA + the better of LinearSVR and SVR
on its topic proportions scored 0.002-0.011 below it on seeds 0, 1, 3-7 and 0.56 below on seed 2,
where variational LDA stopped in a poor local optimum (R^2 0.40). The margin over LDA + SVR is
small where LDA finds the topics (both come close to the generator), so the assertion is the
task's ">= the baseline" at the one seed, 0 (margin 0.002), not a claimed gap.
"""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from sklearn.base import clone
from sklearn.decomposition import LatentDirichletAllocation
from sklearn.metrics import r2_score
from sklearn.svm import SVR, LinearSVR

from regbayes.datasets.topic_corpus import make_topic_regression_corpus
from regbayes.models.medlda_regressor import MedLDARegressor

K = 5
N_TRAIN = 300
SMALL = dict(n_topics=3, alpha=0.1, beta=0.05, C=5.0, epsilon=0.05, n_iter=20, n_transform_sweeps=4)


@pytest.fixture(scope="module")
def corpus():
    return make_topic_regression_corpus(n_docs=N_TRAIN + 1000, n_topics=K, n_words=200, doc_length=30, alpha=0.1,
                                        beta=0.1, noise=0.1, intercept=1.0, random_state=0)


@pytest.fixture(scope="module")
def small():
    corpus = make_topic_regression_corpus(n_docs=80, n_topics=3, n_words=30, doc_length=15, intercept=2.0, random_state=1)
    return corpus.X, corpus.y


def test_held_out_r2_beats_lda_plus_svr_and_nears_the_generator(corpus):
    X, y = corpus.X, corpus.y
    Xtr, ytr, Xte, yte = X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:]
    model = MedLDARegressor(n_topics=K, alpha=0.1, beta=0.1, C=20.0, epsilon=0.05, n_iter=150, random_state=0).fit(Xtr, ytr)
    r2 = model.score(Xte, yte)
    generator = r2_score(yte, corpus.oracle_predictions()[N_TRAIN:])
    lda = LatentDirichletAllocation(n_components=K, learning_method="batch", max_iter=50, random_state=0).fit(Xtr)
    Ftr, Fte = lda.transform(Xtr), lda.transform(Xte)
    baseline = max(r2_score(yte, svr.fit(Ftr, ytr).predict(Fte))
                   for svr in (LinearSVR(max_iter=100_000, random_state=0), SVR()))
    assert r2 >= baseline, (r2, baseline)
    assert r2 >= 0.9 * generator, (r2, generator)
    # the fitted regression: b + eta_k, the prediction for a document of topic k alone (eta's
    # mean and b are identified only together), against the generator's, topics matched by
    # Hungarian assignment on L1 distance. Measured on seeds 0-3: topics 0.11-0.18 apart (random
    # topics are about 1.7 apart), corners within 0.041 (they span -0.7 to 2.8); asserted 0.3, 0.1.
    cost = np.abs(model.components_[:, None, :] - corpus.topic_word[None, :, :]).sum(axis=-1)
    rows, cols = linear_sum_assignment(cost)
    assert cost[rows, cols].max() < 0.3
    np.testing.assert_allclose((model.coef_ + model.intercept_)[rows], (corpus.coef + corpus.intercept)[cols], atol=0.1)


def test_fitted_attributes_and_trace(small):
    X, y = small
    model = MedLDARegressor(**SMALL, random_state=0).fit(X, y)
    assert model.components_.shape == (3, 30)
    np.testing.assert_allclose(model.components_.sum(axis=1), 1.0)
    assert model.coef_.shape == (3,) and isinstance(model.intercept_, float)
    assert model.coef_samples_.shape == (10, 3) and model.intercept_samples_.shape == (10,)
    np.testing.assert_allclose(model.coef_, model.coef_samples_.mean(axis=0))
    assert model.n_iter_ == 20 and model.n_topics_ == 3 and model.n_features_in_ == 30
    for name in ("iteration", "n_docs", "n_tokens", "loss", "intercept", "wall_time", "tokens_per_second"):
        assert model.trace_[name].shape == (20,)
    assert model.trace_["compile_seconds"] >= 0
    theta = model.transform(X)
    assert theta.shape == (80, 3)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)
    np.testing.assert_allclose(model.predict(X), theta @ model.coef_ + model.intercept_)


def test_without_intercept(small):
    X, y = small
    model = MedLDARegressor(**SMALL, fit_intercept=False).fit(X, y)
    assert model.intercept_ == 0.0 and np.all(model.intercept_samples_ == 0.0)


def test_same_seed_same_model_and_row_order_does_not_matter(small):
    X, y = small
    a = MedLDARegressor(**SMALL, random_state=3).fit(X, y)
    b = clone(a).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    order = np.random.default_rng(0).permutation(X.shape[0])
    np.testing.assert_array_equal(a.predict(X[order]), a.predict(X)[order])
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(a)).predict(X), a.predict(X))


def test_inputs_are_not_modified(small):
    X, y = small
    dense = X.toarray()
    for X_in, y_in in ((X.copy(), y.copy()), (dense.copy(), np.round(y).astype(np.int64)), (dense.astype(float), list(y))):
        X_before = X_in.copy()
        y_before = list(y_in) if isinstance(y_in, list) else y_in.copy()
        model = MedLDARegressor(**SMALL).fit(X_in, y_in)
        model.predict(X_in)
        if sp.issparse(X_in):
            assert (X_in != X_before).nnz == 0
        else:
            np.testing.assert_array_equal(X_in, X_before)
        np.testing.assert_array_equal(np.asarray(y_in), np.asarray(y_before))


def test_texts(small):
    texts = ["cats purr and cats sleep", "dogs bark loudly", "cats and dogs play", "markets rise on earnings",
             "earnings beat markets", "dogs chase cats"] * 3
    y = np.array([1.0, -1.0, 0.0, 3.0, 3.5, -0.5] * 3)
    model = MedLDARegressor(**SMALL).fit(texts, y)
    assert model.predict(texts).shape == (18,) and hasattr(model, "vectorizer_")
    with pytest.raises(ValueError, match="fitted on raw texts"):
        model.predict(small[0])


def test_empty_documents_dropped_from_training_and_predicted_at_the_prior_mean(small):
    X, y = small
    X = sp.vstack([X, sp.csr_matrix((2, X.shape[1]), dtype=np.int64)]).tocsr()
    y = np.r_[y, 50.0, -50.0]  # outlying responses of the empty documents would move b if used
    with pytest.warns(UserWarning, match="2 empty documents"):
        model = MedLDARegressor(**SMALL).fit(X, y)
    reference = MedLDARegressor(**SMALL).fit(X[:-2], y[:-2])
    np.testing.assert_array_equal(model.coef_, reference.coef_)
    np.testing.assert_allclose(model.predict(X[-2:]), np.full(2, model.coef_.mean() + model.intercept_))


@pytest.mark.parametrize("y_bad,match", [
    (np.nan, "NaN or infinity"),
    (np.inf, "NaN or infinity"),
    ("text", "real numbers"),
])
def test_bad_responses(small, y_bad, match):
    X, y = small
    y = y.astype(object)
    y[3] = y_bad
    with pytest.raises(ValueError, match=match):
        MedLDARegressor(**SMALL).fit(X, y)


def test_bad_shapes_and_counts(small):
    X, y = small
    with pytest.raises(ValueError, match="80 documents but y has 79 responses"):
        MedLDARegressor(**SMALL).fit(X, y[:-1])
    with pytest.raises(ValueError, match="requires y"):
        MedLDARegressor(**SMALL).fit(X, None)
    with pytest.raises(ValueError, match="negative counts"):
        MedLDARegressor(**SMALL).fit(-X.toarray(), y)
    with pytest.raises(ValueError, match="non-integer counts"):
        MedLDARegressor(**SMALL).fit(X.toarray() + 0.5, y)
    model = MedLDARegressor(**SMALL).fit(X, y)
    with pytest.raises(ValueError, match="30 features"):
        model.predict(X[:, :10])


@pytest.mark.parametrize("param,value,match", [
    ("epsilon", -0.1, "'epsilon' parameter"),
    ("C", 0.0, "'C' parameter"),
    ("C", -1.0, "'C' parameter"),
    ("prior_scale", 0.0, "'prior_scale' parameter"),
    ("n_topics", 1, "'n_topics' parameter"),
    ("fit_intercept", "yes", "'fit_intercept' parameter"),
])
def test_bad_parameters_are_named(small, param, value, match):
    X, y = small
    with pytest.raises(ValueError, match=match):
        MedLDARegressor(**{**SMALL, param: value}).fit(X, y)
