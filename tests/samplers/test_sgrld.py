"""SGRLD on a conjugate Dirichlet–multinomial model (Patterson & Teh 2013, eq. 10).

With counts ``n_k`` and prior ``Dir(beta)`` the exact posterior of each row is
``Dir(beta + n_k)``: mean ``a_w / a_0`` and variance ``a_w (a_0 - a_w) / (a_0^2 (a_0 + 1))``
with ``a = beta + n_k``, ``a_0 = sum_w a_w``.
"""
import jax
import jax.numpy as jnp
import numpy as np

from regbayes.precision import enable_x64
from regbayes.samplers.sgrld import SimplexCounts, sgrld, sgrld_simplex_step, simplex_mean

COUNTS = np.array([[3.0, 7.0, 12.0, 1.0], [0.0, 5.0, 5.0, 20.0]])
PRIOR = 0.5


def _exact_moments(counts, prior):
    a = counts + prior
    a0 = a.sum(axis=1, keepdims=True)
    return a / a0, a * (a0 - a) / (a0**2 * (a0 + 1.0))


def _run(batches, scale, step_size, n_steps, seed):
    """SGRLD with the minibatch counts ``batches[t % len(batches)]`` chosen at random each step."""

    def body(theta, key):
        k_batch, k_step = jax.random.split(key)
        counts = batches[jax.random.randint(k_batch, (), 0, batches.shape[0])]
        theta = sgrld_simplex_step(k_step, theta, counts, scale, PRIOR, step_size)
        return theta, simplex_mean(theta)

    theta0 = jnp.ones(COUNTS.shape, jnp.float64)
    keys = jax.random.split(jax.random.key(seed), n_steps)
    _, pis = jax.lax.scan(body, theta0, keys)
    return np.asarray(pis)[n_steps // 10 :]


def _batch_means_se(draws, n_batches=50):
    """Monte Carlo standard error of the mean of each coordinate from batch means."""
    m = draws.shape[0] // n_batches
    means = draws[: m * n_batches].reshape(n_batches, m, *draws.shape[1:]).mean(axis=1)
    return means.std(axis=0, ddof=1) / np.sqrt(n_batches)


def test_exact_counts_give_the_dirichlet_posterior():
    with enable_x64():
        draws = _run(jnp.asarray(COUNTS[None]), 1.0, 0.003, 150_000, seed=0)
    mean, var = _exact_moments(COUNTS, PRIOR)
    se = _batch_means_se(draws)
    # 4 Monte Carlo standard errors (batch means over 50 batches) plus 0.004 absolute for the
    # O(eps) discretisation bias (measured 0.005 at eps = 0.01, 0.002 at eps = 0.003).
    np.testing.assert_array_less(np.abs(draws.mean(axis=0) - mean), 4 * se + 0.004)
    # variances within 15 % (measured 0-5 % off at eps = 0.003, 6-19 % at eps = 0.01: the
    # test fails if the noise scale sqrt(theta eps) or the drift is wrong by that much)
    np.testing.assert_allclose(draws.var(axis=0), var, rtol=0.15)


def test_minibatch_counts_scaled_by_data_size_keep_the_posterior_mean():
    # the same counts split over 4 "documents"; a minibatch is one document scaled by 4
    rng = np.random.default_rng(1)
    docs = np.zeros((4, *COUNTS.shape))
    for k in range(COUNTS.shape[0]):
        for w in range(COUNTS.shape[1]):
            owners = rng.integers(4, size=int(COUNTS[k, w]))
            np.add.at(docs[:, k, w], owners, 1.0)
    assert np.allclose(docs.sum(axis=0), COUNTS)
    with enable_x64():
        draws = _run(jnp.asarray(docs), 4.0, 0.003, 150_000, seed=2)
    mean, _ = _exact_moments(COUNTS, PRIOR)
    se = _batch_means_se(draws)
    # minibatch noise adds O(eps) variance but no bias to the drift: 4 MCSE + 0.006
    np.testing.assert_array_less(np.abs(draws.mean(axis=0) - mean), 4 * se + 0.006)


def test_protocol_wrapper_matches_the_step_function():
    kernel = sgrld()
    theta = jnp.ones((2, 4))
    data = SimplexCounts(jnp.asarray(COUNTS, jnp.float32), jnp.asarray(1.0), jnp.asarray(PRIOR))
    state = kernel.init(jax.random.key(0), theta, data)
    key = jax.random.key(3)
    new_state, info = kernel.step(key, state, data, 0.1)
    expected = sgrld_simplex_step(key, theta, data.counts, data.scale, data.prior, 0.1)
    np.testing.assert_array_equal(np.asarray(new_state.position), np.asarray(expected))
    assert np.all(np.asarray(new_state.position) > 0)
