"""``MedLDA(sampler="ssgrld", chain_method="dask")``: the documents sharded over the workers
of a Dask cluster, the topics and the classifier travelling between them
(:mod:`regbayes.algorithms.medlda_shards`).

The corpus is split into one shard per worker: a count matrix in memory into contiguous
runs of documents, sent once; documents read block by block (svmlight files, Parquet,
Zarr, a Dask array: :func:`regbayes.datasets.open_row_blocks`) into contiguous runs of
blocks (:func:`regbayes.inference.sharded.shard_blocks`), each worker reading its own. The
driver's host loop (:func:`regbayes.inference.run`) then runs one trajectory per step, on
the shards in turn, about :data:`TRAJECTORY_ITERATIONS` iterations each, in proportion to
the shard's documents; the running mean of Phi and the kept draws come back with
the state. The classifier refit (``refit_classifier=True``) gathers the training
documents' topic proportions from the workers.

The run is one chain: its iterations are as many as in one process and run one shard at a
time, so the cluster holds a corpus larger than one machine's memory rather than running
faster (each trajectory adds a round trip of the state, about 2 K V float64 values).
"""
from __future__ import annotations

import time
import warnings
from typing import NamedTuple

import jax
import numpy as np

from ..algorithms import medlda_shards, medlda_ssgrld
from ..datasets.row_blocks import is_row_source, open_row_blocks
from ..inference import Algorithm, run
from ..inference.distributed import ClusterError, cluster_workers, is_lost_worker, resolve_client
from ..inference.sharded import shard_blocks
from ..rng import host_seeds
from ..validation import check_labels

#: Iterations of a trajectory (a visit to one shard) for shards of equal size; at most a
#: pass over the smallest shard. Longer visits, in a random order, let the topics merge
#: more often while the chain sat on one shard and the other shards' documents kept stale
#: assignments; shorter ones cost more round trips (CHANGELOG.md, 2026-11-28).
TRAJECTORY_ITERATIONS = 10


class ShardedRunState(NamedTuple):
    """The driver's state: the travelling state, the sum of Phi over the iterations
    averaged so far and their number, and the kept ``(t, Phi, eta)``."""

    travel: medlda_ssgrld.SSGRLDState  # without z (medlda_shards.travelling)
    phi_sum: np.ndarray | None
    n_summed: int
    kept: list
    visits: int  # trajectories run


class ShardedInfo(NamedTuple):
    iteration: int  # iterations so far, at the end of the trajectory
    n_docs: int
    n_tokens: int
    topic_step_size: float
    classifier_step_size: float
    topics_finite: bool
    shard: int  # the shard this trajectory ran on


def trajectory_lengths(shard_documents, batch_size) -> np.ndarray:
    """Iterations per visit of each shard, in proportion to its documents (so that every
    shard's documents are visited as often as in one process): :data:`TRAJECTORY_ITERATIONS`
    on average, the smallest shard's at least 1 and at most a pass over it."""
    docs = np.asarray(shard_documents, np.float64)
    smallest = np.clip(round(TRAJECTORY_ITERATIONS * docs.min() / docs.mean()), 1, max(1, docs.min() // batch_size))
    return np.round(smallest * docs / docs.min()).astype(np.int64)


def _documents(est, X, y, n_shards):
    """``(per-shard documents, labels, n_words)``; labels are the raw labels in shard order."""
    if is_row_source(X):
        blocks = open_row_blocks(X, y, dtype=np.float64)
        if blocks.n_features == 0:
            raise ValueError("empty vocabulary: X has no columns (no words)")
        labels = blocks.labels()
        check_labels(labels)
        shards = shard_blocks(blocks.block_sizes, n_shards)
        starts = np.concatenate([[0], np.cumsum(blocks.block_sizes)])
        rows = [(int(starts[ids[0]]), int(starts[ids[-1] + 1])) for ids in shards]
        return [(blocks, ids) for ids in shards], labels, rows, blocks.n_features
    counts, labels = est._training_documents(X, y)
    if counts.shape[0] < n_shards:
        raise ValueError(f"{counts.shape[0]} documents cannot make {n_shards} shards")
    bounds = np.linspace(0, counts.shape[0], n_shards + 1).round().astype(int)
    rows = list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))
    return [counts[a:b] for a, b in rows], labels, rows, counts.shape[1]


def _result(call):
    """``call.result()`` of an actor call; a lost worker is a :class:`ClusterError`."""
    try:
        return call.result()
    except Exception as err:  # noqa: BLE001 - sorted below
        if is_lost_worker(err):
            raise ClusterError(f"a worker holding a shard of the documents was lost ({err!r}); the sharded MedLDA "
                               f"run cannot go on without its topic assignments: fit again") from err
        raise


def fit_sharded(est, X, y):
    """Fit ``est`` (a MedLDA with ``sampler="ssgrld"``) on shards of ``(X, y)`` (module docstring)."""
    if est.sampler != "ssgrld":
        raise ValueError("chain_method='dask' shards the documents for the stochastic sampler: use sampler='ssgrld' "
                         f"(got sampler={est.sampler!r})")
    if est.checkpoint is not None:
        raise ValueError("MedLDA with chain_method='dask' runs without a checkpoint: the topic assignments live on the "
                         "workers; pass checkpoint=None")
    if est.callback is not None or est.snapshot_every is not None:
        raise ValueError("MedLDA with chain_method='dask' takes no callback or snapshot_every: the iterations run "
                         "on the workers")
    client = resolve_client(None)
    workers = cluster_workers(client)
    documents, labels, rows, n_words = _documents(est, X, y, len(workers))
    codes, y_sign = est._encode_targets(labels)
    est._n_words = n_words
    k_init, k_run, k_refit = jax.random.split(est._fit_key(), 3)
    init_seed, est._inference_seed, *shard_seeds = (int(s) for s in host_seeds(k_init, 2 + len(workers)))
    futures = [client.submit(medlda_shards.TopicShard, docs, codes[a:b], y_sign[a:b], seed, actor=True, workers=[w],
                             allow_other_workers=False, pure=False)
               for docs, (a, b), seed, w in zip(documents, rows, shard_seeds, workers)]
    shards = client.gather(futures)
    sizes = np.array([_result(s.sizes()) for s in shards])
    n_docs, n_empty = int(sizes[:, 0].sum()), int(sizes[:, 1].sum())
    if n_docs == 0:
        raise ValueError("every document is empty (no words): nothing to learn topics from")
    if n_empty:
        warnings.warn(f"{n_empty} empty documents (no words) dropped from training", UserWarning, stacklevel=3)
    batch_size, n_iter, multi_class = est._check_settings(n_docs, len(est.classes_))
    if sizes[:, 0].min() < batch_size:
        raise ValueError(f"a shard holds {int(sizes[:, 0].min())} documents, fewer than batch_size={batch_size}: "
                         f"lower batch_size or fit on fewer workers")
    settings = dict(est._ssgrld_settings(y_sign.shape[1], batch_size, n_iter, multi_class), n_jobs=1)
    est._store_settings(batch_size=batch_size, multi_class=multi_class, topic_step_size=settings["topic_step"],
                        classifier_step_size=settings["classifier_step"])
    lengths = trajectory_lengths(sizes[:, 0], batch_size)
    q = lengths / lengths.sum()  # the share of the iterations each shard runs
    start = time.perf_counter()
    for call in [s.start(settings, n_total) for s, n_total in zip(shards, sizes[:, 0] / q)]:
        _result(call)
    compile_seconds = time.perf_counter() - start

    average_from = n_iter // 2
    keep = np.unique(np.linspace(average_from, n_iter - 1, est.n_draws).round().astype(int))
    crammer_singer = settings["crammer_singer"]
    eta_check = medlda_ssgrld.eta_divergence_check(n_docs, y_sign.shape[1], est.n_topics, crammer_singer, est.C,
                                                   est.margin, est.prior_scale)

    def step(seed, state, data):
        s = state.visits % len(shards)  # the shards in turn
        n = min(int(lengths[s]), n_iter - state.travel.iteration)
        seeds = np.random.default_rng(seed).integers(2**31 - 1, size=n)
        out = _result(shards[s].trajectory(seeds, state.travel, average_from, keep))
        phi_sum = out.phi_sum if state.phi_sum is None else (
            state.phi_sum if out.phi_sum is None else state.phi_sum + out.phi_sum)
        last = out.infos[-1]
        info = ShardedInfo(out.state.iteration, last.n_docs, last.n_tokens, last.topic_step_size,
                           last.classifier_step_size, last.topics_finite, s)
        return ShardedRunState(out.state, phi_sum, state.n_summed + out.n_summed, state.kept + out.kept,
                               state.visits + 1), info

    algorithm = Algorithm(step, "MedLDA[ssgrld, sharded]", check=lambda state, info: eta_check(state.travel, info))
    first = medlda_shards.initial_state(init_seed, est.n_topics, n_words, est.beta, y_sign.shape[1], crammer_singer)
    n_steps = int(np.searchsorted(np.cumsum(np.resize(lengths, n_iter)), n_iter)) + 1  # trajectories to n_iter
    result = run(algorithm, ShardedRunState(first, None, 0, [], 0), None, k_run, n_iter=n_steps,
                 progress=est.progress, desc=algorithm.name)
    state = result.state
    draws = [(phi, eta) for _, phi, eta in sorted(state.kept, key=lambda kept: kept[0])]
    mean = state.phi_sum / state.n_summed
    topics = mean / mean.sum(axis=1, keepdims=True)
    refitted, refit_seconds = None, None
    if est.refit_classifier:
        begin = time.perf_counter()
        parts = [_result(c) for c in [s.proportions(topics, est.alpha, est.n_transform_sweeps, est._inference_seed)
                                      for s in shards]]
        features, codes_kept, sign_kept = (np.concatenate(x) for x in zip(*parts))
        refitted = est._refit(features, codes_kept, sign_kept, multi_class, k_refit)
        refit_seconds = time.perf_counter() - begin
    est.snapshots_ = []
    est._store(result._replace(draws=draws, compile_seconds=result.compile_seconds + compile_seconds), topics,
               refitted, refit_seconds)
    est.n_iter_ = int(state.travel.iteration)
    est.trace_["shard_documents"] = sizes[:, 0].tolist()
    est.trace_["trajectory_iterations"] = lengths.tolist()
    return est
