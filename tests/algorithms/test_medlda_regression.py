"""Gibbs MedLDA regression (epsilon-insensitive loss, two augmentation variables per
document) against exact answers:

(a) the Gaussian conditional of (eta, b) against grid integration of the augmented density
    (3-D, K = 2 plus the intercept), and the whole update (lambdas then eta, b, iterated)
    against grid integration of the un-augmented posterior ``prior * prod_d psi(y_d | f_d)``;
(b) the augmentation identity: the integral over lambda of each augmented factor is the
    one-sided hinge ``exp(-2c max(0, u))`` (quadrature), the two together give the
    epsilon-insensitive pseudo-likelihood, the conditional of 1/lambda is IG(1/(c|u|), 1),
    and the draws follow it (Kolmogorov–Smirnov);
(c) the token conditional on a tiny corpus: the classification kernel's conditional with the
    regression arguments equals the enumerated joint (exact, rtol 1e-10), and the sweep visits
    the assignments with the enumerated probabilities (statistical);
plus the state's consistency, the divergence check and pinned draws through the driver.
"""
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats as st
from scipy.integrate import quad
from scipy.special import gammaln

from regbayes.algorithms import lda_kernels as kern
from regbayes.algorithms import medlda_regression as reg
from regbayes.algorithms.medlda_gibbs import pad_rows
from regbayes.datasets.topic_corpus import make_topic_regression_corpus
from regbayes.inference import Algorithm, DivergenceError, run
from regbayes.precision import enable_x64

# ---------------------------------------------------------------- (a) the Gaussian conditional
ZBAR = np.array([[0.8, 0.2], [0.3, 0.7], [0.5, 0.5], [0.1, 0.9], [0.6, 0.4]])
Y = np.array([1.2, -0.3, 0.4, -0.9, 0.9])
INV_LAM = np.array([0.7, 2.0, 0.4, 1.3, 0.9])
INV_LAM_STAR = np.array([1.1, 0.3, 2.2, 0.6, 0.5])
C_A, EPS_A, NU_A = 1.4, 0.2, 1.5


def _augmented_log_density(points, inv_lam, inv_lam_star):
    """log of prior(eta) * prod_d exp(-(lam + c zeta)^2 / (2 lam)) exp(-(lam* + c zeta*)^2 / (2 lam*))
    at ``points`` (..., 3) = (eta_1, eta_2, b): the integrand of paper 001's eq. 12 for both
    one-sided hinges, written with lam = 1 / inv_lam (flat prior on b)."""
    c = C_A / 2
    eta, b = points[..., :2], points[..., 2]
    f = eta @ ZBAR.T + b[..., None]
    zeta, zeta_star = Y - f - EPS_A, f - Y - EPS_A
    lam, lam_star = 1 / inv_lam, 1 / inv_lam_star
    value = -((lam + c * zeta) ** 2 / (2 * lam)).sum(-1) - ((lam_star + c * zeta_star) ** 2 / (2 * lam_star)).sum(-1)
    return value - (eta**2).sum(-1) / (2 * NU_A**2)


def _grid_moments(log_density, centre, half_width, n=81):
    """Mean and covariance of exp(log_density) on a 3-D grid (a Gaussian-like density well
    inside the box: the Riemann sum is exact to far below the tolerances used)."""
    axes = [np.linspace(m - h, m + h, n) for m, h in zip(centre, half_width)]
    points = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    logs = log_density(points)
    w = np.exp(logs - logs.max())
    w /= w.sum()
    mean = w @ points
    centred = points - mean
    return mean, (centred * w[:, None]).T @ centred


def test_coef_conditional_equals_grid_integration_of_the_augmented_density():
    with enable_x64():
        s, centred = reg.pseudo_observations(Y, 0.0, INV_LAM, INV_LAM_STAR, EPS_A)
        design, prior = reg.design_matrix(jnp.asarray(ZBAR), jnp.ones(5), NU_A, True)
        mean, chol = reg.coef_conditional(design, jnp.asarray(s), jnp.asarray(centred), C_A, prior)
        mean, chol = np.asarray(mean), np.asarray(chol)
    cov = np.linalg.inv(chol @ chol.T)
    sd = np.sqrt(np.diag(cov))
    grid_mean, grid_cov = _grid_moments(lambda p: _augmented_log_density(p, INV_LAM, INV_LAM_STAR), mean, 9 * sd)
    # the grid spacing is 0.22 sd: the Riemann sum of a Gaussian is exact to ~1e-12 here
    np.testing.assert_allclose(mean, grid_mean, atol=1e-8 * sd.max())
    np.testing.assert_allclose(cov, grid_cov, rtol=1e-7, atol=1e-9 * sd.max() ** 2)


def test_zero_weight_rows_change_nothing_and_no_intercept_drops_the_column():
    with enable_x64():
        s, centred = reg.pseudo_observations(Y, 0.0, INV_LAM, INV_LAM_STAR, EPS_A)
        design, prior = reg.design_matrix(jnp.asarray(ZBAR), jnp.ones(5), NU_A, True)
        mean, chol = reg.coef_conditional(design, jnp.asarray(s), jnp.asarray(centred), C_A, prior)
        mask = np.r_[np.ones(5), np.zeros(3)]
        zbar_padded = np.vstack([ZBAR, np.zeros((3, 2))])
        s_pad, c_pad = reg.pseudo_observations(np.r_[Y, 0, 0, 0], 0.0, mask * np.r_[INV_LAM, 1, 1, 1],
                                               mask * np.r_[INV_LAM_STAR, 1, 1, 1], EPS_A)
        design_pad, _ = reg.design_matrix(jnp.asarray(zbar_padded), jnp.asarray(mask), NU_A, True)
        mean_pad, chol_pad = reg.coef_conditional(design_pad, jnp.asarray(s_pad), jnp.asarray(c_pad), C_A, prior)
        np.testing.assert_allclose(np.asarray(mean_pad), np.asarray(mean), rtol=1e-13)
        np.testing.assert_allclose(np.asarray(chol_pad), np.asarray(chol), rtol=1e-13)
        design0, prior0 = reg.design_matrix(jnp.asarray(ZBAR), jnp.ones(5), NU_A, False)
        assert design0.shape == (5, 2) and prior0.shape == (2,)


def _posterior_log_density(points):
    """The un-augmented posterior of (eta, b): prior * prod_d exp(-C max(0, |y_d - f_d| - eps))."""
    eta, b = points[..., :2], points[..., 2]
    f = eta @ ZBAR.T + b[..., None]
    return -C_A * reg.epsilon_insensitive(Y - f, EPS_A).sum(-1) - (eta**2).sum(-1) / (2 * NU_A**2)


def test_iterated_update_samples_the_epsilon_insensitive_posterior():
    """Steps 2 and 1 alternated with Z fixed form a Gibbs sampler whose (eta, b) marginal is
    ``N(eta; 0, nu^2) prod_d psi(y_d | f_d)``: its mean and standard deviations (grid
    integration, 3-D) against 6000 draws. Tolerance 5 Monte Carlo standard errors, the
    standard error from batch means (30 batches of 200, which absorbs the autocorrelation)."""
    n, rows = 6000, 64
    with enable_x64():
        zbar = pad_rows(ZBAR, rows)
        y = jnp.asarray(pad_rows(Y, rows))
        mask = jnp.asarray(pad_rows(np.ones(5), rows))
        coef, b = jnp.zeros(2), jnp.zeros(())

        def body(carry, seed):
            coef, b = carry
            coef, b, _, _ = reg.augmentation_update(seed, coef, b, zbar, y, mask, C_A, EPS_A, NU_A, fit_intercept=True)
            return (coef, b), jnp.concatenate([coef, b[None]])

        _, draws = jax.lax.scan(body, (coef, b), jnp.arange(n))
        draws = np.asarray(draws)[200:]
    mean, cov = _grid_moments(_posterior_log_density, draws.mean(axis=0), 7 * draws.std(axis=0), n=101)
    batches = draws[: 30 * 193].reshape(30, 193, 3)
    se_mean = batches.mean(axis=1).std(axis=0, ddof=1) / np.sqrt(30)
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * se_mean), (draws.mean(axis=0), mean, se_mean)
    sd = np.sqrt(np.diag(cov))
    se_sd = batches.std(axis=1).std(axis=0, ddof=1) / np.sqrt(30)
    assert np.all(np.abs(draws.std(axis=0) - sd) < 5 * se_sd + 0.01 * sd), (draws.std(axis=0), sd, se_sd)


# ---------------------------------------------------------------- (b) the augmentation
@pytest.mark.parametrize("c", [0.5, 1.5])
@pytest.mark.parametrize("u", [-1.3, -0.2, 0.0, 0.4, 2.0])
def test_each_augmented_factor_integrates_to_its_one_sided_hinge(c, u):
    """int_0^inf (2 pi lam)^(-1/2) exp(-(lam + c u)^2 / (2 lam)) dlam = exp(-2c max(0, u))
    (paper 001, eq. 12), by adaptive quadrature (tolerance 1e-8)."""
    value, _ = quad(lambda lam: np.exp(-((lam + c * u) ** 2) / (2 * lam)) / np.sqrt(2 * np.pi * lam), 0, np.inf,
                    epsabs=1e-12, epsrel=1e-11, limit=200)
    assert value == pytest.approx(np.exp(-2 * c * max(0.0, u)), rel=1e-8)


@pytest.mark.parametrize("delta", [-2.0, -0.35, -0.1, 0.0, 0.25, 0.3, 1.7])
def test_both_factors_give_the_epsilon_insensitive_pseudo_likelihood(delta):
    """The product of the marginals of the two augmented factors, ``zeta = delta - eps`` and
    ``zeta* = -delta - eps``, is ``exp(-C max(0, |delta| - eps))`` with ``C = 2c``."""
    C, eps = 3.0, 0.3
    c = C / 2

    def marginal(u):
        return quad(lambda lam: np.exp(-((lam + c * u) ** 2) / (2 * lam)) / np.sqrt(2 * np.pi * lam), 0, np.inf,
                    epsabs=1e-12, epsrel=1e-11, limit=200)[0]

    value = marginal(delta - eps) * marginal(-delta - eps)
    assert value == pytest.approx(np.exp(-C * max(0.0, abs(delta) - eps)), rel=1e-8)


@pytest.mark.parametrize("u", [-0.8, 0.05, 1.6])
def test_conditional_of_the_inverse_scale_is_inverse_gaussian(u):
    """The density of w = 1/lam proportional to the augmented factor (times the Jacobian
    lam^2 = w^-2) is IG(w; 1/(c|u|), 1): their ratio is constant and both integrate to 1."""
    c = 0.75
    w = np.geomspace(1e-3, 50, 400)
    lam = 1 / w
    augmented = np.exp(-((lam + c * u) ** 2) / (2 * lam)) / np.sqrt(2 * np.pi * lam) / w**2
    total = quad(lambda x: np.exp(-((1 / x + c * u) ** 2) * x / 2) / np.sqrt(2 * np.pi / x) / x**2, 0, np.inf,
                 limit=200)[0]
    ig = st.invgauss(1 / (c * abs(u)), scale=1.0).pdf(w)
    np.testing.assert_allclose(augmented / total, ig, rtol=1e-7, atol=1e-300)


def test_inverse_scale_draws_follow_their_conditionals():
    """20 000 rows with the same prediction: each of 1/lam, 1/lam* against IG(1/(c|zeta|), 1),
    Kolmogorov–Smirnov p > 1e-4 (as in tests/samplers/test_augmentation.py)."""
    C, eps, f, y = 1.2, 0.25, 0.4, 1.1
    n = 20_000
    with enable_x64():
        inv_lam, inv_star = reg.draw_inverse_scales(jax.random.key(3), jnp.full(n, f), jnp.full(n, y), C, eps)
    c = C / 2
    for draws, zeta in ((inv_lam, y - f - eps), (inv_star, f - y - eps)):
        p = st.kstest(np.asarray(draws), st.invgauss(1 / (c * abs(zeta)), scale=1.0).cdf).pvalue
        assert p > 1e-4, (zeta, p)


# ---------------------------------------------------------------- (c) the token conditional
ALPHA, BETA, C, EPS = 0.7, 0.3, 3.0, 0.2
K, V = 3, 4
DOC_PTR = np.array([0, 3, 5], dtype=np.int64)
WORDS = np.array([0, 2, 2, 1, 3], dtype=np.int32)
COEF = np.array([1.5, -0.5, 0.2])
INTERCEPT = 0.3
Y_TINY = np.array([0.9, 0.1])
INV_LAM_TINY = np.array([0.8, 2.5])
INV_STAR_TINY = np.array([1.7, 0.4])
ALL_Z = [np.array(z) for z in itertools.product(range(K), repeat=len(WORDS))]


def _log_joint_lda(z):
    """log p(W, Z | alpha, beta) of collapsed LDA."""
    ndk, nwk, nk = (np.asarray(a) for a in kern.count_tables(DOC_PTR, WORDS, np.asarray(z, np.int32), K, V))
    return gammaln(ndk + ALPHA).sum() + gammaln(nwk + BETA).sum() - gammaln(nk + V * BETA).sum()


def _log_joint(z):
    """log p(W, Z | alpha, beta) + sum_d log of both augmented factors at zbar_d (paper 001,
    eq. 13 with zbar_d for x_i, one factor per one-sided hinge; linear terms included)."""
    ndk = np.asarray(kern.count_tables(DOC_PTR, WORDS, np.asarray(z, np.int32), K, V)[0])
    value = _log_joint_lda(z)
    c = C / 2
    for d in range(2):
        f = COEF @ (ndk[d] / ndk[d].sum()) + INTERCEPT
        zeta, zeta_star = Y_TINY[d] - f - EPS, f - Y_TINY[d] - EPS
        lam, lam_star = 1 / INV_LAM_TINY[d], 1 / INV_STAR_TINY[d]
        value -= (lam + c * zeta) ** 2 / (2 * lam) + (lam_star + c * zeta_star) ** 2 / (2 * lam_star)
    return value


def _exact_conditional(z, i):
    logs = []
    for k in range(K):
        zk = z.copy()
        zk[i] = k
        logs.append(_log_joint(zk))
    p = np.exp(np.array(logs) - max(logs))
    return p / p.sum()


@pytest.mark.parametrize("seed", range(4))
def test_token_conditional_equals_enumerated_ratio(seed):
    """The sweep's O(K) form of the conditional (:func:`document_terms`, then ``g = G n_d^-n``)
    with :func:`sweep_arguments` (label ``c (r - s b)``, ``1/omega = s``, margin 0) against the
    enumerated joint. (The direct form ``augmented_token_weights`` squares the label in its
    quadratic term, which is 1 for the +-1 labels of classification; the sweep's per-document
    terms take the quadratic coefficient ``c^2 / (2 omega N_d^2)`` as is, which is what the
    regression arguments are built for.)"""
    rng = np.random.default_rng(seed)
    z = rng.integers(K, size=len(WORDS))
    y_sign, inv_omega = reg.sweep_arguments(Y_TINY, INTERCEPT, INV_LAM_TINY, INV_STAR_TINY, EPS, C)
    eta = COEF[None, :]
    for i in range(len(WORDS)):
        ndk, nwk, nk = (np.array(a) for a in kern.count_tables(DOC_PTR, WORDS, z.astype(np.int32), K, V))
        d = int(np.searchsorted(DOC_PTR, i, side="right") - 1)
        ndk[d, z[i]] -= 1
        nwk[WORDS[i], z[i]] -= 1
        nk[z[i]] -= 1
        n_d = float(DOC_PTR[d + 1] - DOC_PTR[d])
        exact = _exact_conditional(z, i)
        linear, quadratic, b = np.empty(K), np.empty(K), np.empty(1)
        kern.document_terms(eta, y_sign[d], inv_omega[d], n_d, C, 0.0, linear, quadratic, b)
        g = (eta.T @ np.diag(b) @ eta) @ ndk[d]
        gram = kern.augmented_token_weights_gram(ndk[d], nwk[WORDS[i]], nk, linear, quadratic, g, ALPHA, BETA, V * BETA,
                                                 np.empty(K))
        np.testing.assert_allclose(gram / gram.sum(), exact, rtol=1e-10)


def _tiny_state_and_data():
    data = reg.make_data(DOC_PTR, WORDS, Y_TINY, n_topics=K, n_words=V, alpha=ALPHA, beta=BETA, C=C, epsilon=EPS,
                         prior_scale=1.0, fit_intercept=True)
    z = np.zeros(len(WORDS), np.int32)
    ndk, nwk, nk = kern.count_tables(DOC_PTR, WORDS, z, K, V)
    state = reg.RegressionState(z, ndk, nwk, nk, COEF.copy(), INTERCEPT, INV_LAM_TINY.copy(), INV_STAR_TINY.copy(), 0, 0)
    return state, data


def test_token_sweep_samples_the_enumerated_joint():
    """60 000 sweeps with eta, b and the lambdas fixed visit the 243 assignments with the
    enumerated probabilities: |freq - p| < 5 sd + 1e-3, sd = sqrt(5 p (1 - p) / n) (the factor 5
    bounds the integrated autocorrelation time, as in test_lda_kernels.py)."""
    logs = np.array([_log_joint(z) for z in ALL_Z])
    p = np.exp(logs - logs.max())
    p /= p.sum()
    state, data = _tiny_state_and_data()
    n = 60_000
    freq = np.zeros(len(ALL_Z))
    for t in range(n):
        z, ndk, nwk, nk = reg.token_sweep(t, state, data)
        state = state._replace(z=z, ndk=ndk, nwk=nwk, nk=nk)
        freq[int(np.ravel_multi_index(tuple(z), (K,) * len(WORDS)))] += 1
    freq /= n
    sd = np.sqrt(5 * p * (1 - p) / n)
    assert np.all(np.abs(freq - p) < 5 * sd + 1e-3), np.max(np.abs(freq - p) / (sd + 1e-12))
    # power: the joint without the response (LDA alone) is far from these frequencies
    lda = np.array([_log_joint_lda(z) for z in ALL_Z])
    lda = np.exp(lda - lda.max())
    lda /= lda.sum()
    assert np.max(np.abs(freq - lda) / (5 * sd + 1e-3)) > 3


# ---------------------------------------------------------------- the algorithm on the protocol
@pytest.fixture(scope="module")
def corpus_data():
    corpus = make_topic_regression_corpus(n_docs=60, n_topics=4, n_words=40, doc_length=20, intercept=2.0, random_state=0)
    doc_ptr, words = kern.tokens_from_counts(corpus.X)
    return reg.make_data(doc_ptr, words, corpus.y, n_topics=4, n_words=40, alpha=0.1, beta=0.05, C=5.0, epsilon=0.05,
                         prior_scale=1.0, fit_intercept=True)


def test_step_keeps_the_count_tables_and_the_state_shapes(corpus_data):
    data = corpus_data
    state = reg.init(3, data)
    assert state.intercept == np.median(data.y) and np.all(state.coef == 0)
    for seed in (11, 12):
        state, info = reg.step(seed, state, data)
    ndk, nwk, nk = kern.count_tables(data.doc_ptr, data.words, state.z, 4, data.n_words)
    np.testing.assert_array_equal(state.ndk, ndk)
    np.testing.assert_array_equal(state.nwk, nwk)
    np.testing.assert_array_equal(state.nk, nk)
    D = data.y.shape[0]
    assert state.coef.shape == (4,) and np.all(np.isfinite(state.coef)) and np.isfinite(state.intercept)
    assert state.inv_lam.shape == state.inv_lam_star.shape == (D,)
    assert np.all(state.inv_lam > 0) and np.all(state.inv_lam_star > 0)
    assert info.n_docs == 2 * D and info.n_tokens == 2 * data.words.shape[0] and info.intercept == state.intercept
    zbar = ndk / data.lengths[:, None]
    assert info.loss == pytest.approx(np.mean(np.maximum(0, np.abs(data.y - zbar @ state.coef - state.intercept) - 0.05)))
    np.testing.assert_allclose(reg.topic_word(state, data).sum(axis=1), 1.0)


def test_without_intercept_b_stays_zero(corpus_data):
    data = corpus_data._replace(fit_intercept=False)
    state = reg.init(0, data)
    assert state.intercept == 0.0
    state, info = reg.step(1, state, data)
    assert state.intercept == 0.0 and info.intercept == 0.0


def test_divergence_check_names_C(corpus_data):
    data = corpus_data
    state = reg.init(0, data)
    check = reg.divergence_check(data)
    assert check(state, None) is None
    assert "regression weights diverged" in check(state._replace(coef=np.full(4, 1e4)), None)
    assert "smaller C" in check(state._replace(coef=np.full(4, np.nan)), None)
    assert "smaller C" in check(state._replace(intercept=np.inf), None)


def test_pinned_draws_through_the_driver(corpus_data):
    """Same key, same draws: a 6-iteration run pinned (numba's counter-based streams and
    JAX's threefry keys are the same on every CPU). Tolerance: float64 rounding."""
    data = corpus_data
    algorithm = Algorithm(reg.step, "MedLDARegressor", compile=reg.compile_kernels, check=reg.divergence_check(data))

    def go():
        return run(algorithm, reg.init(1, data), data, jax.random.key(2), n_iter=6, keep=[5],
                   draw=lambda s: (reg.topic_word(s, data), s.coef.copy(), s.intercept))

    result, again = go(), go()
    phi, coef, b = result.draws[0]
    np.testing.assert_array_equal(phi, again.draws[0][0])
    np.testing.assert_array_equal(coef, again.draws[0][1])
    assert set(result.trace) == {"n_docs", "n_tokens", "loss", "intercept"}
    np.testing.assert_allclose(coef, PINNED["coef"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b, PINNED["intercept"], rtol=1e-9)
    np.testing.assert_allclose(phi[:, 0], PINNED["phi_col0"], rtol=1e-9, atol=1e-12)


def test_the_driver_stops_a_diverging_run(corpus_data):
    # a bound of 0 (nu^2 underflows in coef_bound; the sampler's own nu is unchanged): the
    # first draw of eta is beyond it
    data = corpus_data
    algorithm = Algorithm(reg.step, "MedLDARegressor", check=reg.divergence_check(data._replace(prior_scale=1e-300)))
    with pytest.raises(DivergenceError, match="regression weights diverged"):
        run(algorithm, reg.init(0, data), data, jax.random.key(0), n_iter=3)


PINNED = {"coef": [0.9766478617924286, 0.7855498943781254, 0.08699049042126383, 1.7778945875740853],
          "intercept": 1.295720593207994,
          "phi_col0": [0.21696428571428572, 0.00014534883720930232, 0.00472972972972973, 0.016777408637873754]}
