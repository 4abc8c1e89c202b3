"""BlackJAX's SGLD (``blackjax.sgld``, constant step) on regbayes' minibatch potential.

Its gradient estimator is ``-dU~`` from ``regbayes.potentials.build_potential(batch_size)``,
the minibatch key travelling as BlackJAX's "minibatch", so both libraries run the same
minibatch code. A run is a jitted ``lax.scan`` (outer scan over saved draws, inner scan over
``thin`` steps, as in regbayes' driver), compiled ahead of time and timed apart from
compilation, in the same number of chunks as regbayes' driver.
"""
from __future__ import annotations

import time

import numpy as np

_PROGRAMS: dict = {}  # compiled programs, by batch, chunk size, thin, data shape and key kind


def sgld_on_potential(potential):
    """``blackjax.sgld`` whose gradient estimator is ``-dU~`` of a regbayes minibatch
    ``potential``; its "minibatch" argument is ``(key, data)``."""
    import blackjax

    def grad_estimator(position, minibatch):
        key, data = minibatch  # the minibatch is drawn inside regbayes' potential from this key
        _, subgrad = potential.stochastic_value_and_subgrad(key, position, data)
        return -subgrad  # grad log p = -dU~

    return blackjax.sgld(grad_estimator)


def throughput_blackjax(data, batch_size, step_size, n_steps, thin, key_impl="threefry2x32"):
    def call(seed):
        cpu0 = time.process_time()
        run = run_blackjax_sgld(
            data, n_warmup=0, n_draws=n_steps // thin, thin=thin, batch_size=batch_size, step_size=step_size, seed=seed, key_impl=key_impl
        )
        return run["sampling_s"], time.process_time() - cpu0 - run["compile_s"]

    return call


def chunks(total, n_chunks):
    for count in range(max(1, min(n_chunks, total)), 0, -1):
        if total % count == 0:
            return [total // count] * count
    return [total]


def run_blackjax_sgld(data, *, n_warmup, n_draws, thin, batch_size, step_size, seed, n_chunks=10, key_impl="threefry2x32"):
    """blackjax.sgld on regbayes' stochastic potential, timed like regbayes' driver.

    ``key_impl``: JAX's PRNG implementation of the key handed to BlackJAX (threefry, the
    default of both libraries; "rbg" draws faster)."""
    import jax
    import jax.numpy as jnp

    from regbayes.potentials import build_potential

    sgld = sgld_on_potential(build_potential(batch_size))

    def make_program(n_saved, thin_, save):
        def program(position, key, data, h):
            def inner(carry, _):
                position, key = carry
                key, sub = jax.random.split(key)
                key_batch, key_noise = jax.random.split(sub)
                position = sgld.step(key_noise, position, (key_batch, data), h)
                return (position, key), None

            def outer(carry, _):
                carry, _ = jax.lax.scan(inner, carry, None, length=thin_)
                return carry, (carry[0] if save else None)

            (position, key), saved = jax.lax.scan(outer, (position, key), None, length=n_saved)
            return position, key, saved

        return jax.jit(program)

    position = jnp.zeros(data.X.shape[1], data.X.dtype)
    key = jax.random.key(seed, impl=key_impl)
    h = jnp.asarray(step_size, data.X.dtype)
    cache, compile_s, elapsed = _PROGRAMS, 0.0, 0.0

    def compiled(n_saved, thin_, save):
        nonlocal compile_s
        cache_key = (batch_size, n_saved, thin_, save, data.X.shape, str(data.X.dtype), key_impl)
        if cache_key not in cache:
            start = time.perf_counter()
            cache[cache_key] = make_program(n_saved, thin_, save).lower(position, key, data, h).compile()
            compile_s += time.perf_counter() - start
        return cache[cache_key]

    for size in chunks(n_warmup, max(1, n_chunks // 3)) if n_warmup else []:
        program = compiled(size, 1, False)
        start = time.perf_counter()
        position, key, _ = program(position, key, data, h)
        jax.block_until_ready(position)
        elapsed += time.perf_counter() - start
    parts, wall = [], []
    for size in chunks(n_draws, n_chunks):
        program = compiled(size, thin, True)
        start = time.perf_counter()
        position, key, saved = program(position, key, data, h)
        jax.block_until_ready(saved)
        seconds = time.perf_counter() - start
        parts.append(np.asarray(saved))
        wall.append(elapsed + seconds * np.arange(1, size + 1) / size)
        elapsed += seconds
    draws = np.concatenate(parts).astype(np.float64)
    if not np.isfinite(draws).all():
        raise FloatingPointError("blackjax.sgld diverged")
    return {
        "draws": draws,
        "wall": np.concatenate(wall),
        "compile_s": compile_s,
        "sampling_s": elapsed,
        "n_iter": n_warmup + n_draws * thin,
        "extra": {"step_size": float(step_size)},
    }


def throughput_blackjax_chains(data, n_chains, batch_size, step_size, n_steps, thin, key_impl="threefry2x32"):
    """``blackjax.sgld`` ``vmap``-ed over ``n_chains`` chains that share ``data``, as one
    jitted program per call (``n_steps // thin`` kept positions per chain, every one stored).
    Returns ``seed -> sampling seconds`` of a warm call (compiled once, before the first)."""
    import jax
    import jax.numpy as jnp

    from regbayes.potentials import build_potential

    sgld = sgld_on_potential(build_potential(batch_size))
    n_saved = n_steps // thin

    def one_chain(position, key, data, h):
        def inner(carry, _):
            position, key = carry
            key, sub = jax.random.split(key)
            key_batch, key_noise = jax.random.split(sub)
            return (sgld.step(key_noise, position, (key_batch, data), h), key), None

        def outer(carry, _):
            carry, _ = jax.lax.scan(inner, carry, None, length=thin)
            return carry, carry[0]

        (position, key), saved = jax.lax.scan(outer, (position, key), None, length=n_saved)
        return position, key, saved

    program = jax.jit(jax.vmap(one_chain, in_axes=(0, 0, None, None)))
    positions = jnp.zeros((n_chains, data.X.shape[1]), data.X.dtype)
    h = jnp.asarray(step_size, data.X.dtype)
    keys = jax.random.split(jax.random.key(0, impl=key_impl), n_chains)
    compiled = program.lower(positions, keys, data, h).compile()

    def call(seed):
        keys = jax.random.split(jax.random.key(seed, impl=key_impl), n_chains)
        start = time.perf_counter()
        saved = compiled(positions, keys, data, h)[2]
        jax.block_until_ready(saved)
        seconds = time.perf_counter() - start
        if not np.isfinite(np.asarray(saved[:, -1])).all():
            raise FloatingPointError("blackjax.sgld diverged")
        return seconds

    return call
