"""The experiments' ``data`` option: resolving names and paths, loading them (files written
here; registered sets served by a local HTTP server), the clear errors, the CLI mapping,
and what ``data`` and ``paper_settings`` change in the linear-SVM figures, sva-table1 and
isvm-table2 (no sampler is run for long: the figures run with their smallest settings)."""
from __future__ import annotations

import bz2
import dataclasses
import json

import numpy as np
import pytest
from local_http import http_server  # noqa: F401 (fixture)
from sklearn.datasets import dump_svmlight_file

from regbayes.datasets import registry
from regbayes.experiments import EXPERIMENTS, _common, data_option, fig5, isvm_table2, sva_table1
from regbayes.experiments.data_option import (
    CLASSIFICATION,
    CORPUS,
    DataError,
    cli_value,
    load_classification,
    resolve,
    resolve_many,
    split_rows,
)


@pytest.fixture
def files(tmp_path):
    """A single svmlight file (40 rows, 3 features) and a TRAIN,TEST pair whose test file
    mentions a fifth feature the training file never does."""
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(40, 3)), 4)
    y = np.where(X[:, 0] > 0, 1, -1)
    one = tmp_path / "one.svm"
    dump_svmlight_file(X, y, str(one), zero_based=False)
    train, test = tmp_path / "train.svm", tmp_path / "test.svm"
    dump_svmlight_file(X[:30], y[:30], str(train), zero_based=False)
    X_test = np.hstack([X[30:], np.zeros((10, 2))])
    X_test[0, 4] = 2.5
    dump_svmlight_file(X_test, y[30:], str(test), zero_based=False)
    return {"X": X, "y": y, "one": one, "train": train, "test": test, "X_test": X_test}


def test_resolve_names_files_and_pairs(files, tmp_path):
    assert resolve("higgs", CLASSIFICATION) == ("higgs", "higgs", "registered", ())
    assert set(data_option.choices(CLASSIFICATION)) == {"higgs", "higgs-uci", "ijcnn1", "protein", "realsim"}
    assert data_option.choices(CORPUS) == ["20news", "wordnet-nouns", "fortunes"]
    assert resolve("fortunes", CORPUS) == ("fortunes", "fortunes", "registered", ())
    one = resolve(str(files["one"]), CLASSIFICATION)
    assert (one.name, one.kind, one.paths) == ("one.svm", "file", (str(files["one"]),))
    pair = resolve(f"{files['train']},{files['test']}", CLASSIFICATION)
    assert (pair.name, pair.kind, pair.paths) == ("train.svm,test.svm", "file", (str(files["train"]), str(files["test"])))
    assert [s.name for s in resolve_many(["higgs", str(files["one"])], CLASSIFICATION)] == ["higgs", "one.svm"]
    assert resolve_many(None, CLASSIFICATION) == []
    news = tmp_path / "news"
    for name in ("20news-bydate-train", "20news-bydate-test"):
        (news / name).mkdir(parents=True)
    assert resolve(str(news), CORPUS).kind == "folder"
    cache = tmp_path / "20news-bydate_py3.pkz"
    cache.write_bytes(b"")
    assert resolve(str(cache), CORPUS) == (str(cache), "20news", "file", (str(cache),))


@pytest.mark.parametrize("value, family, message", [
    ("mnist", CLASSIFICATION, r"unknown data set 'mnist'.*higgs, higgs-uci, ijcnn1, protein, realsim.*TRAIN,TEST"),
    ("yeast", CLASSIFICATION, r"'yeast' is registered but is not one this experiment reads"),
    ("higgs", CORPUS, r"'higgs' is registered but.*20news, wordnet-nouns, fortunes.*20news-bydate_py3.pkz"),
    ("fortunes", CLASSIFICATION, r"'fortunes' is registered but is not one this experiment reads"),
    ("nope/none.svm", CLASSIFICATION, r"no such file: nope/none.svm; choose"),
    ("a.svm,b.svm,c.svm", CLASSIFICATION, r"names 3 files"),
    ("", CLASSIFICATION, r"data must be a data set name or a path"),
])
def test_resolve_errors_name_the_value_and_the_choices(value, family, message):
    with pytest.raises(DataError, match=message):
        resolve(value, family)


def test_resolve_errors_for_existing_paths(files, tmp_path):
    with pytest.raises(DataError, match="is a folder, not an svmlight"):
        resolve(str(tmp_path), CLASSIFICATION)
    with pytest.raises(DataError, match="is a folder without 20news-bydate-train"):
        resolve(str(tmp_path), CORPUS)
    with pytest.raises(DataError, match="not a corpus the topic experiments read"):
        resolve(str(files["one"]), CORPUS)
    with pytest.raises(DataError, match=r"no such file: .*missing.svm"):
        resolve(f"{files['train']},{tmp_path / 'missing.svm'}", CLASSIFICATION)
    with pytest.raises(DataError, match="names a data set twice"):
        resolve_many(["higgs", "higgs"], CLASSIFICATION)


def test_split_rows_is_a_seeded_partition():
    train, test = split_rows(40, 0.25, seed=3)
    assert len(test) == 10 and len(train) == 30
    np.testing.assert_array_equal(np.sort(np.concatenate([train, test])), np.arange(40))
    np.testing.assert_array_equal(test, np.random.default_rng(4).permutation(40)[:10])
    assert len(split_rows(11, 1 / 11, seed=0)[1]) == 1 and len(split_rows(3, 0.01, seed=0)[1]) == 1


def test_load_classification_from_files(files):
    d = load_classification(resolve(str(files["one"]), CLASSIFICATION), seed=3, test_fraction=0.25)
    train, test = split_rows(40, 0.25, seed=3)
    np.testing.assert_allclose(d["X_train"], files["X"][train])  # 3 features: dense
    np.testing.assert_allclose(d["X_test"], files["X"][test])
    np.testing.assert_array_equal(d["y_test"], files["y"][test])
    rec = d["record"]
    assert (rec["n_train"], rec["n_test"], rec["n_features"], rec["classes"]) == (30, 10, 3, [-1, 1])
    assert rec["split"] == "random 0.75 / 0.25 split (seed 4)" and rec["stand_in"] is False
    json.dumps(rec)
    # a pair keeps its own split; the narrower file is widened to the wider one's features
    d = load_classification(resolve(f"{files['train']},{files['test']}", CLASSIFICATION), n_rows=20)
    assert d["X_train"].shape == (20, 5) and d["X_test"].shape == (10, 5)
    np.testing.assert_allclose(d["X_train"][:, :3], files["X"][:20])
    np.testing.assert_allclose(d["X_test"], files["X_test"])
    assert d["record"]["split"] == "the data set's own training and test files"


def test_load_classification_errors(files, tmp_path):
    bad = tmp_path / "bad.svm"
    bad.write_text("this is not svmlight\n")
    with pytest.raises(DataError, match=r"Could not parse .*bad.svm as an svmlight/LIBSVM file.*choose a registered"):
        load_classification(resolve(str(bad), CLASSIFICATION))
    single = tmp_path / "single.svm"
    single.write_text("1 1:0.5\n")
    with pytest.raises(DataError, match="holds 1 row"):
        load_classification(resolve(str(single), CLASSIFICATION))


def test_registered_data_set_over_http_and_a_checksum_mismatch(tmp_path, http_server, monkeypatch):  # noqa: F811
    rows = "".join(f"{1 if i % 2 else -1} 1:{i / 10:g} 22:{-i / 10:g}\n" for i in range(8))
    (http_server.root / "ijcnn1.bz2").write_bytes(bz2.compress(rows.encode()))
    (http_server.root / "ijcnn1.t.bz2").write_bytes(bz2.compress(rows[:3 * len(rows) // 8].encode()))
    monkeypatch.setenv("REGBAYES_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("REGBAYES_DATA_URL", http_server.url)
    with pytest.warns(UserWarning, match="No published checksum"):
        d = load_classification(resolve("ijcnn1", CLASSIFICATION))
    assert d["X_train"].shape == (8, 22) and d["X_test"].shape[1] == 22
    np.testing.assert_allclose(d["X_train"][:, 0], np.arange(8) / 10)
    assert d["record"]["kind"] == "registered" and d["record"]["split"].startswith("the data set's own")
    # a pinned digest that the served file does not have: the download is discarded
    spec = registry.REGISTRY["realsim"]
    pinned = dataclasses.replace(spec.files[0], sha256="0" * 64)
    monkeypatch.setitem(registry.REGISTRY, "realsim", dataclasses.replace(spec, files=(pinned,)))
    (http_server.root / "real-sim.bz2").write_bytes(bz2.compress(b"1 5:1\n-1 7:1\n"))
    with pytest.raises(DataError, match=r"data 'realsim': Checksum mismatch .* The file was not used\."):
        load_classification(resolve("realsim", CLASSIFICATION))
    assert not any((tmp_path / "cache" / "realsim").iterdir())


def test_cli_value_maps_each_experiment(files, tmp_path):
    run_params = ("out_dir", "quick", "data")
    assert cli_value("fig5", ["higgs", "realsim"], run_params) == ["higgs", "realsim"]
    assert cli_value("isvm-table2", [str(files["one"])], run_params) == str(files["one"])
    assert cli_value("mtilsvm-fig8", ["yeast", "exam"], run_params) == "real"
    assert cli_value("ilsvm-table1", ["synthetic"], run_params) == "synthetic"
    with pytest.raises(DataError, match="reads yeast .* or 'synthetic'"):
        cli_value("mtilsvm-table2", ["mfeat"], run_params)
    with pytest.raises(DataError, match="'fig4' takes no --data: its data are paper 000's 2-D toy set"):
        cli_value("fig4", ["higgs"], ("out_dir", "quick"))
    with pytest.raises(DataError, match="'demo' takes no --data"):
        cli_value("demo", ["higgs"], ("out_dir", "quick"))
    for name in ("20news-bydate-train", "20news-bydate-test"):
        (tmp_path / "news" / name).mkdir(parents=True)
    assert cli_value("medlda-topics", [str(tmp_path / "news")], run_params) == str(tmp_path / "news")
    with pytest.raises(DataError, match="reads one corpus; got 2"):
        cli_value("medlda-fig8", ["20news", str(tmp_path / "news")], run_params)
    # every experiment is placed: a data family, the bundled sets, its own data set's layout, or a reason to take none
    placed = set(data_option.FAMILY) | set(data_option.BUNDLED) | set(data_option.OWN_FORMAT) | set(data_option.NO_DATA)
    assert placed == set(EXPERIMENTS)


def test_paper_srwm_step_is_proposal_variance_001_in_weight_coordinates():
    from regbayes.potentials import sigma_ref
    from regbayes.samplers.defaults import start_scale

    X = np.random.default_rng(1).normal(size=(50, 4))
    step = _common.paper_sampler_params("srwm", X)["step_size"]
    # proposal eta' = eta + h T0 N(0, I) with T0 = start_scale * I (runs without warm-up)
    assert (step * start_scale("srwm", sigma_ref(X, 1.0, 1.0, True), 1.0)) ** 2 == pytest.approx(0.01, rel=1e-12)
    assert _common.paper_sampler_params("ssgnht", X) == {"schedule": "polynomial"}
    assert _common.paper_sampler_params("gibbs", X) == {}


def test_fig5_on_a_wide_sparse_file_skips_gibbs_and_records_the_data(tmp_path):
    rng = np.random.default_rng(2)
    X = np.zeros((30, 6000))
    X[np.arange(30), rng.integers(0, 6000, size=30)] = 1.0
    X[0, -1] = 0.5  # the file then holds 6,000 features
    path = tmp_path / "wide.svm"
    dump_svmlight_file(X, np.where(np.arange(30) % 2, 1, -1), str(path), zero_based=False)
    result = fig5.run(tmp_path / "out", data=str(path), samplers=("gibbs",), paper_settings=True)
    numbers = json.loads(open(result["json"]).read())
    entry = numbers["datasets"]["wide.svm"]
    assert entry["samplers"]["gibbs"]["error"].startswith("skipped: 6,000 features")
    assert entry["data"]["n_train"] == 27 and entry["data"]["stand_in"] is False and entry["large"] is False
    assert numbers["settings"]["paper_settings"]["higgs_test_fraction"] == "1/11"
    text = open(result["markdown"]).read()
    assert "Data: wide.svm (27 train / 3 test rows" in text and "skipped: 6,000 features" in text


def test_sva_table1_on_a_given_data_set(files, tmp_path):
    result = sva_table1.run(tmp_path, quick=True, data=f"{files['train']},{files['test']}",
                            methods=("LinearSVC", "oracle"))
    numbers = result["numbers"]
    assert numbers["settings"]["n_datasets"] == 1
    assert numbers["settings"]["data"][0]["n_train"] == 30
    assert set(numbers["summary"]["train.svm,test.svm"]) == {"LinearSVC"}
    assert "| train.svm,test.svm | oracle | skipped: needs the true clusters |" in result["table"]
    assert "Data: train.svm,test.svm (30 train / 10 test" in open(result["markdown"]).read()


def test_isvm_table2_names_the_papers_protein_by_its_shape(tmp_path):
    rng = np.random.default_rng(0)
    y = np.arange(313 + 385) % 27
    X = rng.normal(size=(len(y), 21))
    train, test = tmp_path / "protein_train.svm", tmp_path / "protein_test.svm"
    dump_svmlight_file(X[:313], y[:313], str(train), zero_based=False)
    dump_svmlight_file(X[313:], y[313:], str(test), zero_based=False)
    sets, records, keys = isvm_table2.load_data([f"{train},{test}", str(train)], None, seed=0)
    assert keys == {"protein_train.svm,protein_test.svm": "protein", "protein_train.svm": None}
    assert sets["protein_train.svm"][0].shape == (250, 21)  # 313 rows split 80 / 20
    assert records["protein_train.svm,protein_test.svm"]["classes"] == list(range(27))
