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
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling modules, also under runpy
from competitors.blackjax_sgld import run_blackjax_sgld, throughput_blackjax  # noqa: E402
from competitors.numpyro_nuts import run_numpyro_nuts  # noqa: E402
from competitors.sklearn_linear_svc import run_linear_svc  # noqa: E402
from harness import environment, finish_environment, interleaved, log, write_json  # noqa: E402
from svm_runners import default_step, default_thin  # noqa: E402
from metrics import accuracy, evaluate, min_ess, seed_spread  # noqa: E402
from svm_data import make_data, sigma_ref, svm_data  # noqa: E402
from svm_profile import profile_step_cost  # noqa: E402
from svm_report import LABELS, fmt, markdown  # noqa: E402
from svm_runners import gibbs_sweep_seconds, run_regbayes, throughput_regbayes  # noqa: E402


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
    d_thin = default_thin("ssgld")
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
