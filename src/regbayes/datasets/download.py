"""Cache folder, download and checksum logic for the registered data sets.

A file is looked up in ``<data_home>/<data set>/``; when missing it is downloaded with
``urllib`` into a temporary file in that folder, its SHA-256 is computed while it
streams, checked against the registry's digest when one is known, and only then moved
into place with an atomic ``os.replace`` (an interrupted download never leaves a file
that looks complete). When no digest is known the computed one is written beside the
file as ``<file>.sha256`` (``sha256sum`` format) and a warning says so, once.

Hosts: the registry's URL, or ``base_url`` / the ``REGBAYES_DATA_URL`` environment
variable pointing at a mirror folder (``http(s)://``, ``file://`` or a local path) that
holds the files under their registry names. The cache folder is ``data_home``, else
``REGBAYES_DATA``, else ``~/regbayes_data``.
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import warnings
from pathlib import Path

from .registry import RemoteFile

__all__ = [
    "DATA_HOME_ENV",
    "DATA_URL_ENV",
    "DownloadError",
    "ChecksumError",
    "get_data_home",
    "resolve_base_url",
    "sha256_of",
    "fetch_file",
]

DATA_HOME_ENV = "REGBAYES_DATA"
DATA_URL_ENV = "REGBAYES_DATA_URL"
_DEFAULT_HOME = "~/regbayes_data"
_CHUNK = 1 << 20
_USER_AGENT = "regbayes-datasets (python urllib)"

logger = logging.getLogger(__name__)
_warned: set[str] = set()


class DownloadError(OSError):
    """A file could not be downloaded (network, HTTP status, truncated transfer)."""


class ChecksumError(OSError):
    """A downloaded file's SHA-256 differs from the expected one."""


class _NotOnHost(Exception):
    """The host answered that the file does not exist (HTTP 404, missing local file)."""


def get_data_home(data_home=None) -> Path:
    """The cache folder: ``data_home``, else ``$REGBAYES_DATA``, else ``~/regbayes_data``.

    The folder is created when missing.
    """
    if data_home is None:
        data_home = os.environ.get(DATA_HOME_ENV) or _DEFAULT_HOME
    path = Path(os.fspath(data_home)).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def resolve_base_url(default: str, base_url=None) -> str:
    """The folder URL files are fetched from, ending in "/".

    Precedence: ``base_url``, then ``$REGBAYES_DATA_URL``, then ``default``. A value
    without a URL scheme is a local folder and becomes a ``file://`` URL.
    """
    base = base_url if base_url is not None else (os.environ.get(DATA_URL_ENV) or default)
    base = os.fspath(base)
    if not isinstance(base, str) or not base:
        raise ValueError(f"base_url must be a non-empty URL or folder path, got {base!r}")
    scheme = urllib.parse.urlsplit(base).scheme
    if len(scheme) <= 1:  # no scheme, or a Windows drive letter
        return Path(base).expanduser().resolve().as_uri() + "/"
    return base if base.endswith("/") else base + "/"


def sha256_of(path) -> str:
    """Hex SHA-256 digest of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def _hint(dest: Path) -> str:
    return (
        f" If this machine is offline, download the file elsewhere and place it at {dest},"
        f" or point base_url / ${DATA_URL_ENV} at a mirror holding it."
    )


def _stream_to(url: str, out, timeout: float) -> tuple[str, int]:
    """Copy ``url`` into the open binary file ``out``; return (sha256, n_bytes)."""
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            expected = response.headers.get("Content-Length")
            h, n = hashlib.sha256(), 0
            for block in iter(lambda: response.read(_CHUNK), b""):
                out.write(block)
                h.update(block)
                n += len(block)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise _NotOnHost(f"{url}: HTTP 404 Not Found") from exc
        raise DownloadError(f"Failed to download {url}: HTTP {exc.code} {exc.reason}.") from exc
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, FileNotFoundError):
            raise _NotOnHost(f"{url}: no such file") from exc
        raise DownloadError(f"Failed to download {url}: {exc.reason}.") from exc
    except (OSError, http.client.HTTPException, ValueError) as exc:  # timeouts, resets, bad URLs
        raise DownloadError(f"Failed to download {url}: {exc!r}.") from exc
    if expected is not None and expected.isdigit() and int(expected) != n:
        raise DownloadError(
            f"Failed to download {url}: transfer ended after {n} of {expected} bytes."
        )
    return h.hexdigest(), n


def _download(url: str, dest: Path, sha256: str | None, timeout: float) -> Path:
    logger.info("Downloading %s to %s", url, dest)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            digest, n_bytes = _stream_to(url, out, timeout)
        if sha256 is not None and digest != sha256:
            raise ChecksumError(
                f"Checksum mismatch for {url}: expected sha256 {sha256}, got {digest} "
                f"({n_bytes} bytes). The download was discarded; the host or mirror serves "
                "a different file."
            )
        os.replace(tmp, dest)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if sha256 is None:
        _record_digest(dest, digest, url)
    return dest


def _record_digest(dest: Path, digest: str, url: str) -> None:
    record = dest.with_name(dest.name + ".sha256")
    tmp = record.with_name(f".{record.name}.part")
    tmp.write_text(f"{digest}  {dest.name}\n")
    os.replace(tmp, record)
    key = str(dest.resolve())
    if key not in _warned:
        _warned.add(key)
        warnings.warn(
            f"No published checksum for {url}; could not verify the download. Its sha256 "
            f"{digest} was recorded in {record}.",
            UserWarning,
            stacklevel=2,
        )


def fetch_file(
    remote: RemoteFile,
    folder,
    *,
    base_url: str,
    download_if_missing: bool = True,
    timeout: float = 60.0,
) -> Path:
    """Return the local path of ``remote`` in ``folder``, downloading it when missing.

    ``base_url`` is the folder URL (see ``resolve_base_url``). A file already in
    ``folder`` (under its name or an alternative name) is used as is, without a
    request. Raises ``FileNotFoundError`` (an ``OSError``) naming the expected path when
    missing and ``download_if_missing`` is False, ``DownloadError`` naming the URL and
    the failure when the transfer fails, ``ChecksumError`` on a digest mismatch.
    """
    folder = Path(os.fspath(folder))
    for name in remote.names:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    dest = folder / remote.filename
    urls = [base_url + urllib.parse.quote(name) for name in remote.names]
    if not download_if_missing:
        also = ""
        if remote.alternatives:
            also = f" (or under the name {', '.join(remote.alternatives)})"
        raise FileNotFoundError(
            f"Data file not found at {dest}{also} and download_if_missing=False. "
            f"Download it from {urls[0]} and place it there, or allow downloading."
        )
    folder.mkdir(parents=True, exist_ok=True)
    missing = []
    for name, url in zip(remote.names, urls):
        sha = remote.sha256 if name == remote.filename else None
        try:
            return _download(url, folder / name, sha, timeout)
        except _NotOnHost as exc:
            missing.append(str(exc))
        except DownloadError as exc:
            if isinstance(exc, ChecksumError):
                raise
            raise DownloadError(f"{exc}{_hint(dest)}") from exc
    raise DownloadError(
        "Failed to download " + remote.filename + ": " + "; ".join(missing) + "." + _hint(dest)
    )
