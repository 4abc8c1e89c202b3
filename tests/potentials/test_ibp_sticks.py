"""The stick-breaking IBP pieces of the mean-field ELBO against exact answers (float64)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, stats

from regbayes.potentials import ibp_sticks as sticks
from regbayes.precision import enable_x64


def _random_problem(seed, k=6, rows=40):
    rng = np.random.default_rng(seed)
    gamma = np.column_stack([rng.uniform(0.5, 6.0, k), rng.uniform(0.5, 6.0, k)])
    psi = rng.uniform(0.01, 0.99, (rows, k))
    return gamma, psi


def test_optimal_q_gives_the_tightest_bound():
    with enable_x64():
        gamma, _ = _random_problem(0)
        gamma = jnp.asarray(gamma)
        tight = sticks.stick_bound(gamma)
        np.testing.assert_allclose(np.asarray(tight.q).sum(axis=1), 1.0, rtol=1e-12)
        assert np.all(np.triu(np.asarray(tight.q), 1) == 0.0)
        np.testing.assert_allclose(sticks.bound_at(gamma, tight.q), tight.bound, rtol=1e-12)
        rng = np.random.default_rng(1)
        for _ in range(20):
            q = np.tril(rng.uniform(size=(6, 6)))
            q /= q.sum(axis=1, keepdims=True)
            assert np.all(np.asarray(sticks.bound_at(gamma, jnp.asarray(q))) <= np.asarray(tight.bound) + 1e-12)


def test_bound_is_below_the_monte_carlo_expectation():
    """``L_k <= E[log(1 - prod_{j<=k} nu_j)]`` (the bound of Appendix D.1), and it is not vacuous."""
    gamma, _ = _random_problem(2, k=5)
    rng = np.random.default_rng(3)
    nu = rng.beta(gamma[:, 0], gamma[:, 1], size=(400_000, 5))
    log_rest = np.log1p(-np.cumprod(nu, axis=1))
    exact = log_rest.mean(axis=0)
    error = 4 * log_rest.std(axis=0) / np.sqrt(len(nu))
    with enable_x64():
        bound = np.asarray(sticks.stick_bound(jnp.asarray(gamma)).bound)
    assert np.all(bound <= exact + error)
    assert np.all(exact - bound < 0.5)  # a bound a few tenths below, as Doshi-Velez (2009) reports


def test_expected_log_pi_matches_monte_carlo():
    gamma, _ = _random_problem(4, k=4)
    rng = np.random.default_rng(5)
    nu = rng.beta(gamma[:, 0], gamma[:, 1], size=(400_000, 4))
    exact = np.log(np.cumprod(nu, axis=1)).mean(axis=0)
    with enable_x64():
        np.testing.assert_allclose(sticks.expected_log_pi(jnp.asarray(gamma)), exact, atol=5e-3)


def test_beta_kl_matches_numerical_integration():
    g1, g2, alpha = 2.5, 0.7, 1.8
    q = stats.beta(g1, g2)
    p = stats.beta(alpha, 1.0)
    exact, _ = integrate.quad(lambda v: q.pdf(v) * (q.logpdf(v) - p.logpdf(v)), 0, 1, limit=200)
    with enable_x64():
        got = float(sticks.sticks_kl(jnp.asarray([[g1, g2]]), alpha))
    assert got == pytest.approx(exact, rel=1e-6)


def _objective_with_q_fixed(gamma, psi, alpha, q):
    """The nu terms of the ELBO with the bound's ``q`` held fixed (what eqs. 26 / 32 maximise)."""
    mass = jnp.sum(psi, axis=0)
    rows = psi.shape[0]
    return jnp.sum(mass * sticks.expected_log_pi(gamma) + (rows - mass) * sticks.bound_at(gamma, q)) - sticks.sticks_kl(gamma, alpha)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_stick_update_is_a_stationary_point_by_finite_differences(seed):
    alpha = 2.0
    with enable_x64():
        gamma, psi = _random_problem(seed)
        gamma, psi = jnp.asarray(gamma), jnp.asarray(psi)
        q = sticks.stick_bound(gamma).q
        new = sticks.update_sticks(jnp.sum(psi, axis=0), psi.shape[0], alpha, q)
        objective = jax.jit(_objective_with_q_fixed)  # one program for every evaluation below
        grad = np.asarray(jax.jit(jax.grad(_objective_with_q_fixed))(new, psi, alpha, q))
        h = 1e-6
        scale = float(jnp.abs(objective(new, psi, alpha, q)))
        for idx in np.ndindex(new.shape):
            step = jnp.zeros_like(new).at[idx].set(h)
            fd = (objective(new + step, psi, alpha, q) - objective(new - step, psi, alpha, q)) / (2 * h)
            assert abs(float(fd)) <= 1e-5 * scale, (idx, float(fd))
            assert abs(grad[idx]) <= 1e-8 * scale
        # and it is a maximum: moving any coordinate lowers the objective
        base = float(objective(new, psi, alpha, q))
        for idx in np.ndindex(new.shape):
            step = jnp.zeros_like(new).at[idx].set(1e-2)
            assert float(objective(new + step, psi, alpha, q)) < base


def test_alternating_q_and_gamma_never_decreases_the_elbo():
    alpha = 3.0
    with enable_x64():
        _, psi = _random_problem(7, k=8, rows=100)
        psi = jnp.asarray(psi)
        gamma = sticks.initial_sticks(8, alpha, jnp.float64)
        elbo, bound_of, update = jax.jit(sticks.ibp_elbo), jax.jit(sticks.stick_bound), jax.jit(sticks.update_sticks, static_argnums=1)
        values = []
        for _ in range(15):
            bound = bound_of(gamma)
            values.append(float(elbo(psi, gamma, alpha, bound)))
            gamma = update(jnp.sum(psi, axis=0), psi.shape[0], alpha, bound.q)
        values.append(float(elbo(psi, gamma, alpha)))
    assert np.all(np.diff(values) >= -1e-9 * abs(values[-1]))
    assert values[-1] > values[0]


def test_prior_logit_is_the_psi_derivative_of_the_elbo():
    """d ELBO / d psi_rk = E[log pi_k] - L_k - logit(psi_rk): the prior part of eqs. 27 / 33."""
    alpha = 1.5
    with enable_x64():
        gamma, psi = _random_problem(8, k=5, rows=7)
        gamma, psi = jnp.asarray(gamma), jnp.asarray(psi)
        bound = sticks.stick_bound(gamma)
        grad = jax.grad(sticks.ibp_elbo)(psi, gamma, alpha, bound)
        expected = sticks.prior_logit(gamma, bound)[None, :] - jnp.log(psi / (1 - psi))
        np.testing.assert_allclose(grad, expected, rtol=1e-10, atol=1e-12)
