"""Chains on Dask workers: the driver's chunks run on a cluster, one group of chains per worker.

``sample(..., chain_method="dask")`` splits the chains into contiguous groups, one per
worker and as equal as possible, sends the kernel and the data to each worker once, and
runs every chunk of the run as one call per group: only the chains' states, keys and
draws travel. Warm-up adaptation (which pools the draws of all chains), checkpoints,
divergence checks and progress stay with the caller, between chunks, as in one process.
Every chain has its own key, and a ``vmap``-ed chain computes the same numbers whichever
chains share its program, so the draws equal those of a single-process run with the
same seed.

The cluster is the ``client`` passed, else Dask's current client (a ``Client`` the user
created), else an embedded ``LocalCluster`` started on first use and kept for the
process: one single-threaded worker process per core, each bound to its own core (on
Linux) and with the thread pools of XLA, numba and BLAS set to one thread, so that the
workers do not oversubscribe the cores.

Each worker holds its part of the run as a Dask actor (:class:`ChainRunner`): the kernel,
the data on the device and the compiled programs; the caller calls it directly for every
chunk. A worker lost during a chunk costs that chunk only: the caller holds every chain's
state after the previous chunk, so the groups are formed again on the workers that remain
and the chunk is run again from those states, with the same keys (the same draws). With
no worker left the run raises :class:`ClusterError`.
"""
from __future__ import annotations

import atexit
import hashlib
import os
import time

import jax
import jax.numpy as jnp
import numpy as np

from ..precision import maybe_x64
from ..rng import KEY_IMPL

#: Environment of the embedded cluster's workers: one thread each for XLA's Eigen
#: kernels, numba and BLAS (XLA's runtime keeps a pool of its own: see _pin_to_one_core).
WORKER_ENV = {
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false",
    "NUMBA_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}

#: Seconds to wait for a scheduler given by its address.
CONNECT_TIMEOUT = 10.0

#: Times a chunk is run again after losing workers before the run gives up.
MAX_RETRIES = 3

_embedded = {}  # the process's LocalCluster and Client, started on first use
_worker_kernels: dict = {}  # on a worker: the kernels of past runs by fingerprint (their programs stay cached)


class ClusterError(RuntimeError):
    """The Dask cluster cannot run the chains: not reachable, or no worker left."""


def is_lost_worker(err) -> bool:
    """Whether ``err`` is what a call to a lost worker's actor raises: a closed connection,
    or Dask's "Worker holding Actor was lost" (a RuntimeError; a ValueError in some versions)."""
    from distributed.comm import CommClosedError

    return isinstance(err, (OSError, CommClosedError)) or (
        isinstance(err, (ValueError, RuntimeError)) and "lost" in str(err).lower())


def _import_distributed():
    try:
        import distributed
    except ImportError as err:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "chain_method='dask' needs Dask's distributed scheduler: pip install 'regbayes[dask]'"
        ) from err
    return distributed


def cpu_count() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def embedded_client(n_workers: int | None = None):
    """The process's embedded ``LocalCluster`` client (started on first call, closed at exit):
    ``n_workers`` (default: one per core) single-threaded worker processes."""
    distributed = _import_distributed()
    n_workers = n_workers or cpu_count()
    if _embedded.get("n_workers") != n_workers:
        close_embedded()
        cluster = distributed.LocalCluster(
            n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None,
            silence_logs=40, env=dict(WORKER_ENV),
        )
        client = distributed.Client(cluster)
        client.run(_pin_to_one_core)
        _embedded.update(cluster=cluster, client=client, n_workers=n_workers)
    return _embedded["client"]


def _pin_to_one_core(dask_worker=None):
    """Bind every thread of this worker process to one core (worker i to the i-th core it
    may use, on Linux): XLA's CPU runtime runs a program's independent operations on a
    pool of threads, so that two unbound workers each take both cores and slow each other
    (measured: CHANGELOG.md, 2026-11-28). Threads started later inherit the binding."""
    if not hasattr(os, "sched_setaffinity") or dask_worker is None:
        return None
    cores = sorted(os.sched_getaffinity(0))
    core = cores[int(dask_worker.name) % len(cores)]
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), {core})
        except OSError:  # the thread ended meanwhile
            pass
    return core


def close_embedded():
    """Close the embedded cluster, if one was started."""
    client, cluster = _embedded.pop("client", None), _embedded.pop("cluster", None)
    _embedded.pop("n_workers", None)
    if client is not None:
        client.close()
    if cluster is not None:
        cluster.close()


atexit.register(close_embedded)


def resolve_client(client=None):
    """``client`` if given (a ``distributed.Client`` or a scheduler address), else Dask's
    current client, else the embedded cluster's."""
    distributed = _import_distributed()
    if client is None:
        try:
            return distributed.default_client()
        except ValueError:
            return embedded_client()
    if isinstance(client, str):
        try:
            return distributed.Client(client, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as err:
            raise ClusterError(f"cannot reach the Dask scheduler at {client!r}: {err}") from err
    if not isinstance(client, distributed.Client):
        raise TypeError(f"client must be a distributed.Client or a scheduler address, got {type(client).__name__}")
    return client


def cluster_workers(client) -> list[str]:
    """The addresses of ``client``'s workers, sorted; :class:`ClusterError` when there are none."""
    workers = sorted(client.scheduler_info(n_workers=-1)["workers"])
    if not workers:
        raise ClusterError("the Dask cluster has no worker")
    return workers


def chain_groups(n_chains: int, n_workers: int) -> list[tuple[int, int]]:
    """Contiguous ``(start, stop)`` ranges of the chains, one per worker, sizes differing by at most one."""
    n_groups = max(1, min(n_chains, n_workers))
    bounds = np.linspace(0, n_chains, n_groups + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


def _to_host(tree):
    return jax.tree_util.tree_map(np.asarray, tree)


# ---------------------------------------------------------------- run on the workers
class ChainRunner:
    """One worker's part of a run, held there as a Dask actor: the kernel, the data on the
    device and the compiled programs. The caller's calls go to the worker directly, not
    through the scheduler (a round trip of milliseconds, where a task takes tens)."""

    def __init__(self, kernel_id, kernel, data, x64):
        # a kernel equal to an earlier run's (same pickled bytes) is that run's object: the
        # programs jax.jit compiled for it, keyed by the kernel, then serve this run too
        self.kernel = _worker_kernels.setdefault(kernel_id, kernel)
        self.x64 = x64
        with maybe_x64(x64):
            self.data = jax.tree_util.tree_map(jnp.asarray, data)
        self.programs: dict = {}

    def compile(self, name, states, key_data, static, args):
        """Compile program ``name``; the seconds it took (0 when it was there)."""
        from .block import _run_block

        if name in self.programs:
            return 0.0
        with maybe_x64(self.x64):
            keys = jax.random.wrap_key_data(jnp.asarray(key_data), impl=KEY_IMPL)
            start = time.perf_counter()
            self.programs[name] = _run_block.lower(states, keys, self.data, *args, kernel=self.kernel,
                                                   **static).compile()
            return time.perf_counter() - start

    def run(self, name, states, key_data, args):
        """Run program ``name`` on the group's states and keys: ``(states, key data, draws)`` on the host."""
        with maybe_x64(self.x64):
            keys = jax.random.wrap_key_data(jnp.asarray(key_data), impl=KEY_IMPL)
            states, keys, out = self.programs[name](states, keys, self.data, *args)
            return _to_host(states), np.asarray(jax.random.key_data(keys)), _to_host(out)


# ---------------------------------------------------------------- the caller's side
class DaskChains:
    """The chains of one run spread over the workers of ``client``; :meth:`program` gives
    the driver a compiled block that runs on them (module docstring)."""

    def __init__(self, client, kernel, data, n_chains: int):
        import cloudpickle  # distributed's own dependency

        self.client = resolve_client(client)
        self.kernel, self.data, self.n_chains = kernel, _to_host(data), n_chains
        self.kernel_id = hashlib.sha1(cloudpickle.dumps(kernel)).hexdigest()
        self.programs: dict = {}  # name -> (static, compile args) of every program made
        self._place()

    def _workers(self):
        return cluster_workers(self.client)

    def _place(self):
        """Form the groups on the current workers and start a runner on each (the kernel
        and the data go there once)."""
        workers = self._workers()
        self.groups = chain_groups(self.n_chains, len(workers))
        self.workers = workers[: len(self.groups)]
        x64 = bool(jax.config.jax_enable_x64)  # the caller's precision (e.g. Gibbs' float64 block)
        futures = [self.client.submit(ChainRunner, self.kernel_id, self.kernel, self.data, x64, actor=True,
                                      workers=[w], allow_other_workers=False, pure=False)
                   for w in self.workers]
        self.runners = self.client.gather(futures)

    def _each_group(self, method, states, key_data, name, *rest):
        """``runner.method(name, states, keys, *rest)`` on each group's runner; the results
        in group order. A group of one chain (in a run of several) goes as the chain twice:
        XLA compiles a ``vmap`` over one chain as unbatched code, whose rounding differs
        from the batched program's; the caller keeps the first."""
        calls = []
        for (a, b), runner in zip(self.groups, self.runners):
            index = np.arange(a, b)
            if len(index) == 1 and self.n_chains > 1:
                index = np.repeat(index, 2)
            part = jax.tree_util.tree_map(lambda x: np.asarray(x)[index], states)
            calls.append(getattr(runner, method)(name, part, key_data[index], *rest))
        return [call.result() for call in calls]

    def _with_retries(self, call):
        """``call()``; when a worker was lost, the runners again on the workers there are, then ``call()`` again."""
        for attempt in range(MAX_RETRIES + 1):
            try:
                if attempt:  # placed again inside the try: a worker lost meanwhile counts as another loss
                    self._place()
                    for name, (static, args) in list(self.programs.items()):
                        self._each_group("compile", *self._example, name, static, args)
                return call()
            except Exception as err:  # noqa: BLE001 - sorted below
                if not is_lost_worker(err):
                    raise
                if attempt == MAX_RETRIES:
                    raise ClusterError(f"the chains' workers were lost {MAX_RETRIES + 1} times; last: {err!r}") from err

    def program(self, name, states, keys, static, args):
        """A callable with the compiled block's signature, running on the workers; and the
        seconds its compilation took (the slowest worker's)."""
        self._example = (_to_host(states), np.asarray(jax.random.key_data(keys)))
        self.programs[name] = (static, args)
        seconds = self._with_retries(lambda: self._each_group("compile", *self._example, name, static, args))

        def run(states, keys, data, *args):
            del data  # the runners hold it
            states_h, key_data, args = _to_host(states), np.asarray(jax.random.key_data(keys)), _to_host(args)
            parts = self._with_retries(lambda: self._each_group("run", states_h, key_data, name, args))
            parts = [jax.tree_util.tree_map(lambda x: x[: b - a], part) for part, (a, b) in zip(parts, self.groups)]
            states, key_data, out = jax.tree_util.tree_map(lambda *xs: np.concatenate(xs), *parts)
            keys = jax.random.wrap_key_data(jnp.asarray(key_data), impl=KEY_IMPL)
            return jax.tree_util.tree_map(jnp.asarray, states), keys, out

        return run, max(seconds)

    def close(self):
        """Let the runners go (the workers drop their data and programs)."""
        self.runners = []
