"""The MedLDA experiments (paper 000, Fig. 8, Fig. 9 / Table 1) end to end with tiny
settings, their corpus handling, and the helpers they are built from."""
from __future__ import annotations

import json

import numpy as np
import pytest

from regbayes.experiments import medlda_fig8, medlda_topics
from regbayes.plotting import plot_topic_proportions, salient_topics


def _outputs(result, out_dir, name):
    png, js, md = out_dir / f"{name}.png", out_dir / f"{name}.json", out_dir / "results.md"
    assert png.read_bytes().startswith(b"\x89PNG") and png.stat().st_size > 5000
    numbers = json.loads(js.read_text())  # strict JSON: no NaN
    assert numbers["experiment"] == name == result["name"]
    assert md.read_text().startswith("# ") and "|---" in md.read_text()
    return numbers


@pytest.fixture(autouse=True)
def no_20news(tmp_path, monkeypatch):
    """No 20 Newsgroups copy is visible, whatever the machine has cached."""
    monkeypatch.setenv("REGBAYES_DATA", str(tmp_path / "regbayes_home"))
    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(tmp_path / "sklearn_home"))


def test_fig8_quick_end_to_end(tmp_path):
    result = medlda_fig8.run(tmp_path, quick=True)
    numbers = _outputs(result, tmp_path, "medlda-fig8")
    settings = numbers["settings"]
    assert settings["corpus"] == "synthetic" and settings["k"] == 5
    assert settings["stand_in"] is True and settings["paper_settings"] is False
    assert "Corpus: offline stand-in for 20 Newsgroups" in (tmp_path / "results.md").read_text()
    runs = numbers["runs"]
    assert set(runs) == {"gibbs", "ssgrld", "baseline"}
    majority = max(np.bincount(medlda_fig8.load_corpus("synthetic", quick=True)["y_test"])) / settings["n_test"]
    for method in ("gibbs", "ssgrld"):
        r = runs[method]
        assert len(r["n_docs"]) == len(r["times"]) == len(r["accuracy"]) > 3
        assert np.all(np.diff(r["n_docs"]) > 0) and np.all(np.diff(r["times"]) >= 0)
        # 75 test documents: binomial s.e. <= 0.058; the runs measured 0.92-0.93 against a
        # majority rate of 0.55, so 0.15 above it leaves more than 3 s.e. on either side.
        assert r["final_accuracy"] > majority + 0.15
    # documents processed: a Gibbs sweep sees every training document, an SSGRLD step a batch
    gibbs, ssgrld = runs["gibbs"], runs["ssgrld"]
    assert gibbs["n_docs"][0] == settings["n_train"] * gibbs["iterations"][0]
    assert ssgrld["n_docs"][0] == 20 * ssgrld["iterations"][0]
    assert runs["baseline"]["batch_accuracy"] > majority + 0.15
    assert runs["baseline"]["batch_bayes_svm_accuracy"] > majority + 0.15
    assert len(runs["baseline"]["online"]["accuracy"]) > 3
    summary = numbers["target_summary"]
    assert summary["reference_accuracy"] == pytest.approx(np.mean(gibbs["accuracy"][-3:]))
    assert "Ratios Gibbs / SSGRLD" in (tmp_path / "results.md").read_text()


def test_fig8_rejects_unknown_options(tmp_path):
    with pytest.raises(ValueError, match="unknown method.*'hmc'"):
        medlda_fig8.run(tmp_path, quick=True, methods=("hmc",))
    with pytest.raises(ValueError, match="unknown corpus 'wiki'"):
        medlda_fig8.load_corpus("wiki")
    with pytest.raises(FileNotFoundError, match="20 Newsgroups"):
        medlda_fig8.load_corpus("20news")


def test_reach_summary_counts_documents_and_time_to_stay():
    gibbs = {"n_docs": [100, 200, 300, 400, 500], "times": [1.0, 2.0, 3.0, 4.0, 5.0],
             "accuracy": [0.50, 0.79, 0.81, 0.80, 0.80]}
    ssgrld = {"n_docs": [5, 10, 15, 20, 25], "times": [0.1, 0.2, 0.3, 0.4, 0.5],
              "accuracy": [0.60, 0.795, 0.70, 0.795, 0.80]}
    s = medlda_fig8.reach_summary(gibbs, ssgrld, tolerance=0.01)
    assert s["reference_accuracy"] == pytest.approx(0.8033333, abs=1e-6)
    assert (s["gibbs_docs"], s["gibbs_seconds"]) == (300, 3.0)   # 0.79 is 1.3 points off
    assert (s["ssgrld_docs"], s["ssgrld_seconds"]) == (20, 0.4)  # the dip at 15 resets the stay
    assert s["docs_ratio"] == pytest.approx(15.0) and s["time_ratio"] == pytest.approx(7.5)
    never = dict(ssgrld, accuracy=[0.5] * 5)
    assert medlda_fig8.reach_summary(gibbs, never)["docs_ratio"] is None


def _write_news(root):
    words = {"comp.graphics": "pixel render image shader", "rec.autos": "engine wheel brake clutch",
             "sci.space": "orbit rocket launch lunar"}
    for subset, n in (("train", 8), ("test", 3)):
        for cls, vocab in words.items():
            folder = root / f"20news-bydate-{subset}" / cls
            folder.mkdir(parents=True)
            for i in range(n):
                (folder / str(i)).write_text(f"Subject: x\n\nthe {vocab} and the {vocab.split()[i % 4]}\n")
    (root / "20news-bydate-test" / "sci.space" / "empty").write_text("Subject: y\n\nthe and of\n")


def test_20news_corpus_from_a_folder(tmp_path):
    _write_news(tmp_path / "news")
    data = medlda_fig8.load_corpus("20news", folder=tmp_path / "news")
    assert data["name"] == "20news" and data["class_names"] == ["comp.graphics", "rec.autos", "sci.space"]
    assert data["X_train"].shape == (24, 12) and data["X_test"].shape[0] == 9  # stop-word-only post dropped
    assert "the" not in data["vocabulary"] and "orbit" in data["vocabulary"]
    assert "1 test" in data["description"]
    np.testing.assert_array_equal(np.bincount(data["y_train"]), [8, 8, 8])
    # "auto" picks 20news when the standard files are present, unless quick
    assert medlda_fig8.load_corpus("auto", folder=tmp_path / "news")["name"] == "20news"
    assert medlda_fig8.load_corpus("auto", folder=tmp_path / "news", quick=True)["name"] == "synthetic"


def test_synthetic_vocabulary_names_words_after_their_topic():
    phi = np.array([[0.6, 0.3, 0.05, 0.05], [0.1, 0.1, 0.2, 0.6]])
    assert medlda_fig8.synthetic_vocabulary(phi) == ["space1", "space2", "hockey2", "hockey1"]
    data = medlda_fig8.load_corpus("synthetic", quick=True)
    assert len(set(data["vocabulary"])) == data["X_train"].shape[1]  # names are unique
    # the classes that occur, renumbered from 0 (one weight row per class)
    assert np.unique(data["y_train"]).tolist() == list(range(len(data["class_names"])))
    assert data["coef"].shape[0] == len(data["class_names"])


def test_topics_quick_end_to_end(tmp_path):
    result = medlda_topics.run(tmp_path, quick=True)
    numbers = _outputs(result, tmp_path, "medlda-topics")
    props = np.asarray(numbers["proportions"])
    assert props.shape == (len(numbers["class_names"]), 5)
    np.testing.assert_allclose(props.sum(axis=1), 1.0, atol=1e-9)  # averages of distributions
    recovery = numbers["topic_recovery"]
    # learned topics far closer to the true ones than the true ones are to uniform
    # (measured 0.18 against 0.80)
    assert recovery["mean_distance"] < 0.5 * recovery["baseline"]
    rows = [line for line in result["table"].splitlines()[2:]]
    # Table 1's point: a class's salient topic is its dominant true topic, whose words carry
    # that theme's name. Measured 3 of 3; at least 2 of 3 required.
    matches = sum(1 for row in rows if row.split("|")[2].strip() in row.split("|")[4])
    assert matches >= 2


def test_topic_helpers_against_exact_answers():
    theta = np.array([[0.8, 0.2, 0.0], [0.6, 0.4, 0.0], [0.0, 0.1, 0.9]])
    props = medlda_topics.class_topic_proportions(theta, [0, 0, 2], 3)
    np.testing.assert_allclose(props[0], [0.7, 0.3, 0.0])
    assert np.isnan(props[1]).all()
    np.testing.assert_allclose(props[2], [0.0, 0.1, 0.9])
    truth = np.array([[0.7, 0.1, 0.1, 0.1], [0.1, 0.1, 0.1, 0.7]])
    learned = np.array([[0.25, 0.25, 0.25, 0.25], truth[1], truth[0]])
    match = medlda_topics.hellinger_match(learned, truth)
    assert match["pairs"] == [[0, 2], [1, 1]] and match["mean_distance"] == pytest.approx(0.0, abs=1e-12)
    s = medlda_topics.sparsity(np.array([[1.0, 0.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25]]))
    np.testing.assert_allclose(s["effective_topics"], [1.0, 4.0])
    np.testing.assert_allclose(s["top2_share"], [1.0, 0.5])
    assert medlda_topics.top_word_names(truth, list("abcd"), 2) == [["a", "b"], ["d", "a"]]


def test_topic_proportion_figure(tmp_path):
    props = np.array([[0.60, 0.10, 0.10, 0.10, 0.10], [0.24, 0.19, 0.19, 0.19, 0.19],
                      [0.05, 0.42, 0.45, 0.04, 0.04]])
    assert salient_topics(props) == [[0], [0], [2, 1]]  # share > 2/K = 0.4 (largest first), else the largest
    fig = plot_topic_proportions(props, ["a", "b", "c"], ncols=2, title="t")  # 2 x 2 grid, one panel hidden
    fig.savefig(tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 5000
    assert sum(ax.get_visible() for ax in fig.axes) == 3
    with pytest.raises(ValueError, match="2 class names for 3 rows"):
        plot_topic_proportions(props, ["a", "b"])
    with pytest.raises(ValueError, match="shape \\(n_classes, K\\)"):
        plot_topic_proportions(np.ones(4))


# ---------------------------------------------------------------- medlda-multilabel
def test_multilabel_quick_end_to_end(tmp_path):
    from regbayes.experiments import medlda_multilabel

    result = medlda_multilabel.run(tmp_path, quick=True, n=160)
    numbers = _outputs(result, tmp_path, "medlda-multilabel")
    settings = numbers["settings"]
    assert settings["stand_in"] is True and settings["data"]["kind"] == "stand-in"
    assert settings["n_train"] == 160 and settings["n_test"] == 40 and settings["n_labels"] == 4
    text = (tmp_path / "results.md").read_text()
    assert "Corpus: offline stand-in for a multi-label corpus" in text and "Speed target" in text
    runs = numbers["runs"]
    assert set(runs) == {"gibbs", "ssgrld", "pamedlda", "baseline"}
    for method in ("gibbs", "ssgrld", "pamedlda"):
        curve = runs[method]
        assert len(curve["micro_f1"]) == len(curve["macro_f1"]) == len(curve["times"]) >= 5
        assert all(0 <= v <= 1 for v in curve["micro_f1"] + curve["macro_f1"])
        assert 0 <= curve["final_macro_f1"] <= 1
    assert runs["pamedlda"]["n_docs_total"] == 160  # one pass
    targets = numbers["targets"]
    assert set(targets["macro_f1_vs_baseline"]) == {"gibbs", "ssgrld"}
    assert targets["ssgrld_vs_pamedlda"]["key"] == "micro_f1"


def test_multilabel_reach_counts_time_to_stay():
    from regbayes.experiments.medlda_multilabel import reach

    pa = {"n_docs": [10, 20, 30, 40], "times": [1.0, 2.0, 3.0, 4.0], "micro_f1": [0.5, 0.705, 0.712, 0.713]}
    ss = {"n_docs": [5, 10, 15, 20], "times": [0.1, 0.2, 0.3, 0.4], "micro_f1": [0.72, 0.6, 0.705, 0.75]}
    out = reach(pa, ss, tolerance=0.01, final_window=3)
    assert out["reference"] == pytest.approx(0.71)
    # paMedLDA stays within 0.01 of 0.71 from its second snapshot; SSGRLD stays >= 0.70 from its third
    assert (out["reference_docs"], out["reference_seconds"]) == (20, 2.0)
    assert (out["docs"], out["seconds"]) == (15, 0.3)
    assert out["time_ratio"] == pytest.approx(2.0 / 0.3)
    assert out["reference_total_seconds"] == 4.0 and out["total_time_ratio"] == pytest.approx(4.0 / 0.3)
    never = reach(pa, {**ss, "micro_f1": [0.8, 0.8, 0.8, 0.5]})
    assert never["seconds"] is None and never["time_ratio"] is None


def test_multilabel_reads_an_svmlight_file_of_counts(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    from regbayes.datasets.topic_corpus import make_multilabel_topic_corpus
    from regbayes.experiments import medlda_multilabel
    from regbayes.experiments.data_option import DataError

    X, Y, _, _ = make_multilabel_topic_corpus(n_docs=150, n_topics=3, n_words=60, doc_length=30, n_labels=3,
                                              intercept=0.0, random_state=4)
    path = tmp_path / "corpus.svm"
    dump_svmlight_file(X, Y, str(path), multilabel=True, zero_based=True)
    data = medlda_multilabel.load_corpus(data=str(path), seed=0)
    assert data["stand_in"] is False and data["record"]["n_train"] + data["record"]["n_test"] <= 150
    assert data["Y_train"].shape[1] == data["Y_test"].shape[1] == len(data["label_names"])
    assert data["X_train"].dtype == np.int64
    result = medlda_multilabel.run(tmp_path / "out", data=str(path), k=3, methods=("pamedlda",), batch_size=30)
    assert result["numbers"]["settings"]["data"]["name"] == "corpus.svm"
    assert "Corpus: corpus.svm: multi-label svmlight" in open(result["markdown"]).read()
    with pytest.raises(DataError, match="registered single-label data set"):
        medlda_multilabel.load_corpus(data="higgs")
    bad = tmp_path / "tfidf.svm"
    dump_svmlight_file(X.astype(float) * 0.5, Y, str(bad), multilabel=True)
    with pytest.raises(DataError, match="not word counts"):
        medlda_multilabel.load_corpus(data=str(bad))
