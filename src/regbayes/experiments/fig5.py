"""Figure 5 of paper 000 (Section 5.1.2): test accuracy against wall-clock time for the
five samplers of the Bayesian linear SVM.

Data. Without ``data``, two offline stand-ins for the paper's HIGGS (10^7 training rows)
and Realsim, named as stand-ins in the outputs:

* ``higgs-like``: :func:`regbayes.datasets.make_higgs_like`, ``n`` rows (default 10^6),
  28 features, 10 % held out as the test set;
* ``breast-cancer``: the standardised scikit-learn data (398 train / 171 test rows).

With ``data`` (``regbayes reproduce fig5 --data higgs --data realsim``; see
:mod:`regbayes.experiments.data_option`): the registered sets or svmlight files given,
one panel each, ``n`` rows read from each (default all; ``quick`` 20,000), a single file
split 90 / 10 at random.

Samplers follow the paper's settings: on HIGGS (and its stand-in, and any set of 100,000
training rows or more) minibatches of 1000 for SSGLD (AdaGrad) and SRWM and of 100 for
SSGNHT; on Realsim (and every smaller set) minibatches of 10 for all stochastic samplers.
Gibbs with data augmentation and subgradient HMC with MH test (SHMC) use all rows per
iteration, so on the large sets each gets a wall-time budget (``budget`` s of sampling,
from a 5-iteration pilot run) instead of a fixed number of draws, as the paper's Gibbs
barely finishes one sweep while the stochastic samplers converge. Gibbs forms a dense
d x d matrix and is skipped (and says so) above 5,000 features (Realsim has 20,958).

``paper_settings`` sets what Sec. 5.1.2 prints beyond the minibatch sizes
(:func:`regbayes.experiments._common.paper_sampler_params`): SSGLD with AdaGrad, SSGNHT
with polynomially decaying steps ``h_t = h0 (1 + t / b)^(-gamma)``, b = 1 (Sec. 5; gamma
= 0.33 and h0 the estimator's, the paper's grid-searched values not being printed), SRWM
with proposal variance 0.01, and HIGGS split 10^7 / 10^6 (a random 1/11 held out).
Sec. 5.1 prints neither c nor nu: the estimator's c = nu = 1 are kept. The JSON records
every setting under ``settings``.

Every run starts at eta = 0 with no warm-up, and the curve is the accuracy of the
running posterior mean (draws from the second half of the run so far) at log-spaced
checkpoints, against the sampling wall time (compilation excluded).
"""
from __future__ import annotations

import time

from ._common import (
    PAPER_SETTINGS_TEXT,
    accuracy_run,
    budgeted_draws,
    finish,
    higgs_and_cancer,
    is_large,
    markdown_table,
    paper_sampler_params,
    paper_settings_record,
    rows_asked,
    stand_in_text,
)

NAME = "fig5"
TITLE = "Fig. 5: test accuracy vs wall-clock time, five samplers"
SAMPLERS = ("gibbs", "shmc", "srwm", "ssgld", "ssgnht")


def sampler_settings(large: bool, quick: bool, iterations: int | None, budget: float):
    """Per-sampler BayesianSVC parameters and, for the full-data samplers on a large set
    (:func:`regbayes.experiments._common.is_large`), a sampling budget in seconds
    (``None``: fixed draws)."""
    if large:
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


def run_curves(dataset, X_train, X_test, y_train, y_test, settings, *, seed, progress, samplers=SAMPLERS,
               paper_settings=False):
    """Fit every sampler in ``settings`` and return {sampler: accuracy_run record}; with
    ``paper_settings`` each sampler also gets :func:`paper_sampler_params`."""
    from .. import BayesianSVC
    from ..models.bayes_svm import MAX_GIBBS_FEATURES

    results = {}
    for sampler in samplers:
        params, budget = settings[sampler]
        if sampler == "gibbs" and X_train.shape[1] + 1 > MAX_GIBBS_FEATURES:
            results[sampler] = {"params": params, "error": f"skipped: {X_train.shape[1]:,} features (Gibbs forms "
                                f"a dense d x d matrix; limit {MAX_GIBBS_FEATURES:,})", "note": "", "times": [],
                                "accuracy": [], "budget_seconds": budget}
            continue
        if paper_settings:
            params = {**params, **paper_sampler_params(sampler, X_train)}
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
            note = r["error"] if r["error"].startswith("skipped") else "failed: " + r["error"]
            rows.append([dataset, sampler, "-", "-", "-", "-", "-", "-", note])
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
    data=None,
    paper_settings: bool = False,
    progress: bool = False,
    **unused,
) -> dict:
    """Run the experiment and write ``fig5.png``, ``fig5.json`` and ``results.md``.

    ``n``: rows of the Higgs-like set (default 10^6; ``quick``: 20000), or with ``data``
    the rows read from each data set (default all; quick 20000). ``iterations``: steps of
    SSGLD and SSGNHT on a large set (default 20000, SRWM a fifth of it; quick: 2000) and of
    the stochastic samplers on a small one (default 5000, Gibbs and SHMC a fifth).
    ``budget``: sampling seconds for Gibbs and SHMC on a large set (default 60; quick: 5).
    ``samplers`` and ``datasets`` (the stand-ins) select a subset (for tests). ``data``: a
    registered data set's name, an svmlight file, ``TRAIN,TEST`` files, or a list of them,
    instead of the stand-ins. ``paper_settings``: the settings of the module docstring.
    """
    from ..plotting import accuracy_vs_time_grid

    start = time.perf_counter()
    n = rows_asked(n, quick, data)
    budget = float(budget) if budget is not None else (5.0 if quick else 60.0)
    unknown = sorted(set(samplers) - set(SAMPLERS)) + sorted(set(datasets) - {"higgs-like", "breast-cancer"})
    if unknown:
        raise ValueError(f"unknown sampler or data set {unknown}; samplers: {SAMPLERS}, "
                         "data sets: ('higgs-like', 'breast-cancer')")
    all_results, panels, rows, records = {}, {}, [], []
    for dataset, title, (X_train, X_test, y_train, y_test), record in higgs_and_cancer(
            datasets, n, seed, data=data, quick=quick, paper_settings=paper_settings):
        large = is_large(dataset, len(y_train))
        settings = sampler_settings(large, quick, iterations, budget)
        results = run_curves(dataset, X_train, X_test, y_train, y_test, settings, seed=seed,
                             progress=progress, samplers=tuple(samplers), paper_settings=paper_settings)
        all_results[dataset] = {"n_train": len(y_train), "n_test": len(y_test), "large": large, "data": record,
                                "samplers": results}
        records.append(record)
        panels[f"{title}: {len(y_train):,} train / {len(y_test):,} test"] = {
            legend_label(s, r): (r["times"], r["accuracy"]) for s, r in results.items()
        }
        rows += curve_rows(dataset, results)
    fig = accuracy_vs_time_grid(panels, ncols=min(2, max(1, len(panels))), suptitle=TITLE)
    table = markdown_table(CURVE_HEADERS, rows)
    text = (
        f"{stand_in_text(records)} "
        "Accuracy of the running posterior-mean classifier (mean of the second half of the draws so far) "
        "on held-out data, against sampling wall time (compilation excluded), all chains started at "
        f"eta = 0 without warm-up. Gibbs and SHMC use every row per iteration; on a large set they "
        f"get a budget of about {budget:g} s of sampling (iterations from a 5-iteration pilot run), which "
        "is why they run far fewer iterations than the stochastic samplers."
        + (f" With the {PAPER_SETTINGS_TEXT}." if paper_settings else "")
    )
    return finish(out_dir, NAME, TITLE, start, fig, table, text, {
        "settings": {"n": n, "quick": quick, "seed": seed, "iterations": iterations,
                     "budget_seconds": budget, "samplers": list(samplers),
                     "datasets": [r["name"] for r in records], "data": records,
                     "paper_settings": paper_settings_record(paper_settings, samplers)},
        "datasets": all_results,
    })

