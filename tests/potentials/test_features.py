"""Padded-sparse (ELL) designs give the same results as dense ones: matvec, rmatvec,
take, to_dense, the potential and its minibatch estimate, and the Gibbs kernel step;
with and without the appended intercept column."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp

from regbayes.precision import enable_x64
from regbayes.algorithms import gibbs_svm
from regbayes.potentials import SVMData, build_potential, csr_to_padded
from regbayes.potentials import features


def sparse_matrix(rng, n=25, d=12):
    X = sp.random(n, d, density=0.25, random_state=np.random.RandomState(rng.integers(1 << 30)), format="csr")
    X = X.tolil()
    X[3, :] = 0.0  # an empty row
    X[7, :] = rng.normal(size=d)  # a full row (sets the padded width)
    return X.tocsr()


def dense_of(X, intercept):
    D = X.toarray()
    return np.hstack([D, np.ones((D.shape[0], 1))]) if intercept else D


@jax.jit
def _linear_algebra(P, w, W, r, R, idx):
    return (
        features.to_dense(P),
        features.matvec(P, w),
        features.matvec(P, W),
        features.rmatvec(P, r),
        features.rmatvec(P, R),
        features.to_dense(features.take(P, idx)),
    )


@pytest.mark.parametrize("intercept", [False, True])
def test_padded_rows_linear_algebra_matches_dense(intercept):
    """float64, rtol/atol 1e-12 (sums of at most 13 products: rounding only)."""
    rng = np.random.default_rng(0)
    with enable_x64():
        X = sparse_matrix(rng)
        P = csr_to_padded(X, dtype=np.float64, intercept=intercept)
        D = dense_of(X, intercept)
        n, d = D.shape
        assert P.shape == (n, d) and features.n_features(P) == d and features.n_rows(P) == n
        w, W = rng.normal(size=d), rng.normal(size=(d, 3))
        r, R = rng.normal(size=n), rng.normal(size=(n, 3))
        idx = np.array([3, 7, 0, 7])
        got = _linear_algebra(P, *map(jnp.asarray, (w, W, r, R, idx)))
        expected = (D, D @ w, D @ W, D.T @ r, D.T @ R, D[idx])
        for g, e in zip(got, expected):
            assert g.shape == e.shape
            np.testing.assert_allclose(np.asarray(g), e, rtol=1e-12, atol=1e-12)


def test_csr_to_padded_all_empty_rows():
    P = csr_to_padded(sp.csr_matrix((4, 5)))
    assert P.indices.shape == (4, 1)
    np.testing.assert_array_equal(np.asarray(features.matvec(P, jnp.ones(5))), 0.0)
    Pi = csr_to_padded(sp.csr_matrix((4, 5)), intercept=True)
    np.testing.assert_array_equal(np.asarray(features.matvec(Pi, jnp.arange(6.0))), 5.0)


def _potential_outputs(data, eta, key):
    """Everything a kernel asks of the potential, for batch sizes None and 6."""
    out = []
    for batch_size in (None, 6):
        pot = build_potential(batch_size)
        out += list(pot.value_and_subgrad(eta, data))
        out += list(pot.stochastic_value_and_subgrad(key, eta, data))  # same key -> same rows
        out.append(pot.log_lik_terms(eta, data, jnp.array([0, 3, 7, 7])))
    return out


@jax.jit
def _both(dense, padded, eta, key):
    return _potential_outputs(dense, eta, key), _potential_outputs(padded, eta, key)


@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_potential_on_padded_rows_matches_dense(n_classes, intercept):
    rng = np.random.default_rng(1 + n_classes)
    with enable_x64():
        X = sparse_matrix(rng)
        D = dense_of(X, intercept)
        n, d = D.shape
        y = rng.choice([-1.0, 1.0], size=n) if n_classes == 2 else rng.integers(0, n_classes, size=n)
        y = jnp.asarray(y, jnp.float64 if n_classes == 2 else jnp.int32)
        hyper = (jnp.asarray(1.7), jnp.asarray(1.0), jnp.asarray(2.0))
        dense = SVMData(jnp.asarray(D), y, *hyper)
        padded = SVMData(csr_to_padded(X, dtype=np.float64, intercept=intercept), y, *hyper)
        eta = jnp.asarray(rng.normal(size=(d,) if n_classes == 2 else (n_classes, d)))
        from_dense, from_padded = _both(dense, padded, eta, jax.random.key(4))
        for a, b in zip(from_dense, from_padded):
            np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_gibbs_step_on_padded_rows_matches_dense(n_classes):
    """The Gibbs kernel densifies sparse designs: same key, same draw (float64)."""
    rng = np.random.default_rng(11)
    kernel = gibbs_svm()

    @jax.jit
    def two_steps(dense, padded, eta0):
        a = kernel.step(jax.random.key(2), kernel.init(jax.random.key(0), eta0, dense), dense, 1.0)
        b = kernel.step(jax.random.key(2), kernel.init(jax.random.key(0), eta0, padded), padded, 1.0)
        return a, b

    with enable_x64():
        X = sparse_matrix(rng)
        D = dense_of(X, True)
        n, d = D.shape
        y = rng.choice([-1.0, 1.0], size=n) if n_classes == 2 else rng.integers(0, n_classes, size=n)
        y = jnp.asarray(y, jnp.float64 if n_classes == 2 else jnp.int32)
        hyper = (jnp.asarray(1.0), jnp.asarray(1.0), jnp.asarray(1.0))
        dense = SVMData(jnp.asarray(D), y, *hyper)
        padded = SVMData(csr_to_padded(X, dtype=np.float64, intercept=True), y, *hyper)
        eta0 = jnp.asarray(rng.normal(size=(d,) if n_classes == 2 else (n_classes, d)))
        (sd, infod), (sp_, infop) = two_steps(dense, padded, eta0)
        assert sd.position.shape == eta0.shape and sd.position.dtype == jnp.float64
        assert np.all(np.isfinite(np.asarray(sd.position)))
        np.testing.assert_allclose(np.asarray(sp_.position), np.asarray(sd.position), rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(float(infop.potential), float(infod.potential), rtol=1e-9)
