"""Fuzzed files for every data-set reader that takes a path (issue 21, deliverable 5).

Each reader gets a small valid file in its format (written here) that hypothesis then
damages: truncated, bytes flipped or inserted, lines dropped or repeated, a field replaced
by something that is not a number, the whole file compressed or its compressed stream cut.
The reader must either return data of the documented types, or raise ``ValueError`` or
``OSError`` whose message names the file it could not read. Anything else (an
``IndexError``, a bare ``UnicodeDecodeError``, a ``KeyError``, an ``EOFError`` from a cut
stream) is a bug.
"""
from __future__ import annotations

import bz2
import gzip
import lzma
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import dump_svmlight_file

from regbayes.datasets import (load_exam, load_fortunes, load_multiple_features, load_parkinsons, load_protein_fold,
                               load_svmlight, load_wordnet_glosses, load_yeast, make_parkinsons_like)
from regbayes.datasets.dense import read_csv_dense, read_svmlight_dense
from regbayes.datasets.multiple_features import MFEAT_VIEWS
from regbayes.datasets.parkinsons import write_parkinsons_csv
from regbayes.datasets.protein_fold import read_protein_fold_file
from regbayes.datasets.yeast import YEAST_FEATURES, YEAST_LABELS, YEAST_N_TEST, YEAST_N_TRAIN

EXAMPLES = 80
EXAMPLES_FULL_SIZE = 12  # readers that check a full-size file (yeast: 2,417 rows of 117 columns)
RNG = np.random.default_rng(0)
X_SMALL = np.round(RNG.normal(size=(12, 3)), 4)
Y_SMALL = np.where(X_SMALL[:, 0] > 0, 1, -1)


# ----------------------------------------------------------------------------- valid files
def _svmlight_bytes() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "f.svm")
        dump_svmlight_file(X_SMALL, Y_SMALL, path, zero_based=False)
        return Path(path).read_bytes()


def _csv_bytes() -> bytes:
    return "".join(f"{y},{','.join(f'{v:g}' for v in x)}\n" for x, y in zip(X_SMALL, Y_SMALL)).encode()


def _protein_bytes() -> bytes:
    X = np.round(RNG.uniform(0.0, 12.0, size=(8, 21)), 3)
    lines = ["# fold label, 20 percentages, length"] + [" ".join([str(c), *(repr(float(v)) for v in row)])
                                                        for c, row in zip(RNG.integers(1, 28, size=8), X)]
    return ("\n".join(lines) + "\n").encode()


def _parkinsons_bytes() -> bytes:
    data = make_parkinsons_like(random_state=0)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "parkinsons.data")
        write_parkinsons_csv(path, data.X[:10], data.y[:10], data.names[:10])
        return Path(path).read_bytes()


def _exam_bytes() -> bytes:
    header = "rownames,school,normexam,schgend,schavg,vr,intake,standLRT,sex,type,student"
    rows = ['1,3,0.26,"mixed",0.17,"mid 50%","bottom 25%",0.62,"F","Mxd",143',
            '2,3,0.13,"mixed",0.17,"mid 50%","mid 50%",0.21,"M","Mxd",145',
            '3,7,-1.72,"boys",-0.3,"top 25%","top 25%",-1.36,"M","Sngl",1',
            '4,7,0.9,"boys",-0.3,"top 25%","mid 50%",0.5,"M","Sngl",2']
    return ("\n".join([header] + rows) + "\n").encode()


def _yeast_bytes() -> bytes:
    """river's yeast.csv layout at full size (the reader checks the row count): random values."""
    n = YEAST_N_TEST + YEAST_N_TRAIN
    X = np.round(RNG.normal(0.0, 0.1, size=(n, len(YEAST_FEATURES))), 3)
    Y = (RNG.random((n, len(YEAST_LABELS))) < 0.3).astype(int)
    rows = [",".join([*(f"{v:g}" for v in x), *map(str, y)]) for x, y in zip(X, Y)]
    return ("\n".join([",".join(YEAST_FEATURES + YEAST_LABELS)] + rows) + "\n").encode()


NOUNS = (
    "  1 This software and database is being provided to you, the LICENSEE, by  \n"
    "00015388 05 n 03 animal 0 animate_being 0 beast 0 002 @ 00004475 n 0000 ~ 00015568 n 0000 "
    "| a living organism characterized by voluntary movement  \n"
    "02084071 05 n 01 dog 0 001 @ 02083346 n 0000 | a member of the genus Canis; \"the dog barked\"  \n"
    "03082979 06 n 01 computer 0 000 | a machine for performing calculations automatically  \n"
    "03574555 06 n 02 institution 0 establishment 0 000 | a building or complex of buildings  \n"
).encode()
FORTUNES = "Real programmers use a debugger.\n%\nThe computer is down.\n\t-- an operator\n%\nYow!\n%\n".encode()


def _mfeat_view(name: str) -> bytes:
    d = MFEAT_VIEWS[name]
    target = np.repeat(np.arange(10), 2)
    X = np.random.default_rng(d).integers(0, 7, size=(target.size, d))
    header = ",".join(str(j) for j in range(d)) + ",0"
    return ("\r\n".join([header] + [",".join([*map(str, x), str(c)]) for x, c in zip(X, target)]) + "\r\n").encode()


# ----------------------------------------------------------------------------- damage
TOKENS = [b"nan", b"inf", b"-", b"", b"abc", b"1e400", b"\x00", "\u00e9".encode(), b"\xff\xfe", b"3:4:5", b",,", b"|"]


@st.composite
def damaged(draw, content: bytes):
    """``content`` with one or two kinds of damage; returns ``(what, bytes)``."""
    what = []
    for _ in range(draw(st.integers(1, 2))):
        kind = draw(st.sampled_from(("truncate", "flip", "insert", "drop_line", "repeat_line", "token", "empty",
                                     "compress", "cut_stream")))
        what.append(kind)
        if kind == "truncate":
            content = content[: draw(st.integers(0, max(0, len(content) - 1)))]
        elif kind == "flip" and content:
            i = draw(st.integers(0, len(content) - 1))
            content = content[:i] + bytes([draw(st.integers(0, 255))]) + content[i + 1:]
        elif kind == "insert":
            i = draw(st.integers(0, len(content)))
            content = content[:i] + draw(st.binary(min_size=1, max_size=8)) + content[i:]
        elif kind in ("drop_line", "repeat_line", "token"):
            lines = content.split(b"\n")
            i = draw(st.integers(0, len(lines) - 1))
            if kind == "drop_line":
                del lines[i]
            elif kind == "repeat_line":
                lines.insert(i, lines[i])
            else:
                fields = lines[i].replace(b",", b" ").split(b" ")
                j = draw(st.integers(0, len(fields) - 1))
                old = fields[j]
                if old:
                    lines[i] = lines[i].replace(old, draw(st.sampled_from(TOKENS)), 1)
            content = b"\n".join(lines)
        elif kind == "empty":
            content = b""
        elif kind == "compress":
            content = draw(st.sampled_from((gzip.compress, bz2.compress, lzma.compress)))(content)
        elif kind == "cut_stream":
            stream = gzip.compress(content)
            content = stream[: draw(st.integers(2, max(2, len(stream) - 1)))]
    return "+".join(what), content


# ----------------------------------------------------------------------------- readers
def _check_arrays(*arrays):
    for a in arrays:
        assert isinstance(a, np.ndarray) or sp.issparse(a)


def _svmlight(path, _):
    X, y = load_svmlight(path)
    _check_arrays(X, y)
    assert X.shape[0] == y.shape[0]


def _svmlight_dense(path, _):
    X, y = read_svmlight_dense(path, 3)
    _check_arrays(X, y)
    assert X.shape == (len(y), 3)


def _csv_dense(path, _):
    X, y = read_csv_dense(path, 3)
    _check_arrays(X, y)
    assert X.shape == (len(y), 3)


def _protein(path, _):
    X, y = read_protein_fold_file(path)
    _check_arrays(X, y)
    assert X.shape[0] == y.shape[0]


def _protein_pair(path, folder):
    d = load_protein_fold(path, path)
    assert d.X_train.shape[1] == d.X_test.shape[1]


def _parkinsons(path, _):
    d = load_parkinsons(path)
    assert d.X.shape == (len(d.y), 22) and np.isfinite(d.X).all() and set(np.unique(d.y)) <= {0, 1}


def _exam(path, _):
    d = load_exam(path)
    assert d.X.shape[0] == d.y.shape[0] and np.isfinite(d.X).all()


def _yeast(path, _):
    d = load_yeast(path)
    assert d.X.shape[0] == d.Y.shape[0] and np.isfinite(d.X).all() and set(np.unique(d.Y)) <= {0, 1}


def _wordnet(path, folder):
    corpus = load_wordnet_glosses(folder, min_class_size=1)
    assert len(corpus.texts) == len(corpus.target) and all(isinstance(t, str) for t in corpus.texts)


def _fortunes(path, folder):
    corpus = load_fortunes(folder, min_class_size=1)
    assert len(corpus.texts) == len(corpus.target) and all(isinstance(t, str) for t in corpus.texts)


def _multiple_features(path, folder):
    d = load_multiple_features(folder)
    assert all(len(v) == len(d.target) for v in d.views.values())


# name: (reader, valid bytes, file name, other files of the folder)
READERS = {
    "load_svmlight": (_svmlight, _svmlight_bytes(), "f.svm", {}),
    "read_svmlight_dense": (_svmlight_dense, _svmlight_bytes(), "f.svm", {}),
    "read_csv_dense": (_csv_dense, _csv_bytes(), "f.csv", {}),
    "read_protein_fold_file": (_protein, _protein_bytes(), "train.txt", {}),
    "load_protein_fold": (_protein_pair, _protein_bytes(), "train.txt", {}),
    "load_parkinsons": (_parkinsons, _parkinsons_bytes(), "parkinsons.data", {}),
    "load_exam": (_exam, _exam_bytes(), "Exam.csv", {}),
    "load_yeast": (_yeast, _yeast_bytes(), "yeast.csv", {}),
    "load_wordnet_glosses": (_wordnet, NOUNS, "data.noun", {}),
    "load_fortunes": (_fortunes, FORTUNES, "computers", {"food": b"An apple a day.\n%\nBread.\n%\n"}),
    "load_multiple_features": (_multiple_features, _mfeat_view("fac"), "mfeat-fac.csv",
                               {f"mfeat-{v}.csv": _mfeat_view(v) for v in MFEAT_VIEWS if v != "fac"}),
}


@pytest.mark.parametrize("name", sorted(READERS))
def test_reader_reads_its_valid_file(name, tmp_path):
    reader, content, filename, others = READERS[name]
    for other, data in others.items():
        (tmp_path / other).write_bytes(data)
    (tmp_path / filename).write_bytes(content)
    reader(tmp_path / filename, tmp_path)


@pytest.mark.parametrize("name", sorted(READERS))
def test_reader_refuses_damaged_files_clearly(name):
    reader, content, filename, others = READERS[name]

    @settings(max_examples=EXAMPLES_FULL_SIZE if len(content) > 100_000 else EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=damaged(content))
    def run(case):
        what, data = case
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            for other, valid in others.items():
                (folder / other).write_bytes(valid)
            path = folder / filename
            path.write_bytes(data)
            try:
                reader(path, folder)
            except (ValueError, OSError) as exc:
                message = str(exc)
                assert filename in message or str(folder) in message, f"{what}: the message names no file: {message!r}"
                assert type(exc) is not UnicodeDecodeError, f"{what}: a bare decoding error: {message!r}"
            assert path.read_bytes() == data, f"{what}: the reader changed its file"

    run()
