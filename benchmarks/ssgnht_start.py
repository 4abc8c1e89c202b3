"""SSGNHT from step 0: time to accuracy with r_0 ~ N(0, I) (eq. 14) against a start at rest.

Target 1 of the foundation issue asks SSGNHT to reach the Gibbs reference accuracy (within
0.5 points) 100x sooner than Gibbs DA at N = 10^6. This script isolates one cause of its
slow and seed-dependent start. On the Higgs-shaped data of ``bayes_svm.py`` (same
generator, seed, TTA rule and helpers: ``svm_data``, ``svm_runners``, ``metrics``),
``BayesianSVC(sampler="ssgnht", n_warmup=0)`` runs 20,000 steps from theta = 0, a draw
every 5 steps, over several seeds, once with the kernel's ``initial_momentum="normal"``
(eq. 14) and once with ``"zero"`` (what ``BayesianSVC`` uses without warm-up). Everything
else (default step, whitening start, minibatches of 100) is the same. The reference is a
short Gibbs DA run (mean after a third of its sweeps); Gibbs's TTA is that of its own run.

    PYTHONPATH=src .venv/bin/python benchmarks/ssgnht_start.py            # N = 1e6, ~3 min on 2 cores
    PYTHONPATH=src .venv/bin/python benchmarks/ssgnht_start.py --n 100000 --seeds 8
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling modules, also under runpy
from harness import markdown_header, markdown_row  # noqa: E402
from library_internals import ssgnht_svc_with_start  # noqa: E402
from metrics import accuracy, evaluate  # noqa: E402
from svm_data import make_data  # noqa: E402
from svm_runners import run_regbayes  # noqa: E402

HYPER = dict(C=1.0, margin=1.0, prior_scale=1.0)
# BayesianSVC(sampler="ssgnht") whose kernel starts with eq. 14's momentum draw / at rest
Eq14StartSVC = ssgnht_svc_with_start("normal")
RestStartSVC = ssgnht_svc_with_start("zero")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1_000_000, help="training rows")
    p.add_argument("--n-test", type=int, default=100_000)
    p.add_argument("--seeds", type=int, default=5, help="seeds per start")
    p.add_argument("--gibbs-sweeps", type=int, default=12, help="Gibbs DA sweeps (reference and its TTA)")
    p.add_argument("--seed", type=int, default=0, help="data seed")
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore", category=UserWarning)
    X, y, Xt, yt, source = make_data(args.n, args.n_test, args.seed)
    gibbs = run_regbayes("gibbs", X, y, n_warmup=0, n_draws=args.gibbs_sweeps, thin=1, batch_size=100,
                               seed=args.seed + 1, hyper=HYPER)
    ref = gibbs["draws"][args.gibbs_sweeps // 3:].mean(axis=0)
    ref_acc = float(accuracy(ref[None], Xt, yt)[0])
    gibbs_tta = evaluate(gibbs, ref, ref_acc, Xt, yt, 0.5, 0.05)["tta_s"]
    print(f"{source}, N = {args.n:,}; reference accuracy {ref_acc:.2f} % ({args.gibbs_sweeps} Gibbs sweeps); "
          f"Gibbs TTA {gibbs_tta:.3g} s\n")
    print(markdown_header(["SSGNHT start", "seed", "TTA ms", "steps to TTA", "rel. error"]))
    summary = {}
    for label, estimator in (("r_0 ~ N(0, I) (eq. 14)", Eq14StartSVC), ("r_0 = 0", RestStartSVC)):
        rows = []
        for seed in range(args.seeds):
            run = run_regbayes("ssgnht", X, y, n_warmup=0, n_draws=4000, thin=5, batch_size=100, seed=seed,
                                     hyper=HYPER, estimator=estimator)
            ev = evaluate(run, ref, ref_acc, Xt, yt, 0.5, 0.05)
            tta = np.inf if ev["tta_s"] is None else ev["tta_s"]
            rows.append((tta, tta * ev["it_per_s"], ev["rel_error"]))
            print(markdown_row([label, seed, f"{1e3 * tta:.2f}", f"{tta * ev['it_per_s']:.0f}", f"{ev['rel_error']:.1%}"]), flush=True)
        summary[label] = np.array(rows)
    print("\n" + markdown_header(["SSGNHT start", "median TTA ms (range)", "median steps (range)", "median rel. error",
                                  "Gibbs TTA ÷ median TTA"]))
    for label, a in summary.items():
        tta, steps = a[:, 0], a[:, 1]
        print(f"| {label} | {1e3 * np.median(tta):.2f} ({1e3 * tta.min():.2f}–{1e3 * tta.max():.2f}) | "
              f"{np.median(steps):.0f} ({steps.min():.0f}–{steps.max():.0f}) | {np.median(a[:, 2]):.1%} | "
              f"{gibbs_tta / np.median(tta):.0f} |")


if __name__ == "__main__":
    main()
