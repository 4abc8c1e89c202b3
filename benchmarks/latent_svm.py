"""Paper 002's latent-feature models against what a user would pick instead, in one run.

Two parts:

1. **Pairs** (fit time and test score, interleaved repeats, medians): each estimator with
   its defaults against its decoupled baseline at the same truncation and a plain
   scikit-learn model, on the data of the experiments (the real sets when the ``data``
   extra is installed, the named stand-ins otherwise):

   * ``InfiniteLatentSVC`` | ``make_pipeline(IBPFeatures(), LinearSVC())`` | ``LinearSVC``
     (multi-view digits; accuracy). Target: iLSVM's fit at most 1.5x IBP+SVM's.
   * ``MultiTaskInfiniteLatentSVC`` | ``joint=False`` (MT-IBP+SVM) | binary-relevance
     ``LinearSVC`` (Yeast; macro-F1).
   * ``MultiTaskInfiniteLatentSVR`` | ``joint=False`` | one ``Ridge`` per task (School-type
     data; explained variance %).

2. **Time against N** (iLSVM and IBP+SVM, synthetic
   ``make_latent_classification(n, 60 inputs, 10 latent, 5 classes)``, N = 2,000 to
   50,000 by default): fit seconds and seconds per row; target: at most linear growth.

Usage::

    PYTHONPATH=src python benchmarks/latent_svm.py --out latent.json
    PYTHONPATH=src python benchmarks/latent_svm.py --parts scaling --sizes 2000,10000,50000
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling modules, also under runpy
from harness import describe, environment, finish_environment, interleaved, log, markdown_table, write_json  # noqa: E402


def _pairs(truncation):
    """(name, data loader, score name, [(method, factory(seed), fit(model, split), score(model, split))])."""
    from sklearn.linear_model import Ridge
    from sklearn.metrics import accuracy_score
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC

    from regbayes import IBPFeatures, InfiniteLatentSVC, MultiTaskInfiniteLatentSVC, MultiTaskInfiniteLatentSVR
    from regbayes.experiments import latent_data

    latent = {} if truncation is None else {"truncation": truncation}

    def plain_fit(model, s):
        model.fit(s.X_train, s.y_train)

    def task_fit(model, s):
        model.fit(s.X_train, s.y_train, tasks=s.tasks_train)

    def accuracy(model, s):
        return accuracy_score(s.y_test, model.predict(s.X_test))

    def macro_f1(model, s):
        return latent_data.multilabel_scores(s.y_test, model.predict(s.X_test))["macro_f1"]

    def explained(model, s):
        return latent_data.explained_variance(s.y_test, model.predict(s.X_test, tasks=s.tasks_test))

    class _RidgePerTask:
        """One Ridge per task, a fixed penalty (the timing compares fits, not searches)."""

        def fit(self, X, y, tasks):
            self.models = {t: Ridge(alpha=1.0).fit(X[tasks == t], y[tasks == t]) for t in np.unique(tasks)}
            return self

        def predict(self, X, tasks):
            out = np.empty(len(X))
            for t in np.unique(tasks):
                out[tasks == t] = self.models[t].predict(X[tasks == t])
            return out

    return [
        ("iLSVM", latent_data.multiview_data, "accuracy", [
            ("InfiniteLatentSVC", lambda seed: InfiniteLatentSVC(random_state=seed, **latent), plain_fit, accuracy),
            ("IBP+SVM", lambda seed: make_pipeline(IBPFeatures(random_state=seed, **latent), LinearSVC()), plain_fit, accuracy),
            ("LinearSVC", lambda seed: LinearSVC(), plain_fit, accuracy),
        ]),
        ("MT-iLSVM", latent_data.yeast_data, "macro-F1", [
            ("MultiTaskInfiniteLatentSVC", lambda seed: MultiTaskInfiniteLatentSVC(random_state=seed, **latent), plain_fit, macro_f1),
            ("MT-IBP+SVM", lambda seed: MultiTaskInfiniteLatentSVC(joint=False, random_state=seed, **latent), plain_fit, macro_f1),
            ("binary relevance LinearSVC", lambda seed: OneVsRestClassifier(LinearSVC()), plain_fit, macro_f1),
        ]),
        ("MT-iLSVR", latent_data.school_data, "explained variance %", [
            ("MultiTaskInfiniteLatentSVR", lambda seed: MultiTaskInfiniteLatentSVR(random_state=seed, **latent), task_fit, explained),
            ("MT-IBP+SVR", lambda seed: MultiTaskInfiniteLatentSVR(joint=False, random_state=seed, **latent), task_fit, explained),
            ("ridge per task", lambda seed: _RidgePerTask(), task_fit, explained),
        ]),
    ]


def run_pairs(args):
    rows, raw = [], {}
    for group, loader, score_name, methods in _pairs(args.truncation):
        split = loader("auto", quick=args.quick)
        log(group, split.name)
        scores = {name: [] for name, *_ in methods}

        def call(entry):
            name, factory, fit, score = entry

            def one(r):
                model = factory(r)
                start = time.perf_counter()
                fit(model, split)
                seconds = time.perf_counter() - start
                scores[name].append(score(model, split))
                return seconds
            return one

        times = interleaved({entry[0]: call(entry) for entry in methods}, args.repeats, warmup=1)
        anchor = np.median(times[methods[1][0]])
        for name, *_ in methods:
            t = describe(times[name])
            s = scores[name][1:]  # the warm-up round's model scored too: leave it out
            rows.append([group, name, split.name, f"{np.mean(s):.4f}", f"{t['median']:.3f}", f"{t['median'] / anchor:.2f}"])
            raw[f"{group}/{name}"] = {"seconds": times[name], "scores": s, "score": score_name, "data": split.name}
    table = markdown_table(rows, ["model", "method", ("data", "l"), "score", "fit s (median)", "time ÷ decoupled"])
    return table, raw


def run_scaling(args):
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC

    from regbayes import IBPFeatures, InfiniteLatentSVC
    from regbayes.datasets import make_latent_classification

    latent = {} if args.truncation is None else {"truncation": args.truncation}
    rows, raw = [], {}
    for n in args.sizes:
        data = make_latent_classification(n_samples=n, n_features=60, n_latent=10, n_classes=5, random_state=0)
        log("scaling", n)
        calls = {
            "InfiniteLatentSVC": lambda r: InfiniteLatentSVC(random_state=r, **latent).fit(data.X, data.y) and None,
            "IBP+SVM": lambda r: make_pipeline(IBPFeatures(random_state=r, **latent), LinearSVC()).fit(data.X, data.y) and None,
        }
        times = interleaved(calls, args.scaling_repeats, warmup=1 if n == args.sizes[0] else 0)
        for name, values in times.items():
            t = describe(values)
            rows.append([n, name, f"{t['median']:.3f}", f"{1e6 * t['median'] / n:.1f}"])
            raw[f"{name}/{n}"] = values
    table = markdown_table(rows, ["N", "method", "fit s (median)", "µs per row"])
    return table, raw


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--parts", default="pairs,scaling", help="comma-separated: pairs, scaling")
    p.add_argument("--repeats", type=int, default=3, help="timed rounds of the pairs (after one warm-up round)")
    p.add_argument("--scaling-repeats", type=int, default=1)
    p.add_argument("--sizes", default="2000,10000,50000", help="N of the scaling part")
    p.add_argument("--truncation", type=int, default=None, help="truncation of every latent model (default: theirs)")
    p.add_argument("--quick", action="store_true", help="the experiments' quick data")
    p.add_argument("--out", default=None, help="write JSON here")
    args = p.parse_args(argv)
    args.sizes = [int(s) for s in args.sizes.split(",")]
    env = environment(("numpy", "jax", "numba", "sklearn"))
    out = {"environment": env, "args": vars(args)}
    parts = args.parts.split(",")
    if "pairs" in parts:
        table, out["pairs"] = run_pairs(args)
        print("\n### Pairs\n\n" + table)
    if "scaling" in parts:
        table, out["scaling"] = run_scaling(args)
        print("\n### Time against N\n\n" + table)
    finish_environment(env)
    print(f"\n{env['cpu']}, {os.cpu_count()} cores; regbayes {env.get('regbayes_commit')}; load {env.get('load_average')} -> "
          f"{env.get('load_average_at_end')}")
    if args.out:
        write_json(args.out, out)


if __name__ == "__main__":
    main()
