"""MedLDA: token throughput against the ``lda`` package, and accuracy against documents processed.

Paper 000, section 5.2 (Gibbs MedLDA and SSGRLD, Fig. 8), measured side by side in one run:

* **Throughput** (tokens sampled per second, compilation excluded), on the same corpus and K:

  - the ``lda`` package's collapsed Gibbs sampler (unsupervised LDA, Cython): its own
    per-iteration work, ``_sample_topics`` after ``_initialize`` (what ``LDA.fit`` runs per
    iteration, without the log-likelihood it computes every ``refresh`` iterations) -- the
    speed anchor;
  - regbayes' numba kernel ``gibbs_medlda_sweep`` with M = 0 classifiers (exactly collapsed
    LDA: the same work per token as ``lda``), M = 1 (a binary Gibbs MedLDA) and M = L (one
    binary classifier per class, the multi-class form ``MedLDA(sampler="gibbs")`` runs);
  - ``MedLDA(sampler="gibbs")`` and ``MedLDA(sampler="ssgrld")`` end to end (``trace_``
    tokens / wall time: the z sweeps plus the eta / lambda / Phi updates and bookkeeping,
    after a warm-up fit so that nothing is compiled inside the timed run);
  - the eq. 22 kernel ``fixed_topic_sweeps`` (topics fixed, documents in parallel) with 1
    and 2 numba threads;
  - a collapsed LDA sweep written as a JAX ``fori_loop`` over tokens (jitted, data as
    arguments, uniforms drawn up front), the best plain-JAX form of the token loop, to
    restate DESIGN.md's numba-vs-JAX measurement on this corpus (``--skip-jax`` to omit).

  Every rate is the median over ``--repeats`` sweeps after one untimed sweep.

* **Accuracy against documents processed and wall time**: SSGRLD vs Gibbs MedLDA vs online
  LDA + LinearSVC (and batch LDA + LinearSVC), exactly as ``regbayes reproduce medlda-fig8``
  (:mod:`regbayes.experiments.medlda_fig8`), on the synthetic corpus of ``--n`` training
  documents; the summary gives the documents and wall time SSGRLD needs to stay within 1
  point of Gibbs MedLDA's final accuracy, against Gibbs's own.

* **Accuracy of the default prediction against run length** (``--refit-curve``, about 16
  minutes on 2 cores): separate fits of both samplers with growing ``n_iter`` and several
  ``random_state`` seeds, scored by ``predict`` (the classifier refitted on label-free topic
  proportions, ``refit_classifier=True``); the snapshot curves above keep each snapshot's
  eta of training instead. The summary takes Gibbs MedLDA's longest run as its final
  accuracy and gives, for each sampler, the shortest run length from which the seed-mean
  accuracy stays within 1 point of it, with its documents and sampling seconds (the refit
  excluded: it is the same post-processing for both samplers). ``--refit-ssgrld-params``
  (JSON) passes further ``MedLDA`` arguments to the SSGRLD fits, e.g. a larger minibatch
  with fewer inner sweeps.

Corpora: ``synthetic`` -- ``make_topic_corpus`` drawn as in medlda-fig8 (20 classes, V =
2000, mean length 80; ``--n`` training documents, default 12,000, about 0.96 M tokens);
``reuters`` -- the ``lda`` package's 395 Reuters stories (84,010 tokens, V = 4,258; real
text), the 9 dateline countries with at least 10 stories as labels (299 stories).

Usage::

    PYTHONPATH=src python benchmarks/medlda.py --quick            # small corpus, ~1-2 min
    PYTHONPATH=src python benchmarks/medlda.py --out medlda.json  # full
    PYTHONPATH=src python benchmarks/medlda.py --skip-accuracy    # throughput only
    PYTHONPATH=src python benchmarks/medlda.py --corpora synthetic --skip-accuracy --refit-curve
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling modules, also under runpy
from competitors.jax_collapsed_lda import jax_collapsed_sweep  # noqa: E402
from competitors.lda_package import lda_package_sweep  # noqa: E402
from harness import close_run, environment, interleaved, log, timed  # noqa: E402
from library_internals import (  # noqa: E402
    fig8_curve,
    fig8_method_settings,
    fig8_reach_summary,
    fig8_synthetic_corpus,
    lda_svm_pipeline,
    online_lda_svm_curve,
)
from medlda_kernels import estimator_rate, numba_collapsed_sweep, numba_fixed_topic_sweep  # noqa: E402
from medlda_report import markdown  # noqa: E402


# ----------------------------------------------------------------------------- corpora
def corpora(args):
    from regbayes.datasets import load_lda_reuters

    out = {}
    data = fig8_synthetic_corpus(args.n, args.seed)
    out["synthetic"] = {"X": data["X_train"], "y": data["y_train"], "description": data["description"], "data": data}
    reuters = load_lda_reuters(min_class_size=10)
    out["reuters"] = {"X": reuters.counts, "y": reuters.target,
                      "description": f"lda package Reuters, {len(reuters.target_names)} dateline countries"}
    return out


# ----------------------------------------------------------------------------- throughput
def interleaved_rates(sweeps, repeats):
    """Tokens/s of every ``(one_sweep, tokens)`` in ``sweeps``: one untimed call each, then
    ``repeats`` rounds calling each in turn (so that machine load hits all alike); the
    median time per call."""
    seconds = interleaved({name: (lambda r, fn=fn: fn()) for name, (fn, _) in sweeps.items()}, repeats)
    return {name: {"tokens_per_s": float(sweeps[name][1] / np.median(s)), "sweep_s": float(np.median(s)),
                   "sweep_s_min": float(np.min(s)), "tokens_per_call": int(sweeps[name][1])}
            for name, s in seconds.items()}


def throughput(corpus, args):
    X, y = corpus["X"], corpus["y"]
    K, seed = args.k, args.seed
    L = int(y.max()) + 1
    log(f"  kernels, interleaved ({args.repeats} rounds) ...")
    sweeps = {"lda package, collapsed LDA (Cython)": lda_package_sweep(X, K, args.alpha, args.beta, seed)}
    for M, label in ((0, "collapsed LDA (M = 0)"), (1, "Gibbs MedLDA sweep, binary (M = 1)"),
                     (L, f"Gibbs MedLDA sweep, one-vs-rest (M = {L})")):
        sweeps[f"regbayes numba: {label}"] = numba_collapsed_sweep(X, y, K, M, args.alpha, args.beta, seed)
    for threads, label in ((0, "serial"), (2, "2 threads")):
        sweeps[f"regbayes numba: eq. 22, topics fixed, M = {L}, 4 sweeps, {label}"] = \
            numba_fixed_topic_sweep(X, y, K, L, args.alpha, threads, seed)
    compile_s = None
    if not args.skip_jax:
        fn, n, compile_s = jax_collapsed_sweep(X, K, args.alpha, args.beta, seed)
        sweeps["JAX fori_loop: collapsed LDA (M = 0)"] = (fn, n)
    rows = interleaved_rates(sweeps, args.repeats)
    if compile_s is not None:
        rows["JAX fori_loop: collapsed LDA (M = 0)"]["compile_s"] = compile_s
    n_docs = X.shape[0]
    log("  MedLDA(sampler='gibbs') end to end ...")
    rows[f"MedLDA(sampler='gibbs'), M = {L}, end to end"] = estimator_rate(X, y, "gibbs", K, args.gibbs_iter, 100, seed)
    log("  MedLDA(sampler='ssgrld') end to end ...")
    rows[f"MedLDA(sampler='ssgrld'), batch {min(100, n_docs)}, end to end"] = estimator_rate(
        X, y, "ssgrld", K, args.ssgrld_iter, min(100, n_docs), seed)
    log("  lda package again (anchor for the end-to-end rows) ...")
    rows["lda package, collapsed LDA (Cython), after the end-to-end runs"] = interleaved_rates(
        {"lda": sweeps["lda package, collapsed LDA (Cython)"]}, args.repeats)["lda"]
    # kernel rows: against the interleaved lda rate; end-to-end rows (run alone, between
    # the two lda measurements): against the mean of the two lda rates
    anchor = rows["lda package, collapsed LDA (Cython)"]["tokens_per_s"]
    anchor_e2e = 0.5 * (anchor + rows["lda package, collapsed LDA (Cython), after the end-to-end runs"]["tokens_per_s"])
    for label, r in rows.items():
        r["ratio_to_lda"] = r["tokens_per_s"] / (anchor_e2e if "end to end" in label else anchor)
    return {"n_docs": n_docs, "n_tokens": int(X.sum()), "n_words": X.shape[1], "n_classes": L, "K": K, "rows": rows}


# ----------------------------------------------------------------------------- accuracy
def accuracy(corpus, args):
    data = corpus["data"]
    Xtr, ytr, Xte, yte = data["X_train"], data["y_train"], data["X_test"], data["y_test"]
    settings = fig8_method_settings(args.k, Xtr.shape[0], gibbs_sweeps=args.acc_gibbs_sweeps,
                                    ssgrld_iterations=args.acc_ssgrld_iter)
    runs = {}
    for method in ("gibbs", "ssgrld"):
        log(f"  accuracy curve: {method} ...")
        runs[method] = fig8_curve(Xtr, ytr, Xte, yte, **{**settings[method], "random_state": args.seed})
    log("  accuracy curve: LDA + LinearSVC ...")
    runs["online_baseline"] = online_lda_svm_curve(Xtr, ytr, Xte, yte, args.k, n_passes=5.0, batch_size=100,
                                                   random_state=args.seed)
    pipe, seconds = timed(lda_svm_pipeline(args.k, random_state=args.seed).fit, Xtr, ytr)
    runs["batch_baseline"] = {"accuracy": float(np.mean(pipe.predict(Xte) == yte)), "seconds": seconds}
    summary = fig8_reach_summary(runs["gibbs"], runs["ssgrld"], tolerance=0.01)
    return {"n_train": Xtr.shape[0], "n_test": Xte.shape[0], "settings": settings, "runs": runs, "summary": summary}


def refit_curve(corpus, args):
    """Separate fits per (sampler, run length, seed), scored by ``predict`` (module docstring)."""
    from regbayes import MedLDA

    data = corpus["data"]
    Xtr, ytr, Xte, yte = data["X_train"], data["y_train"], data["X_test"], data["y_test"]
    lengths = {"gibbs": [int(v) for v in args.refit_gibbs_sweeps.split(",")],
               "ssgrld": [int(v) for v in args.refit_ssgrld_iter.split(",")]}
    seeds = [int(v) for v in args.refit_seeds.split(",")]
    extra = {"gibbs": {}, "ssgrld": json.loads(args.refit_ssgrld_params)}
    for sampler in lengths:  # load the compiled kernels before anything is timed
        MedLDA(n_topics=args.k, n_iter=2, n_draws=1, sampler=sampler).fit(Xtr[:300], ytr[:300])
    rows = {sampler: [] for sampler in lengths}
    for sampler, its in lengths.items():
        for n_iter in sorted(its):
            runs = []
            for seed in seeds:
                model = MedLDA(n_topics=args.k, n_iter=n_iter, sampler=sampler, random_state=seed, **extra[sampler]).fit(Xtr, ytr)
                runs.append({"seed": seed, "accuracy": float(model.score(Xte, yte)),
                             "sampling_s": float(model.trace_["wall_time"][-1]), "refit_s": model.trace_["refit_seconds"],
                             "n_docs": int(model.trace_["n_docs"][-1])})
                log(f"  refit curve: {sampler} n_iter={n_iter} seed={seed}: {runs[-1]['accuracy']:.4f}")
            rows[sampler].append({"n_iter": n_iter, "n_docs": runs[0]["n_docs"], "runs": runs,
                                  "accuracy": float(np.mean([r["accuracy"] for r in runs])),
                                  "sampling_s": float(np.mean([r["sampling_s"] for r in runs]))})
    final = rows["gibbs"][-1]["accuracy"]
    reach = {}
    for sampler, sampler_rows in rows.items():
        ok = [r["accuracy"] >= final - 0.01 for r in sampler_rows]
        first = next((i for i in range(len(ok)) if all(ok[i:])), None)
        reach[sampler] = None if first is None else {k: sampler_rows[first][k] for k in ("n_iter", "n_docs", "sampling_s")}
    summary = {"gibbs_final_accuracy": final, "reach": reach}
    if reach["gibbs"] and reach["ssgrld"]:
        summary["docs_ratio"] = reach["gibbs"]["n_docs"] / reach["ssgrld"]["n_docs"]
        summary["time_ratio"] = reach["gibbs"]["sampling_s"] / reach["ssgrld"]["sampling_s"]
    return {"n_train": Xtr.shape[0], "n_test": Xte.shape[0], "seeds": seeds, "rows": rows, "summary": summary,
            "ssgrld_params": extra["ssgrld"]}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="2,000 synthetic documents, fewer repeats and iterations")
    p.add_argument("--n", type=int, default=None, help="synthetic training documents (default 12,000; quick 2,000)")
    p.add_argument("--k", type=int, default=50, help="topics K (default: %(default)s, as paper 000's 20news run)")
    p.add_argument("--alpha", type=float, default=0.1, help="Dirichlet alpha of the throughput runs")
    p.add_argument("--beta", type=float, default=0.01, help="Dirichlet beta of the throughput runs")
    p.add_argument("--repeats", type=int, default=None, help="timed sweeps per kernel (default 5; quick 3)")
    p.add_argument("--gibbs-iter", type=int, default=None, help="MedLDA gibbs sweeps timed end to end")
    p.add_argument("--ssgrld-iter", type=int, default=None, help="MedLDA ssgrld iterations timed end to end")
    p.add_argument("--acc-gibbs-sweeps", type=int, default=None, help="Gibbs sweeps of the accuracy curve")
    p.add_argument("--acc-ssgrld-iter", type=int, default=None, help="SSGRLD iterations of the accuracy curve")
    p.add_argument("--corpora", default="synthetic,reuters", help="throughput corpora (comma-separated)")
    p.add_argument("--skip-jax", action="store_true", help="omit the JAX token-loop measurement")
    p.add_argument("--skip-accuracy", action="store_true", help="throughput only")
    p.add_argument("--refit-curve", action="store_true", help="accuracy of predict against run length (~16 min)")
    p.add_argument("--refit-gibbs-sweeps", default="20,30,35,40,100", help="Gibbs run lengths of --refit-curve")
    p.add_argument("--refit-ssgrld-iter", default="120,240,360,480,720", help="SSGRLD run lengths of --refit-curve")
    p.add_argument("--refit-seeds", default="0,1,2", help="random_state values of --refit-curve")
    p.add_argument("--refit-ssgrld-params", default="{}",
                   help='JSON MedLDA arguments of the SSGRLD fits of --refit-curve, e.g. \'{"batch_size": 200}\'')
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="write JSON results here")
    args = p.parse_args(argv)
    args.n = args.n or (2000 if args.quick else 12000)
    args.repeats = args.repeats or (3 if args.quick else 5)
    args.gibbs_iter = args.gibbs_iter or (3 if args.quick else 5)
    args.ssgrld_iter = args.ssgrld_iter or (30 if args.quick else 100)
    args.acc_gibbs_sweeps = args.acc_gibbs_sweeps or (10 if args.quick else 40)
    args.acc_ssgrld_iter = args.acc_ssgrld_iter or (150 if args.quick else 600)
    start = time.perf_counter()
    results = {"environment": environment(("numba", "lda", "sklearn", "numpy")), "settings": vars(args), "throughput": {}}
    data = corpora(args)
    for name in filter(None, args.corpora.split(",")):
        log(f"throughput: {name}")
        results["throughput"][name] = throughput(data[name], args)
    if not args.skip_accuracy:
        log("accuracy against documents processed: synthetic")
        results["accuracy"] = accuracy(data["synthetic"], args)
    if args.refit_curve:
        log("accuracy of the default prediction against run length: synthetic")
        results["refit_curve"] = refit_curve(data["synthetic"], args)
    close_run(results, start, markdown(results), args.out, drop_keys=("data",))


if __name__ == "__main__":
    main()
