"""Stochastic random-walk Metropolis with the sequential approximate MH test
(Korattikara, Chen & Welling 2014), the baseline of paper 000, section 5.1.

Proposal ``theta' = theta + s * T N(0, I)`` (``s = step_size``; ``T`` the whitening
transform of :mod:`regbayes.samplers.base`, the identity unless adapted; the paper's
proposal variance 0.01 is ``s = 0.1`` with ``T = I``). The exact MH test accepts when

    mean_d Lambda_d > mu0,   Lambda_d = log psi_d(theta') - log psi_d(theta),
    mu0 = (1/N) [log u + log p0(theta) - log p0(theta')],   u ~ U(0, 1).

The sequential test estimates the mean of ``Lambda`` from a growing sample drawn without
replacement, ``batch_size`` rows at a time (at most ``MAX_ROUND``). With ``n`` rows
seen, sample mean ``m``,
sample standard deviation ``s_l`` and the finite-population standard error
``se = s_l / sqrt(n) * sqrt(1 - (n - 1) / (N - 1))``, it stops as soon as

    delta = 1 - F_{n-1}(|m - mu0| / se) < epsilon        (Student-t tail)

and accepts iff ``m > mu0``; at ``n = N`` the decision is exact. Rows are visited in the
order ``(offset + j * stride) mod N`` with ``stride`` a prime larger than N, a random
permutation of all N rows drawn in O(1) per step (a prime ``p > N`` is coprime to N, so
the orbit covers every row once).
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.scipy.special import betainc

from .base import Potential, SamplingAlgorithm, identity_transform, transform_apply


class SRWMState(NamedTuple):
    position: jnp.ndarray
    transform: jnp.ndarray


class SRWMInfo(NamedTuple):
    """One step: whether the proposal was accepted (1 or 0) and the rows the sequential
    test read before it decided."""

    acceptance: jnp.ndarray
    n_evaluated: jnp.ndarray


MAX_ROUND = 2**17  # rows added to the test's sample per round, at most


def _primes_above(n: int, count: int) -> list[int]:
    """The first ``count`` primes larger than ``n`` (host side, once per data size)."""
    primes, candidate = [], n + 1
    while len(primes) < count:
        if candidate > 1 and all(candidate % p for p in range(2, int(candidate**0.5) + 1)):
            primes.append(candidate)
        candidate += 1
    return primes


def student_t_tail(t, dof):
    """``1 - F(|t|)`` for Student's t with ``dof`` degrees of freedom (via the incomplete beta)."""
    x = dof / (dof + t**2)
    return 0.5 * betainc(dof / 2.0, 0.5, x)


@functools.lru_cache(maxsize=None)
def srwm(potential: Potential, epsilon: float = 0.05) -> SamplingAlgorithm:
    """Build the stochastic random-walk Metropolis kernel; ``epsilon`` is the test's error bound."""
    if not 0 < epsilon < 0.5:
        raise ValueError(f"epsilon must be in (0, 0.5), got {epsilon}")

    def init(key, position, data):
        del key, data
        return SRWMState(position, identity_transform(position))

    def adapt(state, transform):
        return state._replace(transform=transform)

    def step(key, state, data, step_size):
        n = potential.n_data(data)
        m = min(potential.batch_size or n, n, MAX_ROUND)
        strides = jnp.asarray([p % n if n > 1 else 1 for p in _primes_above(n, 32)], jnp.int32)
        k_prop, k_u, k_perm, k_off = jax.random.split(key, 4)
        theta = state.position
        proposal = theta + step_size * transform_apply(state.transform, jax.random.normal(k_prop, theta.shape, theta.dtype))
        stride = jax.random.choice(k_perm, strides).astype(jnp.uint32)
        offset = jax.random.randint(k_off, (), 0, n).astype(jnp.uint32)
        log_u = jnp.log(jax.random.uniform(k_u, minval=1e-38))
        mu0 = (log_u + potential.log_prior(theta, data) - potential.log_prior(proposal, data)) / n

        def cond(carry):
            return jnp.logical_not(carry[3])

        def body(carry):
            n_seen, total, total_sq, _, base = carry
            # Rows base + j * stride (mod N), j < m, in uint32: j * stride < 2^17 * 2^14
            # (strides are p - N for the first primes p above N, far below 2^14), and
            # base + (j * stride mod N) < 2 N < 2^32 for any N < 2^31.
            j = jnp.arange(m, dtype=jnp.uint32)
            valid = n_seen + jnp.arange(m) < n
            idx = ((base + (j * stride) % n) % n).astype(jnp.int32)
            lam = potential.log_lik_terms(proposal, data, idx) - potential.log_lik_terms(theta, data, idx)
            lam = jnp.where(valid, lam, 0.0)
            n_seen = jnp.minimum(n_seen + m, n)
            total = total + jnp.sum(lam)
            total_sq = total_sq + jnp.sum(lam**2)
            mean = total / n_seen
            var = jnp.maximum(total_sq / n_seen - mean**2, 0.0) * n_seen / jnp.maximum(n_seen - 1, 1)
            fpc = jnp.maximum(1.0 - (n_seen - 1.0) / max(n - 1, 1), 0.0)
            se = jnp.sqrt(var / n_seen * fpc)
            tail = student_t_tail(jnp.abs(mean - mu0) / jnp.maximum(se, 1e-30), jnp.maximum(n_seen - 1.0, 1.0))
            done = (n_seen >= n) | ((se > 0) & (tail < epsilon))
            return n_seen, total, total_sq, done, (base + (jnp.uint32(m) * stride) % n) % n

        zero = jnp.zeros((), theta.dtype)
        start = (jnp.asarray(0), zero, zero, jnp.asarray(False), offset)
        n_seen, total, _, _, _ = jax.lax.while_loop(cond, body, start)
        accept = total / n_seen > mu0
        position = jnp.where(accept, proposal, theta)
        return SRWMState(position, state.transform), SRWMInfo(accept.astype(theta.dtype), n_seen)

    return SamplingAlgorithm(init, step, "srwm", adapt)
