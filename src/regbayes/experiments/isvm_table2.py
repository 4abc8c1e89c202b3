"""Table 2 of paper 000 (section 5.3): the Gibbs infinite SVM with its classifier step by
Gibbs sampling with data augmentation against SSGNHT within Gibbs (Algorithm 2).

For each data set and sampler: test accuracy (mean and std over ``repeats`` runs with
different seeds), the time spent in the eta step, and the total sampling time (z and eta
steps; compilation reported apart), beside scikit-learn baselines (multinomial logit =
``LogisticRegression``, ``LinearSVC``, RBF ``SVC``) and the paper's numbers.

Data sets:

* ``stand-in`` (built in): paper 001's Setting II generator
  (:func:`regbayes.datasets.make_dp_mixture_svm`) shaped like IJCNN1: 22 features, binary
  labels, ``n`` rows (default 20,000; quick 1,000), 80/20 split. Its labels are Bernoulli
  draws, so no method exceeds roughly 70 %.
* ``protein`` and ``ijcnn1`` when their svmlight files are given
  (``protein=(train, test)``, ``ijcnn1=(train, test)``): the paper's Protein (Ding &
  Dubchak 2001: 313 train / 385 test, 21 features, 27 classes) and LIBSVM's IJCNN1
  (49,990 train / 91,701 test, 22 features). Features are used as given.

The paper chose hyper-parameters by cross-validation; here both samplers share the
estimator's defaults (or ``params``), so the comparison is of the two eta steps under one
model. Timings on a shared machine are only as steady as its load.
"""
from __future__ import annotations

import time

import numpy as np

from ._common import markdown_table, write_outputs

NAME = "isvm-table2"
TITLE = "Table 2 (paper 000): Gibbs-iSVM vs SSGNHT-iSVM, accuracy and time"
SAMPLERS = ("gibbs", "ssgnht")
PAPER = {  # accuracy %, time for eta (min), total time (min)
    "protein": {"gibbs": (55.8, 8.31, 15.15), "ssgnht": (56.1, 0.17, 7.32), "MNL": (50.0, None, 0.10),
                "Linear SVM": (50.8, None, 0.03), "RBF-SVM": (53.1, None, 0.11)},
    "ijcnn1": {"gibbs": (94.2, 9.13, 22.71), "ssgnht": (94.2, 1.17, 13.84), "MNL": (91.3, None, 3.21),
               "Linear SVM": (91.0, None, 0.56), "RBF-SVM": (93.9, None, 2.79)},
}


def load_stand_in(n: int, seed: int):
    from ..datasets import make_dp_mixture_svm

    X, y = make_dp_mixture_svm("II", n_samples=n, n_features=22, random_state=seed)
    perm = np.random.default_rng(seed + 1).permutation(n)
    cut = int(0.8 * n)
    return X[perm[:cut]], X[perm[cut:]], y[perm[:cut]], y[perm[cut:]]


def load_files(train, test):
    from ..datasets import load_svmlight

    X_train, y_train = load_svmlight(train)
    X_test, y_test = load_svmlight(test, n_features=X_train.shape[1])
    return X_train.toarray(), X_test.toarray(), np.asarray(y_train), np.asarray(y_test)


def run_isvm(X_train, X_test, y_train, y_test, sampler, seed, params, progress=False):
    from ..models.isvm import InfiniteSVC

    start = time.perf_counter()
    clf = InfiniteSVC(sampler=sampler, random_state=seed, progress=progress, **params).fit(X_train, y_train)
    fit_seconds = time.perf_counter() - start
    t0 = time.perf_counter()
    accuracy = float(np.mean(clf.predict(X_test) == y_test))
    return {
        "accuracy": accuracy,
        "eta_seconds": float(np.sum(clf.trace_["eta_seconds"])),
        "z_seconds": float(np.sum(clf.trace_["z_seconds"])),
        "total_seconds": clf.trace_["sampling_seconds"],
        "compile_seconds": clf.trace_["compile_seconds"],
        "fit_seconds": fit_seconds,
        "predict_seconds": time.perf_counter() - t0,
        "n_components": int(clf.n_components_),
        "mean_components": float(np.mean(clf.n_components_trace_[clf.n_warmup :])),
    }


def run_baselines(X_train, X_test, y_train, y_test, rbf_limit=20000):
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import SVC, LinearSVC

    models = {"MNL": lambda: LogisticRegression(max_iter=2000), "Linear SVM": lambda: LinearSVC(),
              "RBF-SVM": lambda: SVC(kernel="rbf", gamma="scale")}
    out = {}
    for name, make in models.items():
        if name == "RBF-SVM" and len(y_train) > rbf_limit:
            out[name] = None
            continue
        start = time.perf_counter()
        model = make().fit(X_train, y_train)
        seconds = time.perf_counter() - start
        out[name] = {"accuracy": float(model.score(X_test, y_test)), "total_seconds": seconds}
    return out


def _mean_std(values):
    values = np.asarray(values, dtype=np.float64)
    return float(values.mean()), float(values.std())


def run(out_dir, *, n=None, quick=False, seed=0, repeats=None, params=None, protein=None, ijcnn1=None,
        samplers=SAMPLERS, progress=False, **unused) -> dict:
    """Run the experiment; write ``isvm-table2.png``, ``.json`` and ``results.md``.

    ``n``: rows of the stand-in (default 20,000; quick 1,000). ``repeats``: seeds per
    sampler (default 3; quick 1). ``params``: InfiniteSVC parameters shared by both
    samplers (default ``n_iter=100, n_warmup=50``; quick ``n_iter=20, n_warmup=10``).
    ``protein``/``ijcnn1``: ``(train_path, test_path)`` svmlight files.
    """
    from ..plotting import method_color, new_figure

    start = time.perf_counter()
    unknown = sorted(set(samplers) - set(SAMPLERS))
    if unknown:
        raise ValueError(f"unknown sampler {unknown}; choose from {SAMPLERS}")
    n = int(n) if n is not None else (1000 if quick else 20000)
    repeats = int(repeats) if repeats is not None else (1 if quick else 3)
    params = dict(params) if params is not None else (dict(n_iter=20, n_warmup=10) if quick else dict(n_iter=100, n_warmup=50))
    data = {"stand-in": load_stand_in(n, seed)}
    if protein:
        data["protein"] = load_files(*protein)
    if ijcnn1:
        data["ijcnn1"] = load_files(*ijcnn1)
    results, rows = {}, []
    for name, (X_train, X_test, y_train, y_test) in data.items():
        entry = {"n_train": len(y_train), "n_test": len(y_test), "n_features": X_train.shape[1],
                 "n_classes": int(len(np.unique(y_train))), "samplers": {}, "baselines": {}}
        for sampler in samplers:
            runs = [run_isvm(X_train, X_test, y_train, y_test, sampler, seed + r, params, progress) for r in range(repeats)]
            summary = {key: _mean_std([r[key] for r in runs]) for key in runs[0]}
            entry["samplers"][sampler] = {"runs": runs, "summary": summary}
        entry["baselines"] = run_baselines(X_train, X_test, y_train, y_test)
        results[name] = entry
        paper = PAPER.get(name, {})
        for sampler in samplers:
            s = entry["samplers"][sampler]["summary"]
            p = paper.get(sampler, (None, None, None))
            rows.append([name, f"{sampler}-iSVM", f"{100 * s['accuracy'][0]:.1f} ± {100 * s['accuracy'][1]:.1f}",
                         f"{s['eta_seconds'][0]:.2f} ± {s['eta_seconds'][1]:.2f}",
                         f"{s['total_seconds'][0]:.2f} ± {s['total_seconds'][1]:.2f}", s["compile_seconds"][0],
                         s["mean_components"][0], p[0], p[1], p[2]])
        for base, r in entry["baselines"].items():
            p = paper.get(base, (None, None, None))
            if r is None:
                rows.append([name, base, "skipped (n > 20,000)", "-", "-", "-", "-", p[0], p[1], p[2]])
                continue
            rows.append([name, base, f"{100 * r['accuracy']:.1f}", "-", f"{r['total_seconds']:.2f}", "-", "-", p[0], p[1], p[2]])
        if set(SAMPLERS) <= set(samplers):
            g, s = (entry["samplers"][k]["summary"]["eta_seconds"][0] for k in SAMPLERS)
            entry["eta_speedup"] = g / s if s > 0 else None
    headers = ["data", "method", "acc. %", "eta time s", "total s (z + eta)", "compile s", "mean K",
               "paper acc. %", "paper eta min", "paper total min"]
    table = markdown_table(headers, rows)

    fig = new_figure(4.0 * len(results) + 1, 3.4)
    axes = fig.subplots(1, len(results), squeeze=False)[0]
    for ax, (name, entry) in zip(axes, results.items()):
        labels = list(entry["samplers"])
        eta = [entry["samplers"][k]["summary"]["eta_seconds"][0] for k in labels]
        z = [entry["samplers"][k]["summary"]["z_seconds"][0] for k in labels]
        x = np.arange(len(labels))
        ax.bar(x, z, color="#bbbbbb", label="z step")
        ax.bar(x, eta, bottom=z, color=[method_color(k) for k in labels], label="eta step")
        for i, k in enumerate(labels):
            acc = entry["samplers"][k]["summary"]["accuracy"][0]
            ax.text(i, z[i] + eta[i], f"{100 * acc:.1f} %", ha="center", va="bottom", fontsize=8)
        ax.set_xticks(x, [f"{k}-iSVM" for k in labels])
        ax.set_ylabel("seconds")
        ax.set_title(f"{name} ({entry['n_train']:,} train)", fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle(TITLE, fontsize=9)
    seconds = time.perf_counter() - start
    numbers = {"experiment": NAME, "settings": {"n": n, "quick": quick, "seed": seed, "repeats": repeats,
                                                "params": params, "samplers": list(samplers)},
               "datasets": results, "paper": PAPER, "seconds": seconds}
    speedups = "; ".join(f"{k}: {v['eta_speedup']:.1f}x" for k, v in results.items() if v.get("eta_speedup"))
    markdown = (
        f"# {TITLE}\n\n"
        "InfiniteSVC with the eta | z step by Gibbs sampling with data augmentation (gibbs) or by SSGNHT on "
        f"minibatches (ssgnht), {params}, mean ± std over {repeats} seed(s). Times in seconds (the paper's in "
        "minutes, on its own data and machine); total = z step + eta step, compilation apart. Baselines: "
        "scikit-learn defaults.\n\n"
        f"{table}\n\n"
        + (f"eta-step speed-up, gibbs / ssgnht: {speedups}.\n\n" if speedups else "")
        + f"Total time: {seconds:.1f} s.\n"
    )
    paths = write_outputs(out_dir, NAME, fig, numbers, markdown)
    return {"name": NAME, "seconds": seconds, "numbers": numbers, "table": table, **paths}
