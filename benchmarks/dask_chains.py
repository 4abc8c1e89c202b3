"""Beyond one process: chains on Dask workers against the same chains in one process.

``BayesianSVC(sampler=..., n_chains=4)`` on HIGGS-shaped rows (``make_higgs_like``, 28
features), fitted twice with the same seed: ``chain_method="vectorized"`` (the four chains
``vmap``-ed in this process, XLA free to use both cores) and ``chain_method="dask"`` on a
local cluster of ``--workers`` single-threaded worker processes (two chains each). Every
fit runs once untimed first (each side's compilation: this process's, the workers'), then
``--repeats`` timed fits alternate between the two; the figure is the sampling wall time
(``trace_["sampling_seconds"]``: every chunk's round trip to the workers included,
compilation apart). The draws must be equal.

The projection to 8 and 64 workers (the same chains per worker: weak scaling) splits a
dask fit's sampling time into compute, ``rounds`` times the vectorized time of one
group's chains per round, and the overhead of the rounds (one task per worker each). The
overhead of a round is measured on its own at 1 and 2 workers (rounds of one step, whose
compute is negligible) and fitted as ``o(W) = o_fixed + o_task W`` (the scheduler handles
a task per worker, the client sends and receives the states of each); then
efficiency(W) = c / (c + o(W)) with ``c`` the compute of a round.

Usage::

    python benchmarks/dask_chains.py --rows 10000 --repeats 3 --out dask_chains.json

(Not ``distributed.py``: a script of that name, whose folder Python puts first on
``sys.path``, would be imported in place of Dask's ``distributed`` package, by itself and
by the worker processes that re-import it.)
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import harness
import library_internals


def fit(X, y, chain_method, args, seed):
    from regbayes import BayesianSVC

    clf = BayesianSVC(sampler=args.sampler, n_chains=args.chains, n_draws=args.draws, n_warmup=args.warmup,
                      thin=args.thin, random_state=seed, chain_method=chain_method)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    return clf


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--sampler", default="ssgld")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=10_000)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--thin", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    start = time.perf_counter()

    from regbayes.datasets import make_higgs_like
    from regbayes.inference.distributed import embedded_client

    results = {"environment": harness.environment(("numpy", "dask", "distributed")), "settings": vars(args)}
    X, y = make_higgs_like(n_samples=args.rows, random_state=0)
    harness.log(f"starting a local cluster of {args.workers} workers")
    (_, cluster_seconds) = harness.timed(embedded_client, args.workers)
    results["cluster_start_seconds"] = cluster_seconds

    first = {m: fit(X, y, m, args, 0) for m in ("vectorized", "dask")}
    same = bool(np.array_equal(first["vectorized"].coef_draws_, first["dask"].coef_draws_))
    results["identical_draws"] = same
    results["compile_seconds"] = {m: clf.trace_["compile_seconds"] for m, clf in first.items()}
    samples = harness.interleaved(
        {m: (lambda r, m=m: fit(X, y, m, args, 0).trace_["sampling_seconds"]) for m in ("vectorized", "dask")},
        args.repeats, warmup=0)
    summary = {m: harness.describe(v) for m, v in samples.items()}
    speedup = summary["vectorized"]["median"] / summary["dask"]["median"]
    results.update(sampling_seconds=samples, summary=summary, speedup=speedup)

    # compute per round, and the overhead of a round at 1 and 2 workers
    with library_internals.counted_dask_rounds() as counted:
        fit(X, y, "dask", args, 0)
    rounds = counted["rounds"]
    groups = min(args.chains, args.workers)
    group_compute = summary["vectorized"]["median"] * (args.chains / groups) / args.chains / rounds
    overhead = {}
    for workers in (1, 2):
        from regbayes.inference.distributed import embedded_client as client_of

        client_of(workers)
        tiny = argparse.Namespace(**{**vars(args), "warmup": 0, "draws": 40, "thin": 1})
        fit(X, y, "dask", tiny, 0)
        with library_internals.counted_dask_rounds() as counted:
            seconds = fit(X, y, "dask", tiny, 0).trace_["sampling_seconds"]
        overhead[workers] = seconds / counted["rounds"]
    o_task = max(0.0, overhead[2] - overhead[1])
    o_fixed = max(0.0, overhead[1] - o_task)
    projection = {w: group_compute / (group_compute + o_fixed + o_task * w) for w in (args.workers, 8, 64)}
    results.update(rounds=rounds, group_compute_per_round=group_compute, round_overhead=overhead,
                   projected_efficiency=projection)

    rows = [
        ["vectorized (1 process)", f"{summary['vectorized']['median']:.2f}", f"{results['compile_seconds']['vectorized']:.1f}", "1.00"],
        [f"dask ({args.workers} workers)", f"{summary['dask']['median']:.2f}", f"{results['compile_seconds']['dask']:.1f}",
         f"{speedup:.2f}"],
    ]
    report = "\n".join([
        f"{args.chains} chains of {args.sampler}, N = {args.rows}, {args.warmup} warm-up + {args.draws} x {args.thin} steps; "
        f"identical draws: {same}; cluster start {cluster_seconds:.1f} s",
        harness.markdown_table(rows, ["chains run", "sampling s (median)", "compile s", "speed-up"]),
        f"{rounds} rounds to the workers, {1e3 * group_compute:.1f} ms of a group's compute each; overhead of a "
        f"round {1e3 * overhead[1]:.1f} ms at 1 worker, {1e3 * overhead[2]:.1f} ms at 2",
        "projected efficiency (compute / (compute + overhead)): "
        + ", ".join(f"{w} workers {e:.2f}" for w, e in projection.items()),
    ])
    harness.close_run(results, start, report, args.out)


if __name__ == "__main__":
    main()
