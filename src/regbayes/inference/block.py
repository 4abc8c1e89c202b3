"""The compiled block of the driver: ``n_saved`` kept draws of ``thin`` kernel steps each,
for every chain, in one XLA program (:func:`_run_block`), and whether its loops have fixed
lengths (:func:`static_thin_loops`)."""
from __future__ import annotations

import functools
import time

import jax
import jax.numpy as jnp

from ..samplers.base import THIN_REDUCTIONS, is_fixed


def _info_layout(kernel, state, key, data, step_size):
    """Trace one step: the ``info`` fields that are constants (:func:`is_fixed`), with
    their values, and the shapes of those that vary (``jax.ShapeDtypeStruct``)."""
    fixed = {}

    def probe(key, state):
        _, info = kernel.step(key, state, data, step_size)
        fields = info._asdict()
        fixed.update({f: v for f, v in fields.items() if is_fixed(v)})
        return {f: v for f, v in fields.items() if not is_fixed(v)}

    varying = jax.eval_shape(probe, key, state)
    return fixed, varying


@functools.partial(jax.jit, static_argnames=("kernel", "schedule_fn", "capacity", "static_thin", "static_saved"))
def _run_block(
    states, keys, data, t0, n_saved, thin, schedule_tree, *, kernel, schedule_fn, capacity, static_thin=None, static_saved=None
):
    """Run ``n_saved * thin`` steps per chain, keeping every ``thin``-th position.

    Returns ``(states, keys, (positions, per_draw, per_chunk))``: the kept positions
    (chain, capacity, ...), the ``info`` fields that vary from step to step, one row per
    kept draw (dict of (chain, capacity, ...)), and those that are constants
    (:func:`is_fixed`), once per chunk (dict of (chain, ...)); a constant summed over the
    thinned steps is ``thin`` times itself. Rows from ``n_saved`` on are padding.

    ``n_saved`` (<= ``capacity``) and ``thin`` are traced, so one compiled program serves
    every chunk of a run: warm-up and draws, whatever their lengths. With ``static_thin``
    (an int) the thinning is fixed at compile time instead and the traced ``thin`` is
    ignored: on a GPU a loop with a traced trip count waits for the host at every
    iteration, a loop of fixed length does not. With ``static_saved`` (an int, only
    together with ``static_thin``) the number of kept draws is fixed too: the outer loop
    is then a ``scan`` that stacks the draws, with no host round trip per kept draw, and
    ``n_saved``/``capacity`` are ignored. The schedule is a pytree
    (``schedule_tree``, traced: a new step size reuses the program) or, for any other
    callable, ``schedule_fn`` (static).
    """
    schedule = schedule_tree if schedule_fn is None else schedule_fn
    if static_thin is not None:
        thin = static_thin

    def one_chain(state, key):
        fixed, varying = _info_layout(kernel, state, key, data, schedule(t0))
        # Fields condensed over the thinned steps (THIN_REDUCTIONS) are summed through
        # them; the others are the kept step's own values.
        carried = {f: v for f, v in varying.items() if THIN_REDUCTIONS.get(f) in ("mean", "sum")}

        def advance(state, key, t):
            """``thin`` kernel steps; the kept step's varying info, condensed where it is carried.

            One loop of ``thin`` steps, so that the kernel's step is traced and compiled
            once; the fields read from the kept step alone are carried too (the last
            step's values remain)."""

            def body(j, carry):
                state, key, sums, last = carry
                key, sub = jax.random.split(key)
                state, info = kernel.step(sub, state, data, schedule(t + j))
                return state, key, {f: sums[f] + getattr(info, f) for f in sums}, {f: getattr(info, f) for f in last}

            zeros = {f: jnp.zeros(v.shape, v.dtype) for f, v in carried.items()}
            kept = {f: jnp.zeros(v.shape, v.dtype) for f, v in varying.items() if f not in carried}
            state, key, sums, record = jax.lax.fori_loop(0, thin, body, (state, key, zeros, kept))
            for f in carried:
                record[f] = sums[f] / thin if THIN_REDUCTIONS[f] == "mean" else sums[f]
            return state, key, t + thin, record

        per_chunk = {f: jnp.asarray(thin * v if THIN_REDUCTIONS.get(f) == "sum" else v) for f, v in fixed.items()}

        if static_saved is not None:

            def kept(carry, _):
                state, key, t, record = advance(*carry)
                return (state, key, t), (state.position, record)

            (state, key, _), (positions, per_draw) = jax.lax.scan(kept, (state, key, t0), None, length=static_saved)
            return state, key, (positions, per_draw, per_chunk)

        buffers = (
            jnp.zeros((capacity, *state.position.shape), state.position.dtype),
            {f: jnp.zeros((capacity, *v.shape), v.dtype) for f, v in varying.items()},
        )

        def outer(i, carry):
            state, key, t, (pos_buf, bufs) = carry
            state, key, t, record = advance(state, key, t)
            pos_buf = pos_buf.at[i].set(state.position)
            bufs = {f: bufs[f].at[i].set(record[f]) for f in bufs}
            return state, key, t, (pos_buf, bufs)

        state, key, _, (pos_buf, bufs) = jax.lax.fori_loop(0, n_saved, outer, (state, key, t0, buffers))
        return state, key, (pos_buf, bufs, per_chunk)

    if keys.shape[0] == 1:  # one chain: skip vmap, whose batched gathers cost a few µs a step
        squeeze = lambda tree: jax.tree_util.tree_map(lambda x: x[0], tree)  # noqa: E731
        out = one_chain(squeeze(states), keys[0])
        return jax.tree_util.tree_map(lambda x: x[None], out)
    return jax.vmap(one_chain)(states, keys)


def static_thin_loops(static_thin: bool | None = None, *, thin: int = 1, one_program: bool = False) -> bool:
    """Whether a run's programs fix ``thin`` at compile time (``static_thin``, or by default).

    A loop of fixed length runs faster than one whose trip count is traced: on a GPU the
    latter waits for the host at every iteration, and on the CPU too its steps cost more.
    Fixed lengths mean one program per distinct ``thin`` of a run, though, where a traced
    ``thin`` lets one program serve warm-up and draws alike. By default, off the CPU every
    run fixes its thinning; on the CPU, compilation costs about as much as many thousands
    of steps, so only a run that then still needs a single program does
    (``one_program``: warm-up, if any, runs in whole multiples of ``thin`` and keeps no
    draws of another thin), and only where ``thin > 1`` (with one step per draw the
    program of fixed length is the slower one there). The draws are the same either way.
    """
    if static_thin is not None:
        return bool(static_thin)
    if jax.default_backend() != "cpu":
        return True
    return one_program and thin > 1


def _compile(*args, **static):
    start = time.perf_counter()
    compiled = _run_block.lower(*args, **static).compile()
    return compiled, time.perf_counter() - start
