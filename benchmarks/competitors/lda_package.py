"""The ``lda`` package's collapsed Gibbs sampler for unsupervised LDA (Cython), the speed
anchor of the MedLDA token-throughput benchmark."""
from __future__ import annotations

import logging

import numpy as np


def lda_package_sweep(X, K, alpha, beta, seed):
    """The ``lda`` package's per-iteration work: shuffle its random variates, then
    ``_sample_topics`` (Cython), exactly as ``LDA._fit`` does each iteration. Returns
    ``(one_sweep, tokens per call)``."""
    import lda

    logging.getLogger("lda").setLevel(logging.ERROR)
    model = lda.LDA(n_topics=K, n_iter=1, alpha=alpha, eta=beta, random_state=seed, refresh=10**9)
    model._initialize(X.toarray().astype(np.int64) if hasattr(X, "toarray") else X)
    rands = model._rands.copy()
    rng = np.random.RandomState(seed)

    def one_sweep():
        rng.shuffle(rands)
        model._sample_topics(rands)

    return one_sweep, len(model.WS)
