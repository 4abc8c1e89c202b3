"""The corpora that Debian packages install: WordNet's glosses and the fortune files,
read from small files written here in the packages' formats."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from regbayes.datasets import load_fortunes, load_wordnet_glosses
from regbayes.datasets.corpora import FORTUNES_FOLDER, LEXICOGRAPHER_FILES, WORDNET_FOLDER

HEADER = ("  1 This software and database is being provided to you, the LICENSEE, by  \n"
          "  2 Princeton University under the following license.  |  not a gloss\n")

NOUNS = HEADER + (
    "00015388 05 n 03 animal 0 animate_being 0 beast 0 002 @ 00004475 n 0000 ~ 00015568 n 0000 "
    "| a living organism characterized by voluntary movement  \n"
    "02084071 05 n 01 dog 0 001 @ 02083346 n 0000 | a member of the genus Canis; \"the dog barked\"  \n"
    "03082979 06 n 01 computer 0 000 | a machine for performing calculations automatically  \n"
    "07555863 13 n 01 food 0 000 | any substance that can be metabolized by an animal  \n"
    "03574555 06 n 02 institution 0 establishment 0 000 | a building or complex of buildings  \n"
)
VERBS = HEADER + (
    "01835496 38 v 02 travel 0 go 0 001 @ 01831531 v 0000 01 + 02 00 | change location; move  \n"
    "01904930 38 v 01 walk 0 000 01 + 01 00 | use one's feet to advance  \n"
)


def _wordnet(tmp_path, nouns=NOUNS, verbs=VERBS) -> Path:
    (tmp_path / "data.noun").write_text(nouns)
    if verbs is not None:
        (tmp_path / "data.verb").write_text(verbs)
    return tmp_path


# ----------------------------------------------------------------------------- WordNet
def test_wordnet_glosses_labeled_by_lexicographer_file(tmp_path):
    folder = _wordnet(tmp_path)
    corpus = load_wordnet_glosses(folder, min_class_size=1)
    assert corpus.target_names == ["noun.animal", "noun.artifact", "noun.food"]  # WordNet's numbering order
    assert corpus.texts[0] == "a living organism characterized by voluntary movement"
    assert corpus.texts[1] == 'a member of the genus Canis; "the dog barked"'
    assert corpus.target.dtype == np.int64
    assert corpus.target.tolist() == [0, 0, 1, 2, 1]
    assert "data.noun" in corpus.source and str(folder) in corpus.source


def test_wordnet_lemmas_parts_of_speech_and_class_sizes(tmp_path):
    folder = _wordnet(tmp_path)
    corpus = load_wordnet_glosses(folder, pos=("verb", "noun"), min_class_size=2, with_lemmas=True)
    # verb.motion (2), noun.animal (2), noun.artifact (2) kept; noun.food (1) dropped
    assert corpus.target_names == ["noun.animal", "noun.artifact", "verb.motion"]
    assert corpus.texts[0] == "travel, go; change location; move"
    assert corpus.texts[2] == "animal, animate being, beast; a living organism characterized by voluntary movement"
    assert [corpus.target_names[t] for t in corpus.target] == ["verb.motion"] * 2 + ["noun.animal"] * 2 + \
        ["noun.artifact"] * 2
    with pytest.raises(ValueError, match="leaves 1 class"):
        load_wordnet_glosses(folder, pos="verb", min_class_size=1)


def test_wordnet_bad_arguments_and_missing_files(tmp_path):
    folder = _wordnet(tmp_path, verbs=None)
    with pytest.raises(ValueError, match="pos must name distinct parts of speech"):
        load_wordnet_glosses(folder, pos=("nouns",))
    with pytest.raises(ValueError, match="pos must name distinct"):
        load_wordnet_glosses(folder, pos=("noun", "noun"))
    with pytest.raises(ValueError, match="min_class_size must be an integer >= 1"):
        load_wordnet_glosses(folder, min_class_size=0)
    with pytest.raises(FileNotFoundError, match=r"data\.verb is missing .*apt-get install wordnet-base"):
        load_wordnet_glosses(folder, pos=("noun", "verb"))
    with pytest.raises(FileNotFoundError, match="Debian package 'wordnet-base'"):
        load_wordnet_glosses(tmp_path / "nowhere")
    (tmp_path / "data.adv").write_text(HEADER)
    with pytest.raises(ValueError, match="no synset in"):
        load_wordnet_glosses(folder, pos="adv")


@pytest.mark.parametrize("line, problem", [
    ("02084071 05 n 01 dog 0 001 @ 02083346 n 0000 a member without a bar\n", "no '|'"),
    ("2084071 05 n 01 dog 0 000 | short offset\n", "not 'offset lex_filenum"),
    ("02084071 45 n 01 dog 0 000 | lexicographer file 45\n", "lexicographer file number '45'"),
    ("02084071 5x n 01 dog 0 000 | lexicographer file 5x\n", "lexicographer file number '5x'"),
    ("02084071 05 v 01 dog 0 000 | a verb line in data.noun\n", "synset type 'v'"),
    ("02084071 05 n 05 dog 0 000 | five words announced\n", "word count '05'"),
    ("02084071 05 n zz dog 0 000 | not hex\n", "word count 'zz'"),
])
def test_wordnet_malformed_line_names_file_and_line(tmp_path, line, problem):
    folder = _wordnet(tmp_path, nouns=NOUNS + line)
    with pytest.raises(ValueError, match=rf"data\.noun:8: malformed WordNet data line \({problem}"):
        load_wordnet_glosses(folder, min_class_size=1)


def test_lexicographer_file_names():
    assert len(LEXICOGRAPHER_FILES) == 45 and len(set(LEXICOGRAPHER_FILES)) == 45
    assert LEXICOGRAPHER_FILES[3] == "noun.Tops" and LEXICOGRAPHER_FILES[38] == "verb.motion"
    assert LEXICOGRAPHER_FILES[44] == "adj.ppl"


@pytest.mark.skipif(not os.path.isfile(os.path.join(WORDNET_FOLDER, "data.noun")),
                    reason="Debian package wordnet-base not installed")
def test_installed_wordnet_nouns():
    corpus = load_wordnet_glosses()
    assert len(corpus.texts) == 82022 and len(corpus.target_names) == 24
    assert "noun.Tops" not in corpus.target_names and "noun.animal" in corpus.target_names
    assert np.bincount(corpus.target).min() >= 100


# ----------------------------------------------------------------------------- fortunes
def _fortunes(tmp_path) -> Path:
    (tmp_path / "computers").write_text("Real programmers use a debugger.\n%\nThe computer is down.\n"
                                        "\t-- an operator\n%\n%\nLast entry, no closing separator\n")
    (tmp_path / "food").write_text("%\nAn apple a day.\n%\r\nBread and\r\nbutter.\r\n%\n")
    (tmp_path / "computers.dat").write_bytes(b"\x00\x00\x00\x02 index")
    (tmp_path / "computers.u8").symlink_to("computers")
    (tmp_path / ".hidden").write_text("not read\n%\n")
    (tmp_path / "off").mkdir()
    (tmp_path / "off" / "offensive").write_text("not read\n%\n")
    return tmp_path


def test_fortunes_entries_labeled_by_file(tmp_path):
    corpus = load_fortunes(_fortunes(tmp_path), min_class_size=1)
    assert corpus.target_names == ["computers", "food"]
    assert corpus.texts == ["Real programmers use a debugger.", "The computer is down.\n\t-- an operator",
                            "Last entry, no closing separator", "An apple a day.", "Bread and\nbutter."]
    assert corpus.target.tolist() == [0, 0, 0, 1, 1] and corpus.target.dtype == np.int64
    assert str(tmp_path) in corpus.source


def test_fortunes_categories_and_class_sizes(tmp_path):
    folder = _fortunes(tmp_path)
    (folder / "zippy").write_text("Are we having fun yet?\n%\nYow!\n%\nI am a fork.\n")
    corpus = load_fortunes(folder, categories=["zippy", "food"], min_class_size=1)
    assert corpus.target_names == ["food", "zippy"] and corpus.target.tolist() == [0, 0, 1, 1, 1]
    assert load_fortunes(folder, min_class_size=3).target_names == ["computers", "zippy"]
    with pytest.raises(ValueError, match=r"unknown categories \['cookie'\]; known: computers, food, zippy"):
        load_fortunes(folder, categories=["cookie"])
    with pytest.raises(ValueError, match="unknown categories"):
        load_fortunes(folder, categories=[])
    with pytest.raises(ValueError, match="leaves 1 class"):
        load_fortunes(folder, categories="zippy", min_class_size=1)


def test_fortunes_bad_input(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"apt-get install fortunes.*folder="):
        load_fortunes(tmp_path / "nowhere")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="Debian package 'fortunes'"):
        load_fortunes(empty)
    (tmp_path / "f").mkdir()
    folder = _fortunes(tmp_path / "f")
    (folder / "binary").write_bytes(b"abc\x00def\n%\n")
    with pytest.raises(ValueError, match=r"binary: holds NUL bytes"):
        load_fortunes(folder, min_class_size=1)


@pytest.mark.skipif(not os.path.isfile(os.path.join(FORTUNES_FOLDER, "computers")),
                    reason="Debian package fortunes not installed")
def test_installed_fortunes():
    corpus = load_fortunes()
    assert len(corpus.target_names) == 32 and len(corpus.texts) == 14691
    assert "computers" in corpus.target_names and "pratchett" not in corpus.target_names


# ----------------------------------------------------------------------------- registry
def test_registry_entries_of_the_debian_corpora(tmp_path):
    import json

    from regbayes.datasets import SystemDataset, fetch_dataset_files, get_dataset, list_datasets

    system = {k: v for k, v in list_datasets().items() if isinstance(v, SystemDataset)}
    assert {k: (v.system_package, v.folder, v.loader, v.n_samples, v.n_classes) for k, v in system.items()} == {
        "wordnet-nouns": ("wordnet-base", WORDNET_FOLDER, "load_wordnet_glosses", 82022, 24),
        "fortunes": ("fortunes", FORTUNES_FOLDER, "load_fortunes", 14691, 32),
    }
    info = get_dataset("wordnet-nouns").to_dict()
    assert info["install"] == "apt-get install wordnet-base" and info["options"] == {"pos": ("noun",),
                                                                                    "min_class_size": 100}
    json.dumps(info)
    assert get_dataset("fortunes").urls() == {} and get_dataset("fortunes").files == ()
    with pytest.raises(ValueError, match=r"Debian package 'fortunes' \(apt-get install fortunes\).*load_fortunes"):
        fetch_dataset_files("fortunes")
    folder = _fortunes(tmp_path)
    (folder / "zippy").write_text("%\n".join(f"entry {i}\n" for i in range(100)))
    (folder / "food").write_text("%\n".join(f"meal {i}\n" for i in range(120)))
    corpus = get_dataset("fortunes").load(folder)  # the entry's min_class_size=100
    assert corpus.target_names == ["food", "zippy"] and np.bincount(corpus.target).tolist() == [120, 100]
    with pytest.raises(FileNotFoundError, match="apt-get install wordnet-base"):
        get_dataset("wordnet-nouns").load(tmp_path / "nowhere")
