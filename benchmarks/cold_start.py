"""Cold start: how long a new user waits for an estimator's first fit.

For each estimator, a fresh Python process with an empty numba cache (``NUMBA_CACHE_DIR``
set to a new temporary folder) and JAX's persistent compilation cache off times

* the import of regbayes (``import regbayes`` and the estimator class, which brings in
  JAX, numba and scikit-learn),
* the estimator's first fit, and then a second fit of a new estimator with the same
  parameters on the same data, in the same process.

The difference between the two fits is the compilation (and any other one-off work) that
a new user waits for. A second fresh process that shares the now-filled numba cache (JAX's
cache still off) then times its own first fit: what every later session waits for. Two more
processes share that numba cache and turn on JAX's persistent compilation cache in a new
folder (``regbayes.enable_compilation_cache``, as the ``regbayes`` command line does): the
first fills it, the second times a later session's first fit with both caches warm.

Estimators and data (the data are made before the fits and not timed):

* ``BayesianSVC()`` (default sampler) on the training part of
  ``load_breast_cancer_standardized()`` (398 rows, 30 features);
* ``M2DPM()``, ``InfiniteSVC()`` and ``DPMNLClassifier()`` on ``make_dp_mixture_svm(setting="I",
  n_samples=--dp-rows, random_state=0)`` (300 rows by default);
* ``MedLDA(n_topics=20, sampler="ssgrld")`` on ``make_topic_corpus(n_docs=--n-docs, ...)``
  with the corpus settings of ``regbayes reproduce medlda-fig8`` (20 classes, V = 2,000,
  mean length 80; 4,000 documents by default);
* paper 002's: ``IBPFeatures()`` and ``InfiniteLatentSVC()`` on
  ``make_latent_classification(n_samples=--latent-rows)`` (600 rows, 40 features),
  ``MultiTaskInfiniteLatentSVC()`` on ``make_latent_multilabel(n_samples=--latent-rows)``
  (6 labels), ``MedLDARegressor(n_topics=10)`` on ``make_topic_regression_corpus(n_docs=500)``.

Targets for the compilation (first fit minus second fit): MedLDA at most 8 s, the others
at most 3 s each. The table gives medians over ``--repeats`` sets of four processes, each set
with its own empty cache.

Usage::

    PYTHONPATH=src python benchmarks/cold_start.py --out cold_start.json
    PYTHONPATH=src python benchmarks/cold_start.py --estimators BayesianSVC,M2DPM --repeats 3
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

# Only the standard library above: a child process times ``import regbayes`` first, before
# NumPy or anything else is loaded.

ESTIMATORS = ("BayesianSVC", "M2DPM", "InfiniteSVC", "DPMNLClassifier", "MedLDA", "IBPFeatures", "InfiniteLatentSVC",
              "MultiTaskInfiniteLatentSVC", "MedLDARegressor")
TARGET_S = {"BayesianSVC": 3.0, "M2DPM": 3.0, "InfiniteSVC": 3.0, "DPMNLClassifier": 3.0, "MedLDA": 8.0, "IBPFeatures": 3.0,
            "InfiniteLatentSVC": 3.0, "MultiTaskInfiniteLatentSVC": 3.0, "MedLDARegressor": 3.0}
#: medlda-fig8's synthetic corpus settings (regbayes.experiments.medlda_fig8.SYNTHETIC)
TOPIC_CORPUS = dict(n_topics=20, n_words=2000, doc_length=80.0, n_classes=20, alpha=0.1, beta=0.05, C=10.0,
                    margin=1.0, prior_scale=3.0)


# ----------------------------------------------------------------------------- child process
def _data(name, args):
    import regbayes.datasets as ds

    if name == "BayesianSVC":
        X, _, y, _ = ds.load_breast_cancer_standardized()
        return X, y, "load_breast_cancer_standardized() training part"
    if name in ("M2DPM", "InfiniteSVC", "DPMNLClassifier"):
        X, y = ds.make_dp_mixture_svm(setting="I", n_samples=args.dp_rows, random_state=0)
        return X, y, f"make_dp_mixture_svm(setting='I', n_samples={args.dp_rows}, random_state=0)"
    if name in ("IBPFeatures", "InfiniteLatentSVC"):
        d = ds.make_latent_classification(n_samples=args.latent_rows, random_state=0)
        return d.X, d.y, f"make_latent_classification(n_samples={args.latent_rows}, random_state=0)"
    if name == "MultiTaskInfiniteLatentSVC":
        d = ds.make_latent_multilabel(n_samples=args.latent_rows, random_state=0)
        return d.X, d.y, f"make_latent_multilabel(n_samples={args.latent_rows}, random_state=0)"
    if name == "MedLDARegressor":
        corpus = ds.make_topic_regression_corpus(n_docs=500, random_state=0)
        return corpus.X, corpus.y, "make_topic_regression_corpus(n_docs=500, random_state=0)"
    X, y = ds.make_topic_corpus(n_docs=args.n_docs, random_state=0, **TOPIC_CORPUS)[:2]
    return X, y, f"make_topic_corpus(n_docs={args.n_docs}, medlda-fig8 settings, random_state=0)"


def _estimator(name, module):
    cls = getattr(module, name)
    if name == "MedLDA":
        return cls(n_topics=20, sampler="ssgrld")
    if name == "MedLDARegressor":
        return cls(n_topics=10)
    return cls()


def child(args):
    """Runs in the fresh process: import, data, first fit, second fit; JSON to ``args.child_out``."""
    start = time.perf_counter()
    import regbayes

    getattr(regbayes, args.child)  # the estimator class (its module is imported by now)
    import_s = time.perf_counter() - start
    if args.child_jax_cache:
        regbayes.enable_compilation_cache(args.child_jax_cache)
    X, y, data = _data(args.child, args)
    fits = []
    for _ in range(2):
        model = _estimator(args.child, regbayes)
        start = time.perf_counter()
        model.fit(X, y)
        fits.append(time.perf_counter() - start)
    import jax
    import numba

    record = {
        "estimator": args.child,
        "params": {k: v for k, v in model.get_params().items() if not k.startswith("_")},
        "data": data,
        "n_rows": int(X.shape[0]),
        "import_s": import_s,
        "first_fit_s": fits[0],
        "second_fit_s": fits[1],
        "numba_cache_dir": numba.config.CACHE_DIR,
        "jax_compilation_cache": getattr(jax.config, "jax_enable_compilation_cache", None),
        "jax_compilation_cache_dir": getattr(jax.config, "jax_compilation_cache_dir", None),
    }
    with open(args.child_out, "w") as f:
        json.dump(record, f, default=str)


# ----------------------------------------------------------------------------- parent
def run_child(name, cache_dir, args, jax_cache=None):
    """One fresh process for estimator ``name`` with ``NUMBA_CACHE_DIR=cache_dir`` and JAX's
    persistent cache off, or on in folder ``jax_cache``; its record, with the wall seconds of
    the whole process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    env["NUMBA_CACHE_DIR"] = cache_dir
    if jax_cache is None:
        env["JAX_ENABLE_COMPILATION_CACHE"] = "false"
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    cmd = [sys.executable, os.path.abspath(__file__), "--child", name, "--child-out", out,
           "--dp-rows", str(args.dp_rows), "--n-docs", str(args.n_docs)] + (["--child-jax-cache", jax_cache] if jax_cache else [])
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            raise RuntimeError(f"{name}: the child process failed ({done.returncode}):\n{done.stderr[-3000:]}")
        with open(out) as f:
            record = json.load(f)
    finally:
        os.unlink(out)
    record["process_s"] = seconds
    return record


def measure(name, args):
    """``--repeats`` sets of four processes (empty numba cache; then the filled one; then JAX's cache too,
    filling and then filled)."""
    from harness import log

    pairs = []
    for r in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="regbayes-numba-cache-") as cache_dir:
            cold = run_child(name, cache_dir, args)
            log(f"{name} [{r + 1}/{args.repeats}] empty cache: import {cold['import_s']:.2f} s, first fit "
                f"{cold['first_fit_s']:.2f} s, second fit {cold['second_fit_s']:.2f} s")
            warm = run_child(name, cache_dir, args)
            log(f"{name} [{r + 1}/{args.repeats}] filled numba cache: first fit {warm['first_fit_s']:.2f} s, "
                f"second fit {warm['second_fit_s']:.2f} s")
            jax_cache = os.path.join(cache_dir, "jax")
            filling = run_child(name, cache_dir, args, jax_cache)
            both = run_child(name, cache_dir, args, jax_cache)
            log(f"{name} [{r + 1}/{args.repeats}] JAX's cache on: first fit {filling['first_fit_s']:.2f} s filling it, "
                f"{both['first_fit_s']:.2f} s with it filled")
        pairs.append({"empty_cache": cold, "numba_cache_filled": warm, "jax_cache_filling": filling,
                      "both_caches_filled": both})
    return pairs


def summary(name, pairs):
    from harness import describe

    def med(key, which="empty_cache"):
        return describe([p[which][key] for p in pairs])["median"]

    compile_s = describe([p["empty_cache"]["first_fit_s"] - p["empty_cache"]["second_fit_s"] for p in pairs])["median"]
    return {
        "estimator": name,
        "data": pairs[0]["empty_cache"]["data"],
        "repeats": len(pairs),
        "import_s": med("import_s"),
        "first_fit_s": med("first_fit_s"),
        "second_fit_s": med("second_fit_s"),
        "compile_s": compile_s,
        "warm_numba_first_fit_s": med("first_fit_s", "numba_cache_filled"),
        "warm_numba_compile_s": describe([p["numba_cache_filled"]["first_fit_s"] - p["numba_cache_filled"]["second_fit_s"]
                                          for p in pairs])["median"],
        "both_warm_first_fit_s": med("first_fit_s", "both_caches_filled"),
        "both_warm_compile_s": describe([p["both_caches_filled"]["first_fit_s"] - p["both_caches_filled"]["second_fit_s"]
                                         for p in pairs])["median"],
        "target_compile_s": TARGET_S[name],
        "within_target": compile_s <= TARGET_S[name],
    }


def markdown(rows):
    from harness import markdown_table

    columns = ["estimator", "import s", "first fit s", "second fit s", "first − second (compilation) s",
               "first fit, numba cache warm s", "first fit, numba and JAX caches warm s", "target (compilation)",
               "within target"]
    labels = {"BayesianSVC": "`BayesianSVC()`, breast cancer", "M2DPM": "`M2DPM()`, Setting I",
              "InfiniteSVC": "`InfiniteSVC()`, Setting I", "DPMNLClassifier": "`DPMNLClassifier()`, Setting I",
              "MedLDA": '`MedLDA(n_topics=20, sampler="ssgrld")`', "IBPFeatures": "`IBPFeatures()`, 600 rows",
              "InfiniteLatentSVC": "`InfiniteLatentSVC()`, 600 rows",
              "MultiTaskInfiniteLatentSVC": "`MultiTaskInfiniteLatentSVC()`, 600 rows, 6 labels",
              "MedLDARegressor": "`MedLDARegressor(n_topics=10)`, 500 documents"}
    table = markdown_table([[labels[r["estimator"]], f"{r['import_s']:.2f}", f"{r['first_fit_s']:.2f}",
                            f"{r['second_fit_s']:.2f}", f"{r['compile_s']:.2f}", f"{r['warm_numba_first_fit_s']:.2f}",
                            f"{r['both_warm_first_fit_s']:.2f}", f"≤ {r['target_compile_s']:g} s", "yes" if r["within_target"] else "no"] for r in rows],
                           columns)
    data = "\n".join(f"* {r['estimator']}: {r['data']}; medians of {r['repeats']} set(s) of four processes" for r in rows)
    return table + "\n\n" + data


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--estimators", default=",".join(ESTIMATORS), help="comma-separated subset of " + ", ".join(ESTIMATORS))
    p.add_argument("--repeats", type=int, default=1, help="pairs of fresh processes per estimator (medians reported)")
    p.add_argument("--dp-rows", type=int, default=300, help="rows of the Setting I data of M2DPM, InfiniteSVC and DPMNLClassifier")
    p.add_argument("--n-docs", type=int, default=4000, help="documents of MedLDA's corpus")
    p.add_argument("--latent-rows", type=int, default=600, help="rows of paper 002's latent-feature data")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds before a child process is stopped")
    p.add_argument("--out", default=None, help="write JSON results here")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--child-out", default=None, help=argparse.SUPPRESS)
    p.add_argument("--child-jax-cache", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args)
        return

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling modules, also under runpy
    from harness import environment, finish_environment, log, write_json

    chosen = {e.strip().lower() for e in args.estimators.split(",") if e.strip()}
    unknown = chosen - {e.lower() for e in ESTIMATORS}
    if unknown:
        p.error(f"unknown estimators {sorted(unknown)}; choose from {', '.join(ESTIMATORS)}")
    names = [e for e in ESTIMATORS if e.lower() in chosen]
    if args.repeats < 1:
        p.error("--repeats must be at least 1")
    env = environment(("numba", "sklearn", "numpy"))
    results = {"config": vars(args), "environment": env, "estimators": {}}
    start = time.perf_counter()
    rows = []
    for name in names:
        log(f"{name}: {args.repeats} set(s) of four fresh processes")
        pairs = measure(name, args)
        rows.append(summary(name, pairs))
        results["estimators"][name] = {"summary": rows[-1], "runs": pairs}
        if args.out:  # partial results survive an interrupted run
            write_json(args.out, results)
    results["total_seconds"] = time.perf_counter() - start
    finish_environment(env)
    print(markdown(rows))
    def load(key):
        return "unknown" if env[key] is None else " / ".join(f"{v:.1f}" for v in env[key])

    print(f"\n{env['cpu']}, {env['cpu_count']} cores; JAX {env.get('jax')} ({env.get('backend')}), numba "
          f"{env.get('numba')}; regbayes {env['regbayes_commit']}; load average (1 / 5 / 15 min) "
          f"{load('load_average_at_start')} at the start, {load('load_average_at_end')} at the end; total "
          f"{results['total_seconds']:.0f} s.")
    if args.out:
        write_json(args.out, results)


if __name__ == "__main__":
    main()
