"""regbayes' side of the MedLDA token-throughput benchmark: the numba token kernels called
directly (collapsed LDA, Gibbs MedLDA with M classifiers, the eq. 22 fixed-topic sweeps)
and ``MedLDA`` end to end. Each ``*_sweep`` returns ``(one_sweep, tokens per call)``."""
from __future__ import annotations

import numpy as np
from harness import timed
from regbayes.algorithms import lda_kernels


def tokens(X):
    return lda_kernels.tokens_from_counts(X.tocsr())


def numba_collapsed_sweep(X, y, K, M, alpha, beta, seed):
    """``gibbs_medlda_sweep`` with M binary classifiers (M = 0: collapsed LDA). The values
    of eta, labels and 1/omega do not change the work per token."""
    kern = lda_kernels

    doc_ptr, words = tokens(X)
    D, V = X.shape
    z = kern.random_assignments(words.shape[0], K, seed)
    state = list(kern.count_tables(doc_ptr, words, z, K, V))
    state.insert(0, z)
    rng = np.random.default_rng(seed)
    eta = rng.normal(0.0, 1.0, size=(M, K))
    if M == 1:
        y_sign = np.where(y == y.max(), 1.0, -1.0)[:, None]
    else:
        y_sign = np.where(y[:, None] == np.arange(M)[None, :], 1.0, -1.0) if M else np.zeros((D, 0))
    inv_omega = np.ones((D, M))
    calls = [0]

    def one_sweep():
        calls[0] += 1
        state[:] = kern.gibbs_medlda_sweep(doc_ptr, words, *state, eta, y_sign, inv_omega, alpha, beta, 1.0, 1.0,
                                           seed + calls[0])

    return one_sweep, words.shape[0]


def numba_fixed_topic_sweep(X, y, K, M, alpha, threads, seed, n_sweeps=4, n_burnin=2):
    """``fixed_topic_sweeps`` (eq. 22, Phi and eta fixed) over every document at once,
    ``n_sweeps`` sweeps per call, the assignments recorded as MedLDA's minibatch step
    does; ``threads`` numba threads (the parallel build) or the serial build (0)."""
    import inspect

    import numba

    kern = lda_kernels

    doc_ptr, words = tokens(X)
    D, V = X.shape
    rng = np.random.default_rng(seed)
    phi_t = np.ascontiguousarray(rng.dirichlet(np.full(V, 0.1), size=K).T)
    eta = rng.normal(0.0, 1.0, size=(M, K))
    y_sign = np.where(y[:, None] == np.arange(M)[None, :], 1.0, -1.0)
    z = kern.random_assignments(words.shape[0], K, seed)
    kernel = kern.fixed_topic_sweeps if threads else getattr(kern, "fixed_topic_sweeps_serial", kern.fixed_topic_sweeps)
    values = dict(doc_ptr=doc_ptr, words=words, z=z, phi_t=phi_t, eta=eta, y_sign=y_sign,
                  y_class=y.astype(np.int64), mode=kern.MODE_BINARY, C=1.0, margin=1.0, alpha=alpha,
                  n_sweeps=n_sweeps, n_burnin=n_burnin, record=True, doc_keys=np.arange(D, dtype=np.int64),
                  init_random=False)
    # the kernel's own argument order; parameters not set here keep their defaults
    params = inspect.signature(getattr(kernel, "py_func", kernel)).parameters
    names = list(params)
    calls = [0]

    def one_sweep():
        calls[0] += 1
        values["seed"] = seed + calls[0]
        previous = numba.get_num_threads()
        numba.set_num_threads(max(threads, 1))
        try:
            kernel(*[values[n] if n in values else params[n].default for n in names])
        finally:
            numba.set_num_threads(previous)

    return one_sweep, words.shape[0] * n_sweeps


def estimator_rate(X, y, sampler, K, n_iter, batch_size, seed):
    """``MedLDA`` end to end: tokens sampled / sampling wall time from ``trace_``, after a
    2-iteration warm-up fit on the same data (compilation outside the timed run)."""
    from regbayes import MedLDA

    params = dict(n_topics=K, sampler=sampler, batch_size=batch_size, random_state=seed, n_draws=1)
    _, warm = timed(MedLDA(**params, n_iter=2).fit, X, y)
    model = MedLDA(**params, n_iter=n_iter).fit(X, y)
    trace = model.trace_
    wall = np.asarray(trace["wall_time"], dtype=np.float64)
    n_tok = np.asarray(trace["n_tokens"], dtype=np.float64)
    # skip the first iteration (one-off costs) when there are several
    rate = (n_tok[-1] - n_tok[0]) / (wall[-1] - wall[0]) if len(wall) > 1 else n_tok[-1] / wall[-1]
    return {"tokens_per_s": float(rate), "iterations": int(len(wall)), "sampling_s": float(wall[-1]),
            "seconds_per_iteration": float(np.median(np.diff(np.concatenate([[0.0], wall])))),
            "warm_up_fit_s": warm}
