"""BayesianSVC's stochastic samplers with default settings against a long exact Gibbs run,
on ten public data sets that load offline (``robust_data.py``; issue 21, deliverable 4),
and the ESS of a default fit on HIGGS-shaped data at N = 10^4 to 10^6.

Per data set: the reference is ``BayesianSVC(sampler="gibbs")``, 4 chains x
``--reference-draws`` draws (own seed); each of SSGLD and SSGNHT is fitted as the issue
did, ``BayesianSVC(sampler=s, n_draws=5000, n_chains=4)`` with every other setting at its
default. ``diagnostics.compare_to_reference`` gives per coordinate the error of the mean in
reference posterior sds (``max |z|``) and the sd ratio (median and range); the min-ESS
fraction is the smallest bulk ESS over all draws; "warns" lists the warnings of the fit.

    PYTHONPATH=src .venv/bin/python benchmarks/robust_defaults.py --out robust.json
    PYTHONPATH=src .venv/bin/python benchmarks/robust_defaults.py --datasets spam7 --higgs-sizes ''
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the harness, also under runpy
import robust_data  # noqa: E402
from harness import close_run, environment, log, markdown_table, timed  # noqa: E402

from regbayes import BayesianSVC  # noqa: E402
from regbayes.diagnostics import compare_to_reference, effective_sample_size, posterior_draws  # noqa: E402


def fit_recording(estimator, X, y):
    """``(estimator, seconds, warning class names)``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator, seconds = timed(estimator.fit, X, y)
    names = sorted({w.category.__name__ for w in caught if not issubclass(w.category, DeprecationWarning)})
    return estimator, seconds, names


def reference_draws(name, X, y, n_draws, cache):
    path = os.path.join(cache, f"{name}_{n_draws}.npz") if cache else None
    if path and os.path.exists(path):
        return np.load(path)["draws"], float(np.load(path)["seconds"])
    ref, seconds, _ = fit_recording(BayesianSVC(sampler="gibbs", n_chains=4, n_draws=n_draws, random_state=12345), X, y)
    draws = posterior_draws(ref)
    if path:
        os.makedirs(cache, exist_ok=True)
        np.savez(path, draws=draws, seconds=seconds)
    return draws, seconds


def min_ess_fraction(draws):
    return float(effective_sample_size(draws, warn=False).pooled.min() / (draws.shape[0] * draws.shape[1]))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", default=",".join(robust_data.DATASETS))
    p.add_argument("--samplers", default="ssgld,ssgnht")
    p.add_argument("--n-draws", type=int, default=5000)
    p.add_argument("--n-chains", type=int, default=4)
    p.add_argument("--reference-draws", type=int, default=10000, help="Gibbs draws per chain (4 chains)")
    p.add_argument("--reference-cache", default=None, help="folder to keep the Gibbs references in")
    p.add_argument("--higgs-sizes", default="10000,100000,1000000", help="N of the default-fit ESS rows ('' for none)")
    p.add_argument("--higgs-reference", type=int, default=10000,
                   help="N of a HIGGS-shaped set compared to Gibbs like the real ones, with BlackJAX's SGLD step too (0: none)")
    p.add_argument("--out")
    args = p.parse_args(argv)
    start = time.perf_counter()
    results = {"environment": environment(("sklearn", "numpy", "scipy")), "datasets": {}, "higgs": {}}
    rows = []
    names = list(filter(None, args.datasets.split(",")))
    if args.higgs_reference:
        names.append(f"higgs-like-{args.higgs_reference}")
    for name in names:
        if name.startswith("higgs-like-"):
            from regbayes.datasets import make_higgs_like

            X, y = make_higgs_like(int(name.rsplit("-", 1)[1]), random_state=0, dtype=np.float64)
        else:
            X, y = robust_data.load(name)
        ref, ref_s = reference_draws(name, X, y, args.reference_draws, args.reference_cache)
        ref_ess = min_ess_fraction(ref) * ref.shape[0] * ref.shape[1]
        entry = {"n": X.shape[0], "d": X.shape[1], "max_kurtosis": robust_data.max_kurtosis(X),
                 "reference_seconds": ref_s, "reference_min_ess": ref_ess, "samplers": {}}
        samplers = args.samplers.split(",") + (["blackjax-step"] if name.startswith("higgs-like-") else [])
        for sampler in samplers:
            est = BayesianSVC(sampler=sampler, n_draws=args.n_draws, n_chains=args.n_chains, random_state=0)
            if sampler == "blackjax-step":  # BENCHMARKS.md's BlackJAX SGLD: constant eps = (0.5 sigma_ref)^2 / 2, thin 100
                from regbayes.potentials import sigma_ref

                ref_scale = sigma_ref(X, 1.0, 1.0)
                est.set_params(sampler="ssgld", schedule="constant", n_warmup=0, thin=100,
                               step_size=0.5 * ref_scale / np.sqrt(ref_scale))  # T0 = sqrt(nu sigma_ref) I
            est, seconds, warned = fit_recording(est, X, y)
            draws = posterior_draws(est)
            c = compare_to_reference(draws, ref)
            r = {"max_abs_z": float(np.max(np.abs(c.mean_error))), "median_sd_ratio": float(np.median(c.sd_ratio)),
                 "sd_ratio_range": [float(c.sd_ratio.min()), float(c.sd_ratio.max())],
                 "min_ess_fraction": min_ess_fraction(draws), "seconds": seconds, "warnings": warned,
                 "mean_error": c.mean_error, "sd_ratio": c.sd_ratio, "thin": est.thin_, "step_size": est.step_size_}
            entry["samplers"][sampler] = r
            log(name, sampler, f"max|z| {r['max_abs_z']:.2f}", f"sd ratio {r['median_sd_ratio']:.2f}", warned)
            rows.append([name, f"{X.shape[0]} x {X.shape[1]}", f"{entry['max_kurtosis']:.0f}", sampler,
                         f"{r['max_abs_z']:.2f}", f"{r['median_sd_ratio']:.2f} ({r['sd_ratio_range'][0]:.2f}–{r['sd_ratio_range'][1]:.2f})",
                         f"{100 * r['min_ess_fraction']:.1f}", f"{seconds:.0f}", ", ".join(warned) or "—"])
        results["datasets"][name] = entry
    report = markdown_table(rows, ["data set", "N x d", "max kurtosis", "sampler", "max |z|", "sd ratio median (range)",
                                   "min-ESS %", "fit s", "warnings"])
    higgs_rows = []
    for n in filter(None, args.higgs_sizes.split(",")):
        from regbayes.datasets import make_higgs_like

        X, y = make_higgs_like(int(n), random_state=0)
        for sampler in args.samplers.split(","):
            est, seconds, warned = fit_recording(BayesianSVC(sampler=sampler, random_state=0), X, y)
            frac = min_ess_fraction(posterior_draws(est))
            results["higgs"][f"{sampler}_{n}"] = {"min_ess_fraction": frac, "seconds": seconds, "warnings": warned}
            log("higgs", n, sampler, f"min-ESS {100 * frac:.1f} %", warned)
            higgs_rows.append([n, sampler, f"{100 * frac:.1f}", f"{seconds:.1f}", ", ".join(warned) or "—"])
    if higgs_rows:
        report += "\n\n" + markdown_table(higgs_rows, ["N", "sampler (defaults, 1 chain x 1000 draws)", "min-ESS %",
                                                       "fit s", "warnings"])
    close_run(results, start, report, args.out)


if __name__ == "__main__":
    main()
