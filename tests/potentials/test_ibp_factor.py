"""The linear-Gaussian IBP factor model's ELBO terms and closed-form updates against exact
answers: enumeration over Z, Gaussian identities, and central finite differences of the
ELBO in float64 (every update a stationary point and a maximum of its block, to 1e-5
relative)."""
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from regbayes.potentials import ibp_factor as factor
from regbayes.precision import enable_x64

FD_STEP = 1e-5
FD_RTOL = 1e-5


def _problem(seed, n=7, d=4, k=3, per_row_noise=True):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    psi = rng.uniform(0.05, 0.95, (n, k))
    Phi = rng.normal(size=(d, k))
    sigma2 = rng.uniform(0.1, 0.9, k)
    noise = rng.uniform(0.3, 1.5, n) if per_row_noise else 0.7
    return X, psi, Phi, sigma2, noise


def _elbo_w(X, psi, Phi, sigma2, noise, s0):
    """The ELBO terms that involve q(W): sum_n L_n(q) - KL(q(W) || p(W))."""
    return factor.expected_log_likelihood(X, psi, Phi, sigma2, noise) - factor.loadings_kl(Phi, sigma2, s0)


def _elbo_z(X, psi, Phi, sigma2, noise, offset):
    """The ELBO terms that involve q(Z) with a linear offset (prior logit and margin)."""
    entropy = -jnp.sum(psi * jnp.log(psi) + (1 - psi) * jnp.log(1 - psi))
    return factor.expected_log_likelihood(X, psi, Phi, sigma2, noise) + jnp.sum(offset * psi) + entropy


def _central(f, x, i, h=FD_STEP):
    e = np.zeros_like(x)
    e.flat[i] = h
    return (f(x + e) - f(x - e)) / (2 * h), (f(x + e) - 2 * f(x) + f(x - e)) / h**2


def test_expected_residual_matches_enumeration_over_z():
    """E||x_n - W z_n||^2 = sum_z q(z) (||x_n - Phi z||^2 + D sum_k z_k sigma_k^2), exactly."""
    with enable_x64():
        X, psi, Phi, sigma2, _ = _problem(0)
        d, k = Phi.shape
        exact = np.zeros(len(X))
        for z in itertools.product([0.0, 1.0], repeat=k):
            z = np.array(z)
            weight = np.prod(np.where(z == 1, psi, 1 - psi), axis=1)
            exact += weight * (np.sum((X - Phi @ z) ** 2, axis=1) + d * z @ sigma2)
        got = factor.expected_sq_residual(jnp.asarray(X), jnp.asarray(psi), jnp.asarray(Phi), jnp.asarray(sigma2))
        np.testing.assert_allclose(got, exact, rtol=1e-12)


def test_expected_residual_matches_monte_carlo_over_w_and_z():
    X, psi, Phi, sigma2, _ = _problem(1, n=2)
    rng = np.random.default_rng(2)
    draws = 200_000
    Z = (rng.uniform(size=(draws, *psi.shape)) < psi).astype(float)
    W = Phi + np.sqrt(sigma2) * rng.normal(size=(draws, *Phi.shape))
    values = np.sum((X[None] - np.einsum("sdk,snk->snd", W, Z)) ** 2, axis=2)
    with enable_x64():
        got = np.asarray(factor.expected_sq_residual(*map(jnp.asarray, (X, psi, Phi, sigma2))))
    np.testing.assert_allclose(got, values.mean(0), atol=5 * values.std(0).max() / np.sqrt(draws))


@pytest.mark.parametrize("per_row_noise", [True, False])
def test_statistics_give_the_row_by_row_likelihood(per_row_noise):
    with enable_x64():
        X, psi, Phi, sigma2, noise = map(jnp.asarray, _problem(3, per_row_noise=per_row_noise))
        s = factor.data_stats(X, jnp.sum(X**2, axis=1), psi, noise)
        np.testing.assert_allclose(factor.expected_log_likelihood_stats(s, Phi, sigma2),
                                   factor.expected_log_likelihood(X, psi, Phi, sigma2, noise), rtol=1e-12)


def test_loadings_kl_is_the_gaussian_kl():
    with enable_x64():
        _, _, Phi, sigma2, _ = _problem(4)
        s0 = 1.7
        d = Phi.shape[0]
        entropy = sum(stats.norm(0, np.sqrt(v)).entropy() * d for v in sigma2)
        cross = -np.sum(stats.norm(0, np.sqrt(s0)).logpdf(0.0) - (sigma2[None, :] + Phi**2) / (2 * s0) + 0.0)
        np.testing.assert_allclose(factor.loadings_kl(jnp.asarray(Phi), jnp.asarray(sigma2), s0), cross - entropy, rtol=1e-12)


@pytest.mark.parametrize("per_row_noise", [True, False])
def test_loading_update_is_the_maximum_of_its_block(per_row_noise):
    """eq. 31 (corrected): the gradient of the ELBO in every Phi_dk and sigma_k^2 vanishes
    and every second difference is negative."""
    with enable_x64():
        X, psi, _, _, noise = map(jnp.asarray, _problem(5, per_row_noise=per_row_noise))
        s0 = 1.3
        Phi, sigma2 = factor.update_loadings(factor.data_stats(X, jnp.sum(X**2, axis=1), psi, noise), s0)
        Phi, sigma2 = np.asarray(Phi), np.asarray(sigma2)
        f_phi = jax.jit(lambda P: _elbo_w(X, psi, P, sigma2, noise, s0))
        f_var = jax.jit(lambda v: _elbo_w(X, psi, Phi, v, noise, s0))
        scale = abs(float(f_phi(Phi)))
        for i in range(Phi.size):
            grad, curv = _central(lambda P: float(f_phi(jnp.asarray(P))), Phi, i)
            assert abs(grad) <= FD_RTOL * scale
            assert curv < 0
        for i in range(sigma2.size):
            grad, curv = _central(lambda v: float(f_var(jnp.asarray(v))), sigma2, i)
            assert abs(grad) <= FD_RTOL * scale
            assert curv < 0


def test_loading_update_solves_the_paper_column_equations():
    """The joint solve is the fixed point of eq. 31's column updates (with 1/sigma_0^2)."""
    with enable_x64():
        X, psi, _, _, noise = map(jnp.asarray, _problem(6))
        s0 = 0.6
        Phi, sigma2 = map(np.asarray, factor.update_loadings(factor.data_stats(X, jnp.sum(X**2, axis=1), psi, noise), s0))
        X, psi, noise = map(np.asarray, (X, psi, noise))
        for k in range(Phi.shape[1]):
            others = psi @ Phi.T - np.outer(psi[:, k], Phi[:, k])
            column = sigma2[k] * np.sum((psi[:, k] / noise)[:, None] * (X - others), axis=0)
            np.testing.assert_allclose(Phi[:, k], column, rtol=1e-10)
            np.testing.assert_allclose(sigma2[k], 1 / (1 / s0 + np.sum(psi[:, k] / noise)), rtol=1e-12)


@pytest.mark.parametrize("per_row_noise", [True, False])
def test_feature_logit_gives_the_maximum_in_each_column(per_row_noise):
    """eq. 33: with column k at sigmoid(theta_.k) and the other columns fixed, the ELBO's
    gradient in every psi_nk vanishes and its second difference is negative."""
    with enable_x64():
        X, psi, Phi, sigma2, noise = map(jnp.asarray, _problem(7, per_row_noise=per_row_noise))
        Phi = 0.3 * Phi  # logits of a few units: the optimum stays inside (0, 1) for the differences
        offset = jnp.asarray(np.random.default_rng(8).normal(size=psi.shape))
        f = jax.jit(lambda p: _elbo_z(X, p, Phi, sigma2, noise, offset))
        scale = abs(float(f(psi)))
        for k in range(psi.shape[1]):
            theta = factor.feature_logit(X @ Phi, psi, Phi, sigma2, noise, offset)
            at = np.asarray(psi).copy()
            at[:, k] = np.asarray(jax.nn.sigmoid(theta[:, k]))
            assert np.all((at > 1e-3) & (at < 1 - 1e-3))
            for n in range(at.shape[0]):
                grad, curv = _central(lambda p: float(f(jnp.asarray(p))), at, n * at.shape[1] + k)
                assert abs(grad) <= FD_RTOL * scale
                assert curv < 0


def test_sweep_updates_the_columns_in_turn():
    with enable_x64():
        X, psi, Phi, sigma2, noise = map(jnp.asarray, _problem(9, n=11, k=5))
        offset = jnp.asarray(np.random.default_rng(10).normal(size=psi.shape[1]))  # (K,) broadcasts over rows
        xphi = X @ Phi
        expected = psi
        for k in range(psi.shape[1]):
            theta = factor.feature_logit(xphi, expected, Phi, sigma2, noise, offset)
            expected = expected.at[:, k].set(jax.nn.sigmoid(theta[:, k]))
        np.testing.assert_allclose(factor.feature_sweep(xphi, psi, Phi, sigma2, noise, offset), expected, rtol=1e-12)
        before = float(_elbo_z(X, psi, Phi, sigma2, noise, offset))
        assert float(_elbo_z(X, expected, Phi, sigma2, noise, offset)) >= before


def test_row_objective_ranks_rows_as_the_elbo_does():
    """Changing one row's psi changes the ELBO by the change of that row's objective."""
    with enable_x64():
        X, psi, Phi, sigma2, noise = map(jnp.asarray, _problem(11))
        offset = jnp.asarray(np.random.default_rng(12).normal(size=psi.shape))
        other = psi.at[2].set(jnp.asarray([0.3, 0.9, 0.01]))
        diff = float(_elbo_z(X, other, Phi, sigma2, noise, offset) - _elbo_z(X, psi, Phi, sigma2, noise, offset))
        rows = factor.row_objective(X @ Phi, other, Phi, sigma2, noise, offset) - factor.row_objective(
            X @ Phi, psi, Phi, sigma2, noise, offset)
        np.testing.assert_allclose(np.asarray(rows)[[0, 1, 3, 4, 5, 6]], 0.0, atol=1e-12)
        np.testing.assert_allclose(float(rows[2]), diff, rtol=1e-10)


def test_loading_variance_update_is_the_maximum():
    """eq. 35 maximises -KL(q(W) || p(W)) in sigma_0^2."""
    with enable_x64():
        _, _, Phi, sigma2, _ = map(jnp.asarray, _problem(13))
        s0 = float(factor.update_loading_variance(Phi, sigma2))
        grad, curv = _central(lambda v: -float(factor.loadings_kl(Phi, sigma2, v[0])), np.array([s0]), 0)
        assert abs(grad) <= FD_RTOL * abs(float(factor.loadings_kl(Phi, sigma2, s0)))
        assert curv < 0


def test_noise_variance_update_is_the_maximum_per_row_and_shared():
    """eq. 36 (corrected) maximises L_n(q) in s_n; its mean maximises the shared-noise ELBO."""
    with enable_x64():
        X, psi, Phi, sigma2, _ = map(jnp.asarray, _problem(14))
        s = np.asarray(factor.update_noise_variance(X, psi, Phi, sigma2))
        f = jax.jit(lambda v: factor.expected_log_likelihood(X, psi, Phi, sigma2, v))
        scale = abs(float(f(jnp.asarray(s))))
        for n in range(len(s)):
            grad, curv = _central(lambda v: float(f(jnp.asarray(v))), s, n)
            assert abs(grad) <= FD_RTOL * scale
            assert curv < 0
        shared = np.array([s.mean()])
        grad, curv = _central(lambda v: float(f(v[0])), shared, 0)
        assert abs(grad) <= FD_RTOL * scale
        assert curv < 0


def test_inputs_are_not_modified_and_dtype_is_kept():
    X, psi, Phi, sigma2, noise = _problem(15)
    copies = [a.copy() for a in (X, psi, Phi, sigma2)]
    out = factor.feature_sweep(jnp.asarray(X @ Phi, jnp.float32), jnp.asarray(psi, jnp.float32), jnp.asarray(Phi, jnp.float32),
                               jnp.asarray(sigma2, jnp.float32), jnp.asarray(noise, jnp.float32), 0.0)
    assert out.dtype == jnp.float32
    for a, b in zip((X, psi, Phi, sigma2), copies):
        np.testing.assert_array_equal(a, b)
