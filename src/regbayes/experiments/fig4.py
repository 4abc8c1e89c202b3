"""Figure 4 of paper 000 (Section 5.1.1): posterior samples of a 2-D Bayesian linear SVM.

1000 points from :func:`regbayes.datasets.make_bayes_svm_2d` (x ~ U(0, 1)^2, eta ~
N(0, I/3), labels from the hinge pseudo-likelihood), no intercept. The exact Gibbs
sampler with data augmentation is the reference; SSGLD (AdaGrad) and SSGNHT take
minibatches. Each method keeps ``n_samples`` draws after ``n_warmup`` burn-in steps;
the figure shows their densities as grayscale images on a shared grid, and the table
the posterior mean, covariance and the relative error of the mean against Gibbs.
"""
from __future__ import annotations

import time

import numpy as np

from ._common import fit_model, markdown_table, relative_error, finish

NAME = "fig4"
TITLE = "Fig. 4: posterior samples of a 2-D Bayesian linear SVM (Gibbs vs SSGLD vs SSGNHT)"
METHODS = ("gibbs", "ssgld", "ssgnht")


def run(
    out_dir,
    *,
    n: int | None = None,
    quick: bool = False,
    seed: int = 0,
    n_samples: int | None = None,
    n_warmup: int | None = None,
    thin: int | None = None,
    batch_size: int = 100,
    progress: bool = False,
    **unused,
) -> dict:
    """Run the experiment and write ``fig4.png``, ``fig4.json`` and ``results.md``.

    ``n`` data points (default 1000, as in the paper), ``n_samples`` kept draws per
    method (default 5000; ``quick``: 500), ``n_warmup`` burn-in steps (default 2000;
    quick: 300), ``thin`` for the stochastic samplers (default 5; quick: 2; Gibbs is not
    thinned), minibatch ``batch_size`` (default 100).
    """
    from .. import BayesianSVC
    from ..datasets import make_bayes_svm_2d
    from ..inference import diagnostics
    from ..plotting import posterior_density_images

    start = time.perf_counter()
    n = int(n) if n is not None else (300 if quick else 1000)
    n_samples = int(n_samples) if n_samples is not None else (500 if quick else 5000)
    n_warmup = int(n_warmup) if n_warmup is not None else (300 if quick else 2000)
    thin = int(thin) if thin is not None else (2 if quick else 5)
    prior_var = 1.0 / 3.0  # eta ~ N(0, I/3), the paper's generating prior, is also the model's prior
    X, y, coef_true = make_bayes_svm_2d(n_samples=n, prior_var=prior_var, random_state=seed, return_coef=True)

    samples, rows, per_method = {}, [], {}
    for method in METHODS:
        params = dict(sampler=method, fit_intercept=False, prior_scale=prior_var**0.5,
                      n_draws=n_samples, n_warmup=n_warmup,
                      thin=1 if method == "gibbs" else thin, batch_size=min(batch_size, n),
                      n_chains=1, random_state=seed, progress=progress)
        if method == "ssgld":
            params["schedule"] = "adagrad"
        fit = fit_model(BayesianSVC, X, y, **params)
        if fit.model is None:
            per_method[method] = {"error": fit.error, "fit_seconds": fit.seconds}
            continue
        draws = np.asarray(fit.model.coef_samples_, dtype=np.float64)
        samples[method] = draws
        diag = diagnostics(fit.model.idata_, "eta")
        per_method[method] = {
            "mean": draws.mean(axis=0),
            "cov": np.cov(draws, rowvar=False),
            "n_samples": len(draws),
            "thin": params["thin"],
            "batch_size": None if method == "gibbs" else params["batch_size"],
            "fit_seconds": fit.seconds,
            "compile_seconds": fit.compile_seconds,
            "sampling_seconds": fit.sampling_seconds,
            "min_ess": diag["min_ess"],
            "train_accuracy": float(fit.model.score(X, y)),
            "note": fit.note,
        }

    ref = per_method.get("gibbs", {}).get("mean")
    for method in METHODS:
        info = per_method[method]
        if "error" in info:
            rows.append([method, "failed: " + info["error"], "-", "-", "-", "-", "-", "-"])
            continue
        info["rel_error_mean_vs_gibbs"] = relative_error(info["mean"], ref) if ref is not None else float("nan")
        if ref is not None:
            ref_cov = per_method["gibbs"]["cov"]
            info["rel_error_cov_vs_gibbs"] = relative_error(info["cov"], ref_cov)
        m, c = info["mean"], info["cov"]
        rows.append([
            method + (f" ({info['note']})" if info["note"] else ""),
            f"({m[0]:.3f}, {m[1]:.3f})",
            f"[[{c[0, 0]:.4f}, {c[0, 1]:.4f}], [{c[1, 0]:.4f}, {c[1, 1]:.4f}]]",
            info["rel_error_mean_vs_gibbs"],
            info.get("rel_error_cov_vs_gibbs"),
            info["min_ess"],
            info["sampling_seconds"],
            info["fit_seconds"],
        ])
    table = markdown_table(
        ["method", "posterior mean", "posterior covariance", "rel. err. mean vs gibbs",
         "rel. err. cov vs gibbs", "min ESS", "sampling s", "fit s (incl. compile)"],
        rows,
    )
    fig = posterior_density_images(samples, truth=coef_true, reference="gibbs" if "gibbs" in samples else None,
                                   title=f"{n} points, {n_samples} samples per method after {n_warmup} burn-in steps")
    text = (
        f"Data: {n} points from `make_bayes_svm_2d` (seed {seed}), no intercept; true eta = "
        f"({coef_true[0]:.3f}, {coef_true[1]:.3f}); the model has the same N(0, I/3) prior, c = 1 and l = 1. "
        "(The hinge pseudo-likelihood is not the normalised label probability that generated the data, "
        "so the posterior concentrates on the direction of the true eta, not on its length.) "
        f"{n_samples} draws per method after {n_warmup} "
        f"burn-in steps; SSGLD (AdaGrad) and SSGNHT use minibatches of {min(batch_size, n)} and keep every "
        f"{thin}-th step. Relative errors are Frobenius norms against the exact Gibbs sampler."
    )
    return finish(out_dir, NAME, TITLE, start, fig, table, text, {
        "settings": {"n": n, "n_samples": n_samples, "n_warmup": n_warmup, "thin": thin,
                     "batch_size": batch_size, "seed": seed, "quick": quick},
        "true_coef": coef_true,
        "methods": per_method,
    })
