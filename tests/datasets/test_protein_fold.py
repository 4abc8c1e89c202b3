"""The protein fold reader (svmlight and plain-table layouts, written here) and its
generated stand-in."""
from __future__ import annotations

import gzip

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from regbayes.datasets import get_dataset, load_protein_fold, make_protein_fold_like
from regbayes.datasets.protein_fold import PROTEIN_FOLD_FEATURES, read_protein_fold_file


def _table(path, X, y, sep=" "):
    lines = ["# fold label, 20 percentages, length"] + [sep.join([str(int(c)), *(repr(float(v)) for v in row)])
                                                        for c, row in zip(y, X)]
    path.write_text("\n".join(lines) + "\n\n")


@pytest.fixture
def rows():
    rng = np.random.default_rng(0)
    X = np.round(rng.uniform(0.0, 12.0, size=(12, 21)), 3)
    X[:, -1] = rng.integers(50, 500, size=12)
    return X, rng.integers(1, 28, size=12)


def test_plain_tables_and_svmlight_read_exactly(tmp_path, rows):
    X, y = rows
    _table(tmp_path / "train.txt", X[:8], y[:8])
    _table(tmp_path / "test.txt", X[8:], y[8:], sep=",")
    d = load_protein_fold(tmp_path / "train.txt", tmp_path / "test.txt")
    np.testing.assert_array_equal(d.X_train, X[:8])
    np.testing.assert_array_equal(d.X_test, X[8:])
    np.testing.assert_array_equal(d.y_train, y[:8])
    assert d.y_test.dtype == np.int64 and d.feature_names == PROTEIN_FOLD_FEATURES and not d.stand_in
    # svmlight, gzip-compressed, whose last feature is zero in every test row (not written)
    X_test = X[8:].copy()
    X_test[:, -1] = 0.0
    dump_svmlight_file(X[:8], y[:8], str(tmp_path / "train.svm"), zero_based=False)
    dump_svmlight_file(X_test, y[8:], str(tmp_path / "test.svm"), zero_based=False)
    (tmp_path / "test.svm.gz").write_bytes(gzip.compress((tmp_path / "test.svm").read_bytes()))
    d = load_protein_fold(tmp_path / "train.svm", tmp_path / "test.svm.gz")
    np.testing.assert_array_equal(d.X_train, X[:8])
    np.testing.assert_array_equal(d.X_test, X_test)


def test_feature_selection_and_width_checks(tmp_path, rows):
    X, y = rows
    wide = np.hstack([X, np.ones((12, 4))])
    _table(tmp_path / "a.txt", wide[:8], y[:8])
    _table(tmp_path / "b.txt", wide[8:], y[8:])
    with pytest.raises(ValueError, match="hold 25 features, expected 21.*features="):
        load_protein_fold(tmp_path / "a.txt", tmp_path / "b.txt")
    d = load_protein_fold(tmp_path / "a.txt", tmp_path / "b.txt", features=list(range(21)))
    np.testing.assert_array_equal(d.X_train, X[:8])
    assert load_protein_fold(tmp_path / "a.txt", tmp_path / "b.txt", n_features=None).X_train.shape == (8, 25)
    with pytest.raises(ValueError, match="column indices in 0..24"):
        load_protein_fold(tmp_path / "a.txt", tmp_path / "b.txt", features=[0, 25])
    _table(tmp_path / "c.txt", X[8:, :20], y[8:])
    with pytest.raises(ValueError, match="training file has 25 features and the test file 20"):
        load_protein_fold(tmp_path / "a.txt", tmp_path / "c.txt", n_features=None)


@pytest.mark.parametrize("text, message", [
    ("", "contains no data rows"),
    ("1 2.0 3.0\n2 1.0\n", "line 2: 2 columns, the first row has 3"),
    ("1.5 2.0 3.0\n", "fold labels .* must be integers"),
    ("fold a b\n1 2 3\n", "line 1: not numbers"),
    ("1 nan 3.0\n", "NaN or infinity"),
    ("3\n", "at least one feature"),
    ("1 1:0.5 x:2\n", "as svmlight/LIBSVM"),
])
def test_bad_files_are_refused_with_the_reason(tmp_path, text, message):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_protein_fold_file(path)


def test_stand_in_has_the_papers_shape():
    d = make_protein_fold_like(random_state=3)
    assert d.X_train.shape == (313, 21) and d.X_test.shape == (385, 21) and d.stand_in
    assert set(np.unique(d.y_train)) == set(range(1, 28)) and np.bincount(d.y_train)[1:].min() >= 5
    assert set(np.unique(d.y_test)) == set(range(1, 28))
    # percentages of the 20 amino acids sum to 100 (float rounding only)
    np.testing.assert_allclose(d.X_train[:, :20].sum(axis=1), 100.0, rtol=1e-12)
    assert (d.X_train[:, 20] >= 20).all() and (d.X_train[:, 20] == np.round(d.X_train[:, 20])).all()
    again = make_protein_fold_like(random_state=3)
    np.testing.assert_array_equal(again.X_test, d.X_test)
    with pytest.raises(ValueError, match="n_train must be at least 5 \\* n_classes"):
        make_protein_fold_like(20, 20, n_classes=5)


def test_registry_entry():
    spec = get_dataset("protein-fold")
    assert spec.file_format == "protein-fold" and spec.n_features == 21
    assert [(f.role, f.n_samples, f.sha256) for f in spec.files] == [("train", 313, None), ("test", 385, None)]
