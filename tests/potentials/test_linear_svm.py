"""The Bayesian linear SVM potential U(eta; D): value, subgradient, minibatch estimate,
per-datum log-likelihood terms; binary and Crammer–Singer, dense and padded-sparse."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp

from regbayes.precision import enable_x64
from regbayes.potentials import SVMData, build_potential, csr_to_padded, rare_feature_rows
from regbayes.potentials.linear_svm import log_lik_terms, log_prior, value_and_subgrad


def make_problem(rng, n, d, n_classes, dtype, sparse=False):
    X = rng.normal(size=(n, d)) * (rng.random(size=(n, d)) < 0.5)
    y = rng.choice([-1.0, 1.0], size=n) if n_classes == 2 else rng.integers(0, n_classes, size=n)
    design = csr_to_padded(sp.csr_matrix(X), dtype=dtype) if sparse else jnp.asarray(X, dtype)
    y = jnp.asarray(y, dtype) if n_classes == 2 else jnp.asarray(y, jnp.int32)
    data = SVMData(design, y, jnp.asarray(1.3, dtype), jnp.asarray(1.0, dtype), jnp.asarray(1.5, dtype))
    shape = (d,) if n_classes == 2 else (n_classes, d)
    return X, data, shape


def np_potential(eta, X, y, C, margin, nu):
    """Independent NumPy U(eta) (binary or Crammer–Singer)."""
    if eta.ndim == 1:
        hinge = np.maximum(0.0, margin - y * (X @ eta))
    else:
        F = X @ eta.T
        true = F[np.arange(len(y)), y]
        other = np.where(np.arange(eta.shape[0])[None, :] == y[:, None], -np.inf, F).max(axis=1)
        hinge = np.maximum(0.0, margin + other - true)
    return C * hinge.sum() + 0.5 * np.sum(eta**2) / nu**2, hinge


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("sparse", [False, True])
def test_value_matches_numpy_and_subgradient_matches_finite_differences(n_classes, sparse):
    """U against an independent NumPy implementation (rtol 1e-12, float64) and the
    explicit subgradient against central differences (step 1e-6, atol 1e-6: the
    potential is piecewise quadratic, so away from kinks the only error is rounding,
    ~1e-16 |U| / 1e-6) at 20 random points; points with any datum within 1e-4 of a kink
    are skipped for the FD part (at most a few)."""
    rng = np.random.default_rng(3 + n_classes + 10 * sparse)
    with enable_x64():
        X, data, shape = make_problem(rng, 40, 4, n_classes, np.float64, sparse)
        y = np.asarray(data.y)
        touched = np.any(X != 0, axis=1)  # rows with x = 0 have a constant loss
        vg = jax.jit(value_and_subgrad)
        value = jax.jit(jax.vmap(lambda e: value_and_subgrad(e, data)[0]))
        h = 1e-6
        steps = h * np.eye(int(np.prod(shape))).reshape(-1, *shape)
        checked = 0
        for _ in range(20):
            eta = rng.normal(size=shape)
            u_ref, _ = np_potential(eta, X, y, 1.3, 1.0, 1.5)
            if n_classes == 2:
                near_kink = np.any(np.abs(1.0 - y * (X @ eta))[touched] < 1e-4)
            else:
                F = X @ eta.T
                other = np.sort(np.where(np.arange(n_classes)[None, :] == y[:, None], -np.inf, F), axis=1)
                zeta = 1.0 + other[:, -1] - F[np.arange(len(y)), y]
                near_kink = np.any((np.abs(zeta) < 1e-4)[touched]) or np.any((other[:, -1] - other[:, -2] < 1e-4)[touched])
            u, g = vg(jnp.asarray(eta), data)
            np.testing.assert_allclose(float(u), u_ref, rtol=1e-12)
            if near_kink:
                continue
            up = np.asarray(value(jnp.asarray(eta + steps)))
            um = np.asarray(value(jnp.asarray(eta - steps)))
            fd = ((up - um) / (2 * h)).reshape(shape)
            np.testing.assert_allclose(np.asarray(g), fd, atol=1e-6)
            checked += 1
        assert checked >= 15


@pytest.mark.parametrize("n_classes", [2, 3])
def test_log_prior_and_log_lik_terms_add_up_to_minus_potential(n_classes):
    rng = np.random.default_rng(5)
    with enable_x64():
        X, data, shape = make_problem(rng, 30, 3, n_classes, np.float64)
        eta = jnp.asarray(rng.normal(size=shape))
        idx = jnp.array([4, 4, 0, 29])  # rows in any order, repeated: terms follow the index

        @jax.jit
        def pieces(eta, data):
            u, _ = value_and_subgrad(eta, data)
            return u, log_prior(eta, data), log_lik_terms(eta, data, jnp.arange(30)), log_lik_terms(eta, data, idx)

        u, lp, terms, some = map(np.asarray, pieces(eta, data))
        assert terms.shape == (30,) and np.all(terms <= 0)
        np.testing.assert_allclose(-float(lp) - terms.sum(), float(u), rtol=1e-12)
        np.testing.assert_array_equal(some, terms[np.asarray(idx)])


@pytest.mark.parametrize(
    "n_classes,sparse,n_exact",
    [(2, False, 0), (3, False, 0), (2, True, 0), (2, False, 6), (3, True, 6)],
)
def test_stochastic_subgradient_is_unbiased(n_classes, sparse, n_exact):
    """Average of the minibatch estimate (eq. 7) over many keys vs the full-data value
    and subgradient: every coordinate within 4.5 standard errors (the estimates for
    different keys are i.i.d., so SE = sd / sqrt(n_keys) exactly; ~20 coordinates per
    case, so a correct estimator fails with probability ~1e-4). With ``n_exact`` the first
    rows are in every minibatch and the others are drawn."""
    rng = np.random.default_rng(7 + n_classes)
    n_keys = 20_000
    with enable_x64():
        _, data, shape = make_problem(rng, 50, 5, n_classes, np.float64, sparse)
        potential = build_potential(7, n_exact)
        eta = jnp.asarray(rng.normal(size=shape))
        u_full, g_full = potential.value_and_subgrad(eta, data)
        keys = jax.random.split(jax.random.key(0), n_keys)
        est = jax.jit(jax.vmap(potential.stochastic_value_and_subgrad, in_axes=(0, None, None)))
        u, g = est(keys, eta, data)
        values = np.concatenate([np.asarray(u)[:, None], np.asarray(g).reshape(n_keys, -1)], axis=1)
        exact = np.concatenate([[float(u_full)], np.asarray(g_full).ravel()])
        mean, se = values.mean(axis=0), values.std(axis=0) / np.sqrt(n_keys)
        # coordinates no datum touches (sparse) are deterministic: exact equality there
        noisy = se > 0
        assert noisy.sum() >= 0.5 * len(exact)
        z = np.abs(mean[noisy] - exact[noisy]) / se[noisy]
        assert np.all(z < 4.5), z
        np.testing.assert_allclose(mean[~noisy], exact[~noisy], rtol=1e-12, atol=1e-12)
        # ...and it is a genuinely random estimate, not the full-data one
        assert np.std(np.asarray(u)) > 0


def test_full_batch_estimate_is_the_exact_potential():
    rng = np.random.default_rng(9)
    _, data, shape = make_problem(rng, 20, 3, 2, np.float32)
    eta = jnp.asarray(rng.normal(size=shape), jnp.float32)
    u_full, g_full = value_and_subgrad(eta, data)
    for batch_size in (None, 20, 50):
        u, g = build_potential(batch_size).stochastic_value_and_subgrad(jax.random.key(1), eta, data)
        np.testing.assert_array_equal(np.asarray(u), np.asarray(u_full))
        np.testing.assert_array_equal(np.asarray(g), np.asarray(g_full))


def test_rows_kept_in_every_minibatch_are_counted_once():
    """With ``n_exact`` rows kept and the batch drawn from the other ``n - n_exact``: the
    estimate is the kept rows' exact terms plus ``(n - n_exact) / b`` times the drawn rows'
    (the rows of one key's draw recomputed by hand)."""
    rng = np.random.default_rng(3)
    with enable_x64():
        _, data, shape = make_problem(rng, 30, 4, 2, np.float64)
        eta = jnp.asarray(rng.normal(size=shape))
        key = jax.random.key(5)
        u, g = build_potential(5, 4).stochastic_value_and_subgrad(key, eta, data)
        idx = 4 + np.asarray(jax.random.randint(key, (5,), 0, 26))
        rows = np.concatenate([np.arange(4), idx])
        weights = np.concatenate([np.ones(4), np.full(5, 26 / 5)])
        X, y = np.asarray(data.X), np.asarray(data.y)
        hinge = np.maximum(0.0, 1.0 - y[rows] * (X[rows] @ np.asarray(eta)))  # C = 1.3, nu = 1.5
        expected_u = 1.3 * np.sum(weights * hinge) + 0.5 * np.sum(np.asarray(eta) ** 2) / 1.5**2
        expected_g = -1.3 * (weights * (hinge > 0) * y[rows]) @ X[rows] + np.asarray(eta) / 1.5**2
    assert float(u) == pytest.approx(expected_u, rel=1e-12)
    np.testing.assert_allclose(np.asarray(g), expected_g, rtol=1e-12, atol=1e-12)


def test_rare_feature_rows():
    """Rows off a feature's most common value, for features that fewer than N / b rows are
    off; rarest features first, up to ``limit`` rows."""
    X = np.zeros((100, 4))
    X[:, 0] = np.arange(100) % 3  # common: every row takes one of three values
    X[7, 1] = 5.0  # one row off
    X[[3, 50, 60], 2] = 1.0  # three rows off
    X[:, 3] = 2.0
    X[[10, 11, 12, 13, 14, 15, 16, 17, 18, 19], 3] = -1.0  # ten rows: N / b = 10, not rare
    np.testing.assert_array_equal(rare_feature_rows(X, 10, 50), [3, 7, 50, 60])
    np.testing.assert_array_equal(rare_feature_rows(X, 10, 2), [7])  # the rarest feature fits, the next does not
    np.testing.assert_array_equal(rare_feature_rows(sp.csr_matrix(X[:, 1:3]), 10, 50), [3, 7, 50, 60])
    assert rare_feature_rows(X, 100, 50).size == 0  # b = N: no feature is rare
    assert rare_feature_rows(np.ones((20, 3)), 5, 10).size == 0


@pytest.mark.parametrize("n_classes", [2, 3])
def test_padding_rows_past_n_rows_changes_no_minibatch_estimate(n_classes):
    """Data padded with zero rows and ``n_rows`` set to the true count: every key's
    minibatch estimate (value and subgradient) is the unpadded data's, bit for bit, and
    one compiled function serves both sizes."""
    rng = np.random.default_rng(11)
    _, data, shape = make_problem(rng, 40, 4, n_classes, np.float32)
    padded = data._replace(X=jnp.concatenate([data.X, jnp.zeros((24, 4), jnp.float32)]),
                           y=jnp.concatenate([data.y, jnp.zeros(24, data.y.dtype)]), n_rows=jnp.asarray(40, jnp.int32))
    shorter = padded._replace(n_rows=jnp.asarray(30, jnp.int32))
    eta = jnp.asarray(rng.normal(size=shape), jnp.float32)
    estimate = jax.jit(lambda key, eta, data: build_potential(7).stochastic_value_and_subgrad(key, eta, data))
    unpadded = jax.jit(build_potential(7).stochastic_value_and_subgrad)
    for seed in range(5):
        key = jax.random.key(seed)
        u, g = unpadded(key, eta, data)
        u_pad, g_pad = estimate(key, eta, padded)
        assert float(u_pad) == float(u)
        np.testing.assert_array_equal(np.asarray(g_pad), np.asarray(g))
        # ...and the same program, at another n_rows, draws from that many rows only
        u30, g30 = build_potential(7).stochastic_value_and_subgrad(key, eta, data._replace(X=data.X[:30], y=data.y[:30]))
        u_short, g_short = estimate(key, eta, shorter)
        assert float(u_short) == pytest.approx(float(u30), rel=1e-6)
        np.testing.assert_allclose(np.asarray(g_short), np.asarray(g30), rtol=1e-6, atol=1e-6)
    assert estimate._cache_size() == 1
