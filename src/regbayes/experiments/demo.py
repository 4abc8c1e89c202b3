"""A quick tour (not a paper figure): the Bayesian linear SVM on standardised breast
cancer with the exact Gibbs sampler and the two stochastic subgradient samplers.

Each sampler runs two chains; the table gives test accuracy, fit time (compilation
included), the minimum bulk ESS and maximum R-hat over the weights, and the relative
error of the posterior mean against Gibbs. The figure shows every weight's posterior
mean with 50 % and 94 % credible intervals for the three samplers.
"""
from __future__ import annotations

import time

import numpy as np

from ._common import fit_model, markdown_table, relative_error, finish

NAME = "demo"
TITLE = "Bayesian linear SVM on breast cancer: Gibbs vs SSGLD vs SSGNHT"
SAMPLERS = ("gibbs", "ssgld", "ssgnht")
# Warm-up steps and thinning per sampler (see ``run``).
RUN_LENGTHS = {
    "gibbs": {"n_warmup": 500, "thin": 5},
    "ssgld": {"n_warmup": None, "thin": None},  # the estimator's defaults: 10,000 and 50
    "ssgnht": {"n_warmup": None, "thin": None},
}
QUICK_RUN_LENGTHS = {
    "gibbs": {"n_warmup": 200, "thin": 2},
    "ssgld": {"n_warmup": 2000, "thin": 5},
    "ssgnht": {"n_warmup": 2000, "thin": 5},
}


def run(
    out_dir,
    *,
    quick: bool = False,
    seed: int = 0,
    n_draws: int | None = None,
    n_warmup: int | None = None,
    thin: int | None = None,
    batch_size: int = 100,
    n_chains: int = 2,
    samplers=SAMPLERS,
    progress: bool = False,
    **unused,
) -> dict:
    """Fit the samplers and write ``demo.png``, ``demo.json`` and ``results.md``.

    Every sampler keeps ``n_draws`` draws per chain (default 1000; ``quick``: 200).
    Warm-up steps and thinning default per sampler (:data:`RUN_LENGTHS`): Gibbs sweeps are
    exact but cost O(n d^2), so 500 warm-up sweeps and every 5th draw; SSGLD and SSGNHT
    use the estimator's defaults for minibatch samplers (10,000 warm-up steps, which also
    tune the whitening transform, and every 10th step). ``n_warmup`` / ``thin`` override them
    for all samplers. Minibatches of ``batch_size`` rows.
    """
    from sklearn.datasets import load_breast_cancer as _raw

    from .. import BayesianSVC
    from ..datasets import load_breast_cancer_standardized
    from ..inference import diagnostics
    from ..plotting import posterior_intervals

    start = time.perf_counter()
    n_draws = int(n_draws) if n_draws is not None else (200 if quick else 1000)
    lengths = {name: dict(QUICK_RUN_LENGTHS[name] if quick else RUN_LENGTHS[name]) for name in RUN_LENGTHS}
    for name in lengths:
        if n_warmup is not None:
            lengths[name]["n_warmup"] = int(n_warmup)
        if thin is not None:
            lengths[name]["thin"] = int(thin)
    X_train, X_test, y_train, y_test = load_breast_cancer_standardized(test_size=0.3, random_state=seed)
    feature_names = [str(f) for f in _raw().feature_names]

    per, samples = {}, {}
    for sampler in samplers:
        if sampler not in lengths:
            raise ValueError(f"demo compares {SAMPLERS}; got {sampler!r}")
        params = dict(sampler=sampler, n_draws=n_draws, n_chains=n_chains, **lengths[sampler],
                      batch_size=min(batch_size, len(y_train)), random_state=seed, progress=progress)
        fit = fit_model(BayesianSVC, X_train, y_train, **params)
        if fit.model is None:
            per[sampler] = {"error": fit.error, "fit_seconds": fit.seconds}
            continue
        m = fit.model
        diag = diagnostics(m.idata_, "eta")
        samples[sampler] = np.asarray(m.coef_samples_, dtype=np.float64)
        per[sampler] = {
            "test_accuracy": float(m.score(X_test, y_test)),
            "fit_seconds": fit.seconds,
            "compile_seconds": fit.compile_seconds,
            "sampling_seconds": fit.sampling_seconds,
            "min_ess": diag["min_ess"],
            "max_rhat": diag["max_rhat"],
            "coef_mean": m.coef_,
            "intercept_mean": float(np.asarray(m.intercept_)),
            "thin": params["thin"],
            "n_warmup": params["n_warmup"],
            "batch_size": None if sampler == "gibbs" else params["batch_size"],
            "note": fit.note,
        }
    ref = per.get("gibbs", {}).get("coef_mean")
    rows = []
    for sampler in samplers:
        info = per[sampler]
        if "error" in info:
            rows.append([sampler, "-", info["fit_seconds"], "-", "-", "-", "failed: " + info["error"]])
            continue
        info["rel_error_vs_gibbs"] = relative_error(info["coef_mean"], ref) if ref is not None else float("nan")
        rows.append([sampler, info["test_accuracy"], info["fit_seconds"], info["min_ess"], info["max_rhat"],
                     info["rel_error_vs_gibbs"], info["note"] or ""])
    table = markdown_table(
        ["sampler", "test acc.", "fit s (incl. compile)", "min ESS", "max R-hat", "rel. err. of mean vs gibbs", "note"],
        rows,
    )
    fig = posterior_intervals(
        samples, names=feature_names,
        title=f"Posterior of the weights ({n_chains} chains x {n_draws} draws per sampler)",
    )
    text = (
        f"{len(y_train)} training / {len(y_test)} test rows, 30 standardised features plus an intercept; "
        f"{n_chains} chains x {n_draws} kept draws per sampler. Warm-up steps / thinning: "
        + ", ".join(f"{k} {v['n_warmup']} / {v['thin']}" for k, v in lengths.items() if k in samplers)
        + f". SSGLD (AdaGrad) and SSGNHT use minibatches of {min(batch_size, len(y_train))} rows. ESS and "
        "R-hat are ArviZ's bulk ESS (minimum) and rank-normalised R-hat (maximum) over the weights."
    )
    return finish(out_dir, NAME, TITLE, start, fig, table, text, {
        "settings": {"quick": quick, "seed": seed, "n_draws": n_draws, "lengths": lengths,
                     "batch_size": batch_size, "n_chains": n_chains, "samplers": list(samplers)},
        "n_train": len(y_train),
        "n_test": len(y_test),
        "feature_names": feature_names,
        "samplers": per,
    })
