"""Minibatches from data larger than memory (regbayes.inference.streaming): the pool's
row draw, its unbiased estimate, the calibration of the pool's noise against a measured
long-run variance, and BayesianSVC fits on Parquet / Zarr / svmlight files against the
exact posterior; bad input."""
from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from regbayes import BayesianSVC
from regbayes.diagnostics import compare_to_reference
from regbayes.datasets.row_blocks import RowBlocks
from regbayes.inference.streaming import BlockStream
from regbayes.models import svm_noise, svm_stream
from regbayes.potentials import SVMData, block_noise, build_potential
from regbayes.potentials.minibatch import rows_from_slots


class ArrayBlocks(RowBlocks):
    """In-memory data cut into blocks of ``size`` rows (a RowBlocks of the caller's own)."""

    def __init__(self, X, y, size, bad_block=None):
        self.X, self.y, self.bad_block = X, y, bad_block
        super().__init__("arrays", [min(size, len(y) - a) for a in range(0, len(y), size)], X.shape[1], np.float64)

    def _read(self, i):
        if i == self.bad_block:
            raise OSError(f"disk error in block {i}")
        return self.X[self._starts[i]:self._starts[i + 1]], self.y[self._starts[i]:self._starts[i + 1]]

    def labels(self):
        return self.y

    def _where(self, i):
        return f"block {i} of the arrays"


def test_rows_from_slots_draws_each_stored_row_of_a_slot_uniformly():
    slot_rows = jnp.asarray([3, 1, 0, 5], jnp.int32)  # slot 2 empty: its draws fall on its first row
    idx = np.asarray(rows_from_slots(jax.random.key(0), slot_rows, 8, 200_000))
    counts = np.bincount(idx, minlength=32)
    expected = np.zeros(32)
    for s, n in enumerate([3, 1, 0, 5]):
        expected[s * 8:s * 8 + max(n, 1)] = 200_000 / 4 / max(n, 1)
    assert set(np.flatnonzero(counts)) <= set(np.flatnonzero(expected))
    # each count is binomial: within 5 sds of its mean
    assert np.all(np.abs(counts - expected) <= 5 * np.sqrt(expected + 1))


def _pool_data(X, y, blocks, capacity, N):
    rows = [np.arange(a, b) for a, b in blocks]
    Xp = np.zeros((len(rows) * capacity, X.shape[1]), np.float32)
    yp = np.zeros(len(rows) * capacity, np.float32)
    for s, r in enumerate(rows):
        Xp[s * capacity:s * capacity + len(r)], yp[s * capacity:s * capacity + len(r)] = X[r], y[r]
    one = jnp.float32(1.0)
    return SVMData(jnp.asarray(Xp), jnp.asarray(yp), one, one, one, slot_rows=jnp.asarray([len(r) for r in rows], jnp.int32),
                   n_total=jnp.float32(N))


def test_pool_estimate_is_n_over_p_times_the_slots_mean_gradients():
    """Given the pool, E[dU~] = prior term + N * mean over slots of each block's mean row
    subgradient (slots drawn uniformly, rows uniformly within a slot): averaged over
    blocks drawn with p = m_B / N that is the full-data subgradient."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3)).astype(np.float32)
    y = np.where(rng.random(60) < 0.5, -1.0, 1.0).astype(np.float32)
    eta = jnp.asarray([0.3, -0.2, 0.1], jnp.float32)
    blocks = [(0, 10), (10, 40)]
    data = _pool_data(X, y, blocks, 30, 60)
    potential = build_potential(20)
    keys = jax.random.split(jax.random.key(1), 20_000)
    grads = jax.vmap(lambda k: potential.stochastic_value_and_subgrad(k, eta, data)[1])(keys)
    margins = 1.0 - y * (X @ np.asarray(eta))
    row_grad = np.where(margins[:, None] > 0, -y[:, None] * X, 0.0)
    expected = np.asarray(eta) + 60 * np.mean([row_grad[a:b].mean(axis=0) for a, b in blocks], axis=0)
    se = np.asarray(grads).std(axis=0) / np.sqrt(len(keys))
    np.testing.assert_array_less(np.abs(np.asarray(grads).mean(axis=0) - expected), 5 * se)


def test_block_noise_matches_the_long_run_variance_of_a_stream():
    """The calibration's noise, V + r N^2 Var_B(g_B), against the variance of sums over
    windows of the stream's whitened minibatch subgradients at a fixed eta (tolerance:
    the windows' sampling error, about 10 %)."""
    from regbayes.datasets import make_higgs_like

    N, m, b, r = 4000, 50, 10, 5
    X, y = make_higgs_like(N, random_state=0)[:2]
    est = BayesianSVC(sampler="ssgld")
    est._encode_labels(np.unique(y))
    est.batch_size_, est.preconditioner_, est.exact_rows_ = b, None, np.zeros(0, int)
    blocks = ArrayBlocks(X, y, m)
    prepare = svm_stream._block_preparation(est, blocks)
    sample = svm_stream._calibration_sample(blocks, prepare, np.random.default_rng(0))
    calibration = svm_noise.stream_noise_calibration(est, sample, 0.1, 1000, 29, N, r)
    eta = np.zeros(29)
    eta[:28] = 0.05
    scale = np.full(29, 0.05)
    predicted = calibration.noise(eta, scale)
    one = jnp.float32(1.0)
    stream = BlockStream(blocks, lambda X_, y_, i: prepare(X_, y_, i)[:2],
                         lambda rows, slots: SVMData(*rows, one, one, one, slot_rows=slots, n_total=jnp.float32(N)),
                         steps_per_block=r, steps_per_chunk=4 * r, seed=1)
    potential = build_potential(b)
    grad = jax.jit(jax.vmap(lambda k, d: potential.stochastic_value_and_subgrad(k, jnp.asarray(eta, jnp.float32), d)[1],
                            in_axes=(0, None)))
    sums = []
    for c in range(1500):
        sums.append(np.asarray(grad(jax.random.split(jax.random.key(c), 4 * r), stream.data)).sum(axis=0) * scale)
        stream.advance(4 * r)
    stream.close()
    window = 10  # chunks of 4r steps: 200 steps, ten times the pool's life
    totals = np.asarray(sums).reshape(-1, window, 29).sum(axis=1)
    measured = totals.var(axis=0) / (window * 4 * r)
    ratio = np.median(measured / predicted)
    assert 0.85 < ratio < 1.15
    # the pool's term is most of it: without it the prediction would be far too low
    minibatch_only = svm_noise.noise_calibration(est, X, np.searchsorted(est.classes_, y), 0.1, 1000, b, 29).noise(eta, scale)
    assert np.median(measured / minibatch_only) > 1.5


def test_block_noise_full_covariance_is_the_blocks_less_their_sampling_error():
    """``full=True``: the covariance over blocks of the sampled rows' mean whitened
    subgradient, less the mean over blocks of ``(1 - n_B / m_B) S_B / n_B`` (``S_B`` the
    block's row covariance), by its definition; its diagonal is the per-coordinate noise."""
    rng = np.random.default_rng(0)
    X = np.hstack([rng.standard_t(3, size=(60, 3)), np.ones((60, 1))])
    y, eta = rng.choice([-1.0, 1.0], 60), rng.normal(size=4) * 0.3
    blocks, block_rows = np.repeat(np.arange(6), 10), np.repeat([12, 10, 30, 15, 10, 20], 10)
    T = np.tril(rng.normal(size=(4, 4))) + 2 * np.eye(4)
    full = block_noise(X, y, blocks, block_rows, eta, 1.5, 1.0, T, full=True)
    margins = y * (X @ eta)
    g = (-1.5 * y * (margins < 1.0))[:, None] * X @ T  # each row's whitened hinge subgradient
    means = np.stack([g[blocks == B].mean(0) for B in range(6)])
    sampling = np.mean([(1 - 10 / block_rows[10 * B]) * np.cov(g[blocks == B].T) / 10 for B in range(6)], axis=0)
    np.testing.assert_allclose(full, np.cov(means.T) - sampling, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.diag(full), block_noise(X, y, blocks, block_rows, eta, 1.5, 1.0, T), rtol=1e-10)
    with pytest.raises(ValueError, match="dense"):
        block_noise(X, y, blocks, block_rows, eta, 1.5, 1.0, np.ones(4), full=True)


def test_block_noise_needs_two_blocks():
    X, y = np.ones((4, 2)), np.ones(4)
    with pytest.raises(ValueError, match="two blocks"):
        block_noise(X, y, np.zeros(4), np.full(4, 4), np.zeros(2), 1.0, 1.0, np.ones(2))


def _write_parquet(path, X, y, row_group):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table({**{f"x{j}": X[:, j] for j in range(X.shape[1])}, "label": y})
    pq.write_table(table, path, row_group_size=row_group)
    return str(path)


def _write_zarr(path, X, y, chunk):
    zarr = pytest.importorskip("zarr")
    group = zarr.open_group(str(path), mode="w")
    group.create_array("X", shape=X.shape, chunks=(chunk, X.shape[1]), dtype=X.dtype)[:] = X
    group.create_array("y", shape=y.shape, chunks=(chunk,), dtype=y.dtype)[:] = y
    return str(path)


@pytest.fixture
def short_chunks(monkeypatch):
    """Chunks of 200 steps: with blocks of 100 rows and batch 20 the pool then holds 20
    blocks, 10 % of 20,000 rows (the library's 2,048-step chunks are for data sets of
    millions of rows)."""
    monkeypatch.setattr(svm_stream, "STEPS_PER_CHUNK", 200)


def test_fit_on_parquet_matches_the_exact_posterior(tmp_path, short_chunks):
    """SSGLD on 20,000 rows of the paper's 2-D data read from 200 Parquet row groups,
    against Gibbs with data augmentation on the same rows (exact): posterior means within
    0.15 posterior sds, sds within 0.9-1.1 (the Monte Carlo errors are about 0.04 and 0.025)."""
    from regbayes.datasets import make_bayes_svm_2d

    X, y = make_bayes_svm_2d(20_000, random_state=0)[:2]
    path = _write_parquet(tmp_path / "train.parquet", X.astype(np.float32), y, 100)
    model = BayesianSVC(sampler="ssgld", n_draws=300, n_chains=4, thin=200, batch_size=20, n_warmup=20_000, random_state=1)
    model.fit(path, "label")
    assert model.trace_["n_slots"] == 20 and model.trace_["blocks_read"] > 5_000
    exact = BayesianSVC(sampler="gibbs", n_draws=2000, n_chains=1, random_state=0).fit(X, y)
    draws = np.concatenate([model.coef_draws_, model.intercept_draws_[..., None]], -1)
    reference = np.concatenate([exact.coef_draws_, exact.intercept_draws_[..., None]], -1)
    comparison = compare_to_reference(draws, reference)
    assert np.all(np.abs(comparison.mean_error) < 0.15)
    assert np.all((comparison.sd_ratio > 0.9) & (comparison.sd_ratio < 1.1))
    assert model.feature_names_in_.tolist() == ["x0", "x1"]
    pd = pytest.importorskip("pandas")
    assert abs(model.score(pd.DataFrame(X, columns=["x0", "x1"]), y) - exact.score(X, y)) < 0.01


def test_the_draws_depend_on_the_seed_and_the_rows_not_on_the_format(tmp_path, short_chunks):
    """Parquet, Zarr and a Dask array with the same blocks give the same draws; another seed others."""
    from regbayes.datasets import make_bayes_svm_2d

    X, y = make_bayes_svm_2d(4_000, random_state=0)[:2]
    X = X.astype(np.float32)
    settings = dict(sampler="ssgnht", n_draws=20, thin=10, batch_size=20, n_warmup=200)
    parquet = BayesianSVC(**settings, random_state=3).fit(_write_parquet(tmp_path / "d.parquet", X, y, 100), "label")
    zarr_fit = BayesianSVC(**settings, random_state=3).fit(_write_zarr(tmp_path / "d.zarr", X, y, 100))
    np.testing.assert_array_equal(parquet.coef_draws_, zarr_fit.coef_draws_)
    da = pytest.importorskip("dask.array")
    dask_fit = BayesianSVC(**settings, random_state=3).fit(da.from_array(X, chunks=(100, 2)), y)
    np.testing.assert_array_equal(parquet.coef_draws_, dask_fit.coef_draws_)
    other = BayesianSVC(**settings, random_state=4).fit(str(tmp_path / "d.zarr"))
    assert not np.array_equal(parquet.coef_draws_, other.coef_draws_)


def test_fit_on_svmlight_files_reads_sparse_blocks(tmp_path, short_chunks):
    """Twenty svmlight files (sparse rows, padded to the widest row of all files) against
    the same rows in memory: the posterior means agree within the posterior's sd (each
    run's Monte Carlo error is about 0.2 sd)."""
    from sklearn.datasets import dump_svmlight_file

    from regbayes.datasets import make_bayes_svm_2d

    X, y = make_bayes_svm_2d(20_000, random_state=0)[:2]
    X[np.abs(X) < 0.3] = 0.0  # sparse rows of unequal widths
    for k in range(20):
        dump_svmlight_file(X[k * 1000:(k + 1) * 1000], y[k * 1000:(k + 1) * 1000], str(tmp_path / f"part-{k:02d}.svm"))
    settings = dict(sampler="ssgld", n_draws=100, n_chains=2, thin=200, batch_size=20, n_warmup=10_000, random_state=0)
    streamed = BayesianSVC(**settings).fit(str(tmp_path / "*.svm"))
    in_memory = BayesianSVC(**settings).fit(X, y)
    spread = in_memory.coef_draws_.reshape(-1, 2).std(axis=0)
    np.testing.assert_array_less(np.abs(streamed.coef_ - in_memory.coef_), 1.0 * spread)


def test_a_pool_that_holds_much_of_the_data_warns(tmp_path):
    from regbayes.datasets import make_bayes_svm_2d

    X, y = make_bayes_svm_2d(2_000, random_state=0)[:2]
    with pytest.warns(UserWarning, match="pool of .* holds about"):
        BayesianSVC(sampler="ssgld", n_draws=5, n_warmup=0, thin=1).fit(_write_zarr(tmp_path / "d.zarr", X, y, 100))


def test_bad_input_is_refused_with_the_block_named(tmp_path):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(3_000, 3)), np.where(rng.random(3_000) < 0.5, -1, 1)
    path = _write_zarr(tmp_path / "d.zarr", X, y, 500)
    with pytest.raises(ValueError, match="minibatch sampler"):
        BayesianSVC(sampler="gibbs").fit(path)
    with pytest.raises(ValueError, match="without a checkpoint"):
        BayesianSVC(sampler="ssgld", checkpoint=str(tmp_path / "run.ckpt")).fit(path)
    with pytest.raises(ValueError, match="sample_more continues fits on data in memory"):
        BayesianSVC(sampler="ssgld", n_draws=5, n_warmup=0).fit(X, y).sample_more(path, None, 5)
    with pytest.raises(FileNotFoundError):
        BayesianSVC(sampler="ssgld").fit(str(tmp_path / "missing.parquet"), "label")
    X[2_600, 1] = np.nan
    bad = _write_zarr(tmp_path / "bad.zarr", X, y, 500)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=r"chunk 5 .*NaN"):
            BayesianSVC(sampler="ssgld", n_draws=50, n_warmup=0, thin=1, random_state=0).fit(bad)
        with pytest.raises(OSError, match="disk error in block 2"):
            BayesianSVC(sampler="ssgld", n_draws=50, n_warmup=0, thin=1).fit(ArrayBlocks(X[:2_500], y[:2_500], 500, bad_block=2))


def test_a_multiclass_fit_from_disk_predicts_as_the_fit_in_memory(tmp_path):
    """Three classes (Crammer-Singer hinge, class codes in the pool): the streamed fit's
    training accuracy within 0.01 of the in-memory fit's."""
    from regbayes.datasets import make_multiclass_blobs

    X, y = make_multiclass_blobs(30_000, random_state=0)[:2]
    path = _write_zarr(tmp_path / "d.zarr", X.astype(np.float32), y, 500)
    settings = dict(sampler="ssgld", n_draws=100, n_warmup=2_000, thin=10, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a short run: MixingWarning
        streamed = BayesianSVC(**settings).fit(path)
        in_memory = BayesianSVC(**settings).fit(X, y)
    assert streamed.coef_.shape == (3, 2)
    assert abs(streamed.score(X, y) - in_memory.score(X, y)) < 0.01
