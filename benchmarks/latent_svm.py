"""Paper 002's latent-feature models against what a user would pick instead, in one run.

Three parts:

1. **Pairs** (fit time and test score, interleaved repeats, medians): each estimator with
   its defaults against its decoupled baseline at the same truncation and a plain
   scikit-learn model, on the data of the experiments (the real sets when the ``data``
   extra is installed, the named stand-ins otherwise):

   * ``InfiniteLatentSVC`` | ``make_pipeline(IBPFeatures(), LinearSVC())`` | ``LinearSVC``
     (multi-view digits; accuracy).
   * ``MultiTaskInfiniteLatentSVC`` | ``joint=False`` (MT-IBP+SVM) | binary-relevance
     ``LinearSVC`` (Yeast; macro-F1).
   * ``MultiTaskInfiniteLatentSVR`` | ``joint=False`` | one ``Ridge`` per task (School-type
     data; explained variance %).

2. **Same truncation** (``ratio``): iLSVM against IBP+SVM on N rows (2,000) of planted data
   (:func:`latent_label_data`), K = 50, both for the same number of outer iterations
   (``tol=0``), so the ratio is the cost of Algorithm 3's iteration with its dual step
   against one without (plus LinearSVC). Target: iLSVM at most 1.5x IBP+SVM. iLSVM's
   default classifier weight is chosen by 3-fold CV and LinearSVC's is fixed, so two more
   ratios put both on one protocol: iLSVM with ``classifier_C=1`` against LinearSVC's
   ``C=1``, and iLSVM's default against LinearSVC with C chosen by 3-fold CV over the same
   grid (the baseline of ``regbayes reproduce ilsvm-table1``).

3. **Time against N** (``scaling``): iLSVM on the same planted data, N = 2,000 / 10,000 /
   50,000 rows, the same settings, each shape compiled first; the dual steps (their wall
   time is in ``trace_``) and the rest (mean-field phases, the final dual, driver) apart,
   per row and outer iteration. Target: at most linear growth.

Usage::

    PYTHONPATH=src python benchmarks/latent_svm.py --out latent.json
    PYTHONPATH=src python benchmarks/latent_svm.py --parts ratio,scaling --sizes 2000,10000,50000
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


def latent_label_data(n, d=50, big=4, noise=0.3, small_scale=0.3, seed=0):
    """Rows of the IBP linear-Gaussian model: four latent features with unit-scale
    loadings and one of scale ``small_scale`` whose value is the binary label."""
    rng = np.random.default_rng(seed)
    Z = (rng.uniform(size=(n, big + 1)) < 0.5).astype(float)
    W = np.hstack([rng.normal(size=(d, big)), small_scale * rng.normal(size=(d, 1))])
    X = Z @ W.T + noise * rng.normal(size=(n, d))
    return X, Z[:, big].astype(int)


def _fixed_iterations(args):
    return dict(truncation=args.truncation or 50, n_iter=args.n_iter, tol=0.0)


def run_ratio(args):
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC

    from sklearn.model_selection import GridSearchCV

    from regbayes import IBPFeatures, InfiniteLatentSVC
    from regbayes.algorithms.ilsvm_classifier import CLASSIFIER_C_GRID, CV_FOLDS

    n = args.sizes[0]
    X, y = latent_label_data(2 * n)
    Xtr, ytr, Xte, yte = X[:n], y[:n], X[n:], y[n:]
    fixed = _fixed_iterations(args)
    make = {"iLSVM": lambda: InfiniteLatentSVC(C=args.C, random_state=0, **fixed),
            "IBP+SVM": lambda: make_pipeline(IBPFeatures(random_state=0, **fixed), LinearSVC()),
            # the same classifier protocol on both sides: a fixed weight, or one chosen by 3-fold CV over the same grid
            "iLSVM, classifier_C=1": lambda: InfiniteLatentSVC(C=args.C, classifier_C=1.0, random_state=0, **fixed),
            "IBP+SVM, C by CV": lambda: make_pipeline(IBPFeatures(random_state=0, **fixed),
                                                      GridSearchCV(LinearSVC(), {"C": list(CLASSIFIER_C_GRID)}, cv=CV_FOLDS))}
    fitted = {}

    def call(name):
        def one(_):
            fitted[name] = make[name]().fit(Xtr, ytr)
        return one

    times = interleaved({name: call(name) for name in make}, args.ratio_repeats, warmup=1)
    med = {name: float(np.median(v)) for name, v in times.items()}
    ratio = med["iLSVM"] / med["IBP+SVM"]
    matched = {"fixed classifier weight (iLSVM, classifier_C=1 ÷ IBP+SVM)": med["iLSVM, classifier_C=1"] / med["IBP+SVM"],
               "classifier weight by CV (iLSVM ÷ IBP+SVM, C by CV)": med["iLSVM"] / med["IBP+SVM, C by CV"]}
    rows = [[name, f"{describe(v)['median']:.3f}", f"{describe(v)['min']:.3f}", f"{describe(v)['max']:.3f}",
             f"{fitted[name].score(Xte, yte):.4f}"] for name, v in times.items()]
    table = markdown_table(rows, ["method", "fit s (median)", "min", "max", "test accuracy"])
    header = f"N = {n}, K = {fixed['truncation']}, {args.n_iter} outer iterations, C = {args.C}\n\n"
    same = "; ".join(f"{name}: **{value:.2f}**" for name, value in matched.items())
    return (header + table + f"\n\niLSVM ÷ IBP+SVM (median fit time, defaults): **{ratio:.2f}**. With the same classifier "
            f"protocol on both sides: {same}.", {"seconds": times, "ratio": ratio, "matched_ratios": matched})


def run_scaling(args):
    from regbayes import InfiniteLatentSVC

    fixed = _fixed_iterations(args)
    rows, raw = [], {}
    for n in args.sizes:
        X, y = latent_label_data(n)
        log("scaling", n)
        InfiniteLatentSVC(C=args.C, random_state=0, **{**fixed, "n_iter": 1}).fit(X, y)  # compile this shape
        start = time.perf_counter()
        clf = InfiniteLatentSVC(C=args.C, random_state=0, **fixed).fit(X, y)
        seconds = time.perf_counter() - start
        dual = float(np.sum(clf.trace_["dual_seconds"]))
        per = 1e6 / clf.n_iter_ / n
        rows.append([n, f"{seconds:.3f}", f"{dual:.3f}", int(np.sum(clf.trace_["dual_iterations"])),
                     f"{seconds - dual:.3f}", f"{per * (seconds - dual):.2f}", f"{per * seconds:.2f}"])
        raw[n] = {"seconds": seconds, "dual_seconds": dual, "n_iter": clf.n_iter_}
    table = markdown_table(rows, ["N", "fit s", "dual steps s", "dual passes", "rest s", "rest µs / row / iteration",
                                  "fit µs / row / iteration"])
    return table, raw


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--parts", default="pairs,ratio,scaling", help="comma-separated: pairs, ratio, scaling")
    p.add_argument("--repeats", type=int, default=3, help="timed rounds of the pairs (after one warm-up round)")
    p.add_argument("--ratio-repeats", type=int, default=5, help="timed rounds of the ratio part")
    p.add_argument("--sizes", default="2000,10000,50000", help="N of the scaling part (the first: of the ratio part)")
    p.add_argument("--n-iter", type=int, default=10, help="outer iterations of the ratio and scaling parts")
    p.add_argument("--C", type=float, default=1.0, help="iLSVM's C in the ratio and scaling parts")
    p.add_argument("--truncation", type=int, default=None, help="truncation of every latent model (default: theirs; 50 "
                   "in the ratio and scaling parts)")
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
    if "ratio" in parts:
        table, out["ratio"] = run_ratio(args)
        print("\n### Same truncation\n\n" + table)
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
