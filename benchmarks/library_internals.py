"""Every place where the benchmarks reach past regbayes' estimators, in one module.

Two variants of ``BayesianSVC`` that no parameter selects (the SSGNHT start, the dense
whitening limit) and the pieces of the MedLDA experiments the benchmarks reuse. Each
function below wraps one such access, so that a change of them touches this file only.
The estimators' defaults are public (:mod:`regbayes.samplers.defaults`, read in
``svm_runners.py``).
"""
from __future__ import annotations

import contextlib


# ----------------------------------------------------------------------------- BayesianSVC variants
def ssgnht_svc_with_start(initial_momentum):
    """A ``BayesianSVC`` subclass whose SSGNHT kernel starts with ``initial_momentum``
    ("normal": eq. 14's draw, "zero": at rest), whatever the warm-up length (overrides the
    private ``BayesianSVC._kernel``)."""
    from regbayes import BayesianSVC
    from regbayes.potentials import build_potential
    from regbayes.samplers import ssgnht

    class SSGNHTStartSVC(BayesianSVC):
        def _kernel(self, batch_size, preconditioner):
            return ssgnht(build_potential(batch_size), initial_momentum=initial_momentum)

    SSGNHTStartSVC.__name__ = SSGNHTStartSVC.__qualname__ = f"SSGNHTStart{initial_momentum.title()}SVC"
    return SSGNHTStartSVC


# ----------------------------------------------------------------------------- potentials, schedules, driver
@contextlib.contextmanager
def forced_dense_transform_max(limit):
    """Within the block, ``BayesianSVC.fit`` runs the driver with a dense whitening
    transform up to ``limit`` coordinates (``sample(..., dense_transform_max=limit)``;
    the estimator has no parameter for it, so its module's ``sample`` is wrapped)."""
    import functools

    from regbayes.inference import sample
    from regbayes.models import bayes_svm

    bayes_svm.sample = functools.partial(sample, dense_transform_max=limit)
    try:
        yield
    finally:
        bayes_svm.sample = sample


# ----------------------------------------------------------------------------- MedLDA: kernels and experiment pieces
def fig8_synthetic_corpus(n, seed):
    """The synthetic corpus of ``regbayes reproduce medlda-fig8`` with ``n`` training
    documents (``regbayes.experiments.medlda_fig8.load_corpus("synthetic", ...)``): a dict
    with ``X_train``, ``y_train``, ``X_test``, ``y_test``, ``description``, ...."""
    from regbayes.experiments.medlda_fig8 import load_corpus

    return load_corpus("synthetic", n=n, seed=seed)


def fig8_corpus(data, seed, n=None):
    """A real corpus as ``regbayes reproduce medlda-fig8 --data NAME`` reads it
    (``medlda_fig8.load_corpus(data=NAME)``: for "wordnet-nouns" and "fortunes" the fixed
    80 / 20 split and the 20news vocabulary rule; ``n`` a random training subset)."""
    from regbayes.experiments.medlda_fig8 import load_corpus

    return load_corpus(data=data, n=n, seed=seed)


def fig8_method_settings(k, n_train, *, gibbs_sweeps, ssgrld_iterations):
    """medlda-fig8's MedLDA arguments for each sampler (``medlda_fig8.method_settings``,
    not quick)."""
    from regbayes.experiments import medlda_fig8

    return medlda_fig8.method_settings(False, k, n_train, gibbs_sweeps=gibbs_sweeps, ssgrld_iterations=ssgrld_iterations)


def fig8_curve(X_train, y_train, X_test, y_test, **params):
    """medlda-fig8's accuracy-against-documents curve of one MedLDA fit (``medlda_fig8.medlda_curve``)."""
    from regbayes.experiments import medlda_fig8

    return medlda_fig8.medlda_curve(X_train, y_train, X_test, y_test, **params)


def fig8_reach_summary(gibbs, ssgrld, *, tolerance):
    """Where each curve stays within ``tolerance`` of Gibbs MedLDA's final accuracy
    (``medlda_fig8.reach_summary``)."""
    from regbayes.experiments import medlda_fig8

    return medlda_fig8.reach_summary(gibbs, ssgrld, tolerance=tolerance)


def lda_svm_pipeline(k, *, random_state):
    """Batch LDA + LinearSVC, the topic-model baseline
    (``regbayes.experiments.topic_baseline.lda_svm_pipeline``)."""
    from regbayes.experiments.topic_baseline import lda_svm_pipeline as pipeline

    return pipeline(k, random_state=random_state)


def online_lda_svm_curve(X_train, y_train, X_test, y_test, k, **kwargs):
    """Online LDA + LinearSVC accuracy against documents processed
    (``regbayes.experiments.topic_baseline.online_lda_svm_curve``)."""
    from regbayes.experiments.topic_baseline import online_lda_svm_curve as curve

    return curve(X_train, y_train, X_test, y_test, k, **kwargs)


@contextlib.contextmanager
def counted_dask_rounds():
    """Count the chunks that :class:`regbayes.inference.distributed.DaskChains` sends to its
    workers (one task per group each) while the block runs: yields a dict whose ``"rounds"``
    grows."""
    from regbayes.inference import distributed

    counts = {"rounds": 0}
    original = distributed.DaskChains._each_group

    def counting(self, fn, *args):
        if fn == "run":
            counts["rounds"] += 1
        return original(self, fn, *args)

    distributed.DaskChains._each_group = counting
    try:
        yield counts
    finally:
        distributed.DaskChains._each_group = original
