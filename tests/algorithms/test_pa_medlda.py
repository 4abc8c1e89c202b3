"""paMedLDA's minibatch step (regbayes.algorithms.pa_medlda) against exact answers: the
fixed-topic kernel's draws for a batch with the classifier fixed, the moments of the
augmented statistics and of the Gaussian draws, the topic weights in closed form."""
import jax
import numpy as np
import pytest
from scipy.special import digamma

from regbayes.algorithms import lda_kernels as kern
from regbayes.algorithms import pa_medlda
from regbayes.algorithms.topic_inference import gather
from regbayes.datasets.topic_corpus import make_topic_corpus
from regbayes.precision import enable_x64


@pytest.fixture(scope="module")
def data():
    X, y, _, _ = make_topic_corpus(n_docs=60, n_topics=3, n_words=40, doc_length=25, random_state=1)
    doc_ptr, words = kern.tokens_from_counts(X)
    y_sign = np.stack([2.0 * y - 1.0, 1.0 - 2.0 * y], axis=1)  # two binary classifiers
    order = np.random.default_rng(0).permutation(60)
    return pa_medlda.make_data(doc_ptr, words, y_sign, n_topics=3, n_words=40, alpha=0.1, beta=0.05, C=4.0,
                               margin=1.0, prior_scale=1.0, batch_size=25, n_inner_iter=1, n_inner_sweeps=3,
                               n_inner_burnin=1, order=order)


@pytest.mark.parametrize("kind", pa_medlda.TOPIC_WEIGHTS)
def test_a_batch_with_the_classifier_fixed_is_the_fixed_topic_sweep(kind, data):
    """One inner iteration: the step's counts are those of the fixed-topic kernel's draws
    (binary-hinge mode, uniform start, documents keyed by index) for the sweep seed the
    step documents, with Phi from the state and the state's eta."""
    data = data._replace(topic_weights=kind)
    rng = np.random.default_rng(3)
    state = pa_medlda.init(0, data)._replace(topic_counts=0.05 + rng.gamma(2.0, 1.0, size=(3, 40)),
                                             eta=rng.normal(0.0, 2.0, size=(2, 3)))
    new, info = pa_medlda.step(11, state, data)
    sweep_seed = int(np.random.default_rng(11).integers(2**31 - 1, size=2)[0])
    docs = data.order[:25]
    doc_ptr_b, _, words_b, _ = gather(data.doc_ptr, data.words, data.words, docs)
    _, _, z_kept, _ = kern.fixed_topic_sweeps(
        doc_ptr_b, words_b, np.zeros(words_b.shape[0], np.int32), pa_medlda.topic_weights(state.topic_counts, kind),
        state.eta, data.y_sign[docs], np.zeros(25, np.int64), kern.MODE_BINARY, data.C, data.margin, data.alpha, 3, 1,
        sweep_seed, True, docs, True)
    expected = kern.expected_topic_word(words_b, z_kept, 3, 40)
    # the same draws: the counts agree up to the rounding of adding them to the state's
    np.testing.assert_allclose(new.topic_counts - state.topic_counts, expected, rtol=0, atol=1e-12)
    assert expected.sum() == words_b.shape[0]
    assert info.n_docs == new.n_docs == 25 and new.iteration == 1
    assert info.n_tokens == words_b.shape[0] * 3
    # the last batch is the remainder: 25 + 25 + 10 documents
    for _ in range(2):
        new, info = pa_medlda.step(12, new, data)
    assert info.n_docs == 60 and data.n_batches == 3


def test_topic_weights_in_closed_form():
    counts = np.array([[0.5, 2.0, 7.5], [3.0, 0.01, 1.0]])
    np.testing.assert_allclose(pa_medlda.topic_weights(counts, "mean"), (counts / counts.sum(1, keepdims=True)).T)
    mean_field = np.exp(digamma(counts) - digamma(counts.sum(1, keepdims=True))).T
    got = pa_medlda.topic_weights(counts, "mean_field")
    # each word's row is rescaled by its largest entry: ratios across topics are exact
    np.testing.assert_allclose(got, mean_field / mean_field.max(axis=1, keepdims=True), rtol=1e-12)


def test_augmented_statistics_have_the_inverse_gaussian_means():
    """E[1/lambda] = 1 / (c' |zeta|) (the inverse Gaussian's mean), so the batch statistics
    average to ``c'^2 sum_d zbar zbar^T / (c' |zeta_d|)`` and ``c' sum_d y_d (1 + c' l /
    (c' |zeta_d|)) zbar_d``; padding rows (y = 0) add nothing. 4000 draws; tolerance 5 Monte
    Carlo standard errors per entry."""
    rng = np.random.default_rng(0)
    zbar = np.vstack([rng.dirichlet(np.ones(3), size=6), np.zeros((2, 3))])
    y = np.vstack([np.where(rng.uniform(size=(6, 2)) < 0.5, 1.0, -1.0), np.zeros((2, 2))])
    eta, C, margin = rng.normal(size=(2, 3)), 3.0, 1.0
    P0, b0 = np.broadcast_to(np.eye(3), (2, 3, 3)).copy(), np.zeros((2, 3))
    with enable_x64():
        draws = [pa_medlda.augmented_update(s, eta, P0, b0, zbar, y, C, margin) for s in range(4000)]
        p_batch = np.array([np.asarray(d[0]) for d in draws])
        b_batch = np.array([np.asarray(d[1]) for d in draws])
    c = C / 2
    inv_mean = 1.0 / (c * np.abs(margin - y * (zbar @ eta.T)))  # (R, M)
    inv_mean[6:] = 0.0
    p_expected = c**2 * np.einsum("rm,rk,rj->mkj", inv_mean, zbar, zbar)
    b_expected = c * np.einsum("rm,rk->mk", y * (1 + c * margin * inv_mean), zbar)
    for sample, expected in ((p_batch, p_expected), (b_batch, b_expected)):
        se = sample.std(axis=0) / np.sqrt(len(sample))
        assert np.all(np.abs(sample.mean(axis=0) - expected) <= 5 * se + 1e-12)


def test_posterior_draws_have_the_gaussian_and_dirichlet_moments():
    P = np.array([[[2.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 3.0]], [[1.0, 0.0, 0.0], [0.0, 4.0, 0.0],
                                                                         [0.0, 0.0, 0.5]]])
    b = np.array([[1.0, -1.0, 0.5], [0.0, 2.0, -1.0]])
    counts = np.array([[2.0, 5.0, 3.0, 10.0], [1.0, 1.0, 1.0, 1.0], [0.5, 0.5, 8.0, 1.0]])
    state = pa_medlda.PAMedLDAState(counts, P, b, np.zeros((2, 3)), 0, 0, 0)
    n = 20000
    phi, eta = pa_medlda.posterior_draws(jax.random.key(0), state, n)
    assert phi.shape == (n, 3, 4) and eta.shape == (n, 2, 3)
    for m in range(2):
        cov = np.linalg.inv(P[m])
        se = np.sqrt(np.diag(cov) / n)
        assert np.all(np.abs(eta[:, m].mean(axis=0) - cov @ b[m]) <= 5 * se)
        np.testing.assert_allclose(np.cov(eta[:, m].T), cov, atol=0.05 * np.abs(cov).max())
    mean = counts / counts.sum(axis=1, keepdims=True)
    var = mean * (1 - mean) / (counts.sum(axis=1, keepdims=True) + 1)
    assert np.all(np.abs(phi.mean(axis=0) - mean) <= 5 * np.sqrt(var / n))
