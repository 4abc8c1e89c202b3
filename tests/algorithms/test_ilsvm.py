"""Algorithm 3 (iLSVM by truncated mean field) on the protocol: the mean-field phase never
lowers its objective, the margin term is the derivative of the linear margin term, the
dual step meets its stated gap, the objective is -ELBO + the hinge risk, the inductive
inference is row by row, and the initial values follow their definitions."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from regbayes.algorithms import ilsvm as A
from regbayes.core import crammer_singer_dual
from regbayes.potentials import ibp_factor as factor
from regbayes.potentials import ibp_sticks as sticks
from regbayes.precision import enable_x64
from regbayes.rng import make_key


def _planted(seed, n=120, d=12, k=3, noise=0.3):
    rng = np.random.default_rng(seed)
    Z = (rng.uniform(size=(n, k)) < 0.5).astype(float)
    W = 2.0 * rng.normal(size=(d, k))
    X = Z @ W.T + noise * rng.normal(size=(n, d))
    y = (Z[:, 0] + 2 * Z[:, 1]).astype(int)  # 4 classes
    return X, y, W


def _start(X, y, n_train, K=6, dtype=np.float64, **kw):
    data = A.ilsvm_data(X, y[:n_train], 4, C=kw.pop("C", 5.0), alpha=1.5, dtype=dtype, **kw)
    state = A.ilsvm_init(make_key(0), data, A.svd_loadings(X, K), noise_variance=0.2, loading_variance=1.5)
    return data, state


def test_mean_field_blocks_never_lower_the_phase_objective():
    """S = ELBO + sum omega (mu_{y_n} - mu_y)^T psi_n with mu, omega fixed rises after
    every block (Z sweep, nu, W), on a seeded run with a margin from a real dual step."""
    with enable_x64():
        X, y, _ = _planted(0)
        data, state = _start(X, y, 80)
        state, _ = A.ilsvm_step(1, state, data)  # one outer iteration: a dual solution and margin
        margin = A.margin_logits(state, data)
        assert float(jnp.abs(margin[:80]).max()) > 0.1 and float(jnp.abs(margin[80:]).max()) == 0.0
        args = (data.X, data.sq_norms)
        psi, gamma, Phi, sigma2 = state.psi, state.gamma, state.Phi, state.sigma2
        noise, s0, alpha = state.noise, state.loading_variance, data.alpha

        surrogate = jax.jit(A.surrogate)
        features, sticks_update = jax.jit(A.update_features), jax.jit(A.update_sticks)
        loadings = jax.jit(lambda psi: factor.update_loadings(factor.data_stats(*args, psi, noise), s0))

        def S(psi, gamma, Phi, sigma2):
            return float(surrogate(*args, psi, gamma, Phi, sigma2, noise, s0, alpha, margin))

        values = [S(psi, gamma, Phi, sigma2)]
        for _ in range(8):
            psi = features(data.X, psi, gamma, Phi, sigma2, noise, margin)
            values.append(S(psi, gamma, Phi, sigma2))
            gamma = sticks_update(psi, gamma, alpha)
            values.append(S(psi, gamma, Phi, sigma2))
            Phi, sigma2 = loadings(psi)
            values.append(S(psi, gamma, Phi, sigma2))
        steps = np.diff(values)
        assert np.all(steps >= -1e-9 * np.abs(values[:-1])), steps
        assert values[-1] > values[0]
        # the compiled phase does the same iterations
        out = A.mean_field_phase(*args, state.psi, state.gamma, state.Phi, state.sigma2, noise, s0, alpha, margin, 8, 0.0)
        np.testing.assert_allclose(out[0], psi, atol=1e-10)
        assert int(out[5]) == 8
        np.testing.assert_allclose(float(out[4]) + float(jnp.sum(margin * out[0])), values[-1], rtol=1e-12)


def test_margin_term_is_the_derivative_of_the_linear_margin_term():
    """margin_nk = d/dpsi_nk sum_y omega_n^y (mu_{y_n} - mu_y)^T psi_n (eq. 33, corrected)."""
    rng = np.random.default_rng(1)
    X, y, _ = _planted(1, n=30)
    data, state = _start(X, y, 20, K=4, dtype=np.float32)
    omega = rng.dirichlet(np.ones(4), 20) * data.C
    coef = rng.normal(size=(4, 4))
    state = state._replace(dual=omega, coef=coef)
    margin = np.asarray(A.margin_logits(state, data))
    linear = lambda psi: sum(omega[n, c] * (coef[y[n]] - coef[c]) @ psi[n] for n in range(20) for c in range(4))  # noqa: E731
    psi = rng.uniform(size=(30, 4))
    for n, k in [(0, 0), (7, 3), (19, 2)]:
        e = np.zeros_like(psi)
        e[n, k] = 1.0
        np.testing.assert_allclose(margin[n, k], linear(psi + e) - linear(psi), rtol=1e-5)
    np.testing.assert_array_equal(margin[20:], 0.0)


def test_dual_tolerance_is_a_tenth_of_the_last_change_within_bounds():
    assert A.dual_tolerance(None, 100.0, 1e-6) == A.DUAL_TOL_START
    assert A.dual_tolerance(-5.0, 1000.0, 1e-6) == pytest.approx(5e-4)  # gap 0.5 = a tenth of |dF| = 5
    assert A.dual_tolerance(1e3, 10.0, 1e-6) == A.DUAL_TOL_START
    assert A.dual_tolerance(1e-9, 10.0, 1e-6) == 1e-6
    assert A.dual_tolerance(1.0, 0.0, 1e-6) == A.DUAL_TOL_START


def test_steps_meet_the_dual_tolerance_and_the_objective_is_minus_elbo_plus_risk():
    with enable_x64():
        X, y, _ = _planted(2)
        data, state = _start(X, y, 90)
        tol, previous = state.next_dual_tol, None
        for t in range(4):
            state, info = A.ilsvm_step(t, state, data)
            features = A.dual_features(state.psi, data)
            scores = features @ state.coef.T
            cost = 1.0 - np.eye(4)[data.labels]
            hinge = np.max(cost + scores - scores[np.arange(90), data.labels][:, None], axis=1)
            primal = 0.5 * np.sum(state.coef**2) + data.C * hinge.sum()
            assert info.gap <= tol * primal
            tol = state.next_dual_tol  # the next step's: a tenth of this step's change of F, as a relative gap
            expected = A.DUAL_TOL_START if previous is None else A.DUAL_GAP_FRACTION * abs(info.objective - previous) / primal
            assert tol == pytest.approx(min(A.DUAL_TOL_START, max(data.dual_tol, expected)), rel=1e-6)
            previous = info.objective
            elbo = float(factor.expected_log_likelihood(data.X, state.psi, state.Phi, state.sigma2, state.noise)
                         - factor.loadings_kl(state.Phi, state.sigma2, state.loading_variance)
                         + sticks.ibp_elbo(state.psi, state.gamma, data.alpha)) - 0.5 * np.sum(state.coef**2)
            np.testing.assert_allclose(info.elbo, elbo, rtol=1e-10)
            np.testing.assert_allclose(info.objective, data.C * hinge.sum() - elbo, rtol=1e-6)
            np.testing.assert_allclose(state.dual.sum(axis=1), data.C, rtol=1e-10)


def test_final_dual_solves_the_last_features_to_the_final_tolerance():
    with enable_x64():
        X, y, _ = _planted(2)
        data, state = _start(X, y, 90, dual_tol=1e-8)
        for t in range(2):
            state, info = A.ilsvm_step(t, state, data)
        assert state.next_dual_tol > data.dual_tol  # the steps so far were inexact
        done, solution = A.final_dual(state, data)
        assert solution.converged and solution.gap <= data.dual_tol * solution.primal_objective
        assert solution.primal_objective <= info.objective + info.elbo + 0.5 * np.sum(state.coef**2)  # the risk fell
        np.testing.assert_array_equal(done.coef, solution.coef)
        np.testing.assert_array_equal(done.psi, state.psi)
        unsupervised = data._replace(C=0.0)
        assert A.final_dual(state, unsupervised) == (state, None)


def test_planted_features_are_found_and_classify():
    """Data generated from the model (3 features, 4 classes from two of them): the active
    features' loadings span every planted loading (a binary feature may be found as its
    complement or inside a combination, which mean field does not always separate: the
    projection of each planted loading on the span keeps > 0.95 of its length), and the
    transductive rows are classified far above chance (0.25)."""
    X, y, W = _planted(3, n=300)
    data = A.ilsvm_data(X, y[:200], 4, C=20.0, alpha=1.0)
    state = A.ilsvm_init(make_key(3), data, A.svd_loadings(X, 8), noise_variance=A.pca_noise_variance(X, 4))
    for t in range(20):
        state, info = A.ilsvm_step(t, state, data)
    Phi = np.asarray(state.Phi, np.float64)
    active = np.asarray(state.psi).mean(axis=0) > A.ACTIVE_THRESHOLD
    basis, _ = np.linalg.qr(Phi[:, active])
    kept = np.linalg.norm(basis.T @ W, axis=0) / np.linalg.norm(W, axis=0)
    assert np.all(kept > 0.95), kept
    assert 3 <= info.n_active <= 8
    psi = np.asarray(state.psi)
    pred = np.argmax(psi[200:] @ state.coef.T, axis=1)
    assert np.mean(pred == y[200:]) > 0.8, np.mean(pred == y[200:])


def test_unsupervised_model_has_no_dual_step():
    with enable_x64():
        X, y, _ = _planted(4)
        data, state = _start(X, y, 0)
        assert not data.supervised
        F0 = A.initial_objective(state, data)
        state, info = A.ilsvm_step(0, state, data)
        assert state.coef is None and info.gap == 0.0 and info.dual_iterations == 0
        np.testing.assert_allclose(info.objective, -info.elbo, rtol=1e-12)
        assert info.objective < F0


def test_variance_updates_raise_the_elbo():
    with enable_x64():
        X, y, _ = _planted(5)
        data, state = _start(X, y, 100, estimate_variances=True)
        fixed = data._replace(estimate_variances=False)
        a, info_fixed = A.ilsvm_step(0, state, fixed)
        b, info = A.ilsvm_step(0, state, data)
        assert info.elbo > info_fixed.elbo
        np.testing.assert_allclose(b.loading_variance, factor.update_loading_variance(a.Phi, a.sigma2), rtol=1e-12)
        np.testing.assert_allclose(b.noise, np.mean(factor.update_noise_variance(data.X, a.psi, a.Phi, a.sigma2)), rtol=1e-12)


def test_inductive_inference_is_row_by_row_and_a_fixed_point():
    with enable_x64():
        X, y, _ = _planted(6)
        data, state = _start(X, y, 100)
        for t in range(3):
            state, _ = A.ilsvm_step(t, state, data)
        Xn = data.X
        args = (state.Phi, state.sigma2, state.gamma, state.noise, 200, 1e-6)
        psi, sweeps = A.infer_features(Xn, *args)
        # the same rows among other rows (same shape: one compiled program) give the same result
        mixed = jnp.concatenate([Xn[60:], Xn[:60]])
        other, _ = A.infer_features(mixed, *args)
        np.testing.assert_allclose(other[60:], psi[:60], atol=1e-10)
        offset = sticks.prior_logit(state.gamma, sticks.stick_bound(state.gamma))
        xphi = Xn @ state.Phi
        sweep = jax.jit(factor.feature_sweep)
        again = sweep(xphi, psi, state.Phi, state.sigma2, state.noise, offset)
        assert float(jnp.abs(again - psi).max()) < 1e-4
        # Algorithm 3's start alone does no better than the kept result
        half = jnp.full_like(psi, 0.5)
        for _ in range(200):
            half = sweep(xphi, half, state.Phi, state.sigma2, state.noise, offset)
        score = factor.row_objective(xphi, psi, state.Phi, state.sigma2, state.noise, offset)
        assert np.all(np.asarray(score) >= np.asarray(factor.row_objective(xphi, half, state.Phi, state.sigma2, state.noise,
                                                                              offset)) - 1e-6)


def test_initialisation():
    X, y, _ = _planted(7, n=50)
    Phi = A.svd_loadings(X, 20)
    Xc = X - X.mean(axis=0)
    _, s, vt = np.linalg.svd(Xc, full_matrices=False)
    np.testing.assert_allclose(np.abs(Phi[:, :12]), np.abs(vt.T * s / np.sqrt(50)), atol=1e-10)
    np.testing.assert_array_equal(Phi[:, 12:], 0.0)
    # probabilistic PCA: the mean of the D - r smallest eigenvalues of X^T X / N
    eig = np.sort(np.linalg.eigvalsh(X.T @ X / 50))
    np.testing.assert_allclose(A.pca_noise_variance(X, 3), eig[:9].mean(), rtol=1e-10)
    assert A.pca_noise_variance(np.zeros((5, 3)), 1) == 1.0
    np.testing.assert_allclose(A.expected_features(2.0, 3), 2.0 * (1 + 1 / 2 + 1 / 3))
    data = A.ilsvm_data(X, y[:40], 4, C=2.0)
    state = A.ilsvm_init(make_key(0), data, Phi, noise_variance=0.5, loading_variance=2.0)
    assert state.psi.dtype == jnp.float32 and state.coef is None
    assert abs(float(state.psi.mean()) - 0.5) < 0.01 and 0.01 < float(state.psi.std()) < 0.05
    np.testing.assert_allclose(state.sigma2, 1 / (1 / 2.0 + np.asarray(state.psi).sum(0) / 0.5), rtol=1e-5)
    np.testing.assert_array_equal(state.gamma, sticks.initial_sticks(20, 1.0))
    elbo = float(factor.expected_log_likelihood(data.X, state.psi, state.Phi, state.sigma2, state.noise)
                 - factor.loadings_kl(state.Phi, state.sigma2, state.loading_variance)
                 + sticks.ibp_elbo(state.psi, state.gamma, data.alpha))
    np.testing.assert_allclose(A.initial_objective(state, data), 2.0 * 40 - elbo, rtol=1e-6)


def test_dual_features_blocks_and_rows_of_tiny_norm():
    """``g_n = [psi_n, x_n (include_inputs), s (intercept)]``; a row whose features are
    all 1e-20 reaches a dual step that stays feasible (the projection is shifted)."""
    X, y, _ = _planted(8, n=20)
    psi = np.full((20, 3), 0.5)
    psi[3] = 1e-20
    np.testing.assert_allclose(A.dual_features(jnp.asarray(psi), A.ilsvm_data(X, y, 4)), psi, rtol=1e-6)
    features = A.dual_features(jnp.asarray(psi), A.ilsvm_data(X, y, 4, include_inputs=True, intercept_scaling=2.0))
    np.testing.assert_allclose(features[:, 3:-1], X)
    np.testing.assert_allclose(features[:, :3], psi, rtol=1e-6)
    np.testing.assert_array_equal(features[:, -1], 2.0)
    solution = crammer_singer_dual(A.dual_features(jnp.asarray(psi), A.ilsvm_data(X, y, 4)), y, 1.0, n_classes=4)
    assert solution.converged
    np.testing.assert_allclose(solution.dual.sum(axis=1), 1.0, rtol=1e-12)


def test_phase_compiles_once_per_shape():
    """Other n_inner and inner_tol values reuse the compiled phase."""
    with enable_x64():
        X, y, _ = _planted(9)
        data, state = _start(X, y, 100)
        A.ilsvm_step(0, state, data)
        before = A.mean_field_phase._cache_size()
        A.ilsvm_step(1, state, data._replace(n_inner=3, inner_tol=1e-2))
        assert A.mean_field_phase._cache_size() == before
