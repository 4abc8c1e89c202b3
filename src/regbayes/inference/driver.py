"""The driver: run any kernel for several chains at once.

One compiled program per (kernel, schedule, chunk capacity): a ``fori_loop`` over saved
draws, each an inner ``fori_loop`` over ``thin`` kernel steps, ``vmap``-ed over chains;
the loop lengths are traced, so warm-up and draws of any length share the program (with
fixed-length loops, one program per distinct ``thin``: see :func:`static_thin_loops`).
Each kept draw records its position and every field of the kernel's ``info`` that varies
(constant fields once per chunk). The run is cut into a few chunks so that a progress
bar can move, wall time can be recorded along the way, and divergence (a non-finite
position or an infinite recorded value) is caught where it happens and reported with the
step size in force there. Every step splits the chain's key once, so the random stream,
and hence the draws, do not depend on ``thin`` or on the chunking.
"""
from __future__ import annotations

import math
import time

import jax
import jax.numpy as jnp
import numpy as np

from ..rng import KEY_IMPL
from ..samplers.base import SamplingAlgorithm
from ..schedules import Constant, Polynomial, as_schedule
from . import checkpoint as checkpoints
from .block import _compile, static_thin_loops
from .adaptation import DENSE_TRANSFORM_MAX, estimate_transform
from .checks import check_finite, warn_if_stuck, window_moved
from .step_adaptation import check_draws, check_warmup
from .step_size_tuning import DualAveraging, block_steps
from .progress import progress_bar
from .result import SampleResult


def _chunks(total: int, n_chunks: int) -> list[int]:
    """Split ``total`` into at most ``n_chunks`` near-equal positive parts."""
    if total <= 0:
        return []
    size = math.ceil(total / max(1, n_chunks))
    return [min(size, total - start) for start in range(0, total, size)]


#: Where the chains run: side by side in this process, or over Dask workers.
CHAIN_METHODS = ("vectorized", "dask")

#: Bound on the buffer of positions that warm-up fills per chunk (all chains), in bytes.
WARMUP_BUFFER_BYTES = 64 * 2**20

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
    initial_scale: float = 1.0,
    adapt_transform: bool = True,
    n_chunks: int = 10,
    progress: bool = False,
    desc: str | None = None,
    static_thin: bool | None = None,
    dense_transform_max: int = DENSE_TRANSFORM_MAX,
    checkpoint=None,
    checkpoint_every: float = 60.0,
    start: SampleResult | None = None,
    calibrate=None,
    chain_method: str = "vectorized",
    client=None,
    target_acceptance: float | None = None,
) -> SampleResult:
    """Run ``kernel`` from ``initial_positions`` (shape (n_chains, *position_shape)).

    ``step_size`` is a float or a schedule ``t -> h_t`` (:mod:`regbayes.schedules`);
    ``t`` counts kernel steps from 0, warm-up included. Warm-up steps are not saved;
    after warm-up every ``thin``-th step is kept, ``n_draws`` per chain.

    Kernels with an ``adapt`` function run in whitened coordinates ``theta = theta_0 + T u``
    (:mod:`regbayes.samplers.base`): ``T`` starts as ``initial_scale * I`` and, with
    ``adapt_transform`` and at least 100 warm-up steps, is re-estimated twice from the
    pooled draws of the chains — from steps [0.15, 0.3) and [0.3, 0.9) of warm-up — so that
    correlated posteriors look isotropic to the sampler (a dense T up to
    ``dense_transform_max`` coordinates, diagonal beyond). Step sizes are then relative.
    ``static_thin`` fixes the thinning at compile time (:func:`static_thin_loops`; by
    default on a GPU, and on the CPU where that takes no second program).

    With ``start`` (the :class:`SampleResult` of an earlier run of the same kernel on the
    same data), the chains continue from that run's final states and keys at the step
    after its last one, with no warm-up (``n_warmup`` must be 0 and ``initial_positions``
    is ignored): ``n_draws`` more draws, the draws a longer run would have given.

    With ``checkpoint`` (a file path), the run writes its state there (positions, kernel
    states, keys, the chunks' draws and records so far) after a chunk whenever
    ``checkpoint_every`` seconds have passed since the last write (0: after every chunk),
    atomically (:mod:`regbayes.inference.checkpoint`). A run started with a checkpoint of
    the same run (same kernel, settings, data, starting positions and key) at that path
    takes the chunks it holds from the file and continues after them: its draws are
    those of an uninterrupted run. A checkpoint of another run raises
    :class:`~regbayes.inference.checkpoint.CheckpointError`.

    With ``calibrate`` (a callable ``(T, window) -> (T', V')``, e.g. a
    :class:`~regbayes.inference.step_adaptation.NoiseCalibration`), each window's transform
    is passed through it with the window's draws (chain, draw, ...), and ``kernel.adapt(state, T', V')``
    installs the result (per-coordinate steps and the minibatch noise ``V'`` the kernel
    subtracts: :mod:`~regbayes.inference.step_adaptation`), and the run checks its
    mixing: a warning at the end of warm-up when it was too short for the adapted steps, and one after
    sampling when the draws' smallest bulk ESS is under 20 % of them.

    With ``target_acceptance`` (kernels that record an MH ``acceptance``; a constant
    ``step_size``), warm-up tunes the step toward that mean acceptance probability by dual
    averaging (:mod:`~regbayes.inference.step_size_tuning`), restarting when the first
    estimated transform replaces ``T0``; the draws run with the tuned step, fixed.

    ``chain_method="vectorized"`` runs the chains side by side in this process (``vmap``);
    ``"dask"`` spreads them over the workers of a Dask cluster, ``vmap``-ed within each
    (:mod:`regbayes.inference.distributed`): ``client`` (a ``distributed.Client`` or a
    scheduler address), else Dask's current client, else an embedded ``LocalCluster``
    with one worker per core. The draws are those of ``"vectorized"``.

    ``data`` may also be a :class:`~regbayes.inference.streaming.BlockStream`: a pool of
    blocks of a data set larger than memory, refilled between chunks of at most its
    ``steps_per_chunk`` steps (``chain_method="vectorized"``, no checkpoint); or
    :class:`~regbayes.inference.sharded.ShardedData`, shards on Dask workers that the
    chains visit in turn, a chunk each (``chain_method="dask"``, no checkpoint).

    Raises :class:`DivergenceError` on a non-finite position or an infinite recorded
    value (potential, thermostat, ...), and warns (``RuntimeWarning``) when a chain
    accepted under ``STUCK_ACCEPTANCE`` of its proposals over the draws.
    """
    if chain_method not in CHAIN_METHODS:
        raise ValueError(f"chain_method must be one of {CHAIN_METHODS}, got {chain_method!r}")
    if n_draws < 1:
        raise ValueError(f"n_draws must be >= 1, got {n_draws}")
    if n_warmup < 0:
        raise ValueError(f"n_warmup must be >= 0, got {n_warmup}")
    if thin < 1:
        raise ValueError(f"thin must be >= 1, got {thin}")
    stream = data if hasattr(data, "advance") else None
    sharded = data if hasattr(data, "start") else None
    if stream is not None and (chain_method != "vectorized" or checkpoint is not None):
        raise ValueError("data streamed from disk run with chain_method='vectorized' and without a checkpoint")
    if sharded is not None and (chain_method != "dask" or checkpoint is not None):
        raise ValueError("data sharded over Dask workers run with chain_method='dask' and without a checkpoint")
    source = stream or sharded
    if source is not None:
        data = source.data
    schedule = as_schedule(step_size)
    if isinstance(schedule, (Constant, Polynomial)):
        schedule_tree, schedule_fn = jax.tree_util.tree_map(lambda v: jnp.asarray(v, jnp.float32), schedule), None
    else:
        schedule_tree, schedule_fn = None, schedule
    tuner = None
    if target_acceptance is not None and n_warmup > 0:
        if not isinstance(schedule, Constant):
            raise ValueError(f"target_acceptance tunes a constant step size; got the schedule {schedule!r}")
        tuner = DualAveraging(float(schedule.h0), float(target_acceptance))

    def set_step(h):
        nonlocal schedule, schedule_tree
        schedule = Constant(float(h))
        schedule_tree = Constant(np.float32(h))
    if start is None:
        n_chains = initial_positions.shape[0]
        init_keys, run_keys = jnp.split(jax.random.split(key, 2 * n_chains), 2)
        states = jax.vmap(kernel.init, in_axes=(0, 0, None))(init_keys, initial_positions, data)
        keys = run_keys
        t_start = 0
    else:
        if n_warmup:
            raise ValueError(f"a run continued from an earlier one (start=) takes no warm-up; got n_warmup={n_warmup}")
        if start.final_keys is None:
            raise ValueError("start= needs the SampleResult of a run of this driver (its final_keys are missing)")
        states = jax.tree_util.tree_map(jnp.asarray, start.final_states)
        keys = jax.random.wrap_key_data(jnp.asarray(start.final_keys, jnp.uint32), impl=KEY_IMPL)
        initial_positions = states.position
        n_chains = initial_positions.shape[0]
        t_start = int(start.iteration[-1]) + 1
    n_coords = int(np.prod(initial_positions.shape[1:]))
    dense = n_coords <= dense_transform_max
    dtype = initial_positions.dtype

    def install(states, T, noise=None):
        if noise is None:
            return jax.vmap(kernel.adapt, in_axes=(0, None))(states, jnp.asarray(T, dtype))
        return jax.vmap(kernel.adapt, in_axes=(0, None, None))(states, jnp.asarray(T, dtype), jnp.asarray(noise, dtype))

    adapting = kernel.adapt is not None and adapt_transform and n_warmup >= 100
    if kernel.adapt is not None and start is None:
        # T0 = initial_scale * I. Stored as a diagonal unless a dense T will replace it
        # during warm-up (then the programs keep one shape): the same draws, without the
        # two P x P matvecs per step (on a GPU, two kernel launches a step).
        T0 = initial_scale * (np.eye(n_coords) if dense and adapting else np.ones(n_coords))
        states = install(states, T0)

    total_steps = n_warmup + n_draws * thin
    saver = None
    if checkpoint is not None:
        run_id = checkpoints.fingerprint(
            kernel.name, n_warmup, n_draws, thin, initial_scale, adapt_transform, n_chunks, static_thin, dense_transform_max,
            repr(schedule_fn) if schedule_fn is not None else [np.asarray(v) for v in jax.tree_util.tree_leaves(schedule_tree)],
            np.asarray(initial_positions), t_start, repr(calibrate), *checkpoints.host_leaves(key if start is None else keys),
            *checkpoints.host_leaves(data))
        saver = checkpoints.RunCheckpoint(checkpoint, run_id, float(checkpoint_every), (states, keys))
    chains = None
    if chain_method == "dask":
        from .distributed import DaskChains

        chains = sharded.start(client, kernel, n_chains) if sharded is not None else DaskChains(client, kernel, data, n_chains)
    bar = progress_bar(total_steps, desc or kernel.name, progress)

    compiled_cache: dict = {}
    planned = set()  # the programs the run's chunks use, run or taken from a checkpoint
    compile_seconds = 0.0
    elapsed = 0.0
    t = t_start

    int_zero = jnp.asarray(0, jnp.int32)
    static_thin = static_thin_loops(
        static_thin, thin=thin, one_program=not adapting and n_warmup % thin == 0
    )
    # With a traced thin, warm-up keeps every step (in a loop of traced length a step costs
    # more than a kept one does) and thins on the host: its chunks are then about as long
    # as the draws', as far as WARMUP_BUFFER_BYTES allows.
    warm_records = n_warmup if not static_thin else min(n_warmup, 200)
    if not static_thin:
        row_bytes = n_chains * n_coords * np.dtype(dtype).itemsize
        warm_records = min(warm_records, max(1, WARMUP_BUFFER_BYTES // row_bytes) * max(1, n_chunks))
    capacity = max(1, math.ceil(max(n_draws, warm_records) / max(1, n_chunks)))

    def program(step_thin, n_saved=None):
        """The compiled block; with ``static_thin``, one per thin (and per chunk size of the draws)."""
        nonlocal compile_seconds
        name = (step_thin, n_saved) if static_thin else None
        if name not in compiled_cache:
            t0 = jnp.asarray(0.0, jnp.float32)
            static = dict(schedule_fn=schedule_fn, capacity=capacity)
            if static_thin:
                static.update(static_thin=step_thin, static_saved=n_saved)
            if chains is not None:
                compiled_cache[name], seconds = chains.program(
                    name, states, keys, static, jax.tree_util.tree_map(np.asarray, (t0, int_zero, int_zero, schedule_tree)))
            else:
                args = (states, keys, data, t0, int_zero, int_zero, schedule_tree)
                compiled_cache[name], seconds = _compile(*args, kernel=kernel, **static)
            compile_seconds += seconds
        return compiled_cache[name]

    def run_phase(states, keys, n_steps, thin_, save, n_pieces, draws=False):
        """Run ``n_steps`` kernel steps, keeping every ``thin_``-th position when ``save``.

        Warm-up runs one step per record in a program of traced thin (the positions
        saved are then every ``thin_``-th, taken on the host) and, with ``static_thin``,
        its unsaved steps ``thin`` at a time in the draws' program. With ``draws`` (the
        kept draws) and ``static_thin``, the number of draws per chunk is fixed at compile
        time as well, so that no kept draw waits for the host. That program is only built
        where it adds none: when the chunks are of equal size and warm-up has not already
        compiled a program for this thin (which the draws then reuse): a program costs
        seconds to compile, the fixed count microseconds per kept draw (CHANGELOG.md).
        """
        nonlocal elapsed, t, data
        tuning = tuner is not None and not draws
        keep = thin_
        if not draws and not static_thin:
            thin_ = 1
        elif not save:  # with programs per thin, reuse the draws' program rather than compile another
            thin_ = min(thin, n_steps)
        parts, stats_out, wall = [], [], []
        recorded_steps.clear()
        recorded_potential.clear()
        pieces = max(n_pieces, math.ceil(n_steps / thin_ / capacity))
        if tuning:  # one dual-averaging update per chunk
            pieces = max(pieces, math.ceil(n_steps / max(thin_, block_steps(n_steps))))
        if source is not None:  # a stream's pool is refilled, sharded chains move, between chunks
            if thin_ > source.steps_per_chunk:
                raise ValueError(f"thin={thin_} is longer than the data's chunk of {source.steps_per_chunk} steps")
            pieces = max(pieces, math.ceil(n_steps / (source.steps_per_chunk // thin_ * thin_)))
        plan = [(size, thin_) for size in _chunks(n_steps // thin_, pieces)]
        if n_steps % thin_:
            plan.append((n_steps % thin_, 1))
        fixed_draws = (
            draws and static_thin and len({size for size, _ in plan}) == 1 and (thin_, None) not in planned
        )
        for size, step_thin in plan:
            planned.add((step_thin, size if fixed_draws else None) if static_thin else None)
            if saver is not None and saver.holds_next():
                positions, stats, seconds = saver.next_chunk()
                if not saver.holds_next():  # the last chunk of the checkpoint: continue from its states
                    states, keys = saver.states_and_keys()
            else:
                run_chunk = program(step_thin, size if fixed_draws else None)
                start = time.perf_counter()
                # NumPy scalars: the compiled call moves them to the device itself, which on a
                # GPU costs far less than a jnp.asarray each (measured: see BENCHMARKS.md)
                states, keys, (positions, per_draw, per_chunk) = run_chunk(
                    states, keys, data, np.float32(t), np.int32(size), np.int32(step_thin), schedule_tree
                )
                jax.block_until_ready(states)
                if stream is not None:
                    data = stream.advance(size * step_thin)
                seconds = time.perf_counter() - start
                # to the host first, then slice: slicing on the device would dispatch (and for
                # each new chunk size compile) small programs of its own
                positions = np.asarray(positions)[:, :size]
                stats = {f: np.asarray(v)[:, :size] for f, v in per_draw.items()}
                for f, v in per_chunk.items():  # constants: one value per chain
                    v = np.asarray(v)
                    stats[f] = np.broadcast_to(v[:, None], (v.shape[0], size, *v.shape[1:]))
                check_finite(positions, stats, t, t + size * step_thin, schedule, kernel.name)
                if saver is not None:
                    saver.add_chunk(positions if save else None, stats, seconds, (states, keys))
            if tuning:
                if "acceptance" not in stats:
                    raise ValueError(f"target_acceptance tunes the step of a kernel that records its acceptance; "
                                     f"'{kernel.name}' records none")
                tuner.update(stats["acceptance"])
                set_step(tuner.step_size)
            if save:
                parts.append(positions)
            stats_out.append(stats)
            wall.append(elapsed + seconds * np.arange(1, size + 1) / size)
            recorded_steps.append(t + step_thin * np.arange(1, size + 1) - 1)
            recorded_potential.append(stats.get("potential", np.full((n_chains, size), np.nan)))
            elapsed += seconds
            t += size * step_thin
            bar.update(size * step_thin)
        if keep > thin_ and parts:  # warm-up kept every step; the caller asked for every keep-th
            parts = [np.concatenate(parts, axis=1)[:, keep - 1 :: keep]]
        return states, keys, parts, stats_out, wall

    warm_pot, warm_steps, recorded_steps, recorded_potential = [], [], [], []
    try:
        if adapting:
            # Two windows: the first (30% of warm-up) brings the chains to the typical set
            # and gives a rough T from its second half; the second (60%) estimates T from
            # all of its draws, now taken with the rough T in place.
            for index, (fraction, skip) in enumerate(((0.3, 0.5), (0.6, 0.0)), 1):
                length = int(fraction * n_warmup)
                burn = int(skip * length)
                if burn:
                    states, keys, _, _, _ = run_phase(states, keys, burn, 1, False, 2)
                    warm_pot += recorded_potential
                    warm_steps += recorded_steps
                keep = max(1, (length - burn) // 400)
                states, keys, parts, _, _ = run_phase(states, keys, (length - burn) // keep * keep, keep, True, 2)
                warm_pot += recorded_potential
                warm_steps += recorded_steps
                window = np.concatenate(parts, axis=1)
                if not window_moved(window, float(np.asarray(schedule(jnp.asarray(t, jnp.float32)))), kernel.name, index):
                    continue
                T, noise = estimate_transform(window, dense), None
                if calibrate is not None:
                    T, noise = calibrate(T, window)
                states = install(states, T, noise)
                if tuner is not None and index == 1:  # from T0 to the first estimate: the step starts again
                    tuner.restart(tuner.step_size)
            if hasattr(calibrate, "relaxation_steps"):
                check_warmup(calibrate, n_warmup, kernel.name)
        rest = n_warmup - t
        if rest > 0:
            states, keys, _, _, _ = run_phase(states, keys, rest, 1, False, max(1, n_chunks // 3))
            warm_pot += recorded_potential
            warm_steps += recorded_steps
        if tuner is not None:
            set_step(tuner.final_step_size)
        states, keys, pos_parts, stats_parts, wall = run_phase(states, keys, n_draws * thin, thin, True, n_chunks, draws=True)
    finally:
        bar.close()
        if chains is not None:
            chains.close()

    iteration = t_start + n_warmup + thin * np.arange(1, n_draws + 1) - 1
    step_sizes = np.asarray(schedule(jnp.asarray(iteration, jnp.float32)), dtype=np.float64)
    stats = {f: np.concatenate([p[f] for p in stats_parts], axis=1) for f in stats_parts[0]}
    if "acceptance" in stats:
        warn_if_stuck(stats["acceptance"], float(step_sizes[-1]), kernel.name)
    positions = np.concatenate(pos_parts, axis=1)
    if calibrate is not None:
        check_draws(positions, thin, kernel.name)
    return SampleResult(
        positions=positions,
        stats=stats,
        step_size=np.broadcast_to(step_sizes, (n_draws,)).copy(),
        iteration=iteration,
        wall_time=np.concatenate(wall),
        compile_seconds=compile_seconds,
        sampling_seconds=elapsed,
        warmup_potential=np.concatenate(warm_pot, axis=1) if warm_pot else np.zeros((n_chains, 0)),
        warmup_iteration=np.concatenate(warm_steps) if warm_steps else np.zeros(0, dtype=int),
        final_states=states,
        final_keys=np.asarray(jax.random.key_data(keys)),
    )
