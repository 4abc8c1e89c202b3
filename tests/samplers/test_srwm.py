"""SRWM's sequential test visits rows ``(offset + j * stride) mod N``, documented as a
random permutation of all N rows: at n_seen = N the test must have looked at every row
exactly once, or the "exact" decision is made on a wrong sample.

The rows a step visits are recorded with a ``jax.debug.callback`` in a potential whose
log-likelihood terms are all 0, so the test never stops early (its standard error is 0)
and every batch is visited.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from regbayes.samplers import srwm
from regbayes.samplers.base import Potential


def visited_rows(n, batch_size, seeds):
    """For each seed, the row indices visited by one SRWM step, in visiting order."""
    calls = []

    def log_lik_terms(theta, data, idx):
        jax.debug.callback(lambda i: calls.append(np.asarray(i).copy()), idx)
        return jnp.zeros(idx.shape, theta.dtype)

    potential = Potential(
        value_and_subgrad=None,
        stochastic_value_and_subgrad=None,
        log_prior=lambda theta, data: jnp.zeros((), theta.dtype),
        log_lik_terms=log_lik_terms,
        n_data=lambda data: n,
        batch_size=batch_size,
    )
    kernel = srwm(potential, 0.05)
    step = jax.jit(kernel.step)
    state = kernel.init(jax.random.key(0), jnp.zeros(1), None)
    out = []
    for seed in seeds:
        calls.clear()
        _, info = step(jax.random.key(seed), state, None, 0.1)
        jax.block_until_ready(info)
        assert int(info.n_evaluated) == n
        # log_lik_terms runs twice per batch (proposal, current) on the same rows
        first, second = calls[0::2], calls[1::2]
        for a, b in zip(first, second):
            np.testing.assert_array_equal(a, b)
        out.append(np.concatenate(first)[:n])  # the last batch is padded past row N
    return out


@pytest.mark.parametrize("n,batch_size", [(5, 2), (7, None), (1000, 64)])
def test_sequential_test_visits_every_row_once(n, batch_size):
    orders = visited_rows(n, batch_size, seeds=range(6))
    for order in orders:
        np.testing.assert_array_equal(np.sort(order), np.arange(n))
    # and the order is random (offset and stride vary with the key)
    assert len({tuple(o[:3]) for o in orders}) > 1


def test_sequential_test_visits_every_row_once_at_higgs_scale():
    """N = 11 000 000 (the HIGGS data set). ``j * stride`` must not overflow: strides
    are primes above N reduced mod N (up to ~570 here), and (N - 1) * 570 > 2**31."""
    n = 11_000_000
    for order in visited_rows(n, None, seeds=range(3)):
        counts = np.bincount(order, minlength=n)
        assert counts.max() == 1 and counts.min() == 1, (
            f"{np.sum(counts == 0)} of {n} rows never visited, {np.sum(counts > 1)} visited more than once"
        )
