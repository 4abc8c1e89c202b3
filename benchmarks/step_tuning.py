"""SHMC's and SRWM's default steps tuned in warm-up, against the former fixed defaults.

``BayesianSVC(sampler=S)`` with its defaults (warm-up tunes the step by dual averaging
toward acceptance 0.65 for SHMC, 0.234 for SRWM; ``regbayes.inference.step_size_tuning``)
against the same fit with the former default step given (0.3; 2.38 / sqrt(P)), which
warm-up keeps. Data: wine (standardised, 3 classes, Crammer–Singer), the same with
``--copies`` noisy copies (noise 0.1 sd per column), and breast cancer (binary). Reference
posteriors: a tuned SHMC run of 4 x ``--reference-draws`` draws with another seed for the
3-class sets (the library has no exact Crammer–Singer Gibbs sampler; SHMC with its MH test
is exact), Gibbs DA (2 x 4,000) for breast cancer. Per fit: the step, the mean acceptance
over the draws, the largest posterior-mean error in reference sds (``max |z|``), the sd
ratios, the smallest bulk ESS; then the sampling seconds and ESS per second, medians over
seeds 1-3 after a compiling fit, and their ratio tuned / fixed.

    PYTHONPATH=src .venv/bin/python benchmarks/step_tuning.py        # about 4 min on 2 cores
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import markdown_header, markdown_row  # noqa: E402

N_CHAINS, N_DRAWS = 4, 1000
TARGETS = {"shmc": 0.65, "srwm": 0.234}


def data_sets(copies: int):
    from sklearn.datasets import load_breast_cancer, load_wine
    from sklearn.preprocessing import StandardScaler

    X, y = load_wine(return_X_y=True)
    rng = np.random.default_rng(0)
    noisy = np.vstack([X] + [X + 0.1 * X.std(0) * rng.standard_normal(X.shape) for _ in range(copies - 1)])
    Xb, yb = load_breast_cancer(return_X_y=True)
    return {
        "wine, 3 classes": (StandardScaler().fit_transform(X), y),
        f"wine x {copies}, 3 classes": (StandardScaler().fit_transform(noisy), np.tile(y, copies)),
        "breast cancer": (StandardScaler().fit_transform(Xb), yb),
    }


def min_ess(draws) -> float:
    import arviz as az

    d = np.asarray(draws)
    return float(np.min(az.ess(az.convert_to_dataset(d.reshape(d.shape[0], d.shape[1], -1))).to_array().values))


def fit(sampler, X, y, seed, step_size=None, **kwargs):
    from regbayes import BayesianSVC

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fixed steps' rejection warnings are part of what is measured
        return BayesianSVC(sampler=sampler, random_state=seed, step_size=step_size, **kwargs).fit(X, y)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--copies", type=int, default=10, help="noisy copies of wine in the larger 3-class set")
    p.add_argument("--reference-draws", type=int, default=10_000, help="draws per chain of the 3-class references")
    args = p.parse_args(argv)

    print(markdown_header(["data", "sampler", "step", "h", "acceptance", "max |z|", "sd ratio (range)", "min ESS"]))
    timings = []
    for name, (X, y) in data_sets(args.copies).items():
        multiclass = len(np.unique(y)) > 2
        if multiclass:
            ref = fit("shmc", X, y, 1, n_draws=args.reference_draws, n_chains=N_CHAINS)
        else:
            ref = fit("gibbs", X, y, 1, n_draws=4000, n_chains=2)
        reference = ref.coef_draws_.reshape(-1, *ref.coef_draws_.shape[2:])
        n_params = int(np.prod(ref.coef_draws_.shape[2:])) + (len(np.unique(y)) if multiclass else 1)
        for sampler, former in (("shmc", 0.3), ("srwm", 2.38 / math.sqrt(n_params))):
            if sampler == "srwm" and name == "wine, 3 classes":
                continue
            for label, step in (("tuned", None), ("former default", former)):
                m = fit(sampler, X, y, 0, step, n_draws=N_DRAWS, n_chains=N_CHAINS)
                d = m.coef_draws_.reshape(-1, *m.coef_draws_.shape[2:])
                z = np.abs(d.mean(0) - reference.mean(0)) / reference.std(0)
                ratio = d.std(0) / reference.std(0)
                row = [name, sampler, label, f"{m.step_size_:.3f}", f"{m._sample_result.stats['acceptance'].mean():.3f}",
                       f"{z.max():.3f}", f"{np.median(ratio):.3f} ({ratio.min():.3f}–{ratio.max():.3f})",
                       f"{min_ess(m.coef_draws_):.0f}"]
                print(markdown_row(row), flush=True)
            if name != f"wine x {args.copies}, 3 classes":
                timings.append((name, sampler, former, X, y))

    print()
    print(markdown_header(["data", "sampler", "sampling s tuned / former", "ESS/s tuned / former", "ratio"]))
    for name, sampler, former, X, y in timings:
        cells = {}
        for label, step in (("tuned", None), ("former", former)):
            per_seed = []
            for seed in range(4):
                m = fit(sampler, X, y, seed, step, n_draws=N_DRAWS, n_chains=N_CHAINS)
                if seed:  # seed 0 compiles
                    seconds = m._sample_result.sampling_seconds
                    per_seed.append((seconds, min_ess(m.coef_draws_) / seconds))
            cells[label] = np.median(np.array(per_seed), axis=0)
        (s_t, e_t), (s_f, e_f) = cells["tuned"], cells["former"]
        print(markdown_row([name, sampler, f"{s_t:.3f} / {s_f:.3f}", f"{e_t:.0f} / {e_f:.0f}", f"{e_t / e_f:.2f}"]), flush=True)


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"\n{time.perf_counter() - start:.0f} s")
