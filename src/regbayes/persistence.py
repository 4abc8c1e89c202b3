"""Saving and loading estimators without pickle: ``est.save(path)`` and :func:`load`.

File format, version 1
----------------------
A model file is a ZIP archive of uncompressed entries that ``numpy.load(path,
allow_pickle=False)`` reads as an ``.npz``:

* ``metadata.json``: one UTF-8 JSON object with the keys

  - ``format``: ``"regbayes-model"``; ``format_version``: ``1``;
  - ``library_version``: ``regbayes.__version__`` of the writer;
  - ``class``: the estimator's class name, one of the estimators ``regbayes`` exports;
  - ``params``: ``get_params(deep=False)``, encoded as below;
  - ``attributes``: every other instance attribute (fitted attributes, the posterior
    draws, the sampler's result and final states, random generators), encoded;
  - ``unsaved_attributes``: the attributes left out (see below);
  - ``arrays``: the names of the array entries, in the order they are stored.

* ``<name>.npy``: one NumPy ``.npy`` entry per array, named after where it sits
  (``coef_samples_``, ``_sample_result.positions``, ``trace_.potential``).
* the archive comment, the file's last 86 bytes: ``regbayes-model sha256:<64 hex>``, the
  SHA-256 of every byte before the hex digits. A truncated file, a flipped bit or an
  edited entry no longer matches it. It is a checksum, not a signature: an edit that
  also recomputes it goes unnoticed, but loading still runs no code from the file.

Encoded values: ``None``, booleans, integers, strings and finite floats are themselves;
everything else is a JSON object with a ``kind``:

============================ =====================================================
``array``                    ``name`` of its ``.npy`` entry; ``object: true`` for
                             an object array of strings (stored as strings)
``float``                    ``value``: ``"nan"``, ``"inf"`` or ``"-inf"``
``scalar``                   a NumPy scalar: ``dtype`` (``"<f8"``) and ``value``
``list``, ``tuple``, ``set`` ``items``: a list of encoded values
``dict``                     ``items``: an object of encoded values (string keys)
``record``                   ``type`` (a name in :data:`RECORD_TYPES`: NamedTuples
                             and dataclasses of the library) and ``fields``
``generator``                a ``numpy.random.Generator``: its bit generator's
                             ``state``
``random_state``             a ``numpy.random.RandomState``: ``state``
                             (``get_state(legacy=False)``)
``scalar_type``              a type such as ``numpy.int64``: ``dtype`` or ``builtin``
``path``                     a ``pathlib`` path (a ``checkpoint`` parameter): its
                             class ``type`` (``PosixPath``, ...) and ``value``
``count_vectorizer``         scikit-learn's ``CountVectorizer``: ``params``,
                             ``words`` and ``index`` (its ``vocabulary_``) and its
                             other fitted ``attributes``
============================ =====================================================

Loading never unpickles (``numpy.load(..., allow_pickle=False)``) and never imports a
name read from the file: classes are looked up in allow-lists (the exported estimators,
:data:`RECORD_TYPES`, NumPy's bit generators). JAX arrays come back as NumPy arrays.
Attributes a class lists in ``_unsaved_attributes`` (caches rebuilt on first use) are not
written; load sets them to the value listed there. ``BayesianSVC.idata_`` is such a cache:
the file holds the sampler result it is built from (``_sample_result``: draws, sampler
statistics, step sizes), so no netCDF entry is needed. An unfitted estimator saves its
parameters only.

Not saved (a ``TypeError`` naming the parameter or attribute): a callable parameter (such
as MedLDA's ``callback``; set it to None first), a vectorizer other than a plain
``CountVectorizer`` (its tokenizer, preprocessor or analyzer given as a function
included), an estimator of a class the library does not export (a subclass included),
and any other object the table above does not name.

A file written by another version of regbayes loads with a ``UserWarning`` (an
estimator's attributes may change between versions; the format version guards the
layout). A file that cannot be loaded (missing, not a model file, truncated, damaged, of
another format version, naming an unknown class) raises :class:`ModelFileError`.
"""
from __future__ import annotations

import dataclasses
import re
import warnings
import pathlib
from pathlib import Path, PurePath

import jax
import numpy as np
from sklearn.feature_extraction.text import CountVectorizer

from . import archive
from .algorithms.gibbs_svm import GibbsSVMState
from .inference.result import SampleResult
from .potentials.niw import NIW
from .samplers.hmc import HMCState
from .samplers.sgld import SGLDState
from .samplers.sgnht import SGNHTState
from .samplers.sgrld import SGRLDState
from .samplers.srwm import SRWMState
from .schedules import Constant, Polynomial

__all__ = ["FORMAT", "FORMAT_VERSION", "ModelFileError", "RECORD_TYPES", "load", "save"]

FORMAT = "regbayes-model"
FORMAT_VERSION = 1
METADATA = "metadata.json"
TRAILER = b"regbayes-model sha256:"  # followed by 64 hex digits: the archive comment

#: NamedTuples and dataclasses that fitted estimators hold, by name.
RECORD_TYPES = {cls.__name__: cls for cls in (SampleResult, NIW, SGLDState, SGNHTState, HMCState, SRWMState, SGRLDState,
                                              GibbsSVMState, Constant, Polynomial)}
BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")
BUILTIN_TYPES = {t.__name__: t for t in (bool, int, float, complex, str)}
PATH_TYPES = {t.__name__: t for t in (pathlib.Path, pathlib.PosixPath, pathlib.WindowsPath, pathlib.PurePath,
                                      pathlib.PurePosixPath, pathlib.PureWindowsPath)}
ARRAY_KINDS = "biufcUS"  # dtypes stored as they are (no object arrays: those need pickle)
SCALAR_KINDS = "biuf"


class ModelFileError(ValueError):
    """A model file that cannot be loaded; the message names the file and the problem."""


def estimator_classes() -> dict:
    """The classes a model file may name: the estimators ``regbayes`` exports."""
    from . import models

    return {name: getattr(models, name) for name in models.__all__}


# --------------------------------------------------------------------------- encoding
class _Encoder:
    """Turns values into JSON-ready nodes, collecting arrays into ``self.arrays``."""

    def __init__(self, owner: str):
        self.owner = owner
        self.arrays: dict[str, np.ndarray] = {}

    def refuse(self, what: str, value, hint: str = ""):
        kind = f"{type(value).__module__}.{type(value).__qualname__}"
        raise TypeError(f"cannot save {self.owner}: {what} is a {kind}, which a regbayes model file does not store "
                        f"(it stores arrays, numbers, strings, lists, dicts and the library's own records){hint}")

    def array(self, value: np.ndarray, what: str, path: str) -> dict:
        node = {"kind": "array"}
        if value.dtype.kind == "O":
            if not all(isinstance(v, str) for v in value.flat):
                self.refuse(what, value, " (an object array that is not all strings)")
            value, node["object"] = value.astype(str), True
        elif value.dtype.kind not in ARRAY_KINDS or value.dtype.fields is not None:
            self.refuse(what, value, f" (dtype {value.dtype})")
        name = re.sub(r"[^\w.\[\]-]", "_", path)
        while name in self.arrays:
            name += "+"
        self.arrays[name] = value
        node["name"] = name
        return node

    def encode(self, value, what: str, path: str):
        t = type(value)
        if value is None or t in (bool, int, str):
            return value
        if t is float:
            return archive.float_node(value)
        if isinstance(value, jax.Array):
            value = np.asarray(value)
        if isinstance(value, np.ndarray):
            return self.array(value, what, path)
        if isinstance(value, np.generic) and value.dtype.kind in SCALAR_KINDS:
            return {"kind": "scalar", "dtype": value.dtype.str, "value": self.encode(value.item(), what, path)}
        if (isinstance(value, tuple) and hasattr(value, "_fields")) or (dataclasses.is_dataclass(value) and not isinstance(value, type)):
            if RECORD_TYPES.get(t.__name__) is not t:
                self.refuse(what, value)
            names = value._fields if isinstance(value, tuple) else [f.name for f in dataclasses.fields(value)]
            return {"kind": "record", "type": t.__name__,
                    "fields": {f: self.encode(getattr(value, f), f"{what}.{f}", f"{path}.{f}") for f in names}}
        if t in (list, tuple, set, frozenset):
            items = sorted(value, key=repr) if t in (set, frozenset) else value
            return {"kind": "set" if t in (set, frozenset) else t.__name__,
                    "items": [self.encode(v, f"{what}[{i}]", f"{path}[{i}]") for i, v in enumerate(items)]}
        if t is dict:
            if not all(isinstance(k, str) for k in value):
                self.refuse(what, value, " (a dict with keys that are not strings)")
            return {"kind": "dict", "items": {k: self.encode(v, f"{what}[{k!r}]", f"{path}.{k}") for k, v in value.items()}}
        if isinstance(value, PurePath):  # a checkpoint file, say: loaded as the same pathlib class
            if PATH_TYPES.get(t.__name__) is not t:
                self.refuse(what, value)
            return {"kind": "path", "type": t.__name__, "value": str(value)}
        if t is np.random.Generator:
            return {"kind": "generator", "state": self.encode(value.bit_generator.state, what, path)}
        if t is np.random.RandomState:
            return {"kind": "random_state", "state": self.encode(value.get_state(legacy=False), what, path)}
        if isinstance(value, type) and issubclass(value, np.generic):
            return {"kind": "scalar_type", "dtype": np.dtype(value).str}
        if isinstance(value, type) and BUILTIN_TYPES.get(value.__name__) is value:
            return {"kind": "scalar_type", "builtin": value.__name__}
        if t is CountVectorizer:
            return self.vectorizer(value, what, path)
        top = re.fullmatch(r"parameter '(\w+)'", what)
        self.refuse(what, value, f" (set it to None before saving: est.set_params({top[1]}=None))" if callable(value) and top else "")

    def vectorizer(self, value: CountVectorizer, what: str, path: str) -> dict:
        params = value.get_params(deep=False)
        node = {"kind": "count_vectorizer",
                "params": {k: self.encode(v, f"{what}'s parameter {k!r}", f"{path}.{k}") for k, v in params.items()}}
        fitted = {k: v for k, v in vars(value).items() if k not in params and k not in ("vocabulary_", "_stop_words_id")}
        node["attributes"] = {k: self.encode(v, f"{what}.{k}", f"{path}.{k}") for k, v in fitted.items()}
        if hasattr(value, "vocabulary_"):
            words = np.array(list(value.vocabulary_), dtype=str)
            index = np.array([int(i) for i in value.vocabulary_.values()], dtype=np.int64)
            node["words"] = self.array(words, what, f"{path}.vocabulary_words")
            node["index"] = self.array(index, what, f"{path}.vocabulary_index")
        return node


def save(estimator, path) -> Path:
    """Write ``estimator`` (fitted or not) to ``path`` in the format of the module
    docstring; the file is replaced atomically. Returns the path."""
    from . import __version__

    name = type(estimator).__name__
    if estimator_classes().get(name) is not type(estimator):
        raise TypeError(f"cannot save a {type(estimator).__module__}.{type(estimator).__qualname__}: a regbayes model "
                        f"file holds one of the library's estimators ({', '.join(sorted(estimator_classes()))})")
    encoder = _Encoder(name)
    params = estimator.get_params(deep=False)
    unsaved = [k for k in getattr(type(estimator), "_unsaved_attributes", {}) if k in vars(estimator)]
    metadata = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "library_version": __version__, "class": name,
        "params": {k: encoder.encode(v, f"parameter {k!r}", f"params.{k}") for k, v in params.items()},
        "attributes": {k: encoder.encode(v, f"attribute {k!r}", k) for k, v in vars(estimator).items()
                       if k not in params and k not in unsaved},
    }
    metadata["unsaved_attributes"] = unsaved
    metadata["arrays"] = list(encoder.arrays)
    return archive.write_atomic(path, archive.pack(METADATA, metadata, encoder.arrays, TRAILER))


# --------------------------------------------------------------------------- decoding
def load(path):
    """The estimator saved in ``path`` by ``est.save(path)``; raises
    :class:`ModelFileError` for a file that is not one (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"no such model file: {path}")
    data = path.read_bytes()
    metadata, arrays = _verified_contents(path, data)
    from . import __version__

    if metadata.get("library_version") != __version__:
        warnings.warn(f"{path} was saved by regbayes {metadata.get('library_version')!r} and is loaded by regbayes "
                      f"{__version__}: an estimator's fitted attributes may differ between versions", UserWarning, stacklevel=2)
    try:
        return _build(metadata, arrays)
    except ModelFileError as exc:
        raise ModelFileError(f"{path}: {exc}") from None
    except Exception as exc:  # a consistent checksum over inconsistent contents: edited and re-signed
        raise ModelFileError(f"{path}: the model cannot be rebuilt from the file's contents ({type(exc).__name__}: {exc})") from exc


def _verified_contents(path: Path, data: bytes):
    """(metadata, arrays by name) of a file whose checksum and format version are right."""
    metadata, npz = archive.unpack(path, data, METADATA, TRAILER, ModelFileError, "regbayes model file")
    with npz:
        if metadata.get("format") != FORMAT:
            raise ModelFileError(f"{path} is not a regbayes model file (no '{FORMAT}' metadata)")
        version = metadata.get("format_version")
        if version != FORMAT_VERSION:
            raise ModelFileError(f"{path} has model file format version {version!r} (written by regbayes "
                                 f"{metadata.get('library_version', '?')}); this regbayes reads version {FORMAT_VERSION}")
        try:
            names = metadata["arrays"]
            if sorted(npz.files) != sorted([METADATA, *names]):
                raise ModelFileError(f"{path}: its entries do not match the arrays its metadata lists")
            arrays = {name: npz[name] for name in names}
        except ModelFileError:
            raise
        except Exception as exc:
            raise ModelFileError(f"{path} cannot be read as a regbayes model file ({type(exc).__name__}: {exc})") from exc
    return metadata, arrays


def _build(metadata: dict, arrays: dict):
    classes = estimator_classes()
    name = metadata["class"]
    if name not in classes:
        raise ModelFileError(f"unknown estimator class {name!r}; a model file holds one of {', '.join(sorted(classes))}")
    cls = classes[name]
    params = metadata["params"]
    expected = set(cls().get_params(deep=False))
    if set(params) != expected:
        raise ModelFileError(f"its parameters {sorted(params)} are not those of {name} ({sorted(expected)})")
    estimator = cls(**{k: _decode(v, arrays) for k, v in params.items()})
    for key, node in metadata["attributes"].items():
        setattr(estimator, key, _decode(node, arrays))
    defaults = getattr(cls, "_unsaved_attributes", {})
    for key in metadata["unsaved_attributes"]:
        setattr(estimator, key, defaults[key])
    return estimator


def _decode(node, arrays: dict):
    if node is None or type(node) in (bool, int, str, float):
        return node
    kind = node["kind"]
    if kind == "array":
        value = arrays[node["name"]]
        return value.astype(object) if node.get("object") else value
    if kind == "float":
        return archive.float_of_node(node, ModelFileError)
    if kind == "scalar":
        dtype = np.dtype(node["dtype"])
        if dtype.kind not in SCALAR_KINDS:
            raise ModelFileError(f"bad scalar dtype {node['dtype']!r}")
        return dtype.type(_decode(node["value"], arrays))
    if kind in ("list", "tuple", "set"):
        items = [_decode(v, arrays) for v in node["items"]]
        return {"list": list, "tuple": tuple, "set": set}[kind](items)
    if kind == "dict":
        return {k: _decode(v, arrays) for k, v in node["items"].items()}
    if kind == "record":
        if node["type"] not in RECORD_TYPES:
            raise ModelFileError(f"unknown record type {node['type']!r}")
        return RECORD_TYPES[node["type"]](**{k: _decode(v, arrays) for k, v in node["fields"].items()})
    if kind == "path":
        if node["type"] not in PATH_TYPES:
            raise ModelFileError(f"unknown path type {node['type']!r}")
        return PATH_TYPES[node["type"]](node["value"])
    if kind == "generator":
        state = _decode(node["state"], arrays)
        if state["bit_generator"] not in BIT_GENERATORS:
            raise ModelFileError(f"unknown bit generator {state['bit_generator']!r}")
        bit_generator = getattr(np.random, state["bit_generator"])()
        bit_generator.state = state
        return np.random.Generator(bit_generator)
    if kind == "random_state":
        random_state = np.random.RandomState()
        random_state.set_state(_decode(node["state"], arrays))
        return random_state
    if kind == "scalar_type":
        if "builtin" in node:
            return BUILTIN_TYPES[node["builtin"]]
        dtype = np.dtype(node["dtype"])
        if dtype.kind not in ARRAY_KINDS:
            raise ModelFileError(f"bad scalar type {node['dtype']!r}")
        return dtype.type
    if kind == "count_vectorizer":
        vectorizer = CountVectorizer(**{k: _decode(v, arrays) for k, v in node["params"].items()})
        for key, value in node["attributes"].items():
            setattr(vectorizer, key, _decode(value, arrays))
        if "words" in node:
            vectorizer.vocabulary_ = dict(zip(_decode(node["words"], arrays).tolist(), _decode(node["index"], arrays).tolist()))
        return vectorizer
    raise ModelFileError(f"unknown value kind {kind!r}")
