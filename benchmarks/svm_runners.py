"""regbayes' own runs in the Bayesian linear SVM benchmarks: a ``BayesianSVC`` fit with its
draws and timings, and warm calls of the driver for the throughput comparison."""
from __future__ import annotations

import inspect
import time

import numpy as np
from svm_data import sigma_ref

from regbayes.potentials import sigma_ref as design_sigma_ref
from regbayes.samplers import defaults



def default_step(sampler, X, batch_size, hyper, n_warmup=None):
    """The step ``BayesianSVC`` picks by default for these data and warm-up length
    (:func:`regbayes.samplers.defaults.step_schedule`; the AdaGrad step for ssgld)."""
    n = X.shape[0]
    n_warmup, _ = defaults.run_lengths(sampler, n_warmup)
    h, _ = defaults.step_schedule(
        sampler, schedule="adagrad", n_data=n, batch_size=min(batch_size, n), n_params=X.shape[1] + 1,
        n_warmup=n_warmup, sigma_ref=design_sigma_ref(X, hyper["C"], hyper["prior_scale"]),
        prior_scale=hyper["prior_scale"],
    )
    return float(h)


def default_thin(sampler):
    """``BayesianSVC``'s default thinning (``SAMPLER_DEFAULTS[sampler].thin``)."""
    return defaults.SAMPLER_DEFAULTS[sampler].thin


def no_warmup_initial_scale(sampler, X, batch_size, step_size, hyper):
    """The scale of the starting transform ``T0 = scale * I`` of a run without warm-up
    (:func:`regbayes.samplers.defaults.start_scale`)."""
    del batch_size, step_size
    return defaults.start_scale(sampler, design_sigma_ref(X, hyper["C"], hyper["prior_scale"]), hyper["prior_scale"])

def run_regbayes(sampler, X, y, *, n_warmup, n_draws, thin, batch_size, seed, hyper, step_size=None, estimator=None):
    from regbayes import BayesianSVC

    model = (estimator or BayesianSVC)(
        sampler=sampler,
        step_size=step_size,
        n_warmup=n_warmup,
        n_draws=n_draws,
        thin=thin,
        batch_size=batch_size,
        random_state=seed,
        **hyper,
    )
    start = time.perf_counter()
    model.fit(X, y)
    fit_s = time.perf_counter() - start
    trace = model.trace_
    draws = np.column_stack([model.coef_samples_, model.intercept_samples_]).astype(np.float64)
    return {
        "draws": draws,
        "wall": np.asarray(trace["wall_time"], dtype=np.float64),
        "compile_s": float(trace["compile_seconds"]),
        "sampling_s": float(trace["sampling_seconds"]),
        "n_iter": n_warmup + n_draws * thin,
        "extra": {"fit_total_s": fit_s},
    }


def throughput_regbayes(sampler, X, data, batch_size, step_size, n_steps, thin, hyper, n_chains=1):
    """A warm call of regbayes' driver (``regbayes.inference.sample``, what BayesianSVC.fit
    runs) with the default kernel and step, ``n_chains`` chains side by side; returns a
    function seed -> (wall s, CPU s) of the sampling alone (compile time, ~0 once cached,
    subtracted)."""
    import jax.numpy as jnp

    from regbayes.inference import sample
    from regbayes.potentials import build_potential
    from regbayes.rng import make_key  # the keys BayesianSVC uses (threefry)
    from regbayes.samplers import ssgld, ssgnht

    potential = build_potential(batch_size)
    if sampler == "ssgnht":
        kernel = ssgnht(potential)
    else:  # "ssgld_plain": SSGLD without AdaGrad, the update blackjax.sgld makes (same step)
        kernel = ssgld(potential, None if sampler == "ssgld_plain" else "adagrad")
        sampler = "ssgld"
    h = step_size if step_size is not None else default_step(sampler, X, batch_size, hyper, n_warmup=0)
    init = jnp.zeros((n_chains, data.X.shape[1]), data.X.dtype)
    extra = {}
    if "initial_scale" in inspect.signature(sample).parameters:
        # the starting scale BayesianSVC.fit hands the driver (whitened coordinates); these
        # runs have no warm-up: the start BayesianSVC uses for n_warmup=0
        scale = no_warmup_initial_scale(sampler, X, batch_size, step_size, hyper)
        extra["initial_scale"] = scale if scale is not None else sigma_ref(X, hyper["C"], hyper["prior_scale"])

    def call(seed):
        cpu0 = time.process_time()
        result = sample(
            kernel, data, init, make_key(seed), n_warmup=0, n_draws=n_steps // thin, thin=thin, step_size=h, **extra
        )
        cpu = time.process_time() - cpu0 - result.compile_seconds
        return result.sampling_seconds, cpu

    return call


def gibbs_sweep_seconds(X, y, hyper, seed):
    """Seconds per Gibbs sweep (a 3-sweep run; compile excluded)."""
    run = run_regbayes("gibbs", X, y, n_warmup=0, n_draws=3, thin=1, batch_size=100, seed=seed, hyper=hyper)
    return run["sampling_s"] / 3.0, run["compile_s"]
