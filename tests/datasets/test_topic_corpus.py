"""make_topic_corpus: the LDA + max-margin generative model (paper 000, section 4.1.1), and
make_topic_regression_corpus: the same documents with real responses (paper 002, Appendix B).

Given theta_d the tokens of document d are i.i.d. with word probabilities ``theta_d^T phi``,
so word totals have exactly known means and variances; z = (observed - mean) / sd is
approximately N(0, 1) and each check requires |z| < 4.5 (false alarm about 7e-6 per check).
"""
import numpy as np
import pytest
import scipy.sparse as sp

from regbayes.datasets.topic_corpus import (_label_probabilities, make_multilabel_topic_corpus, make_topic_corpus,
                                           make_topic_regression_corpus)

Z_TOL = 4.5


def test_shapes_types_and_simplices():
    X, y, phi, theta = make_topic_corpus(n_docs=200, n_topics=4, n_words=60, doc_length=30, n_classes=3, random_state=0)
    assert sp.isspmatrix_csr(X) and X.shape == (200, 60) and X.dtype == np.int64
    assert y.shape == (200,) and set(np.unique(y)) <= {0, 1, 2}
    np.testing.assert_allclose(phi.sum(axis=1), 1.0)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)
    assert X.min() >= 0 and np.all(np.asarray(X.sum(axis=1)).ravel() >= 1)  # no empty document


def test_same_seed_same_corpus():
    a = make_topic_corpus(n_docs=50, n_topics=3, n_words=40, random_state=7)
    b = make_topic_corpus(n_docs=50, n_topics=3, n_words=40, random_state=7)
    assert (a[0] != b[0]).nnz == 0
    np.testing.assert_array_equal(a[1], b[1])


def test_word_totals_match_the_lda_model():
    X, _, phi, theta = make_topic_corpus(n_docs=400, n_topics=5, n_words=50, doc_length=60, random_state=1)
    lengths = np.asarray(X.sum(axis=1)).ravel()
    p = theta @ phi  # (D, V) word probabilities given theta_d
    mean = (lengths[:, None] * p).sum(axis=0)
    sd = np.sqrt((lengths[:, None] * p * (1 - p)).sum(axis=0))
    z = (np.asarray(X.sum(axis=0)).ravel() - mean) / sd
    assert np.max(np.abs(z)) < Z_TOL


def test_label_probabilities_follow_the_hinge_pseudo_likelihood():
    rng = np.random.default_rng(0)
    zbar = rng.dirichlet(np.ones(3), size=20)
    coef = rng.normal(size=(4, 3))
    p = _label_probabilities(zbar, coef, 2.0, 1.0)
    f = zbar @ coef.T
    for d in range(20):
        psi = [np.exp(-2.0 * max(0.0, 1.0 + max(np.delete(f[d], y)) - f[d, y])) for y in range(4)]
        np.testing.assert_allclose(p[d], np.array(psi) / sum(psi))
    eta = coef[:1]
    p2 = _label_probabilities(zbar, eta, 2.0, 1.0)
    g = zbar @ eta[0]
    plus = np.exp(-2.0 * np.maximum(0, 1.0 - g))
    minus = np.exp(-2.0 * np.maximum(0, 1.0 + g))
    np.testing.assert_allclose(p2[:, 1], plus / (plus + minus))


def test_labels_drawn_with_the_model_probabilities():
    # long documents: zbar_d is within O(1/sqrt(N_d)) of theta_d, so the label frequency is
    # compared with probabilities at theta_d (C = 1 keeps them smooth in zbar)
    X, y, _, theta, coef = make_topic_corpus(
        n_docs=3000, n_topics=3, n_words=20, doc_length=400, C=1.0, random_state=2, return_coef=True
    )
    p = _label_probabilities(theta, coef, 1.0, 1.0)[:, 1]
    z = (np.sum(y == 1) - p.sum()) / np.sqrt(np.sum(p * (1 - p)))
    assert abs(z) < Z_TOL
    assert 0.1 < np.mean(y == 1) < 0.9  # both classes present: a meaningful test


@pytest.mark.parametrize("kwargs", [{"n_topics": 1}, {"n_classes": 1}, {"alpha": 0.0}, {"doc_length": 0.5}, {"n_words": 1}])
def test_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        make_topic_corpus(n_docs=10, **kwargs)


# ---------------------------------------------------------------- make_multilabel_topic_corpus
def test_multilabel_corpus_shapes_and_determinism():
    X, Y, phi, theta, coef = make_multilabel_topic_corpus(n_docs=120, n_topics=4, n_words=50, doc_length=20,
                                                          n_labels=3, random_state=5, return_coef=True)
    assert X.shape == (120, 50) and Y.shape == (120, 3) and coef.shape == (3, 4)
    assert set(np.unique(Y)) <= {0, 1} and Y.dtype == np.int64
    np.testing.assert_allclose(phi.sum(axis=1), 1.0)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)
    again = make_multilabel_topic_corpus(n_docs=120, n_topics=4, n_words=50, doc_length=20, n_labels=3, random_state=5)
    assert (X != again[0]).nnz == 0 and np.array_equal(Y, again[1])


def test_multilabel_labels_drawn_with_the_binary_hinge_probabilities():
    """Each label is the two-class model of make_topic_corpus with its own weights: the
    count of each label is compared with its probabilities at theta_d (long documents,
    C = 1, as in test_labels_drawn_with_the_model_probabilities), one z-score per label."""
    _, Y, _, theta, coef = make_multilabel_topic_corpus(n_docs=3000, n_topics=3, n_words=20, doc_length=400,
                                                        n_labels=3, C=1.0, intercept=-1.0, random_state=2,
                                                        return_coef=True)
    for label in range(3):
        p = _label_probabilities(theta, coef[label:label + 1], 1.0, 1.0)[:, 1]
        z = (Y[:, label].sum() - p.sum()) / np.sqrt(np.sum(p * (1 - p)))
        assert abs(z) < Z_TOL
    assert np.all((Y.mean(axis=0) > 0.05) & (Y.mean(axis=0) < 0.95))


@pytest.mark.parametrize("kwargs, match", [({"n_labels": 1}, "n_labels"), ({"intercept": np.nan}, "intercept"),
                                           ({"C": 0.0}, "C")])
def test_multilabel_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_multilabel_topic_corpus(n_docs=10, **kwargs)


# ---------------------------------------------------------------- make_topic_regression_corpus
def test_regression_corpus_shapes_and_assignments():
    corpus = make_topic_regression_corpus(n_docs=150, n_topics=4, n_words=50, doc_length=25, intercept=1.5, random_state=0)
    X, y, phi, theta, coef, b, zbar = corpus
    assert sp.isspmatrix_csr(X) and X.shape == (150, 50) and X.dtype == np.int64
    assert y.shape == (150,) and coef.shape == (4,) and b == 1.5 and zbar.shape == (150, 4)
    np.testing.assert_allclose(phi.sum(axis=1), 1.0)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)
    np.testing.assert_allclose(zbar.sum(axis=1), 1.0)
    lengths = np.asarray(X.sum(axis=1)).ravel()
    counts = zbar * lengths[:, None]  # n_dk: integers summing to N_d
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-9)
    np.testing.assert_allclose(corpus.oracle_predictions(), zbar @ coef + b)
    again = make_topic_regression_corpus(n_docs=150, n_topics=4, n_words=50, doc_length=25, intercept=1.5, random_state=0)
    assert (again.X != X).nnz == 0
    np.testing.assert_array_equal(again.y, y)


def test_regression_noise_has_the_stated_distribution():
    """``y - (eta^T zbar + b)`` is N(0, sigma^2): its mean and variance within 4.5 standard
    errors (sigma / sqrt(n) and sigma^2 sqrt(2 / n)); with noise 0 the responses are exact."""
    noise, n = 0.3, 4000
    corpus = make_topic_regression_corpus(n_docs=n, n_topics=3, n_words=30, doc_length=10, noise=noise, random_state=1)
    residual = corpus.y - corpus.oracle_predictions()
    assert abs(residual.mean()) < Z_TOL * noise / np.sqrt(n)
    assert abs(residual.var() - noise**2) < Z_TOL * noise**2 * np.sqrt(2 / n)
    exact = make_topic_regression_corpus(n_docs=50, n_topics=3, n_words=30, noise=0.0, random_state=2)
    np.testing.assert_allclose(exact.y, exact.oracle_predictions(), rtol=1e-14)


def test_regression_word_totals_match_the_lda_model():
    corpus = make_topic_regression_corpus(n_docs=400, n_topics=5, n_words=50, doc_length=60, random_state=3)
    lengths = np.asarray(corpus.X.sum(axis=1)).ravel()
    p = corpus.doc_topic @ corpus.topic_word
    mean = (lengths[:, None] * p).sum(axis=0)
    sd = np.sqrt((lengths[:, None] * p * (1 - p)).sum(axis=0))
    assert np.max(np.abs((np.asarray(corpus.X.sum(axis=0)).ravel() - mean) / sd)) < Z_TOL


@pytest.mark.parametrize("kwargs", [{"n_topics": 1}, {"noise": -0.1}, {"prior_scale": 0.0}, {"beta": 0.0},
                                    {"intercept": np.nan}, {"doc_length": 0.5}])
def test_regression_bad_arguments(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        make_topic_regression_corpus(n_docs=10, **kwargs)
