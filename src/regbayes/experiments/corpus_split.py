"""Train / test count matrices of the topic experiments' real corpora.

* :func:`vectorize` -- the vocabulary rule of ``regbayes reproduce medlda-fig8 --data
  20news``: ``CountVectorizer(stop_words="english", min_df=5, max_df=0.5)`` fitted on the
  training texts (English stop words removed as in paper 000; rare and ubiquitous terms
  dropped), documents left empty dropped from both sides.
* :func:`load_system_split` -- a corpus that a Debian package installs ("wordnet-nouns",
  "fortunes": :data:`regbayes.experiments.data_option.SYSTEM_CORPORA`), split once and for
  all: a random 80 / 20 split of the corpus in file order (``split_rows(n, 0.2, 0)``: the
  permutation of ``numpy.random.default_rng(1)``, the last 80 % training), whatever the
  run's seed, as 20news keeps its bydate split. ``n`` (or ``quick``) takes a random
  subset of the training documents, as for 20news.

No paper equation is implemented here.
"""
from __future__ import annotations

import numpy as np

__all__ = ["SPLIT_SEED", "TEST_FRACTION", "VECTORIZER", "load_system_split", "vectorize"]

#: The fixed split of the Debian-package corpora.
TEST_FRACTION = 0.2
SPLIT_SEED = 0
#: CountVectorizer arguments of every real corpus.
VECTORIZER = dict(stop_words="english", min_df=5, max_df=0.5)
QUICK_N = 300


def vectorize(texts, y_train, test_texts, y_test) -> dict:
    """``X_train``, ``X_test`` (CSR int64 counts), ``y_train``, ``y_test``, ``vocabulary``
    and ``n_empty`` (documents dropped: (train, test)) under :data:`VECTORIZER`."""
    from sklearn.feature_extraction.text import CountVectorizer

    vectorizer = CountVectorizer(**VECTORIZER)
    X_train = vectorizer.fit_transform(texts).astype(np.int64)
    X_test = vectorizer.transform(test_texts).astype(np.int64)
    keep_train = np.asarray(X_train.sum(axis=1)).ravel() > 0
    keep_test = np.asarray(X_test.sum(axis=1)).ravel() > 0
    return {"X_train": X_train[keep_train].tocsr(), "y_train": np.asarray(y_train)[keep_train],
            "X_test": X_test[keep_test].tocsr(), "y_test": np.asarray(y_test)[keep_test],
            "vocabulary": list(vectorizer.get_feature_names_out()),
            "n_empty": (int((~keep_train).sum()), int((~keep_test).sum()))}


def load_system_split(source, *, n=None, seed: int = 0, quick: bool = False, folder=None) -> dict:
    """The experiment's data dict (as ``medlda_fig8.load_corpus``) of a registered
    Debian-package corpus ``source`` (a :class:`~regbayes.experiments.data_option.DataSource`).

    ``n``: training documents, a random subset (generator ``seed``) of the fixed split's
    training part; by default all, 300 with ``quick``, which also keeps a quarter as many
    test documents (generator ``seed + 1``).
    """
    from .data_option import load_system_corpus, split_rows

    corpus = load_system_corpus(source, folder=folder)
    train, test = split_rows(len(corpus.target), TEST_FRACTION, SPLIT_SEED)
    if n is None and quick:
        n = QUICK_N
    if n is not None and n < len(train):
        train = np.sort(np.random.default_rng(seed).choice(train, size=int(n), replace=False))
    if quick and max(20, len(train) // 4) < len(test):
        test = np.sort(np.random.default_rng(seed + 1).choice(test, size=max(20, len(train) // 4), replace=False))
    out = vectorize([corpus.texts[i] for i in train], corpus.target[train],
                    [corpus.texts[i] for i in test], corpus.target[test])
    n_empty = out.pop("n_empty")
    description = (f"{source.name}: {corpus.source}, {len(corpus.target):,} documents, "
                   f"{len(corpus.target_names)} classes; fixed random {1 - TEST_FRACTION:.0%} / {TEST_FRACTION:.0%} "
                   f"split (numpy default_rng({SPLIT_SEED + 1}) permutation)"
                   + (f", {len(train):,} training documents drawn with seed {seed}" if n is not None else "")
                   + f"; CountVectorizer({', '.join(f'{k}={v!r}' for k, v in VECTORIZER.items())}); "
                   f"documents left empty dropped: {n_empty[0]} train, {n_empty[1]} test")
    out.update(class_names=list(corpus.target_names), name=source.name, stand_in=False, description=description)
    return out
