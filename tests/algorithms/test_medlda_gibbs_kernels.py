"""Gibbs MedLDA's numba kernels (:mod:`regbayes.algorithms.medlda_gibbs_kernels`) against
reference implementations written with NumPy and the conditionals of
:mod:`regbayes.algorithms.lda_conditionals`, fed the same random numbers: same draws.
(The sweep's stationary distribution is checked against enumeration in test_lda_kernels.py.)
"""
import numba
import numpy as np
import pytest

from regbayes.algorithms import lda_conditionals, lda_tokens
from regbayes.algorithms import medlda_gibbs_kernels as gk


def corpus(seed=4, D=40, K=6, V=25, M=3, eta_scale=1.0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 30, D)
    lengths[[2, 7]] = 0  # empty documents
    lengths[5] = 1
    doc_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    words = rng.integers(0, V, doc_ptr[-1]).astype(np.int32)
    z = rng.integers(0, K, doc_ptr[-1]).astype(np.int32)
    eta = eta_scale * rng.standard_normal((M, K))
    y_sign = rng.choice([-1.0, 1.0], (D, M))
    inv_omega = rng.uniform(0.05, 30.0, (D, M))
    return doc_ptr, words, z, eta, y_sign, inv_omega, K, V


def replayed_sweep(doc_ptr, words, z, eta, y_sign, inv_omega, K, V, alpha, beta, C, margin, seed):
    """The sweep token by token with the reference conditional
    :func:`~regbayes.algorithms.lda_conditionals.augmented_token_weights` (and plain
    collapsed LDA for M = 0), drawing by inversion from the kernel's stream ``(seed, 0)``."""
    z = z.copy()
    ndk, nwk, nk = (np.array(a) for a in lda_tokens.count_tables(doc_ptr, words, z, K, V))
    state = np.uint64(lda_tokens._stream(seed, 0))
    out = np.empty(K)
    for d in range(len(doc_ptr) - 1):
        n_d = float(doc_ptr[d + 1] - doc_ptr[d])
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w, old = words[i], z[i]
            ndk[d, old] -= 1
            nwk[w, old] -= 1
            nk[old] -= 1
            weights = lda_conditionals.augmented_token_weights(
                ndk[d], nwk[w], nk, n_d, eta @ ndk[d], eta, y_sign[d], inv_omega[d], alpha, beta, V * beta, C, margin,
                out)
            state, u = lda_tokens._next_uniform(state)
            state = np.uint64(state)  # as numba's uint64, not a Python int
            cumulative = np.cumsum(weights)
            new = min(int(np.searchsorted(cumulative, u * cumulative[-1], side="right")), K - 1)
            z[i] = new
            ndk[d, new] += 1
            nwk[w, new] += 1
            nk[new] += 1
    return z, ndk, nwk, nk


@pytest.mark.parametrize("M, eta_scale, multiplicative", [(0, 1.0, True), (3, 1.0, True), (3, 1.0, False),
                                                          (3, 12.0, True), (1, 3.0, True)])
def test_sweep_draws_as_the_reference_conditional(M, eta_scale, multiplicative):
    """Same draws, token for token, over two sweeps. eta_scale 12 sends most documents to
    the exact path and columns of G beyond the short series to the long one or to exp."""
    doc_ptr, words, z, eta, y_sign, inv_omega, K, V = corpus(M=max(M, 1), eta_scale=eta_scale)
    eta, y_sign, inv_omega = eta[:M], y_sign[:, :M], inv_omega[:, :M]
    tables = lda_tokens.count_tables(doc_ptr, words, z, K, V)
    state, reference = (z, *tables), (z,)
    for sweep in range(2):
        state = gk.gibbs_medlda_sweep(doc_ptr, words, *state, eta, y_sign, inv_omega, 0.3, 0.05, 2.0, 1.0, 11 + sweep,
                                      multiplicative)
        reference = replayed_sweep(doc_ptr, words, reference[0], eta, y_sign, inv_omega, K, V, 0.3, 0.05, 2.0, 1.0,
                                   11 + sweep)
        np.testing.assert_array_equal(state[0], reference[0])
        for a, b in zip(state[1:], reference[1:]):
            assert a.dtype == np.float64
            np.testing.assert_array_equal(a, b)
    assert np.mean(state[0] != z) > 0.3  # the sweeps moved


def test_sweep_accepts_float_counts_and_other_integer_types():
    doc_ptr, words, z, eta, y_sign, inv_omega, K, V = corpus()
    tables = lda_tokens.count_tables(doc_ptr, words, z, K, V)
    a = gk.gibbs_medlda_sweep(doc_ptr, words, z, *tables, eta, y_sign, inv_omega, 0.3, 0.05, 2.0, 1.0, 3)
    b = gk.gibbs_medlda_sweep(doc_ptr.astype(np.int32), words.astype(np.int64), z.astype(np.int64),
                              *(t.astype(np.float32) for t in tables), eta, y_sign, inv_omega, 0.3, 0.05, 2.0, 1.0, 3)
    assert b[0].dtype == np.int64
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("pair, limit", [(gk._exp_pair, gk.SERIES_LIMIT), (gk._exp_pair_short, gk.SHORT_LIMIT)])
def test_exponential_series_are_exact_to_rounding(pair, limit):
    x = np.linspace(-limit, limit, 100_001)
    plus, minus = pair.py_func(x)
    np.testing.assert_allclose(plus, np.exp(x), rtol=5e-16, atol=0)
    np.testing.assert_allclose(minus, np.exp(-x), rtol=5e-16, atol=0)


def reference_classifier_update(seed, eta, ndk, lengths, y_sign, C, margin, prior_scale):
    """Paper 001, eqs. 17-18 with NumPy, from the variates of ``default_rng(seed)`` drawn in
    the kernel's order; the inverse Gaussian as
    :func:`regbayes.samplers.augmentation.inverse_gaussian` (lambda = 1)."""
    D, M = y_sign.shape
    K = ndk.shape[1]
    rng = np.random.default_rng(seed)
    v, uniform, noise = rng.standard_normal((D, M)), rng.random((D, M)), rng.standard_normal((M, K))
    c = C / 2
    zbar = ndk / lengths[:, None]
    zeta = margin - y_sign * (zbar @ eta.T)
    mu = 1.0 / (c * np.maximum(np.abs(zeta), np.finfo(float).tiny ** 0.5))
    w = mu * v**2 / 2
    x1 = mu / (1.0 + w + np.sqrt(w) * np.sqrt(w + 2.0))
    inv_omega = np.where(uniform <= mu / (mu + x1), x1, mu**2 / x1)
    eta_new = np.empty((M, K))
    for m in range(M):
        precision = np.eye(K) / prior_scale**2 + c**2 * (zbar.T * inv_omega[:, m]) @ zbar
        b = c * zbar.T @ (y_sign[:, m] * (1.0 + c * margin * inv_omega[:, m]))
        L = np.linalg.cholesky(precision)
        eta_new[m] = np.linalg.solve(L.T, np.linalg.solve(L, b) + noise[m])
    return eta_new, inv_omega


@pytest.mark.parametrize("seed", [0, 5])
def test_classifier_update_equals_the_numpy_reference(seed):
    doc_ptr, words, z, eta, y_sign, _, K, V = corpus(seed=seed, M=4)
    keep = np.diff(doc_ptr) > 0  # the model drops empty documents before sampling
    ndk = lda_tokens.count_tables(doc_ptr, words, z, K, V)[0][keep]
    lengths = np.diff(doc_ptr)[keep].astype(np.float64)
    ndk[0] = 0.0  # a document on one topic
    ndk[0, 2] = lengths[0]
    got = gk.gibbs_classifier_update(seed, eta, ndk, lengths, y_sign[keep], 1.5, 1.0, 2.0)
    expected = reference_classifier_update(seed, eta, ndk, lengths, y_sign[keep], 1.5, 1.0, 2.0)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("M", [1, 2, 5])
def test_classifier_update_does_not_depend_on_the_threads(M):
    """Two threads (each half of the classifiers) give the one thread's result bit for bit."""
    doc_ptr, words, z, eta, y_sign, _, K, V = corpus(seed=3, M=M)
    keep = np.diff(doc_ptr) > 0
    ndk = lda_tokens.count_tables(doc_ptr, words, z, K, V)[0][keep]
    lengths = np.diff(doc_ptr)[keep].astype(np.float64)
    previous = numba.get_num_threads()
    results = []
    try:
        for n_threads in range(1, numba.config.NUMBA_NUM_THREADS + 1):
            numba.set_num_threads(n_threads)
            results.append(gk.gibbs_classifier_update(7, eta, ndk, lengths, y_sign[keep], 1.5, 1.0, 2.0))
    finally:
        numba.set_num_threads(previous)
    for result in results[1:]:
        for a, b in zip(result, results[0]):
            np.testing.assert_array_equal(a, b)


def test_classifier_update_separates_documents_of_one_topic():
    """Many documents of one topic each, labelled by their topic: eta's draws put the
    positive class's topic above the others."""
    K, D = 3, 300
    topic = np.arange(D) % K
    ndk = np.zeros((D, K))
    ndk[np.arange(D), topic] = 5.0
    lengths = np.full(D, 5.0)
    y_sign = np.where(topic == 0, 1.0, -1.0)[:, None]
    eta = np.array([[1.0, -1.0, -1.0]])  # zeta = 0 for every document
    draws = np.array([gk.gibbs_classifier_update(s, eta, ndk, lengths, y_sign, 1.0, 1.0, 1.0)[0][0]
                      for s in range(50)])
    assert np.all(draws[:, 0] > draws[:, 1]) and np.all(draws[:, 0] > draws[:, 2])
