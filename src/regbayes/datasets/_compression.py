"""Open plain, gzip, bzip2 or xz files as one binary stream.

The LIBSVM data sets of paper 000 are published bzip2- or xz-compressed and the UCI
HIGGS file gzip-compressed; readers decompress while reading instead of unpacking to
disk. The format is found from the file's first bytes (so a misnamed file still works),
then from the suffix for the header-less legacy ``.lzma`` format.
"""

from __future__ import annotations

import bz2
import functools
import gzip
import inspect
import lzma
import os
import zlib
from contextlib import contextmanager
from pathlib import Path

__all__ = ["DataFileError", "compression_of", "names_its_file", "open_decompressed", "reading"]


class DataFileError(ValueError):
    """A data file that its reader cannot read: damaged, cut short, not text, not the format."""


# What a damaged file raises from deep inside a parser or a decompressor; their messages
# ("Compressed file ended before the end-of-stream marker was reached", "'utf-8' codec
# can't decode byte 0x80", a tokenizer's "EOF inside string") do not say which file.
_DAMAGE = (ValueError, EOFError, zlib.error, lzma.LZMAError, OSError)


@contextmanager
def reading(path):
    """Errors raised while reading ``path`` (a file or a folder) name it.

    An error of :data:`_DAMAGE` whose message does not mention ``path`` is raised again as
    :class:`DataFileError` (a ``ValueError``) that starts with ``path`` and keeps the
    original as its cause; a missing file (``FileNotFoundError``, ``IsADirectoryError``)
    and errors that already name the path pass unchanged.
    """
    path = os.fspath(path)
    try:
        yield
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        raise
    except _DAMAGE as exc:
        message = str(exc)
        if path in message:
            raise
        if isinstance(exc, UnicodeDecodeError):
            message = f"holds bytes that are not text ({exc.reason} at byte {exc.start})"
        elif isinstance(exc, (EOFError, zlib.error, lzma.LZMAError, OSError)):
            message = f"is damaged or cut short ({message or type(exc).__name__})"
        raise DataFileError(f"{path}: {message}") from exc

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


def names_its_file(*parameters: str):
    """Decorate a reader so that its errors name the file or folder it was given in
    ``parameters`` (:func:`reading`); a parameter left ``None`` (a package's file found
    by the reader) is skipped."""
    def decorate(reader):
        signature = inspect.signature(reader)

        @functools.wraps(reader)
        def read(*args, **kwargs):
            given = signature.bind(*args, **kwargs).arguments
            paths = [os.fspath(given[p]) for p in parameters if given.get(p) is not None]
            if not paths:
                return reader(*args, **kwargs)
            with reading(", ".join(paths)):
                return reader(*args, **kwargs)
        return read
    return decorate
