"""Sharded SGLD's trajectory length against its bias, in one process (a design probe for
distributed SGLD, Ahn, Shahbaz & Welling 2014).

The rows are split at random into ``--shards`` equal shards. Each chain runs a trajectory
of ``L`` SSGLD steps with minibatches drawn from one shard only, the subgradient scaled by
``shards * N_s / b`` (each shard is visited one trajectory in ``shards``, so the scaled
shard sum is unbiased for the full one), then moves to the next shard. The shard is stored
``shards`` times over, which draws its rows uniformly with the scale the potential then
applies (``rows / b``). Both runs start from the same warm-up on all rows (10,000 steps,
adapted transform) and run the same number of steps with the same kernel, step and
thinning; the reference draws every minibatch from all rows. Reported per ``L``: the
largest and median |mean difference| in reference posterior sds, and the spread of the
ratio of posterior sds (sharded / reference) over the coordinates.

Within a trajectory the chain drifts toward its shard's posterior; trajectories much
longer than the chain's mixing time give a mixture of shard posteriors, wider than the
posterior.

Usage::

    python benchmarks/shard_trajectories.py --lengths 100,250,500,5000 --out shards.json
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import harness


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--steps", type=int, default=200_000, help="steps per chain after warm-up")
    parser.add_argument("--thin", type=int, default=50)
    parser.add_argument("--lengths", default="100,250,500,5000", help="trajectory lengths L (multiples of --thin)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    warnings.simplefilter("ignore")

    import jax
    import jax.numpy as jnp

    from regbayes.datasets import make_higgs_like
    from regbayes.inference import sample
    from regbayes.potentials import SVMData, build_potential, sigma_ref
    from regbayes.samplers import defaults, ssgld

    results = {"environment": harness.environment(("numpy",)), "settings": vars(args), "rows": []}
    X, y = make_higgs_like(n_samples=args.rows, random_state=0)
    n, d = X.shape
    width = sigma_ref(X, 1.0, 1.0)
    X = np.hstack([X, np.ones((n, 1), np.float32)]).astype(np.float32)
    y = np.where(y > 0, 1.0, -1.0).astype(np.float32)

    def svm(A, labels):
        return SVMData(jnp.asarray(A), jnp.asarray(labels), jnp.float32(1), jnp.float32(1), jnp.float32(1))

    order = np.random.default_rng(1).permutation(n)
    shards = [svm(np.tile(X[order[s::args.shards]], (args.shards, 1)), np.tile(y[order[s::args.shards]], args.shards))
              for s in range(args.shards)]
    b = 100
    h, preconditioner = defaults.step_schedule("ssgld", n_data=n, batch_size=b, n_params=d + 1, n_warmup=10_000,
                                               sigma_ref=width, prior_scale=1.0)
    kernel = ssgld(build_potential(b), preconditioner)
    warm = sample(kernel, svm(X, y), jnp.zeros((args.chains, d + 1)), jax.random.key(0), n_warmup=10_000, n_draws=1,
                  step_size=h, initial_scale=defaults.start_scale("ssgld", width, 1.0))
    ref = sample(kernel, svm(X, y), None, None, n_warmup=0, n_draws=args.steps // args.thin, thin=args.thin,
                 step_size=h, start=warm).positions.reshape(-1, d + 1)
    rows = []
    for length in (int(v) for v in args.lengths.split(",")):
        harness.log(f"L = {length}")
        previous, parts = warm, []
        for r in range(args.steps // length):
            previous = sample(kernel, shards[r % args.shards], None, None, n_warmup=0, n_draws=length // args.thin,
                              thin=args.thin, step_size=h, start=previous, n_chunks=1)
            parts.append(previous.positions)
        draws = np.concatenate(parts, axis=1).reshape(-1, d + 1)
        z = np.abs(draws.mean(0) - ref.mean(0)) / ref.std(0)
        ratio = draws.std(0) / ref.std(0)
        row = dict(length=length, max_z=float(z.max()), median_z=float(np.median(z)), sd_ratio_median=float(np.median(ratio)),
                   sd_ratio_min=float(ratio.min()), sd_ratio_max=float(ratio.max()))
        results["rows"].append(row)
        rows.append([length, f"{row['max_z']:.3f}", f"{row['median_z']:.3f}", f"{row['sd_ratio_median']:.3f}",
                     f"{row['sd_ratio_min']:.3f}–{row['sd_ratio_max']:.3f}"])
    report = "\n".join([
        f"{args.shards} shards of N = {n}, {args.chains} chains x {args.steps} steps (thin {args.thin}) after a common warm-up",
        harness.markdown_table(rows, ["L (steps per shard visit)", "max |z|", "median |z|", "sd ratio median",
                                      "sd ratio range"]),
    ])
    harness.close_run(results, start, report, args.out)


if __name__ == "__main__":
    main()
