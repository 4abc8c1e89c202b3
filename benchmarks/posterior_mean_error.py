"""Posterior-mean error of BayesianSVC's default samplers against a long exact run.

Standardised breast-cancer data (``load_breast_cancer_standardized``, 70/30 split, 30
features + intercept). The reference is Gibbs DA (exact), 4 chains x 20,000 draws by
default, with its own seed. Each sampler is fitted with its defaults, one chain, for
several seeds, and the relative error ``||mean - ref|| / ||ref||`` of the posterior mean (weights and intercept)
is reported, next to the error that 1000 independent posterior draws would have,
``sqrt(tr Sigma / 1000) / ||ref||`` with Sigma the reference draws' covariance.

    PYTHONPATH=src .venv/bin/python benchmarks/posterior_mean_error.py              # ~3 min on 2 cores
    PYTHONPATH=src .venv/bin/python benchmarks/posterior_mean_error.py --seeds 8 --samplers ssgld
"""
from __future__ import annotations

import argparse
import os
import platform
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the harness, also under runpy
from harness import environment, markdown_header, markdown_row, timed, write_json  # noqa: E402

from regbayes import BayesianSVC  # noqa: E402
from regbayes.datasets import load_breast_cancer_standardized  # noqa: E402


def flat_mean(model):
    return np.r_[model.coef_.ravel(), np.ravel(model.intercept_)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samplers", default="ssgld,ssgnht,gibbs", help="comma-separated BayesianSVC samplers")
    p.add_argument("--seeds", type=int, default=4, help="fits per sampler (random_state 0, 1, ...)")
    p.add_argument("--reference-draws", type=int, default=20000, help="Gibbs draws per chain of the reference (4 chains)")
    p.add_argument("--out", help="write the results as JSON here")
    args = p.parse_args(argv)

    X, _, y, _ = load_breast_cancer_standardized(test_size=0.3, random_state=0)
    reference, reference_s = timed(BayesianSVC(sampler="gibbs", n_chains=4, n_draws=args.reference_draws, random_state=12345).fit, X, y)
    ref = flat_mean(reference)
    draws = np.concatenate([reference.coef_samples_, reference.intercept_samples_[:, None]], axis=1)
    iid_floor = float(np.sqrt(np.trace(np.cov(draws.T)) / 1000) / np.linalg.norm(ref))
    results = {
        "reference": {"sampler": "gibbs", "chains": 4, "draws": args.reference_draws, "seconds": reference_s},
        "iid_1000_draws_error": iid_floor,
        "machine": platform.platform(),
        "environment": environment(("sklearn", "numpy")),
        "samplers": {},
    }
    print(f"reference: Gibbs DA 4 x {args.reference_draws} draws; 1000 independent draws would be {100 * iid_floor:.1f}% away\n")
    print(markdown_header(["sampler (defaults, one chain)", ("error per seed", "l"), "mean", "s per fit"]))
    for sampler in args.samplers.split(","):
        errors, seconds = [], []
        for seed in range(args.seeds):
            model, fit_s = timed(BayesianSVC(sampler=sampler, random_state=seed).fit, X, y)
            seconds.append(fit_s)
            errors.append(float(np.linalg.norm(flat_mean(model) - ref) / np.linalg.norm(ref)))
        results["samplers"][sampler] = {"errors": errors, "mean": float(np.mean(errors)), "seconds": seconds}
        per_seed = ", ".join(f"{100 * e:.1f}" for e in errors)
        print(markdown_row([sampler, f"{per_seed} %", f"{100 * np.mean(errors):.1f} %", f"{np.mean(seconds):.1f}"]))
    if args.out:
        write_json(args.out, results, indent=2)


if __name__ == "__main__":
    main()
