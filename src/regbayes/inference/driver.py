"""The driver: run any kernel for several chains at once.

One compiled program per (kernel, schedule, chunk length, thinning): a ``lax.scan``
over saved draws, each an inner ``lax.scan`` over ``thin`` kernel steps, ``vmap``-ed
over chains. The run is cut into a few chunks so that a progress bar can move, wall
time can be recorded along the way, and divergence (a non-finite position or potential)
is caught where it happens and reported with the step size in force there.
"""
from __future__ import annotations

import functools
import math
import time
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..samplers.base import SamplingAlgorithm
from ..schedules import as_schedule


class DivergenceError(FloatingPointError):
    """A chain produced a non-finite position or potential."""


class SampleResult(NamedTuple):
    """Draws and per-draw records; arrays are NumPy, leading axes (chain, draw)."""

    positions: np.ndarray
    potential: np.ndarray
    acceptance: np.ndarray
    n_evaluated: np.ndarray
    step_size: np.ndarray  # (draw,)
    iteration: np.ndarray  # (draw,) kernel step index of each saved draw (warm-up included)
    wall_time: np.ndarray  # (draw,) seconds since sampling started (compile excluded)
    compile_seconds: float
    sampling_seconds: float
    warmup_potential: np.ndarray  # (chain, warm-up step)
    final_states: object


@functools.partial(jax.jit, static_argnames=("kernel", "schedule", "n_saved", "thin", "save"))
def _run_block(states, keys, data, t0, *, kernel, schedule, n_saved, thin, save):
    def one_chain(state, key):
        def inner(carry, t):
            state, key = carry
            key, sub = jax.random.split(key)
            state, info = kernel.step(sub, state, data, schedule(t))
            return (state, key), info

        def outer(carry, t_start):
            carry, infos = jax.lax.scan(inner, carry, t_start + jnp.arange(thin))
            last = jax.tree_util.tree_map(lambda x: x[-1], infos)
            mean_accept = jnp.mean(infos.acceptance)
            last = last._replace(acceptance=mean_accept, n_evaluated=jnp.sum(infos.n_evaluated))
            out = (carry[0].position, last) if save else last
            return carry, out

        (state, key), out = jax.lax.scan(outer, (state, key), t0 + thin * jnp.arange(n_saved))
        return state, key, out

    return jax.vmap(one_chain)(states, keys)


def _chunks(total: int, n_chunks: int) -> list[int]:
    """Equal chunks (one compiled program): the largest count <= n_chunks dividing ``total``."""
    if total <= 0:
        return []
    for count in range(max(1, min(n_chunks, total)), 0, -1):
        if total % count == 0:
            return [total // count] * count
    return [total]


def _compile(states, keys, data, t0, **static):
    start = time.perf_counter()
    compiled = _run_block.lower(states, keys, data, t0, **static).compile()
    return compiled, time.perf_counter() - start


def _check_finite(positions, potential, t_first, t_last, schedule, kernel_name):
    pos_ok = np.isfinite(np.asarray(positions)).all()
    pot = np.asarray(potential)
    pot_ok = not np.isinf(pot).any()
    if pos_ok and pot_ok:
        return
    h = float(np.asarray(schedule(jnp.asarray(t_first, jnp.float32))))
    raise DivergenceError(
        f"sampler '{kernel_name}' diverged between iterations {t_first} and {t_last}: "
        f"non-finite {'position' if not pos_ok else 'potential'} at step size {h:.3g}. "
        f"Lower step_size below {h:.3g} (for example step_size={h / 10:.3g})."
    )


def sample(
    kernel: SamplingAlgorithm,
    data,
    initial_positions,
    key,
    *,
    n_warmup: int,
    n_draws: int,
    step_size,
    thin: int = 1,
    n_chunks: int = 10,
    progress: bool = False,
    desc: str | None = None,
) -> SampleResult:
    """Run ``kernel`` from ``initial_positions`` (shape (n_chains, *position_shape)).

    ``step_size`` is a float or a schedule ``t -> h_t`` (:mod:`regbayes.schedules`);
    ``t`` counts kernel steps from 0, warm-up included. Warm-up steps are not saved;
    after warm-up every ``thin``-th step is kept, ``n_draws`` per chain.
    Raises :class:`DivergenceError` on a non-finite position or potential.
    """
    if n_draws < 1:
        raise ValueError(f"n_draws must be >= 1, got {n_draws}")
    if n_warmup < 0:
        raise ValueError(f"n_warmup must be >= 0, got {n_warmup}")
    if thin < 1:
        raise ValueError(f"thin must be >= 1, got {thin}")
    schedule = as_schedule(step_size)
    n_chains = initial_positions.shape[0]
    init_keys, run_keys = jnp.split(jax.random.split(key, 2 * n_chains), 2)
    states = jax.vmap(kernel.init, in_axes=(0, 0, None))(init_keys, initial_positions, data)
    keys = run_keys

    total_steps = n_warmup + n_draws * thin
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total_steps, desc=desc or kernel.name, unit="it", leave=False)

    compiled_cache: dict = {}
    compile_seconds = 0.0

    def program_for(states, keys, t0, n_saved, thin_, save):
        nonlocal compile_seconds
        static = dict(kernel=kernel, schedule=schedule, n_saved=n_saved, thin=thin_, save=save)
        cache_key = (n_saved, thin_, save)
        t0 = jnp.asarray(t0, jnp.float32)
        if cache_key not in compiled_cache:
            compiled_cache[cache_key], seconds = _compile(states, keys, data, t0, **static)
            compile_seconds += seconds
        return compiled_cache[cache_key]

    # Warm-up, then draws, in roughly n_chunks pieces overall.
    warm_chunks = _chunks(n_warmup, max(1, round(n_chunks * n_warmup / max(total_steps, 1))))
    draw_chunks = _chunks(n_draws, max(1, n_chunks - len(warm_chunks)))
    warm_pot, pos_parts, info_parts, wall = [], [], [], []
    t = 0
    elapsed = 0.0
    try:
        for size in warm_chunks:
            program = program_for(states, keys, t, size, 1, False)
            start = time.perf_counter()
            states, keys, infos = program(states, keys, data, jnp.asarray(t, jnp.float32))
            jax.block_until_ready(states)
            elapsed += time.perf_counter() - start
            _check_finite(states.position, infos.potential, t, t + size, schedule, kernel.name)
            warm_pot.append(np.asarray(infos.potential))
            t += size
            if bar is not None:
                bar.update(size)
        for size in draw_chunks:
            program = program_for(states, keys, t, size, thin, True)
            start = time.perf_counter()
            states, keys, (positions, infos) = program(states, keys, data, jnp.asarray(t, jnp.float32))
            jax.block_until_ready(positions)
            chunk_seconds = time.perf_counter() - start
            _check_finite(positions, infos.potential, t, t + size * thin, schedule, kernel.name)
            pos_parts.append(np.asarray(positions))
            info_parts.append(jax.tree_util.tree_map(np.asarray, infos))
            wall.append(elapsed + chunk_seconds * np.arange(1, size + 1) / size)
            elapsed += chunk_seconds
            t += size * thin
            if bar is not None:
                bar.update(size * thin)
    finally:
        if bar is not None:
            bar.close()

    iteration = n_warmup + thin * np.arange(1, n_draws + 1) - 1
    step_sizes = np.asarray(schedule(jnp.asarray(iteration, jnp.float32)), dtype=np.float64)
    cat = lambda name: np.concatenate([getattr(p, name) for p in info_parts], axis=1)  # noqa: E731
    return SampleResult(
        positions=np.concatenate(pos_parts, axis=1),
        potential=cat("potential"),
        acceptance=cat("acceptance"),
        n_evaluated=cat("n_evaluated"),
        step_size=np.broadcast_to(step_sizes, (n_draws,)).copy(),
        iteration=iteration,
        wall_time=np.concatenate(wall),
        compile_seconds=compile_seconds,
        sampling_seconds=elapsed,
        warmup_potential=np.concatenate(warm_pot, axis=1) if warm_pot else np.zeros((n_chains, 0)),
        final_states=states,
    )
