"""Text-corpus loaders: 20 Newsgroups from a folder of the standard files or from
scikit-learn's cache (both built here in tmp_path), the registry's archive served by a
local HTTP server (checksum, safe extraction), the clear error when the corpus is absent,
and the lda package's labeled Reuters stories. Nothing is downloaded from the internet."""
from __future__ import annotations

import codecs
import dataclasses
import hashlib
import io
import pickle
import tarfile

import numpy as np
import pytest
import scipy.sparse as sp

from regbayes.datasets import ChecksumError, registry
from regbayes.datasets.text import (
    TWENTY_NEWS_FOLDERS,
    fetch_20newsgroups_folder,
    find_20newsgroups,
    load_20newsgroups,
    load_lda_reuters,
)

CLASSES = ("comp.graphics", "rec.autos", "sci.space")
POST = (
    "From: someone@{cls}.example\nSubject: about {cls}\nOrganization: none\n\n"
    "> quoted reply line\n"
    "Body about {cls} number {i}.\n"
    "Second body line.\n"
    "--\nsignature line\n"
)


def _write_bydate(root, n_train=(3, 2, 4), n_test=(1, 2, 1)):
    """``root/20news-bydate-{train,test}/<class>/<file>`` as the archive extracts."""
    for subset, sizes in (("train", n_train), ("test", n_test)):
        for cls, size in zip(CLASSES, sizes):
            folder = root / TWENTY_NEWS_FOLDERS[subset] / cls
            folder.mkdir(parents=True)
            for i in range(size):
                (folder / str(50000 + i)).write_text(POST.format(cls=cls, i=i), encoding="latin1")
    return root


@pytest.fixture
def bydate(tmp_path):
    return _write_bydate(tmp_path / "news")


@pytest.fixture
def no_default_folder(tmp_path, monkeypatch):
    """Point regbayes' data home at an empty folder so only the arguments count."""
    monkeypatch.setenv("REGBAYES_DATA", str(tmp_path / "empty_home"))


def test_folder_train_texts_labels_and_names(bydate, no_default_folder):
    corpus = load_20newsgroups("train", folder=bydate)
    assert corpus.target_names == list(CLASSES)
    assert corpus.target.dtype == np.int64
    np.testing.assert_array_equal(np.bincount(corpus.target), [3, 2, 4])
    assert len(corpus.texts) == 9
    for text, label in zip(corpus.texts, corpus.target):
        cls = CLASSES[label]
        assert f"Body about {cls}" in text  # each text sits under its own class
        # default remove=headers, footers, quotes (scikit-learn's rules)
        assert "From:" not in text and "quoted reply" not in text and "signature" not in text
    assert str(bydate) in corpus.source


def test_folder_keeps_parts_when_asked_and_subsets(bydate, no_default_folder):
    raw = load_20newsgroups("test", folder=bydate, remove=())
    np.testing.assert_array_equal(np.bincount(raw.target), [1, 2, 1])
    assert all(t.startswith("From: ") and "signature line" in t for t in raw.texts)
    everything = load_20newsgroups("all", folder=bydate)
    assert len(everything.texts) == 13
    np.testing.assert_array_equal(np.bincount(everything.target), [4, 4, 5])


def test_categories_renumbered_in_sorted_order(bydate, no_default_folder):
    corpus = load_20newsgroups(folder=bydate, categories=["sci.space", "comp.graphics"])
    assert corpus.target_names == ["comp.graphics", "sci.space"]
    np.testing.assert_array_equal(np.bincount(corpus.target), [3, 4])
    assert all(("sci.space" in t) == (y == 1) for t, y in zip(corpus.texts, corpus.target))
    with pytest.raises(ValueError, match="unknown categories.*talk.politics"):
        load_20newsgroups(folder=bydate, categories=["talk.politics"])


def test_bad_arguments_are_named(bydate, no_default_folder):
    with pytest.raises(ValueError, match="unknown subset 'dev'"):
        load_20newsgroups("dev", folder=bydate)
    with pytest.raises(ValueError, match="unknown part.*signatures"):
        load_20newsgroups(folder=bydate, remove=("signatures",))


def test_default_folder_under_regbayes_data_home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    _write_bydate(home / "20newsgroups")
    monkeypatch.setenv("REGBAYES_DATA", str(home))
    assert find_20newsgroups("train", data_home=tmp_path / "sk") == ("folder", home / "20newsgroups")
    assert len(load_20newsgroups(data_home=tmp_path / "sk").texts) == 9


def test_absent_corpus_error_says_what_to_do(tmp_path, no_default_folder):
    assert find_20newsgroups(data_home=tmp_path / "sk") is None
    with pytest.raises(FileNotFoundError) as info:
        load_20newsgroups(data_home=tmp_path / "sk")  # download=False: no network access
    message = str(info.value)
    for needle in ("20news-bydate.tar.gz", "folder=", "fetch_20newsgroups", "download=True",
                   str(tmp_path / "sk")):
        assert needle in message
    # an explicit folder without the standard layout is the only place looked at
    (tmp_path / "wrong").mkdir()
    with pytest.raises(FileNotFoundError, match="20news-bydate-train/<class>/<file>"):
        load_20newsgroups(folder=tmp_path / "wrong")
    _write_bydate(tmp_path / "train_only", n_test=(0, 0, 0))
    # the test folder exists (empty classes are still created): "all" works, with only train docs
    assert len(load_20newsgroups("all", folder=tmp_path / "train_only").texts) == 9


def _write_sklearn_cache(data_home, bydate):
    """scikit-learn's own cache format: zlib-compressed pickle of {train, test} Bunches
    made by ``load_files`` (what ``fetch_20newsgroups`` writes after its download)."""
    from sklearn.datasets import load_files

    cache = {s: load_files(str(bydate / TWENTY_NEWS_FOLDERS[s]), encoding="latin1") for s in ("train", "test")}
    data_home.mkdir(parents=True)
    (data_home / "20news-bydate_py3.pkz").write_bytes(codecs.encode(pickle.dumps(cache), "zlib_codec"))


def test_sklearn_cache_gives_the_same_corpus_as_the_folder(tmp_path, bydate, no_default_folder):
    sk_home = tmp_path / "sk"
    _write_sklearn_cache(sk_home, bydate)
    assert find_20newsgroups(data_home=sk_home) == ("sklearn", sk_home / "20news-bydate_py3.pkz")
    from_cache = load_20newsgroups("train", data_home=sk_home)
    from_folder = load_20newsgroups("train", folder=bydate)
    assert "scikit-learn cache" in from_cache.source
    assert from_cache.target_names == from_folder.target_names
    # same documents with the same labels, whatever the stored order
    assert sorted(zip(from_cache.texts, from_cache.target.tolist())) == sorted(
        zip(from_folder.texts, from_folder.target.tolist()))


def test_lda_reuters_labels_follow_dateline_countries():
    corpus = load_lda_reuters(min_class_size=20)
    assert sp.issparse(corpus.counts) and corpus.counts.format == "csr" and corpus.counts.dtype == np.int64
    assert corpus.counts.shape == (len(corpus.target), len(corpus.vocabulary)) == (270, 4258)
    assert corpus.target_names == ["FRANCE", "INDIA", "ITALY", "RUSSIA", "UK", "USA", "VATICAN"]
    for title, label in zip(corpus.titles, corpus.target):
        assert title.split(" ", 1)[1].upper().startswith(corpus.target_names[label] + ":")
    # the labels carry signal a topic model can find: "pope" is a VATICAN word
    pope = corpus.vocabulary.index("pope")
    rate = np.asarray(corpus.counts[:, pope].todense()).ravel() > 0
    assert rate[corpus.target == 6].mean() > 3 * rate[corpus.target != 6].mean()
    with pytest.raises(ValueError, match="min_class_size=1000 leaves 0 class"):
        load_lda_reuters(min_class_size=1000)


# ------------------------------------------------------------------ the registry's archive
def _archive(tmp_path, extra=()) -> bytes:
    """``20news-bydate.tar.gz`` as the host serves it (a top-level README beside the two
    folders), with ``extra`` (name, TarInfo type) members added."""
    root = _write_bydate(tmp_path / "archive_src")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name in TWENTY_NEWS_FOLDERS.values():
            tar.add(root / name, arcname=name)
        readme = b"bydate split"
        info = tarfile.TarInfo("README")
        info.size = len(readme)
        tar.addfile(info, io.BytesIO(readme))
        for name, kind in extra:
            info = tarfile.TarInfo(name)
            info.type = kind
            info.size = 0 if kind != tarfile.REGTYPE else 3
            info.linkname = "/etc/passwd" if kind == tarfile.SYMTYPE else ""
            tar.addfile(info, io.BytesIO(b"bad") if kind == tarfile.REGTYPE else None)
    return buffer.getvalue()


def _serve_archive(http_server, monkeypatch, data: bytes, pin: bool = True):
    """Serve ``data`` under the registry's name; with ``pin``, make the registry expect its
    digest (the real entry pins scikit-learn's)."""
    spec = registry.REGISTRY["20news"]
    (http_server.root / spec.files[0].filename).write_bytes(data)
    if pin:
        pinned = dataclasses.replace(spec.files[0], sha256=hashlib.sha256(data).hexdigest())
        monkeypatch.setitem(registry.REGISTRY, "20news", dataclasses.replace(spec, files=(pinned,)))


def test_fetch_20newsgroups_folder_downloads_checks_and_extracts(tmp_path, http_server, monkeypatch):
    _serve_archive(http_server, monkeypatch, _archive(tmp_path))
    home = tmp_path / "home"
    folder = fetch_20newsgroups_folder(data_home=home, base_url=http_server.url)
    assert folder == home / "20newsgroups"
    assert sorted(p.name for p in folder.iterdir()) == sorted(TWENTY_NEWS_FOLDERS.values())  # README left out
    corpus = load_20newsgroups("train", data_home=tmp_path / "no_sklearn", folder=folder)
    assert corpus.target_names == list(CLASSES) and len(corpus.texts) == 9
    # a pinned digest: no ".sha256" record, no leftovers; a second call makes no request
    assert sorted(p.name for p in (home / "20news").iterdir()) == ["5975967"]
    assert not (home / ".20newsgroups.part").exists()
    assert fetch_20newsgroups_folder(data_home=home, base_url=http_server.url) == folder
    assert http_server.count("5975967") == 1


@pytest.mark.parametrize("member", [("../evil", tarfile.REGTYPE), ("20news-bydate-train/link", tarfile.SYMTYPE)])
def test_fetch_20newsgroups_folder_refuses_unsafe_archives(tmp_path, http_server, monkeypatch, member):
    _serve_archive(http_server, monkeypatch, _archive(tmp_path, extra=[member]))
    home = tmp_path / "home"
    with pytest.raises(ValueError, match="was not extracted"):
        fetch_20newsgroups_folder(data_home=home, base_url=http_server.url)
    assert not (home / "20newsgroups").exists() and not (tmp_path / "evil").exists()


def test_fetch_20newsgroups_folder_checksum_mismatch_keeps_nothing(tmp_path, http_server, monkeypatch):
    _serve_archive(http_server, monkeypatch, b"not the archive", pin=False)  # the real pinned digest
    home = tmp_path / "home"
    with pytest.raises(ChecksumError, match="Checksum mismatch.*discarded"):
        fetch_20newsgroups_folder(data_home=home, base_url=http_server.url)
    assert list((home / "20news").iterdir()) == []
    assert not (home / "20newsgroups").exists()
