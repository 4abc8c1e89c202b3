"""MedLDA's SSGRLD with the documents sharded on Dask workers against one process.

The synthetic corpus of ``regbayes reproduce medlda-fig8`` (``--docs`` training
documents); ``MedLDA(sampler="ssgrld", n_topics=--k)`` with its defaults otherwise, fitted
in this process (``chain_method="local"``, ``n_jobs=1``: one core, as a worker has) and
with ``chain_method="dask"`` on a local cluster of ``--workers`` single-threaded workers,
each holding a shard of the documents and their topic assignments; the topics and the
classifier travel between them one trajectory at a time
(:mod:`regbayes.models.medlda_shards`). Each fit runs once untimed (compilation, the
workers' numba caches), then ``--repeats`` timed rounds alternate. Reported: sampling
seconds (the driver's, compilation and the classifier refit apart), whole-fit seconds,
test accuracy, and the overhead per trajectory: (sharded - local sampling s) / trajectories.

Usage::

    python benchmarks/sharded_medlda.py --docs 12000 --k 20 --repeats 3
"""
from __future__ import annotations

import argparse
import time
import warnings


import harness
import library_internals


def fit(corpus, chain_method, args, seed):
    from regbayes import MedLDA

    model = MedLDA(n_topics=args.k, sampler="ssgrld", random_state=seed, chain_method=chain_method,
                   n_jobs=1 if chain_method == "local" else None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        model.fit(corpus["X_train"], corpus["y_train"])
        seconds = time.perf_counter() - start
    accuracy = float(model.score(corpus["X_test"], corpus["y_test"]))
    trace = model.trace_
    return {"sampling_s": float(trace["wall_time"][-1]), "fit_s": seconds, "accuracy": accuracy,
            "trajectories": len(trace["wall_time"]), "n_iter": int(model.n_iter_)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=12_000)
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    start = time.perf_counter()

    from regbayes.inference.distributed import embedded_client

    results = {"environment": harness.environment(("numpy", "numba", "dask", "distributed")), "settings": vars(args)}
    corpus = library_internals.fig8_synthetic_corpus(args.docs, 0)
    harness.log(f"starting a local cluster of {args.workers} workers")
    embedded_client(args.workers)
    for method in ("local", "dask"):
        fit(corpus, method, args, 0)  # compilation, caches
    samples = harness.interleaved({m: (lambda r, m=m: fit(corpus, m, args, r)) for m in ("local", "dask")},
                                  args.repeats, warmup=0)
    summary = {}
    for method, runs in samples.items():
        summary[method] = {key: harness.describe([r[key] for r in runs]) for key in ("sampling_s", "fit_s", "accuracy")}
    trajectories = samples["dask"][0]["trajectories"]
    local_s, dask_s = summary["local"]["sampling_s"]["median"], summary["dask"]["sampling_s"]["median"]
    results.update(runs=samples, summary=summary, efficiency=local_s / dask_s,
                   overhead_per_trajectory=(dask_s - local_s) / trajectories)
    rows = [[m, f"{summary[m]['sampling_s']['median']:.2f}", f"{summary[m]['fit_s']['median']:.2f}",
             f"{summary[m]['accuracy']['min']:.3f}–{summary[m]['accuracy']['max']:.3f}"] for m in ("local", "dask")]
    report = "\n".join([
        f"MedLDA ssgrld, K = {args.k}, {args.docs} training documents ({corpus['description']}), "
        f"{samples['dask'][0]['n_iter']} iterations; {args.workers} workers; medians of {args.repeats} interleaved rounds",
        harness.markdown_table(rows, ["run", "sampling s", "fit s", "accuracy (min–max)"]),
        f"efficiency (local ÷ sharded sampling s) {local_s / dask_s:.2f}; {trajectories} trajectories, "
        f"overhead {1e3 * (dask_s - local_s) / trajectories:.1f} ms each",
    ])
    harness.close_run(results, start, report, args.out)


if __name__ == "__main__":
    main()
