"""Block-wise readers of large dense text tables (LIBSVM or CSV) into NumPy arrays.

Used for HIGGS (Baldi et al. 2014; paper 000, Section 5.1.2): 11 million rows of 28
features, published as LIBSVM (``HIGGS.bz2``/``.xz``) and as CSV (``HIGGS.csv.gz``, label
first). Parsing in blocks of rows keeps memory at the output arrays plus one block, and
``n_rows`` stops after the first rows without touching the rest of the file.
"""

from __future__ import annotations

import io
import itertools
import os

import numpy as np
from sklearn.datasets import load_svmlight_file

from ._compression import names_its_file, open_decompressed
from ..validation import check_float_dtype, check_int

__all__ = ["read_svmlight_dense", "read_csv_dense"]

_BLOCK_ROWS = 1 << 17


def _blocks(f, n_rows, block_rows):
    remaining = n_rows
    while remaining is None or remaining > 0:
        take = block_rows if remaining is None else min(block_rows, remaining)
        lines = list(itertools.islice(f, take))
        if not lines:
            return
        if remaining is not None:
            remaining -= len(lines)
        yield lines


def _finish(path, Xs, ys):
    if not Xs:
        raise ValueError(f"{path} contains no data rows")
    X = Xs[0] if len(Xs) == 1 else np.concatenate(Xs)
    y = ys[0] if len(ys) == 1 else np.concatenate(ys)
    return X, y


def _check_args(n_features, n_rows, dtype, block_rows):
    n_features = check_int("n_features", n_features)
    if n_rows is not None:
        n_rows = check_int("n_rows", n_rows)
    block_rows = check_int("block_rows", block_rows)
    return n_features, n_rows, check_float_dtype("dtype", dtype), block_rows


@names_its_file("path")
def read_svmlight_dense(path, n_features, *, n_rows=None, dtype=np.float32, block_rows=_BLOCK_ROWS):
    """Read a one-based LIBSVM file with ``n_features`` columns into a dense array.

    Returns ``X`` (n, n_features) of ``dtype`` and the labels ``y`` as float64.
    """
    n_features, n_rows, dt, block_rows = _check_args(n_features, n_rows, dtype, block_rows)
    path = os.fspath(path)
    Xs, ys = [], []
    with open_decompressed(path) as f:
        for i, lines in enumerate(_blocks(f, n_rows, block_rows)):
            try:
                Xb, yb = load_svmlight_file(
                    io.BytesIO(b"".join(lines)), n_features=n_features, dtype=dt, zero_based=False
                )
            except ValueError as exc:
                raise ValueError(
                    f"Could not parse {path} (rows from {i * block_rows}) as LIBSVM: {exc}"
                ) from exc
            Xs.append(Xb.toarray())
            ys.append(yb)
    return _finish(path, Xs, ys)


@names_its_file("path")
def read_csv_dense(path, n_features, *, n_rows=None, dtype=np.float32, block_rows=_BLOCK_ROWS):
    """Read a headerless comma-separated file whose first column is the label and
    whose other ``n_features`` columns are features.

    Returns ``X`` (n, n_features) of ``dtype`` and the labels ``y`` as float64.
    """
    n_features, n_rows, dt, block_rows = _check_args(n_features, n_rows, dtype, block_rows)
    path = os.fspath(path)
    Xs, ys = [], []
    with open_decompressed(path) as raw, io.TextIOWrapper(raw, encoding="ascii") as f:
        for i, lines in enumerate(_blocks(f, n_rows, block_rows)):
            try:
                block = np.loadtxt(lines, delimiter=",", dtype=np.float64, ndmin=2)
            except ValueError as exc:
                raise ValueError(
                    f"Could not parse {path} (rows from {i * block_rows}) as CSV: {exc}"
                ) from exc
            if block.shape[1] != n_features + 1:
                raise ValueError(
                    f"{path}: expected 1 label + {n_features} feature columns, "
                    f"found {block.shape[1]} columns"
                )
            Xs.append(block[:, 1:].astype(dt))
            ys.append(block[:, 0].copy())
    return _finish(path, Xs, ys)
