"""Labeled text corpora that Debian packages install: read offline, nothing downloaded.

* :func:`load_wordnet_glosses` -- WordNet 3.0's synset glosses (Debian package
  ``wordnet-base``, files ``/usr/share/wordnet/data.{noun,verb,adj,adv}``), each labeled
  with its synset's lexicographer file (WordNet's 45 semantic categories, e.g.
  ``noun.animal``, ``noun.artifact``, ``verb.motion``; :data:`LEXICOGRAPHER_FILES`).
  The nouns alone (the default) are 82,115 short definitions in 26 categories; with the
  default ``min_class_size=100``, 82,022 in 24 (``noun.Tops`` and ``noun.motive`` have 51
  and 42 synsets).
* :func:`load_fortunes` -- the fortune cookie files of the Debian packages ``fortunes``
  and ``fortunes-min`` (``/usr/share/games/fortunes``, one file per category, entries
  separated by lines holding only ``%``), each entry labeled with its file's name. All
  files of ``fortunes`` give 15,217 entries in 43 categories; the default
  ``min_class_size=100`` keeps 14,691 in 32.

Both return :class:`regbayes.datasets.text.TextCorpus` (raw texts, int64 labels, class
names, source), in file order: shuffle before splitting off a subsample. Debian packages
cannot be pip extras: when the files are absent the error names the package to install
(``apt-get install wordnet-base`` / ``fortunes``) and the ``folder=`` argument that reads
a copy elsewhere.

File formats: WordNet's ``wndb(5WN)`` (a data line is ``offset lex_filenum ss_type w_cnt
word lex_id ... p_cnt ptr... [frames] | gloss``; the licence header's lines start with
two spaces) and ``strfile(1)``'s text files (the ``.dat`` index and ``.u8`` links beside
them are not read).

No paper equation is implemented here.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Sequence

import numpy as np

from ._compression import names_its_file
from ..validation import check_int
from .text import TextCorpus

__all__ = [
    "FORTUNES_FOLDER",
    "FORTUNES_PACKAGE",
    "LEXICOGRAPHER_FILES",
    "WORDNET_FOLDER",
    "WORDNET_PACKAGE",
    "WORDNET_POS",
    "load_fortunes",
    "load_wordnet_glosses",
]

WORDNET_FOLDER = "/usr/share/wordnet"
WORDNET_PACKAGE = "wordnet-base"
FORTUNES_FOLDER = "/usr/share/games/fortunes"
FORTUNES_PACKAGE = "fortunes"

#: WordNet's data file of each part of speech.
WORDNET_POS = {"noun": "data.noun", "verb": "data.verb", "adj": "data.adj", "adv": "data.adv"}

#: WordNet 3.0's lexicographer files, by number (``lexnames(5WN)``).
LEXICOGRAPHER_FILES = (
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
    "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event", "noun.feeling",
    "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object", "noun.person",
    "noun.phenomenon", "noun.plant", "noun.possession", "noun.process", "noun.quantity", "noun.relation",
    "noun.shape", "noun.state", "noun.substance", "noun.time", "verb.body", "verb.change", "verb.cognition",
    "verb.communication", "verb.competition", "verb.consumption", "verb.contact", "verb.creation",
    "verb.emotion", "verb.motion", "verb.perception", "verb.possession", "verb.social", "verb.stative",
    "verb.weather", "adj.ppl",
)

_SS_TYPES = {"noun": "n", "verb": "v", "adj": "as", "adv": "r"}
_OFFSET = re.compile(r"^\d{8}$")
_LEXFILE = re.compile(r"^\d{2}$")
_HEX = re.compile(r"^[0-9a-fA-F]{2}$")


def _missing(what: str, path: Path, package: str, folder_given: bool) -> FileNotFoundError:
    where = "the folder given" if folder_given else "its standard place"
    return FileNotFoundError(
        f"{what} not found: {path} is missing ({where}). The files come with the Debian package "
        f"{package!r}: install it with 'apt-get install {package}' (as root), or pass folder= a folder "
        "holding a copy of them."
    )


def _keep_classes(texts, labels, names, min_class_size, what):
    """Drop the classes with fewer than ``min_class_size`` documents; labels renumbered in
    the order of ``names``."""
    sizes = Counter(labels)
    keep_names = [n for n in names if sizes[n] >= min_class_size]
    if len(keep_names) < 2:
        raise ValueError(f"min_class_size={min_class_size} leaves {len(keep_names)} class(es) of {what}; "
                         f"the largest classes have {sorted(sizes.values())[-3:]} documents")
    index = {n: i for i, n in enumerate(keep_names)}
    kept = [(t, index[n]) for t, n in zip(texts, labels) if n in index]
    return [t for t, _ in kept], np.array([i for _, i in kept], dtype=np.int64), keep_names


# ----------------------------------------------------------------------------- WordNet
def _parse_wordnet_line(line: str, path: Path, lineno: int, ss_types: str):
    """``(lexicographer file number, lemmas, gloss)`` of one data line."""
    head, bar, gloss = line.partition("|")
    fields = head.split()
    problem = None
    if not bar:
        problem = "no '|' before a gloss"
    elif len(fields) < 6 or not _OFFSET.match(fields[0]):
        problem = "not 'offset lex_filenum ss_type w_cnt word lex_id ...'"
    elif not _LEXFILE.match(fields[1]) or int(fields[1]) >= len(LEXICOGRAPHER_FILES):
        problem = f"lexicographer file number {fields[1]!r} is not 00..{len(LEXICOGRAPHER_FILES) - 1}"
    elif fields[2] not in ss_types:
        problem = f"synset type {fields[2]!r} is not one of {list(ss_types)} for this file"
    elif not _HEX.match(fields[3]) or len(fields) < 4 + 2 * int(fields[3], 16) or int(fields[3], 16) == 0:
        problem = f"word count {fields[3]!r} does not match the words on the line"
    if problem is not None:
        raise ValueError(f"{path}:{lineno}: malformed WordNet data line ({problem}): {line[:80]!r}")
    n_words = int(fields[3], 16)
    lemmas = [fields[4 + 2 * i].replace("_", " ") for i in range(n_words)]
    return int(fields[1]), lemmas, gloss.strip()


@names_its_file("folder")
def load_wordnet_glosses(
    folder=None,
    *,
    pos: Sequence[str] = ("noun",),
    min_class_size: int = 100,
    with_lemmas: bool = False,
) -> TextCorpus:
    """WordNet 3.0's glosses labeled by lexicographer file (module docstring).

    Parameters
    ----------
    folder : path, optional
        A folder holding WordNet's ``data.<pos>`` files; default :data:`WORDNET_FOLDER`,
        where the Debian package ``wordnet-base`` installs them.
    pos : sequence of "noun", "verb", "adj", "adv"
        The parts of speech to read (default the nouns: 24 topical categories such as
        ``noun.animal`` and ``noun.food``); files are read in this order.
    min_class_size : int
        Lexicographer files with fewer synsets are dropped (default 100).
    with_lemmas : bool
        Prefix each gloss with its synset's words ("dog, domestic dog, Canis familiaris")
        -- an easier task; by default the document is the gloss alone (definition and
        examples).

    Returns
    -------
    TextCorpus
        ``target_names`` are the kept lexicographer files in WordNet's numbering order.

    Raises
    ------
    FileNotFoundError
        A data file is missing (the message names the Debian package to install).
    ValueError
        An unknown part of speech, or a malformed data line (its file and line number).
    """
    min_class_size = check_int("min_class_size", min_class_size, 1)
    pos = [pos] if isinstance(pos, str) else list(pos)
    unknown = [p for p in pos if p not in WORDNET_POS]
    if unknown or not pos or len(set(pos)) != len(pos):
        raise ValueError(f"pos must name distinct parts of speech among {list(WORDNET_POS)}, got {pos}")
    base = Path(folder) if folder is not None else Path(WORDNET_FOLDER)
    texts, labels = [], []
    for p in pos:
        path = base / WORDNET_POS[p]
        if not path.is_file():
            raise _missing("WordNet's data files", path, WORDNET_PACKAGE, folder is not None)
        with open(path, encoding="utf-8", errors="replace") as handle:
            for lineno, line in enumerate(handle, start=1):
                if line.startswith("  ") or not line.strip():
                    continue  # the licence header
                lexfile, lemmas, gloss = _parse_wordnet_line(line, path, lineno, _SS_TYPES[p])
                texts.append(", ".join(lemmas) + "; " + gloss if with_lemmas else gloss)
                labels.append(LEXICOGRAPHER_FILES[lexfile])
    if not texts:
        raise ValueError(f"no synset in {', '.join(str(base / WORDNET_POS[p]) for p in pos)}")
    present = [n for n in LEXICOGRAPHER_FILES if n in set(labels)]
    texts, target, names = _keep_classes(texts, labels, present, min_class_size, "WordNet")
    return TextCorpus(texts, target, names, f"WordNet {', '.join(WORDNET_POS[p] for p in pos)} in {base}")


# ----------------------------------------------------------------------------- fortunes
def _fortune_files(base: Path):
    """The category files of a fortunes folder: regular files, not links, not the
    ``.dat`` indexes or ``.u8`` links, not hidden; sub-folders (``off/``) skipped."""
    return sorted(p for p in base.iterdir()
                  if p.is_file() and not p.is_symlink() and not p.name.startswith(".")
                  and p.suffix not in (".dat", ".u8"))


def _read_fortunes(path: Path):
    data = path.read_bytes()
    if b"\x00" in data:
        raise ValueError(f"{path}: holds NUL bytes, so it is not a fortune text file (a strfile .dat index "
                         "or another binary file under a category name?)")
    entries, lines = [], []
    for line in data.decode("utf-8", errors="replace").splitlines():
        if line.rstrip("\r") == "%":
            entries.append("\n".join(lines))
            lines = []
        else:
            lines.append(line)
    entries.append("\n".join(lines))
    return [e.strip("\n") for e in entries if e.strip()]


@names_its_file("folder")
def load_fortunes(
    folder=None,
    *,
    categories: Sequence[str] | None = None,
    min_class_size: int = 100,
) -> TextCorpus:
    """The fortune cookie entries labeled by category file (module docstring).

    Parameters
    ----------
    folder : path, optional
        A folder of fortune files; default :data:`FORTUNES_FOLDER`, where the Debian
        packages ``fortunes`` (43 categories) and ``fortunes-min`` (3) install them.
    categories : sequence of str, optional
        Read these category files only (an unknown name is an error).
    min_class_size : int
        Categories with fewer entries are dropped (default 100).

    Returns
    -------
    TextCorpus
        Entries with their ``%`` separators removed; empty entries skipped;
        ``target_names`` in sorted file-name order.

    Raises
    ------
    FileNotFoundError
        The folder, or a fortune file in it, is missing (the message names the Debian
        package to install).
    ValueError
        An unknown category, or a file that is not text.
    """
    min_class_size = check_int("min_class_size", min_class_size, 1)
    base = Path(folder) if folder is not None else Path(FORTUNES_FOLDER)
    if not base.is_dir():
        raise _missing("The fortune files", base, FORTUNES_PACKAGE, folder is not None)
    files = _fortune_files(base)
    if not files:
        raise _missing("The fortune files", base / "<category>", FORTUNES_PACKAGE, folder is not None)
    if categories is not None:
        categories = [categories] if isinstance(categories, str) else list(categories)
        known = {p.name: p for p in files}
        unknown = [c for c in categories if c not in known]
        if unknown or not categories:
            raise ValueError(f"unknown categories {unknown or categories}; known: {', '.join(sorted(known))}")
        files = [known[c] for c in sorted(set(categories))]
    texts, labels = [], []
    for path in files:
        entries = _read_fortunes(path)
        texts += entries
        labels += [path.name] * len(entries)
    present = sorted(set(labels))
    texts, target, names = _keep_classes(texts, labels, present, min_class_size, "fortunes")
    return TextCorpus(texts, target, names, f"fortune files in {base}")
