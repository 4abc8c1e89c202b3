"""load_yeast: river's yeast.csv.gz layout (generated here, full size, random values),
Mulan's positional split (917 test rows first), the package lookup and its errors, and
the real bundled file when river is installed."""
from __future__ import annotations

import gzip
import sys

import numpy as np
import pytest
from installed_package import fake_package, use_installed

from regbayes.datasets import list_datasets, load_yeast
from regbayes.datasets.yeast import YEAST_FEATURES, YEAST_LABELS, YEAST_N_TEST, YEAST_N_TRAIN

N = YEAST_N_TEST + YEAST_N_TRAIN
HEADER = ",".join(YEAST_FEATURES + YEAST_LABELS)


def _table(seed=0, n=N):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(0.0, 0.1, size=(n, 103)), 6)
    Y = (rng.random((n, 14)) < 0.3).astype(np.int64)
    return X, Y


def _rows(X, Y):
    """River's rows: ``%g`` features, then the 0/1 labels."""
    return [",".join([f"{v:g}" for v in x] + [str(int(v)) for v in y]) for x, y in zip(X, Y)]


def _write(path, rows, header=HEADER, compress=True):
    """River's format: a header line, then the rows, gzip-compressed."""
    data = ("\n".join([header] + list(rows)) + "\n").encode("ascii")
    path.write_bytes(gzip.compress(data, compresslevel=1) if compress else data)
    return path


@pytest.fixture(scope="module")
def table():
    return _table()


@pytest.fixture(scope="module")
def rows(table):
    return _rows(*table)


@pytest.fixture
def yeast_file(tmp_path, rows):
    return _write(tmp_path / "yeast.csv.gz", rows)


def test_shapes_dtypes_and_values(yeast_file, table):
    X, Y = table
    data = load_yeast(yeast_file)
    assert data.X.shape == (2417, 103) and data.X.dtype == np.float64
    assert data.Y.shape == (2417, 14) and data.Y.dtype == np.int64
    np.testing.assert_array_equal(data.X, X)  # %g keeps the 6 decimals exactly
    np.testing.assert_array_equal(data.Y, Y)
    assert data.feature_names[0] == "Att1" and data.label_names[-1] == "Class14"
    assert data.source == str(yeast_file)
    X32 = load_yeast(yeast_file, dtype=np.float32).X
    assert X32.dtype == np.float32
    np.testing.assert_allclose(X32, X, rtol=1e-6)


def test_mulan_split_is_test_rows_first(yeast_file, table):
    X, Y = table
    data = load_yeast(yeast_file)
    np.testing.assert_array_equal(data.test, np.arange(917))
    np.testing.assert_array_equal(data.train, np.arange(917, 2417))
    X_train, X_test, Y_train, Y_test = data.split()
    assert X_train.shape == (1500, 103) and X_test.shape == (917, 103)
    np.testing.assert_array_equal(X_train, X[917:])
    np.testing.assert_array_equal(Y_test, Y[:917])
    X_train[0, 0] = 99.0  # a copy: the loaded data are untouched
    assert data.X[917, 0] == X[917, 0]


def test_plain_csv_is_read_too(tmp_path, table, rows):
    path = _write(tmp_path / "yeast.csv", rows, compress=False)
    np.testing.assert_array_equal(load_yeast(path).Y, table[1])


def _fake_river(root, rows=None):
    """``root/river/__init__.py`` (+ ``datasets/yeast.csv.gz``): the installed layout."""
    pkg = fake_package(root, "river", "datasets")
    if rows is not None:
        _write(pkg / "datasets" / "yeast.csv.gz", rows)
    return pkg


def test_default_reads_the_installed_river_file(tmp_path, monkeypatch, table, rows):
    pkg = _fake_river(tmp_path, rows)
    use_installed(monkeypatch, tmp_path, "river")
    data = load_yeast()
    assert data.source == str(pkg / "datasets" / "yeast.csv.gz")
    np.testing.assert_array_equal(data.Y, table[1])
    assert "river" not in sys.modules  # located, not imported


def test_missing_river_names_the_package_and_the_pip_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "river", None)  # what an absent package looks like
    with pytest.raises(ModuleNotFoundError, match=r"load_yeast needs the optional package 'river'") as info:
        load_yeast()
    assert "pip install regbayes[data]" in str(info.value) and info.value.name == "river"


def test_river_without_the_file(tmp_path, monkeypatch):
    _fake_river(tmp_path)
    use_installed(monkeypatch, tmp_path, "river")
    with pytest.raises(FileNotFoundError, match=r"has no datasets/yeast\.csv\.gz"):
        load_yeast()


def test_bad_files(tmp_path, table, rows):
    X, Y = table
    with pytest.raises(ValueError, match="header is not river's yeast layout"):
        load_yeast(_write(tmp_path / "h.csv.gz", rows[:3], header=HEADER.replace("Att1,", "A1,")))
    with pytest.raises(ValueError, match=r"expected 2417 rows .* found 5"):
        load_yeast(_write(tmp_path / "short.csv.gz", rows[:5]))
    Y2 = Y[3:4].copy()
    Y2[0, 4] = 2
    with pytest.raises(ValueError, match="must hold 0 or 1"):
        load_yeast(_write(tmp_path / "labels.csv.gz", rows[:3] + _rows(X[3:4], Y2) + rows[4:]))
    X2 = X[7:8].copy()
    X2[0, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        load_yeast(_write(tmp_path / "nan.csv.gz", rows[:7] + _rows(X2, Y[7:8]) + rows[8:]))
    (tmp_path / "cols.csv").write_text(HEADER + "\n" + "1,2\n")
    with pytest.raises(ValueError, match="yeast CSV|117 columns"):
        load_yeast(tmp_path / "cols.csv")
    with pytest.raises(FileNotFoundError, match="No such data file"):
        load_yeast(tmp_path / "absent.csv.gz")
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        load_yeast(tmp_path / "h.csv.gz", dtype=np.int32)


def test_registry_entry():
    spec = list_datasets()["yeast"]
    assert (spec.package, spec.loader, spec.n_samples, spec.n_features) == ("river", "load_yeast", 2417, 103)


def test_real_bundled_file_matches_mulan():
    """Mulan's yeast: 2,417 x 103, 14 labels; cardinality 4.237, density 0.303, 198
    label sets (published); first rows of Mulan's yeast-train.arff / yeast-test.arff."""
    pytest.importorskip("river")
    data = load_yeast()
    assert data.X.shape == (2417, 103) and data.Y.shape == (2417, 14)
    cardinality = data.Y.sum(axis=1).mean()
    assert abs(cardinality - 4.237) < 5e-4 and abs(data.Y.mean() - 0.303) < 5e-4
    assert len({tuple(row) for row in data.Y}) == 198
    X_train, X_test, Y_train, Y_test = data.split()
    np.testing.assert_array_equal(X_train[0, :3], [0.0937, 0.139771, 0.062774])
    np.testing.assert_array_equal(Y_train[0], [0, 0, 1, 1] + [0] * 10)
    np.testing.assert_array_equal(X_test[0, :3], [0.004168, -0.170975, -0.156748])
    np.testing.assert_array_equal(Y_test[0], [0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0])
    # per-part label counts, as in Mulan's two files (training 4.228, test 4.252 labels a gene)
    assert Y_train.sum() == 6342 and Y_test.sum() == 3899
