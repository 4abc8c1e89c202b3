"""Sharded SSGLD on Dask workers against single-process SSGLD on the same rows.

HIGGS-shaped rows (``make_higgs_like``, 28 features) as a Dask array of ``--block``-row
chunks; ``BayesianSVC(sampler="ssgld", n_chains=4)`` fitted twice with the same settings:
in one process on the rows in memory (``chain_method="vectorized"``) and with
``chain_method="dask"`` on a local cluster of ``--workers`` single-threaded workers, each
holding a shard of about ``N / W`` rows, the chains moving between the shards every
trajectory of ``--trajectory`` steps (:mod:`regbayes.inference.sharded`). Each fit runs
once untimed first (compilation), then once timed. The sharded draws are compared with
the single-process ones coordinate by coordinate (``compare_to_reference``: mean error in
posterior sds with its Monte Carlo error, sd ratio); the efficiency is the single-process
sampling time over the sharded one.

Usage::

    python benchmarks/sharded.py --rows 100000 --thin 2000 --out sharded.json
    python benchmarks/sharded.py --rows 20000 --trajectory 200 --thin 200 --draws 2000 --gibbs-draws 4000
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import harness


def fit(data, y, chain_method, args, seed):
    from regbayes import BayesianSVC

    clf = BayesianSVC(sampler="ssgld", n_chains=args.chains, n_draws=args.draws, n_warmup=args.warmup, thin=args.thin,
                      random_state=seed, chain_method=chain_method)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(data, y)
    return clf


def draws(clf):
    return np.concatenate([clf.coef_draws_, clf.intercept_draws_[..., None]], -1)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--block", type=int, default=5_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=10_000)
    parser.add_argument("--draws", type=int, default=400)
    parser.add_argument("--thin", type=int, default=1_000)
    parser.add_argument("--trajectory", type=int, default=2_000, help="steps per shard visit (svm_stream.STEPS_PER_CHUNK)")
    parser.add_argument("--gibbs-draws", type=int, default=0, help="also compare both fits with Gibbs DA (exact), 2 chains")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    start = time.perf_counter()

    import dask.array as da

    from regbayes.datasets import make_higgs_like
    from regbayes.diagnostics import compare_to_reference
    from regbayes.inference.distributed import embedded_client
    from regbayes.models import svm_stream

    svm_stream.STEPS_PER_CHUNK = args.trajectory
    results = {"environment": harness.environment(("numpy", "dask", "distributed")), "settings": vars(args)}
    X, y = make_higgs_like(n_samples=args.rows, random_state=0)
    sharded = da.from_array(X, chunks=(args.block, X.shape[1]))
    embedded_client(args.workers)
    runs = {}
    for name, data, method in (("one process", X, "vectorized"), ("sharded", sharded, "dask")):
        fit(data, y, method, argparse.Namespace(**{**vars(args), "warmup": 200, "draws": 2, "thin": 10}), 0)  # compile
        harness.log(f"fit: {name}")
        clf, seconds = harness.timed(fit, data, y, method, args, 1)
        runs[name] = dict(clf=clf, fit_seconds=seconds, sampling_seconds=clf.trace_["sampling_seconds"])
    if args.gibbs_draws:  # the exact posterior: each fit's errors against it
        from regbayes import BayesianSVC

        harness.log("reference: Gibbs DA")
        exact = draws(BayesianSVC(sampler="gibbs", n_chains=2, n_draws=args.gibbs_draws, random_state=0).fit(X, y))
        for name, run in runs.items():
            c = compare_to_reference(draws(run["clf"]), exact)
            results[f"against Gibbs: {name}"] = dict(
                max_abs_z=float(np.abs(c.mean_error).max()), sd_ratio_median=float(np.median(c.sd_ratio)),
                sd_ratio_range=[float(c.sd_ratio.min()), float(c.sd_ratio.max())], mean_error=c.mean_error, sd_ratio=c.sd_ratio)
    cmp = compare_to_reference(draws(runs["sharded"]["clf"]), draws(runs["one process"]["clf"]))
    z_over_se = np.abs(cmp.mean_error) / cmp.mean_error_se
    efficiency = runs["one process"]["sampling_seconds"] / runs["sharded"]["sampling_seconds"]
    steps = args.warmup + args.draws * args.thin
    results.update(
        sampling_seconds={k: v["sampling_seconds"] for k, v in runs.items()}, efficiency=efficiency,
        mean_error=cmp.mean_error, mean_error_se=cmp.mean_error_se, sd_ratio=cmp.sd_ratio, sd_ratio_se=cmp.sd_ratio_se,
        shard_rows=runs["sharded"]["clf"].trace_["shard_rows"], rounds=int(np.ceil(steps / args.trajectory)))
    report = "\n".join([
        f"SSGLD, {args.chains} chains, N = {args.rows} in blocks of {args.block}, {args.warmup} warm-up + {args.draws} x "
        f"{args.thin} steps; sharded over {args.workers} workers (shards {results['shard_rows']} rows), trajectories of "
        f"{args.trajectory} steps ({results['rounds']} rounds)",
        f"sampling s: one process {runs['one process']['sampling_seconds']:.2f}, sharded "
        f"{runs['sharded']['sampling_seconds']:.2f}; efficiency {efficiency:.2f}",
        f"sharded against one process: max |z| {np.max(np.abs(cmp.mean_error)):.3f} (max |z| / se {z_over_se.max():.1f}, "
        f"median se {np.median(cmp.mean_error_se):.3f}); sd ratio median {np.median(cmp.sd_ratio):.3f}, range "
        f"{cmp.sd_ratio.min():.3f}-{cmp.sd_ratio.max():.3f} (median se {np.median(cmp.sd_ratio_se):.3f})",
        *(f"{key} ({args.gibbs_draws} x 2 draws): max |z| {v['max_abs_z']:.3f}, sd ratio median {v['sd_ratio_median']:.3f}, "
          f"range {v['sd_ratio_range'][0]:.3f}-{v['sd_ratio_range'][1]:.3f}" for key, v in results.items()
          if key.startswith("against Gibbs")),
    ])
    harness.close_run(results, start, report, args.out)


if __name__ == "__main__":
    main()
