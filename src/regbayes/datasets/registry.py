"""Registry of the public data sets used by the papers, with where to get them.

* Realsim (``real-sim``; McCallum's real vs simulated auto/aviation UseNet articles),
  LIBSVM binary page: Bayesian linear SVM, paper 000 Section 5.1.2.
* IJCNN1 (Prokhorov, IJCNN 2001 challenge), LIBSVM binary page: infinite SVM, paper
  000 Section 5.3 (49,990 training rows, 22 features).
* HIGGS (Baldi, Sadowski and Whiteson, Nature Communications 5:4308, 2014): paper 000
  Section 5.1.2 (1.1 x 10^7 rows, 28 features), from the LIBSVM page or from UCI (CSV,
  label first).

No checksums are published by either host and none are invented here: ``sha256`` is
``None`` and the downloader then records the computed digest next to the file (see
``download.py``). Pin a digest by passing your own ``RemoteFile`` to ``fetch_file``.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

__all__ = [
    "RemoteFile",
    "DatasetSpec",
    "LIBSVM_BINARY_URL",
    "UCI_HIGGS_URL",
    "REGISTRY",
    "get_dataset",
    "list_datasets",
]

LIBSVM_BINARY_URL = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"
UCI_HIGGS_URL = "https://archive.ics.uci.edu/ml/machine-learning-databases/00280/"

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_FORMATS = ("svmlight", "csv")


@dataclass(frozen=True)
class RemoteFile:
    """One downloadable file.

    ``filename`` is its name on the host and in the cache; ``alternatives`` are other
    names under which the host may publish the same content (e.g. a recompressed
    ``.xz``), tried in order when the main name is missing (HTTP 404) there.
    """

    filename: str
    sha256: str | None = None
    role: str = "data"
    n_samples: int | None = None
    alternatives: tuple[str, ...] = ()

    def __post_init__(self):
        for name in (self.filename, *self.alternatives):
            if not name or "/" in name or "\\" in name or name in (".", ".."):
                raise ValueError(f"RemoteFile name must be a plain file name, got {name!r}")
        if self.sha256 is not None and not _SHA256.match(self.sha256):
            raise ValueError(
                f"sha256 of {self.filename} must be 64 lower-case hex digits or None, "
                f"got {self.sha256!r}"
            )

    @property
    def names(self) -> tuple[str, ...]:
        return (self.filename, *self.alternatives)


@dataclass(frozen=True)
class DatasetSpec:
    """A data set: its files, the host they come from and how to parse them."""

    name: str
    description: str
    base_url: str
    files: tuple[RemoteFile, ...]
    file_format: str
    n_features: int
    labels: tuple[int, ...]
    reference: str = ""

    def __post_init__(self):
        if self.file_format not in _FORMATS:
            raise ValueError(f"file_format must be one of {_FORMATS}, got {self.file_format!r}")
        roles = [f.role for f in self.files]
        if len(set(roles)) != len(roles):
            raise ValueError(f"{self.name}: file roles must be unique, got {roles}")

    def file(self, role: str = "data") -> RemoteFile:
        for f in self.files:
            if f.role == role:
                return f
        raise KeyError(f"{self.name} has no file with role {role!r}; roles: "
                       f"{[f.role for f in self.files]}")

    def urls(self) -> dict[str, str]:
        """Default URL of every file, by role."""
        return {f.role: self.base_url + f.filename for f in self.files}

    def to_dict(self) -> dict:
        """Plain-data description (for printing or JSON in the CLI)."""
        d = asdict(self)
        d["files"] = [asdict(f) for f in self.files]
        d["urls"] = self.urls()
        return d


REGISTRY: dict[str, DatasetSpec] = {
    "realsim": DatasetSpec(
        name="realsim",
        description="real-sim: UseNet articles, real vs simulated auto/aviation "
        "(72,309 x 20,958, sparse, labels -1/+1)",
        base_url=LIBSVM_BINARY_URL,
        files=(RemoteFile("real-sim.bz2", None, role="data", n_samples=72309),),
        file_format="svmlight",
        n_features=20958,
        labels=(-1, 1),
        reference="A. McCallum, real-sim data; LIBSVM binary data sets. Paper 000 Sec. 5.1.2.",
    ),
    "ijcnn1": DatasetSpec(
        name="ijcnn1",
        description="IJCNN 2001 challenge, engine misfire detection "
        "(49,990 train / 91,701 test x 22, labels -1/+1)",
        base_url=LIBSVM_BINARY_URL,
        files=(
            RemoteFile("ijcnn1.bz2", None, role="train", n_samples=49990),
            RemoteFile("ijcnn1.t.bz2", None, role="test", n_samples=91701),
        ),
        file_format="svmlight",
        n_features=22,
        labels=(-1, 1),
        reference="D. Prokhorov, IJCNN 2001 neural network competition. Paper 000 Sec. 5.3.",
    ),
    "higgs": DatasetSpec(
        name="higgs",
        description="HIGGS, LIBSVM version (11,000,000 x 28, dense, labels 0/1)",
        base_url=LIBSVM_BINARY_URL,
        files=(
            RemoteFile("HIGGS.bz2", None, role="data", n_samples=11_000_000,
                       alternatives=("HIGGS.xz",)),
        ),
        file_format="svmlight",
        n_features=28,
        labels=(0, 1),
        reference="P. Baldi, P. Sadowski, D. Whiteson, Nat. Commun. 5:4308 (2014). "
        "Paper 000 Sec. 5.1.2.",
    ),
    "higgs-uci": DatasetSpec(
        name="higgs-uci",
        description="HIGGS, UCI CSV version (11,000,000 x 28, label first, labels 0/1)",
        base_url=UCI_HIGGS_URL,
        files=(RemoteFile("HIGGS.csv.gz", None, role="data", n_samples=11_000_000),),
        file_format="csv",
        n_features=28,
        labels=(0, 1),
        reference="P. Baldi, P. Sadowski, D. Whiteson, Nat. Commun. 5:4308 (2014). "
        "Paper 000 Sec. 5.1.2.",
    ),
}


def get_dataset(name: str) -> DatasetSpec:
    """The registry entry called ``name`` (``ValueError`` listing the names otherwise)."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown data set {name!r}; known: {sorted(REGISTRY)}") from None


def list_datasets() -> dict[str, DatasetSpec]:
    """A copy of the registry: data-set name -> ``DatasetSpec``."""
    return dict(REGISTRY)
