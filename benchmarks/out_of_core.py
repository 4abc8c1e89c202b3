"""Data larger than memory: SSGLD reading its minibatches from disk against the same fit in memory.

HIGGS-shaped rows (``make_higgs_like``, 28 float32 features, labels int8) are written once
to ``--data-dir``: a Zarr group (chunks of ``--block`` rows, uncompressed) and, with
``--parquet``, a Parquet file of the same rows (row groups of ``--block`` rows). Each fit
then runs in a fresh Python process (``--repeats`` rounds, interleaved; the medians of
steps per second are reported), which reports its peak resident memory
(``ru_maxrss``) and its steps per second (kernel steps over ``trace_["sampling_seconds"]``:
the waits for blocks from disk included, compilation apart):

* ``memory``: ``BayesianSVC(sampler="ssgld")`` on the first ``--memory-rows`` rows, read
  from the Zarr group into memory first (the issue's anchor: an in-memory fit of 10^6 rows);
* ``zarr`` / ``parquet``: the same estimator on all ``--rows`` rows, ``fit(path)``
  (:mod:`regbayes.models.svm_stream`), with ``--reuse`` rows used per row read
  (``svm_stream.BLOCK_REUSE``).

Every fit has the estimator's defaults (10,000 warm-up steps, thin 100) and ``--draws``
draws. The operating system's page cache keeps the files after they are written: the
figures are those of data that fit in the machine's RAM but not in the process's budget
(a cold disk reads at its own speed).

Usage::

    python benchmarks/out_of_core.py --rows 30000000 --parquet --out out_of_core.json
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings

import harness


def write_data(args):
    """The Zarr group (and Parquet file) of ``args.rows`` rows, unless already there."""
    import numpy as np
    import zarr

    from regbayes.datasets import make_higgs_like

    zarr_path = os.path.join(args.data_dir, f"higgs_{args.rows}_{args.block}.zarr")
    parquet_path = os.path.join(args.data_dir, f"higgs_{args.rows}_{args.block}.parquet")
    piece = 1_000_000
    if not os.path.exists(os.path.join(zarr_path, "zarr.json")):
        harness.log(f"writing {zarr_path}")
        group = zarr.open_group(zarr_path + ".tmp", mode="w")
        X = group.create_array("X", shape=(args.rows, 28), chunks=(args.block, 28), dtype="f4", compressors=None)
        y = group.create_array("y", shape=(args.rows,), chunks=(args.block * 16,), dtype="i1", compressors=None)
        for k, start in enumerate(range(0, args.rows, piece)):
            Xk, yk = make_higgs_like(min(piece, args.rows - start), random_state=k)
            X[start:start + len(yk)] = Xk
            y[start:start + len(yk)] = yk.astype(np.int8)
        os.rename(zarr_path + ".tmp", zarr_path)
    if args.parquet and not os.path.exists(parquet_path):
        import pyarrow as pa
        import pyarrow.parquet as pq

        harness.log(f"writing {parquet_path}")
        group = zarr.open_group(zarr_path, mode="r")
        schema = pa.schema([*(pa.field(f"x{j}", pa.float32()) for j in range(28)), pa.field("label", pa.int8())])
        with pq.ParquetWriter(parquet_path + ".tmp", schema, compression="none") as writer:
            for start in range(0, args.rows, piece):
                Xk, yk = group["X"][start:start + piece], group["y"][start:start + piece]
                writer.write_table(pa.table({**{f"x{j}": Xk[:, j] for j in range(28)}, "label": yk}, schema=schema),
                                   row_group_size=args.block)
        os.rename(parquet_path + ".tmp", parquet_path)
    return zarr_path, parquet_path


def run_one(kind, path, args):
    """One fit in this process (``--run``): prints a JSON line of its figures."""
    import numpy as np

    from regbayes import BayesianSVC
    from regbayes.models import svm_stream

    svm_stream.BLOCK_REUSE = args.reuse
    start = time.perf_counter()
    if kind == "memory":
        import zarr

        group = zarr.open_group(path, mode="r")
        X, y = group["X"][: args.memory_rows], group["y"][: args.memory_rows]
        data = (X, y)
    else:
        data = (path, "label" if kind == "parquet" else None)
    model = BayesianSVC(sampler="ssgld", n_draws=args.draws, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(*data)
    trace = model.trace_
    steps = model.n_warmup_ + args.draws * model.thin_
    out = dict(kind=kind, rows=int(args.memory_rows if kind == "memory" else args.rows), steps=int(steps),
               sampling_seconds=trace["sampling_seconds"], compile_seconds=trace["compile_seconds"],
               fit_seconds=time.perf_counter() - start, steps_per_second=steps / trace["sampling_seconds"],
               peak_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
               blocks_read=trace.get("blocks_read"), n_slots=trace.get("n_slots"),
               steps_per_block=trace.get("steps_per_block"), disk_wait_seconds=trace.get("disk_wait_seconds"), coef_head=np.asarray(model.coef_[:3]).tolist())
    print("RESULT " + json.dumps(out))


def fit_in_child(kind, path, args):
    command = [sys.executable, __file__, "--run", kind, "--path", path, "--rows", str(args.rows), "--block", str(args.block),
               "--memory-rows", str(args.memory_rows), "--draws", str(args.draws), "--reuse", str(args.reuse)]
    harness.log(f"fit: {kind}")
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    line = [row for row in done.stdout.splitlines() if row.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=30_000_000)
    parser.add_argument("--block", type=int, default=65_536, help="rows per Zarr chunk / Parquet row group")
    parser.add_argument("--memory-rows", type=int, default=1_000_000)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--reuse", type=float, default=2.0, help="svm_stream.BLOCK_REUSE")
    parser.add_argument("--parquet", action="store_true", help="also write and fit the Parquet file")
    parser.add_argument("--data-dir", default=os.path.join(os.path.expanduser("~"), ".cache", "regbayes-bench"))
    parser.add_argument("--run", choices=("memory", "zarr", "parquet"), default=None, help=argparse.SUPPRESS)
    parser.add_argument("--path", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    if args.run is not None:
        return run_one(args.run, args.path, args)
    start = time.perf_counter()
    os.makedirs(args.data_dir, exist_ok=True)
    results = {"environment": harness.environment(("numpy", "zarr", "pyarrow"), jax=False), "settings": vars(args)}
    (zarr_path, parquet_path), write_seconds = harness.timed(write_data, args)
    results["write_seconds"] = write_seconds
    kinds = {"memory": zarr_path, "zarr": zarr_path, **({"parquet": parquet_path} if args.parquet else {})}
    runs = {kind: [] for kind in kinds}
    for _ in range(args.repeats):  # interleaved: the machine's load drifts
        for kind, path in kinds.items():
            runs[kind].append(fit_in_child(kind, path, args))
    results["runs"] = runs
    fits = {}
    for kind, done in runs.items():  # the run of median steps/s, its peak memory the largest of all
        ranked = sorted(done, key=lambda f: f["steps_per_second"])
        fits[kind] = dict(ranked[len(ranked) // 2], peak_rss_mib=max(f["peak_rss_mib"] for f in done))
    results["fits"] = fits
    base = fits["memory"]["steps_per_second"]
    rows = [[kind, f"{f['rows']:,}", f"{f['steps_per_second']:,.0f}", f"{f['steps_per_second'] / base:.2f}",
             f"{f['peak_rss_mib']:,.0f}", f"{f['fit_seconds']:.1f}", str(f.get("blocks_read") or "-"),
             "-" if f.get("disk_wait_seconds") is None else f"{f['disk_wait_seconds']:.2f}"]
            for kind, f in fits.items()]
    gib = args.rows * 28 * 4 / 2**30
    report = "\n".join([
        f"medians of {args.repeats} interleaved runs (peak RSS: the largest); "
        f"SSGLD defaults (10,000 warm-up steps, thin 100) x {args.draws} draws, batch 100; on disk {args.rows:,} rows x 28 "
        f"float32 ({gib:.2f} GiB of features) in blocks of {args.block:,} rows; reuse {args.reuse}",
        harness.markdown_table(rows, ["fit", "rows", "steps/s", "vs memory", "peak RSS MiB", "fit s", "blocks read", "waiting for blocks s"]),
    ])
    harness.close_run(results, start, report, args.out)


if __name__ == "__main__":
    main()
