"""The multinomial-logit expert's potential (regbayes.potentials.multinomial_logit).

Exact references: the log-likelihood against SciPy's ``log_softmax``; the gradient against
central finite differences of the potential (float64, step 1e-6: truncation error
O(h^2 |U'''|) ~ 1e-10, rounding O(eps |U| / h) ~ 1e-9; tolerance 1e-6); the whitening
against the inverse of the potential's Hessian at ``beta = 0`` from ``jax.hessian``
(rounding only: 1e-10).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from scipy.special import log_softmax

from regbayes.potentials import multinomial_logit as mnl
from regbayes.precision import enable_x64


def _rows(seed=0, n=12, D=3, M=3, n_pad=5):
    """``n`` real rows then ``n_pad`` padding rows (large values that must not count)."""
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(size=(n, D)), 50.0 * rng.normal(size=(n_pad, D))])
    y = rng.integers(0, M, n + n_pad)
    valid = np.arange(n + n_pad) < n
    beta = rng.normal(size=(M, D))
    return X, y, valid, beta


def test_value_and_gradient_against_formula_and_finite_differences():
    X, y, valid, beta = _rows()
    nu = 1.7
    with enable_x64():
        data = mnl.MNLRows(jnp.asarray(X), jnp.asarray(y), jnp.asarray(valid), jnp.asarray(nu))
        value_and_grad = jax.jit(mnl.value_and_grad)
        u, g = value_and_grad(jnp.asarray(beta), data)
        direct = 0.5 * np.sum(beta**2) / nu**2 - np.sum(log_softmax(X[valid] @ beta.T, axis=1)[np.arange(valid.sum()), y[valid]])
        np.testing.assert_allclose(float(u), direct, rtol=1e-12)
        h = 1e-6
        fd = np.zeros_like(beta)
        for idx in np.ndindex(beta.shape):
            e = np.zeros_like(beta)
            e[idx] = h
            fd[idx] = (float(value_and_grad(jnp.asarray(beta + e), data)[0])
                       - float(value_and_grad(jnp.asarray(beta - e), data)[0])) / (2 * h)
        np.testing.assert_allclose(np.asarray(g), fd, atol=1e-6)
        terms = np.asarray(mnl.log_lik_terms(jnp.asarray(beta), data))
        expected = np.where(valid, log_softmax(X @ beta.T, axis=1)[np.arange(len(y)), y], 0.0)
        np.testing.assert_allclose(terms, expected, rtol=1e-12, atol=1e-300)
        sub = np.array([0, 3, 14])
        np.testing.assert_allclose(np.asarray(mnl.log_lik_terms(jnp.asarray(beta), data, jnp.asarray(sub))), expected[sub],
                                   rtol=1e-12)
        np.testing.assert_allclose(float(mnl.log_prior(jnp.asarray(beta), data)), -0.5 * np.sum(beta**2) / nu**2, rtol=1e-12)


def test_potential_protocol():
    pot = mnl.component_potential()
    assert pot is mnl.component_potential()  # cached: kernels built on it are shared
    assert pot.batch_size is None
    X, y, valid, beta = _rows(1)
    with enable_x64():
        data = mnl.MNLRows(jnp.asarray(X), jnp.asarray(y), jnp.asarray(valid), jnp.asarray(1.0))
        exact = pot.value_and_subgrad(jnp.asarray(beta), data)
        stochastic = pot.stochastic_value_and_subgrad(jax.random.key(0), jnp.asarray(beta), data)
        for a, b in zip(exact, stochastic):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        assert pot.n_data(data) == len(y)


def test_whitening_is_the_inverse_hessian_at_zero():
    M, D, nu = 3, 2, 0.8
    X, y, valid, _ = _rows(2, n=9, D=D, M=M, n_pad=3)
    Xv = X * valid[:, None]
    factor = mnl.contrast_factors((Xv.T @ Xv)[None], M, nu)[0]
    with enable_x64():
        data = mnl.MNLRows(jnp.asarray(Xv), jnp.asarray(y), jnp.asarray(valid), jnp.asarray(nu))
        hess = jax.jit(jax.hessian(lambda b: mnl.value_and_grad(b, data)[0]))(jnp.zeros((M, D)))
        T = np.asarray(jax.jit(mnl.contrast_whitening, static_argnums=1)(jnp.asarray(factor), M, nu))
    H = np.asarray(hess).reshape(M * D, M * D)
    np.testing.assert_allclose(T @ T.T, np.linalg.inv(H), rtol=1e-10, atol=1e-12)
    S = np.linalg.inv(np.eye(D) / nu**2 + Xv.T @ Xv / M)
    np.testing.assert_allclose(factor @ factor.T, S, rtol=1e-12)
    assert np.allclose(factor, np.tril(factor))
