"""Bayesian linear SVM on HIGGS-shaped data: regbayes against BlackJAX, NumPyro and scikit-learn.

Paper 000, section 5.1: stochastic subgradient MCMC (SSGLD, SSGNHT) against the exact
Gibbs sampler with data augmentation, here side by side with

* regbayes ``BayesianSVC`` with ``sampler="ssgld"`` (AdaGrad, the default),
  ``"ssgnht"`` (defaults) and ``"gibbs"`` (data augmentation, exact). SSGLD and SSGNHT
  run twice: with 1000 warm-up steps (BayesianSVC's whitening adaptation; posterior
  metrics) and "from step 0" (no warm-up, a draw every 5 steps), which resolves the
  early time course that the warm-up hides. A default step that diverges is retried
  at a third of it (``--divergence-retries``), with a note;
* BlackJAX's ``blackjax.sgld`` (constant step) on the SAME potential: its gradient
  estimator is ``-dU~`` from ``regbayes.potentials.build_potential(batch_size)``, the
  minibatch key travelling as BlackJAX's "minibatch", with the same batch size and the same
  number of steps; the whole run is a jitted ``lax.scan`` (outer scan over saved draws,
  inner scan over ``thin`` steps, as in regbayes' driver), compiled ahead of time and
  timed separately from compilation, in the same number of chunks;
* NumPyro's NUTS (functional ``numpyro.infer.hmc.hmc(potential_fn_gen=...)``) on the
  full-data potential ``U`` of regbayes (``jax.grad`` of a piecewise-linear hinge is a
  valid subgradient almost everywhere), run only where its projected time fits
  ``--nuts-limit`` seconds;
* scikit-learn's ``LinearSVC(loss="hinge")`` as the point-estimate anchor: its objective
  ``1/2 ||w||^2 + C_svm sum_i max(0, 1 - y_i (w x_i + b))`` with the intercept penalised
  like a weight (liblinear's ``intercept_scaling=1``) is the negative log posterior of
  ``BayesianSVC`` up to scale when ``C_svm = C * prior_scale^2 / margin`` and
  ``eta = margin * [w, b]``; so LinearSVC returns the posterior mode (MAP).

The posterior is ``p(eta | D) ∝ N(eta; 0, nu^2 I) prod_i exp(-C max(0, l - y_i eta^T x_i))``
with ``C = l = nu = 1`` and an intercept (29 coordinates). Every sampler starts at 0.

Reference: a long Gibbs run (its own seed) at each N; its posterior mean (after a 20 %
burn-in) gives ``ref`` and the reference test accuracy. The "Gibbs DA" row is a second,
independent, shorter Gibbs run (another seed), so that its time to accuracy is not
measured against itself.

Metrics, per method and N (all times exclude compilation, reported separately):

* it/s: kernel steps (sweeps for Gibbs, NUTS iterations for NUTS) per second;
* time to accuracy (TTA): the running posterior mean at draw k is the mean of draws
  [k/2, k] (a 50 % moving burn-in, the same rule for every method); its test accuracy is
  evaluated at ~150 log-spaced draws; TTA is the wall time (since sampling started,
  warm-up included) of the first checkpoint after which the accuracy stays within
  ``--tolerance`` (0.5) points of the reference accuracy to the end of the run;
* TTE: the same with the relative error ``||running mean - ref|| / ||ref||`` staying
  at or below ``--rel-tolerance`` (5 %), a stricter criterion than accuracy;
* rel. error ``||mean - ref|| / ||ref||`` of the final posterior mean (second half of the draws);
* TTA over seeds: each "from step 0" run is repeated with ``--tta-seeds`` seeds (5); the
  median TTA (a run that never reaches the accuracy counts as infinite) and its range are
  reported beside the table's single run;
* ESS/s: ``arviz.ess`` (bulk) of the second half of the draws, minimum over the 29
  coordinates, divided by the whole run's sampling time (warm-up included);
* ratios: SSGLD it/s ÷ BlackJAX SGLD it/s (medians of ``--repeats`` interleaved
  throughput runs of ``--throughput-steps`` steps each, same thinning, to damp machine
  noise), and Gibbs DA TTA ÷ SSGLD (SSGNHT) TTA, of the table's run and of the median over seeds.

Usage::

    PYTHONPATH=src python benchmarks/bayes_svm.py                 # N = 1e4, 1e5, 1e6
    PYTHONPATH=src python benchmarks/bayes_svm.py --quick         # N = 1e4, short runs
    PYTHONPATH=src python benchmarks/bayes_svm.py --sizes 10000,100000 --out results.json
    PYTHONPATH=src python benchmarks/bayes_svm.py --profile --sizes 10000,1000000  # per-step cost attribution
"""
from __future__ import annotations

import argparse
import inspect
import math
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the harness, also under runpy
from harness import (  # noqa: E402
    environment,
    finish_environment,
    interleaved,
    log,
    markdown_header,
    markdown_row,
    write_json,
)

N_FEATURES = 28


# ----------------------------------------------------------------------------- data
def make_data(n_train, n_test, seed):
    from regbayes.datasets import make_higgs_like

    X, y = make_higgs_like(n_train + n_test, n_features=N_FEATURES, random_state=seed, dtype=np.float32)
    source = "regbayes.datasets.make_higgs_like"
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:], source


def augment(X):
    return np.hstack([X, np.ones((X.shape[0], 1), X.dtype)])


def svm_data(X, y, C, margin, prior_scale, dtype=np.float32):
    import jax.numpy as jnp

    from regbayes.potentials import SVMData

    return SVMData(
        jnp.asarray(augment(X).astype(dtype)),
        jnp.asarray((2.0 * y - 1.0).astype(dtype)),
        jnp.asarray(C, dtype),
        jnp.asarray(margin, dtype),
        jnp.asarray(prior_scale, dtype),
    )


def sigma_ref(X, C, prior_scale):
    """(1/nu^2 + C N mean(x^2))^(-1/2) over the augmented design (as BayesianSVC)."""
    sq = (float(np.mean(np.square(X, dtype=np.float64))) * X.shape[1] + 1.0) / (X.shape[1] + 1)
    return 1.0 / math.sqrt(1.0 / prior_scale**2 + C * X.shape[0] * sq)


# ----------------------------------------------------------------------------- metrics
def checkpoints(n, count=150):
    idx = np.unique(np.round(np.geomspace(1, n, count)).astype(int))
    return idx  # draw counts k (1-based)


def running_means(draws, ks):
    """Mean of draws [floor(k/2), k) for each k in ``ks`` (50 % moving burn-in)."""
    csum = np.concatenate([np.zeros((1, draws.shape[1])), np.cumsum(draws, axis=0)])
    lo = ks // 2
    return (csum[ks] - csum[lo]) / (ks - lo)[:, None]


def accuracy(means, Xt, yt):
    """Test accuracy (in %) of the discriminant ``[x, 1] @ mean`` for each row of ``means``."""
    scores = Xt @ means[:, :-1].T.astype(Xt.dtype) + means[:, -1].astype(Xt.dtype)
    return 100.0 * np.mean((scores > 0) == (yt[:, None] == 1), axis=0)


def min_ess(draws):
    import arviz as az

    half = draws[len(draws) // 2 :]
    if len(half) < 8:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ess = az.ess(az.convert_to_dataset(half[None].astype(np.float64)))
    return float(np.nanmin(np.asarray(ess["x"])))


def _stay_time(ok, ks, wall):
    """Wall time of the first checkpoint after which ``ok`` holds to the end (None if never)."""
    bad = np.nonzero(~ok)[0]
    first_good = 0 if len(bad) == 0 else bad[-1] + 1
    return float(wall[ks[first_good] - 1]) if first_good < len(ks) else None


def evaluate(run, ref_mean, ref_acc, Xt, yt, tolerance, rel_tolerance):
    draws, wall = run["draws"], run["wall"]
    ks = checkpoints(len(draws))
    means = running_means(draws, ks)
    acc = accuracy(means, Xt, yt)
    ok = np.abs(acc - ref_acc) <= tolerance
    tta = _stay_time(ok, ks, wall)
    rel = np.linalg.norm(means - ref_mean, axis=1) / np.linalg.norm(ref_mean)
    tte = _stay_time(rel <= rel_tolerance, ks, wall)
    hit = np.nonzero(ok)[0]
    first_hit = float(wall[ks[hit[0]] - 1]) if len(hit) else None
    final_mean = draws[len(draws) // 2 :].mean(axis=0)
    ess = min_ess(draws)
    out = {
        "iterations": int(run["n_iter"]),
        "draws": int(len(draws)),
        "compile_s": float(run["compile_s"]),
        "sampling_s": float(run["sampling_s"]),
        "it_per_s": float(run["n_iter"] / run["sampling_s"]),
        "final_accuracy": float(accuracy(final_mean[None], Xt, yt)[0]),
        "tta_s": tta,
        "tta_at_first_draw": tta is not None and tta == float(wall[0]),
        "first_draw_s": float(wall[0]),
        "tte_s": tte,
        "first_hit_s": first_hit,
        "rel_error": float(np.linalg.norm(final_mean - ref_mean) / np.linalg.norm(ref_mean)),
        "min_ess": ess,
        "ess_per_s": float(ess / run["sampling_s"]),
        "curve": {"wall_s": [float(wall[k - 1]) for k in ks], "accuracy": [float(a) for a in acc], "rel_error": [float(r) for r in rel]},
    }
    out.update(run.get("extra", {}))
    return out


# ----------------------------------------------------------------------------- runners
def seed_spread(first, run_seed, seeds, ref_mean, ref_acc, Xt, yt, args):
    """TTA, TTE and final error of a from-step-0 run over ``1 + len(seeds)`` seeds.

    ``first`` is the table's evaluated run (its own seed); ``run_seed(seed)`` runs the same
    configuration with another seed. One seed's TTA scatters by about 2x (the first ~100
    steps decide it), so the Gibbs TTA ratios also use the median over seeds. A run that
    never stays within the tolerance, or diverges, counts as infinitely slow.
    """
    evals = [first]
    for seed in seeds:
        try:
            evals.append(evaluate(run_seed(seed), ref_mean, ref_acc, Xt, yt, args.tolerance, args.rel_tolerance))
        except FloatingPointError as err:  # regbayes' DivergenceError, or BlackJAX's
            evals.append({"tta_s": None, "tte_s": None, "rel_error": float("nan"), "failed": str(err)})
    as_time = lambda v: np.inf if v is None else v  # noqa: E731
    tta = np.array([as_time(e["tta_s"]) for e in evals])
    tte = np.array([as_time(e["tte_s"]) for e in evals])
    finite = lambda v: float(v) if np.isfinite(v) else None  # noqa: E731
    return {
        "n_seeds": len(evals),
        "tta_s": [e["tta_s"] for e in evals],
        "tte_s": [e["tte_s"] for e in evals],
        "rel_error": [float(e["rel_error"]) for e in evals],
        "median_tta_s": finite(np.median(tta)),
        "min_tta_s": finite(tta.min()),
        "max_tta_s": finite(tta.max()),
        "median_tte_s": finite(np.median(tte)),
        "median_rel_error": float(np.nanmedian([e["rel_error"] for e in evals])),
        "diverged": sum(1 for e in evals if e.get("failed")),
    }


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


def throughput_regbayes(sampler, X, data, batch_size, step_size, n_steps, thin, hyper):
    """A warm call of regbayes' driver (``regbayes.inference.sample``, what BayesianSVC.fit
    runs) with the default kernel and step; returns a function seed -> (wall s, CPU s)
    of the sampling alone (compile time, ~0 once cached, subtracted)."""
    import jax
    import jax.numpy as jnp

    from regbayes.rng import make_key  # the keys BayesianSVC uses (threefry)
    from regbayes.inference import sample
    from regbayes.potentials import build_potential
    from regbayes.samplers import ssgld, ssgnht

    potential = build_potential(batch_size)
    if sampler == "ssgnht":
        kernel = ssgnht(potential)
    else:  # "ssgld_plain": SSGLD without AdaGrad, the update blackjax.sgld makes (same step)
        kernel = ssgld(potential, None if sampler == "ssgld_plain" else "adagrad")
        sampler = "ssgld"
    h = step_size if step_size is not None else default_step(sampler, X, batch_size, hyper, n_warmup=0)
    init = jnp.zeros((1, data.X.shape[1]), data.X.dtype)
    extra = {}
    if "initial_scale" in inspect.signature(sample).parameters:
        # the starting scale BayesianSVC.fit hands the driver (whitened coordinates)
        from regbayes import BayesianSVC

        # these runs have no warm-up: the start BayesianSVC uses for n_warmup=0
        model = BayesianSVC(sampler=sampler, batch_size=batch_size, step_size=step_size, n_warmup=0, **hyper)
        scale = getattr(model, "_initial_scale", None)
        extra["initial_scale"] = scale(X, X.shape[0]) if scale else sigma_ref(X, hyper["C"], hyper["prior_scale"])

    def call(seed):
        cpu0 = time.process_time()
        result = sample(
            kernel, data, init, make_key(seed), n_warmup=0, n_draws=n_steps // thin, thin=thin, step_size=h, **extra
        )
        cpu = time.process_time() - cpu0 - result.compile_seconds
        return result.sampling_seconds, cpu

    return call


def throughput_blackjax(data, batch_size, step_size, n_steps, thin, key_impl="threefry2x32"):
    def call(seed):
        cpu0 = time.process_time()
        run = run_blackjax_sgld(
            data, n_warmup=0, n_draws=n_steps // thin, thin=thin, batch_size=batch_size, step_size=step_size, seed=seed, key_impl=key_impl
        )
        return run["sampling_s"], time.process_time() - cpu0 - run["compile_s"]

    return call


_BLACKJAX_PROGRAMS: dict = {}


def _chunks(total, n_chunks):
    for count in range(max(1, min(n_chunks, total)), 0, -1):
        if total % count == 0:
            return [total // count] * count
    return [total]


def run_blackjax_sgld(data, *, n_warmup, n_draws, thin, batch_size, step_size, seed, n_chunks=10, key_impl="threefry2x32"):
    """blackjax.sgld on regbayes' stochastic potential, timed like regbayes' driver.

    ``key_impl``: JAX's PRNG implementation of the key handed to BlackJAX (threefry, the
    default of both libraries; "rbg" draws faster)."""
    import blackjax
    import jax
    import jax.numpy as jnp

    from regbayes.potentials import build_potential

    potential = build_potential(batch_size)

    def grad_estimator(position, minibatch):
        key, data = minibatch  # the minibatch is drawn inside regbayes' potential from this key
        _, subgrad = potential.stochastic_value_and_subgrad(key, position, data)
        return -subgrad  # grad log p = -dU~

    sgld = blackjax.sgld(grad_estimator)

    def make_program(n_saved, thin_, save):
        def program(position, key, data, h):
            def inner(carry, _):
                position, key = carry
                key, sub = jax.random.split(key)
                key_batch, key_noise = jax.random.split(sub)
                position = sgld.step(key_noise, position, (key_batch, data), h)
                return (position, key), None

            def outer(carry, _):
                carry, _ = jax.lax.scan(inner, carry, None, length=thin_)
                return carry, (carry[0] if save else None)

            (position, key), saved = jax.lax.scan(outer, (position, key), None, length=n_saved)
            return position, key, saved

        return jax.jit(program)

    position = jnp.zeros(data.X.shape[1], data.X.dtype)
    key = jax.random.key(seed, impl=key_impl)
    h = jnp.asarray(step_size, data.X.dtype)
    cache, compile_s, elapsed = _BLACKJAX_PROGRAMS, 0.0, 0.0

    def compiled(n_saved, thin_, save):
        nonlocal compile_s
        cache_key = (batch_size, n_saved, thin_, save, data.X.shape, str(data.X.dtype), key_impl)
        if cache_key not in cache:
            start = time.perf_counter()
            cache[cache_key] = make_program(n_saved, thin_, save).lower(position, key, data, h).compile()
            compile_s += time.perf_counter() - start
        return cache[cache_key]

    for size in _chunks(n_warmup, max(1, n_chunks // 3)) if n_warmup else []:
        program = compiled(size, 1, False)
        start = time.perf_counter()
        position, key, _ = program(position, key, data, h)
        jax.block_until_ready(position)
        elapsed += time.perf_counter() - start
    parts, wall = [], []
    for size in _chunks(n_draws, n_chunks):
        program = compiled(size, thin, True)
        start = time.perf_counter()
        position, key, saved = program(position, key, data, h)
        jax.block_until_ready(saved)
        seconds = time.perf_counter() - start
        parts.append(np.asarray(saved))
        wall.append(elapsed + seconds * np.arange(1, size + 1) / size)
        elapsed += seconds
    draws = np.concatenate(parts).astype(np.float64)
    if not np.isfinite(draws).all():
        raise FloatingPointError("blackjax.sgld diverged")
    return {
        "draws": draws,
        "wall": np.concatenate(wall),
        "compile_s": compile_s,
        "sampling_s": elapsed,
        "n_iter": n_warmup + n_draws * thin,
        "extra": {"step_size": float(step_size)},
    }


def run_numpyro_nuts(data, *, n_warmup, n_samples, seed, init_step, limit_s, chunk=25):
    """NumPyro NUTS (functional API) on regbayes' full-data potential.

    Gives up (returns ``skipped`` with the projection) as soon as the chunks run so far
    project the whole run past ``limit_s`` seconds.
    """
    import jax
    import jax.numpy as jnp
    from numpyro.infer.hmc import hmc

    from regbayes.potentials.linear_svm import value_and_subgrad

    def potential_fn_gen(data):
        return lambda eta: value_and_subgrad(eta, data)[0]

    init_kernel, sample_kernel = hmc(potential_fn_gen=potential_fn_gen, algo="NUTS")
    start = time.perf_counter()
    state = init_kernel(
        jnp.zeros(data.X.shape[1], data.X.dtype),
        n_warmup,
        step_size=init_step,
        model_args=(data,),
        rng_key=jax.random.key(seed),
    )
    jax.block_until_ready(state.z)
    init_s = time.perf_counter() - start  # mostly tracing/compiling the init functions

    def program(state, data):
        def body(state, _):
            state = sample_kernel(state, model_args=(data,))
            return state, (state.z, state.num_steps, state.diverging)

        return jax.lax.scan(body, state, None, length=chunk)

    start = time.perf_counter()
    compiled = jax.jit(program).lower(state, data).compile()
    compile_s = init_s + time.perf_counter() - start

    total = n_warmup + n_samples
    n_chunks = math.ceil(total / chunk)
    zs, steps, div, wall, elapsed = [], [], [], [], 0.0
    for i in range(n_chunks):
        start = time.perf_counter()
        state, (z, num_steps, diverging) = compiled(state, data)
        jax.block_until_ready(z)
        seconds = time.perf_counter() - start
        projected = (elapsed + seconds) * n_chunks / (i + 1)
        if projected > limit_s:  # checked after every chunk: warm-up trees can grow
            return {"skipped": True, "projected_s": projected, "after_s": elapsed + seconds, "compile_s": compile_s}
        zs.append(np.asarray(z))
        steps.append(np.asarray(num_steps))
        div.append(np.asarray(diverging))
        wall.append(elapsed + seconds * np.arange(1, chunk + 1) / chunk)
        elapsed += seconds
    z = np.concatenate(zs)[:total].astype(np.float64)
    num_steps = np.concatenate(steps)[:total]
    wall = np.concatenate(wall)[:total]
    sampling_s = elapsed * total / (n_chunks * chunk)
    diverging = np.concatenate(div)[:total]
    return {
        "draws": z[n_warmup:],
        "wall": wall[n_warmup:],
        "compile_s": compile_s,
        "sampling_s": sampling_s,
        "n_iter": total,
        "extra": {
            "mean_leapfrog_steps": float(num_steps[n_warmup:].mean()),
            "gradient_evals_per_s": float(num_steps.sum() / sampling_s),
            "divergences_after_warmup": int(diverging[n_warmup:].sum()),
            "step_size": float(state.adapt_state.step_size),
        },
    }


def run_linear_svc(X, y, Xt, yt, hyper, ref_mean, ref_acc):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    C_svm = hyper["C"] * hyper["prior_scale"] ** 2 / hyper["margin"]
    model = LinearSVC(C=C_svm, loss="hinge", dual=True, fit_intercept=True, intercept_scaling=1.0, tol=1e-4, max_iter=1000)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(X, y)
    fit_s = time.perf_counter() - start
    eta = hyper["margin"] * np.concatenate([model.coef_.ravel(), model.intercept_]).astype(np.float64)
    return {
        "C_svm": C_svm,
        "fit_s": fit_s,
        "n_iter": int(np.max(model.n_iter_)),
        "converged": not any(issubclass(w.category, ConvergenceWarning) for w in caught),
        "final_accuracy": float(accuracy(eta[None], Xt, yt)[0]),
        "rel_error": float(np.linalg.norm(eta - ref_mean) / np.linalg.norm(ref_mean)),
        "accuracy_gap_points": float(accuracy(eta[None], Xt, yt)[0] - ref_acc),
    }


# ----------------------------------------------------------------------------- plan
def plan(n, quick, args):
    if quick:
        sg = dict(n_warmup=500, n_draws=1000, thin=20)
        sg0 = dict(n_warmup=0, n_draws=2000, thin=5)
        gibbs_ref = dict(max_sweeps=1500, budget_s=args.gibbs_ref_seconds or 30.0)
        gibbs_run = dict(max_sweeps=400, budget_s=args.gibbs_seconds or 10.0)
        nuts = dict(n_warmup=300, n_samples=300)
    else:
        sg = dict(n_warmup=1000, n_draws=2000, thin=50)
        sg0 = dict(n_warmup=0, n_draws=4000, thin=5)
        gibbs_ref = dict(max_sweeps=4000, budget_s=args.gibbs_ref_seconds or 180.0)
        gibbs_run = dict(max_sweeps=1000, budget_s=args.gibbs_seconds or 60.0)
        nuts = dict(n_warmup=500, n_samples=500)
    return sg, sg0, gibbs_ref, gibbs_run, nuts


def default_step(sampler, X, batch_size, hyper, n_warmup=None):
    """The step BayesianSVC picks by default for these data and warm-up length (falls back
    to the module constants if its private helper is not there)."""
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


def gibbs_sweep_seconds(X, y, hyper, seed):
    """Seconds per Gibbs sweep (a 3-sweep run; compile excluded)."""
    run = run_regbayes("gibbs", X, y, n_warmup=0, n_draws=3, thin=1, batch_size=100, seed=seed, hyper=hyper)
    return run["sampling_s"] / 3.0, run["compile_s"]


def fmt(x, spec=".3g", none="—"):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return none
    return format(x, spec)


def bench_size(n, args, hyper):
    sg, sg0, gibbs_ref_plan, gibbs_run_plan, nuts_plan = plan(n, args.quick, args)
    X, y, Xt, yt, source = make_data(n, args.n_test, args.seed)
    res = {"n_train": n, "n_test": int(len(yt)), "data": source, "methods": {}, "notes": []}
    t_size = time.perf_counter()

    # --- Gibbs: sweep time, long reference run, independent shorter run
    sweep_s, _ = gibbs_sweep_seconds(X, y, hyper, args.seed + 101)
    ref_sweeps = int(max(50, min(gibbs_ref_plan["max_sweeps"], gibbs_ref_plan["budget_s"] / sweep_s)))
    log(f"N={n}: Gibbs {sweep_s:.3g} s/sweep; reference run of {ref_sweeps} sweeps")
    ref_run = run_regbayes("gibbs", X, y, n_warmup=0, n_draws=ref_sweeps, thin=1, batch_size=100, seed=args.seed + 1, hyper=hyper)
    burn = max(5, ref_sweeps // 5)
    ref_mean = ref_run["draws"][burn:].mean(axis=0)
    ref_acc = float(accuracy(ref_mean[None], Xt, yt)[0])
    res["reference"] = {
        "sweeps": ref_sweeps,
        "burn_in": burn,
        "sampling_s": ref_run["sampling_s"],
        "compile_s": ref_run["compile_s"],
        "test_accuracy": ref_acc,
        "norm": float(np.linalg.norm(ref_mean)),
        "min_ess": min_ess(ref_run["draws"][burn:]) if ref_sweeps - burn >= 16 else float("nan"),
        "mean": ref_mean.tolist(),
    }
    # MC error of the reference mean relative to its norm (half-vs-half split)
    kept = ref_run["draws"][burn:]
    h = len(kept) // 2
    res["reference"]["split_half_rel_diff"] = float(np.linalg.norm(kept[:h].mean(0) - kept[h:].mean(0)) / np.linalg.norm(ref_mean))
    log(f"N={n}: reference accuracy {ref_acc:.2f} % ({ref_run['sampling_s']:.1f} s)")

    run_sweeps = int(max(20, min(gibbs_run_plan["max_sweeps"], gibbs_run_plan["budget_s"] / sweep_s)))
    gibbs = run_regbayes("gibbs", X, y, n_warmup=0, n_draws=run_sweeps, thin=1, batch_size=100, seed=args.seed + 2, hyper=hyper)
    res["methods"]["gibbs"] = evaluate(gibbs, ref_mean, ref_acc, Xt, yt, args.tolerance, args.rel_tolerance)
    log(f"N={n}: Gibbs DA run, {run_sweeps} sweeps")

    # --- stochastic subgradient samplers, same steps and batch size. Two runs each:
    # "defaults" (BayesianSVC's 1000 warm-up steps, whitening adaptation) for the
    # posterior metrics, and "from step 0" (no warm-up, a draw every few steps) that
    # resolves the time to accuracy, which the warm-up would otherwise hide.
    bs = min(args.batch_size, n)
    step_override = {}
    for sampler in ("ssgld", "ssgnht"):
        for suffix, cfg in (("", sg), ("_step0", sg0)):
            key = sampler + suffix
            step = step_override.get(key)
            for attempt in range(args.divergence_retries + 1):
                try:
                    run = run_regbayes(sampler, X, y, batch_size=bs, seed=args.seed + 3, hyper=hyper, step_size=step, **cfg)
                    break
                except FloatingPointError as err:  # regbayes' DivergenceError
                    default = default_step(sampler, X, bs, hyper, n_warmup=cfg["n_warmup"])
                    old = step or default
                    step = old / 3.0
                    res["notes"].append(
                        f"{LABELS[key]} diverged at N={n} with step_size={'default ' if attempt == 0 and old == default else ''}{old:.3g} "
                        f"({err}); " + (f"retried with step_size={step:.3g}" if attempt < args.divergence_retries else "giving up")
                    )
                    log(f"N={n}: {key} diverged: {err}")
            else:
                res["methods"][key] = {"failed": res["notes"][-1]}
                continue
            if step is not None:
                step_override[key] = step
            res["methods"][key] = evaluate(run, ref_mean, ref_acc, Xt, yt, args.tolerance, args.rel_tolerance)
            res["methods"][key]["step_size"] = "default" if step is None else step
            if suffix == "_step0" and args.tta_seeds > 1:
                res["methods"][key]["seeds"] = seed_spread(
                    res["methods"][key],
                    lambda seed: run_regbayes(sampler, X, y, batch_size=bs, seed=seed, hyper=hyper, step_size=step, **cfg),  # noqa: B023
                    range(args.seed + 4, args.seed + 3 + args.tta_seeds), ref_mean, ref_acc, Xt, yt, args,
                )
            log(f"N={n}: {key} {res['methods'][key]['it_per_s']:.4g} it/s")

    data32 = svm_data(X, y, hyper["C"], hyper["margin"], hyper["prior_scale"])
    bj_step = 0.5 * (args.blackjax_relative_step * sigma_ref(X, hyper["C"], hyper["prior_scale"])) ** 2
    for suffix, cfg in (("", sg), ("_step0", sg0)):
        run = run_blackjax_sgld(data32, batch_size=bs, step_size=bj_step, seed=args.seed + 3, **cfg)
        res["methods"]["blackjax_sgld" + suffix] = evaluate(run, ref_mean, ref_acc, Xt, yt, args.tolerance, args.rel_tolerance)
        if suffix == "_step0" and args.tta_seeds > 1:
            res["methods"]["blackjax_sgld" + suffix]["seeds"] = seed_spread(
                res["methods"]["blackjax_sgld" + suffix],
                lambda seed: run_blackjax_sgld(data32, batch_size=bs, step_size=bj_step, seed=seed, **cfg),  # noqa: B023
                range(args.seed + 4, args.seed + 3 + args.tta_seeds), ref_mean, ref_acc, Xt, yt, args,
            )
        log(f"N={n}: blackjax sgld{suffix} {res['methods']['blackjax_sgld' + suffix]['it_per_s']:.4g} it/s")

    # --- interleaved throughput runs: the compiled programs of the driver / of the
    # BlackJAX scan, called repeatedly (warm), wall and process CPU time per call
    t_steps, t_thin = args.throughput_steps, 10
    runners = {}
    for sampler in ("ssgld", "ssgnht"):
        if not res["methods"][sampler].get("failed"):
            runners[sampler] = throughput_regbayes(sampler, X, data32, bs, step_override.get(sampler + "_step0"), t_steps, t_thin, hyper)
    if not res["methods"]["ssgld"].get("failed"):
        runners["ssgld_plain"] = throughput_regbayes("ssgld_plain", X, data32, bs, step_override.get("ssgld_step0"), t_steps, t_thin, hyper)
    runners["blackjax_sgld"] = throughput_blackjax(data32, bs, bj_step, t_steps, t_thin)
    runners["blackjax_sgld_rbg"] = throughput_blackjax(data32, bs, bj_step, t_steps, t_thin, key_impl="rbg")
    # the same pair at BayesianSVC's default thinning for SSGLD (what a default fit runs)
    from regbayes.models.bayes_svm import DEFAULT_THIN

    d_thin = DEFAULT_THIN["ssgld"]
    if not res["methods"]["ssgld"].get("failed"):
        runners["ssgld_default_thin"] = throughput_regbayes("ssgld", X, data32, bs, step_override.get("ssgld_step0"), t_steps, d_thin, hyper)
    runners["blackjax_sgld_default_thin"] = throughput_blackjax(data32, bs, bj_step, t_steps, d_thin)
    names = ("ssgld", "ssgld_plain", "ssgnht", "blackjax_sgld", "blackjax_sgld_rbg", "ssgld_default_thin", "blackjax_sgld_default_thin")
    # the first round warms the compilation caches; each call returns (wall s, CPU s)
    timings = interleaved(
        {name: (lambda r, run=run: run(args.seed + 10 + r)) for name, run in runners.items()},
        args.repeats,
        errors=(FloatingPointError,),
        on_error=lambda name, err: res["notes"].append(f"throughput run of {name} diverged at N={n} ({err}); no throughput for it"),
    )
    thr = {k: {"wall": [t_steps / w for w, _ in timings.get(k, [])], "cpu": [t_steps / c for _, c in timings.get(k, [])]} for k in names}
    res["throughput"] = {
        k: {
            "wall_it_per_s": v["wall"],
            "cpu_it_per_s": v["cpu"],
            "median_it_per_s": float(np.median(v["wall"])) if v["wall"] else None,
            "best_it_per_s": float(np.max(v["wall"])) if v["wall"] else None,
            "median_it_per_cpu_s": float(np.median(v["cpu"])) if v["cpu"] else None,
        }
        for k, v in thr.items()
    }
    res["throughput"]["steps_per_run"] = t_steps
    res["throughput"]["thin"] = t_thin
    res["throughput"]["default_thin"] = d_thin
    log(f"N={n}: throughput " + ", ".join(f"{k} {fmt(res['throughput'][k]['median_it_per_s'], '.4g')}" for k in thr))

    # --- NUTS
    if args.skip_nuts:
        res["notes"].append("NUTS skipped (--skip-nuts)")
    else:
        init_step = 0.5 * sigma_ref(X, hyper["C"], hyper["prior_scale"])
        out = run_numpyro_nuts(data32, seed=args.seed + 4, init_step=init_step, limit_s=args.nuts_limit, **nuts_plan)
        if out.get("skipped"):
            res["methods"]["numpyro_nuts"] = {"skipped": True, "projected_s": out["projected_s"], "compile_s": out["compile_s"]}
            res["notes"].append(
                f"NUTS skipped at N={n}: after {out['after_s']:.0f} s its chunks so far project {out['projected_s']:.0f} s for "
                f"{sum(nuts_plan.values())} iterations, over the {args.nuts_limit:.0f} s limit"
            )
            log(f"N={n}: NUTS skipped (projected {out['projected_s']:.0f} s)")
        else:
            res["methods"]["numpyro_nuts"] = evaluate(out, ref_mean, ref_acc, Xt, yt, args.tolerance, args.rel_tolerance)
            log(f"N={n}: NUTS {res['methods']['numpyro_nuts']['it_per_s']:.4g} it/s")

    # --- LinearSVC anchor
    if args.skip_linearsvc:
        res["notes"].append("LinearSVC skipped (--skip-linearsvc)")
    else:
        res["linear_svc"] = run_linear_svc(X, y, Xt, yt, hyper, ref_mean, ref_acc)
        log(f"N={n}: LinearSVC {res['linear_svc']['fit_s']:.3g} s")

    # --- ratios
    m = res["methods"]
    thr = res["throughput"]
    ok = not m["ssgld"].get("failed")
    ratios = {
        "ssgld_over_blackjax_it_per_s": thr["ssgld"]["median_it_per_s"] / thr["blackjax_sgld"]["median_it_per_s"] if ok else None,
        "ssgld_plain_over_blackjax_it_per_s": (
            thr["ssgld_plain"]["median_it_per_s"] / thr["blackjax_sgld"]["median_it_per_s"]
            if ok and thr.get("ssgld_plain", {}).get("median_it_per_s")
            else None
        ),
        "ssgld_over_blackjax_rbg_it_per_s": thr["ssgld"]["median_it_per_s"] / thr["blackjax_sgld_rbg"]["median_it_per_s"] if ok else None,
        "ssgld_over_blackjax_it_per_s_best": thr["ssgld"]["best_it_per_s"] / thr["blackjax_sgld"]["best_it_per_s"] if ok else None,
        "ssgld_over_blackjax_it_per_cpu_s": thr["ssgld"]["median_it_per_cpu_s"] / thr["blackjax_sgld"]["median_it_per_cpu_s"] if ok else None,
        "ssgld_over_blackjax_it_per_s_main_run": m["ssgld"]["it_per_s"] / m["blackjax_sgld"]["it_per_s"] if ok else None,
        "ssgld_over_blackjax_it_per_s_default_thin": (
            thr["ssgld_default_thin"]["median_it_per_s"] / thr["blackjax_sgld_default_thin"]["median_it_per_s"]
            if ok and thr.get("ssgld_default_thin", {}).get("median_it_per_s")
            else None
        ),
    }
    g = m["gibbs"]["tta_s"]
    for s in ("ssgld", "ssgnht", "blackjax_sgld"):
        for suffix in ("", "_step0"):
            t = m.get(s + suffix, {}).get("tta_s")
            ratios[f"gibbs_tta_over_{s}{suffix}_tta"] = (g / t) if (g is not None and t) else None
        median = m.get(s + "_step0", {}).get("seeds", {}).get("median_tta_s")
        ratios[f"gibbs_tta_over_{s}_step0_median_tta"] = (g / median) if (g is not None and median) else None
        # headline: the run that resolves the early time course (from step 0)
        ratios[f"gibbs_tta_over_{s}_tta_best"] = ratios[f"gibbs_tta_over_{s}_step0_tta"] or ratios[f"gibbs_tta_over_{s}_tta"]
    res["ratios"] = ratios
    res["seconds"] = time.perf_counter() - t_size
    return res


# ----------------------------------------------------------------------------- profile
def profile_step_cost(n, repeats, batch_size=100, n_saved=1000, thin=10):
    """Where does a regbayes SSGLD step spend its time relative to blackjax.sgld?

    The same potential and batch size throughout; each variant is one jitted program of
    ``n_saved * thin`` steps, called ``repeats`` times interleaved; time per
    step: wall time (best, median) and process CPU time (median; it counts every thread,
    so XLA's second thread inflates it on 2 cores).
    Variants: BlackJAX with threefry and with rbg keys; regbayes' SSGLD kernel (AdaGrad,
    dense whitening T) in a plain scan with its per-step StepInfo dropped, carried or
    stacked; the same vmapped over one chain; the same without the minibatch potential
    value; and the public driver ``regbayes.inference.sample``.
    """
    import functools

    import blackjax
    import jax
    import jax.numpy as jnp

    from regbayes.inference import sample
    from regbayes.potentials import build_potential
    from regbayes.samplers import ssgld
    from regbayes.samplers.base import StepInfo
    from regbayes.schedules import as_schedule

    X, y, _, _, _ = make_data(n, 10, 0)
    data = svm_data(X, y, 1.0, 1.0, 1.0)
    dim = data.X.shape[1]
    potential = build_potential(batch_size)
    steps = n_saved * thin
    schedule = as_schedule(0.5)
    progs = {}

    sgld = blackjax.sgld(lambda pos, mb: -potential.stochastic_value_and_subgrad(mb[0], pos, mb[1])[1])

    def bj(pos, key, data):
        def inner(c, _):
            p, k = c
            k, sub = jax.random.split(k)
            kb, kn = jax.random.split(sub)
            return (sgld.step(kn, p, (kb, data), jnp.float32(1e-5)), k), None

        def outer(c, _):
            c, _ = jax.lax.scan(inner, c, None, length=thin)
            return c, c[0]

        return jax.lax.scan(outer, (pos, key), None, length=n_saved)

    for impl in ("threefry2x32", "rbg"):
        key0 = jax.random.key(1, impl=impl)
        c = jax.jit(bj).lower(jnp.zeros(dim), key0, data).compile()
        progs[f"blackjax.sgld, {impl} keys"] = functools.partial(lambda c, k: c(jnp.zeros(dim), k, data), c, key0)

    kernel = ssgld(potential, "adagrad")
    state = kernel.init(jax.random.key(0), jnp.zeros(dim), data)
    if getattr(kernel, "adapt", None) is not None:
        state = kernel.adapt(state, 0.01 * jnp.eye(dim))

    def plain(mode, kern):
        def prog(st, key, data):
            def inner(c, t):
                s, k, info_c, acc = c
                k, sub = jax.random.split(k)
                s, info = kern.step(sub, s, data, schedule(t))
                if mode == "carry":
                    return (s, k, info, acc + info.acceptance), None
                return (s, k, info_c, acc), (info if mode == "stack" else None)

            def outer(c, t0):
                s, k = c
                info0 = StepInfo(jnp.zeros(()), jnp.zeros(()), jnp.zeros((), jnp.int32))
                (s, k, info, acc), infos = jax.lax.scan(inner, (s, k, info0, jnp.zeros(())), t0 + jnp.arange(thin))
                if mode == "stack":
                    info = jax.tree_util.tree_map(lambda x: x[-1], infos)
                return (s, k), (s.position, info if mode != "none" else None)

            return jax.lax.scan(outer, (st, key), jnp.arange(n_saved) * thin * 1.0)

        return prog

    for mode in ("none", "carry", "stack"):
        c = jax.jit(plain(mode, kernel)).lower(state, jax.random.key(1), data).compile()
        progs[f"regbayes SSGLD kernel, StepInfo {mode}"] = functools.partial(lambda c: c(state, jax.random.key(1), data), c)
    state1 = jax.tree_util.tree_map(lambda x: x[None], state)
    keys1 = jax.random.split(jax.random.key(1), 1)
    c_vmap = jax.jit(jax.vmap(plain("carry", kernel), in_axes=(0, 0, None))).lower(state1, keys1, data).compile()
    progs["  ... StepInfo carry, vmap over 1 chain"] = lambda: c_vmap(state1, keys1, data)

    def step_no_value(key, st, data, h):
        st, info = kernel.step(key, st, data, h)
        return st, info._replace(potential=jnp.full((), jnp.nan, info.potential.dtype))

    c_nov = jax.jit(plain("carry", kernel._replace(step=step_no_value))).lower(state, jax.random.key(1), data).compile()
    progs["  ... StepInfo carry, no minibatch U value"] = lambda: c_nov(state, jax.random.key(1), data)
    init = jnp.zeros((1, dim))
    run_driver = lambda: sample(kernel, data, init, jax.random.key(0), n_warmup=0, n_draws=n_saved, thin=thin, step_size=0.5).positions  # noqa: E731
    run_driver()  # warm the compilation cache
    progs["regbayes.inference.sample (the driver)"] = run_driver
    rbg = jax.random.key(0, impl="rbg")
    run_driver_rbg = lambda: sample(kernel, data, init, rbg, n_warmup=0, n_draws=n_saved, thin=thin, step_size=0.5).positions  # noqa: E731
    run_driver_rbg()
    progs["  ... with rbg keys"] = run_driver_rbg

    def wall_and_cpu(f):
        def call(_round):
            start, cpu0 = time.perf_counter(), time.process_time()
            jax.block_until_ready(f())
            return time.perf_counter() - start, time.process_time() - cpu0

        return call

    timings = interleaved({k: wall_and_cpu(f) for k, f in progs.items()}, repeats, warmup=0)
    wall = {k: [w for w, _ in v] for k, v in timings.items()}
    cpu = {k: [c for _, c in v] for k, v in timings.items()}
    lines = [
        f"Per-step time, N = {n:,}, batch {batch_size}, {dim} coordinates, {steps:,} steps per call, "
        f"{repeats} interleaved repeats (wall: best and median; process CPU: median, all threads)\n",
        markdown_header(["variant", "wall best µs/step", "wall median µs/step", "CPU median µs/step"]),
    ]
    for k in progs:
        lines.append(
            markdown_row([k, f"{1e6 * min(wall[k]) / steps:.1f}", f"{1e6 * np.median(wall[k]) / steps:.1f}", f"{1e6 * np.median(cpu[k]) / steps:.1f}"])
        )
    return "\n".join(lines)


# ----------------------------------------------------------------------------- report
COLUMNS = ["method", "it/s", "compile s", "steps", "run s", "TTA s (±0.5 pt)", "TTE s (rel. err ≤ 5 %)", "final acc %",
           "rel. error", "min ESS", "ESS/s"]
LABELS = {
    "ssgld": "regbayes SSGLD (AdaGrad)",
    "ssgld_step0": "regbayes SSGLD, from step 0",
    "ssgnht": "regbayes SSGNHT",
    "ssgnht_step0": "regbayes SSGNHT, from step 0",
    "gibbs": "regbayes Gibbs DA",
    "blackjax_sgld": "BlackJAX SGLD (const. step)",
    "blackjax_sgld_step0": "BlackJAX SGLD, from step 0",
    "numpyro_nuts": "NumPyro NUTS",
}


def markdown(results):
    lines = []
    for res in results["sizes"]:
        n, ref = res["n_train"], res["reference"]
        lines.append(
            f"\n### N = {n:,} (test {res['n_test']:,}); reference: Gibbs DA, {ref['sweeps']} sweeps "
            f"({ref['sampling_s']:.0f} s), posterior-mean test accuracy {ref['test_accuracy']:.2f} %\n"
        )
        lines.append(markdown_header(COLUMNS))
        for key, label in LABELS.items():
            r = res["methods"].get(key)
            if r is None:
                continue
            if r.get("failed"):
                lines.append(f"| {label} | diverged (see notes) | | | | | | | | | |")
                continue
            if r.get("skipped"):
                lines.append(f"| {label} | skipped (projected {r['projected_s']:.0f} s) | {r['compile_s']:.1f} | | | | | | | | |")
                continue
            tta = fmt(r["tta_s"], ".3g", "not reached")
            if r.get("tta_at_first_draw"):
                tta = "≤ " + tta  # reached by the first saved draw: an upper bound
            step = r.get("step_size")
            if isinstance(step, float) and key.startswith(("ssgld", "ssgnht")):
                label = f"{label} (step {step:.3g})"
            lines.append(markdown_row([
                label, f"{r['it_per_s']:.4g}", f"{r['compile_s']:.1f}", f"{r['iterations']:,}", f"{r['sampling_s']:.2f}", tta,
                fmt(r["tte_s"], ".3g", "not reached"), f"{r['final_accuracy']:.2f}", f"{r['rel_error']:.2e}", fmt(r["min_ess"], ".0f"),
                fmt(r["ess_per_s"], ".3g"),
            ]))
        svc = res.get("linear_svc")
        if svc:
            lines.append(
                f"| scikit-learn LinearSVC (C_svm={svc['C_svm']:g}, MAP{'' if svc['converged'] else ', not converged'}) | — | — | {svc['n_iter']} epochs | {svc['fit_s']:.2f} | — | — | "
                f"{svc['final_accuracy']:.2f} | {svc['rel_error']:.2e} | — | — |"
            )
        thr, ra = res["throughput"], res["ratios"]
        lines.append("")
        lines.append(
            f"Throughput (median of {len(thr['blackjax_sgld']['wall_it_per_s'])} interleaved warm runs of {thr['steps_per_run']:,} steps, thin {thr['thin']}): "
            f"SSGLD {fmt(thr['ssgld']['median_it_per_s'], '.4g')} it/s, SSGNHT {fmt(thr['ssgnht']['median_it_per_s'], '.4g')} it/s, "
            f"BlackJAX SGLD {fmt(thr['blackjax_sgld']['median_it_per_s'], '.4g')} it/s (threefry keys, its default), "
            f"{fmt(thr['blackjax_sgld_rbg']['median_it_per_s'], '.4g')} it/s with rbg keys.  "
            f"**SSGLD ÷ BlackJAX it/s = {fmt(ra['ssgld_over_blackjax_it_per_s'], '.2f')}** (both with threefry keys, their default; "
            f"÷ BlackJAX with rbg keys: {fmt(ra['ssgld_over_blackjax_rbg_it_per_s'], '.2f')}; medians of wall time; per CPU-second: "
            f"{fmt(ra['ssgld_over_blackjax_it_per_cpu_s'], '.2f')}; best runs: "
            f"{fmt(ra['ssgld_over_blackjax_it_per_s_best'], '.2f')}; main runs: {fmt(ra['ssgld_over_blackjax_it_per_s_main_run'], '.2f')}).  "
            f"SSGLD without AdaGrad (the update blackjax.sgld makes): {fmt(thr.get('ssgld_plain', {}).get('median_it_per_s'), '.4g')} it/s, "
            f"÷ BlackJAX = {fmt(ra.get('ssgld_plain_over_blackjax_it_per_s'), '.2f')}.  "
            f"At BayesianSVC's default thin {thr.get('default_thin', '—')}: SSGLD {fmt(thr.get('ssgld_default_thin', {}).get('median_it_per_s'), '.4g')} it/s, "
            f"BlackJAX SGLD {fmt(thr.get('blackjax_sgld_default_thin', {}).get('median_it_per_s'), '.4g')} it/s, "
            f"**SSGLD ÷ BlackJAX it/s = {fmt(ra.get('ssgld_over_blackjax_it_per_s_default_thin'), '.2f')}**.  "
            f"**Gibbs TTA ÷ SSGLD TTA = {fmt(ra['gibbs_tta_over_ssgld_tta_best'], '.3g')}**, "
            f"Gibbs TTA ÷ SSGNHT TTA = {fmt(ra['gibbs_tta_over_ssgnht_tta_best'], '.3g')}, "
            f"Gibbs TTA ÷ BlackJAX SGLD TTA = {fmt(ra['gibbs_tta_over_blackjax_sgld_tta_best'], '.3g')} "
            f"(from-step-0 runs where they reached it)."
        )
        spread = {k: res["methods"].get(k + "_step0", {}).get("seeds") for k in ("ssgld", "ssgnht", "blackjax_sgld")}
        if any(spread.values()):
            names = {"ssgld": "SSGLD", "ssgnht": "SSGNHT", "blackjax_sgld": "BlackJAX SGLD"}
            parts = [
                f"{names[k]} {fmt(v['median_tta_s'], '.3g', 'not reached')} s ({fmt(v['min_tta_s'], '.3g', '—')}–"
                f"{fmt(v['max_tta_s'], '.3g', 'not reached')}; median rel. error {v['median_rel_error']:.1%})"
                for k, v in spread.items() if v
            ]
            n_seeds = max(v["n_seeds"] for v in spread.values() if v)
            ratio_parts = [f"{names[k]} {fmt(ra.get(f'gibbs_tta_over_{k}_step0_median_tta'), '.3g')}" for k, v in spread.items() if v]
            lines.append("")
            lines.append(
                f"From step 0 over {n_seeds} seeds, TTA median (min–max): " + ", ".join(parts) + ".  "
                "**Gibbs TTA ÷ median TTA: " + ", ".join(ratio_parts) + "**."
            )
        for note in res["notes"]:
            lines.append(f"\nNote: {note}")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated training sizes N")
    p.add_argument("--quick", action="store_true", help="N = 10^4 only, short runs")
    p.add_argument("--out", default=None, help="write JSON results here")
    p.add_argument("--n-test", type=int, default=100_000, help="held-out test rows")
    p.add_argument("--batch-size", type=int, default=100, help="minibatch size of SSGLD, SSGNHT and BlackJAX SGLD")
    p.add_argument("--tolerance", type=float, default=0.5, help="accuracy tolerance (points) for time to accuracy")
    p.add_argument("--rel-tolerance", type=float, default=0.05, help="relative-error threshold for time to error (TTE)")
    p.add_argument("--gibbs-ref-seconds", type=float, default=None, help="wall-time budget of the reference Gibbs run")
    p.add_argument("--gibbs-seconds", type=float, default=None, help="wall-time budget of the Gibbs DA method run")
    p.add_argument("--nuts-limit", type=float, default=600.0, help="skip NUTS when its projected run exceeds this (s)")
    p.add_argument("--skip-nuts", action="store_true")
    p.add_argument("--skip-linearsvc", action="store_true")
    p.add_argument("--blackjax-relative-step", type=float, default=0.5, help="BlackJAX step eps = (r sigma_ref)^2 / 2")
    p.add_argument("--repeats", type=int, default=5, help="interleaved throughput repeats")
    p.add_argument("--divergence-retries", type=int, default=3, help="on divergence, retry a regbayes sampler with step/3")
    p.add_argument("--throughput-steps", type=int, default=20_000)
    p.add_argument("--tta-seeds", type=int, default=5, help="seeds of each from-step-0 run (median TTA); 1: the table's run only")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--profile", action="store_true", help="only the per-step cost attribution (SSGLD vs BlackJAX) at each size")
    p.add_argument("--profile-repeats", type=int, default=21)
    args = p.parse_args(argv)

    if args.profile:
        sizes = [10_000] if args.quick else [int(float(s)) for s in args.sizes.split(",")]
        for n in sizes:
            print(profile_step_cost(n, args.profile_repeats), "\n", flush=True)
        return

    sizes = [10_000] if args.quick else [int(float(s)) for s in args.sizes.split(",")]
    if args.quick:
        args.throughput_steps = min(args.throughput_steps, 10_000)
    hyper = {"C": 1.0, "margin": 1.0, "prior_scale": 1.0}
    results = {
        "config": {**vars(args), "sizes": sizes, "hyper": hyper},
        "environment": environment(("blackjax", "numpyro", "sklearn", "arviz", "numpy")),
        "sizes": [],
    }
    start = time.perf_counter()
    for n in sizes:
        results["sizes"].append(bench_size(n, args, hyper))
        if args.out:  # partial results survive an interrupted run
            write_json(args.out, results)
    results["total_seconds"] = time.perf_counter() - start
    finish_environment(results["environment"])
    table = markdown(results)
    print(table)
    print(f"\nTotal {results['total_seconds']:.0f} s.")
    if args.out:
        write_json(args.out, results)


if __name__ == "__main__":
    main()
