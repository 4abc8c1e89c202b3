"""Figure 7 of paper 000 (Section 5.1.3): SSGLD with AdaGrad step sizes against SSGLD
with polynomially decaying step sizes ``h_t = h0 (1 + t)^(-0.33)``.

Test accuracy of the running posterior mean against wall time on the Higgs-like set
(``n`` rows, 10 % test; minibatches of 1000 as in the paper) and on standardised breast
cancer (minibatches of 10). Runs start at eta = 0 without warm-up.
"""
from __future__ import annotations

import time

from ._common import accuracy_run, higgs_and_cancer, markdown_table, finish

NAME = "fig7"
TITLE = "Fig. 7: SSGLD with AdaGrad vs polynomially decaying step sizes"
SCHEDULES = ("adagrad", "polynomial")
DEFAULT_N = 10**6
QUICK_N = 20000


def run(
    out_dir,
    *,
    n: int | None = None,
    quick: bool = False,
    seed: int = 0,
    iterations: int | None = None,
    schedules=SCHEDULES,
    datasets=("higgs-like", "breast-cancer"),
    progress: bool = False,
    **unused,
) -> dict:
    """Run the experiment and write ``fig7.png``, ``fig7.json`` and ``results.md``.

    ``n``: rows of the Higgs-like set (default 10^6; ``quick``: 20000); ``iterations``
    per run (default 20000 on Higgs-like, 5000 on breast cancer; quick: 2000).
    """
    from .. import BayesianSVC
    from ..plotting import accuracy_vs_time_grid

    start = time.perf_counter()
    n = int(n) if n is not None else (QUICK_N if quick else DEFAULT_N)
    bad = sorted(set(schedules) - {"adagrad", "polynomial", "constant"})
    if bad:
        raise ValueError(f"unknown schedule(s) {bad}; choose from adagrad, polynomial, constant")
    panels, rows, numbers_data = {}, [], {}
    for dataset, label, (X_train, X_test, y_train, y_test) in higgs_and_cancer(datasets, n, seed):
        it = iterations or (2000 if quick else (20000 if dataset == "higgs-like" else 5000))
        batch = 1000 if dataset == "higgs-like" else 10
        batch = min(batch, len(y_train))
        numbers_data[dataset] = {"n_train": len(y_train), "n_test": len(y_test), "iterations": it,
                                 "batch_size": batch, "runs": {}}
        curves = {}
        for schedule in schedules:
            r = accuracy_run(BayesianSVC, X_train, y_train, X_test, y_test, sampler="ssgld", schedule=schedule,
                             batch_size=batch, n_draws=it, n_warmup=0, thin=1, n_chains=1, random_state=seed,
                             progress=progress)
            numbers_data[dataset]["runs"][schedule] = r
            curves[{"adagrad": "AdaGrad"}.get(schedule, schedule)] = (r["times"], r["accuracy"])
            if r["error"]:
                rows.append([dataset, schedule, batch, "-", "-", "-", "failed: " + r["error"]])
            else:
                rows.append([dataset, schedule, batch, r["n_iterations"], r["final_accuracy"],
                             r["sampling_seconds"], r["note"] or ""])
        panels[f"{label}, batch {batch}"] = curves
    fig = accuracy_vs_time_grid(panels, ncols=min(2, max(1, len(panels))), suptitle=TITLE)
    table = markdown_table(["data", "schedule", "batch", "iterations", "final test acc.", "sampling s", "note"], rows)
    text = (
        "AdaGrad: per-coordinate preconditioned SSGLD with a constant base step. Polynomial: "
        "h_t = h0 (1 + t)^(-0.33) (BayesianSVC's `schedule=\"polynomial\"`). Accuracy of the "
        "running posterior mean (second half of the draws so far) on held-out data."
    )
    return finish(out_dir, NAME, TITLE, start, fig, table, text, {
        "settings": {"n": n, "quick": quick, "seed": seed, "iterations": iterations,
                     "schedules": list(schedules), "datasets": list(datasets)},
        "datasets": numbers_data,
    })
