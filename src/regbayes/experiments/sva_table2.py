"""Table 2 of paper 001: the number of components M2DPM infers against the data size.

Protocol (paper 001, "Results on synthetic datasets", Table 2): 10,000 10-dimensional
instances are drawn from a DP mixture, and M2DPM is run, with one fixed set of
hyper-parameters, on the first n0 of them for n0 in {100, 300, 1000, 3000, 10000}. Because
the CRP seats the instances in order, the first n0 instances are themselves a DP-mixture
sample and may hold fewer clusters (K0) than the whole set. The table gives K0, the
inferred number K and the fit time; time should grow near-linearly in n0.

The paper gives neither its generator's concentration nor its cluster means. Setting I's
generator (:func:`regbayes.datasets.make_dp_mixture_svm`: Gaussian clusters with sigma =
0.5, a linear classifier per cluster, labels by eq. 37) is used with the means drawn from
the base measure N(0, 3^2 I) (``center_scale``; Setting I's means on the diagonal
(k, ..., k) are only 3.2 apart, about the reach of one cluster's points, which makes the
count ambiguous for any lambda), ``alpha`` = 2 (K0 then spans about the paper's 8-14 over
this range) and no cap on the number of clusters. K0 counts every cluster present among
the first n0 points, singletons included.
"""
from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ._common import markdown_table, write_outputs

NAME = "sva-table2"
TITLE = "Table 2 of paper 001: components inferred by M2DPM against the data size"
SIZES = (100, 300, 1000, 3000, 10000)
PAPER = {100: (8, 8, 0.03), 300: (9, 8, 0.07), 1000: (11, 11, 0.54), 3000: (13, 12, 0.91), 10000: (14, 14, 5.45)}
# One fixed set of hyper-parameters for every n0 (the paper: "under the same set").
PARAMS = {"s": 10.0, "cluster_penalty": 100.0, "C": 0.1, "prior_scale": 1.0}
CENTER_SCALE = 3.0


def run(
    out_dir,
    *,
    quick: bool = False,
    seed: int = 0,
    sizes=None,
    alpha: float = 2.0,
    center_scale: float = CENTER_SCALE,
    n_repeats: int = 1,
    params: dict | None = None,
    progress: bool = False,
    **unused,
) -> dict:
    """Run Table 2 and write ``sva-table2.png``, ``sva-table2.json`` and ``results.md``.

    ``sizes`` the n0 values (default :data:`SIZES`; quick: 100 and 300), ``alpha`` the CRP
    concentration, ``n_repeats`` independent 10,000-point data sets (the table shows the
    first; the JSON all), ``params`` overrides :data:`PARAMS`.
    """
    from ..datasets import make_dp_mixture_svm
    from ..models.m2dpm import M2DPM
    from ..plotting import new_figure

    start = time.perf_counter()
    sizes = tuple(int(s) for s in (sizes if sizes is not None else ((100, 300) if quick else SIZES)))
    params = {**PARAMS, **(params or {})}
    n_total = max(sizes)
    runs = []
    for r in range(int(n_repeats)):
        X, y, clusters, _ = make_dp_mixture_svm(
            "I", n_samples=n_total, alpha=alpha, max_clusters=n_total, random_state=seed * 1000 + r,
            return_clusters=True, center_scale=center_scale,
        )
        with warnings.catch_warnings():  # one iteration: a warm-up, not a fit
            warnings.simplefilter("ignore", ConvergenceWarning)
            M2DPM(max_iter=1).fit(X[:20], y[:20])  # compile the numba kernels outside the timings
        rows = []
        for n0 in sizes:
            model = M2DPM(random_state=seed, progress=progress, **params)
            t0 = time.perf_counter()
            model.fit(X[:n0], y[:n0])
            secs = time.perf_counter() - t0
            sizes_true = np.bincount(clusters[:n0])
            rows.append({
                "n0": n0, "K0": int(np.count_nonzero(sizes_true)), "K": int(model.n_components_),
                "K0_at_least_2_points": int(np.count_nonzero(sizes_true >= 2)),
                "seconds": secs, "iterations": int(model.n_iter_), "train_accuracy": float(model.score(X[:n0], y[:n0])),
            })
        runs.append(rows)

    first = runs[0]
    headers = ["n0", "K0 (truth)", "K (M2DPM)", "abs(K - K0)", "time (s)", "time / n0 (ms)", "iterations",
               "paper K0", "paper K", "paper time (s)"]
    table_rows = []
    for row in first:
        paper = PAPER.get(row["n0"], ("-", "-", "-"))
        table_rows.append([row["n0"], row["K0"], row["K"], abs(row["K"] - row["K0"]), row["seconds"],
                           1000 * row["seconds"] / row["n0"], row["iterations"], *paper])
    table = markdown_table(headers, table_rows)
    within = [abs(row["K"] - row["K0"]) <= 1 for rows in runs for row in rows]
    ns = np.array([row["n0"] for row in first], dtype=float)
    ts = np.array([row["seconds"] for row in first])
    slope = float(np.polyfit(np.log(ns), np.log(ts), 1)[0]) if len(ns) > 1 else float("nan")

    fig = new_figure(8.0, 3.4)
    ax1, ax2 = fig.subplots(1, 2)
    ax1.plot(ns, [row["K0"] for row in first], "o-", color="#000000", label="truth K0")
    ax1.plot(ns, [row["K"] for row in first], "s--", color="#1f77b4", label="M2DPM K")
    ax1.set_xscale("log")
    ax1.set_xlabel("n0")
    ax1.set_ylabel("components")
    ax1.legend()
    ax2.loglog(ns, ts, "o-", color="#1f77b4", label=f"M2DPM (slope {slope:.2f})")
    ax2.loglog(ns, ts[0] * ns / ns[0], ":", color="#7f7f7f", label="linear")
    ax2.set_xlabel("n0")
    ax2.set_ylabel("fit time (s)")
    ax2.legend()

    seconds = time.perf_counter() - start
    numbers = {
        "experiment": NAME,
        "settings": {"quick": quick, "seed": seed, "sizes": sizes, "alpha": alpha, "center_scale": center_scale,
                     "n_repeats": n_repeats,
                     "params": params},
        "runs": runs,
        "all_within_one": bool(all(within)),
        "fraction_within_one": float(np.mean(within)),
        "log_log_time_slope": slope,
        "paper": {str(k): {"K0": v[0], "K": v[1], "seconds": v[2]} for k, v in PAPER.items()},
        "seconds": seconds,
    }
    markdown = (
        f"# {TITLE}\n\n"
        f"First n0 of {n_total} points from a DP mixture (CRP alpha = {alpha}, Gaussian clusters, sigma 0.5, means "
        f"from N(0, {center_scale}^2 I)); M2DPM with "
        f"{params} for every n0. |K - K0| <= 1 for every n0: {all(within)} "
        f"({np.mean(within):.0%} of {len(within)} runs). Slope of log time against log n0: {slope:.2f} "
        "(1 = linear). Timings on a shared CPU are noisy.\n\n"
        f"{table}\n\nTotal time: {seconds:.1f} s.\n"
    )
    paths = write_outputs(out_dir, NAME, fig, numbers, markdown)
    return {"name": NAME, "seconds": seconds, "numbers": numbers, "table": table, **paths}
