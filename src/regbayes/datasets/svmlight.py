"""Read svmlight / LIBSVM files (``label index:value ...``), plain or compressed.

The format of the LIBSVM binary data sets used by paper 000 (Realsim, Section 5.1.2;
IJCNN1, Section 5.3). Parsing is scikit-learn's ``load_svmlight_file``; this module adds
transparent gzip/bz2/xz decompression, reading only the first rows, clear errors, and
integer labels when the labels are integers.
"""

from __future__ import annotations

import io
import itertools
import lzma
import os

import numpy as np
from sklearn.datasets import load_svmlight_file

from ._compression import compression_of, names_its_file, open_decompressed
from ..validation import check_float_dtype, check_int

__all__ = ["load_svmlight", "labels_as_int"]


def labels_as_int(y: np.ndarray) -> np.ndarray:
    """Return ``y`` as int64 when every label is an integer, else unchanged."""
    y = np.asarray(y)
    if y.size and np.all(np.isfinite(y)) and np.all(y == np.round(y)):
        return y.astype(np.int64)
    return y


def _read_source(f, n_rows):
    if n_rows is None:
        return f
    return io.BytesIO(b"".join(itertools.islice(f, n_rows)))


@names_its_file("path")
def load_svmlight(path, n_features=None, dtype=np.float64, *, n_rows=None, zero_based="auto"):
    """Load an svmlight/LIBSVM file into a CSR matrix and a label vector.

    Parameters
    ----------
    path : str or os.PathLike
        Plain, ``.gz``, ``.bz2``, ``.xz`` or ``.lzma`` file (the compression is detected
        from the file's content).
    n_features : int or None
        Number of columns; pass it when a file (a test split, the first rows) may not
        mention the last feature. ``None`` infers it from the data.
    dtype : float32 or float64
        dtype of the matrix values.
    n_rows : int or None
        Read only the first ``n_rows`` lines.
    zero_based : bool or "auto"
        Whether feature indices start at 0; LIBSVM files start at 1. "auto" guesses
        (scikit-learn's rule: one-based unless an index 0 occurs).

    Returns
    -------
    X : scipy.sparse.csr_matrix (n_samples, n_features)
    y : ndarray (n_samples,), int64 if all labels are integers, else float64
    """
    if n_features is not None:
        n_features = check_int("n_features", n_features)
    if n_rows is not None:
        n_rows = check_int("n_rows", n_rows)
    dt = check_float_dtype("dtype", dtype)
    if zero_based not in (True, False, "auto"):
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
    path = os.fspath(path)
    with open_decompressed(path) as f:
        try:
            X, y = load_svmlight_file(
                _read_source(f, n_rows), n_features=n_features, dtype=dt, zero_based=zero_based
            )
        except ValueError as exc:
            raise ValueError(f"Could not parse {path} as an svmlight/LIBSVM file: {exc}") from exc
        except (EOFError, lzma.LZMAError, OSError) as exc:
            if isinstance(exc, FileNotFoundError):
                raise
            kind = compression_of(path) or "plain"
            raise OSError(
                f"Could not read {path}: corrupt or truncated {kind} data ({exc})"
            ) from exc
    if X.shape[0] == 0:
        raise ValueError(f"{path} contains no data rows")
    return X.tocsr(), labels_as_int(y)
