"""load_svmlight and the block-wise dense readers, on small files written here."""

import bz2
import gzip
import lzma

import numpy as np
import pytest
import scipy.sparse as sp

from regbayes.datasets import load_svmlight, read_csv_dense, read_svmlight_dense

# Five rows, one-based indices, feature 4 never set (so n_features matters).
SVMLIGHT = (
    b"+1 1:0.5 3:-2\n"
    b"-1 2:1.25\n"
    b"+1 1:1 2:2 3:3\n"
    b"-1 3:0.125\n"
    b"+1 1:-1.5\n"
)
DENSE = np.array([
    [0.5, 0.0, -2.0],
    [0.0, 1.25, 0.0],
    [1.0, 2.0, 3.0],
    [0.0, 0.0, 0.125],
    [-1.5, 0.0, 0.0],
])
LABELS = np.array([1, -1, 1, -1, 1])

COMPRESSORS = {
    "plain": (lambda b: b, ""),
    "gzip": (gzip.compress, ".gz"),
    "bz2": (bz2.compress, ".bz2"),
    "xz": (lzma.compress, ".xz"),
    "lzma": (lambda b: lzma.compress(b, format=lzma.FORMAT_ALONE), ".lzma"),
}


def write(tmp_path, name, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
def test_load_plain_and_compressed(tmp_path, kind):
    compress, suffix = COMPRESSORS[kind]
    path = write(tmp_path, "data.svm" + suffix, compress(SVMLIGHT))
    X, y = load_svmlight(path)
    assert sp.isspmatrix_csr(X) or isinstance(X, sp.csr_array)
    assert X.dtype == np.float64
    np.testing.assert_array_equal(X.toarray(), DENSE)
    assert y.dtype == np.int64
    np.testing.assert_array_equal(y, LABELS)


def test_compression_detected_from_content_not_name(tmp_path):
    path = write(tmp_path, "misnamed.txt", bz2.compress(SVMLIGHT))
    X, _ = load_svmlight(str(path))
    np.testing.assert_array_equal(X.toarray(), DENSE)


def test_n_features_dtype_and_n_rows(tmp_path):
    path = write(tmp_path, "d.svm.xz", lzma.compress(SVMLIGHT))
    X, y = load_svmlight(path, n_features=4, dtype=np.float32)
    assert X.shape == (5, 4) and X.dtype == np.float32
    np.testing.assert_array_equal(X.toarray()[:, :3], DENSE)
    assert not X.toarray()[:, 3].any()
    X2, y2 = load_svmlight(path, n_features=4, n_rows=2)
    np.testing.assert_array_equal(X2.toarray()[:, :3], DENSE[:2])
    np.testing.assert_array_equal(y2, LABELS[:2])
    X9, _ = load_svmlight(path, n_rows=9)  # more rows than the file has
    assert X9.shape[0] == 5
    with pytest.raises(ValueError, match="n_features"):
        load_svmlight(path, n_features=2)  # file has index 3


def test_zero_based_and_float_labels(tmp_path):
    path = write(tmp_path, "z.svm", b"0.5 0:1 2:2\n-1.75 1:3\n")
    X, y = load_svmlight(path, zero_based=True)
    np.testing.assert_array_equal(X.toarray(), [[1, 0, 2], [0, 3, 0]])
    assert y.dtype == np.float64
    np.testing.assert_array_equal(y, [0.5, -1.75])


def test_errors_are_clear(tmp_path):
    missing = tmp_path / "nope.svm.bz2"
    with pytest.raises(FileNotFoundError, match="nope.svm.bz2"):
        load_svmlight(missing)
    with pytest.raises(IsADirectoryError):
        load_svmlight(tmp_path)
    bad = write(tmp_path, "bad.svm", b"1 1:0.5\nthis is not svmlight\n")
    with pytest.raises(ValueError, match="bad.svm"):
        load_svmlight(bad)
    empty = write(tmp_path, "empty.svm", b"")
    with pytest.raises(ValueError, match="no data rows"):
        load_svmlight(empty)
    truncated = write(tmp_path, "cut.svm.bz2", bz2.compress(SVMLIGHT * 50)[:60])
    with pytest.raises(OSError, match="cut.svm.bz2"):
        load_svmlight(truncated)
    with pytest.raises(ValueError, match="dtype"):
        load_svmlight(bad, dtype=np.int64)
    with pytest.raises(ValueError, match="n_rows"):
        load_svmlight(bad, n_rows=0)
    with pytest.raises(ValueError, match="zero_based"):
        load_svmlight(bad, zero_based="yes")


@pytest.mark.parametrize("block_rows", [1, 2, 1000])
def test_read_svmlight_dense_in_blocks(tmp_path, block_rows):
    path = write(tmp_path, "d.svm.gz", gzip.compress(SVMLIGHT))
    X, y = read_svmlight_dense(path, 4, block_rows=block_rows)
    assert X.dtype == np.float32 and X.shape == (5, 4)
    np.testing.assert_array_equal(X[:, :3], DENSE)
    np.testing.assert_array_equal(y, LABELS)
    X3, y3 = read_svmlight_dense(path, 4, n_rows=3, dtype=np.float64, block_rows=block_rows)
    assert X3.dtype == np.float64
    np.testing.assert_array_equal(X3[:, :3], DENSE[:3])
    np.testing.assert_array_equal(y3, LABELS[:3])


@pytest.mark.parametrize("block_rows", [2, 1000])
def test_read_csv_dense_in_blocks(tmp_path, block_rows):
    rows = np.column_stack([(LABELS > 0).astype(float), DENSE])
    text = "\n".join(",".join(f"{v:.18e}" for v in r) for r in rows) + "\n"
    path = write(tmp_path, "d.csv.gz", gzip.compress(text.encode()))
    X, y = read_csv_dense(path, 3, block_rows=block_rows)
    assert X.dtype == np.float32
    np.testing.assert_array_equal(X, DENSE.astype(np.float32))
    np.testing.assert_array_equal(y, (LABELS > 0).astype(float))
    X1, y1 = read_csv_dense(path, 3, n_rows=1, block_rows=block_rows)
    assert X1.shape == (1, 3)
    with pytest.raises(ValueError, match="expected 1 label \\+ 5 feature columns"):
        read_csv_dense(path, 5, block_rows=block_rows)
    with pytest.raises(ValueError, match="no data rows"):
        read_csv_dense(write(tmp_path, "e.csv", b""), 3)
