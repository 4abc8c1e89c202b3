"""Every place where the benchmarks reach past regbayes' public API, in one module.

The benchmarks reproduce what an estimator does by default (its step size, thinning,
starting scale) and reuse pieces of the experiments and the numba kernels that the
public API does not expose. Each function below wraps one such access, so that a change
of those internals (or their replacement by public names) touches this file only.
"""
from __future__ import annotations

import contextlib


# ----------------------------------------------------------------------------- BayesianSVC defaults
def default_step(sampler, X, batch_size, hyper, n_warmup=None):
    """The step ``BayesianSVC`` picks by default for these data and warm-up length.

    Reads ``BayesianSVC._step_schedule``; falls back to the module constants
    ``DEFAULT_ADAGRAD_STEP`` / ``DEFAULT_RELATIVE_STEP`` of ``regbayes.models.bayes_svm``
    when that helper is missing or returns a schedule.
    """
    from regbayes import BayesianSVC
    from regbayes.models import bayes_svm

    try:
        model = BayesianSVC(sampler=sampler, batch_size=batch_size, n_warmup=n_warmup, **hyper)
        h = model._step_schedule(X, X.shape[0], min(batch_size, X.shape[0]))[0]
        if not callable(h):
            return float(h)
    except Exception:  # noqa: BLE001
        pass
    if sampler == "ssgld":
        return float(bayes_svm.DEFAULT_ADAGRAD_STEP)
    return float(bayes_svm.DEFAULT_RELATIVE_STEP[sampler])


def default_thin(sampler):
    """``BayesianSVC``'s default thinning for ``sampler`` (``regbayes.models.bayes_svm.DEFAULT_THIN``)."""
    from regbayes.models.bayes_svm import DEFAULT_THIN

    return DEFAULT_THIN[sampler]


def no_warmup_initial_scale(sampler, X, batch_size, step_size, hyper):
    """The scale of the starting transform ``T0 = scale * I`` that ``BayesianSVC.fit``
    hands the driver for a run without warm-up (``BayesianSVC._initial_scale``), or None
    when the estimator has no such helper."""
    from regbayes import BayesianSVC

    model = BayesianSVC(sampler=sampler, batch_size=batch_size, step_size=step_size, n_warmup=0, **hyper)
    scale = getattr(model, "_initial_scale", None)
    return scale(X, X.shape[0]) if scale else None


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
def full_data_value_and_subgrad():
    """``regbayes.potentials.linear_svm.value_and_subgrad(eta, data)``: the full-data
    potential and its subgradient (not exported by ``regbayes.potentials``)."""
    from regbayes.potentials.linear_svm import value_and_subgrad

    return value_and_subgrad


def as_schedule(step):
    """``regbayes.schedules.as_schedule``: a constant or callable step as a schedule ``t -> h_t``."""
    from regbayes.schedules import as_schedule as _as_schedule

    return _as_schedule(step)


def dense_transform_max():
    """The largest number of coordinates for which the driver's whitening transform is
    dense (``regbayes.inference.driver.DENSE_TRANSFORM_MAX``)."""
    from regbayes.inference import driver

    return driver.DENSE_TRANSFORM_MAX


@contextlib.contextmanager
def forced_dense_transform_max(limit):
    """Within the block, the driver's transform is dense up to ``limit`` coordinates
    (sets ``regbayes.inference.driver.DENSE_TRANSFORM_MAX``, restored afterwards)."""
    from regbayes.inference import driver

    saved = driver.DENSE_TRANSFORM_MAX
    driver.DENSE_TRANSFORM_MAX = limit
    try:
        yield
    finally:
        driver.DENSE_TRANSFORM_MAX = saved


# ----------------------------------------------------------------------------- MedLDA: kernels and experiment pieces
def lda_kernels():
    """The numba token kernels of MedLDA and LDA (``regbayes.algorithms.lda_kernels``):
    ``tokens_from_counts``, ``random_assignments``, ``count_tables``,
    ``gibbs_medlda_sweep``, ``fixed_topic_sweeps`` (and ``_serial``), ``MODE_BINARY``."""
    from regbayes.algorithms import lda_kernels as kernels

    return kernels


def fig8_synthetic_corpus(n, seed):
    """The synthetic corpus of ``regbayes reproduce medlda-fig8`` with ``n`` training
    documents (``regbayes.experiments.medlda_fig8.load_corpus("synthetic", ...)``): a dict
    with ``X_train``, ``y_train``, ``X_test``, ``y_test``, ``description``, ...."""
    from regbayes.experiments.medlda_fig8 import load_corpus

    return load_corpus("synthetic", n=n, seed=seed)


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
    (``regbayes.experiments._topic_baseline.lda_svm_pipeline``)."""
    from regbayes.experiments._topic_baseline import lda_svm_pipeline as pipeline

    return pipeline(k, random_state=random_state)


def online_lda_svm_curve(X_train, y_train, X_test, y_test, k, **kwargs):
    """Online LDA + LinearSVC accuracy against documents processed
    (``regbayes.experiments._topic_baseline.online_lda_svm_curve``)."""
    from regbayes.experiments._topic_baseline import online_lda_svm_curve as curve

    return curve(X_train, y_train, X_test, y_test, k, **kwargs)
