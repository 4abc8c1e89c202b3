"""MedLDA on real labeled corpora: Gibbs MedLDA and SSGRLD with the library's defaults
against LDA + LinearSVC at equal K, and how soon SSGRLD reaches Gibbs MedLDA's accuracy.

Corpora (``--data``, comma-separated): the ones ``regbayes reproduce medlda-fig8 --data
NAME`` reads -- "wordnet-nouns" (Debian ``wordnet-base``) and "fortunes" (Debian
``fortunes``) with their fixed 80 / 20 split and the 20news vocabulary rule
(:mod:`regbayes.experiments.corpus_split`), or "20news" where present.

Per corpus, every fit after a warm-up fit that loads the compiled kernels:

* **defaults** -- ``MedLDA(n_topics=K, sampler=S)`` with nothing else set (Gibbs: 100
  sweeps; SSGRLD: 1000 iterations of batch 100, 4 inner sweeps, ``refit_classifier``),
  scored by ``predict``; "fit s" is the whole ``fit`` (sampling, refit, bookkeeping);
  batch LDA + LinearSVC (``topic_baseline.lda_svm_pipeline``, 30 VB passes) and, for
  reference, a LinearSVC on the bag of words itself;
* **run lengths** -- further fits of each sampler with ``n_iter`` from ``--gibbs-iter``
  and ``--ssgrld-iter`` (other settings as the defaults, or each of ``--ssgrld-params``, a
  JSON object or list of objects), to
  find where each enters Gibbs MedLDA's default-run accuracy minus ``--tolerance`` and
  stays: the ratio of whole-fit wall times (Gibbs's entry ÷ SSGRLD's entry, and Gibbs's
  default run ÷ SSGRLD's entry) is the issue's "5× sooner".

One seed per fit (``--seed``). Usage::

    PYTHONPATH=src python benchmarks/medlda_corpora.py --data fortunes --k 20 --out fortunes.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import close_run, environment, log, markdown_header, timed  # noqa: E402
from library_internals import fig8_corpus, lda_svm_pipeline  # noqa: E402


def fit_medlda(Xtr, ytr, Xte, yte, k, sampler, seed, **params):
    from regbayes import MedLDA

    model, fit_s = timed(MedLDA(n_topics=k, sampler=sampler, random_state=seed, **params).fit, Xtr, ytr)
    accuracy, predict_s = timed(model.score, Xte, yte)
    trace = model.trace_
    return {"sampler": sampler, "params": params, "n_iter": int(model.n_iter_), "n_docs": int(trace["n_docs"][-1]),
            "accuracy": float(accuracy), "fit_s": fit_s, "sampling_s": float(trace["wall_time"][-1]),
            "refit_s": float(trace.get("refit_seconds", 0.0)), "predict_s": predict_s,
            "tokens_per_s": float(trace["n_tokens"][-1] / trace["wall_time"][-1])}


def entry(rows, band):
    """The first row (by run length) from which every longer run's accuracy is >= band."""
    ok = [r["accuracy"] >= band for r in rows]
    first = next((i for i in range(len(ok)) if all(ok[i:])), None)
    return None if first is None else rows[first]


def run_corpus(name, args):
    from sklearn.svm import LinearSVC

    data = fig8_corpus(name, args.seed, n=args.n)
    Xtr, ytr, Xte, yte = data["X_train"], data["y_train"], data["X_test"], data["y_test"]
    k, seed = args.k, args.seed
    out = {"description": data["description"], "n_train": Xtr.shape[0], "n_test": Xte.shape[0],
           "n_words": Xtr.shape[1], "n_tokens_train": int(Xtr.sum()), "n_classes": len(data["class_names"])}
    log(f"{name}: {Xtr.shape[0]:,} train / {Xte.shape[0]:,} test, V = {Xtr.shape[1]:,}, {out['n_classes']} classes")
    from regbayes import MedLDA

    for sampler in ("gibbs", "ssgrld"):  # compiled kernels loaded before anything is timed
        MedLDA(n_topics=k, n_iter=2, n_draws=1, sampler=sampler).fit(Xtr[:300], ytr[:300])
    variants = json.loads(args.ssgrld_params)
    variants = [variants] if isinstance(variants, dict) else list(variants)
    rows = {"gibbs": [], "ssgrld": []}
    for sampler in ("gibbs", "ssgrld"):
        log(f"  {sampler} defaults ...")
        rows[sampler].append({**fit_medlda(Xtr, ytr, Xte, yte, k, sampler, seed), "default": True})
        log(f"    accuracy {rows[sampler][-1]['accuracy']:.4f}, fit {rows[sampler][-1]['fit_s']:.1f} s")
    runs = [("gibbs", {}, args.gibbs_iter)] + [("ssgrld", extra, args.ssgrld_iter) for extra in variants]
    for sampler, extra, values in runs:
        for n_iter in [int(v) for v in values.split(",") if v]:
            log(f"  {sampler} n_iter={n_iter} {extra or ''} ...")
            rows[sampler].append(fit_medlda(Xtr, ytr, Xte, yte, k, sampler, seed, n_iter=n_iter, **extra))
            log(f"    accuracy {rows[sampler][-1]['accuracy']:.4f}, fit {rows[sampler][-1]['fit_s']:.1f} s")
    log("  LDA + LinearSVC ...")
    pipe, seconds = timed(lda_svm_pipeline(k, random_state=seed).fit, Xtr, ytr)
    out["baseline"] = {"accuracy": float(np.mean(pipe.predict(Xte) == yte)), "fit_s": seconds}
    svm, seconds = timed(LinearSVC(C=0.1, max_iter=10000).fit, Xtr, ytr)
    out["bow_linearsvc"] = {"accuracy": float(np.mean(svm.predict(Xte) == yte)), "fit_s": seconds}
    out["rows"] = rows
    reference = rows["gibbs"][0]
    band = reference["accuracy"] - args.tolerance
    g = entry(sorted(rows["gibbs"], key=lambda r: r["n_iter"]), band)
    reach = []
    for extra in variants:  # one entry per SSGRLD setting; the defaults' run joins the plain one
        same = [r for r in rows["ssgrld"] if {kk: v for kk, v in r["params"].items() if kk != "n_iter"} == extra]
        s = entry(sorted(same, key=lambda r: r["n_iter"]), band)
        reach.append({"params": extra, "ssgrld_entry": s,
                      "ratio_to_gibbs_entry": g["fit_s"] / s["fit_s"] if g and s else None,
                      "ratio_to_gibbs_default": reference["fit_s"] / s["fit_s"] if s else None})
    out["summary"] = {"gibbs_accuracy": reference["accuracy"], "band": band, "gibbs_entry": g, "reach": reach,
                      "medlda_margin_over_baseline": max(rows["gibbs"][0]["accuracy"], rows["ssgrld"][0]["accuracy"])
                      - out["baseline"]["accuracy"]}
    return out


def markdown(results):
    lines = []
    k = results["settings"]["k"]
    for name, res in results["corpora"].items():
        lines += [f"#### {name}: {res['n_train']:,} train / {res['n_test']:,} test, V = {res['n_words']:,}, "
                  f"{res['n_tokens_train']:,} training tokens, {res['n_classes']} classes, K = {k}", "",
                  markdown_header(["method", "n_iter", "documents", "accuracy", "fit s", "sampling s", "refit s",
                                   "predict s"])]
        for sampler, label in (("gibbs", "Gibbs MedLDA"), ("ssgrld", "SSGRLD")):
            for r in sorted(res["rows"][sampler], key=lambda r: r["n_iter"]):
                extra = {kk: v for kk, v in r["params"].items() if kk != "n_iter"}
                tag = " (defaults)" if r.get("default") else (f" {json.dumps(extra)}" if extra else "")
                lines.append(f"| {label}{tag} | {r['n_iter']} | {r['n_docs']:,} | {r['accuracy']:.4f} | "
                             f"{r['fit_s']:.1f} | {r['sampling_s']:.1f} | {r['refit_s']:.1f} | {r['predict_s']:.1f} |")
        b, w = res["baseline"], res["bow_linearsvc"]
        lines.append(f"| batch LDA + LinearSVC | 30 | - | {b['accuracy']:.4f} | {b['fit_s']:.1f} | - | - | - |")
        lines.append(f"| LinearSVC on the words (reference) | - | - | {w['accuracy']:.4f} | {w['fit_s']:.1f} | - | - | - |")
        s = res["summary"]

        def where(r):
            return "never" if r is None else f"at n_iter = {r['n_iter']} ({r['fit_s']:.1f} s whole fit)"

        def ratio(v):
            return "-" if v is None else f"{v:.2f}"

        lines += ["", f"Band: Gibbs MedLDA's default accuracy {s['gibbs_accuracy']:.4f} minus "
                      f"{100 * results['settings']['tolerance']:g} point. Gibbs enters it {where(s['gibbs_entry'])}."]
        for r in s["reach"]:
            lines.append(f"SSGRLD {json.dumps(r['params']) if r['params'] else '(defaults)'} enters it "
                         f"{where(r['ssgrld_entry'])}: **whole-fit time, Gibbs entry ÷ SSGRLD entry "
                         f"{ratio(r['ratio_to_gibbs_entry'])}; Gibbs default run ÷ SSGRLD entry "
                         f"{ratio(r['ratio_to_gibbs_default'])}** (target ≥ 5).")
        lines += [f"MedLDA (better default) − LDA + LinearSVC: {100 * s['medlda_margin_over_baseline']:+.1f} points "
                  "(target ≥ 2).", ""]
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default="fortunes,wordnet-nouns", help="corpora (comma-separated)")
    p.add_argument("--k", type=int, default=20, help="topics K for every method (default: %(default)s)")
    p.add_argument("--n", type=int, default=None, help="random subset of the training documents")
    p.add_argument("--gibbs-iter", default="10,25,50", help="further Gibbs run lengths")
    p.add_argument("--ssgrld-iter", default="100,200,400", help="further SSGRLD run lengths")
    p.add_argument("--ssgrld-params", default="{}",
                   help="JSON MedLDA arguments of the further SSGRLD fits: an object, or a list of objects (one "
                   "series of run lengths each; {} is the defaults)")
    p.add_argument("--tolerance", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="write JSON results here")
    args = p.parse_args(argv)
    start = time.perf_counter()
    results = {"environment": environment(("numba", "sklearn", "numpy")), "settings": vars(args), "corpora": {}}
    for name in filter(None, args.data.split(",")):
        results["corpora"][name] = run_corpus(name, args)
    close_run(results, start, markdown(results), args.out)


if __name__ == "__main__":
    main()
