"""The ``regbayes`` command line: parsing, errors, ``reproduce`` end to end (also on the
paper's data given with ``--data``: a registered set served by a local HTTP server, svmlight
files, a 20 Newsgroups folder), and a fit/predict round trip on a small svmlight file."""
from __future__ import annotations

import bz2
import json
import pickle
import warnings

import numpy as np
import pytest
from local_http import http_server  # noqa: F401 (fixture)
from sklearn.datasets import dump_svmlight_file

import regbayes
from regbayes import cli


def test_help_and_no_command(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for command in ("demo", "reproduce", "fit", "predict", "datasets", "bench"):
        assert command in out
    assert cli.main([]) == 2
    assert "COMMAND" in capsys.readouterr().err
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("regbayes ")


def test_reproduce_list(capsys):
    assert cli.main(["reproduce", "--list"]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert {"fig4", "fig5", "fig6", "fig7", "demo"} <= set(names)
    assert {"sva-table1", "sva-table2", "sva-clusters", "isvm-table2", "medlda-fig8", "medlda-topics"} <= set(names)


def test_reproduce_refuses_an_option_the_experiment_lacks(capsys, tmp_path):
    assert cli.main(["reproduce", "fig4", "--k", "3", "--out", str(tmp_path)]) == 2
    assert "'fig4' has no --k option" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
    assert cli.main(["reproduce", "sva-table2", "--n-datasets", "2", "--out", str(tmp_path)]) == 2
    assert "--n-datasets" in capsys.readouterr().err


def test_unknown_experiment_is_a_clear_error(capsys, tmp_path):
    assert cli.main(["reproduce", "fig99", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "unknown experiment 'fig99'" in err and "fig4" in err and "fig7" in err
    assert not any(tmp_path.iterdir())
    assert cli.main(["reproduce"]) == 2
    assert "--list" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["reproduce", "fig4", "--n", "0"],
        ["reproduce", "fig4", "--n", "many"],
        ["fit", "data.svm", "--sampler", "nuts", "--model-out", "m.pkl"],
        ["fit", "data.svm"],  # --model-out is required
        ["predict", "model.pkl"],
    ],
)
def test_bad_arguments_exit_with_usage_error(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    assert "error" in capsys.readouterr().err


def test_parser_options():
    args = cli.build_parser().parse_args(["reproduce", "fig5", "--n", "1e5", "--quick", "--seed", "3"])
    assert (args.name, args.n, args.quick, args.seed, args.out) == ("fig5", 100000, True, 3, None)
    args = cli.build_parser().parse_args(["demo"])
    assert args.out.endswith("demo") and not args.no_progress


def test_reproduce_fig4_quick_end_to_end(tmp_path, capsys):
    out = tmp_path / "fig4"
    assert cli.main(["reproduce", "fig4", "--quick", "--n", "200", "--seed", "1", "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    assert "| gibbs |" in stdout and "| ssgld" in stdout and "| ssgnht" in stdout
    assert (out / "fig4.png").read_bytes().startswith(b"\x89PNG")
    numbers = json.loads((out / "fig4.json").read_text())
    assert numbers["settings"]["n"] == 200 and numbers["settings"]["seed"] == 1
    for method in ("gibbs", "ssgld", "ssgnht"):
        info = numbers["methods"][method]
        assert len(info["mean"]) == 2 and np.shape(info["cov"]) == (2, 2)
        assert info["n_samples"] == 500
    assert numbers["methods"]["gibbs"]["rel_error_mean_vs_gibbs"] == 0.0
    assert "rel. err. mean vs gibbs" in (out / "results.md").read_text()


@pytest.fixture
def svmlight_files(tmp_path):
    rng = np.random.default_rng(0)
    w = np.array([2.0, -1.0, 0.0])
    X = rng.normal(size=(160, 3))
    y = np.where(X @ w + 0.3 * rng.normal(size=160) > 0, 1, -1)
    train, test = tmp_path / "train.svm", tmp_path / "test.svm"
    dump_svmlight_file(X[:120], y[:120], str(train), zero_based=False)
    dump_svmlight_file(X[120:], y[120:], str(test), zero_based=False)
    return train, test, y[120:]


def test_fit_predict_round_trip(svmlight_files, tmp_path, capsys):
    train, test, y_test = svmlight_files
    model_path = tmp_path / "models" / "svc.npz"
    argv = ["fit", str(train), "--sampler", "ssgld", "--model-out", str(model_path),
            "--n-draws", "200", "--n-warmup", "100", "--batch-size", "30", "--no-progress"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "120 rows x 3 features" in out and "training accuracy" in out and str(model_path) in out
    model = regbayes.load(model_path)
    assert model.sampler == "ssgld" and model.coef_samples_.shape == (200, 3)

    assert cli.main(["predict", str(model_path), str(test)]) == 0
    captured = capsys.readouterr()
    labels = np.array([int(float(v)) for v in captured.out.split()])
    assert len(labels) == len(y_test) and set(labels) <= {-1, 1}
    assert np.mean(labels == y_test) > 0.8
    assert "accuracy on" in captured.err

    out_file = tmp_path / "proba.txt"
    assert cli.main(["predict", str(model_path), str(test), "--proba", "--output", str(out_file)]) == 0
    lines = out_file.read_text().splitlines()
    assert lines[0] == "p(-1) p(1)" and len(lines) == len(y_test) + 1
    proba = np.array([[float(v) for v in line.split()] for line in lines[1:]])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)

    # --format pickle: written and read on request only
    pickled = tmp_path / "svc.pkl"
    assert cli.main(argv[:5] + [str(pickled), "--format", "pickle"] + argv[6:]) == 0
    with open(pickled, "rb") as f:
        np.testing.assert_array_equal(pickle.load(f).coef_samples_, model.coef_samples_)
    capsys.readouterr()
    assert cli.main(["predict", str(pickled), str(test)]) == 2
    err = capsys.readouterr().err
    assert "is not a regbayes model file: a pickle" in err and "pass --format pickle if you trust it" in err
    assert cli.main(["predict", str(pickled), str(test), "--format", "pickle"]) == 0
    assert [int(float(v)) for v in capsys.readouterr().out.split()] == labels.tolist()


def test_fit_with_a_checkpoint(svmlight_files, tmp_path, capsys):
    """--checkpoint writes one; the same command again reads its draws back; another
    command with that checkpoint is refused with a clear error."""
    train, _, _ = svmlight_files
    ckpt = tmp_path / "fit.ckpt"
    argv = ["fit", str(train), "--model-out", str(tmp_path / "a.npz"), "--n-draws", "100", "--n-warmup", "100",
            "--batch-size", "30", "--no-progress", "--checkpoint", str(ckpt), "--checkpoint-every", "0"]
    assert cli.main(argv) == 0 and ckpt.exists()
    assert cli.main(argv[:3] + [str(tmp_path / "b.npz")] + argv[4:]) == 0
    a, b = regbayes.load(tmp_path / "a.npz"), regbayes.load(tmp_path / "b.npz")
    np.testing.assert_array_equal(a.coef_samples_, b.coef_samples_)
    capsys.readouterr()
    assert cli.main(argv + ["--seed", "7"]) == 1
    assert "checkpoint of another run" in capsys.readouterr().err


def test_fit_another_model_with_a_checkpoint(svmlight_files, tmp_path, capsys):
    """--model dpmeans-svc --param ...: the same command again reads the finished run back
    from its checkpoint; BayesianSVC's options and unknown parameters are refused."""
    train, test, _ = svmlight_files
    ckpt = tmp_path / "dpmeans.ckpt"
    argv = ["fit", str(train), "--model", "dpmeans-svc", "--param", "max_iter=4", "--param", "cluster_penalty=3.0",
            "--model-out", str(tmp_path / "a.npz"), "--no-progress", "--checkpoint", str(ckpt), "--checkpoint-every", "0"]
    assert cli.main(argv) == 0 and ckpt.exists()
    assert "DPMeansSVC fitted on" in capsys.readouterr().out
    argv[argv.index("--model-out") + 1] = str(tmp_path / "b.npz")
    assert cli.main(argv) == 0
    a, b = regbayes.load(tmp_path / "a.npz"), regbayes.load(tmp_path / "b.npz")
    assert a.max_iter == 4 and np.array_equal(a.coef_, b.coef_) and np.array_equal(a.labels_, b.labels_)
    assert cli.main(["predict", str(tmp_path / "b.npz"), str(test)]) == 0
    capsys.readouterr()
    assert cli.main(argv + ["--seed", "7"]) == 1
    assert "checkpoint of another run" in capsys.readouterr().err
    assert cli.main(argv[:4] + ["--sampler", "gibbs"] + argv[4:]) == 2
    assert "--sampler set(s) parameters of --model bayes-svc" in capsys.readouterr().err
    assert cli.main(argv + ["--param", "n_draws=3"]) == 2
    assert "DPMeansSVC has no parameter n_draws" in capsys.readouterr().err


def test_fit_and_predict_file_errors(svmlight_files, tmp_path, capsys):
    train, _, _ = svmlight_files
    assert cli.main(["fit", str(tmp_path / "missing.svm"), "--model-out", str(tmp_path / "m.pkl")]) == 2
    assert "no such file" in capsys.readouterr().err
    bad = tmp_path / "bad.svm"
    bad.write_text("this is not svmlight\n")
    assert cli.main(["fit", str(bad), "--model-out", str(tmp_path / "m.pkl")]) == 2
    assert "svmlight" in capsys.readouterr().err
    assert cli.main(["predict", str(tmp_path / "nope.pkl"), str(train)]) == 2
    assert "no such model file" in capsys.readouterr().err
    junk = tmp_path / "junk.pkl"
    junk.write_bytes(b"not a pickle")
    assert cli.main(["predict", str(junk), str(train)]) == 2
    assert "not a regbayes model file" in capsys.readouterr().err
    assert cli.main(["predict", str(junk), str(train), "--format", "pickle"]) == 2
    assert "not a model saved by" in capsys.readouterr().err


def test_datasets_lists_the_registry(capsys):
    assert cli.main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "realsim" in out and "higgs" in out
    assert cli.main(["datasets", "--json"]) == 0
    registry = json.loads(capsys.readouterr().out)
    assert "ijcnn1" in registry and registry["ijcnn1"]["n_features"] == 22


def test_bench_reports_each_sampler(capsys):
    assert cli.main(["bench", "--n", "300", "--samplers", "ssgld,gibbs", "--n-draws", "5"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ssgld") or line.startswith("| gibbs")]
    assert len(rows) == 2
    # steps = warm-up 200 + 5 draws x the sampler's default thinning (100 for ssgld, 1 for gibbs)
    assert "| 700 |" in rows[0] and "| 205 |" in rows[1]
    assert cli.main(["bench", "--samplers", "nuts"]) == 2
    assert "unknown sampler(s) nuts" in capsys.readouterr().err
    assert cli.main(["bench", "--n", "5"]) == 2
    assert "n must be an integer >= 100" in capsys.readouterr().err


# ----------------------------------------------------------------- reproduce --data
def _higgs_bytes(n=300, seed=0):
    """A HIGGS-format LIBSVM file (28 features, labels 0 / 1) of a noisy linear rule."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 28)).round(4)
    y = (X[:, :3] @ np.array([1.5, -1.0, 0.5]) + 0.3 * rng.normal(size=n) > 0).astype(int)
    lines = (f"{lab} " + " ".join(f"{j + 1}:{v:g}" for j, v in enumerate(row)) for lab, row in zip(y, X))
    return ("\n".join(lines) + "\n").encode()


def test_reproduce_fig7_on_registered_higgs_with_paper_settings(tmp_path, http_server, monkeypatch, capsys):  # noqa: F811
    (http_server.root / "HIGGS.bz2").write_bytes(bz2.compress(_higgs_bytes()))
    monkeypatch.setenv("REGBAYES_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("REGBAYES_DATA_URL", http_server.url)
    out = tmp_path / "fig7"
    with pytest.warns(UserWarning, match="No published checksum"):
        code = cli.main(["reproduce", "fig7", "--quick", "--data", "higgs", "--paper-settings", "--out", str(out),
                         "--no-progress"])
    assert code == 0, capsys.readouterr().err
    assert http_server.count("HIGGS.bz2") == 1 and (tmp_path / "cache" / "higgs" / "HIGGS.bz2").is_file()
    numbers = json.loads((out / "fig7.json").read_text())
    data = numbers["settings"]["data"][0]
    # paper 000 Sec. 5.1.2's split: 1/11 of the rows held out (round(300 / 11) = 27)
    assert (data["name"], data["kind"], data["n_train"], data["n_test"]) == ("higgs", "registered", 273, 27)
    assert numbers["settings"]["paper_settings"]["higgs_test_fraction"] == "1/11"
    entry = numbers["datasets"]["higgs"]
    assert entry["batch_size"] == 273  # the paper's 1000 on HIGGS, clipped to the rows
    for r in entry["runs"].values():
        # 27 test rows of a rule with 0.3 noise: the majority rate is about 0.5, the
        # linear rule's about 0.9; 0.7 is over 2 binomial s.e. (0.088) from either.
        assert r["error"] is None and r["final_accuracy"] > 0.7
    text = (out / "results.md").read_text()
    assert "Data: higgs (273 train / 27 test rows" in text and "stand-in" not in text


def test_reproduce_isvm_table2_on_svmlight_files(tmp_path, capsys):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(160, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, -1)
    train, test = tmp_path / "a_train.svm", tmp_path / "a_test.svm"
    dump_svmlight_file(X[:120], y[:120], str(train), zero_based=False)
    dump_svmlight_file(X[120:], y[120:], str(test), zero_based=False)
    out = tmp_path / "isvm"
    code = cli.main(["reproduce", "isvm-table2", "--quick", "--data", f"{train},{test}", "--paper-settings",
                     "--out", str(out), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    numbers = json.loads((out / "isvm-table2.json").read_text())
    entry = numbers["datasets"]["a_train.svm,a_test.svm"]
    assert (entry["n_train"], entry["n_test"], entry["n_features"]) == (120, 40, 4)
    assert set(entry["samplers"]) == {"gibbs", "ssgnht"} and entry["baselines"]["RBF-SVM"] is not None
    # 40 test rows of a noiseless linear rule: the linear baselines get nearly all right
    assert entry["baselines"]["Linear SVM"]["accuracy"] > 0.85
    assert numbers["settings"]["paper_settings"]["rbf_limit"] is None
    assert "stand-in" not in (out / "results.md").read_text()


def test_reproduce_medlda_topics_on_a_20news_folder(tmp_path, capsys):
    words = {"comp.graphics": "pixel render image shader", "rec.autos": "engine wheel brake clutch",
             "sci.space": "orbit rocket launch lunar"}
    for subset, n in (("train", 8), ("test", 3)):
        for cls, vocab in words.items():
            folder = tmp_path / "news" / f"20news-bydate-{subset}" / cls
            folder.mkdir(parents=True)
            for i in range(n):
                (folder / str(i)).write_text(f"Subject: x\n\nthe {vocab} and the {vocab.split()[i % 4]}\n")
    out = tmp_path / "topics"
    code = cli.main(["reproduce", "medlda-topics", "--quick", "--data", str(tmp_path / "news"), "--paper-settings",
                     "--out", str(out), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    numbers = json.loads((out / "medlda-topics.json").read_text())
    settings = numbers["settings"]
    assert settings["corpus"] == "20news" and settings["stand_in"] is False and settings["n_train"] == 24
    assert settings["data"]["kind"] == "folder"
    expected = dict(alpha=1.0, beta=1.0, C=1.0, margin=164.0, multi_class="ovr", refit_classifier=False)
    assert settings["paper_settings"] == expected
    assert {k: settings["medlda"][k] for k in expected} == expected
    assert numbers["class_names"] == sorted(words)


def test_reproduce_data_errors(tmp_path, http_server, monkeypatch, capsys):  # noqa: F811
    bad = tmp_path / "bad.svm"
    bad.write_text("this is not svmlight\n")
    out = tmp_path / "out"
    cases = [
        (["fig5", "--data", "mnist"], "unknown data set 'mnist'", "higgs, higgs-uci, ijcnn1, protein, realsim"),
        (["fig6", "--data", str(bad)], "as an svmlight/LIBSVM file", "TRAIN,TEST"),
        (["isvm-table2", "--data", "yeast"], "is registered but is not one this experiment reads", "ijcnn1"),
        (["medlda-fig8", "--data", str(tmp_path)], "is a folder without 20news-bydate-train", "20news"),
        (["fig4", "--data", "higgs"], "'fig4' takes no --data", "2-D toy set"),
        (["demo", "--data", "higgs"], "'demo' takes no --data", "breast cancer"),
        (["sva-clusters", "--paper-settings"], "has no --paper-settings option", "sva-clusters"),
    ]
    for argv, first, second in cases:
        assert cli.main(["reproduce", *argv, "--quick", "--out", str(out), "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert first in err and second in err, err
    assert not out.exists()
    # the registry pins scikit-learn's digest of the 20news archive: other bytes are refused
    (http_server.root / "5975967").write_bytes(b"not the archive")
    monkeypatch.setenv("REGBAYES_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("REGBAYES_DATA_URL", http_server.url)
    assert cli.main(["reproduce", "medlda-topics", "--quick", "--data", "20news", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "Checksum mismatch" in err and "The file was not used" in err
    assert list((tmp_path / "cache" / "20news").iterdir()) == [] and not out.exists()


def test_fit_reads_parquet_data_block_by_block(tmp_path, capsys):
    """``regbayes fit`` on a directory of Parquet files (data larger than memory): the
    label column named by --label, the training accuracy computed block by block."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from regbayes.datasets import make_bayes_svm_2d

    X, y = make_bayes_svm_2d(4_000, random_state=0)[:2]
    folder = tmp_path / "train"
    folder.mkdir()
    for k in range(2):
        rows = slice(2_000 * k, 2_000 * (k + 1))
        pq.write_table(pa.table({"a": X[rows, 0], "b": X[rows, 1], "label": y[rows]}), folder / f"part-{k}.parquet",
                       row_group_size=250)
    out = tmp_path / "m.npz"
    argv = ["fit", str(folder), "--label", "label", "--model-out", str(out), "--n-draws", "50", "--n-warmup", "200",
            "--thin", "2", "--batch-size", "20", "--no-progress"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 4,000 rows: the pool holds much of them
        assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    assert "4000 rows x 2 features" in printed and "read in 16 blocks" in printed
    accuracy = float(printed.split("training accuracy: ")[1].split()[0])
    model = regbayes.load(out)
    pd = pytest.importorskip("pandas")
    assert accuracy == pytest.approx(np.mean(model.predict(pd.DataFrame(X, columns=["a", "b"])) == y))
    assert cli.main(argv[:2] + argv[4:]) == 2  # no --label
    assert "--label" in capsys.readouterr().err
    assert cli.main(argv + ["--checkpoint", str(tmp_path / "c")]) == 2
    assert "block by block" in capsys.readouterr().err
