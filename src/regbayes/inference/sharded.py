"""Sharded stochastic-gradient sampling on Dask workers (distributed SGLD, Ahn, Shahbaz &
Welling 2014): the rows stay on the workers, the chains travel.

The blocks of a data set (:mod:`regbayes.datasets.row_blocks`) are split into ``W``
contiguous shards of about equal rows, one per worker; each worker reads its own blocks
once and holds them on its device (a :class:`ShardRunner`). The chains are split into
``W`` groups of fixed sizes ``n_s``; every round of ``L`` steps (a *trajectory*, the
driver's chunk) a fresh random permutation sends ``n_s`` of the chains to shard ``s``, so
a chain visits shard ``s`` with probability ``q_s = n_s / n_chains``. There its minibatch
subgradient is scaled by ``m_s / (q_s b)`` (``m_s`` the shard's rows, ``b`` the batch),
which keeps it unbiased over the visits: ``sum_s q_s (m_s / q_s) g_s = sum_i g_i``. Only
the chains' states, keys and draws travel; the group sizes are fixed, so each worker
compiles one program.

A shard's deviation ``delta_s(eta) = (m_s / q_s) g_s - sum_s m_s g_s`` (``g_s`` its mean
row subgradient) stays in a chain's estimate for its ``L`` steps there: each shard pulls
the chains toward a posterior of its own. Each shard therefore subtracts a control
variate, ``delta_s(eta_0)`` at the centre ``eta_0`` of the chains' draws after each
warm-up window, computed exactly on its worker: it is zero on average over the visits
(``sum_s q_s delta_s = 0``), so the estimate stays unbiased, and what remains,
``delta_s(eta) - delta_s(eta_0)``, is as small as the posterior is narrow. It is a pull
held for ``L`` steps, of variance ``sigma^2 = sum_s q_s (delta_s(eta) - delta_s(eta_0))^2``
between visits; warm-up's calibration
(:func:`regbayes.models.svm_noise.shard_noise_calibration`) adds to the minibatch noise
the white noise that widens each coordinate as much, ``c(u) L sigma^2`` per step with
``u`` the trajectory in the coordinate's relaxation times
(:func:`~regbayes.models.svm_noise.pull_noise_factor`): about ``L sigma^2`` for short
trajectories (as the pool's of :mod:`regbayes.inference.streaming`, one block per visit),
about ``2 sigma^2 / (a kappa)`` for long ones, where the pull only moves the chains'
centre. Short trajectories cost a round trip each.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..rng import KEY_IMPL
from .distributed import ChainRunner, DaskChains, _to_host, chain_groups


def shard_blocks(block_sizes, n_shards: int) -> list[np.ndarray]:
    """Contiguous runs of the non-empty blocks, ``n_shards`` of them with about equal rows."""
    sizes = np.asarray(block_sizes, np.int64)
    blocks = np.flatnonzero(sizes)
    if len(blocks) < n_shards:
        raise ValueError(f"{len(blocks)} non-empty blocks cannot make {n_shards} shards: store the data in more blocks")
    cut = np.searchsorted(np.cumsum(sizes[blocks]), sizes.sum() * np.arange(1, n_shards) / n_shards, side="right")
    cut = np.clip(cut, np.arange(1, n_shards), len(blocks) - np.arange(n_shards - 1, 0, -1))
    return np.split(blocks, np.maximum.accumulate(cut))


class ShardRunner(ChainRunner):
    """One worker's shard, held there as a Dask actor: its blocks read once (through
    ``blocks``, a RowBlocks) and made into the sampler's data by ``make_data(rows, n_rows,
    scale)``, the kernel and the compiled programs."""

    def __init__(self, kernel_id, kernel, blocks, block_ids, prepare, make_data, q, x64):
        parts = [prepare(*blocks.read(int(i)), int(i)) for i in block_ids]
        rows = jax.tree_util.tree_map(lambda *xs: np.concatenate(xs), *[p for p, _ in parts])
        self.n_rows = int(sum(n for _, n in parts))
        super().__init__(kernel_id, kernel, make_data(rows, self.n_rows, self.n_rows / q), x64)

    def rows(self):
        return self.n_rows

    def set_offset(self, offset):
        """Install this shard's control variate (``data.grad_offset``; the programs keep their shapes)."""
        self.data = self.data._replace(grad_offset=jnp.asarray(offset, self.data.grad_offset.dtype))

    def gradient_sum(self, position, gradient):
        """``gradient(position, data)`` on this shard (e.g. its rows' summed hinge subgradient), on the host."""
        return np.asarray(gradient(jnp.asarray(position), self.data))


class ShardedChains(DaskChains):
    """The chains of one run moving between the shards of ``client``'s workers (module
    docstring); the driver's ``chains`` for ``chain_method="dask"`` with sharded data."""

    def __init__(self, client, kernel, sharded, n_chains: int):
        self.sharded = sharded
        super().__init__(client, kernel, sharded.data, n_chains)
        self._rng = np.random.default_rng(sharded.seed)

    def _place(self):
        workers = self._workers()
        n_shards = min(len(workers), self.n_chains)
        self.groups = chain_groups(self.n_chains, n_shards)
        self.workers = workers[:n_shards]
        self.q = np.array([b - a for a, b in self.groups]) / self.n_chains
        s = self.sharded
        x64 = bool(jax.config.jax_enable_x64)
        futures = [self.client.submit(ShardRunner, self.kernel_id, self.kernel, s.blocks, ids, s.prepare, s.make_data, q, x64,
                                      actor=True, workers=[w], allow_other_workers=False, pure=False)
                   for w, ids, q in zip(self.workers, shard_blocks(s.blocks.block_sizes, n_shards), self.q)]
        self.runners = self.client.gather(futures)
        self.shard_rows = np.array([r.rows().result() for r in self.runners])
        if getattr(self, "offsets", None) is not None and len(self.offsets) == n_shards:
            self.set_offsets(self.offsets)  # runners placed again after a lost worker
        else:
            self.offsets = None

    def set_offsets(self, offsets):
        """Give shard ``s`` the control variate ``offsets[s]`` (module docstring)."""
        self.offsets = np.asarray(offsets)
        for call in [r.set_offset(o) for r, o in zip(self.runners, self.offsets)]:
            call.result()

    def program(self, name, states, keys, static, args):
        """As :meth:`DaskChains.program`, each call one trajectory: the chains permuted over the shards first."""
        run_groups, seconds = super().program(name, states, keys, static, args)

        def run(states, keys, data, *args):
            order = self._rng.permutation(self.n_chains)  # order[k]: the chain in slot k of the groups
            back = np.argsort(order)
            take = lambda x: np.asarray(x)[order]  # noqa: E731 - to the host: the groups go to the workers from there
            key_data = np.asarray(jax.random.key_data(keys))[order]
            states, keys, out = run_groups(jax.tree_util.tree_map(take, states),
                                           jax.random.wrap_key_data(jnp.asarray(key_data), impl=KEY_IMPL), data, *args)
            undo = lambda x: jnp.asarray(np.asarray(x)[back])  # noqa: E731
            key_data = np.asarray(jax.random.key_data(keys))[back]
            out = jax.tree_util.tree_map(lambda x: np.asarray(x)[back], out)
            return (jax.tree_util.tree_map(undo, states), jax.random.wrap_key_data(jnp.asarray(key_data), impl=KEY_IMPL),
                    out)

        return run, seconds

    def gradient_sums(self, position, gradient) -> np.ndarray:
        """Each shard's ``gradient(position, data)``, (n_shards, ...)."""
        calls = [r.gradient_sum(_to_host(position), gradient) for r in self.runners]
        return np.stack([c.result() for c in calls])


class ShardedData:
    """Data that live as shards on the workers of a Dask cluster (module docstring), for
    :func:`regbayes.inference.sample` with ``chain_method="dask"``.

    ``blocks`` (a RowBlocks, pickled to the workers, each reading its own blocks),
    ``prepare(X, y, i) -> (rows, n)`` as a worker makes block ``i`` into arrays,
    ``make_data(rows, n_rows, n_scale)`` the sampler's data of a shard (its minibatches
    scaled by ``n_scale / b``), ``example`` data of the same structure for tracing on the
    caller's side, ``steps_per_chunk`` the trajectory length ``L`` and ``seed`` that of
    the chains' permutations.
    """

    def __init__(self, blocks, prepare, make_data, example, *, steps_per_chunk: int, seed: int):
        if steps_per_chunk < 1:
            raise ValueError(f"steps_per_chunk (the trajectory) must be >= 1, got {steps_per_chunk}")
        self.blocks, self.prepare, self.make_data, self.data = blocks, prepare, make_data, example
        self.steps_per_chunk, self.seed = int(steps_per_chunk), int(seed)
        self.chains: ShardedChains | None = None

    def start(self, client, kernel, n_chains):
        """The run's :class:`ShardedChains` (kept as :attr:`chains` for the calibration's calls)."""
        self.chains = ShardedChains(client, kernel, self, n_chains)
        return self.chains
