"""iLSVM (InfiniteLatentSVC) against IBP+SVM (IBPFeatures then LinearSVC) at the same
truncation, and iLSVM's fit time against the number of rows (paper 002, Algorithm 3).

Data: rows from the IBP linear-Gaussian model with four latent features of unit-scale
loadings and one of scale 0.3 whose value is the binary label (the problem of
``tests/models/test_ilsvm.py``), D = 50 inputs, noise 0.3.

1. **Same truncation**: N = 2,000 rows, K = 50; both run the same number of outer
   iterations (``tol=0``), so the ratio is the cost of an iteration of Algorithm 3 with
   its dual step against one without (plus LinearSVC). Interleaved repeats, compilation
   excluded (a warm-up round). Target: iLSVM <= 1.5x IBP+SVM.
2. **Fit time against N**: N = 2,000 / 10,000 / 50,000 rows, the same settings; the
   dual step (``regbayes.core.duals``) and the rest (mean-field phases, initialisation,
   driver) apart, per row and outer iteration. Target: at most linear growth.

Usage::

    PYTHONPATH=src python benchmarks/latent_svm_scaling.py --out latent.json
    PYTHONPATH=src python benchmarks/latent_svm_scaling.py --C 100 --sizes 2000 10000 --repeats 1
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling modules, also under runpy
from harness import describe, environment, finish_environment, interleaved, log, markdown_table, write_json  # noqa: E402


def latent_label_data(n, d=50, big=4, noise=0.3, small_scale=0.3, seed=0):
    rng = np.random.default_rng(seed)
    Z = (rng.uniform(size=(n, big + 1)) < 0.5).astype(float)
    W = np.hstack([rng.normal(size=(d, big)), small_scale * rng.normal(size=(d, 1))])
    X = Z @ W.T + noise * rng.normal(size=(n, d))
    return X, Z[:, big].astype(int)


def fitters(truncation, n_iter, C):
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC

    from regbayes import IBPFeatures, InfiniteLatentSVC

    return {
        "iLSVM": lambda: InfiniteLatentSVC(C=C, truncation=truncation, n_iter=n_iter, tol=0.0, random_state=0),
        "IBP+SVM": lambda: make_pipeline(IBPFeatures(truncation=truncation, n_iter=n_iter, tol=0.0, random_state=0),
                                         LinearSVC()),
    }


def same_truncation(n, truncation, n_iter, C, repeats):
    X, y = latent_label_data(2 * n)
    Xtr, ytr, Xte, yte = X[:n], y[:n], X[n:], y[n:]
    make = fitters(truncation, n_iter, C)
    fitted = {}

    def call(name):
        def run(_):
            fitted[name] = make[name]().fit(Xtr, ytr)
        return run

    samples = interleaved({name: call(name) for name in make}, repeats)
    rows = []
    for name, values in samples.items():
        rows.append({"method": name, **{f"fit s ({k})": round(v, 3) for k, v in describe(values).items()},
                     "test accuracy": float(fitted[name].score(Xte, yte))})
    ratio = np.median(samples["iLSVM"]) / np.median(samples["IBP+SVM"])
    return rows, float(ratio)


def against_n(sizes, truncation, n_iter, C):
    from regbayes import InfiniteLatentSVC

    rows = []
    for n in sizes:
        X, y = latent_label_data(n)
        InfiniteLatentSVC(C=C, truncation=truncation, n_iter=1, tol=0.0, random_state=0).fit(X, y)  # compile this shape
        start = time.perf_counter()
        clf = InfiniteLatentSVC(C=C, truncation=truncation, n_iter=n_iter, tol=0.0, random_state=0).fit(X, y)
        seconds = time.perf_counter() - start
        dual_passes = int(np.sum(clf.trace_["dual_iterations"]))
        dual = float(np.sum(clf.trace_["dual_seconds"]))
        rest = seconds - dual
        rows.append({"N": n, "fit s": round(seconds, 3), "dual step s": round(dual, 3), "dual passes": dual_passes,
                     "rest s": round(rest, 3), "rest us / row / iteration": round(1e6 * rest / clf.n_iter_ / n, 2),
                     "fit us / row / iteration": round(1e6 * seconds / clf.n_iter_ / n, 2),
                     "inner iterations": int(np.sum(clf.trace_["inner_iterations"]))})
        log(f"N={n}: {seconds:.2f} s")
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000, 50000])
    parser.add_argument("--truncation", type=int, default=50)
    parser.add_argument("--n-iter", type=int, default=10)
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    env = environment(("numpy", "jax", "sklearn", "numba"))
    log("same truncation")
    rows, ratio = same_truncation(args.n, args.truncation, args.n_iter, args.C, args.repeats)
    print(f"## iLSVM against IBP+SVM, N = {args.n}, K = {args.truncation}, {args.n_iter} outer iterations\n")
    print(markdown_table(rows, list(rows[0])))
    print(f"\nratio iLSVM / IBP+SVM (median fit time): {ratio:.2f}\n")
    log("against N")
    scaling = against_n(args.sizes, args.truncation, args.n_iter, args.C)
    print(f"## iLSVM fit time against N, K = {args.truncation}, {args.n_iter} outer iterations\n")
    print(markdown_table(scaling, list(scaling[0])))
    finish_environment(env)
    print(f"\nload average: start {env['load_average_at_start']}, end {env['load_average_at_end']}")
    if args.out:
        write_json(args.out, {"environment": env, "same_truncation": rows, "ratio": ratio, "against_n": scaling})


if __name__ == "__main__":
    main()
