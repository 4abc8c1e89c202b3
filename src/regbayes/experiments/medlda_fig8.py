"""Figure 8 of paper 000 (Section 5.2.1): MedLDA test accuracy against documents
processed and against wall time -- SSGRLD (Algorithm 1) vs Gibbs MedLDA with data
augmentation vs the two-stage LDA + LinearSVC baseline, at the same K (the paper: 50).

Corpus (``corpus="auto"``): 20 Newsgroups (bydate train / test, headers, footers and
quotes removed, English stop words removed as in the paper) when
:func:`regbayes.datasets.text.find_20newsgroups` finds it on this machine; otherwise an
offline stand-in, named as one in the outputs: a synthetic corpus drawn from the LDA +
max-margin generative model (:func:`regbayes.datasets.topic_corpus.make_topic_corpus`)
with ``n`` training documents (default 12,000, about the size of 20news' 11,269) and a
quarter as many test documents, with readable word names (:func:`synthetic_vocabulary`).
``data`` (``regbayes reproduce medlda-fig8 --data 20news``;
:mod:`regbayes.experiments.data_option`) reads the paper's corpus: "20news" (the
registry's checksummed archive, downloaded and extracted when missing), a folder of the
standard files, or scikit-learn's cache file ``20news-bydate_py3.pkz``; or a labeled
corpus that a Debian package installs, "wordnet-nouns" or "fortunes" (a fixed 80 / 20
split, the same vocabulary rule: :mod:`regbayes.experiments.corpus_split`).

``paper_settings`` sets paper 000 Sec. 5.2.1's 20news hyper-parameters (:data:`PAPER_MEDLDA`):
alpha = beta = 1, c = 1, l = 164, one binary classifier per class ("one-vs-all",
``multi_class="ovr"``), and the papers' prediction rule (``refit_classifier=False``: the
eta of training votes on E[zbar] of a new document; the curves use it whatever the
setting); K stays 50 unless ``k`` is given. ``hyper`` overrides any of them. The JSON
records them under ``settings.paper_settings``.

Curves: MedLDA keeps a snapshot of (Phi, eta) every few iterations (``snapshot_every``);
each snapshot's test accuracy comes from ``MedLDA.staged_predict`` and is placed at the
snapshot's cumulative documents processed and sampling wall time (snapshot and test
scoring time excluded). A Gibbs sweep processes every training document; an SSGRLD
iteration processes ``batch_size``. The baseline curve is online LDA (minibatches of
the same size) followed by a LinearSVC fitted at each checkpoint
(:func:`regbayes.experiments.topic_baseline.online_lda_svm_curve`); the batch LDA +
LinearSVC pipeline's accuracy is drawn as a dashed line. The table adds the same batch LDA
stage with the classifier that ``MedLDA(refit_classifier=True)`` predicts with
(:func:`regbayes.experiments.topic_baseline.lda_bayes_svm_accuracy`), which separates what
MedLDA's supervised topics add from what that classifier adds.

The summary also measures the issue's targets: the documents processed and wall time
SSGRLD needs to reach (and stay within ``tolerance`` of) Gibbs MedLDA's final accuracy,
against what Gibbs needs to get there.
"""
from __future__ import annotations

import time

import numpy as np

from ._common import band_entry_text, finish, markdown_table, ratio_text, stays_from, topics_asked

NAME = "medlda-fig8"
TITLE = "Fig. 8: MedLDA test accuracy vs documents processed and wall time"
METHODS = ("ssgrld", "gibbs", "baseline")
CORPORA = ("auto", "20news", "synthetic")
DEFAULT_K = 50
#: Paper 000 Sec. 5.2.1, 20news: "alpha = 1, beta = 1, c = 1, l = 164", one-vs-all (Sec. 5.2),
#: prediction by the eta of training (Sec. 4.1.2, "as described in [42]").
PAPER_MEDLDA = dict(alpha=1.0, beta=1.0, C=1.0, margin=164.0, multi_class="ovr", refit_classifier=False)
DEFAULT_N = 12000
QUICK_N = 300

#: Synthetic corpus settings (make_topic_corpus): 20 classes as in 20news, 20 true topics,
#: Crammer–Singer labels that are nearly a deterministic function of zbar_d (c = 10).
SYNTHETIC = dict(n_topics=20, n_words=2000, doc_length=80.0, n_classes=20, alpha=0.1, beta=0.05,
                 C=10.0, margin=1.0, prior_scale=3.0)
QUICK_SYNTHETIC = dict(n_topics=5, n_words=150, doc_length=40.0, n_classes=3, alpha=0.1, beta=0.05,
                       C=10.0, margin=1.0, prior_scale=3.0)

#: Readable names for the synthetic topics (word j of topic k is "<theme k><rank>").
THEMES = (
    "space", "hockey", "guns", "crypto", "medic", "autos", "bike", "church", "mac", "window",
    "graphic", "politic", "mideast", "baseball", "sale", "circuit", "atheism", "disk", "music", "film",
    "food", "travel", "school", "law", "market", "ocean", "garden", "chess", "weather", "farm",
    "mining", "poetry", "opera", "dance", "rail", "ship", "flight", "tennis", "golf", "ski",
    "dog", "cat", "bird", "fish", "tree", "rock", "metal", "glass", "paper", "wood",
)


# ----------------------------------------------------------------------------- corpus
def synthetic_vocabulary(topic_word) -> list:
    """Word names for a synthetic vocabulary: word w is named after the true topic with
    the largest ``topic_word[k, w]`` (its theme, :data:`THEMES`) and its rank within
    that topic's words, e.g. ``"space1"`` for the most probable word of the "space"
    topic. A learned topic whose top words are ``space1, space3, space2`` has found the
    true "space" topic."""
    phi = np.asarray(topic_word, dtype=np.float64)
    K, V = phi.shape
    owner = np.argmax(phi, axis=0)
    names = [""] * V
    for k in range(K):
        theme = THEMES[k] if k < len(THEMES) else f"topic{k}_"
        words = np.nonzero(owner == k)[0]
        for rank, w in enumerate(words[np.argsort(-phi[k, words], kind="stable")], start=1):
            names[w] = f"{theme}{rank}"
    return names


def _split(n_total, n_test, seed):
    perm = np.random.default_rng(seed + 1).permutation(n_total)
    return perm[n_test:], perm[:n_test]


def load_corpus(corpus: str = "auto", *, n: int | None = None, quick: bool = False, seed: int = 0,
                folder=None, synthetic: dict | None = None, data=None) -> dict:
    """The experiment's data as a dict: ``X_train``, ``X_test`` (CSR counts), ``y_train``,
    ``y_test`` (int), ``class_names``, ``vocabulary``, ``name``, ``description``,
    ``stand_in`` (True for the synthetic corpus) and ``record`` (for the JSON); for the
    synthetic corpus also the truth: ``topic_word``, ``coef`` and ``doc_topic_train``.

    ``corpus``: "20news" (fails with the loader's message when absent), "synthetic", or
    "auto" (20news when present and not ``quick``, else synthetic). ``n``: training
    documents (synthetic; for 20news a random subset of the training split when given, by
    default 300 with ``quick``, which also keeps a quarter as many test documents).
    ``data``: a registered corpus name, a folder or scikit-learn's cache file
    (:mod:`regbayes.experiments.data_option`); it selects 20news whatever ``corpus`` says.
    """
    from ..validation import check_choice

    check_choice("corpus", corpus, CORPORA)
    if data is not None:
        from .data_option import CORPUS, SYSTEM_CORPORA, corpus_location, resolve

        source = resolve(data, CORPUS)
        if source.kind == "registered" and source.name in SYSTEM_CORPORA:
            from .corpus_split import load_system_split

            out = load_system_split(source, n=n, seed=seed, quick=quick)
            out["record"] = {**source.record(), "description": out["description"]}
            return out
        where = corpus_location(source)
        out = _load_20news(n if n is not None else (QUICK_N if quick else None), seed, where["folder"],
                           data_home=where["data_home"], quick=quick)
        out["record"] = {**source.record(), "description": out["description"]}
        return out
    if corpus == "auto":
        from ..datasets.text import find_20newsgroups

        present = find_20newsgroups("all", folder=folder) is not None
        corpus = "20news" if present and not quick else "synthetic"
    if corpus == "20news":
        out = _load_20news(n, seed, folder)
        out["record"] = {"name": "20news", "kind": "found on this machine", "stand_in": False,
                         "description": out["description"]}
        return out
    out = _load_synthetic(n, quick, seed, synthetic)
    out["record"] = {"name": "synthetic", "kind": "stand-in", "stand_in": True, "stands_in_for": "20 Newsgroups",
                     "description": out["description"]}
    return out


def _load_20news(n, seed, folder, data_home=None, quick=False):
    from ..datasets.text import load_20newsgroups
    from .corpus_split import vectorize

    train = load_20newsgroups("train", folder=folder, data_home=data_home)
    test = load_20newsgroups("test", folder=folder, data_home=data_home)
    texts, y_train = train.texts, train.target
    test_texts, y_test = test.texts, test.target
    if n is not None and n < len(texts):
        keep = np.sort(np.random.default_rng(seed).choice(len(texts), size=n, replace=False))
        texts, y_train = [texts[i] for i in keep], y_train[keep]
    if quick and max(20, len(texts) // 4) < len(test_texts):
        keep = np.sort(np.random.default_rng(seed + 1).choice(len(test_texts), size=max(20, len(texts) // 4),
                                                                replace=False))
        test_texts, y_test = [test_texts[i] for i in keep], y_test[keep]
    # English stop words removed as in the paper; rare and ubiquitous terms dropped.
    out = vectorize(texts, y_train, test_texts, y_test)
    n_empty = out.pop("n_empty")
    return {
        **out, "stand_in": False, "class_names": list(train.target_names),
        "name": "20news",
        "description": (f"20 Newsgroups bydate ({train.source}); CountVectorizer(stop_words='english', "
                        f"min_df=5, max_df=0.5); documents left empty dropped: "
                        f"{n_empty[0]} train, {n_empty[1]} test"),
    }


def _load_synthetic(n, quick, seed, settings):
    from ..datasets.topic_corpus import make_topic_corpus

    settings = dict(settings or (QUICK_SYNTHETIC if quick else SYNTHETIC))
    n_train = int(n) if n is not None else (QUICK_N if quick else DEFAULT_N)
    n_test = max(20, n_train // 4)
    X, y, topic_word, doc_topic, coef = make_topic_corpus(n_train + n_test, random_state=seed, return_coef=True,
                                                          **settings)
    # Labels come from random weights without intercepts, so some classes may draw no
    # document: keep the classes that occur, renumbered 0..L-1 (with their weight rows).
    present, y = np.unique(y, return_inverse=True)
    if coef.shape[0] > 1:
        coef = coef[present]
    train, test = _split(n_train + n_test, n_test, seed)
    return {
        "X_train": X[train].tocsr(), "y_train": y[train], "X_test": X[test].tocsr(), "y_test": y[test],
        "class_names": [f"class {c}" for c in present],
        "vocabulary": synthetic_vocabulary(topic_word), "topic_word": topic_word, "coef": coef,
        "doc_topic_train": doc_topic[train],
        "name": "synthetic",
        "stand_in": True,
        "description": (f"offline stand-in for 20 Newsgroups: make_topic_corpus({n_train + n_test:,} documents, "
                        + ", ".join(f"{k}={v}" for k, v in settings.items())
                        + f", random_state={seed}); {len(present)} classes occur; {n_test:,} held out"),
        "settings": settings,
    }


# ----------------------------------------------------------------------------- runs
def medlda_curve(X_train, y_train, X_test, y_test, *, warm_up: bool = True, **params) -> dict:
    """Fit ``MedLDA(**params)`` (which must set ``snapshot_every``) and return the test
    accuracy of every snapshot against its documents processed and wall time.

    ``warm_up``: first fit the same model for 2 iterations on the same data, so that the
    compiled kernels (numba caches, JAX programs for these shapes) exist before the timed
    run, whose ``trace_`` times would otherwise include compilation; the warm-up's wall
    time is reported as ``warm_up_seconds``."""
    from ..models.medlda import MedLDA

    warm_up_seconds = 0.0
    if warm_up:
        start = time.perf_counter()
        MedLDA(**{**params, "n_iter": 2, "snapshot_every": None, "n_draws": 1, "progress": False}).fit(
            X_train, y_train)
        warm_up_seconds = time.perf_counter() - start
    model = MedLDA(**params)
    start = time.perf_counter()
    model.fit(X_train, y_train)
    fit_seconds = time.perf_counter() - start
    y_test = np.asarray(y_test)
    out = {"n_docs": [], "times": [], "iterations": [], "accuracy": []}
    for snapshot, labels in model.staged_predict(X_test):
        out["n_docs"].append(int(snapshot["n_docs"]))
        out["times"].append(float(snapshot["wall_time"]))
        out["iterations"].append(int(snapshot["iteration"]))
        out["accuracy"].append(float(np.mean(np.asarray(labels) == y_test)))
    trace = model.trace_
    n_tokens = float(np.asarray(trace["n_tokens"])[-1])
    sampling = float(np.asarray(trace["wall_time"])[-1])
    out.update(
        final_accuracy=float(np.mean(model.predict(X_test) == y_test)),
        last_snapshot_accuracy=out["accuracy"][-1] if out["accuracy"] else float("nan"),
        fit_seconds=fit_seconds, sampling_seconds=sampling, warm_up_seconds=warm_up_seconds,
        n_iter=int(np.asarray(trace["iteration"])[-1]) + 1,
        n_docs_total=int(np.asarray(trace["n_docs"])[-1]), n_tokens_total=n_tokens,
        tokens_per_second=n_tokens / sampling if sampling > 0 else float("nan"),
        params={k: v for k, v in params.items() if not callable(v)},
    )
    return out



def reach_summary(gibbs: dict, ssgrld: dict, *, tolerance: float = 0.01, final_window: int = 3) -> dict:
    """The issue's speed target, measured on the curves.

    Reference: Gibbs MedLDA's final accuracy (mean of its last ``final_window``
    snapshots, to damp test-set noise). Gibbs "reaches" it at the first snapshot after
    which it stays within ``tolerance``; SSGRLD at the first snapshot after which its
    accuracy stays at or above ``reference - tolerance``. Returns documents and wall
    time of both and their ratios (Gibbs / SSGRLD).
    """
    g_acc, s_acc = np.asarray(gibbs["accuracy"]), np.asarray(ssgrld["accuracy"])
    if len(g_acc) == 0 or len(s_acc) == 0:
        return {"reference_accuracy": None}
    reference = float(np.mean(g_acc[-final_window:]))
    gi = stays_from(np.abs(g_acc - reference) <= tolerance)
    si = stays_from(s_acc >= reference - tolerance)
    out = {"reference_accuracy": reference, "tolerance": tolerance,
           "gibbs_docs": gibbs["n_docs"][gi] if gi is not None else None,
           "gibbs_seconds": gibbs["times"][gi] if gi is not None else None,
           "ssgrld_docs": ssgrld["n_docs"][si] if si is not None else None,
           "ssgrld_seconds": ssgrld["times"][si] if si is not None else None,
           "ssgrld_best_accuracy": float(s_acc.max())}
    if gi is not None and si is not None:
        out["docs_ratio"] = out["gibbs_docs"] / max(out["ssgrld_docs"], 1)
        out["time_ratio"] = out["gibbs_seconds"] / max(out["ssgrld_seconds"], 1e-12)
    else:
        out["docs_ratio"] = out["time_ratio"] = None
    return out


def method_settings(quick: bool, k: int, n_train: int, *, gibbs_sweeps=None, ssgrld_iterations=None,
                    batch_size=None, hyper=None) -> dict:
    """MedLDA parameters per sampler. Gibbs: ``gibbs_sweeps`` sweeps (default 40, where
    its accuracy has levelled off on the default corpus; quick 6), a snapshot every sweep
    (every other one past 30). SSGRLD: minibatches of ``batch_size`` (default 100; quick
    20) for ``ssgrld_iterations`` iterations (default as many documents as 5 Gibbs sweeps,
    at least 500; quick 30), about 40 snapshots."""
    hyper = dict(hyper or {})
    sweeps = int(gibbs_sweeps or (6 if quick else 40))
    batch = int(batch_size or (20 if quick else 100))
    batch = min(batch, n_train)
    iterations = int(ssgrld_iterations or (30 if quick else max(500, 5 * n_train // batch)))
    common = dict(n_topics=k, random_state=0, **hyper)
    return {
        "gibbs": dict(sampler="gibbs", n_iter=sweeps, snapshot_every=1 if sweeps <= 30 else 2, **common),
        "ssgrld": dict(sampler="ssgrld", n_iter=iterations, batch_size=batch,
                       snapshot_every=max(1, iterations // 40), **common),
    }


def run(
    out_dir,
    *,
    quick: bool = False,
    seed: int = 0,
    progress: bool = False,
    k: int | None = None,
    n: int | None = None,
    corpus: str = "auto",
    folder=None,
    methods=METHODS,
    gibbs_sweeps: int | None = None,
    ssgrld_iterations: int | None = None,
    batch_size: int | None = None,
    tolerance: float = 0.01,
    hyper: dict | None = None,
    data=None,
    paper_settings: bool = False,
    **unused,
) -> dict:
    """Run the experiment; write ``medlda-fig8.png``, ``medlda-fig8.json``, ``results.md``.

    ``k``: topics for every method (default 50; quick 5). ``n``: training documents of
    the synthetic corpus (default 12,000; quick 300), or of 20news a random subset.
    ``corpus``: "auto", "20news" or "synthetic"; ``folder``: a folder of the 20news
    standard files; ``data``: the ``--data`` value (module docstring), which overrides
    both. ``methods``: subset of ("ssgrld", "gibbs", "baseline"). ``hyper``: extra MedLDA
    parameters for both samplers (alpha, beta, C, margin, prior_scale, ...), over
    :data:`PAPER_MEDLDA` with ``paper_settings``. ``tolerance``: accuracy tolerance
    (fraction) of the target summary.
    """
    from ..plotting import accuracy_vs_progress
    from .topic_baseline import BASELINE_CONFIG, lda_bayes_svm_accuracy, lda_svm_pipeline, online_lda_svm_curve

    start = time.perf_counter()
    unknown = sorted(set(methods) - set(METHODS))
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; choose from {METHODS}")
    k = topics_asked(k, quick, DEFAULT_K)
    data = load_corpus(corpus, n=n, quick=quick, seed=seed, folder=folder, data=data)
    X_train, X_test, y_train, y_test = data["X_train"], data["X_test"], data["y_train"], data["y_test"]
    hyper = {**(PAPER_MEDLDA if paper_settings else {}), **(hyper or {})}
    settings = method_settings(quick, k, X_train.shape[0], gibbs_sweeps=gibbs_sweeps,
                               ssgrld_iterations=ssgrld_iterations, batch_size=batch_size, hyper=hyper)
    curves, runs = {}, {}
    for method in ("gibbs", "ssgrld"):
        if method in methods:
            params = {**settings[method], "random_state": seed, "progress": progress}
            runs[method] = medlda_curve(X_train, y_train, X_test, y_test, **params)
            label = "gibbs MedLDA (full data)" if method == "gibbs" else \
                f"ssgrld MedLDA (batch {params['batch_size']})"
            curves[label] = runs[method]
    baseline_lines = {}
    if "baseline" in methods:
        batch = settings["ssgrld"]["batch_size"]
        passes = 2.0 if quick else 5.0
        online = online_lda_svm_curve(X_train, y_train, X_test, y_test, k, n_passes=passes,
                                      batch_size=batch, random_state=seed)
        t0 = time.perf_counter()
        pipe = lda_svm_pipeline(k, max_iter=10 if quick else BASELINE_CONFIG["max_iter"], random_state=seed)
        pipe.fit(X_train, y_train)
        batch_seconds = time.perf_counter() - t0
        batch_acc = float(np.mean(pipe.predict(X_test) == y_test))
        bayes_acc = lda_bayes_svm_accuracy(pipe.named_steps["lda"], X_train, y_train, X_test, y_test,
                                           random_state=seed)
        runs["baseline"] = {"online": online, "batch_accuracy": batch_acc, "batch_seconds": batch_seconds,
                            "batch_bayes_svm_accuracy": bayes_acc,
                            "config": {**BASELINE_CONFIG, "max_iter": pipe.named_steps["lda"].max_iter,
                                       "online_passes": passes, "online_batch_size": batch}}
        curves[f"online LDA + LinearSVC (batch {batch})"] = online
        baseline_lines[f"batch LDA + LinearSVC ({batch_acc:.3f})"] = batch_acc
    summary = reach_summary(runs["gibbs"], runs["ssgrld"], tolerance=tolerance) \
        if {"gibbs", "ssgrld"} <= set(runs) else {}
    rows = _rows(runs)
    table = markdown_table(["method", "iterations", "documents processed", "sampling s", "tokens/s",
                            "final test acc.", "note"], rows)
    fig = accuracy_vs_progress(curves, baseline=baseline_lines,
                               title=f"{TITLE} ({data['name']}, K = {k}, {X_train.shape[0]:,} train / "
                                     f"{X_test.shape[0]:,} test)")
    text = (f"Corpus: {data['description']}. K = {k}. Accuracy of each method's classifier on the "
            "held-out documents against documents processed and sampling wall time (compilation, "
            "snapshots and test scoring excluded).")
    return finish(out_dir, NAME, TITLE, start, fig, table, text, {
        "settings": {"quick": quick, "seed": seed, "k": k, "corpus": data["name"], "n_train": X_train.shape[0],
                     "n_test": X_test.shape[0], "n_words": X_train.shape[1],
                     "n_tokens_train": int(X_train.sum()), "methods": list(methods),
                     "medlda": {m: {kk: v for kk, v in s.items() if not callable(v)} for m, s in settings.items()},
                     "corpus_description": data["description"], "stand_in": data["stand_in"], "data": data["record"],
                     "paper_settings": dict(PAPER_MEDLDA) if paper_settings else False},
        "runs": runs,
        "target_summary": summary,
    }, after=_summary_text(summary))


def _rows(runs):
    rows = []
    for method in ("gibbs", "ssgrld"):
        if method in runs:
            r = runs[method]
            rows.append([method + " MedLDA", r["n_iter"], r["n_docs_total"], r["sampling_seconds"],
                         r["tokens_per_second"], r["final_accuracy"],
                         f"{len(r['accuracy'])} snapshots; fit {r['fit_seconds']:.1f} s (scoring included)"])
    if "baseline" in runs:
        b = runs["baseline"]
        rows.append(["online LDA + LinearSVC", "-", b["online"]["n_docs"][-1], b["online"]["times"][-1], "-",
                     b["online"]["final_accuracy"], f"{b['config']['online_passes']:g} passes"])
        rows.append(["batch LDA + LinearSVC", b["config"]["max_iter"], "-", b["batch_seconds"], "-",
                     b["batch_accuracy"], "sklearn LatentDirichletAllocation (batch VB) + LinearSVC"])
        if "batch_bayes_svm_accuracy" in b:
            rows.append(["batch LDA + MedLDA's refit classifier", "-", "-", "-", "-", b["batch_bayes_svm_accuracy"],
                         "the same LDA stage; standardised proportions, Bayesian SVM as in refit_classifier"])
    return rows


def _summary_text(summary):
    """The paragraph of the target summary after the table ("" without one)."""
    if summary.get("reference_accuracy") is None:
        return ""
    tol = 100 * summary["tolerance"]
    return (
        "Curves and the comparison below use each snapshot's own eta of training (the papers' "
        "prediction rule, `staged_predict`); the table's final accuracy is `predict`'s, which "
        "with `refit_classifier` (default) uses a classifier refitted on label-free topic "
        "proportions. "
        f"Gibbs MedLDA's final snapshot accuracy (mean of its last 3 snapshots): {summary['reference_accuracy']:.4f}. "
        f"Gibbs stays within {tol:g} point(s) of it {band_entry_text(summary['gibbs_docs'], summary['gibbs_seconds'])}; "
        f"SSGRLD stays at or above it minus {tol:g} point(s) {band_entry_text(summary['ssgrld_docs'], summary['ssgrld_seconds'])} "
        f"(best SSGRLD snapshot {summary['ssgrld_best_accuracy']:.4f}). Ratios Gibbs / SSGRLD: "
        f"documents {ratio_text(summary['docs_ratio'])}, wall time {ratio_text(summary['time_ratio'])}.\n\n")
