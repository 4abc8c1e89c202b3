"""One mixture component's SVM potential (regbayes.potentials.component_svm).

Exact references: the potential and subgradient of the component's rows alone (linear_svm
on those rows); the multi-class hinge's potential and subgradient against a direct NumPy
formula (rounding, 1e-12), with rows on the kink (subgradient 0 there); the minibatch
estimate's mean over 4000 keys against the exact value (tolerance 4.5 standard errors of
that mean); the whitening factor against the matrix ``(I / nu^2 + C n_k E_k[x~ x~^T])^{-1}``
built from the NIW posterior moments directly, and its block-diagonal form; the sum-zero
potential against the factorisation ``U_k(eta) = U(Q^T eta) + M ||s||^2 / (2 nu^2)``
(``s`` the row mean) and its subgradient against ``Q^T dU_k`` (rounding, 1e-12).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from regbayes.potentials import linear_svm, niw
from regbayes.potentials.component_svm import (
    ComponentRows,
    component_potential,
    block_whitening,
    component_whitening,
    group_members,
    sum_zero_basis,
    sum_zero_potential,
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


def _multi_class_numpy(W, X, codes, C, margin, nu):
    """``||W||^2 / (2 nu^2) + C sum_i max_m (l [m != y_i] + f_im - f_iy_i)`` and its
    subgradient, written out row by row (runner-up: the first largest ``f_m``, m != y)."""
    u = 0.5 * np.sum(W**2) / nu**2
    g = W / nu**2
    for x, yi in zip(X, codes):
        f = W @ x
        terms = margin * (np.arange(len(f)) != yi) + f - f[yi]
        u += C * terms.max()
        others = [m for m in range(len(f)) if m != yi]
        star = others[int(np.argmax(f[others]))]
        if margin + f[star] - f[yi] > 0:  # active hinge; 0 at the kink
            g[star] += C * x
            g[yi] -= C * x
    return u, g


def test_multi_class_potential_matches_numpy():
    """Component rows with 3 classes; rows 0 and 1 sit exactly on the kink
    ``l + f_y* - f_y = 0`` (in binary fractions, so exactly), where the subgradient is 0."""
    X, _, z, counts, members, starts = _setup(5)
    codes = np.random.default_rng(6).integers(0, 3, size=len(X))
    W = np.array([[0.5, -0.25, 0.75], [-0.5, 0.25, 0.125], [0.25, 1.0, -0.5]])
    X[0] = [1.0, 0.0, 0.0]
    codes[0] = 0  # f = (0.5, -0.5, 0.25): l + 0.25 - 0.5 = 0.75 > 0 unless l = 0.25
    X[1] = [0.0, 1.0, 0.0]
    codes[1] = 2  # f = (-0.25, 0.25, 1.0): l + 0.25 - 1.0 = 0 at l = 0.75
    with enable_x64():
        potential = component_potential(4)
        for margin in (0.25, 0.75):
            for k in range(3):
                data = ComponentRows(jnp.asarray(X), jnp.asarray(codes, jnp.float64), jnp.asarray(members),
                                     jnp.asarray(starts[k]), jnp.asarray(counts[k]), jnp.asarray(1.3),
                                     jnp.asarray(margin), jnp.asarray(1.7))
                u, g = potential.value_and_subgrad(jnp.asarray(W), data)
                u_ref, g_ref = _multi_class_numpy(W, X[z == k], codes[z == k], 1.3, margin, 1.7)
                np.testing.assert_allclose(float(u), u_ref, rtol=1e-12)
                np.testing.assert_allclose(np.asarray(g), g_ref, rtol=1e-12, atol=1e-14)
                terms = np.asarray(potential.log_lik_terms(jnp.asarray(W), data, jnp.arange(len(members))))
                np.testing.assert_allclose(terms.sum(), -(u_ref - 0.5 * np.sum(W**2) / 1.7**2), rtol=1e-12)
        # each kink row alone (members in row order, a component of one row): the
        # subgradient is the prior's alone, and the hinge is 0
        for row, margin in ((0, 0.25), (1, 0.75)):
            data = ComponentRows(jnp.asarray(X), jnp.asarray(codes, jnp.float64), jnp.arange(len(X)), jnp.asarray(row),
                                 jnp.asarray(1), jnp.asarray(1.0), jnp.asarray(margin), jnp.asarray(1.0))
            u, g = potential.value_and_subgrad(jnp.asarray(W), data)
            np.testing.assert_array_equal(np.asarray(g), W)
            np.testing.assert_allclose(float(u), 0.5 * np.sum(W**2), rtol=1e-15)


def test_multi_class_minibatch_estimate_is_unbiased():
    X, _, _, counts, members, starts = _setup(2)
    codes = np.random.default_rng(3).integers(0, 3, size=len(X)).astype(float)
    with enable_x64():
        potential = component_potential(3)
        W = jnp.asarray(np.random.default_rng(4).normal(size=(3, 3)))
        data = ComponentRows(jnp.asarray(X), jnp.asarray(codes), jnp.asarray(members), jnp.asarray(starts[1]),
                             jnp.asarray(counts[1]), jnp.asarray(1.3), jnp.asarray(0.8), jnp.asarray(1.7))
        u, g = potential.value_and_subgrad(W, data)
        keys = jax.random.split(jax.random.key(2), 4000)
        us, gs = jax.vmap(lambda k: potential.stochastic_value_and_subgrad(k, W, data))(keys)
    us, gs = np.asarray(us), np.asarray(gs)
    assert gs.shape == (4000, 3, 3)
    assert abs(us.mean() - float(u)) <= 4.5 * us.std() / np.sqrt(len(us))
    se = gs.std(axis=0) / np.sqrt(len(gs))
    assert np.all(np.abs(gs.mean(axis=0) - np.asarray(g)) <= 4.5 * se + 1e-12)


def test_block_whitening():
    T = np.random.default_rng(0).normal(size=(2, 3, 3))
    B = block_whitening(T, 4)
    assert B.shape == (2, 12, 12)
    for k in range(2):
        np.testing.assert_array_equal(B[k], np.kron(np.eye(4), T[k]))
    v = np.random.default_rng(1).normal(size=(4, 3))  # a classifier of 4 rows, flattened row by row
    np.testing.assert_allclose(B[1] @ v.ravel(), (v @ T[1].T).ravel())


def test_sum_zero_basis():
    for M in (2, 3, 5):
        Q = sum_zero_basis(M)
        assert Q.shape == (M, M - 1)
        np.testing.assert_allclose(Q.T @ Q, np.eye(M - 1), atol=1e-14)
        np.testing.assert_allclose(Q @ Q.T, np.eye(M) - 1.0 / M, atol=1e-14)


def test_sum_zero_potential_factorises():
    """The multi-class hinge sees row differences only: the potential of eta is that of
    its sum-zero part plus the row mean's Gaussian prior term, exactly."""
    X, _, _, counts, members, starts = _setup(7)
    codes = np.random.default_rng(8).integers(0, 3, size=len(X)).astype(float)
    M, nu = 3, 1.7
    Q = sum_zero_basis(M)
    with enable_x64():
        data = ComponentRows(jnp.asarray(X), jnp.asarray(codes), jnp.asarray(members), jnp.asarray(starts[0]),
                             jnp.asarray(counts[0]), jnp.asarray(1.3), jnp.asarray(0.8), jnp.asarray(nu))
        base, reduced = component_potential(5), sum_zero_potential(5, M)
        eta = np.random.default_rng(9).normal(size=(M, 3)) + [0.5, -1.0, 2.0]  # a sizeable row mean
        Z = Q.T @ eta
        u, g = base.value_and_subgrad(jnp.asarray(eta), data)
        uz, gz = reduced.value_and_subgrad(jnp.asarray(Z), data)
        s_mean = eta.mean(axis=0)
        np.testing.assert_allclose(float(u), float(uz) + M * np.sum(s_mean**2) / (2 * nu**2), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(gz), Q.T @ np.asarray(g), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(float(reduced.log_prior(jnp.asarray(Z), data)), -np.sum(Z**2) / (2 * nu**2), rtol=1e-12)
        key = jax.random.key(0)
        us, gs = reduced.stochastic_value_and_subgrad(key, jnp.asarray(Z), data)
        ub, gb = base.stochastic_value_and_subgrad(key, jnp.asarray(Q @ Z), data)  # same minibatch
        np.testing.assert_allclose(float(us), float(ub), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(gs), Q.T @ np.asarray(gb), rtol=1e-12, atol=1e-14)
