"""The file container of saved models and of run checkpoints: a checksummed ``.npz``.

A file is a ZIP archive of uncompressed entries that ``numpy.load(path,
allow_pickle=False)`` reads as an ``.npz``: one JSON metadata entry, then one ``.npy``
entry per array. The archive comment, the file's last ``len(trailer) + 64`` bytes, is
``trailer`` followed by the SHA-256 (64 hex digits) of every byte before the digits, so a
truncated file, a flipped bit or an edited entry no longer matches it. Entries carry a
fixed date: the same contents give the same bytes. Files are replaced atomically: written
to a temporary file in the same folder, flushed to disk, then renamed (``os.replace``), so
a crash while writing leaves the previous file whole.

Used by :mod:`regbayes.persistence` (``est.save``) and :mod:`regbayes.inference.checkpoint`.
"""
from __future__ import annotations

import hashlib
import io
import json
import math
import os
import re
import tempfile
import zipfile
from pathlib import Path

import numpy as np

_DATE = (1980, 1, 1, 0, 0, 0)


def float_node(value: float):
    """A float for JSON metadata: itself when finite, else ``{"kind": "float", "value":
    "nan" | "inf" | "-inf"}`` (JSON has no non-finite numbers)."""
    return value if math.isfinite(value) else {"kind": "float", "value": repr(value)}


def float_of_node(node: dict, error: type, where: str = ""):
    """The non-finite float of a :func:`float_node`; ``error`` for any other value."""
    if node["value"] not in ("nan", "inf", "-inf"):
        raise error(f"bad float {node['value']!r}{where}")
    return float(node["value"])


def pack(metadata_name: str, metadata: dict, arrays: dict, trailer: bytes) -> bytes:
    """The archive's bytes: ``metadata`` as JSON under ``metadata_name``, each array as
    ``<name>.npy`` (never pickled), the checksum as the archive comment."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(zipfile.ZipInfo(metadata_name, date_time=_DATE),
                         json.dumps(metadata, indent=1, allow_nan=False).encode())
        for name, value in arrays.items():
            with archive.open(zipfile.ZipInfo(f"{name}.npy", date_time=_DATE), "w", force_zip64=value.nbytes > 2**30) as f:
                np.lib.format.write_array(f, value, allow_pickle=False)
        archive.comment = trailer + b"0" * 64
    data = buffer.getvalue()
    return data[:-64] + hashlib.sha256(data[:-64]).hexdigest().encode()


def write_atomic(path, data: bytes) -> Path:
    """Replace the file at ``path`` by ``data`` atomically (module docstring)."""
    path = Path(path)
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def unpack(path, data: bytes, metadata_name: str, trailer: bytes, error: type, what: str):
    """``(metadata, npz)`` of a file whose checksum holds: ``npz`` an open
    ``numpy.lib.npyio.NpzFile`` (``allow_pickle=False``; close it, or use it in a ``with``).
    Raises ``error`` naming ``what`` the file should be, when it is not a ZIP archive (a
    pickle is named as one), its checksum record is missing, or the checksum does not match."""
    if not data.startswith(b"PK\x03\x04"):
        kind = "a pickle (load those with pickle, and only when you trust them)" if data[:1] == b"\x80" else "not a ZIP archive"
        raise error(f"{path} is not a {what}: {kind}")
    tail = data[-len(trailer) - 64:]
    if not (tail.startswith(trailer) and re.fullmatch(rb"[0-9a-f]{64}", tail[len(trailer):])):
        raise error(f"{path} is truncated or damaged: its checksum record (the end of the file) is missing")
    if hashlib.sha256(data[:-64]).hexdigest().encode() != tail[len(trailer):]:
        raise error(f"{path}: the file was modified or damaged (its SHA-256 does not match the one it records)")
    try:
        npz = np.load(io.BytesIO(data), allow_pickle=False)
        metadata = json.loads(npz[metadata_name].decode("utf-8"))
    except Exception as exc:
        raise error(f"{path} cannot be read as a {what} ({type(exc).__name__}: {exc})") from exc
    if not isinstance(metadata, dict):
        npz.close()
        raise error(f"{path} is not a {what} (its metadata is not a JSON object)")
    return metadata, npz
