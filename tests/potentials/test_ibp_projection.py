"""The IBP projection likelihood of MT-iLSVM against exact answers (float64): expectations
by enumeration of Z, KLs in closed form, and every closed-form update a stationary point
and a maximum of the ELBO in its block by central finite differences."""
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from regbayes.potentials import ibp_projection as proj
from regbayes.potentials import ibp_sticks as sticks
from regbayes.precision import enable_x64

H = 1e-6  # central-difference step (float64)
RTOL = 1e-5  # finite-difference derivative at an update, relative to the gradient before it


def _problem(seed, n=12, d=5, k=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    psi = rng.uniform(0.05, 0.95, (d, k))
    phi = rng.standard_normal((n, k))
    sigma2 = rng.uniform(0.2, 1.5, n)
    lam2 = rng.uniform(0.3, 2.0, n)
    gamma = np.column_stack([rng.uniform(0.5, 4.0, k), rng.uniform(0.5, 4.0, k)])
    return X, psi, phi, sigma2, lam2, gamma


def _binary_configs(d, k):
    for bits in itertools.product([0.0, 1.0], repeat=d * k):
        yield np.asarray(bits).reshape(d, k)


def test_feature_moments_and_expected_log_likelihood_by_enumerating_z():
    """``U = E[Z^T Z]`` and ``E[log N(x | Z w, lambda^2 I)]`` summed over all 2^(DK) matrices Z
    (the expectation over ``w`` given Z in closed form)."""
    X, psi, phi, sigma2, lam2, _ = _problem(0, n=4, d=2, k=3)
    U = np.zeros((3, 3))
    loglik = 0.0
    for Z in _binary_configs(2, 3):
        p = np.prod(np.where(Z == 1, psi, 1 - psi))
        U += p * Z.T @ Z
        resid = X - phi @ Z.T
        per_row = -(np.sum(resid**2, axis=1) + sigma2 * np.trace(Z.T @ Z)) / (2 * lam2) - 0.5 * 2 * np.log(2 * np.pi * lam2)
        loglik += p * per_row.sum()
    with enable_x64():
        np.testing.assert_allclose(proj.feature_moments(jnp.asarray(psi)), U, rtol=1e-12)
        got = proj.expected_log_likelihood(jnp.asarray(X), jnp.asarray(psi), proj.Loadings(jnp.asarray(phi), jnp.asarray(sigma2)),
                                           jnp.asarray(lam2))
    assert float(got) == pytest.approx(loglik, rel=1e-12)


def test_loadings_kl_is_the_gaussian_kl():
    _, _, phi, sigma2, _, _ = _problem(1)
    s0 = 0.7
    k = phi.shape[1]
    # KL(N(m, S) || N(0, s0 I)) = (tr S + m.m) / (2 s0) - k / 2 + (k log s0 - log det S) / 2
    exact = sum((k * s + m @ m) / (2 * s0) - k / 2 + (k * np.log(s0) - k * np.log(s)) / 2 for m, s in zip(phi, sigma2))
    with enable_x64():
        got = proj.loadings_kl(proj.Loadings(jnp.asarray(phi), jnp.asarray(sigma2)), s0)
    assert float(got) == pytest.approx(exact, rel=1e-12)


def _w_objective(phi, sigma2, X, psi, lam2, s0):
    """The ELBO's terms in q(W)."""
    loadings = proj.Loadings(phi, sigma2)
    return proj.expected_log_likelihood(X, psi, loadings, lam2) - proj.loadings_kl(loadings, s0)


def _assert_stationary_max(f, x, x_before, perturbation=1e-2):
    """Every coordinate of ``x``: |central difference| <= RTOL * max|grad f(x_before)|, and a
    step of ``perturbation`` either way lowers f. All points are evaluated in one batch, compiled
    (one program instead of op-by-op dispatch of the vmapped objective)."""
    scale = float(jnp.max(jnp.abs(jax.jit(jax.grad(f))(x_before))))
    eye = jnp.eye(x.size, dtype=x.dtype).reshape((x.size,) + x.shape)
    values = jax.jit(jax.vmap(f))(jnp.concatenate([x[None] + H * eye, x[None] - H * eye,
                                                   x[None] + perturbation * eye, x[None] - perturbation * eye, x[None]]))
    plus, minus, up, down, base = values[:x.size], values[x.size:2 * x.size], values[2 * x.size:3 * x.size], \
        values[3 * x.size:4 * x.size], values[-1]
    fd = np.asarray((plus - minus) / (2 * H))
    assert np.all(np.abs(fd) <= RTOL * scale), (np.max(np.abs(fd)), scale)
    assert np.all(np.asarray(up) < base) and np.all(np.asarray(down) < base)


@pytest.mark.parametrize("seed", [0, 1])
def test_loadings_update_is_the_maximum_of_the_elbo(seed):
    X, psi, phi0, sigma2_0, lam2, _ = _problem(seed)
    s0 = 0.8
    with enable_x64():
        X, psi, lam2 = jnp.asarray(X), jnp.asarray(psi), jnp.asarray(lam2)
        new = proj.update_loadings(X, psi, lam2, s0)
        _assert_stationary_max(lambda p: _w_objective(p, new.sigma2, X, psi, lam2, s0), new.phi, jnp.asarray(phi0))
        _assert_stationary_max(lambda s: _w_objective(new.phi, s, X, psi, lam2, s0), new.sigma2, jnp.asarray(sigma2_0))
        # the joint maximum agrees with the coordinate-wise form of eq. 25 at its fixed point
        U = proj.feature_moments(psi)
        target = X @ psi
        for k in range(psi.shape[1]):
            others = new.phi @ U[:, k] - new.phi[:, k] * U[k, k]
            coordinate = (target[:, k] - others) / lam2 / (1 / s0 + U[k, k] / lam2)
            np.testing.assert_allclose(coordinate, new.phi[:, k], rtol=1e-10, atol=1e-12)


def _psi_objective(psi, X, gamma, loadings, lam2, s0, alpha, extra):
    """The ELBO's terms in q(Z), plus a term linear in psi (the margin term of MT-iLSVM)."""
    return (proj.expected_log_likelihood(X, psi, loadings, lam2) - proj.loadings_kl(loadings, s0)
            + sticks.ibp_elbo(psi, gamma, alpha) + jnp.sum(psi * extra))


@pytest.mark.parametrize("seed", [0, 1])
def test_feature_column_update_is_the_maximum_in_its_column(seed):
    X, psi0, phi, sigma2, lam2, gamma = _problem(seed)
    lam2 = 20.0 * lam2  # moderate logits: the updated psi stays away from 0 and 1, where psi +- H leaves [0, 1]
    alpha, s0 = 2.0, 1.0
    rng = np.random.default_rng(seed + 10)
    with enable_x64():
        X, psi0, lam2, gamma = map(jnp.asarray, (X, psi0, lam2, gamma))
        loadings = proj.Loadings(jnp.asarray(phi), jnp.asarray(sigma2))
        margin = jnp.asarray(rng.standard_normal(psi0.shape))
        extra = sticks.prior_logit(gamma, sticks.stick_bound(gamma))[None, :] + margin
        stats = proj.feature_stats(X, loadings, lam2)
        for k in range(psi0.shape[1]):
            new = proj.update_feature_column(psi0, k, stats, extra)
            np.testing.assert_array_equal(np.delete(np.asarray(new), k, axis=1), np.delete(np.asarray(psi0), k, axis=1))
            assert np.all((new[:, k] > 1e-4) & (new[:, k] < 1 - 1e-4))

            def f(col):
                return _psi_objective(new.at[:, k].set(col), X, gamma, loadings, lam2, s0, alpha, margin)

            _assert_stationary_max(f, new[:, k], psi0[:, k], perturbation=1e-3)


def test_feature_sweep_never_decreases_the_objective():
    X, psi, phi, sigma2, lam2, gamma = _problem(3, n=30, d=8, k=5)
    alpha, s0 = 1.5, 1.0
    with enable_x64():
        X, psi, lam2, gamma = map(jnp.asarray, (X, psi, lam2, gamma))
        loadings = proj.update_loadings(X, psi, lam2, s0)
        margin = jnp.asarray(np.random.default_rng(4).standard_normal(psi.shape))
        extra = sticks.prior_logit(gamma, sticks.stick_bound(gamma))[None, :] + margin
        stats = proj.feature_stats(X, loadings, lam2)
        objective = jax.jit(_psi_objective)
        values = [float(objective(psi, X, gamma, loadings, lam2, s0, alpha, margin))]
        for k in range(psi.shape[1]):
            psi = proj.update_feature_column(psi, k, stats, extra)
            values.append(float(objective(psi, X, gamma, loadings, lam2, s0, alpha, margin)))
        swept = proj.update_features(psi, stats, extra)
        after_sweep = float(objective(swept, X, gamma, loadings, lam2, s0, alpha, margin))
    assert np.all(np.diff(values) >= -1e-10 * abs(values[0]))
    assert after_sweep >= values[-1] - 1e-10 * abs(values[0])


def test_variance_updates_are_the_maxima_of_eqs_29_and_30():
    X, psi, phi, sigma2, lam2_0, _ = _problem(5)
    with enable_x64():
        X, psi = jnp.asarray(X), jnp.asarray(psi)
        loadings = proj.Loadings(jnp.asarray(phi), jnp.asarray(sigma2))
        lam2 = proj.update_noise_variance(X, psi, loadings)
        _assert_stationary_max(lambda v: proj.expected_log_likelihood(X, psi, loadings, v), lam2, jnp.asarray(lam2_0))
        s0 = proj.update_loading_variance(loadings)
        _assert_stationary_max(lambda v: -proj.loadings_kl(loadings, v[0]), jnp.asarray([s0]), jnp.asarray([0.5]))
        # the floor
        floored = proj.update_noise_variance(X, psi, loadings, floor=1e6)
        np.testing.assert_array_equal(floored, 1e6)


def test_functions_do_not_modify_their_inputs():
    X, psi, phi, sigma2, lam2, _ = _problem(6)
    copies = [a.copy() for a in (X, psi, phi, sigma2, lam2)]
    with enable_x64():
        loadings = proj.update_loadings(X, psi, lam2, 1.0)
        stats = proj.feature_stats(X, loadings, lam2)
        proj.update_features(jnp.asarray(psi), stats, jnp.zeros(psi.shape))
    for a, b in zip((X, psi, phi, sigma2, lam2), copies):
        np.testing.assert_array_equal(a, b)
