"""open_row_blocks: Parquet, Zarr, svmlight files and Dask collections read block by block,
on small data written here (1,000 rows x 5 features, blocks of unequal sizes)."""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from regbayes.datasets.row_blocks import RowBlocks, is_row_source, open_row_blocks

N, D = 1000, 5
NAMES = [f"f{k}" for k in range(D)]


def make_data(sparse=False):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, D))
    if sparse:  # values that survive the trip through text exactly
        X = np.round(X, 4)
        X[rng.random((N, D)) < 0.6] = 0.0
    return X, rng.integers(0, 3, size=N)


def read_all(blocks):
    parts = [blocks.read(i) for i in range(len(blocks.block_sizes))]
    for (X, y), n in zip(parts, blocks.block_sizes):
        assert X.shape == (n, blocks.n_features) and len(y) == n
        if blocks.sparse:
            assert sp.issparse(X) and X.format == "csr" and X.dtype == blocks.dtype
        else:
            assert isinstance(X, np.ndarray) and X.flags.c_contiguous and X.dtype == blocks.dtype
    X = [x.toarray() if blocks.sparse else x for x, _ in parts]
    return np.concatenate(X), np.concatenate([y for _, y in parts])


def check_blocks(blocks, X, y, sizes, dtype):
    assert isinstance(blocks, RowBlocks)
    assert (blocks.n_rows, blocks.n_features) == X.shape
    assert blocks.block_sizes.dtype == np.int64 and blocks.block_sizes.tolist() == list(sizes)
    X_read, y_read = read_all(blocks)
    np.testing.assert_array_equal(X_read, X.astype(dtype))
    np.testing.assert_array_equal(y_read, y)
    np.testing.assert_array_equal(blocks.labels(), y)
    with pytest.raises(IndexError, match="out of range"):
        blocks.read(len(blocks.block_sizes))


# ----------------------------------------------------------------------------- Parquet
@pytest.fixture
def parquet_dir(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    X, y = make_data()
    directory = tmp_path / "higgs"
    directory.mkdir()
    for name, rows, group in (("part-0.parquet", slice(0, 600), 250), ("part-1.parquet", slice(600, N), 300)):
        table = pa.table({**{n: X[rows, k] for k, n in enumerate(NAMES)}, "label": y[rows]})
        pq.write_table(table, directory / name, row_group_size=group)
    (directory / "_SUCCESS").write_text("")
    return directory, X, y


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_parquet_directory(parquet_dir, dtype):
    directory, X, y = parquet_dir
    blocks = open_row_blocks(directory, "label", dtype=dtype)
    check_blocks(blocks, X, y, [250, 250, 100, 300, 100], dtype)
    assert not blocks.sparse and blocks.max_row_nnz is None and blocks.feature_names == tuple(NAMES)
    assert blocks.source == f"2 Parquet files under {directory}"
    assert blocks.describe(2) == f"row group 2 of {directory / 'part-0.parquet'} (rows 500-599 of the data)"
    assert "part-1.parquet" in blocks.describe(4)


def test_parquet_file_and_glob(parquet_dir):
    directory, X, y = parquet_dir
    one = open_row_blocks(str(directory / "part-1.parquet"), "label")
    assert one.block_sizes.tolist() == [300, 100] and one.source.startswith("1 Parquet file at")
    np.testing.assert_array_equal(one.labels(), y[600:])
    matched = open_row_blocks(str(directory / "part-*.parquet"), "label", dtype=np.float64)
    check_blocks(matched, X, y, [250, 250, 100, 300, 100], np.float64)


def test_parquet_numeric_types_and_nulls(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table({"b": [True, False, None], "i": pa.array([1, None, 3], pa.int16()), "label": ["x", "y", "x"]})
    pq.write_table(table, tmp_path / "d.pq")
    X, y = open_row_blocks(tmp_path / "d.pq", "label").read(0)
    np.testing.assert_array_equal(X, np.array([[1, 1], [0, np.nan], [np.nan, 3]], np.float32))
    assert y.tolist() == ["x", "y", "x"]


def test_parquet_errors(parquet_dir, tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    directory, _, _ = parquet_dir
    with pytest.raises(ValueError, match="name of the label column"):
        open_row_blocks(directory)
    with pytest.raises(ValueError, match=r"no label column 'target'; its columns are \['f0'"):
        open_row_blocks(directory, "target")
    pq.write_table(pa.table({"f0": [1.0], "city": ["Oslo"], "label": [1]}), tmp_path / "text.parquet")
    with pytest.raises(ValueError, match=r"non-numeric feature columns in .*text\.parquet: city \(string\)"):
        open_row_blocks(tmp_path / "text.parquet", "label")
    pq.write_table(pa.table({"f0": [1.0], "f9": [2.0], "label": [1]}), directory / "part-2.parquet")
    with pytest.raises(ValueError, match=r"shards with mismatched columns: .*part-0\.parquet has \['f1', .*part-2\.parquet has \['f9'\]"):
        open_row_blocks(directory, "label")
    pq.write_table(pa.table({**{n: [1.0] for n in reversed(NAMES)}, "label": [1]}), directory / "part-2.parquet")
    with pytest.raises(ValueError, match="mismatched columns: .* same feature columns in another order"):
        open_row_blocks(directory, "label")
    empty = pa.table({"f0": pa.array([], pa.float64()), "label": pa.array([], pa.int64())})
    pq.write_table(empty, tmp_path / "empty.parquet")
    with pytest.raises(ValueError, match="holds no rows"):
        open_row_blocks(tmp_path / "empty.parquet", "label")


def test_parquet_file_changed(parquet_dir):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    directory, _, _ = parquet_dir
    blocks = open_row_blocks(directory, "label")
    pq.write_table(pa.table({**{n: np.zeros(10) for n in NAMES}, "label": np.zeros(10)}), directory / "part-1.parquet")
    with pytest.raises(ValueError, match=r"row group 0 of .*part-1\.parquet \(rows 600-899 of the data\) now holds 10 x 5"):
        blocks.read(3)
    with pytest.raises(ValueError, match=r"row group 1 of .*part-1\.parquet"):
        blocks.read(4)


def test_missing_pyarrow(parquet_dir, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ImportError, match=r"reading Parquet needs pyarrow: pip install 'regbayes\[outofcore\]'"):
        open_row_blocks(parquet_dir[0], "label")


# ----------------------------------------------------------------------------- Zarr
def write_zarr(path, X, y, chunk=300, label="y", **kwargs):
    zarr = pytest.importorskip("zarr")
    group = zarr.open_group(path, mode="w", **kwargs)
    if X is not None:
        group.create_array("X", shape=X.shape, chunks=(chunk, *X.shape[1:]), dtype=X.dtype)[...] = X
    if y is not None:
        group.create_array(label, shape=y.shape, chunks=(128,), dtype=y.dtype)[...] = y
    return path


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_zarr(tmp_path, dtype):
    X, y = make_data()
    path = write_zarr(tmp_path / "data.zarr", X, y)
    blocks = open_row_blocks(path, dtype=dtype)
    check_blocks(blocks, X, y, [300, 300, 300, 100], dtype)
    assert blocks.feature_names is None and not blocks.sparse
    assert blocks.describe(3) == f"chunk 3 of array 'X' in {path} (rows 900-999 of the data)"


def test_zarr_v2_group_and_label_name(tmp_path):
    X, y = make_data()
    path = write_zarr(tmp_path / "store", X.astype(np.float32), y, chunk=400, label="target", zarr_format=2)
    assert (path / ".zgroup").exists()
    blocks = open_row_blocks(str(path), "target", dtype=np.float64)
    check_blocks(blocks, X.astype(np.float32), y, [400, 400, 200], np.float64)


def test_zarr_sharded(tmp_path):
    zarr = pytest.importorskip("zarr")
    X, y = make_data()
    group = zarr.open_group(tmp_path / "s.zarr", mode="w")
    group.create_array("X", shape=X.shape, chunks=(100, D), shards=(400, D), dtype=X.dtype)[...] = X
    group.create_array("y", shape=y.shape, dtype=y.dtype)[...] = y
    blocks = open_row_blocks(tmp_path / "s.zarr", dtype=np.float64)
    check_blocks(blocks, X, y, [400, 400, 200], np.float64)
    assert blocks.describe(1).startswith("shard 1 of array 'X'")


def test_zarr_errors(tmp_path):
    X, y = make_data()
    with pytest.raises(ValueError, match=r"no feature array 'X'; its arrays are \['y'\]"):
        open_row_blocks(write_zarr(tmp_path / "a.zarr", None, y))
    with pytest.raises(ValueError, match="must be 2-D"):
        open_row_blocks(write_zarr(tmp_path / "b.zarr", y.astype(float), y))
    with pytest.raises(ValueError, match=r"no label array 'labels'; its arrays are \['X', 'y'\]"):
        open_row_blocks(write_zarr(tmp_path / "c.zarr", X, y), "labels")
    with pytest.raises(ValueError, match="has 1000 rows: the lengths differ"):
        open_row_blocks(write_zarr(tmp_path / "d.zarr", X, y[:-1]))
    with pytest.raises(ValueError, match="holds no rows"):
        open_row_blocks(write_zarr(tmp_path / "e.zarr", X[:0], y[:0]))


# ----------------------------------------------------------------------------- svmlight
def write_svmlight(directory, X, y, splits, zero_based, names):
    from sklearn.datasets import dump_svmlight_file

    directory.mkdir()
    for name, rows in zip(names, np.split(np.arange(len(y)), splits)):
        path = directory / name
        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "wb") as f:
            dump_svmlight_file(sp.csr_matrix(X[rows]), y[rows], f, zero_based=zero_based)
    return directory


@pytest.mark.parametrize("zero_based", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_svmlight_files(tmp_path, zero_based, dtype):
    X, y = make_data(sparse=True)
    X[:, 0] = 0.0
    X[:, -1] = 0.0
    X[10, 0] = 2.5  # feature 0 only in the first file, the last feature only in the last one
    X[-1, -1] = 1.5
    names = ["a.svm", "b.libsvm.gz", "c.svmlight"]
    directory = write_svmlight(tmp_path / "split", X, y, [450, 950], zero_based, names)
    blocks = open_row_blocks(directory, dtype=dtype)
    check_blocks(blocks, X, y, [450, 500, 50], dtype)
    assert blocks.sparse and blocks.feature_names is None
    assert blocks.max_row_nnz == int((X != 0).sum(axis=1).max())
    assert blocks.labels().dtype == np.int64 and blocks.read(1)[1].dtype == np.int64
    assert blocks.describe(1) == f"{directory / 'b.libsvm.gz'}, file 2 of 3 (rows 450-949 of the data)"
    assert blocks.source == f"3 svmlight files under {directory}"


def test_svmlight_trailing_features_and_float_labels(tmp_path):
    X, y = make_data(sparse=True)
    X[:500, -2:] = 0.0  # the first file never mentions the last two features
    y = y.astype(float)
    y[-1] = 0.5
    directory = write_svmlight(tmp_path / "split", X, y, [500], False, ["p1.svm", "p2.svm"])
    blocks = open_row_blocks(str(directory / "p*.svm"))
    check_blocks(blocks, X, y, [500, 500], np.float32)
    assert blocks.read(0)[0].shape == (500, D)
    assert blocks.read(0)[1].dtype == np.float64


def test_svmlight_errors(tmp_path):
    X, y = make_data(sparse=True)
    directory = write_svmlight(tmp_path / "split", X, y, [500], False, ["p1.svm", "p2.svm"])
    with pytest.raises(ValueError, match="svmlight files hold their own labels: y must be None"):
        open_row_blocks(directory, "label")
    blocks = open_row_blocks(directory)
    (directory / "p2.svm").write_text("1 1:1\n-1 2:3\n")
    with pytest.raises(ValueError, match=r"p2\.svm, file 2 of 2 \(rows 500-999 of the data\) now holds 2 x 5"):
        blocks.read(1)
    (directory / "p2.svm").write_text("1 9:1\n")
    with pytest.raises(ValueError, match=r"p2\.svm, file 2 of 2 .*9"):
        blocks.read(1)


# ----------------------------------------------------------------------------- paths
def test_path_errors(tmp_path, parquet_dir):
    with pytest.raises(FileNotFoundError, match="no such file or directory: .*nowhere"):
        open_row_blocks(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match=r"no file matches .*nowhere-\*\.parquet"):
        open_row_blocks(str(tmp_path / "nowhere-*.parquet"), "label")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("hello")
    with pytest.raises(ValueError, match=r"empty holds no data: no \.parquet, \.svm/\.svmlight/\.libsvm files or Zarr group"):
        open_row_blocks(tmp_path / "empty")
    with pytest.raises(ValueError, match="holds no data"):
        open_row_blocks(str(tmp_path / "empty" / "*.txt"))
    with pytest.raises(ValueError, match="notes.txt is not Parquet"):
        open_row_blocks(tmp_path / "empty" / "notes.txt")
    directory, _, _ = parquet_dir
    (directory / "extra.svm").write_text("1 1:1\n")
    with pytest.raises(ValueError, match=r"mixes formats \(Parquet: part-0\.parquet, part-1\.parquet; svmlight: extra\.svm\)"):
        open_row_blocks(directory, "label")


def test_bad_arguments():
    with pytest.raises(TypeError, match="X must be a path .* got ndarray"):
        open_row_blocks(np.zeros((3, 2)), np.zeros(3))
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        open_row_blocks("x.parquet", "label", dtype=np.int32)


def test_is_row_source(monkeypatch):
    assert is_row_source("data/*.parquet") and is_row_source(Path("data.zarr"))
    for X in (np.zeros((2, 2)), sp.csr_matrix((2, 2)), [[1.0]], None):
        assert not is_row_source(X)
    for name in [m for m in sys.modules if m == "dask" or m.startswith("dask.")]:
        monkeypatch.delitem(sys.modules, name)
    assert not is_row_source(np.zeros(3))
    assert "dask" not in sys.modules and "dask.array" not in sys.modules


# ----------------------------------------------------------------------------- Dask
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dask_array(dtype):
    da = pytest.importorskip("dask.array")
    X, y = make_data()
    dX = da.from_array(X, chunks=((300, 0, 600, 100), (3, 2)))  # chunked along columns too, with an empty chunk
    assert is_row_source(dX)
    check_blocks(open_row_blocks(dX, y, dtype=dtype), X, y, [300, 0, 600, 100], dtype)
    blocks = open_row_blocks(dX, da.from_array(y.astype(str), chunks=250), dtype=dtype)
    check_blocks(blocks, X, y.astype(str), [300, 0, 600, 100], dtype)
    assert blocks.describe(1) == "row chunk 1 of the Dask array (no rows, at row 300 of the data)"
    assert blocks.describe(2) == "row chunk 2 of the Dask array (rows 300-899 of the data)"


def test_dask_array_errors():
    da = pytest.importorskip("dask.array")
    X, y = make_data()
    with pytest.raises(ValueError, match="needs y"):
        open_row_blocks(da.from_array(X, chunks=300))
    with pytest.raises(ValueError, match=r"y has shape \(999,\), but the Dask array X has 1000 rows"):
        open_row_blocks(da.from_array(X, chunks=300), y[:-1])
    with pytest.raises(ValueError, match="must be 2-D"):
        open_row_blocks(da.zeros((4, 3, 2)), np.zeros(4))
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        dX = da.from_array(X, chunks=300)
        open_row_blocks(dX[dX[:, 0] > 0], y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dask_dataframe(dtype):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    X, y = make_data()
    frame = pd.DataFrame(X, columns=NAMES).assign(label=np.array(["a", "b", "c"])[y])
    dframe = dd.from_pandas(frame, npartitions=3)
    assert is_row_source(dframe)
    sizes = dframe.map_partitions(len).compute().tolist()
    blocks = open_row_blocks(dframe, "label", dtype=dtype)
    check_blocks(blocks, X, frame["label"].to_numpy(), sizes, dtype)
    assert blocks.feature_names == tuple(NAMES)
    assert blocks.describe(1).startswith("partition 1 of the Dask dataframe (rows")
    features = dframe[NAMES]
    series = open_row_blocks(features, dd.from_pandas(pd.Series(y), npartitions=3), dtype=dtype)
    check_blocks(series, X, y, sizes, dtype)


def test_dask_dataframe_errors():
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    X, y = make_data()
    dframe = dd.from_pandas(pd.DataFrame(X, columns=NAMES).assign(label=y, city="Oslo"), npartitions=3)
    with pytest.raises(ValueError, match=r"y='target' is not a column of the Dask dataframe; its columns are \['f0'"):
        open_row_blocks(dframe, "target")
    with pytest.raises(ValueError, match="needs y"):
        open_row_blocks(dframe)
    with pytest.raises(ValueError, match=r"non-numeric feature columns in the Dask dataframe: city"):
        open_row_blocks(dframe, "label")
    features = dframe[NAMES]
    with pytest.raises(ValueError, match="y has 999 rows, but the Dask dataframe X has 1000"):
        open_row_blocks(features, dd.from_pandas(pd.Series(y[:-1]), npartitions=3))
    with pytest.raises(ValueError, match="partitioned unlike X"):
        open_row_blocks(features, dd.from_pandas(pd.Series(y), npartitions=2))
