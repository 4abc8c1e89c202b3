"""Open plain, gzip, bzip2 or xz files as one binary stream.

The LIBSVM data sets of paper 000 are published bzip2- or xz-compressed and the UCI
HIGGS file gzip-compressed; readers decompress while reading instead of unpacking to
disk. The format is found from the file's first bytes (so a misnamed file still works),
then from the suffix for the header-less legacy ``.lzma`` format.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
from pathlib import Path

__all__ = ["compression_of", "open_decompressed"]

_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bz2"),
    (b"\xfd7zXZ\x00", "xz"),
)


def compression_of(path) -> str | None:
    """Return "gzip", "bz2", "xz", "lzma" or None (plain) for the file at ``path``."""
    path = Path(path)
    with open(path, "rb") as f:
        head = f.read(6)
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    if path.suffix.lower() == ".lzma":
        return "lzma"
    return None


def open_decompressed(path):
    """Open ``path`` for binary reading, decompressing gzip/bz2/xz/lzma on the fly.

    Raises ``FileNotFoundError`` naming the path when it does not exist and
    ``IsADirectoryError`` when it is a folder.
    """
    path = Path(os.fspath(path)).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"No such data file: {path}")
    if path.is_dir():
        raise IsADirectoryError(f"Expected a data file, got a directory: {path}")
    kind = compression_of(path)
    if kind == "gzip":
        return gzip.open(path, "rb")
    if kind == "bz2":
        return bz2.open(path, "rb")
    if kind == "xz":
        return lzma.open(path, "rb", format=lzma.FORMAT_XZ)
    if kind == "lzma":
        return lzma.open(path, "rb", format=lzma.FORMAT_ALONE)
    return open(path, "rb")
