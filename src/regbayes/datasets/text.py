"""Labeled text corpora for the topic models (paper 000, Section 5.2).

* :func:`load_20newsgroups` -- the 20 Newsgroups "bydate" corpus (the paper's 20news:
  11,269 training documents, 20 classes), as raw texts. It reads, in this order, a
  folder of the standard files (``folder``, else ``<regbayes data home>/20newsgroups``),
  then scikit-learn's cache of ``fetch_20newsgroups``. Nothing is downloaded unless
  ``download=True``; when the data are absent the error says where they were looked for
  and how to provide them.
* :func:`find_20newsgroups` -- where :func:`load_20newsgroups` would read from (or None),
  without reading: experiments use it to pick 20 Newsgroups "when present".
* :func:`fetch_20newsgroups_folder` -- the registry's "20news" archive (scikit-learn's
  copy, checked against scikit-learn's SHA-256) downloaded through
  :func:`regbayes.datasets.download.fetch_file` and extracted into the folder that
  :func:`load_20newsgroups` reads first.
* :func:`load_lda_reuters` -- the only labeled corpus that an installed dependency ships:
  the 395 Reuters news stories of the ``lda`` package (bag of words, 4,258 terms), each
  labeled with the country of its dateline title ("UK: ...", "VATICAN: ..."). It is
  small and the labels are weak, but it is real text and needs no download.

scikit-learn ships no text corpus (only fetchers) and nltk is not a dependency.

No paper equation is implemented here.
"""
from __future__ import annotations

import os
import shutil
import tarfile
from collections import Counter
from pathlib import Path
from typing import NamedTuple, Sequence

import numpy as np
import scipy.sparse as sp

from ..validation import check_int
from .download import get_data_home
from .fetch import fetch_dataset_files

__all__ = [
    "TextCorpus",
    "CountCorpus",
    "load_20newsgroups",
    "find_20newsgroups",
    "fetch_20newsgroups_folder",
    "load_lda_reuters",
    "TWENTY_NEWS_FOLDERS",
]

#: The sub-folders of the standard "bydate" archive ``20news-bydate.tar.gz``.
TWENTY_NEWS_FOLDERS = {"train": "20news-bydate-train", "test": "20news-bydate-test"}
_SUBSETS = ("train", "test", "all")
_REMOVABLE = ("headers", "footers", "quotes")
#: scikit-learn's cache file of ``fetch_20newsgroups`` (``_pkl_filepath`` adds ``_py3``).
_SKLEARN_CACHE = "20news-bydate_py3.pkz"


class TextCorpus(NamedTuple):
    """Raw documents with integer labels.

    ``texts`` (list of str), ``target`` (int64 array in ``0 .. len(target_names) - 1``),
    ``target_names`` (list of class names, ``target_names[target[i]]`` is document i's
    class) and ``source`` (where the documents were read from).
    """

    texts: list
    target: np.ndarray
    target_names: list
    source: str


class CountCorpus(NamedTuple):
    """Documents as a ``scipy.sparse`` CSR document-term count matrix (int64) with
    integer labels, class names, the vocabulary (``vocabulary[j]`` is column j's word),
    one title per document, and the source."""

    counts: sp.csr_matrix
    target: np.ndarray
    target_names: list
    vocabulary: list
    titles: list
    source: str


# ----------------------------------------------------------------------------- 20 Newsgroups
def _default_folder() -> Path:
    return Path(get_data_home()) / "20newsgroups"


def _sklearn_cache(data_home) -> Path:
    from sklearn.datasets import get_data_home as sklearn_data_home

    return Path(sklearn_data_home(data_home=data_home)) / _SKLEARN_CACHE


def _has_standard_files(folder: Path, subset: str) -> bool:
    names = TWENTY_NEWS_FOLDERS.values() if subset == "all" else [TWENTY_NEWS_FOLDERS[subset]]
    return all((folder / name).is_dir() for name in names)


def find_20newsgroups(subset: str = "train", *, folder=None, data_home=None):
    """Where :func:`load_20newsgroups` would read ``subset`` from, without reading.

    Returns ``("folder", path)`` for a folder of the standard files, ``("sklearn",
    path)`` for scikit-learn's cache file, or ``None`` when neither is present (an
    explicit ``folder`` is the only place looked at when given).
    """
    _check_subset(subset)
    if folder is not None:
        folder = Path(folder)
        return ("folder", folder) if _has_standard_files(folder, subset) else None
    default = _default_folder()
    if _has_standard_files(default, subset):
        return ("folder", default)
    cache = _sklearn_cache(data_home)
    if cache.is_file():
        return ("sklearn", cache)
    return None


def _safe_members(archive: tarfile.TarFile, path):
    """The archive's members under the bydate folders; anything else that could write
    outside them (absolute names, "..", links, devices) is an error."""
    keep = []
    for member in archive.getmembers():
        parts = Path(member.name).parts
        if member.name.startswith(("/", "\\")) or ".." in parts:
            raise ValueError(f"{path}: unsafe member name {member.name!r}; the archive was not extracted")
        if not parts or parts[0] not in TWENTY_NEWS_FOLDERS.values():
            continue
        if not (member.isfile() or member.isdir()):
            raise ValueError(f"{path}: member {member.name!r} is not a plain file or folder; "
                             "the archive was not extracted")
        keep.append(member)
    return keep


def fetch_20newsgroups_folder(data_home=None, download_if_missing=True, base_url=None) -> Path:
    """The folder ``<regbayes data home>/20newsgroups`` holding the standard bydate files,
    downloaded and extracted when missing.

    The archive is the registry's "20news" entry (``20news-bydate.tar.gz`` as scikit-learn
    fetches it, verified against scikit-learn's SHA-256 before use: a mismatch raises
    :class:`regbayes.datasets.ChecksumError` and nothing is kept). Only the members under
    ``20news-bydate-train/`` and ``20news-bydate-test/`` are extracted, into a temporary
    folder renamed into place, so an interrupted extraction never looks complete.
    """
    target = Path(get_data_home(data_home)) / "20newsgroups"
    if _has_standard_files(target, "all"):
        return target
    archive_path = fetch_dataset_files("20news", data_home, download_if_missing, base_url)["archive"]
    tmp = target.with_name(".20newsgroups.part")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        try:
            with tarfile.open(archive_path, "r:*") as archive:
                members = _safe_members(archive, archive_path)
                tmp.mkdir(parents=True)
                # the "data" filter (Python >= 3.11.4) re-checks what _safe_members checked
                safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
                for member in members:
                    archive.extract(member, tmp, set_attrs=False, **safe)
        except tarfile.TarError as exc:
            raise ValueError(f"{archive_path} is not a readable tar archive ({exc})") from exc
        if not _has_standard_files(tmp, "all"):
            raise ValueError(f"{archive_path} holds no {' and '.join(TWENTY_NEWS_FOLDERS.values())} folders")
        target.mkdir(parents=True, exist_ok=True)
        for name in TWENTY_NEWS_FOLDERS.values():
            if not (target / name).exists():
                os.replace(tmp / name, target / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _check_subset(subset):
    if subset not in _SUBSETS:
        raise ValueError(f"unknown subset {subset!r}; choose one of {', '.join(map(repr, _SUBSETS))}")


def _check_remove(remove) -> tuple:
    if remove is None:
        return ()
    if isinstance(remove, str):
        remove = (remove,)
    remove = tuple(remove)
    unknown = [r for r in remove if r not in _REMOVABLE]
    if unknown:
        raise ValueError(f"unknown part(s) to remove {unknown}; choose from {', '.join(map(repr, _REMOVABLE))}")
    return remove


def _strip(texts, remove):
    """scikit-learn's own header / footer / quote stripping (what ``fetch_20newsgroups``'s
    ``remove`` does), so that both sources give the same texts."""
    from sklearn.datasets import _twenty_newsgroups as tn

    strip = {"headers": tn.strip_newsgroup_header, "footers": tn.strip_newsgroup_footer,
             "quotes": tn.strip_newsgroup_quoting}
    for part in _REMOVABLE:  # the order fetch_20newsgroups applies them in
        if part in remove:
            texts = [strip[part](t) for t in texts]
    return texts


def _read_folder(folder: Path, subset: str):
    from sklearn.datasets import load_files

    parts = ("train", "test") if subset == "all" else (subset,)
    texts, target, names = [], [], None
    for part in parts:
        path = folder / TWENTY_NEWS_FOLDERS[part]
        bunch = load_files(str(path), encoding="latin1", decode_error="replace", shuffle=False)
        if names is None:
            names = list(bunch.target_names)
        elif list(bunch.target_names) != names:
            raise ValueError(f"the class folders of {folder / TWENTY_NEWS_FOLDERS['train']} and "
                             f"{folder / TWENTY_NEWS_FOLDERS['test']} differ: {names} vs {list(bunch.target_names)}")
        texts += list(bunch.data)
        target.append(np.asarray(bunch.target, dtype=np.int64))
    return texts, np.concatenate(target), names


def _read_sklearn(subset: str, data_home, download: bool):
    from sklearn.datasets import fetch_20newsgroups

    bunch = fetch_20newsgroups(data_home=data_home, subset=subset, shuffle=False,
                               download_if_missing=download, remove=())
    return list(bunch.data), np.asarray(bunch.target, dtype=np.int64), list(bunch.target_names)


def _not_found_message(subset, folder, data_home) -> str:
    looked = [str(Path(folder)) if folder is not None else str(_default_folder())]
    if folder is None:
        looked.append(str(_sklearn_cache(data_home)))
    need = " and ".join(TWENTY_NEWS_FOLDERS.values()) if subset == "all" else TWENTY_NEWS_FOLDERS[subset]
    return (
        f"20 Newsgroups ({subset!r}) not found; looked in: {'; '.join(looked)}. Provide it in one of "
        f"these ways: (1) extract 20news-bydate.tar.gz (the standard 'bydate' archive) so that a folder "
        f"holds {need}/<class>/<file> and pass folder=<that folder> (or put it at {_default_folder()}); "
        "(2) run sklearn.datasets.fetch_20newsgroups() once on a machine with network access, which "
        f"caches it at {_sklearn_cache(data_home)}; (3) call load_20newsgroups(download=True) here, "
        "if this machine can reach the network."
    )


def load_20newsgroups(
    subset: str = "train",
    *,
    folder=None,
    data_home=None,
    categories: Sequence[str] | None = None,
    remove=("headers", "footers", "quotes"),
    download: bool = False,
) -> TextCorpus:
    """The 20 Newsgroups "bydate" corpus as raw texts, labels and class names.

    Parameters
    ----------
    subset : "train", "test" or "all"
        The bydate split (11,314 / 7,532 documents in the full corpus); "all" is train
        followed by test.
    folder : path, optional
        A folder holding ``20news-bydate-train/<class>/<file>`` (and
        ``20news-bydate-test/...``), as ``20news-bydate.tar.gz`` extracts. When given,
        it is the only place read. When None, ``<regbayes data home>/20newsgroups`` is
        tried, then scikit-learn's cache of ``fetch_20newsgroups``.
    data_home : path, optional
        scikit-learn's data folder (``sklearn.datasets.get_data_home``).
    categories : sequence of str, optional
        Keep these classes only; labels are renumbered in sorted class order.
    remove : iterable of "headers", "footers", "quotes"
        Parts of each post to strip, with scikit-learn's rules (default: all three, so
        that classifiers cannot key on newsgroup headers).
    download : bool
        Let scikit-learn download the archive (14 MB) when no copy is present.

    Returns
    -------
    TextCorpus
        ``texts``, ``target`` (int64), ``target_names``, ``source``, in stored order
        (class by class; shuffle before splitting off a subsample).

    Raises
    ------
    FileNotFoundError
        When the corpus is not present (and ``download`` is False, or the download
        failed): the message says where it looked and how to provide the data.
    """
    _check_subset(subset)
    remove = _check_remove(remove)
    found = find_20newsgroups(subset, folder=folder, data_home=data_home)
    if found is None and folder is not None:
        raise FileNotFoundError(_not_found_message(subset, folder, data_home))
    if found is not None and found[0] == "folder":
        texts, target, names = _read_folder(found[1], subset)
        source = f"folder {found[1]}"
    else:
        try:
            texts, target, names = _read_sklearn(subset, data_home, download)
        except OSError as exc:
            raise FileNotFoundError(_not_found_message(subset, folder, data_home) + f" ({exc})") from exc
        source = f"scikit-learn cache {_sklearn_cache(data_home)}"
    if not texts:
        raise ValueError(f"20 Newsgroups ({subset!r}) from {source} holds no documents")
    texts = _strip(texts, remove)
    if categories is not None:
        texts, target, names = _select_categories(texts, target, names, categories)
    return TextCorpus(texts, target, names, source)


def _select_categories(texts, target, names, categories):
    categories = [categories] if isinstance(categories, str) else list(categories)
    unknown = [c for c in categories if c not in names]
    if unknown:
        raise ValueError(f"unknown categories {unknown}; known: {', '.join(names)}")
    if not categories:
        raise ValueError("categories is empty; give at least one class name (or None for all)")
    keep_names = sorted(set(categories))
    old = np.array([names.index(c) for c in keep_names])
    mask = np.isin(target, old)
    new_target = np.searchsorted(old, target[mask]).astype(np.int64)
    kept = [t for t, m in zip(texts, mask) if m]
    return kept, new_target, keep_names


# ----------------------------------------------------------------------------- lda's Reuters
def load_lda_reuters(min_class_size: int = 10) -> CountCorpus:
    """The ``lda`` package's 395 Reuters stories, labeled by dateline country.

    Each title reads ``"<i> COUNTRY: headline. CITY date"``; the label is COUNTRY
    (upper-cased). Countries with fewer than ``min_class_size`` stories are dropped
    (default 10 keeps 9 classes and 299 stories: USA 88, UK 70, FRANCE 26, INDIA 23,
    RUSSIA 22, ITALY 21, VATICAN 20, GERMANY 18, POLAND 11). The counts are the
    package's own tokenisation (stop words already removed).

    Needs the optional dependency ``lda`` (``pip install lda``; regbayes' ``bench`` extra).
    """
    min_class_size = check_int("min_class_size", min_class_size)
    try:
        import lda.datasets as lda_datasets
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("load_lda_reuters needs the 'lda' package: pip install lda "
                          "(or regbayes[bench])") from exc
    counts = sp.csr_matrix(np.asarray(lda_datasets.load_reuters(), dtype=np.int64))
    vocabulary = list(lda_datasets.load_reuters_vocab())
    titles = list(lda_datasets.load_reuters_titles())
    countries = [t.split(" ", 1)[1].split(":", 1)[0].strip().upper() for t in titles]
    sizes = Counter(countries)
    names = sorted(c for c, n in sizes.items() if n >= min_class_size)
    if len(names) < 2:
        raise ValueError(f"min_class_size={min_class_size} leaves {len(names)} class(es); "
                         f"the largest classes have {sorted(sizes.values())[-3:]} stories")
    keep = np.array([c in names for c in countries])
    target = np.array([names.index(c) for c, k in zip(countries, keep) if k], dtype=np.int64)
    source = f"lda package {os.path.dirname(lda_datasets.__file__)}"
    return CountCorpus(counts[keep], target, names, vocabulary,
                       [t for t, k in zip(titles, keep) if k], source)
