"""Data larger than memory as a sequence of row blocks, read one block at a time.

:func:`open_row_blocks` opens a data set kept on disk, or as a Dask collection, as a
:class:`RowBlocks`: sizes and labels up front, then ``read(i)`` gives the features and
labels of block ``i`` alone, so a minibatch sampler holds only a few blocks at a time. A
block is the storage's own unit:

* Parquet (``.parquet``, ``.parq``, ``.pq``; a file, a directory of files or a glob): one
  row group; ``y`` names the label column, every other column is a numeric feature;
* Zarr (a group holding a 2-D array ``X`` and a 1-D label array, ``y`` by default): one
  chunk of rows of ``X`` (one shard when ``X`` is sharded);
* svmlight / LIBSVM (``.svm``, ``.svmlight``, ``.libsvm``, optionally ``.gz``, ``.bz2``,
  ``.xz``; a file, a directory or a glob): one file, read as a CSR matrix;
* a Dask array (with ``y`` a Dask or NumPy array): one chunk of rows, all its columns;
* a Dask dataframe (``y`` a label column or a Dask Series): one partition.

pyarrow, zarr and dask are imported only when such data are opened.
"""

from __future__ import annotations

import glob
import importlib
import operator
import os
import sys
from contextlib import contextmanager

import numpy as np

from ..validation import check_float_dtype
from .svmlight import load_svmlight

__all__ = ["RowBlocks", "open_row_blocks", "is_row_source"]

_PARQUET = (".parquet", ".parq", ".pq")
_SVMLIGHT = (".svm", ".svmlight", ".libsvm")
_COMPRESSED = (".gz", ".bz2", ".xz")
_KIND_NAMES = {"parquet": "Parquet", "svmlight": "svmlight", "zarr": "Zarr"}


def _require(module: str, what: str, extra: str):
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"reading {what} needs {module.split('.')[0]}: pip install 'regbayes[{extra}]'") from exc


class RowBlocks:
    """Rows of a data set as blocks read one at a time (see the module docstring).

    Attributes: ``source`` (a description), ``n_rows``, ``n_features`` (label excluded),
    ``block_sizes`` (int64, rows per block; a block may be empty), ``sparse`` (``read``
    returns CSR matrices), ``max_row_nnz`` (sparse only: most stored values in a row),
    ``feature_names`` (Parquet and dataframe columns, else None) and ``dtype``.

    Other storage plugs in as a subclass that calls ``__init__`` with the blocks' sizes
    and implements ``_read(i) -> (X, y)``, ``labels()`` and ``_where(i)`` (where block
    ``i`` lives, for messages); ``fit`` accepts it as ``X``.
    """

    sparse = False
    max_row_nnz: int | None = None
    feature_names: tuple[str, ...] | None = None

    def __init__(self, source: str, block_sizes, n_features: int, dtype):
        self.source = source
        self.block_sizes = np.asarray(block_sizes, dtype=np.int64).reshape(-1)
        self.n_rows = int(self.block_sizes.sum())
        self.n_features = int(n_features)
        self.dtype = np.dtype(dtype)
        self._starts = np.concatenate([[0], np.cumsum(self.block_sizes)])

    def __len__(self) -> int:
        return len(self.block_sizes)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.source}: {self.n_rows} rows x {self.n_features} features in {len(self)} blocks>"

    def read(self, i: int):
        """Block ``i``: ``(X, y)``, ``X`` of shape ``(block_sizes[i], n_features)`` -- a
        C-contiguous array of ``dtype``, or a CSR matrix when ``sparse`` -- and ``y`` the
        raw labels of its rows. Raises ``ValueError`` naming the block when it no longer
        has the shape read when the data were opened (a file changed on disk)."""
        i = self._index(i)
        with self._reading(i):
            X, y = self._read(i)
        n = int(self.block_sizes[i])
        if X.shape != (n, self.n_features) or len(y) != n:
            raise ValueError(f"{self.describe(i)} now holds {X.shape[0]} x {X.shape[1]} values and {len(y)} labels, "
                             f"not {n} x {self.n_features}: has it changed since it was opened?")
        return X, y

    def labels(self) -> np.ndarray:
        """All ``n_rows`` labels in block order, reading as little as the format allows."""
        raise NotImplementedError

    def describe(self, i: int) -> str:
        """Where block ``i`` lives and which rows of the data it holds, for error messages."""
        i = self._index(i)
        start, stop = int(self._starts[i]), int(self._starts[i + 1])
        rows = f"rows {start}-{stop - 1}" if stop > start else f"no rows, at row {start}"
        return f"{self._where(i)} ({rows} of the data)"

    def _index(self, i) -> int:
        i = operator.index(i)
        if not 0 <= i < len(self):
            raise IndexError(f"block {i} out of range: {self.source} has {len(self)} blocks")
        return i

    @contextmanager
    def _reading(self, i: int):
        try:
            yield
        except (ValueError, KeyError, IndexError) as exc:
            raise ValueError(f"{self.describe(i)}: {exc}") from exc

    def _read(self, i: int):
        raise NotImplementedError

    def _where(self, i: int) -> str:
        raise NotImplementedError


# ----------------------------------------------------------------------------- Parquet
class _ParquetBlocks(RowBlocks):
    def __init__(self, files, where, label, dtype):
        pq = _require("pyarrow.parquet", "Parquet", "outofcore")
        pa = sys.modules["pyarrow"]
        if not isinstance(label, str):
            raise ValueError(f"Parquet data need y, the name of the label column, got {label!r}")
        self._pq, self._label, self._files, self._groups, self._open = pq, label, files, [], {}
        features, sizes = None, []
        for path in files:
            meta = pq.read_metadata(path)
            schema = meta.schema.to_arrow_schema()
            names = list(schema.names)
            if label not in names:
                raise ValueError(f"{path} has no label column {label!r}; its columns are {names}")
            names.remove(label)
            if features is None:
                features, first = names, path
            elif names != features:
                raise ValueError(f"shards with mismatched columns: {_column_difference(first, features, path, names)}")
            bad = [f"{n} ({t})" for n in features if not _is_numeric(pa, t := schema.field(n).type)]
            if bad:
                raise ValueError(f"non-numeric feature columns in {path}: {', '.join(bad)}; features must be bool, int or "
                                 f"float (drop or encode them, or name one as the label y)")
            for g in range(meta.num_row_groups):
                self._groups.append((path, g))
                sizes.append(meta.row_group(g).num_rows)
        self._features = features
        self.feature_names = tuple(features)
        super().__init__(f"{_count(files, 'Parquet')} {where}", sizes, len(features), dtype)

    def _read(self, i):
        path, g = self._groups[i]
        if path not in self._open:  # the footer parsed once per file, not per row group
            self._open[path] = self._pq.ParquetFile(path)
        table = self._open[path].read_row_group(g, columns=[*self._features, self._label])
        X = np.empty((table.num_rows, len(self._features)), dtype=self.dtype)
        target = sys.modules["pyarrow"].from_numpy_dtype(self.dtype)
        for k, name in enumerate(self._features):  # nulls become NaN, for the caller's finiteness check
            X[:, k] = table.column(name).cast(target, safe=False).to_numpy(zero_copy_only=False)
        return X, table.column(self._label).to_numpy(zero_copy_only=False)

    def labels(self):
        parts = []
        for path in self._files:
            with self._pq.ParquetFile(path) as f:
                parts.append(f.read(columns=[self._label]).column(0).to_numpy(zero_copy_only=False))
        return np.concatenate(parts)

    def _where(self, i):
        path, g = self._groups[i]
        return f"row group {g} of {path}"


def _is_numeric(pa, t) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)


def _column_difference(a, cols_a, b, cols_b):
    only_a = [c for c in cols_a if c not in cols_b]
    only_b = [c for c in cols_b if c not in cols_a]
    if not only_a and not only_b:
        return f"{a} and {b} have the same feature columns in another order ({cols_a} vs {cols_b})"
    return f"{a} has {only_a or 'no'} columns that {b} lacks, and {b} has {only_b or 'no'} columns that {a} lacks"


# ----------------------------------------------------------------------------- Zarr
class _ZarrBlocks(RowBlocks):
    def __init__(self, path, label, dtype):
        zarr = _require("zarr", "Zarr", "outofcore")
        label = "y" if label is None else label
        if not isinstance(label, str):
            raise ValueError(f"for a Zarr group, y names its label array (default 'y'), got {label!r}")
        group = zarr.open_group(path, mode="r")
        self._X, self._y = (_zarr_array(zarr, group, name, path) for name in ("X", label))
        if self._X.ndim != 2:
            raise ValueError(f"array 'X' of the Zarr group {path} must be 2-D (rows x features), has shape {self._X.shape}")
        if self._y.ndim != 1:
            raise ValueError(f"label array {label!r} of the Zarr group {path} must be 1-D, has shape {self._y.shape}")
        if self._y.shape[0] != self._X.shape[0]:
            raise ValueError(f"label array {label!r} of the Zarr group {path} has {self._y.shape[0]} rows, but 'X' has "
                             f"{self._X.shape[0]} rows: the lengths differ")
        if np.dtype(self._X.dtype).kind not in "biuf":
            raise ValueError(f"array 'X' of the Zarr group {path} holds {self._X.dtype} values, not numbers")
        shards = getattr(self._X, "shards", None)  # zarr 3: a shard is one stored object of several chunks
        self._unit, rows = ("shard", shards[0]) if shards else ("chunk", self._X.chunks[0])
        n = self._X.shape[0]
        self._path = path
        super().__init__(f"Zarr group {path}", np.minimum(rows, n - np.arange(0, n, rows)), self._X.shape[1], dtype)

    def _read(self, i):
        start, stop = self._starts[i], self._starts[i + 1]
        return np.ascontiguousarray(self._X[start:stop], dtype=self.dtype), np.asarray(self._y[start:stop])

    def labels(self):
        return np.asarray(self._y[:])

    def _where(self, i):
        return f"{self._unit} {i} of array 'X' in {self._path}"


def _zarr_array(zarr, group, name, path):
    if name not in group or not isinstance(group[name], zarr.Array):
        arrays = sorted(k for k, v in group.arrays())
        what = "feature array" if name == "X" else "label array"
        raise ValueError(f"the Zarr group {path} has no {what} {name!r}; its arrays are {arrays}")
    return group[name]


# ----------------------------------------------------------------------------- svmlight
class _SvmlightBlocks(RowBlocks):
    sparse = True

    def __init__(self, files, where, label, dtype):
        if label is not None:
            raise ValueError(f"svmlight files hold their own labels: y must be None, got {label!r}")
        # parse once with raw indices, to choose zero_based for all files (scikit-learn's rule)
        widths, sizes, nnz, labels, has_zero = [], [], 0, [], False
        for path in files:
            X, y = load_svmlight(path, dtype=dtype, zero_based=True)
            widths.append(X.shape[1])
            sizes.append(X.shape[0])
            nnz = max(nnz, int(np.diff(X.indptr).max()))
            has_zero = has_zero or bool(X.nnz and X.indices.min() == 0)
            labels.append(y)
        self._files, self._zero_based = files, has_zero
        self.max_row_nnz = nnz
        self._label_dtype = np.result_type(*labels)
        self._labels = np.concatenate(labels).astype(self._label_dtype, copy=False)
        n_features = max(max(widths) - (not has_zero), 0)
        super().__init__(f"{_count(files, 'svmlight')} {where}", sizes, n_features, dtype)

    def _read(self, i):
        X, y = load_svmlight(self._files[i], n_features=self.n_features, dtype=self.dtype, zero_based=self._zero_based)
        return X, y.astype(self._label_dtype, copy=False)

    def labels(self):
        return self._labels.copy()

    def _where(self, i):
        return f"{self._files[i]}, file {i + 1} of {len(self._files)}"


# ----------------------------------------------------------------------------- Dask
class _DaskArrayBlocks(RowBlocks):
    def __init__(self, X, y, dtype):
        da = sys.modules["dask.array"]
        if X.ndim != 2:
            raise ValueError(f"a Dask array X must be 2-D (rows x features), has shape {X.shape}")
        if np.dtype(X.dtype).kind not in "biuf":
            raise ValueError(f"the Dask array X holds {X.dtype} values, not numbers")
        if any(np.isnan(c) for c in X.chunks[0]):
            raise ValueError("the Dask array X has unknown chunk sizes: call X.compute_chunk_sizes() first")
        if y is None:
            raise ValueError("a Dask array X needs y: a Dask or NumPy array of labels, one per row")
        y = y if isinstance(y, da.Array) else np.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"y has shape {y.shape}, but the Dask array X has {X.shape[0]} rows: the lengths differ")
        self._X, self._y = X, y
        super().__init__(f"Dask array of shape {X.shape} in {len(X.chunks[0])} row chunks", X.chunks[0], X.shape[1], dtype)

    def _read(self, i):
        X = self._X.blocks[i].compute(scheduler="synchronous")
        return np.ascontiguousarray(X, dtype=self.dtype), _computed(self._y[self._starts[i]:self._starts[i + 1]])

    def labels(self):
        return _computed(self._y)

    def _where(self, i):
        return f"row chunk {i} of the Dask array"


class _DaskFrameBlocks(RowBlocks):
    def __init__(self, X, y, dtype):
        dd = sys.modules["dask.dataframe"]
        pd = sys.modules["pandas"]
        columns = list(X.columns)
        if isinstance(y, str):
            if y not in columns:
                raise ValueError(f"y={y!r} is not a column of the Dask dataframe; its columns are {columns}")
            columns.remove(y)
        elif not isinstance(y, dd.Series):
            raise ValueError(f"a Dask dataframe X needs y: the name of its label column or a Dask Series, got {type(y).__name__}")
        bad = [f"{c} ({X.dtypes[c]})" for c in columns if not pd.api.types.is_numeric_dtype(X.dtypes[c])]
        if bad:
            raise ValueError(f"non-numeric feature columns in the Dask dataframe: {', '.join(bad)}; features must be bool, int "
                             f"or float (drop or encode them, or name one as the label y)")
        sizes = X.map_partitions(len).compute()
        if not isinstance(y, str):
            y_sizes = y.map_partitions(len).compute()
            if int(y_sizes.sum()) != int(sizes.sum()):
                raise ValueError(f"y has {int(y_sizes.sum())} rows, but the Dask dataframe X has {int(sizes.sum())}: the lengths differ")
            if list(y_sizes) != list(sizes):
                raise ValueError("y is partitioned unlike X: give y as a column of X, or repartition it like X")
        self._frame = X[columns + [y]] if isinstance(y, str) else X[columns]
        self._columns, self._y = columns, y
        self.feature_names = tuple(str(c) for c in columns)
        super().__init__(f"Dask dataframe of {X.npartitions} partitions", np.asarray(sizes), len(columns), dtype)

    def _read(self, i):
        part = self._frame.get_partition(i).compute(scheduler="synchronous")
        X = np.ascontiguousarray(part[self._columns].to_numpy(dtype=self.dtype, na_value=np.nan))
        y = part[self._y] if isinstance(self._y, str) else self._y.get_partition(i).compute(scheduler="synchronous")
        return X, y.to_numpy()

    def labels(self):
        y = self._frame[self._y] if isinstance(self._y, str) else self._y
        return y.compute().to_numpy()

    def _where(self, i):
        return f"partition {i} of the Dask dataframe"


def _computed(a):
    return a.compute(scheduler="synchronous") if hasattr(a, "compute") else np.asarray(a)


# ----------------------------------------------------------------------------- paths
def _is_zarr_group(path: str) -> bool:
    return os.path.isdir(path) and (path.rstrip("/\\").endswith(".zarr") or any(
        os.path.isfile(os.path.join(path, name)) for name in ("zarr.json", ".zgroup")))


def _kind_of(path: str) -> str | None:
    """'parquet', 'svmlight', 'zarr' or None for a path that is none of these."""
    if _is_zarr_group(path):
        return "zarr"
    name = os.path.basename(path).lower()
    if not os.path.isfile(path) or name.startswith((".", "_")):
        return None
    if name.endswith(_PARQUET):
        return "parquet"
    stem = name[: -len(suffix)] if (suffix := next((s for s in _COMPRESSED if name.endswith(s)), "")) else name
    return "svmlight" if stem.endswith(_SVMLIGHT) else None


def _count(files, kind):
    return f"{len(files)} {kind} file{'s' if len(files) > 1 else ''}"


def _find_data(path: str):
    """``(kind, paths, where)``: the format and the files (or Zarr group) that ``path`` names."""
    if os.path.exists(path):
        if not os.path.isdir(path) or _is_zarr_group(path):
            kind = _kind_of(path)
            if kind is None:
                raise ValueError(f"{path} is not Parquet (.parquet, .parq, .pq), svmlight (.svm, .svmlight, .libsvm, "
                                 f"optionally .gz/.bz2/.xz) or a Zarr group")
            return kind, [path], f"at {path}"
        candidates, where = sorted(os.path.join(path, name) for name in os.listdir(path)), f"under {path}"
    elif any(c in path for c in "*?["):
        candidates, where = sorted(glob.glob(path)), f"matching {path}"
        if not candidates:
            raise FileNotFoundError(f"no file matches {path}")
    else:
        raise FileNotFoundError(f"no such file or directory: {path}")
    found: dict[str, list[str]] = {}
    for candidate in candidates:
        if (kind := _kind_of(candidate)) is not None:
            found.setdefault(kind, []).append(candidate)
    if not found:
        raise ValueError(f"{path} holds no data: no .parquet, .svm/.svmlight/.libsvm files or Zarr group")
    if len(found) > 1:
        listed = "; ".join(f"{_KIND_NAMES[k]}: {', '.join(os.path.basename(p) for p in v[:3])}" for k, v in sorted(found.items()))
        raise ValueError(f"{path} mixes formats ({listed}): keep one format per directory or pattern")
    (kind, paths), = found.items()
    if kind == "zarr" and len(paths) > 1:
        raise ValueError(f"{path} holds {len(paths)} Zarr groups ({', '.join(paths[:3])}): open one group at a time")
    return kind, paths, where


# ----------------------------------------------------------------------------- entry points
def is_row_source(X) -> bool:
    """True when ``X`` is read block by block by :func:`open_row_blocks`: a path (``str``
    or ``os.PathLike``), a Dask array, a Dask dataframe or a :class:`RowBlocks`. Imports nothing."""
    if isinstance(X, (str, os.PathLike, RowBlocks)):
        return True
    da, dd = sys.modules.get("dask.array"), sys.modules.get("dask.dataframe")
    return (da is not None and isinstance(X, da.Array)) or (dd is not None and isinstance(X, dd.DataFrame))


def open_row_blocks(X, y=None, *, dtype=np.float32) -> RowBlocks:
    """Open ``X`` (and its labels ``y``) as :class:`RowBlocks` without reading its rows.

    ``X`` is a path -- a Parquet file, directory or glob (``y`` names the label column), a
    Zarr group (``y`` names its label array, default ``"y"``), or svmlight files
    (``y=None``) -- or a Dask array (``y`` a Dask or NumPy array) or dataframe (``y`` a
    column name or a Dask Series). ``dtype`` (float32 or float64) is the dtype of the
    dense blocks and of CSR values. Raises ``FileNotFoundError`` for a missing path,
    ``TypeError`` for an ``X`` of another type and ``ValueError`` for data that do not fit.
    """
    dtype = check_float_dtype("dtype", dtype)
    if isinstance(X, RowBlocks):  # blocks of the caller's own storage (a subclass)
        if y is not None:
            raise ValueError("RowBlocks hold their labels; pass y=None")
        blocks = X
    elif isinstance(X, (str, os.PathLike)):
        path = os.path.expanduser(os.fspath(X))
        kind, paths, where = _find_data(path)
        if kind == "parquet":
            blocks = _ParquetBlocks(paths, where, y, dtype)
        elif kind == "svmlight":
            blocks = _SvmlightBlocks(paths, where, y, dtype)
        else:
            blocks = _ZarrBlocks(paths[0], y, dtype)
    elif is_row_source(X):  # a Dask collection: dask is imported already
        blocks = (_DaskArrayBlocks if isinstance(X, sys.modules["dask.array"].Array) else _DaskFrameBlocks)(X, y, dtype)
    else:
        raise TypeError(f"X must be a path (Parquet, Zarr or svmlight data), a Dask array or a Dask dataframe, "
                        f"got {type(X).__name__}")
    if blocks.n_rows == 0:
        raise ValueError(f"{blocks.source} holds no rows")
    return blocks
