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
import logging
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the harness, also under runpy
from harness import environment, finish_environment, interleaved, log, markdown_header, write_json  # noqa: E402


# ----------------------------------------------------------------------------- corpora
def corpora(args):
    from regbayes.datasets.text import load_lda_reuters
    from regbayes.experiments.medlda_fig8 import load_corpus

    out = {}
    data = load_corpus("synthetic", n=args.n, seed=args.seed)
    out["synthetic"] = {"X": data["X_train"], "y": data["y_train"], "description": data["description"], "data": data}
    reuters = load_lda_reuters(min_class_size=10)
    out["reuters"] = {"X": reuters.counts, "y": reuters.target,
                      "description": f"lda package Reuters, {len(reuters.target_names)} dateline countries"}
    return out


def tokens(X):
    from regbayes.algorithms import lda_kernels as kern

    return kern.tokens_from_counts(X.tocsr())


# ----------------------------------------------------------------------------- throughput
def lda_package_sweep(X, K, alpha, beta, seed):
    """The ``lda`` package's per-iteration work: shuffle its random variates, then
    ``_sample_topics`` (Cython), exactly as ``LDA._fit`` does each iteration. Returns
    ``(one_sweep, tokens per call)``."""
    import lda

    logging.getLogger("lda").setLevel(logging.ERROR)
    model = lda.LDA(n_topics=K, n_iter=1, alpha=alpha, eta=beta, random_state=seed, refresh=10**9)
    model._initialize(X.toarray().astype(np.int64) if hasattr(X, "toarray") else X)
    rands = model._rands.copy()
    rng = np.random.RandomState(seed)

    def one_sweep():
        rng.shuffle(rands)
        model._sample_topics(rands)

    return one_sweep, len(model.WS)


def numba_collapsed_sweep(X, y, K, M, alpha, beta, seed):
    """``gibbs_medlda_sweep`` with M binary classifiers (M = 0: collapsed LDA). The values
    of eta, labels and 1/omega do not change the work per token."""
    from regbayes.algorithms import lda_kernels as kern

    doc_ptr, words = tokens(X)
    D, V = X.shape
    z = kern.random_assignments(words.shape[0], K, seed)
    state = list(kern.count_tables(doc_ptr, words, z, K, V))
    state.insert(0, z)
    rng = np.random.default_rng(seed)
    eta = rng.normal(0.0, 1.0, size=(M, K))
    if M == 1:
        y_sign = np.where(y == y.max(), 1.0, -1.0)[:, None]
    else:
        y_sign = np.where(y[:, None] == np.arange(M)[None, :], 1.0, -1.0) if M else np.zeros((D, 0))
    inv_omega = np.ones((D, M))
    calls = [0]

    def one_sweep():
        calls[0] += 1
        state[:] = kern.gibbs_medlda_sweep(doc_ptr, words, *state, eta, y_sign, inv_omega, alpha, beta, 1.0, 1.0,
                                           seed + calls[0])

    return one_sweep, words.shape[0]


def numba_fixed_topic_sweep(X, y, K, M, alpha, threads, seed, n_sweeps=4, n_burnin=2):
    """``fixed_topic_sweeps`` (eq. 22, Phi and eta fixed) over every document at once,
    ``n_sweeps`` sweeps per call, the assignments recorded as MedLDA's minibatch step
    does; ``threads`` numba threads (the parallel build) or the serial build (0)."""
    import inspect

    import numba

    from regbayes.algorithms import lda_kernels as kern

    doc_ptr, words = tokens(X)
    D, V = X.shape
    rng = np.random.default_rng(seed)
    phi_t = np.ascontiguousarray(rng.dirichlet(np.full(V, 0.1), size=K).T)
    eta = rng.normal(0.0, 1.0, size=(M, K))
    y_sign = np.where(y[:, None] == np.arange(M)[None, :], 1.0, -1.0)
    z = kern.random_assignments(words.shape[0], K, seed)
    kernel = kern.fixed_topic_sweeps if threads else getattr(kern, "fixed_topic_sweeps_serial", kern.fixed_topic_sweeps)
    values = dict(doc_ptr=doc_ptr, words=words, z=z, phi_t=phi_t, eta=eta, y_sign=y_sign,
                  y_class=y.astype(np.int64), mode=kern.MODE_BINARY, C=1.0, margin=1.0, alpha=alpha,
                  n_sweeps=n_sweeps, n_burnin=n_burnin, record=True, doc_keys=np.arange(D, dtype=np.int64),
                  init_random=False)
    names = list(inspect.signature(kernel.py_func).parameters)  # the kernel's own argument order
    calls = [0]

    def one_sweep():
        calls[0] += 1
        values["seed"] = seed + calls[0]
        previous = numba.get_num_threads()
        numba.set_num_threads(max(threads, 1))
        try:
            kernel(*[values[n] for n in names])
        finally:
            numba.set_num_threads(previous)

    return one_sweep, words.shape[0] * n_sweeps


def interleaved_rates(sweeps, repeats):
    """Tokens/s of every ``(one_sweep, tokens)`` in ``sweeps``: one untimed call each, then
    ``repeats`` rounds calling each in turn (so that machine load hits all alike); the
    median time per call."""
    seconds = interleaved({name: (lambda r, fn=fn: fn()) for name, (fn, _) in sweeps.items()}, repeats)
    return {name: {"tokens_per_s": float(sweeps[name][1] / np.median(s)), "sweep_s": float(np.median(s)),
                   "sweep_s_min": float(np.min(s)), "tokens_per_call": int(sweeps[name][1])}
            for name, s in seconds.items()}


def estimator_rate(X, y, sampler, K, n_iter, batch_size, seed):
    """``MedLDA`` end to end: tokens sampled / sampling wall time from ``trace_``, after a
    2-iteration warm-up fit on the same data (compilation outside the timed run)."""
    from regbayes.models.medlda import MedLDA

    params = dict(n_topics=K, sampler=sampler, batch_size=batch_size, random_state=seed, n_draws=1)
    start = time.perf_counter()
    MedLDA(**params, n_iter=2).fit(X, y)
    warm = time.perf_counter() - start
    model = MedLDA(**params, n_iter=n_iter).fit(X, y)
    trace = model.trace_
    wall = np.asarray(trace["wall_time"], dtype=np.float64)
    n_tok = np.asarray(trace["n_tokens"], dtype=np.float64)
    # skip the first iteration (one-off costs) when there are several
    rate = (n_tok[-1] - n_tok[0]) / (wall[-1] - wall[0]) if len(wall) > 1 else n_tok[-1] / wall[-1]
    return {"tokens_per_s": float(rate), "iterations": int(len(wall)), "sampling_s": float(wall[-1]),
            "seconds_per_iteration": float(np.median(np.diff(np.concatenate([[0.0], wall])))),
            "warm_up_fit_s": warm}


def jax_collapsed_sweep(X, K, alpha, beta, seed):
    """Collapsed LDA as a jitted JAX ``fori_loop`` over tokens (float32 counts, data passed
    as arguments, one uniform per token drawn before the loop). Compiled here, outside
    the timed calls; returns ``(one_sweep, tokens per call, compile seconds)``."""
    import jax
    import jax.numpy as jnp

    doc_ptr, words = tokens(X)
    D, V = X.shape
    docs = np.repeat(np.arange(D, dtype=np.int32), np.diff(doc_ptr))
    N = words.shape[0]

    def sweep(key, words, docs, z, ndk, nwk, nk):
        u = jax.random.uniform(key, (N,))

        def body(i, carry):
            z, ndk, nwk, nk = carry
            w, d, old = words[i], docs[i], z[i]
            ndk = ndk.at[d, old].add(-1.0)
            nwk = nwk.at[w, old].add(-1.0)
            nk = nk.at[old].add(-1.0)
            p = (ndk[d] + alpha) * (nwk[w] + beta) / (nk + V * beta)
            c = jnp.cumsum(p)
            new = jnp.minimum(jnp.sum(c < u[i] * c[-1]), K - 1).astype(z.dtype)
            return (z.at[i].set(new), ndk.at[d, new].add(1.0), nwk.at[w, new].add(1.0), nk.at[new].add(1.0))

        return jax.lax.fori_loop(0, N, body, (z, ndk, nwk, nk))

    rng = np.random.default_rng(seed)
    z0 = rng.integers(0, K, size=N).astype(np.int32)
    ndk = np.zeros((D, K), np.float32)
    np.add.at(ndk, (docs, z0), 1.0)
    nwk = np.zeros((V, K), np.float32)
    np.add.at(nwk, (words, z0), 1.0)
    nk = np.bincount(z0, minlength=K).astype(np.float32)
    state = [tuple(jnp.asarray(a) for a in (z0, ndk, nwk, nk))]
    data = (jnp.asarray(words), jnp.asarray(docs))
    key = [jax.random.key(seed)]
    start = time.perf_counter()
    compiled = jax.jit(sweep, donate_argnums=(3, 4, 5, 6)).lower(key[0], *data, *state[0]).compile()
    compile_s = time.perf_counter() - start

    def one_sweep():
        key[0], sub = jax.random.split(key[0])
        state[0] = jax.block_until_ready(compiled(sub, *data, *state[0]))

    return one_sweep, N, compile_s


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
    from regbayes.experiments import medlda_fig8
    from regbayes.experiments._topic_baseline import lda_svm_pipeline, online_lda_svm_curve

    data = corpus["data"]
    Xtr, ytr, Xte, yte = data["X_train"], data["y_train"], data["X_test"], data["y_test"]
    settings = medlda_fig8.method_settings(False, args.k, Xtr.shape[0], gibbs_sweeps=args.acc_gibbs_sweeps,
                                           ssgrld_iterations=args.acc_ssgrld_iter)
    runs = {}
    for method in ("gibbs", "ssgrld"):
        log(f"  accuracy curve: {method} ...")
        runs[method] = medlda_fig8.medlda_curve(Xtr, ytr, Xte, yte, **{**settings[method], "random_state": args.seed})
    log("  accuracy curve: LDA + LinearSVC ...")
    runs["online_baseline"] = online_lda_svm_curve(Xtr, ytr, Xte, yte, args.k, n_passes=5.0, batch_size=100,
                                                   random_state=args.seed)
    start = time.perf_counter()
    pipe = lda_svm_pipeline(args.k, random_state=args.seed).fit(Xtr, ytr)
    runs["batch_baseline"] = {"accuracy": float(np.mean(pipe.predict(Xte) == yte)),
                              "seconds": time.perf_counter() - start}
    summary = medlda_fig8.reach_summary(runs["gibbs"], runs["ssgrld"], tolerance=0.01)
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


def accuracy_at_docs(curve, milestones):
    docs, acc = np.asarray(curve["n_docs"]), np.asarray(curve["accuracy"])
    out = []
    for m in milestones:
        hit = np.nonzero(docs <= m)[0]
        out.append(float(acc[hit[-1]]) if len(hit) else None)
    return out


# ----------------------------------------------------------------------------- report
def fmt(v, digits=3):
    if v is None:
        return "-"
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    v = float(v)
    return f"{v:.{digits}g}" if (abs(v) >= 1e5 or (v != 0 and abs(v) < 1e-2)) else f"{v:.{digits}f}"


def markdown(results):
    lines = []
    for name, res in results["throughput"].items():
        lines += [f"#### Throughput on {name}: {res['n_docs']:,} documents, {res['n_tokens']:,} tokens, "
                  f"V = {res['n_words']:,}, {res['n_classes']} classes, K = {res['K']}", "",
                  markdown_header(["sampler", "tokens/s", "÷ lda package", "sweep / call / iteration s"])]
        for label, r in res["rows"].items():
            sweep = r.get("sweep_s", r.get("call_s", r.get("seconds_per_iteration")))
            lines.append(f"| {label} | {r['tokens_per_s']:.3g} | {r['ratio_to_lda']:.2f} | {fmt(sweep)} |")
        rows = res["rows"]
        L = res["n_classes"]
        g = rows.get(f"MedLDA(sampler='gibbs'), M = {L}, end to end")
        if g:
            lines += ["", f"**Gibbs MedLDA (M = {L}, end to end) tokens/s ÷ lda tokens/s = {g['ratio_to_lda']:.2f}** "
                          f"(target ≥ 0.5); binary kernel (M = 1) ÷ lda = "
                          f"{rows['regbayes numba: Gibbs MedLDA sweep, binary (M = 1)']['ratio_to_lda']:.2f}; "
                          f"collapsed LDA kernel (M = 0) ÷ lda = "
                          f"{rows['regbayes numba: collapsed LDA (M = 0)']['ratio_to_lda']:.2f}."]
        lines.append("")
    acc = results.get("accuracy")
    if acc:
        r = acc["runs"]
        milestones = sorted({int(x) for x in np.geomspace(1000, max(r["gibbs"]["n_docs"][-1], 1000), 7)})
        lines += [f"#### Test accuracy against documents processed (synthetic, {acc['n_train']:,} train / "
                  f"{acc['n_test']:,} test, K = {results['settings']['k']})", "",
                  markdown_header(["method", *(f"≤ {m:,} docs" for m in milestones), "final", "sampling s"])]
        for label, curve in (("SSGRLD MedLDA", r["ssgrld"]), ("Gibbs MedLDA", r["gibbs"]),
                             ("online LDA + LinearSVC", r["online_baseline"])):
            row = accuracy_at_docs(curve, milestones)
            last = curve.get("final_accuracy", curve["accuracy"][-1])
            secs = curve.get("sampling_seconds", curve["times"][-1])
            lines.append(f"| {label} | " + " | ".join(fmt(v) for v in row) + f" | {fmt(last)} | {fmt(secs)} |")
        lines.append(f"| batch LDA + LinearSVC | " + " | ".join("" for _ in milestones)
                     + f" | {fmt(r['batch_baseline']['accuracy'])} | {fmt(r['batch_baseline']['seconds'])} |")
        s = acc["summary"]
        lines += ["", f"Gibbs MedLDA final accuracy (mean of last 3 snapshots) {fmt(s.get('reference_accuracy'))}; "
                      f"Gibbs stays within 1 point from {fmt(s.get('gibbs_docs'))} documents / "
                      f"{fmt(s.get('gibbs_seconds'))} s; SSGRLD stays at or above it minus 1 point from "
                      f"{fmt(s.get('ssgrld_docs'))} documents / {fmt(s.get('ssgrld_seconds'))} s. "
                      f"**Gibbs ÷ SSGRLD: documents {fmt(s.get('docs_ratio'))}, wall time {fmt(s.get('time_ratio'))}** "
                      "(targets ≥ 10 and ≥ 5).", ""]
    rc = results.get("refit_curve")
    if rc:
        lines += [f"#### Default prediction (refitted classifier) against run length (synthetic, {rc['n_train']:,} "
                  f"train / {rc['n_test']:,} test, K = {results['settings']['k']}, seeds {rc['seeds']})", "",
                  markdown_header(["sampler", "n_iter", "documents", ("accuracy per seed", "l"), "mean", "sampling s (mean)"])]
        ssgrld_label = "SSGRLD" + (f" {json.dumps(rc['ssgrld_params'])}" if rc.get("ssgrld_params") else "")
        for sampler, label in (("ssgrld", ssgrld_label), ("gibbs", "Gibbs MedLDA")):
            for r in rc["rows"][sampler]:
                per_seed = " / ".join(f"{run['accuracy']:.3f}" for run in r["runs"])
                lines.append(f"| {label} | {r['n_iter']} | {r['n_docs']:,} | {per_seed} | {r['accuracy']:.3f} | "
                             f"{r['sampling_s']:.1f} |")
        s = rc["summary"]
        reach = s["reach"]

        def where(x):
            return "never" if x is None else f"from {x['n_docs']:,} documents / {x['sampling_s']:.1f} s"

        lines += ["", f"Gibbs MedLDA's final accuracy (longest run, seed mean) {s['gibbs_final_accuracy']:.3f}. "
                      f"Within 1 point of it: Gibbs {where(reach['gibbs'])}, SSGRLD {where(reach['ssgrld'])}."
                      + (f" **Gibbs ÷ SSGRLD: documents {s['docs_ratio']:.1f}, sampling time {s['time_ratio']:.1f}** "
                         "(targets ≥ 10 and ≥ 5)." if "docs_ratio" in s else ""), ""]
    return "\n".join(lines)


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
    results["total_seconds"] = time.perf_counter() - start
    finish_environment(results["environment"])
    print(markdown(results))
    print(f"Total {results['total_seconds']:.0f} s; load average {results['environment'].get('load_average_at_start')} "
          f"at the start, {results['environment'].get('load_average_at_end')} at the end.")
    if args.out:
        write_json(args.out, results, drop_keys=("data",))


if __name__ == "__main__":
    main()
