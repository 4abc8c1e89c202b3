"""est.save(path) / regbayes.load(path): every exported estimator comes back with the same
attributes, draws and predictions; damaged, truncated, edited and foreign files give a
ModelFileError; loading never unpickles."""
import copy
import hashlib
import io
import json
import pickle
import zipfile

import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_regression
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.utils.validation import check_is_fitted

import regbayes
from regbayes import (M2DPM, BayesianSVC, DPMeansSVC, DPMNLClassifier, IBPFeatures, InfiniteLatentSVC, InfiniteSVC, MedLDA,
                      MedLDARegressor, ModelFileError, MultiTaskInfiniteLatentSVC, MultiTaskInfiniteLatentSVR,
                      PassiveAggressiveMedLDA)
from regbayes.persistence import TRAILER

X, Y = make_blobs(n_samples=60, centers=2, n_features=3, random_state=0)
X3, Y3 = make_blobs(n_samples=60, centers=3, n_features=3, random_state=0)
XR, YR = make_regression(n_samples=60, n_features=3, random_state=0)
COUNTS = np.random.default_rng(0).poisson(1.0, size=(40, 12)).astype(float)
LABELS = (COUNTS[:, :6].sum(1) > COUNTS[:, 6:].sum(1)).astype(int)
TEXTS = ["apple banana cherry", "banana split dessert", "cherry pie apple", "dessert cake banana"] * 5
TEXT_LABELS = np.array(["fruit", "sweet", "fruit", "sweet"] * 5, dtype=object)

# (id, estimator, X, y): every exported estimator, small data and short runs
CASES = [
    ("BayesianSVC-ssgld", BayesianSVC(n_draws=20, n_warmup=20, n_chains=2, batch_size=30), X, Y),
    ("BayesianSVC-gibbs-multiclass", BayesianSVC(sampler="gibbs", batch_size=30, n_draws=5, n_warmup=5, prediction="gibbs"), X3, Y3),
    ("InfiniteSVC", InfiniteSVC(n_iter=4, n_warmup=2, random_state=0), X, Y),
    ("DPMNLClassifier", DPMNLClassifier(n_iter=4, n_warmup=2, random_state=0), X, Y),
    ("M2DPM", M2DPM(max_iter=3, random_state=0), X, Y),
    ("DPMeansSVC", DPMeansSVC(max_iter=5, random_state=0), X, Y),
    ("MedLDA-gibbs-texts", MedLDA(n_topics=2, sampler="gibbs", n_iter=3, n_draws=1, n_transform_sweeps=2, snapshot_every=1,
                                  random_state=0), TEXTS, TEXT_LABELS),
    ("MedLDA-ssgrld", MedLDA(n_topics=2, n_iter=3, n_draws=1, n_transform_sweeps=2, batch_size=20, random_state=0), COUNTS, LABELS),
    ("MedLDARegressor", MedLDARegressor(n_topics=2, n_iter=3, n_transform_sweeps=2, random_state=0), COUNTS, COUNTS[:, 0]),
    ("PassiveAggressiveMedLDA", PassiveAggressiveMedLDA(n_topics=2, n_draws=1, n_transform_sweeps=2, random_state=0),
     COUNTS, LABELS),
    ("MultiTaskInfiniteLatentSVC", MultiTaskInfiniteLatentSVC(truncation=4, n_iter=3, include_inputs=True, random_state=0),
     X, np.stack([Y, 1 - Y], 1)),
    ("MultiTaskInfiniteLatentSVR", MultiTaskInfiniteLatentSVR(truncation=4, n_iter=3, include_inputs=True, random_state=0),
     XR, YR),
    ("IBPFeatures", IBPFeatures(truncation=5, n_iter=3, random_state=0), X, None),
    ("InfiniteLatentSVC", InfiniteLatentSVC(truncation=5, n_iter=3, random_state=0), X, Y),
]
METHODS = ("predict", "predict_proba", "decision_function", "transform")


def assert_same(a, b, where, loaded=True):
    """``b`` equals ``a`` in type and value; JAX arrays come back from a file as NumPy."""
    if isinstance(a, np.ndarray) or type(a).__module__.startswith("jax"):
        a = np.asarray(a)
        b = b if loaded else np.asarray(b)
        assert isinstance(b, np.ndarray), where
        assert (a.dtype, a.shape) == (b.dtype, b.shape), where
        assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), where
    elif isinstance(a, tuple) and hasattr(a, "_fields"):
        assert type(a) is type(b), where
        for field in a._fields:
            assert_same(getattr(a, field), getattr(b, field), f"{where}.{field}", loaded)
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (u, v) in enumerate(zip(a, b)):
            assert_same(u, v, f"{where}[{i}]", loaded)
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            assert_same(a[key], b[key], f"{where}[{key!r}]", loaded)
    elif isinstance(a, np.random.Generator):
        assert a.bit_generator.state == b.bit_generator.state, where
    elif isinstance(a, CountVectorizer):
        assert type(b) is CountVectorizer and a.get_params() == b.get_params(), where
        assert a.vocabulary_ == b.vocabulary_ and a.fixed_vocabulary_ == b.fixed_vocabulary_, where
    else:
        assert type(a) is type(b), (where, type(a), type(b))
        assert a == b or (a != a and b != b), (where, a, b)


@pytest.fixture(scope="module")
def fitted():
    """One fitted DPMeansSVC (fits in milliseconds) for the file-level tests."""
    return DPMeansSVC(max_iter=5, random_state=0).fit(X, Y)


@pytest.fixture
def model_file(fitted, tmp_path):
    path = tmp_path / "model.npz"
    fitted.save(path)
    return path


# ----------------------------------------------------------------- round trips
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("name, estimator, data, target", CASES, ids=[c[0] for c in CASES])
def test_save_load_gives_the_same_estimator_draws_and_predictions(name, estimator, data, target, tmp_path):
    est = estimator.fit(data, target)
    before = copy.deepcopy(vars(est))
    path = tmp_path / "model.npz"
    assert est.save(path) == path
    assert_same(before, vars(est), "saving mutated the estimator", loaded=False)
    loaded = regbayes.load(path)
    assert type(loaded) is type(est)
    assert loaded.get_params() == est.get_params()
    assert_same(vars(est), vars(loaded), name)
    loaded.save(tmp_path / "again.npz")
    assert (tmp_path / "again.npz").read_bytes() == path.read_bytes()  # same model, same bytes
    for method in METHODS:  # prediction="gibbs" draws from the stored generator: both advance alike
        if hasattr(est, method):
            np.testing.assert_array_equal(getattr(loaded, method)(data), getattr(est, method)(data), err_msg=method)


def test_every_exported_estimator_is_round_tripped():
    covered = {type(est) for _, est, _, _ in CASES}
    assert covered == {getattr(regbayes.models, name) for name in regbayes.models.__all__}


def test_bayes_svm_idata_is_rebuilt_from_the_stored_draws(tmp_path):
    est = BayesianSVC(n_draws=10, n_warmup=10, n_chains=2, batch_size=30).fit(X, Y)
    idata = est.idata_  # cached on the estimator: not written to the file
    est.save(tmp_path / "m.npz")
    assert "_idata" not in json.loads(zipfile.ZipFile(tmp_path / "m.npz").read("metadata.json"))["attributes"]
    loaded = regbayes.load(tmp_path / "m.npz")
    for group in ("posterior", "sample_stats"):
        for var in idata[group].data_vars:
            np.testing.assert_array_equal(loaded.idata_[group][var].values, idata[group][var].values)


def test_unfitted_estimator_saves_its_parameters(tmp_path):
    est = MedLDA(n_topics=3, alpha=0.5, vectorizer=CountVectorizer(ngram_range=(1, 2), dtype=np.int32))
    est.save(tmp_path / "m.npz")
    loaded = regbayes.load(tmp_path / "m.npz")
    assert loaded.get_params(deep=False).keys() == est.get_params(deep=False).keys()
    assert loaded.vectorizer.get_params() == est.vectorizer.get_params()
    with pytest.raises(NotFittedError):
        check_is_fitted(loaded)


def test_checkpoint_path_parameters_load_as_the_same_path(tmp_path):
    for checkpoint in (tmp_path / "fit.ckpt", str(tmp_path / "fit.ckpt")):
        est = InfiniteSVC(checkpoint=checkpoint)
        est.save(tmp_path / "m.npz")
        loaded = regbayes.load(tmp_path / "m.npz").checkpoint
        assert type(loaded) is type(checkpoint) and loaded == checkpoint


# ----------------------------------------------------------------- what cannot be saved
def test_what_cannot_be_saved_is_named(fitted, tmp_path):
    with pytest.raises(TypeError, match=r"parameter 'callback'.*set_params\(callback=None\)"):
        MedLDA(callback=lambda *a: None).save(tmp_path / "m.npz")
    with pytest.raises(TypeError, match="tokenizer"):
        MedLDA(vectorizer=CountVectorizer(tokenizer=str.split)).save(tmp_path / "m.npz")
    with pytest.raises(TypeError, match="TfidfVectorizer"):
        MedLDA(vectorizer=TfidfVectorizer()).save(tmp_path / "m.npz")

    class Sub(DPMeansSVC):
        pass

    with pytest.raises(TypeError, match="library's estimators"):
        Sub().save(tmp_path / "m.npz")
    est = copy.deepcopy(fitted)
    est.extra_ = {"handle": object()}
    with pytest.raises(TypeError, match=r"attribute 'extra_'\['handle'\]"):
        est.save(tmp_path / "m.npz")
    assert not list(tmp_path.iterdir())  # nothing written, no temporary file left


# ----------------------------------------------------------------- damaged and foreign files
def _members(path):
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _write_signed(path, members):
    """A model file of ``members`` with a correct checksum (an edit that re-signs)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, payload in members.items():
            archive.writestr(name, payload)
        archive.comment = TRAILER + b"0" * 64
    data = buffer.getvalue()
    path.write_bytes(data[:-64] + hashlib.sha256(data[:-64]).hexdigest().encode())
    return path


def _edited(model_file, edit):
    members = _members(model_file)
    metadata = json.loads(members["metadata.json"])
    edit(metadata, members)
    members["metadata.json"] = json.dumps(metadata).encode()
    return _write_signed(model_file.with_name("edited.npz"), members)


def test_a_re_signed_unedited_file_loads(model_file, fitted):
    loaded = regbayes.load(_edited(model_file, lambda metadata, members: None))
    np.testing.assert_array_equal(loaded.predict(X), fitted.predict(X))


def test_another_library_version_loads_with_a_warning(model_file, fitted):
    def older(metadata, members):
        metadata["library_version"] = "0.0.1"

    with pytest.warns(UserWarning, match="saved by regbayes '0.0.1'"):
        loaded = regbayes.load(_edited(model_file, older))
    np.testing.assert_array_equal(loaded.predict(X), fitted.predict(X))


def test_truncated_files(model_file):
    data = model_file.read_bytes()
    for size in (0, 3, 30, 300, len(data) // 2, len(data) - 100, len(data) - 64, len(data) - 1):
        model_file.write_bytes(data[:size])
        with pytest.raises(ModelFileError, match="not a regbayes model file|truncated|modified or damaged"):
            regbayes.load(model_file)


def test_every_flipped_bit_is_caught(model_file):
    data = model_file.read_bytes()
    positions = sorted(set(np.linspace(0, len(data) - 1, 97).astype(int)) | set(range(len(data) - 86, len(data), 7)))
    for position in positions:
        for bit in (0, 5):
            damaged = bytearray(data)
            damaged[position] ^= 1 << bit
            model_file.write_bytes(bytes(damaged))
            with pytest.raises(ModelFileError):
                regbayes.load(model_file)
    model_file.write_bytes(data + b"\0")
    with pytest.raises(ModelFileError, match="truncated or damaged"):
        regbayes.load(model_file)


def test_edited_files(model_file):
    def version(metadata, members):
        metadata["format_version"] = 2

    def unknown_class(metadata, members):
        metadata["class"] = "LogisticRegression"

    def dotted_class(metadata, members):
        metadata["class"] = "os.system"

    def wrong_class(metadata, members):
        metadata["class"] = "BayesianSVC"

    def unknown_record(metadata, members):
        metadata["attributes"]["objective_"] = {"kind": "record", "type": "Popen", "fields": {}}

    def unknown_kind(metadata, members):
        metadata["attributes"]["n_iter_"] = {"kind": "pickle", "data": "gASVAAAAAAAAAA=="}

    def pickled_array(metadata, members):
        buffer = io.BytesIO()
        np.save(buffer, np.array([print], dtype=object), allow_pickle=True)
        members["evil.npy"] = buffer.getvalue()
        metadata["arrays"].append("evil")
        metadata["attributes"]["evil_"] = {"kind": "array", "name": "evil"}

    def extra_entry(metadata, members):
        members["extra.npy"] = members["labels_.npy"]

    def missing_entry(metadata, members):
        del members["labels_.npy"]

    def not_a_model(metadata, members):
        metadata["format"] = "something-else"

    expected = {version: "format version 2.*reads version 1", unknown_class: "unknown estimator class 'LogisticRegression'",
                dotted_class: "unknown estimator class 'os.system'", wrong_class: "not those of BayesianSVC",
                unknown_record: "unknown record type 'Popen'", unknown_kind: "unknown value kind 'pickle'",
                pickled_array: "allow_pickle", extra_entry: "entries do not match", missing_entry: "entries do not match",
                not_a_model: "not a regbayes model file"}
    for edit, match in expected.items():
        with pytest.raises(ModelFileError, match=match):
            regbayes.load(_edited(model_file, edit))


def test_foreign_and_missing_files(tmp_path, fitted):
    with pytest.raises(ModelFileError, match="no such model file"):
        regbayes.load(tmp_path / "nope.npz")
    (tmp_path / "m.pkl").write_bytes(pickle.dumps(fitted))
    with pytest.raises(ModelFileError, match="a pickle"):
        regbayes.load(tmp_path / "m.pkl")
    (tmp_path / "m.txt").write_text("hello")
    with pytest.raises(ModelFileError, match="not a ZIP archive"):
        regbayes.load(tmp_path / "m.txt")
    np.savez(tmp_path / "plain.npz", a=np.arange(3))
    with pytest.raises(ModelFileError, match="checksum record"):
        regbayes.load(tmp_path / "plain.npz")


def test_loading_never_unpickles(model_file, monkeypatch):
    calls = []
    real_load = np.load

    def spy(*args, **kwargs):
        calls.append(kwargs.get("allow_pickle"))
        return real_load(*args, **kwargs)

    def refuse(*args, **kwargs):
        raise AssertionError("pickle was called")

    monkeypatch.setattr(np, "load", spy)
    for name in ("load", "loads"):
        monkeypatch.setattr(pickle, name, refuse)
    monkeypatch.setattr(pickle, "Unpickler", refuse)
    regbayes.load(model_file)
    assert calls == [False]
