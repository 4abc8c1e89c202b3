"""One mixture component's SVM potential (regbayes.potentials.component_svm).

Exact references: the potential and subgradient of the component's rows alone (linear_svm
on those rows); the minibatch estimate's mean over 4000 keys against the exact value
(tolerance 4.5 standard errors of that mean); the whitening factor against the matrix
``(I / nu^2 + C n_k E_k[x~ x~^T])^{-1}`` built from the NIW posterior moments directly.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from regbayes.potentials import linear_svm, niw
from regbayes.potentials.component_svm import (
    ComponentRows,
    component_potential,
    component_whitening,
    group_members,
)
from regbayes.precision import enable_x64


def _setup(seed=0):
    rng = np.random.default_rng(seed)
    n, D = 30, 3
    X = rng.normal(size=(n, D))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    z = rng.integers(0, 3, size=n)
    counts = np.bincount(z, minlength=4)
    members, starts = group_members(z, counts)
    return X, y, z, counts, members, starts


def test_group_members():
    _, _, z, counts, members, starts = _setup()
    for k in range(4):
        rows = members[starts[k] : starts[k] + counts[k]]
        np.testing.assert_array_equal(rows, np.flatnonzero(z == k))  # stable: in row order


def _rows(X, y, members, starts, counts, k):
    return ComponentRows(jnp.asarray(X), jnp.asarray(y), jnp.asarray(members), jnp.asarray(starts[k]),
                         jnp.asarray(counts[k]), jnp.asarray(1.3), jnp.asarray(0.8), jnp.asarray(1.7))


def test_exact_potential_is_the_members_svm_potential():
    X, y, z, counts, members, starts = _setup()
    with enable_x64():
        potential = component_potential(4)
        eta = jnp.asarray([0.3, -0.7, 0.2])
        for k in range(3):
            data = _rows(X, y, members, starts, counts, k)
            own = linear_svm.SVMData(jnp.asarray(X[z == k]), jnp.asarray(y[z == k]), data.C, data.margin,
                                     data.prior_scale)
            u, g = potential.value_and_subgrad(eta, data)
            u_ref, g_ref = linear_svm.value_and_subgrad(eta, own)
            np.testing.assert_allclose(float(u), float(u_ref), rtol=1e-12)
            np.testing.assert_allclose(np.asarray(g), np.asarray(g_ref), rtol=1e-12, atol=1e-14)
            terms = np.asarray(potential.log_lik_terms(eta, data, jnp.arange(len(members))))
            inside = np.zeros(len(members), bool)
            inside[starts[k] : starts[k] + counts[k]] = True
            assert np.all(terms[~inside] == 0.0)
            np.testing.assert_allclose(terms[inside].sum(), -(float(u_ref) + float(potential.log_prior(eta, data))),
                                       rtol=1e-12)


def test_minibatch_estimate_is_unbiased():
    X, y, _, counts, members, starts = _setup(1)
    with enable_x64():
        potential = component_potential(3)
        eta = jnp.asarray([0.5, 0.1, -0.4])
        data = _rows(X, y, members, starts, counts, 0)
        u, g = potential.value_and_subgrad(eta, data)
        keys = jax.random.split(jax.random.key(2), 4000)
        us, gs = jax.vmap(lambda k: potential.stochastic_value_and_subgrad(k, eta, data))(keys)
    us, gs = np.asarray(us), np.asarray(gs)
    assert abs(us.mean() - float(u)) <= 4.5 * us.std() / np.sqrt(len(us))
    se = gs.std(axis=0) / np.sqrt(len(gs))
    assert np.all(np.abs(gs.mean(axis=0) - np.asarray(g)) <= 4.5 * se + 1e-12)


def test_whitening_matches_the_gaussian_posterior_covariance():
    rng = np.random.default_rng(4)
    d = 2
    X = rng.normal(size=(40, d)) + [3.0, -1.0]
    z = np.repeat([0, 2], 20)
    prior = niw.niw_prior(np.zeros(d), 0.5, d + 3.0, 0.4 * np.eye(d))
    counts, means, chols = niw.component_posteriors(prior, X, z, 3)
    offset, s, C, nu = X.mean(axis=0), 2.5, 0.7, 1.3
    T = component_whitening(counts, means, chols, prior.dof, offset, s, C, nu)
    assert T.shape == (3, d + 1, d + 1)
    np.testing.assert_allclose(T[1], nu * np.eye(d + 1))  # empty slot
    for k in (0, 2):
        post = niw.NIW(means[k], prior.kappa + counts[k], prior.dof + counts[k], chols[k])
        cov = post.scale / (post.dof - d - 1)
        a = np.append(means[k] - offset, s)
        second = np.outer(a, a)
        second[:d, :d] += cov
        expected = np.linalg.inv(np.eye(d + 1) / nu**2 + C * counts[k] * second)
        np.testing.assert_allclose(T[k] @ T[k].T, expected, rtol=1e-10)
        np.testing.assert_array_equal(np.triu(T[k], 1), 0.0)
