"""``BayesianSVC.fit`` on data larger than memory: rows read from disk block by block,
into a pool in this process or, with ``chain_method="dask"``, as shards on Dask workers
(:mod:`regbayes.inference.sharded`).

``fit(path_or_dask_collection, y)`` opens the data as row blocks
(:func:`regbayes.datasets.row_blocks.open_row_blocks`: Parquet, Zarr, svmlight files, a
Dask array or dataframe), reads every label once (for the classes), reads a sample of
blocks for warm-up's calibration and the starting scale, and then samples with SSGLD or
SSGNHT from a pool of blocks that a background thread refills from disk
(:mod:`regbayes.inference.streaming`). Memory holds the labels, the pool (at most
``streaming.POOL_BYTES``), a few blocks read ahead and the calibration sample.
"""
from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp

from .. import potentials
from ..datasets.row_blocks import open_row_blocks
from ..inference import sample
from ..inference.sharded import ShardedData
from ..inference.streaming import BlockStream
from ..potentials import PaddedRows, SVMData, csr_to_padded
from ..samplers import defaults
from ..validation import FLOAT32_SCALE, check_feature_scale, check_finite_features
from .svm_noise import NOISE_ROWS, shard_noise_calibration, stream_noise_calibration

#: How often, on average, each row read from disk is used by the minibatches before its
#: block leaves the pool: the pool adds ``BLOCK_REUSE`` times the minibatch noise for rows
#: in random order (:mod:`regbayes.inference.streaming`), and the disk must supply
#: ``batch_size / BLOCK_REUSE`` rows per step.
BLOCK_REUSE = 2.0
#: Steps run on a fixed pool between two refills (rounded to whole draws): a compiled
#: call long enough that the driver's work between chunks does not slow it.
STEPS_PER_CHUNK = 2048
#: Longest trajectory on one shard, in units of ``N / batch_size`` steps (sharded fits):
#: what the shards' control variates leave of their pull on the chains grows with it
#: (measured: BENCHMARKS.md).
TRAJECTORY_SHARE = 5.0
#: Blocks read for the calibration sample (at most; ``NOISE_ROWS`` rows in all).
CALIBRATION_BLOCKS = 64


def fit_from_blocks(est, X, y):
    """Fit ``est`` (a :class:`~regbayes.models.bayes_svm.BayesianSVC`) on a row source ``X``
    (module docstring); ``y`` names the label column or array, or holds the labels."""
    if est.sampler not in ("ssgld", "ssgnht"):
        raise ValueError(f"data read from disk need a minibatch sampler: sampler='ssgld' or 'ssgnht', got {est.sampler!r}")
    if est.checkpoint is not None:
        raise ValueError("a fit on data read block by block runs without a checkpoint")
    blocks = open_row_blocks(X, y, dtype=np.float32)
    n, d = blocks.n_rows, blocks.n_features
    est._encode_labels(np.unique(blocks.labels()))
    est.n_features_in_ = d
    if blocks.feature_names is not None:
        est.feature_names_in_ = np.asarray(blocks.feature_names, dtype=object)
    batch_size = est._batch_size(n)
    n_classes = len(est.classes_)
    dim = d + int(est.fit_intercept)
    shape = (dim,) if n_classes == 2 else (n_classes, dim)
    key = est._fit_key()
    seed = int(jax.random.randint(jax.random.fold_in(key, 1), (), 0, 2**31 - 1))
    prepare = _block_preparation(est, blocks)
    sample_rows = _calibration_sample(blocks, prepare, np.random.default_rng(seed))

    sizes = np.asarray(blocks.block_sizes, np.float64)
    mean_block = float(np.sum(sizes**2) / np.sum(sizes))  # E[m_B] over blocks drawn with p = m_B / N
    steps_per_block = max(1, round(BLOCK_REUSE * mean_block / batch_size))
    n_warmup, thin = defaults.run_lengths(est.sampler, est.n_warmup, est.thin)
    sample_X = sample_rows[0]
    sigma_ref = potentials.sigma_ref(sample_X, est.C, est.prior_scale, est.fit_intercept, n_rows=n)
    h, preconditioner = defaults.step_schedule(
        est.sampler, schedule=est.schedule, step_size=est.step_size, n_data=n, batch_size=batch_size,
        n_params=dim, n_warmup=n_warmup, sigma_ref=sigma_ref, prior_scale=est.prior_scale,
    )
    est._store_settings(n_warmup=n_warmup, thin=thin, batch_size=batch_size, step_size=h, preconditioner=preconditioner,
                        initial_scale=defaults.start_scale(est.sampler, sigma_ref, est.prior_scale))
    est.exact_rows_ = np.zeros(0, int)
    hyper = [jnp.asarray(v, jnp.float32) for v in (est.C, est.margin, est.prior_scale, n)]

    def make_data(rows, slot_rows):
        X_pool, labels = rows
        if blocks.sparse:
            X_pool = PaddedRows(*X_pool, dim)
        return SVMData(X_pool, labels, *hyper[:3], slot_rows=slot_rows, n_total=hyper[3])

    steps_per_chunk = thin * max(1, STEPS_PER_CHUNK // thin)
    calibration = None
    if est.chain_method == "dask":  # shards on the workers, the chains moving between them
        # trajectories of at most TRAJECTORY_SHARE N / b steps (regbayes.inference.sharded)
        longest = max(1, int(TRAJECTORY_SHARE * n / batch_size))
        steps_per_chunk = thin * max(1, min(STEPS_PER_CHUNK, longest) // thin)
        if steps_per_chunk > longest:
            warnings.warn(
                f"trajectories of {steps_per_chunk} steps (thin={thin}) are long next to the chains' relaxation on "
                f"{n} rows with batch_size={batch_size}: each shard's own posterior then pulls the chains, and the "
                f"draws may be too wide or too narrow. Lower thin to {longest} or less, or fit in one process.",
                UserWarning, stacklevel=3)

        def shard_data(rows, n_rows, n_scale):  # the control variate starts at zero (regbayes.inference.sharded)
            return make_data(rows, np.asarray([n_rows], np.int32))._replace(
                n_total=np.float32(n_scale), grad_offset=np.zeros(shape, np.float32))

        head = sp.csr_matrix(sample_X[:2]) if blocks.sparse else sample_X[:2]
        example = shard_data(prepare(head, est.classes_[sample_rows[1][:2]], 0)[:2], 2, 2.0)
        source = ShardedData(blocks, lambda X, y, i: (prepare(X, y, i)[:2], len(y)), shard_data, example,
                             steps_per_chunk=steps_per_chunk, seed=seed)
        if n_warmup >= 100:
            calibration = shard_noise_calibration(est, (sample_X, *sample_rows[1:]), h, n_warmup, int(np.prod(shape)), n,
                                                  source)
    else:
        source = BlockStream(blocks, lambda X, y, i: prepare(X, y, i)[:2], make_data, steps_per_block=steps_per_block,
                             steps_per_chunk=steps_per_chunk, seed=seed, row_bytes=4 * (dim + 1))
        if source.n_slots * source.capacity <= batch_size:
            source.close()
            raise ValueError(f"the pool of {source.n_slots} blocks of at most {source.capacity} rows holds no more rows "
                             f"than batch_size={batch_size}: store the data in larger blocks or lower batch_size")
        if n_warmup >= 100:
            calibration = stream_noise_calibration(
                est, (sample_X, *sample_rows[1:]), h, n_warmup, int(np.prod(shape)), n, steps_per_block)
    est.noise_correction_ = calibration is not None
    kernel = est._kernel(batch_size, preconditioner)
    try:
        result = sample(kernel, source, jnp.zeros((est.n_chains, *shape), jnp.float32), key, n_warmup=n_warmup,
                        n_draws=est.n_draws, thin=thin, step_size=h, initial_scale=est.initial_scale_, progress=est.progress,
                        desc=f"BayesianSVC[{est.sampler}]", calibrate=calibration, chain_method=est.chain_method)
    finally:
        if est.chain_method != "dask":
            source.close()
    est.step_scale_ = None if calibration is None else calibration.scales.reshape(shape)
    est._n_train = n
    est._store(result, shape, d)
    if est.chain_method == "dask":
        est.trace_.update(shard_rows=source.chains.shard_rows.tolist(), steps_per_visit=steps_per_chunk)
    else:
        est.trace_.update(blocks_read=source.blocks_read, n_slots=source.n_slots, steps_per_block=steps_per_block,
                          disk_wait_seconds=source.wait_seconds)
    est._warn_if_escaped(result.potential, n, int(np.prod(shape)))
    return est


def _block_preparation(est, blocks):
    """``prepare(X, y, i) -> (X', labels, codes)``: block ``i`` checked (finite, in
    float32's range), with the intercept column appended, as the sampler reads it
    (dense, or padded sparse rows), its labels (+1/-1 binary, else class codes) and codes."""
    classes = est.classes_
    width = max(1, (blocks.max_row_nnz or 0) + int(est.fit_intercept))

    def prepare(X, y, i):
        try:
            check_finite_features(X)
            check_feature_scale(X, "BayesianSVC", largest=FLOAT32_SCALE[1])
            codes = np.searchsorted(classes, y)
            if np.any(codes >= len(classes)) or np.any(classes[np.minimum(codes, len(classes) - 1)] != y):
                raise ValueError(f"labels outside the classes {classes.tolist()} read before (has the file changed?)")
        except ValueError as error:
            raise ValueError(f"{blocks.describe(i)}: {error}") from error
        labels = (2.0 * codes - 1.0).astype(np.float32) if len(classes) == 2 else codes.astype(np.int32)
        if blocks.sparse:  # padded to the widest row of the data set: one shape for every block
            padded = csr_to_padded(X, dtype=np.float32, intercept=est.fit_intercept, width=width)
            return (np.asarray(padded.indices), np.asarray(padded.values)), labels, codes
        X = np.asarray(X, np.float32)
        if est.fit_intercept:
            X = np.hstack([X, np.ones((X.shape[0], 1), np.float32)])
        return X, labels, codes

    return prepare


def _calibration_sample(blocks, prepare, rng):
    """Rows of up to ``CALIBRATION_BLOCKS`` blocks drawn with probability proportional to
    their rows, ``NOISE_ROWS`` in all, drawn without replacement within each block:
    ``(X, codes, block of each row, rows of that block)``, ``X`` dense as read."""
    sizes = np.asarray(blocks.block_sizes, np.int64)
    nonempty = np.flatnonzero(sizes)
    chosen = rng.choice(nonempty, size=min(CALIBRATION_BLOCKS, len(nonempty)), replace=False,
                        p=sizes[nonempty] / sizes.sum())
    per_block = max(2, NOISE_ROWS // len(chosen))
    parts, codes, ids, population = [], [], [], []
    for i in np.sort(chosen):
        X, y = blocks.read(int(i))
        take = np.sort(rng.choice(len(y), size=min(per_block, len(y)), replace=False))
        rows = X[take]
        _, _, block_codes = prepare(rows, np.asarray(y)[take], int(i))
        parts.append(rows.toarray() if blocks.sparse else np.asarray(rows, np.float64))
        codes.append(block_codes)
        ids.append(np.full(len(take), i))
        population.append(np.full(len(take), len(y)))
    return np.concatenate(parts), np.concatenate(codes), np.concatenate(ids), np.concatenate(population)
