"""``regbayes bench``: how fast the Bayesian-SVM samplers run on this machine.

Each sampler of :class:`~regbayes.BayesianSVC` is fitted on HIGGS-shaped synthetic data
(:func:`regbayes.datasets.make_higgs_like`, 28 features) and the fit's own records are
reported: kernel steps per second of sampling and compilation seconds apart (``trace_``),
with the test accuracy. This checks an installation and its hardware (CPU or GPU); the
comparisons against other libraries (BlackJAX, NumPyro, scikit-learn) are the scripts in
the repository's ``benchmarks/`` folder.
"""
from __future__ import annotations

import time

SAMPLERS = ("ssgld", "ssgnht", "srwm", "gibbs", "shmc")


def run(*, n: int = 20_000, samplers=SAMPLERS, n_draws: int = 200, seed: int = 0, progress: bool = False):
    """Fit each sampler once; a list of dicts (sampler, steps, it_per_s, compile_s, ...)."""
    from .. import BayesianSVC
    from ..datasets import make_higgs_like
    from ..validation import check_int

    n = check_int("n", n, 100)
    n_draws = check_int("n_draws", n_draws, 1)
    X, y = make_higgs_like(n + 10_000, random_state=seed)
    X_train, y_train, X_test, y_test = X[:n], y[:n], X[n:], y[n:]
    rows = []
    for sampler in samplers:
        # the minibatch samplers with their default thinning but a short warm-up
        clf = BayesianSVC(sampler=sampler, n_draws=n_draws, n_warmup=200, random_state=seed, progress=progress)
        start = time.perf_counter()
        clf.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        steps = clf.n_warmup_ + n_draws * clf.thin_
        sampling = clf.trace_["sampling_seconds"]
        rows.append({
            "sampler": sampler, "n": n, "steps": steps, "it_per_s": steps / max(sampling, 1e-12),
            "compile_s": clf.trace_["compile_seconds"], "sampling_s": sampling, "fit_s": seconds,
            "accuracy": float(clf.score(X_test, y_test)),
        })
    return rows


def markdown(rows) -> str:
    lines = ["| sampler | N | steps | it/s | compile s | sampling s | test accuracy |", "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['sampler']} | {r['n']:,} | {r['steps']:,} | {r['it_per_s']:,.0f} | {r['compile_s']:.2f} | "
                     f"{r['sampling_s']:.2f} | {r['accuracy']:.3f} |")
    return "\n".join(lines)
