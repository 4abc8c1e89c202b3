"""Figure 5 of paper 000 (Section 5.1.2): test accuracy against wall-clock time for the
five samplers of the Bayesian linear SVM.

Two data sets stand in for the paper's Higgs (10^7 rows) and Realsim:

* ``higgs-like``: :func:`regbayes.datasets.make_higgs_like`, ``n`` rows (default 10^6),
  28 features, 10 % held out as the test set;
* ``breast-cancer``: the standardised scikit-learn data (398 train / 171 test rows).

Samplers follow the paper's settings: on Higgs, minibatches of 1000 for SSGLD (AdaGrad)
and SRWM and of 100 for SSGNHT; on the small set, minibatches of 10 for all stochastic
samplers. Gibbs with data augmentation and subgradient HMC with MH test (SHMC) use all
rows per iteration, so on the large set each gets a wall-time budget (``budget`` s of
sampling, from a 5-iteration pilot run) instead of a fixed number of draws, as the
paper's Gibbs barely finishes one sweep while the stochastic samplers converge.

Every run starts at eta = 0 with no warm-up, and the curve is the accuracy of the
running posterior mean (draws from the second half of the run so far) at log-spaced
checkpoints, against the sampling wall time (compilation excluded).
"""
from __future__ import annotations

import time

from ._common import (
    accuracy_run,
    budgeted_draws,
    load_breast_cancer,
    load_higgs_like,
    markdown_table,
    finish,
)

NAME = "fig5"
TITLE = "Fig. 5: test accuracy vs wall-clock time, five samplers"
SAMPLERS = ("gibbs", "shmc", "srwm", "ssgld", "ssgnht")
DEFAULT_N = 10**6
QUICK_N = 20000


def sampler_settings(dataset: str, quick: bool, iterations: int | None, budget: float):
    """Per-sampler BayesianSVC parameters and, for the full-data samplers on the large
    set, a sampling budget in seconds (``None``: fixed draws)."""
    if dataset == "higgs-like":
        it = iterations or (2000 if quick else 20000)
        return {
            "ssgld": (dict(batch_size=1000, schedule="adagrad", n_draws=it), None),
            "ssgnht": (dict(batch_size=100, n_draws=it), None),
            "srwm": (dict(batch_size=1000, n_draws=max(it // 5, 50)), None),
            "shmc": (dict(n_draws=50), budget),
            "gibbs": (dict(n_draws=50), budget),
        }
    it = iterations or (1000 if quick else 5000)
    return {
        "ssgld": (dict(batch_size=10, schedule="adagrad", n_draws=it), None),
        "ssgnht": (dict(batch_size=10, n_draws=it), None),
        "srwm": (dict(batch_size=10, n_draws=it), None),
        "shmc": (dict(n_draws=max(it // 5, 50)), None),
        "gibbs": (dict(n_draws=max(it // 5, 50)), None),
    }


def run_curves(dataset, X_train, X_test, y_train, y_test, settings, *, seed, progress, samplers=SAMPLERS):
    """Fit every sampler in ``settings`` and return {sampler: accuracy_run record}."""
    from .. import BayesianSVC

    results = {}
    for sampler in samplers:
        params, budget = settings[sampler]
        base = dict(sampler=sampler, n_warmup=0, thin=1, n_chains=1, random_state=seed, progress=progress)
        budget_note = ""
        if budget is not None:
            n_draws, per_it = budgeted_draws(BayesianSVC, X_train, y_train, budget,
                                             min_draws=5, max_draws=params["n_draws"] * 100, **base, **params)
            params = {**params, "n_draws": n_draws}
            budget_note = f"wall-time budget {budget:g} s: {n_draws} iterations (pilot {per_it:.3g} s/iteration)"
        record = accuracy_run(BayesianSVC, X_train, y_train, X_test, y_test, **base, **params)
        record["note"] = "; ".join(x for x in (budget_note, record["note"]) if x)
        record["budget_seconds"] = budget
        results[sampler] = record
    return results


def curve_rows(dataset, results):
    rows = []
    for sampler, r in results.items():
        if r["error"]:
            rows.append([dataset, sampler, "-", "-", "-", "-", "-", "-", "failed: " + r["error"]])
            continue
        rows.append([
            dataset, sampler, r["params"].get("batch_size") if sampler in ("ssgld", "ssgnht", "srwm") else "all",
            r["n_iterations"], r["final_accuracy"], r["sampling_seconds"], r["seconds_per_iteration"],
            r["compile_seconds"], r["note"] or "",
        ])
    return rows


def legend_label(sampler, record):
    """``"ssgld (|D~|=1000)"`` for minibatch samplers, ``"gibbs (full data)"`` otherwise."""
    batch = record["params"].get("batch_size")
    if sampler in ("ssgld", "ssgnht", "srwm") and batch is not None:
        return f"{sampler} (batch {batch})"
    return f"{sampler} (full data)"


CURVE_HEADERS = ["data", "sampler", "batch", "iterations", "final test acc.", "sampling s",
                 "s / iteration", "compile s", "note"]


def run(
    out_dir,
    *,
    n: int | None = None,
    quick: bool = False,
    seed: int = 0,
    iterations: int | None = None,
    budget: float | None = None,
    samplers=SAMPLERS,
    datasets=("higgs-like", "breast-cancer"),
    progress: bool = False,
    **unused,
) -> dict:
    """Run the experiment and write ``fig5.png``, ``fig5.json`` and ``results.md``.

    ``n``: rows of the Higgs-like set (default 10^6; ``quick``: 20000). ``iterations``:
    steps of SSGLD and SSGNHT on Higgs-like (default 20000, SRWM a fifth of it; quick:
    2000) and of the stochastic samplers on breast cancer (default 5000, Gibbs and SHMC
    a fifth). ``budget``: sampling seconds for Gibbs and SHMC on Higgs-like (default 60;
    quick: 5). ``samplers`` and ``datasets`` select a subset (for tests).
    """
    from ..plotting import accuracy_vs_time_grid

    start = time.perf_counter()
    n = int(n) if n is not None else (QUICK_N if quick else DEFAULT_N)
    budget = float(budget) if budget is not None else (5.0 if quick else 60.0)
    unknown = sorted(set(samplers) - set(SAMPLERS)) + sorted(set(datasets) - {"higgs-like", "breast-cancer"})
    if unknown:
        raise ValueError(f"unknown sampler or data set {unknown}; samplers: {SAMPLERS}, "
                         "data sets: ('higgs-like', 'breast-cancer')")
    data = {}
    if "higgs-like" in datasets:
        data[f"higgs-like (N={n:,})"] = ("higgs-like", load_higgs_like(n, seed))
    if "breast-cancer" in datasets:
        data["breast-cancer"] = ("breast-cancer", load_breast_cancer(seed))
    all_results, panels, rows = {}, {}, []
    for title, (dataset, (X_train, X_test, y_train, y_test)) in data.items():
        settings = sampler_settings(dataset, quick, iterations, budget)
        results = run_curves(dataset, X_train, X_test, y_train, y_test, settings, seed=seed,
                             progress=progress, samplers=tuple(samplers))
        all_results[dataset] = {"n_train": len(y_train), "n_test": len(y_test), "samplers": results}
        panels[f"{title}: {len(y_train):,} train / {len(y_test):,} test"] = {
            legend_label(s, r): (r["times"], r["accuracy"]) for s, r in results.items()
        }
        rows += curve_rows(dataset, results)
    fig = accuracy_vs_time_grid(panels, ncols=2, suptitle=TITLE)
    table = markdown_table(CURVE_HEADERS, rows)
    text = (
        "Accuracy of the running posterior-mean classifier (mean of the second half of the draws so far) "
        "on held-out data, against sampling wall time (compilation excluded), all chains started at "
        f"eta = 0 without warm-up. Gibbs and SHMC use every row per iteration; on the Higgs-like set they "
        f"get a budget of about {budget:g} s of sampling (iterations from a 5-iteration pilot run), which "
        "is why they "
        "run far fewer iterations than the stochastic samplers."
    )
    return finish(out_dir, NAME, TITLE, start, fig, table, text, {
        "settings": {"n": n, "quick": quick, "seed": seed, "iterations": iterations, "budget_seconds": budget,
                     "samplers": list(samplers), "datasets": list(datasets)},
        "datasets": all_results,
    })
