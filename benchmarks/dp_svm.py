"""Dirichlet-process mixtures of SVMs: M2DPM, InfiniteSVC (gibbs, ssgnht), DPMeansSVC and
scikit-learn, side by side in one run (papers 001 and 000, section 5.3).

Three parts:

1. **Settings I/II** (paper 001, Table 1): ``make_dp_mixture_svm(setting)`` data sets
   (Setting I: n = 1000; Setting II: n = 10000; d = 10), 80/20 split, every method with its
   defaults (no cross-validation): test accuracy and fit time (wall, compilation included;
   InfiniteSVC's compile time is also shown apart). Anchors: scikit-learn's LinearSVC,
   RBF SVC and LogisticRegression. Ratios: each method's time over M2DPM's.
2. **Time per iteration against n**: Setting II's generator with n rows (d = 22); the
   median seconds of an InfiniteSVC iteration (z sweep and eta step apart, compilation
   excluded) and of an M2DPM iteration (fit time / iterations); the per-row cost
   ``seconds / n`` shows how close to linear the growth is.
3. **eta step, gibbs against ssgnht, at equal accuracy**: an IJCNN1-shaped stand-in
   (Setting II generator, d = 22, n = 50,000 by default, 80/20 split); both samplers run
   the same iterations (z sweeps identical in kind); test accuracy, total eta-step time,
   and the ratio gibbs / ssgnht (paper 000, Table 2: 8.31 / 0.17 min = 49x on Protein,
   9.13 / 1.17 = 7.8x on IJCNN1). Target: >= 10x at equal accuracy.

Usage::

    PYTHONPATH=src python benchmarks/dp_svm.py --quick --out quick.json
    PYTHONPATH=src python benchmarks/dp_svm.py --out full.json
    PYTHONPATH=src python benchmarks/dp_svm.py --parts eta --eta-n 50000
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling modules, also under runpy
from competitors.sklearn_linear_svc import anchor_classifiers  # noqa: E402
from harness import environment, finish_environment, log, markdown_header, timed, write_json  # noqa: E402


def split(X, y, seed, train=0.8):
    perm = np.random.default_rng(seed + 1).permutation(len(y))
    cut = int(train * len(y))
    return X[perm[:cut]], X[perm[cut:]], y[perm[:cut]], y[perm[cut:]]


def methods(n_iter, n_warmup):
    """name -> factory(seed): regbayes' mixtures, then scikit-learn's anchors."""
    from regbayes import M2DPM, DPMeansSVC, InfiniteSVC

    return {
        "M2DPM": lambda seed: M2DPM(random_state=seed),
        "InfiniteSVC gibbs": lambda seed: InfiniteSVC(sampler="gibbs", n_iter=n_iter, n_warmup=n_warmup, random_state=seed),
        "InfiniteSVC ssgnht": lambda seed: InfiniteSVC(sampler="ssgnht", n_iter=n_iter, n_warmup=n_warmup, random_state=seed),
        "DPMeansSVC": lambda seed: DPMeansSVC(random_state=seed),
        **anchor_classifiers(),
    }


def fit_timed(model, X_train, y_train, X_test, y_test):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, seconds = timed(model.fit, X_train, y_train)
    record = {"fit_seconds": seconds, "accuracy": float(np.mean(model.predict(X_test) == y_test))}
    trace = getattr(model, "trace_", None)
    if isinstance(trace, dict) and "eta_seconds" in trace:
        record.update(eta_median=float(np.median(trace["eta_seconds"])), z_median=float(np.median(trace["z_seconds"])))
        record.update(compile_seconds=trace["compile_seconds"], eta_seconds=float(np.sum(trace["eta_seconds"])),
                      z_seconds=float(np.sum(trace["z_seconds"])), sampling_seconds=trace["sampling_seconds"])
    if hasattr(model, "n_components_"):
        record["n_components"] = int(model.n_components_)
    return record


def part_settings(args):
    from regbayes.datasets import make_dp_mixture_svm

    results = {}
    for setting, n_sets in (("I", args.sets_I), ("II", args.sets_II)):
        table = {}
        for seed in range(n_sets):
            X, y = make_dp_mixture_svm(setting, random_state=seed)
            X_train, X_test, y_train, y_test = split(X, y, seed)
            for name, make in methods(args.iterations, args.iterations // 2).items():
                table.setdefault(name, []).append(fit_timed(make(seed), X_train, y_train, X_test, y_test))
                log(f"setting {setting} seed {seed} {name}: {table[name][-1]}")
        results[setting] = table
    print("\n### Settings I / II (mean (std) over data sets; fit time includes compilation)\n")
    print(markdown_header(["setting", ("method", "l"), "accuracy %", "fit s", "compile s", "time / M2DPM time", "K"]))
    for setting, table in results.items():
        ref = np.mean([r["fit_seconds"] for r in table["M2DPM"]]) if "M2DPM" in table else None
        for name, runs in table.items():
            acc = 100 * np.array([r["accuracy"] for r in runs])
            sec = np.array([r["fit_seconds"] for r in runs])
            comp = np.array([r.get("compile_seconds", np.nan) for r in runs])
            k = np.array([r.get("n_components", np.nan) for r in runs], float)
            ratio = f"{sec.mean() / ref:.1f}" if ref else "-"
            print(f"| {setting} | {name} | {acc.mean():.1f} ({acc.std():.1f}) | {sec.mean():.2f} ({sec.std():.2f}) | "
                  f"{np.nanmean(comp) if np.isfinite(comp).any() else float('nan'):.1f} | {ratio} | "
                  f"{np.nanmean(k) if np.isfinite(k).any() else float('nan'):.1f} |")
    return results


def part_scaling(args):
    from regbayes import M2DPM, InfiniteSVC
    from regbayes.datasets import make_dp_mixture_svm
    rows = []
    for n in args.sizes:
        X, y = make_dp_mixture_svm("II", n_samples=n, n_features=22, random_state=0)
        row = {"n": n}
        for sampler in ("gibbs", "ssgnht"):
            clf = InfiniteSVC(sampler=sampler, n_iter=args.scaling_iterations, n_warmup=args.scaling_iterations - 1,
                              random_state=0).fit(X, y)
            z, eta = clf.trace_["z_seconds"][2:], clf.trace_["eta_seconds"][2:]  # first two: warm caches
            row[sampler] = {"z_median": float(np.median(z)), "eta_median": float(np.median(eta)),
                            "iteration_median": float(np.median(z + eta)), "K": int(np.median(clf.n_components_trace_))}
        m, seconds = timed(M2DPM(random_state=0).fit, X, y)
        row["m2dpm"] = {"seconds": seconds, "iterations": int(m.n_iter_), "per_iteration": seconds / max(int(m.n_iter_), 1)}
        rows.append(row)
        log(f"n={n}: {row}")
    print("\n### Time per iteration against n (median, compilation excluded; Setting II generator, d = 22)\n")
    print(markdown_header([("n", "r"), "gibbs z s", "gibbs eta s", "ssgnht z s", "ssgnht eta s", "gibbs it s / n (µs)",
                           "ssgnht it s / n (µs)", "M2DPM it s", "K"]))
    for r in rows:
        g, s = r["gibbs"], r["ssgnht"]
        m = f"{r['m2dpm']['per_iteration']:.4f}" if "m2dpm" in r else "-"
        print(f"| {r['n']:,} | {g['z_median']:.4f} | {g['eta_median']:.4f} | {s['z_median']:.4f} | {s['eta_median']:.4f} | "
              f"{1e6 * g['iteration_median'] / r['n']:.2f} | {1e6 * s['iteration_median'] / r['n']:.2f} | {m} | {g['K']} |")
    return rows


def part_eta(args):
    from sklearn.svm import LinearSVC

    from regbayes import InfiniteSVC
    from regbayes.datasets import make_dp_mixture_svm

    X, y = make_dp_mixture_svm("II", n_samples=args.eta_n, n_features=22, random_state=args.seed)
    X_train, X_test, y_train, y_test = split(X, y, args.seed)
    out = {"n_train": len(y_train), "n_test": len(y_test), "runs": {}}
    lin = LinearSVC().fit(X_train, y_train)
    out["LinearSVC"] = float(lin.score(X_test, y_test))
    configs = [("gibbs", {})] + [("ssgnht", {"n_inner": k}) for k in args.n_inner]
    for sampler, extra in configs:
        label = sampler + (f" (n_inner={extra['n_inner']})" if extra else "")
        # untimed warm-up fit: compiles and runs every program once (the first execution of a
        # compiled program in a process carries a one-off cost of 0.4-0.7 s here)
        InfiniteSVC(sampler=sampler, n_iter=3, n_warmup=1, random_state=args.seed, **extra).fit(X_train, y_train)
        runs = []
        for r in range(args.repeats):
            clf = InfiniteSVC(sampler=sampler, n_iter=args.iterations, n_warmup=args.iterations // 2,
                              random_state=args.seed + r, **extra)
            runs.append(fit_timed(clf, X_train, y_train, X_test, y_test))
            log(f"{label} repeat {r}: {runs[-1]}")
        out["runs"][label] = runs
    print(f"\n### eta step at equal accuracy (IJCNN1-shaped stand-in: {len(y_train):,} train / {len(y_test):,} test, "
          f"22 features, {args.iterations} iterations, mean (std) over {args.repeats} seeds)\n")
    print(markdown_header(["sampler", "accuracy %", "eta s (all iterations)", "eta ms / iteration (median)", "z s",
                           "total s (z + eta)", "compile s", "gibbs eta / this eta (total)", "(median)"]))
    g_med = np.mean([r["eta_median"] for r in out["runs"]["gibbs"]])
    g_eta = np.mean([r["eta_seconds"] for r in out["runs"]["gibbs"]])
    for label, runs in out["runs"].items():
        acc = 100 * np.array([r["accuracy"] for r in runs])
        eta = np.array([r["eta_seconds"] for r in runs])
        z = np.array([r["z_seconds"] for r in runs])
        comp = np.array([r["compile_seconds"] for r in runs])
        med = np.mean([r["eta_median"] for r in runs])
        print(f"| {label} | {acc.mean():.2f} ({acc.std():.2f}) | {eta.mean():.2f} ({eta.std():.2f}) | {1e3 * med:.1f} | "
              f"{z.mean():.2f} | {(z + eta).mean():.2f} | {comp.mean():.1f} | {g_eta / eta.mean():.1f}x | {g_med / med:.1f}x |")
    print(f"| LinearSVC (anchor) | {100 * out['LinearSVC']:.2f} | - | - | - | - | - | - | - |")
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="small sizes, one data set per setting")
    p.add_argument("--parts", default="settings,scaling,eta")
    p.add_argument("--iterations", type=int, default=100, help="InfiniteSVC iterations (half warm-up)")
    p.add_argument("--sets-I", type=int, default=5)
    p.add_argument("--sets-II", type=int, default=2)
    p.add_argument("--sizes", default="2500,10000,40000")
    p.add_argument("--scaling-iterations", type=int, default=8)
    p.add_argument("--eta-n", type=int, default=50000)
    p.add_argument("--n-inner", default="20,5")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out")
    args = p.parse_args()
    if args.quick:
        args.iterations, args.sets_I, args.sets_II = 40, 1, 1
        args.sizes, args.eta_n, args.repeats = "1000,4000", 10000, 1
    args.sizes = [int(s) for s in str(args.sizes).split(",")]
    args.n_inner = [int(s) for s in str(args.n_inner).split(",")]
    env = environment(("sklearn", "numba", "numpy"))
    load = env["load_average_at_start"]
    print(f"# dp_svm benchmark: {env['cpu']}, {env['cpu_count']} CPUs, "
          f"load average at start {load[0] if load else float('nan'):.1f}", flush=True)
    results = {"args": vars(args), "environment": env, "load_start": load}
    start = time.perf_counter()
    for part, fn in (("eta", part_eta), ("scaling", part_scaling), ("settings", part_settings)):
        if part in args.parts.split(","):
            results[part] = fn(args)
    results["seconds"] = time.perf_counter() - start
    results["load_end"] = finish_environment(env)["load_average_at_end"]
    load = results["load_end"]
    print(f"\nTotal {results['seconds']:.0f} s; load average at end {load[0] if load else float('nan'):.1f}.")
    if args.out:
        write_json(args.out, results)


if __name__ == "__main__":
    main()
