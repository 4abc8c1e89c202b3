"""The fixed split and vocabulary of the Debian-package corpora in the topic experiments,
on fortune files written here."""
from __future__ import annotations

import numpy as np
import pytest

from regbayes.experiments import corpus_split, medlda_fig8
from regbayes.experiments.data_option import CORPUS, DataError, load_system_corpus, resolve

WORDS = {"computers": ["program", "compiler", "bug", "kernel", "disk", "byte"],
         "food": ["apple", "bread", "cheese", "soup", "salad", "pepper"]}


@pytest.fixture
def fortunes(tmp_path):
    rng = np.random.default_rng(0)
    for name, words in WORDS.items():
        entries = [" ".join(rng.choice(words, size=5)) + " the and" for _ in range(150)]
        (tmp_path / name).write_text("\n%\n".join(entries) + "\n")
    (tmp_path / "tiny").write_text("one entry only\n")  # below the entry's min_class_size=100
    return tmp_path


def test_fixed_split_whatever_the_seed(fortunes):
    source = resolve("fortunes", CORPUS)
    a = corpus_split.load_system_split(source, seed=0, folder=fortunes)
    b = corpus_split.load_system_split(source, seed=5, folder=fortunes)
    assert a["X_train"].shape[0] == 240 and a["X_test"].shape[0] == 60
    assert (a["X_train"] != b["X_train"]).nnz == 0 and np.array_equal(a["y_test"], b["y_test"])
    assert sorted(a["vocabulary"]) == sorted(WORDS["computers"] + WORDS["food"])  # stop words removed
    assert a["class_names"] == ["computers", "food"] and a["name"] == "fortunes" and not a["stand_in"]
    assert "fixed random 80% / 20% split" in a["description"] and "min_df=5" in a["description"]
    # labels follow the words
    comp = a["vocabulary"].index("compiler")
    assert set(a["y_train"][a["X_train"][:, comp].toarray().ravel() > 0]) == {0}


def test_training_subset_and_quick(fortunes):
    source = resolve("fortunes", CORPUS)
    full = corpus_split.load_system_split(source, folder=fortunes)
    sub = corpus_split.load_system_split(source, n=100, seed=1, folder=fortunes)
    assert sub["X_train"].shape[0] == 100 and sub["X_test"].shape[0] == full["X_test"].shape[0]
    assert "100 training documents drawn with seed 1" in sub["description"]
    quick = corpus_split.load_system_split(source, n=80, quick=True, folder=fortunes)
    assert quick["X_train"].shape[0] == 80 and quick["X_test"].shape[0] == 20


def test_missing_package_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match=r"data 'wordnet-nouns': .*apt-get install wordnet-base"):
        load_system_corpus(resolve("wordnet-nouns", CORPUS), folder=tmp_path)


def test_fig8_load_corpus_reads_a_debian_corpus(monkeypatch, fortunes):
    from regbayes.datasets import registry

    original = registry.SystemDataset.load
    monkeypatch.setattr(registry.SystemDataset, "load", lambda self, folder=None: original(self, fortunes))
    data = medlda_fig8.load_corpus(data="fortunes", seed=3)
    assert data["name"] == "fortunes" and data["record"]["kind"] == "registered"
    assert data["X_train"].shape[0] == 240 and data["record"]["description"] == data["description"]
