"""Token kernels of MedLDA against brute-force enumeration of the joint on a tiny corpus.

Two levels: (1) the exposed conditional of one token equals the ratio of joint
probabilities over all assignments (exact, rtol 1e-10); (2) the sweep kernels, run long, visit
the assignments of a tiny corpus with the enumerated joint probabilities (statistical,
tolerance from the Monte Carlo standard error, see ``_assert_frequencies``).
"""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import gammaln

from regbayes.algorithms import lda_kernels as kern

ALPHA, BETA, C, MARGIN = 0.7, 0.3, 3.0, 1.0
K, V = 3, 4
# two documents: 3 and 2 tokens
DOC_PTR = np.array([0, 3, 5], dtype=np.int64)
WORDS = np.array([0, 2, 2, 1, 3], dtype=np.int32)
ETA = np.array([[1.5, -0.5, 0.2], [-1.0, 2.0, 0.3]])  # two binary classifiers
Y_SIGN = np.array([[1.0, -1.0], [-1.0, 1.0]])  # (D, M)
INV_OMEGA = np.array([[0.8, 2.5], [1.7, 0.4]])  # (D, M)
PHI = np.array([[0.5, 0.1, 0.3, 0.1], [0.1, 0.6, 0.1, 0.2], [0.25, 0.25, 0.25, 0.25]])


def _doc_of(i):
    return int(np.searchsorted(DOC_PTR, i, side="right") - 1)


def _log_joint_collapsed(z):
    """log p(W, Z | alpha, beta) prod_dm phi(y_dm, omega_dm | zbar_d, eta_m) (paper 001, eq. 13)."""
    ndk, nwk, nk = (np.asarray(a) for a in kern.count_tables(DOC_PTR, WORDS, np.asarray(z, np.int32), K, V))
    value = gammaln(ndk + ALPHA).sum() + gammaln(nwk + BETA).sum() - gammaln(nk + V * BETA).sum()
    c = C / 2
    for d in range(2):
        zbar = ndk[d] / ndk[d].sum()
        zeta = MARGIN - Y_SIGN[d] * (ETA @ zbar)
        value += np.sum(-c * zeta - 0.5 * c**2 * zeta**2 * INV_OMEGA[d])
    return value


def _log_joint_fixed(z, mode, y_class):
    """log prod_d [prod_k Gamma(alpha + n_dk)] prod_n Phi_{z_n w_n} psi(y_d | zbar_d, eta) (eqs. 19-20)."""
    ndk, _, _ = (np.asarray(a) for a in kern.count_tables(DOC_PTR, WORDS, np.asarray(z, np.int32), K, V))
    value = gammaln(ndk + ALPHA).sum() + np.log(PHI[z, WORDS]).sum()
    for d in range(2):
        f = ETA @ (ndk[d] / ndk[d].sum())
        if mode == kern.MODE_BINARY:
            value -= C * np.maximum(0.0, MARGIN - Y_SIGN[d] * f).sum()
        elif mode == kern.MODE_CRAMMER_SINGER:
            y = y_class[d]
            value -= C * max(0.0, MARGIN + np.delete(f, y).max() - f[y])
    return value


ALL_Z = [np.array(z) for z in itertools.product(range(K), repeat=len(WORDS))]


def _exact_conditional(log_joint, z, i):
    logs = []
    for k in range(K):
        zk = z.copy()
        zk[i] = k
        logs.append(log_joint(zk))
    p = np.exp(np.array(logs) - max(logs))
    return p / p.sum()


def _counts_without(z, i):
    ndk, nwk, nk = (np.array(a) for a in kern.count_tables(DOC_PTR, WORDS, z.astype(np.int32), K, V))
    d = _doc_of(i)
    ndk[d, z[i]] -= 1
    nwk[WORDS[i], z[i]] -= 1
    nk[z[i]] -= 1
    f_minus = ETA @ ndk[d]
    n_d = float(DOC_PTR[d + 1] - DOC_PTR[d])
    return d, ndk, nwk, nk, f_minus, n_d


@pytest.mark.parametrize("seed", range(4))
def test_augmented_conditional_equals_enumerated_ratio(seed):
    rng = np.random.default_rng(seed)
    z = rng.integers(K, size=len(WORDS))
    for i in range(len(WORDS)):
        d, ndk, nwk, nk, f_minus, n_d = _counts_without(z, i)
        w = kern.augmented_token_weights(
            ndk[d], nwk[WORDS[i]], nk, n_d, f_minus, ETA, Y_SIGN[d], INV_OMEGA[d], ALPHA, BETA, V * BETA, C, MARGIN, np.empty(K)
        )
        np.testing.assert_allclose(w / w.sum(), _exact_conditional(_log_joint_collapsed, z, i), rtol=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_gram_form_of_the_augmented_conditional_equals_enumerated_ratio(seed):
    """The O(K) form used by the sweep: per-document terms, then ``g = G n_d^-n`` with
    ``G = eta^T diag(b) eta`` (built column by column as the sweep does)."""
    rng = np.random.default_rng(seed)
    z = rng.integers(K, size=len(WORDS))
    M = ETA.shape[0]
    for i in range(len(WORDS)):
        d, ndk, nwk, nk, _, n_d = _counts_without(z, i)
        linear, quadratic, b = np.empty(K), np.empty(K), np.empty(M)
        kern.document_terms(ETA, Y_SIGN[d], INV_OMEGA[d], n_d, C, MARGIN, linear, quadratic, b)
        g = (ETA.T @ np.diag(b) @ ETA) @ ndk[d]
        w = kern.augmented_token_weights_gram(ndk[d], nwk[WORDS[i]], nk, linear, quadratic, g, ALPHA, BETA, V * BETA,
                                              np.empty(K))
        np.testing.assert_allclose(w / w.sum(), _exact_conditional(_log_joint_collapsed, z, i), rtol=1e-10)


@pytest.mark.parametrize("mode", [kern.MODE_BINARY, kern.MODE_CRAMMER_SINGER, kern.MODE_UNSUPERVISED])
@pytest.mark.parametrize("seed", range(3))
def test_fixed_topic_conditional_equals_enumerated_ratio(mode, seed):
    rng = np.random.default_rng(seed)
    z = rng.integers(K, size=len(WORDS))
    y_class = np.array([1, 0])
    for i in range(len(WORDS)):
        d, ndk, _, _, f_minus, n_d = _counts_without(z, i)
        w = kern.fixed_topic_token_weights(
            ndk[d], PHI[:, WORDS[i]].copy(), n_d, f_minus, ETA, Y_SIGN[d], y_class[d], mode, C, MARGIN, ALPHA, np.empty(K)
        )
        exact = _exact_conditional(lambda zz: _log_joint_fixed(zz, mode, y_class), z, i)
        np.testing.assert_allclose(w / w.sum(), exact, rtol=1e-10)


def _hinge_ranges(f_minus, eta, y_sign, y_class, mode, n_d):
    """Per token: (every hinge inactive for every topic, every hinge active for every topic)."""
    if mode == kern.MODE_BINARY:
        zeta = MARGIN - y_sign[:, None] * (f_minus[:, None] + eta) / n_d  # (M, K)
    else:
        others = np.delete(f_minus[:, None] + eta, y_class, axis=0).max(axis=0)
        zeta = (MARGIN + (others - f_minus[y_class] - eta[y_class]) / n_d)[None, :]
    return bool(np.all(zeta <= 0)), bool(np.all(zeta.min(axis=1) >= 0))


@pytest.mark.parametrize("mode", [kern.MODE_BINARY, kern.MODE_CRAMMER_SINGER])
def test_supervised_token_weights_equal_the_exact_conditional(mode):
    """The O(M)-branching form (factor tables, few exponentials) against the exact log-domain
    weights, over random tokens that reach every branch: all hinges inactive, all active,
    partly active, many competing classes, and underflowing products (scale 200, n_d = 1).
    atol 1e-15: probabilities below it are never drawn distinguishably (uniforms have 53 bits)
    and may underflow to 0 on one path only."""
    rng = np.random.default_rng(1)
    n_topics, n_classes = 12, 6
    seen = {"inactive": 0, "active": 0, "mixed": 0}
    for trial in range(600):
        scale = [0.3, 3.0, 30.0, 200.0][trial % 4]
        eta = scale * rng.standard_normal((n_classes, n_topics))
        n_d = float(rng.choice([1, 2, 5, 40, 300]))
        ndk = rng.multinomial(int(n_d) - 1, np.ones(n_topics) / n_topics).astype(float)
        f_minus = eta @ ndk + rng.normal(0, scale, n_classes) * n_d * rng.choice([0.0, 1.0, 5.0])
        y_sign = rng.choice([-1.0, 1.0], n_classes)
        y_class = int(rng.integers(n_classes))
        if trial % 3 == 0:  # a confidently classified document: hinges inactive for most topics
            push = MARGIN * n_d + rng.uniform(0.0, 4.0) * np.abs(eta).max()
            f_minus = f_minus + push * (y_sign if mode == kern.MODE_BINARY else np.eye(n_classes)[y_class])
        phi_w = rng.dirichlet(np.ones(n_topics))
        args = (n_d, f_minus, eta)
        exact = kern.fixed_topic_token_weights(ndk, phi_w, *args, y_sign, y_class, mode, C, MARGIN, ALPHA,
                                               np.empty(n_topics))
        table, known = np.empty((n_classes, n_topics)), np.zeros(n_classes, dtype=bool)
        fast = kern.supervised_token_weights(ndk, phi_w, *args, eta.max(axis=1), eta.min(axis=1), y_sign, y_class,
                                             mode, C, MARGIN, ALPHA, table, known, np.empty(n_topics))
        np.testing.assert_allclose(fast / fast.sum(), exact / exact.sum(), rtol=1e-9, atol=1e-15)
        inactive, active = _hinge_ranges(f_minus, eta, y_sign, y_class, mode, n_d)
        seen["inactive" if inactive else "active" if active else "mixed"] += 1
    assert min(seen.values()) >= 30, seen


def _distribution(log_joint):
    logs = np.array([log_joint(z) for z in ALL_Z])
    p = np.exp(logs - logs.max())
    return p / p.sum()


def _state_index(z):
    return int(np.ravel_multi_index(tuple(z), (K,) * len(WORDS)))


def _assert_frequencies(freq, p, n, tau=5.0):
    """|freq - p| < 5 sd with sd = sqrt(tau p (1 - p) / n): tau = 5 bounds the integrated
    autocorrelation time of the state indicators on this tiny corpus (measured by batch means:
    0.8-1.5), so the check has a false-alarm rate below 1e-4 over all 243 states; plus 1e-3 for
    states of near-zero probability. Power: the unsupervised joint (psi dropped) differs from
    the supervised one by 25-125 times this tolerance in its worst state."""
    sd = np.sqrt(tau * p * (1 - p) / n)
    assert np.all(np.abs(freq - p) < 5 * sd + 1e-3), np.max(np.abs(freq - p) / (sd + 1e-12))


@pytest.mark.parametrize("multiplicative", [True, False])
def test_collapsed_sweep_samples_the_enumerated_joint(multiplicative):
    p = _distribution(_log_joint_collapsed)
    z = np.zeros(len(WORDS), np.int32)
    ndk, nwk, nk = kern.count_tables(DOC_PTR, WORDS, z, K, V)
    n = 60_000
    freq = np.zeros(len(ALL_Z))
    for t in range(n):
        z, ndk, nwk, nk = kern.gibbs_medlda_sweep(DOC_PTR, WORDS, z, ndk, nwk, nk, ETA, Y_SIGN, INV_OMEGA, ALPHA, BETA, C, MARGIN, t,
                                                  multiplicative)
        freq[_state_index(z)] += 1
    _assert_frequencies(freq / n, p, n)


@pytest.mark.parametrize("mode", [kern.MODE_BINARY, kern.MODE_CRAMMER_SINGER])
def test_fixed_topic_sweeps_sample_the_enumerated_joint(mode):
    y_class = np.array([1, 0])
    p = _distribution(lambda zz: _log_joint_fixed(zz, mode, y_class))
    n = 60_000
    z0 = np.zeros(len(WORDS), np.int32)
    _, _, kept, _ = kern.fixed_topic_sweeps(
        DOC_PTR, WORDS, z0, np.ascontiguousarray(PHI.T), ETA, Y_SIGN, y_class, mode, C, MARGIN, ALPHA, n + 10, 10, 5,
        True, np.arange(2), False,
    )
    idx = np.ravel_multi_index(tuple(kept.T), (K,) * len(WORDS))
    _assert_frequencies(np.bincount(idx, minlength=len(ALL_Z)) / n, p, n)


def test_fixed_topic_sweeps_average_counts_and_are_deterministic():
    y_class = np.array([1, 0])
    args = (DOC_PTR, WORDS, np.zeros(5, np.int32), np.ascontiguousarray(PHI.T), ETA, Y_SIGN, y_class, 0, C, MARGIN, ALPHA,
            30, 10, 9, True, np.arange(2), False)
    z1, ndk1, kept1, _ = kern.fixed_topic_sweeps(*args)
    z2, ndk2, kept2, _ = kern.fixed_topic_sweeps(*args)
    z3, ndk3, kept3, _ = kern.fixed_topic_sweeps_serial(*args)
    np.testing.assert_array_equal(kept1, kept2)
    np.testing.assert_array_equal(kept1, kept3)  # one stream per document: threads do not matter
    np.testing.assert_array_equal(z1, kept1[-1])
    np.testing.assert_allclose(ndk1, _indicator_counts(kept1))  # supervised: the drawn counts
    expected = kern.expected_topic_word(WORDS, kept1, K, V)
    np.testing.assert_allclose(expected.sum(), len(WORDS))
    np.testing.assert_allclose(expected.sum(axis=0), np.bincount(WORDS, minlength=V))


def _indicator_counts(kept):
    """E[n_dk] estimated from the recorded draws (the plain Monte Carlo average)."""
    return np.array([[np.mean(kept[:, DOC_PTR[d]:DOC_PTR[d + 1]] == k) * (DOC_PTR[d + 1] - DOC_PTR[d]) for k in range(K)]
                     for d in range(2)])


def test_unsupervised_expected_counts_are_exact_and_rao_blackwellised():
    """Without labels, ``ndk_mean`` estimates E[n_dk] under the enumerated joint with a
    smaller error than the average of the drawn indicators from the same sweeps. 40 runs of
    200 kept sweeps, three sets of 40 seeds: RMS error 0.033-0.039 against 0.072-0.083
    (ratio 0.45-0.47); asserted below 0.7. Bias: the pooled mean of 40 runs (standard error
    about 0.006) was within 0.0024-0.0125 of the exact expectation; asserted within 0.03."""
    y_class = np.array([1, 0])
    p = _distribution(lambda zz: _log_joint_fixed(zz, kern.MODE_UNSUPERVISED, y_class))
    counts = np.array([np.asarray(kern.count_tables(DOC_PTR, WORDS, z.astype(np.int32), K, V)[0]) for z in ALL_Z])
    exact = np.tensordot(p, counts, axes=1)  # (D, K)
    rb, plain = [], []
    for seed in range(40):
        _, ndk, kept, _ = kern.fixed_topic_sweeps_serial(
            DOC_PTR, WORDS, np.zeros(5, np.int32), np.ascontiguousarray(PHI.T), ETA, Y_SIGN, y_class,
            kern.MODE_UNSUPERVISED, C, MARGIN, ALPHA, 220, 20, seed, True, np.arange(2), False,
        )
        rb.append(ndk)
        plain.append(_indicator_counts(kept))
    rb, plain = np.array(rb), np.array(plain)
    np.testing.assert_allclose(rb.mean(axis=0), exact, atol=0.03)
    rms_rb = np.sqrt(np.mean((rb - exact) ** 2))
    rms_plain = np.sqrt(np.mean((plain - exact) ** 2))
    assert rms_rb < 0.7 * rms_plain, (rms_rb, rms_plain)


@pytest.mark.parametrize("mode", [kern.MODE_BINARY, kern.MODE_CRAMMER_SINGER])
def test_soft_topic_word_counts_are_exact_and_rao_blackwellised(mode):
    """SSGRLD's topic-word counts from the tokens' conditionals (``record_probabilities``)
    estimate E[n_kw] under the enumerated joint, labels included, with a smaller error than
    the counts of the drawn topics of the same sweeps (40 runs of 200 kept sweeps; the
    error ratio is asserted below 0.8, the bias of the pooled mean within 0.03)."""
    y_class = np.array([1, 0])
    p = _distribution(lambda zz: _log_joint_fixed(zz, mode, y_class))
    counts = np.array([kern.count_tables(DOC_PTR, WORDS, z.astype(np.int32), K, V)[1].T for z in ALL_Z])
    exact = np.tensordot(p, counts, axes=1)  # (K, V)
    soft, plain = [], []
    for seed in range(40):
        _, _, kept, probabilities = kern.fixed_topic_sweeps_serial(
            DOC_PTR, WORDS, np.zeros(5, np.int32), np.ascontiguousarray(PHI.T), ETA, Y_SIGN, y_class,
            mode, C, MARGIN, ALPHA, 220, 20, seed, True, np.arange(2), False, True,
        )
        np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)
        soft.append(kern.expected_topic_word_soft(WORDS, probabilities, V))
        plain.append(kern.expected_topic_word(WORDS, kept, K, V))
    soft, plain = np.array(soft), np.array(plain)
    np.testing.assert_allclose(soft.mean(axis=0), exact, atol=0.03)
    rms_soft = np.sqrt(np.mean((soft - exact) ** 2))
    rms_plain = np.sqrt(np.mean((plain - exact) ** 2))
    assert rms_soft < 0.8 * rms_plain, (rms_soft, rms_plain)


@pytest.mark.parametrize("eta_scale", [1.0, 3.0])
def test_multiplicative_factor_gives_the_exact_path_draws(eta_scale):
    """The per-token exponential-free update of the supervised factor against the exact
    per-token form, on a corpus of 1- to 150-token documents: same draws, sweep after sweep
    (they differ only by rounding, about 1e-14 relative). The bound on G sends documents
    shorter than about 2 (eta_scale 1) or 16 tokens (eta_scale 3) to the exact path, so both
    branches mix in one sweep."""
    rng = np.random.default_rng(3)
    n_docs, n_topics, n_words, n_classes = 150, 8, 30, 4
    doc_ptr = np.concatenate([[0], np.cumsum(rng.integers(1, 151, n_docs))]).astype(np.int64)
    words = rng.integers(0, n_words, doc_ptr[-1]).astype(np.int32)
    z = rng.integers(0, n_topics, doc_ptr[-1]).astype(np.int32)
    eta = eta_scale * rng.standard_normal((n_classes, n_topics))
    y_sign = rng.choice([-1.0, 1.0], (n_docs, n_classes))
    inv_omega = rng.uniform(0.1, 5.0, (n_docs, n_classes))
    tables = kern.count_tables(doc_ptr, words, z, n_topics, n_words)
    fast = exact = (z, *tables)
    for sweep in range(3):
        fast = kern.gibbs_medlda_sweep(doc_ptr, words, *fast, eta, y_sign, inv_omega, ALPHA, BETA, C, MARGIN, sweep)
        exact = kern.gibbs_medlda_sweep(doc_ptr, words, *exact, eta, y_sign, inv_omega, ALPHA, BETA, C, MARGIN, sweep,
                                        False)
        np.testing.assert_array_equal(fast[0], exact[0])
    assert np.mean(fast[0] != z) > 0.3  # the sweeps moved


def test_sweep_does_not_modify_its_inputs():
    z = np.array([0, 1, 2, 0, 1], np.int32)
    ndk, nwk, nk = kern.count_tables(DOC_PTR, WORDS, z, K, V)
    copies = [a.copy() for a in (z, ndk, nwk, nk)]
    out = kern.gibbs_medlda_sweep(DOC_PTR, WORDS, z, ndk, nwk, nk, ETA, Y_SIGN, INV_OMEGA, ALPHA, BETA, C, MARGIN, 1)
    for a, b in zip((z, ndk, nwk, nk), copies):
        np.testing.assert_array_equal(a, b)
    new_tables = kern.count_tables(DOC_PTR, WORDS, out[0], K, V)
    for a, b in zip(out[1:], new_tables):
        np.testing.assert_array_equal(a, b)


def test_tokens_from_counts_handles_empty_rows():
    X = sp.csr_matrix(np.array([[0, 0, 0], [2, 0, 1], [0, 0, 0], [0, 3, 0], [0, 0, 0]]))
    doc_ptr, words = kern.tokens_from_counts(X)
    np.testing.assert_array_equal(doc_ptr, [0, 0, 3, 3, 6, 6])
    np.testing.assert_array_equal(words, [0, 0, 2, 1, 1, 1])


def test_content_keys_make_inference_independent_of_row_order():
    X = sp.csr_matrix(np.random.default_rng(0).poisson(1.0, size=(6, V)))
    order = np.array([3, 0, 5, 1, 4, 2])
    results = []
    for rows in (np.arange(6), order):
        doc_ptr, words = kern.tokens_from_counts(X[rows])
        keys = kern.document_keys(doc_ptr, words)
        _, ndk, _, _ = kern.fixed_topic_sweeps(
            doc_ptr, words, np.empty(len(words), np.int32), np.ascontiguousarray(PHI.T), np.zeros((0, K)),
            np.zeros((6, 0)), np.zeros(6, np.int64), kern.MODE_UNSUPERVISED, 0.0, 0.0, ALPHA, 6, 2, 11, False, keys, True,
        )
        results.append((rows, ndk))
    (rows_a, ndk_a), (rows_b, ndk_b) = results
    np.testing.assert_array_equal(ndk_a[rows_b], ndk_b)
    assert len(set(kern.document_keys(*kern.tokens_from_counts(X)))) == 6
