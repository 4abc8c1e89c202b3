"""Warm-up's step adaptation (inference.step_adaptation) and the mixing checks: the
minibatch-noise measurement, the noise-corrected kernels, the column scales, the warning
at the end of warm-up (a bad setting warns, a good one does not), the ESS check and its
NumPy estimator, and a calibrated run resumed from a checkpoint."""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp

from regbayes import BayesianSVC
from regbayes.datasets import make_higgs_like
from regbayes.diagnostics import effective_sample_size
from regbayes.inference import checkpoint as ck
from regbayes.inference import sample
from regbayes.inference import step_adaptation as sa
from regbayes.potentials import SVMData, build_potential, minibatch_noise
from regbayes.potentials.linear_svm import _loss_and_grad
from regbayes.samplers import ssgld, ssgnht
from regbayes.samplers.base import Potential


def _rows(n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = np.hstack([rng.standard_t(2, size=(n, d)), np.ones((n, 1))])
    return X, rng


@pytest.mark.parametrize("dense_T", [True, False])
@pytest.mark.parametrize("multiclass", [False, True])
def test_minibatch_noise_is_the_variance_of_the_whitened_minibatch_subgradient(dense_T, multiclass):
    X, rng = _rows()
    n, width = X.shape
    if multiclass:
        y = rng.integers(0, 3, n)
        eta = rng.normal(size=(3, width))
    else:
        y = rng.choice([-1.0, 1.0], n)
        eta = rng.normal(size=width)
    P = eta.size
    T = np.tril(rng.normal(size=(P, P))) + 3 * np.eye(P) if dense_T else rng.uniform(0.5, 2.0, P)
    # every row's subgradient from the potential's own code; a minibatch of b rows drawn with
    # replacement sums b of them times N / b: covariance (N^2 / b) Cov_i(g_i)
    grads = np.stack([np.asarray(_loss_and_grad(jnp.asarray(eta), jnp.asarray(X[i:i + 1]), jnp.asarray(y[i:i + 1]),
                                                1.5, 1.0)[1]).ravel() for i in range(n)])
    whitened = grads @ T if dense_T else grads * T
    expected = n**2 / 7 * whitened.var(axis=0)
    got = minibatch_noise(X, y, eta, 1.5, 1.0, 7, T)
    np.testing.assert_allclose(got, expected, rtol=1e-5)  # the reference subgradients are float32
    if not dense_T:
        sparse = minibatch_noise(sp.csr_matrix(X), y, eta, 1.5, 1.0, 7, T)
        np.testing.assert_allclose(sparse, expected, rtol=1e-5)
        with pytest.raises(ValueError, match="dense"):
            minibatch_noise(X, y, eta, 1.5, 1.0, 7, T, full=True)
    else:  # the whole covariance, whose eigenvectors the calibration turns onto
        full = minibatch_noise(X, y, eta, 1.5, 1.0, 7, T, full=True)
        np.testing.assert_allclose(full, n**2 / 7 * np.cov(whitened.T, bias=True), rtol=1e-5, atol=1e-6 * np.max(full))


def test_noise_allowance_and_column_scales():
    c = sa.NOISE_FRACTION
    for a0 in (0.08, 0.5):
        x = sa.noise_allowance("adagrad", a0)
        assert a0 * x / (2 * np.sqrt(1 + x)) == pytest.approx(c)  # AdaGrad's step at that noise
    assert 0.3 * sa.noise_allowance("langevin", 0.3) / 2 == pytest.approx(c)
    assert 0.02 * sa.noise_allowance("thermostat", 0.02) / 2 == pytest.approx(c)
    s = sa.column_scales([1.0, 10.0, 40.0], 10.0)
    np.testing.assert_allclose(s, [1.0, 1.0, 0.5])
    np.testing.assert_allclose(sa.scale_columns(np.eye(3) * 2, s), np.diag([2.0, 2.0, 1.0]))
    np.testing.assert_allclose(sa.scale_columns(np.full(3, 2.0), s), [2.0, 2.0, 1.0])


def test_calibration_scales_the_noisy_columns_and_is_deterministic():
    V = np.array([1.0, 100.0, 10_000.0])
    calibration = sa.NoiseCalibration(lambda p, T: V * (1 + 0 * p.sum()), "thermostat", 0.02, 3)
    T, noise = calibration(np.eye(3), np.zeros((2, 4, 3)))
    x = sa.noise_allowance("thermostat", 0.02)  # 50
    np.testing.assert_allclose(np.diag(T) ** 2, np.minimum(1, x / V))
    np.testing.assert_allclose(noise, np.minimum(V, x))  # the noise in the new coordinates, at most x
    np.testing.assert_allclose(calibration.relaxation_steps(), [100.0, 100.0, 10_000.0])  # max(2, 1/s^2) / h
    T2, noise2 = calibration(np.eye(3), np.zeros((2, 4, 3)))
    assert np.array_equal(T, T2) and np.array_equal(noise, noise2)


def test_calibration_of_many_chains_reads_16_evenly_spaced_chains():
    """1,000 chains: the noise and the curvature come from chains 0, 67, ..., 999 alone,
    exactly as a window of those chains gives them; the noise from the last and the first
    draw of each (``NOISE_POSITIONS`` = 32 positions, evenly spaced in the window)."""
    seen = []

    def noise(p, T):
        seen.append(p.copy())
        return 1.0 + p**2

    window = np.random.default_rng(0).normal(size=(1000, 20, 3))
    calibration = sa.NoiseCalibration(noise, "langevin", 0.1, 3, gradient=lambda p: p)
    T, V = calibration(np.eye(3), window)
    assert len(seen) == sa.NOISE_POSITIONS == 32 and sa.CALIBRATION_CHAINS == 16
    chosen = np.linspace(0, 999, 16).round().astype(int)
    reference = sa.NoiseCalibration(lambda p, T: 1.0 + p**2, "langevin", 0.1, 3, gradient=lambda p: p)
    T_ref, V_ref = reference(np.eye(3), window[chosen])
    np.testing.assert_array_equal(T, T_ref)
    np.testing.assert_array_equal(V, V_ref)
    np.testing.assert_array_equal(np.stack(seen), window[chosen][:, [-1, 0]].reshape(-1, 3))


def _gaussian_with_noisy_gradient(noise_sd):
    """U(u) = |u|^2 / 2, whose 'minibatch' subgradient carries N(0, noise_sd^2) noise."""

    def value_and_subgrad(x, data):
        return 0.5 * jnp.sum(x**2), x

    def stochastic(key, x, data):
        return 0.5 * jnp.sum(x**2), x + noise_sd * jax.random.normal(key, x.shape, x.dtype)

    return Potential(value_and_subgrad, stochastic, lambda x, d: 0.0, None, lambda d: 1, 1)


@pytest.mark.parametrize("make", [lambda p, c: ssgld(p, None, noise_correction=c),
                                  lambda p, c: ssgnht(p, noise_correction=c)], ids=["ssgld", "ssgnht"])
def test_noise_correction_restores_the_stationary_variance(make):
    """Gradient noise of variance V = 40 on half of the coordinates, none on the other
    half, step 0.025 (a V / 2 = 0.5 for SSGLD with a = h^2 / 2; h V / 2 = 0.5 for SSGNHT):
    the plain kernels make the noisy half wider than the quiet one (SSGLD widens the noisy
    coordinates, SSGNHT's scalar thermostat also cools the quiet ones); told V, the
    corrected kernels inject less noise there and both halves have the target's variance 1."""
    V = np.r_[np.full(200, 40.0), np.zeros(200)]
    potential = _gaussian_with_noisy_gradient(jnp.asarray(np.sqrt(V), jnp.float32))
    h = np.sqrt(0.05) if make(potential, False).name == "ssgld" else 0.025
    for corrected in (False, True):
        kernel = make(potential, corrected)
        state = kernel.init(jax.random.key(0), jnp.zeros(400), None)
        state = kernel.adapt(state, jnp.ones(400), jnp.asarray(V, jnp.float32)) if corrected else kernel.adapt(state, jnp.ones(400))

        def body(state, key):
            state, _ = kernel.step(key, state, None, h)
            return state, state.position

        _, path = jax.lax.scan(body, state, jax.random.split(jax.random.key(1), 3000))
        noisy, quiet = (float(np.var(np.asarray(path[1000:, half]))) for half in (slice(0, 200), slice(200, 400)))
        if corrected:
            assert noisy == pytest.approx(1.0, abs=0.1) and quiet == pytest.approx(1.0, abs=0.1)
        else:
            assert noisy / quiet > 1.3


def test_correlated_noise_is_corrected_in_its_eigenvectors():
    """U(u) = |u|^2 / 2 whose subgradient carries noise of covariance V = 20 [[1, 0.9],
    [0.9, 1]] (a V's eigenvalues 0.95 and 0.05 at a = 0.025), 400 chains of SSGLD: told
    only V's diagonal, the corrected kernel leaves the off-diagonal noise in, and the draws
    come out correlated (a V_12 / 2 = 0.225 in theory); with the calibration handed the
    whole matrix, T turns onto V's eigenvectors, where V is diagonal, and the draws have the
    target's identity covariance (Monte Carlo error about 0.01)."""
    V = 20.0 * np.array([[1.0, 0.9], [0.9, 1.0]])
    root = jnp.asarray(np.linalg.cholesky(V), jnp.float32)

    def value_and_subgrad(x, data):
        return 0.5 * jnp.sum(x**2), x

    def stochastic(key, x, data):
        return 0.5 * jnp.sum(x**2), x + root @ jax.random.normal(key, x.shape, x.dtype)

    kernel = ssgld(Potential(value_and_subgrad, stochastic, lambda x, d: 0.0, None, lambda d: 1, 1), None,
                   noise_correction=True)
    a = 0.025
    covariances = {}
    for name, noise in (("diagonal", lambda p, T: np.diag(T.T @ V @ T)), ("matrix", lambda p, T: T.T @ V @ T)):
        T, noise_var = sa.NoiseCalibration(noise, "langevin", a, 2)(np.eye(2), np.zeros((2, 4, 2)))

        def chain(key, T=jnp.asarray(T, jnp.float32), noise_var=jnp.asarray(noise_var, jnp.float32)):
            state = kernel.adapt(kernel.init(key, jnp.zeros(2), None), T, noise_var)
            _, path = jax.lax.scan(lambda st, k: (lambda new: (new, new.position))(kernel.step(k, st, None, np.sqrt(2 * a))[0]),
                                   state, jax.random.split(key, 2_000))
            return path[500:]

        draws = np.asarray(jax.vmap(chain)(jax.random.split(jax.random.key(0), 400))).reshape(-1, 2)
        covariances[name] = np.cov(draws.T)
    assert covariances["diagonal"][0, 1] > 0.15
    np.testing.assert_allclose(covariances["matrix"], np.eye(2), atol=0.05)


def test_without_noise_the_corrected_kernel_takes_the_plain_steps():
    potential = build_potential(20)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3)).astype(np.float32)
    data = SVMData(jnp.asarray(X), jnp.asarray(np.sign(X[:, 0])), jnp.float32(1), jnp.float32(1), jnp.float32(1))
    for make in (lambda c: ssgld(potential, "adagrad", noise_correction=c), lambda c: ssgnht(potential, noise_correction=c)):
        ends = []
        for corrected in (False, True):
            kernel = make(corrected)
            state = kernel.init(jax.random.key(0), jnp.zeros(3), data)
            state, _ = jax.lax.scan(lambda st, k: (kernel.step(k, st, data, 0.1)[0], None), state,
                                    jax.random.split(jax.random.key(2), 5))
            ends.append(state.position)
        np.testing.assert_array_equal(*ends)


def test_a_short_warm_up_warns_with_the_n_warmup_that_would_do():
    X, y = make_higgs_like(3000, n_features=8, random_state=0, dtype=np.float64)
    with pytest.warns(sa.MixingWarning, match=r"not yet mixing.*Increase n_warmup to \d+"):
        BayesianSVC(sampler="ssgnht", n_warmup=100, n_draws=10, thin=1, random_state=0).fit(X, y)


def test_a_long_enough_warm_up_does_not_warn_and_stores_its_scales():
    X, y = make_higgs_like(3000, n_features=8, random_state=0, dtype=np.float64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = BayesianSVC(sampler="ssgnht", n_warmup=6000, n_draws=10, thin=1, random_state=0).fit(X, y)
    assert not [w for w in caught if "not yet mixing" in str(w.message)]
    assert clf.step_scale_.shape == (9,) and np.all((clf.step_scale_ > 0) & (clf.step_scale_ <= 1))
    assert clf.noise_correction_


def test_ess_bulk_is_arviz_bulk_ess():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 301, 4))
    x[..., 1:] += 0.3 * np.cumsum(x[..., 1:], axis=1)  # autocorrelated coordinates
    x[..., 3] = 2.0  # a constant coordinate
    np.testing.assert_allclose(sa.ess_bulk(x), effective_sample_size(x, warn=False).pooled, rtol=1e-9)
    np.testing.assert_allclose(sa.ess_bulk(x[:1]), effective_sample_size(x[:1], warn=False).pooled, rtol=1e-9)


def test_correlated_draws_warn_with_the_thinning_that_would_do_and_independent_ones_do_not():
    rng = np.random.default_rng(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sa.MixingWarning)
        assert sa.check_draws(rng.standard_normal((2, 500, 3)), 10, "k") > 0.5
    ar = np.zeros((2, 500, 3))
    for t in range(1, 500):
        ar[:, t] = 0.98 * ar[:, t - 1] + rng.standard_normal((2, 3))
    with pytest.warns(sa.MixingWarning, match=r"Increase thin to \d+"):
        assert sa.check_draws(ar, 10, "k") < 0.2


@pytest.mark.parametrize("stop_after", [2, 6])
def test_a_calibrated_run_resumes_from_its_checkpoint_to_the_same_draws(tmp_path, monkeypatch, stop_after):
    rng = np.random.default_rng(0)
    X = rng.standard_t(3, size=(200, 3)).astype(np.float32)
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=200) > 0, 1.0, -1.0).astype(np.float32)
    data = SVMData(jnp.asarray(X), jnp.asarray(y), jnp.float32(1.0), jnp.float32(1.0), jnp.float32(1.0))
    Xh = X.astype(np.float64)
    kernel = ssgld(build_potential(20), "adagrad", noise_correction=True)
    settings = dict(n_warmup=300, n_draws=60, step_size=0.3, thin=3, n_chunks=4)

    def run(**kw):
        calibration = sa.NoiseCalibration(lambda p, T: minibatch_noise(Xh, y, p, 1.0, 1.0, 20, T), "adagrad", 0.045, 3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sa.MixingWarning)
            return sample(kernel, data, jnp.zeros((2, 3)), jax.random.key(1), calibrate=calibration, **settings, **kw)

    reference = run()
    path = tmp_path / "run.ckpt"
    add_chunk, count = ck.RunCheckpoint.add_chunk, []

    def interrupted(self, *args):
        add_chunk(self, *args)
        count.append(1)
        if len(count) == stop_after:
            raise KeyboardInterrupt

    monkeypatch.setattr(ck.RunCheckpoint, "add_chunk", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run(checkpoint=path, checkpoint_every=0)
    monkeypatch.setattr(ck.RunCheckpoint, "add_chunk", add_chunk)
    resumed = run(checkpoint=path, checkpoint_every=0)
    assert np.array_equal(resumed.positions, reference.positions)
    for a, b in zip(ck.host_leaves(resumed.final_states), ck.host_leaves(reference.final_states)):
        np.testing.assert_array_equal(a, b)
