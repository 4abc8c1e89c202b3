"""A picture of M2DPM's clusters and per-component classifiers on a 2-D example
(paper 001's "descriptive clustering and predictive learning at once").

Data: a two-dimensional DP mixture from :func:`regbayes.datasets.make_dp_mixture_svm`
(CRP seating, Gaussian clusters with means drawn from N(0, 6^2 I), one linear classifier
per cluster, labels by eq. 37). M2DPM and the DP-means + SVM pipeline are fitted with the
same lambda; the figure shows, for each, the components (colours, grey borders), each
component's decision boundary (black) and the predicted class (background), beside the
true clusters.
"""
from __future__ import annotations

import time

import numpy as np

from ._common import markdown_table, write_outputs

NAME = "sva-clusters"
TITLE = "M2DPM on a 2-D DP mixture: clusters and per-component classifiers"
PARAMS = {"cluster_penalty": 12.0, "s": 1.0, "C": 0.3, "prior_scale": 1.0}


def run(out_dir, *, quick: bool = False, seed: int = 0, n_samples: int | None = None, n: int | None = None,
        progress: bool = False, **unused) -> dict:
    """Fit M2DPM and DPMeansSVC on ``n_samples`` 2-D points (default 600; quick: 200) and
    write ``sva-clusters.png``, ``sva-clusters.json`` and ``results.md``. ``n`` (the CLI's
    ``--n``) is ``n_samples``."""
    from sklearn.metrics import adjusted_rand_score
    from sklearn.model_selection import train_test_split

    from ..datasets import make_dp_mixture_svm
    from ..models.dpmeans import DPMeansSVC
    from ..models.m2dpm import M2DPM
    from ..plotting import COLOR_CYCLE, new_figure, plot_clusters

    start = time.perf_counter()
    if n_samples is None:
        n_samples = n
    n = int(n_samples) if n_samples is not None else (200 if quick else 600)
    X, y, clusters, _ = make_dp_mixture_svm("I", n_samples=n, n_features=2, alpha=1.0, max_clusters=6, sigma=1.0,
                                            center_scale=6.0, random_state=seed, return_clusters=True)
    X_tr, X_te, y_tr, y_te, c_tr, c_te = train_test_split(X, y, clusters, test_size=0.2, random_state=seed)
    models = {
        "M2DPM": M2DPM(random_state=seed, progress=progress, **PARAMS),
        "DPMeansSVC": DPMeansSVC(random_state=seed, cluster_penalty=PARAMS["cluster_penalty"] / PARAMS["s"],
                                 C=PARAMS["C"], prior_scale=PARAMS["prior_scale"]),
    }
    per = {}
    for name, model in models.items():
        t0 = time.perf_counter()
        model.fit(X_tr, y_tr)
        per[name] = {
            "seconds": time.perf_counter() - t0,
            "n_components": int(model.n_components_),
            "test_accuracy": float(model.score(X_te, y_te)),
            "adjusted_rand_index": float(adjusted_rand_score(c_tr, model.labels_)),
            "cluster_centers": model.cluster_centers_,
        }

    fig = new_figure(15.0, 4.8)
    axes = fig.subplots(1, 3)
    for k in np.unique(c_tr):
        mask = c_tr == k
        axes[0].scatter(X_tr[mask, 0], X_tr[mask, 1], s=10, color=COLOR_CYCLE[(k - 1) % len(COLOR_CYCLE)],
                        marker="o", label=f"cluster {k}")
    axes[0].set_title(f"truth: {len(np.unique(c_tr))} clusters")
    axes[0].legend(fontsize=7)
    for ax, (name, model) in zip(axes[1:], models.items()):
        plot_clusters(model, X_tr, y_tr, ax=ax, grid_size=100 if quick else 300, title=(
            f"{name}: {model.n_components_} components, test acc. {per[name]['test_accuracy']:.2f}"))

    rows = [[name, v["n_components"], v["test_accuracy"], v["adjusted_rand_index"], v["seconds"]] for name, v in per.items()]
    table = markdown_table(["method", "components", "test accuracy", "ARI vs true clusters", "fit s"], rows)
    seconds = time.perf_counter() - start
    numbers = {"experiment": NAME, "settings": {"quick": quick, "seed": seed, "n_samples": n, "params": PARAMS},
               "true_n_clusters": int(len(np.unique(c_tr))), "methods": per, "seconds": seconds}
    markdown = (f"# {TITLE}\n\n{n} points (80 % shown, fitted), true clusters: {len(np.unique(c_tr))}; "
                f"M2DPM {PARAMS}; DPMeansSVC with the same lambda / s.\n\n{table}\n\nTotal time: {seconds:.1f} s.\n")
    paths = write_outputs(out_dir, NAME, fig, numbers, markdown)
    return {"name": NAME, "seconds": seconds, "numbers": numbers, "table": table, **paths}
