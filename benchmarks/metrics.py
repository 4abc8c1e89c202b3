"""Posterior metrics of the Bayesian linear SVM benchmarks, the same rule for every method.

* running posterior means over a 50 % moving burn-in at log-spaced checkpoints;
* test accuracy of a mean's discriminant ``[x, 1] @ mean``;
* time to accuracy (TTA) and time to error (TTE): the wall time of the first checkpoint
  after which the accuracy (the relative error) stays within its tolerance;
* the minimum bulk ESS over the coordinates (``arviz.ess``) of the second half;
* the spread of TTA over seeds.
"""
from __future__ import annotations

import warnings

import numpy as np


def checkpoints(n, count=150):
    idx = np.unique(np.round(np.geomspace(1, n, count)).astype(int))
    return idx  # draw counts k (1-based)


def running_means(draws, ks):
    """Mean of draws [floor(k/2), k) for each k in ``ks`` (50 % moving burn-in)."""
    csum = np.concatenate([np.zeros((1, draws.shape[1])), np.cumsum(draws, axis=0)])
    lo = ks // 2
    return (csum[ks] - csum[lo]) / (ks - lo)[:, None]


def accuracy(means, Xt, yt):
    """Test accuracy (in %) of the discriminant ``[x, 1] @ mean`` for each row of ``means``."""
    scores = Xt @ means[:, :-1].T.astype(Xt.dtype) + means[:, -1].astype(Xt.dtype)
    return 100.0 * np.mean((scores > 0) == (yt[:, None] == 1), axis=0)


def min_ess(draws):
    import arviz as az

    half = draws[len(draws) // 2 :]
    if len(half) < 8:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ess = az.ess(az.convert_to_dataset(half[None].astype(np.float64)))
    return float(np.nanmin(np.asarray(ess["x"])))


def stay_time(ok, ks, wall):
    """Wall time of the first checkpoint after which ``ok`` holds to the end (None if never)."""
    bad = np.nonzero(~ok)[0]
    first_good = 0 if len(bad) == 0 else bad[-1] + 1
    return float(wall[ks[first_good] - 1]) if first_good < len(ks) else None


def evaluate(run, ref_mean, ref_acc, Xt, yt, tolerance, rel_tolerance):
    draws, wall = run["draws"], run["wall"]
    ks = checkpoints(len(draws))
    means = running_means(draws, ks)
    acc = accuracy(means, Xt, yt)
    ok = np.abs(acc - ref_acc) <= tolerance
    tta = stay_time(ok, ks, wall)
    rel = np.linalg.norm(means - ref_mean, axis=1) / np.linalg.norm(ref_mean)
    tte = stay_time(rel <= rel_tolerance, ks, wall)
    hit = np.nonzero(ok)[0]
    first_hit = float(wall[ks[hit[0]] - 1]) if len(hit) else None
    final_mean = draws[len(draws) // 2 :].mean(axis=0)
    ess = min_ess(draws)
    out = {
        "iterations": int(run["n_iter"]),
        "draws": int(len(draws)),
        "compile_s": float(run["compile_s"]),
        "sampling_s": float(run["sampling_s"]),
        "it_per_s": float(run["n_iter"] / run["sampling_s"]),
        "final_accuracy": float(accuracy(final_mean[None], Xt, yt)[0]),
        "tta_s": tta,
        "tta_at_first_draw": tta is not None and tta == float(wall[0]),
        "first_draw_s": float(wall[0]),
        "tte_s": tte,
        "first_hit_s": first_hit,
        "rel_error": float(np.linalg.norm(final_mean - ref_mean) / np.linalg.norm(ref_mean)),
        "min_ess": ess,
        "ess_per_s": float(ess / run["sampling_s"]),
        "curve": {"wall_s": [float(wall[k - 1]) for k in ks], "accuracy": [float(a) for a in acc], "rel_error": [float(r) for r in rel]},
    }
    out.update(run.get("extra", {}))
    return out


def seed_spread(first, run_seed, seeds, ref_mean, ref_acc, Xt, yt, args):
    """TTA, TTE and final error of a from-step-0 run over ``1 + len(seeds)`` seeds.

    ``first`` is the table's evaluated run (its own seed); ``run_seed(seed)`` runs the same
    configuration with another seed. One seed's TTA scatters by about 2x (the first ~100
    steps decide it), so the Gibbs TTA ratios also use the median over seeds. A run that
    never stays within the tolerance, or diverges, counts as infinitely slow.
    """
    evals = [first]
    for seed in seeds:
        try:
            evals.append(evaluate(run_seed(seed), ref_mean, ref_acc, Xt, yt, args.tolerance, args.rel_tolerance))
        except FloatingPointError as err:  # regbayes' DivergenceError, or BlackJAX's
            evals.append({"tta_s": None, "tte_s": None, "rel_error": float("nan"), "failed": str(err)})
    as_time = lambda v: np.inf if v is None else v  # noqa: E731
    tta = np.array([as_time(e["tta_s"]) for e in evals])
    tte = np.array([as_time(e["tte_s"]) for e in evals])
    finite = lambda v: float(v) if np.isfinite(v) else None  # noqa: E731
    return {
        "n_seeds": len(evals),
        "tta_s": [e["tta_s"] for e in evals],
        "tte_s": [e["tte_s"] for e in evals],
        "rel_error": [float(e["rel_error"]) for e in evals],
        "median_tta_s": finite(np.median(tta)),
        "min_tta_s": finite(tta.min()),
        "max_tta_s": finite(tta.max()),
        "median_tte_s": finite(np.median(tte)),
        "median_rel_error": float(np.nanmedian([e["rel_error"] for e in evals])),
        "diverged": sum(1 for e in evals if e.get("failed")),
    }
