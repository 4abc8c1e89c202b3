"""The host loop of the driver: algorithms whose step runs (partly) outside JAX.

Gibbs sweeps that call numba kernels (MedLDA, InfiniteSVC), the small-variance-asymptotics
loops (M2DPM, DP-means) and mean-field updates are steps of an :class:`Algorithm`::

    state = algorithm.init(...)                       # the estimator builds it
    state, info = algorithm.step(seed, state, data)   # one iteration

``info`` is the algorithm's own NamedTuple of scalars or small arrays (objective, number
of clusters, topic log-likelihood, step size, ...). :func:`run` owns what crosses
models: the iteration loop, integer seeds drawn from one JAX key (``seed`` is an int:
numba kernels take ints; :func:`regbayes.rng.key_from_seed` makes a JAX key of it),
progress, timing with compilation apart, the per-iteration trace of ``info``, kept
draws, callbacks, divergence detection, with ``tol`` run-until-converged, and with
``checkpoint`` checkpoints that a run killed and started again resumes from, to the
results of an uninterrupted run (:mod:`regbayes.inference.host_checkpoint`).
"""
from __future__ import annotations

import time
import warnings
from os import PathLike
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..rng import host_seeds
from .errors import DivergenceError
from .host_checkpoint import HostCheckpoint, tree_fingerprint
from .progress import progress_bar


class Algorithm(NamedTuple):
    """A step function with its name and optional hooks.

    step(seed, state, data) -> (state, info)
        One iteration; ``seed`` an int drawn by the driver.
    name
        Labels the algorithm in progress bars and errors.
    compile(state, data) -> None, optional
        Compiles the step's kernels on small inputs; the driver times it as compilation.
    check(state, info) -> str or None, optional
        A model's own divergence test beyond finiteness (a norm bound, say): a message
        when the state has left what the model allows.
    """

    step: Callable[..., Any]
    name: str
    compile: Callable[..., Any] | None = None
    check: Callable[..., Any] | None = None


class RunResult(NamedTuple):
    """What :func:`run` returns. Per-iteration arrays have the iterations run as axis 0."""

    state: Any
    draws: list  # draw(state) at each kept iteration
    kept_iterations: np.ndarray
    trace: dict  # info field -> array over iterations
    wall_time: np.ndarray  # seconds of sampling at the end of each iteration
    compile_seconds: float
    sampling_seconds: float
    n_iter: int
    converged: bool | None  # None unless ``tol`` was given
    stopped_early: bool  # the callback asked to stop


def _fields(info) -> dict:
    if info is None:
        return {}
    if hasattr(info, "_asdict"):
        return dict(info._asdict())
    return dict(info)


def _non_finite_field(fields: dict) -> str | None:
    for name, value in fields.items():
        array = np.asarray(value)
        if array.dtype.kind in "fc" and not np.isfinite(array).all():
            return name
    return None


def run(
    algorithm: Algorithm,
    state,
    data,
    key,
    *,
    n_iter: int,
    keep: Sequence[int] | None = None,
    draw: Callable[[Any], Any] | None = None,
    observe: Callable[[int, Any, Any], None] | None = None,
    callback: Callable[[int, Any, Any], Any] | None = None,
    monitor: Callable[[int, Any, Any, float], Any] | None = None,
    tol: float | None = None,
    initial_objective: float | None = None,
    progress: bool = False,
    desc: str | None = None,
    carry: dict | None = None,
    checkpoint=None,
    checkpoint_every: float = 60.0,
) -> RunResult:
    """Run ``algorithm.step`` from ``state`` for ``n_iter`` iterations (at most, with ``tol``).

    keep, draw
        Iterations (0-based) at which ``draw(state)`` is stored in ``RunResult.draws``.
    observe(t, state, info)
        Called every iteration, counted as sampling time (running means, say).
    callback(t, state, info)
        The user's hook, not timed; a true return value stops the run.
    monitor(t, state, info, wall_time)
        Like ``callback`` (after it, not timed, a true return value stops the run), also
        given the seconds of sampling up to the end of iteration ``t``
        (``RunResult.wall_time[t]``): for records of progress against time.
    tol
        Run until converged: ``info.objective`` must exist; the run stops once
        ``|F_{t-1} - F_t| <= tol * |F_{t-1}|`` (``F_{-1}`` is ``initial_objective`` when
        given), and warns with :class:`~sklearn.exceptions.ConvergenceWarning` when
        ``n_iter`` iterations end without it (not for ``tol=0``, which asks for all
        ``n_iter`` iterations unless the objective stops moving exactly).

    carry
        A dict that ``observe``, ``callback`` or ``monitor`` update in place with what they
        accumulate between iterations (running sums, snapshots); it is saved with the
        checkpoints and, on resuming, refilled in place with the saved contents.
    checkpoint, checkpoint_every
        A file path, or the :class:`~regbayes.inference.host_checkpoint.HostCheckpoint` of a
        fit that runs the loop more than once (then ``checkpoint_every`` is its own). At the
        end of an iteration, once ``checkpoint_every`` seconds have passed since the last
        write (0: every iteration), the run writes its state, the seed position, draws,
        trace, ``carry`` and timings there, atomically. A run that finds a checkpoint of
        itself (same algorithm name, settings, key, starting state and data) continues
        after its last iteration and returns what an uninterrupted run returns (timings
        apart; ``callback`` and ``monitor`` are not called for the iterations read back);
        a finished run is read back whole. A checkpoint of another run, or a damaged file,
        raises :class:`~regbayes.inference.checkpoint.CheckpointError`.

    Raises :class:`DivergenceError` when a floating-point field of ``info`` is not finite
    or ``algorithm.check`` reports a message; its ``step_size`` is ``info.step_size``
    where the algorithm records one.
    """
    if int(n_iter) < 1:
        raise ValueError(f"n_iter must be >= 1, got {n_iter}")
    n_iter = int(n_iter)
    keep_set = set(int(t) for t in keep) if keep is not None else set()
    seeds = host_seeds(key, n_iter)
    trace: dict[str, list] = {}
    wall, draws, kept = [], [], []
    elapsed = compile_seconds = 0.0
    previous = initial_objective
    converged = None if tol is None else False
    stopped = finished = False
    t_start = 0
    session = HostCheckpoint(checkpoint, checkpoint_every) if isinstance(checkpoint, (str, PathLike)) else checkpoint
    if session is not None:
        saved = session.begin(tree_fingerprint(
            algorithm.name, n_iter, sorted(keep_set), draw is not None, tol, initial_objective, seeds, state, data))
        if saved is not None:
            t_start, state, draws, kept = saved["t"], saved["state"], saved["draws"], saved["kept"]
            trace = {name: list(values) for name, values in saved["trace"].items()}
            wall, elapsed, compile_seconds = list(saved["wall"]), saved["elapsed"], saved["compile_seconds"]
            previous, converged, stopped, finished = saved["previous"], saved["converged"], saved["stopped"], saved["finished"]
            if carry is not None:
                carry.clear()
                carry.update(saved["carry"])

    def snapshot(next_t, done):
        return {"t": next_t, "finished": done, "state": state, "draws": draws, "kept": kept,
                "trace": {name: np.stack(values) for name, values in trace.items()}, "wall": np.asarray(wall),
                "elapsed": elapsed, "compile_seconds": compile_seconds, "previous": previous, "converged": converged,
                "stopped": stopped, "carry": carry}

    if algorithm.compile is not None and not finished:
        start = time.perf_counter()
        algorithm.compile(state, data)
        compile_seconds += time.perf_counter() - start

    bar = progress_bar(n_iter, desc or algorithm.name, progress)
    bar.update(t_start)
    t = t_start - 1
    try:
        for t in range(t_start, n_iter if not finished else t_start):
            start = time.perf_counter()
            state, info = algorithm.step(int(seeds[t]), state, data)
            fields = _fields(info)
            step_compile = float(fields.pop("compile_seconds", 0.0))
            _check(algorithm, state, info, fields, t)
            if t in keep_set and draw is not None:
                draws.append(draw(state))
                kept.append(t)
            if observe is not None:
                observe(t, state, info)
            seconds = time.perf_counter() - start - step_compile
            compile_seconds += step_compile
            elapsed += seconds
            wall.append(elapsed)
            for name, value in fields.items():
                trace.setdefault(name, []).append(np.asarray(value))
            bar.update(1)
            if tol is not None:
                objective = float(fields["objective"])
                bar.set_postfix(objective=f"{objective:.4g}")
                if previous is not None and abs(previous - objective) <= tol * max(abs(previous), 1e-300):
                    converged = True
                else:
                    previous = objective
            if not converged:
                if callback is not None and callback(t, state, info):
                    stopped = True
                elif monitor is not None and monitor(t, state, info, elapsed):
                    stopped = True
            done = bool(converged) or stopped or t == n_iter - 1
            if session is not None:
                session.update(lambda: snapshot(t + 1, done), finished=done)
            if done and t < n_iter - 1:
                break
    finally:
        bar.close()
    if tol and not converged:
        warnings.warn(
            f"{algorithm.name} did not converge in {n_iter} iterations (tol={tol:g}); "
            f"raise the estimator's iteration limit (n_iter or max_iter) or tol",
            ConvergenceWarning,
            stacklevel=2,
        )
    return RunResult(
        state=state,
        draws=draws,
        kept_iterations=np.asarray(kept, dtype=np.int64),
        trace={name: np.stack(values) for name, values in trace.items()},
        wall_time=np.asarray(wall),
        compile_seconds=compile_seconds,
        sampling_seconds=elapsed,
        n_iter=len(wall),
        converged=converged,
        stopped_early=stopped,
    )


def _check(algorithm: Algorithm, state, info, fields: dict, t: int):
    step_size = fields.get("step_size")
    step_size = None if step_size is None else float(np.max(step_size))
    bad = _non_finite_field(fields)
    message = None
    if bad is not None:
        message = f"{algorithm.name} diverged at iteration {t}: non-finite {bad}"
    elif algorithm.check is not None:
        message = algorithm.check(state, info)
        if message is not None:
            message = f"{algorithm.name} diverged at iteration {t}: {message}"
    if message is not None:
        if step_size is not None:
            message += f" (step size {step_size:.3g}; lower it)"
        raise DivergenceError(message, algorithm=algorithm.name, iteration=t, step_size=step_size)
