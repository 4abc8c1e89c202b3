"""Quick runs of paper 001's Tables 3 and 4 (sva-table3, sva-table4) on their stand-ins
and on files written here in the real data's layouts, their ``data`` errors and CLI
mapping, and the shared method table (``sva_methods``)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from regbayes import cli
from regbayes.datasets import make_parkinsons_like, make_protein_fold_like, write_parkinsons_csv
from regbayes.experiments import EXPERIMENTS, sva_methods, sva_table3, sva_table4
from regbayes.experiments.data_option import DataError, cli_value, resolve_own

FAST = ("LogisticRegression", "LinearSVC", "SVC (RBF)", "dpMNL", "DPMeansSVC", "M2DPM")


def _protein_files(tmp_path, n_classes=4):
    d = make_protein_fold_like(40, 30, n_classes=n_classes, random_state=5)
    for name, X, y in (("train.txt", d.X_train, d.y_train), ("test.txt", d.X_test, d.y_test)):
        (tmp_path / name).write_text("".join(f"{c} " + " ".join(repr(float(v)) for v in row) + "\n"
                                             for c, row in zip(y, X)))
    return tmp_path / "train.txt", tmp_path / "test.txt", d


def test_registered_and_paper_rows():
    assert EXPERIMENTS["sva-table3"] is sva_table3 and EXPERIMENTS["sva-table4"] is sva_table4
    assert sva_table3.PAPER["dpMNL"] == (56.3, 49.5, 98.2) and sva_table3.PAPER["M2DPM"] == (54.6, 49.9, 8.1)
    assert sva_table4.PAPER["InfiniteSVC (gibbs)"] == ((88.9, 1.5), (85.1, 1.3), (1.8, 0.0))
    assert set(sva_table3.METHODS) == set(sva_table4.METHODS) == set(sva_methods.PAPER_LABELS)
    assert set(sva_methods.SAMPLED) == {"InfiniteSVC (gibbs)", "dpMNL"}


def test_table3_quick_on_the_stand_in(tmp_path):
    out = sva_table3.run(tmp_path, quick=True, methods=FAST)
    numbers = json.loads((tmp_path / "sva-table3.json").read_text())
    assert numbers["settings"]["data"]["stand_in"] and numbers["settings"]["n_classes"] == 4
    for m in FAST:
        r = numbers["results"][m]
        assert 0.0 <= r["f1"] <= 100.0 and r["seconds"] >= r["fit_seconds"] > 0.0
        # 40 test rows: accuracy is a multiple of 2.5 %
        assert r["accuracy"] / 2.5 == pytest.approx(round(r["accuracy"] / 2.5), abs=1e-9)
    assert "| dpMNL | dpMNL | " in out["table"] and "| 56.3 |" in out["table"]
    assert "| M2DPM | M2DPM |" in out["table"] and "| 54.6 | " in out["table"]
    assert "stand-in" in (tmp_path / "results.md").read_text()


def test_table3_on_files_in_the_table_layout(tmp_path):
    train, test, d = _protein_files(tmp_path)
    out = sva_table3.run(tmp_path / "out", quick=True, data=f"{train},{test}", methods=("LogisticRegression",))
    settings = out["numbers"]["settings"]
    assert settings["data"]["kind"] == "file" and not settings["data"]["stand_in"]
    assert (settings["n_train"], settings["n_test"], settings["n_features"]) == (40, 30, 21)
    # the same split, scaled the same way, gives scikit-learn's own answer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    C = out["numbers"]["results"]["LogisticRegression"]["params"]["clf__C"]
    scaler = StandardScaler().fit(d.X_train)
    ref = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=5000)).fit(scaler.transform(d.X_train),
                                                                                      d.y_train)
    expected = 100.0 * ref.score(scaler.transform(d.X_test), d.y_test)
    assert out["numbers"]["results"]["LogisticRegression"]["accuracy"] == pytest.approx(expected, abs=1e-9)


def test_table4_quick_on_the_stand_in_and_paper_settings(tmp_path):
    methods = ("LogisticRegression", "M2DPM", "dpMNL")
    out = sva_table4.run(tmp_path, quick=True, methods=methods, paper_settings=True)
    numbers = out["numbers"]
    assert numbers["settings"]["n_folds"] == 3 and numbers["settings"]["n_subjects"] == 31
    m2 = numbers["results"]["M2DPM"]
    assert m2["params"] == sva_table4.PAPER_M2DPM and m2["n_candidates"] == 1 and not m2["standardised"]
    for r in (numbers["results"]["LogisticRegression"], m2):
        assert len(r["per_fold"]["accuracy"]) == 3
        assert r["accuracy_mean"] == pytest.approx(np.mean(r["per_fold"]["accuracy"]), abs=1e-12)
    assert "88.7 (2.9)" in out["table"] and "| dpMNL | dpMNL | " in out["table"]
    assert "Table 5" in (tmp_path / "results.md").read_text()


def test_table4_folds_by_subject_keep_a_person_in_one_fold():
    d = make_parkinsons_like(random_state=2)
    subjects = np.asarray(d.subjects)
    folds = sva_table4._folds(d, 5, "subjects", 0)
    assert sorted(np.concatenate([test for _, test in folds]).tolist()) == list(range(195))
    for train, test in folds:
        assert not set(subjects[train]) & set(subjects[test])
    with pytest.raises(ValueError, match="folds must be 'rows' or 'subjects'"):
        sva_table4.run("unused", quick=True, folds="people")


def test_table4_on_a_file_in_the_uci_layout(tmp_path):
    d = make_parkinsons_like(random_state=4)
    write_parkinsons_csv(tmp_path / "parkinsons.data", d.X, d.y, d.names)
    out = sva_table4.run(tmp_path / "out", quick=True, data=str(tmp_path / "parkinsons.data"),
                         methods=("LinearSVC",))
    record = out["numbers"]["settings"]["data"]
    assert (record["kind"], record["name"], record["stand_in"]) == ("file", "parkinsons.data", False)
    assert out["numbers"]["settings"]["n_rows"] == 195


def test_data_errors(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,c\n1,2,3\n")
    with pytest.raises(DataError, match="bad.csv.*lacks 24 column"):
        sva_table4.run(tmp_path / "out", quick=True, data=str(bad))
    with pytest.raises(DataError, match="bad.csv.*at least one feature|bad.csv.*not numbers"):
        sva_table3.run(tmp_path / "out", quick=True, data=f"{bad},{bad}")
    with pytest.raises(DataError, match="unknown data set 'mnist'.*'parkinsons'"):
        resolve_own("mnist", "sva-table4")
    with pytest.raises(DataError, match="'higgs' is registered but is not one"):
        resolve_own("higgs", "sva-table3")
    with pytest.raises(DataError, match="names 1 file.*TRAIN,TEST"):
        resolve_own(str(bad), "sva-table3")
    with pytest.raises(DataError, match="no such file"):
        resolve_own(f"{bad},{tmp_path / 'none.txt'}", "sva-table3")
    accepted = {"data": None}
    assert cli_value("sva-table4", ["parkinsons"], accepted) == "parkinsons"
    assert cli_value("sva-table3", ["protein-fold"], accepted) == "protein-fold"
    with pytest.raises(DataError, match="reads one data set"):
        cli_value("sva-table4", ["parkinsons", str(bad)], accepted)
    with pytest.raises(ValueError, match="unknown method"):
        sva_table3.run(tmp_path / "out", quick=True, methods=("SVM-light",))


def test_cli_quick_and_errors(tmp_path, capsys):
    train, test, _ = _protein_files(tmp_path)
    out = tmp_path / "t3"
    code = cli.main(["reproduce", "sva-table3", "--quick", "--data", f"{train},{test}", "--out", str(out),
                     "--no-progress"])
    assert code == 0, capsys.readouterr().err
    assert json.loads((out / "sva-table3.json").read_text())["settings"]["data"]["kind"] == "file"
    capsys.readouterr()
    cases = [(["sva-table4", "--data", "mnist"], "unknown data set 'mnist'"),
             (["sva-table3", "--paper-settings"], "has no --paper-settings option"),
             (["sva-table4", "--data", str(train)], "lacks 24 column")]
    for argv, message in cases:
        assert cli.main(["reproduce", *argv, "--quick", "--out", str(tmp_path / "x"), "--no-progress"]) == 2
        assert message in capsys.readouterr().err


def test_fit_method_refuses_an_unknown_method():
    with pytest.raises(ValueError, match="unknown method 'MNL'"):
        sva_methods.fit_method("MNL", np.zeros((4, 2)), np.array([0, 1, 0, 1]), grids={}, n_folds=2,
                               rng=np.random.default_rng(0), seed=0)
    with pytest.raises(ValueError, match="not a cross-validated method"):
        sva_methods.candidates("InfiniteSVC (gibbs)", {})


def test_table3_reads_the_registered_files_from_the_cache(tmp_path, monkeypatch):
    train, test, _ = _protein_files(tmp_path)
    folder = tmp_path / "cache" / "protein-fold"
    folder.mkdir(parents=True)
    (folder / "protein-fold.train").write_bytes(train.read_bytes())
    (folder / "protein-fold.test").write_bytes(test.read_bytes())
    monkeypatch.setenv("REGBAYES_DATA", str(tmp_path / "cache"))
    out = sva_table3.run(tmp_path / "out", quick=True, data="protein-fold", methods=("LinearSVC",))
    settings = out["numbers"]["settings"]
    assert settings["data"]["kind"] == "registered" and (settings["n_train"], settings["n_test"]) == (40, 30)
