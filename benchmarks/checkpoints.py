"""Checkpoints of BayesianSVC's fits: what they cost, and whether a killed fit resumes exactly.

* **Cost**: ``BayesianSVC(sampler="ssgld")`` on ``make_higgs_like(--n)`` (28 features),
  fitted without a checkpoint, with one at the default interval (``checkpoint_every=60``:
  the run hashes its data and settings once, and writes when a minute has passed), and
  with one after every chunk (``checkpoint_every=0``); medians of ``--repeats``
  interleaved fits after a warm-up fit (compilation excluded).
* **Kill and resume** (``--trials``): each trial starts the fit of ``--kill-draws`` draws in
  a fresh process with ``checkpoint_every=0``, waits for its first checkpoint, kills it
  with SIGKILL at a random moment of the rest of its expected run, then runs the same fit
  in this process, which resumes from the checkpoint the killed process left; the draws
  must equal those of an uninterrupted fit.

    PYTHONPATH=src .venv/bin/python benchmarks/checkpoints.py --out checkpoints.json
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the harness, also under runpy
from harness import describe, environment, finish_environment, interleaved, log, markdown_table, write_json  # noqa: E402

from regbayes import BayesianSVC, archive  # noqa: E402
from regbayes.datasets import make_higgs_like  # noqa: E402
from regbayes.inference import checkpoint  # noqa: E402

KILL_FIT = """
import sys
import numpy as np
from regbayes import BayesianSVC
from regbayes.datasets import make_higgs_like
X, y = make_higgs_like(n_samples={n}, random_state=0)
BayesianSVC(sampler="ssgld", n_chains=2, n_draws={draws}, thin=10, random_state=1, checkpoint={path!r},
            checkpoint_every=0).fit(X, y)
"""


def cost(args):
    X, y = make_higgs_like(n_samples=args.n, random_state=0)
    folder = tempfile.mkdtemp(prefix="regbayes-ckpt-")
    settings = dict(sampler="ssgld", n_draws=args.draws, random_state=0)
    variants = {"no checkpoint": {}, "checkpoint_every=60 (default)": {"checkpoint_every": 60.0},
                "checkpoint_every=0 (every chunk)": {"checkpoint_every": 0.0}}

    def fit(extra):
        def call(_round):
            path = os.path.join(folder, "fit.ckpt")
            if os.path.exists(path):
                os.unlink(path)  # a fresh run each time (a finished checkpoint would be read back)
            with_path = {**extra, "checkpoint": path} if extra else {}
            start = time.perf_counter()
            BayesianSVC(**settings, **with_path).fit(X, y)
            return time.perf_counter() - start
        return call

    times = interleaved({name: fit(extra) for name, extra in variants.items()}, args.repeats)
    base = describe(times["no checkpoint"])["median"]
    rows = [[name, f"{describe(t)['median']:.3f}", f"{describe(t)['median'] / base:.3f}"] for name, t in times.items()]
    return rows


def checkpoint_progress(path):
    """The progress record of a checkpoint written by another process."""
    metadata, npz = archive.unpack(path, open(path, "rb").read(), checkpoint.METADATA, checkpoint.TRAILER,
                                   checkpoint.CheckpointError, "checkpoint")
    npz.close()
    return metadata["progress"]


def kill_trials(args):
    X, y = make_higgs_like(n_samples=args.kill_n, random_state=0)
    plain = BayesianSVC(sampler="ssgld", n_chains=2, n_draws=args.kill_draws, thin=10, random_state=1).fit(X, y)
    start = time.perf_counter()
    BayesianSVC(sampler="ssgld", n_chains=2, n_draws=args.kill_draws, thin=10, random_state=1).fit(X, y)
    expected = time.perf_counter() - start
    rng = np.random.default_rng(args.seed)
    results = []
    for trial in range(args.trials):
        with tempfile.TemporaryDirectory(prefix="regbayes-kill-") as folder:
            path = os.path.join(folder, "fit.ckpt")
            child = subprocess.Popen([sys.executable, "-c", KILL_FIT.format(n=args.kill_n, draws=args.kill_draws, path=path)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            # the child imports and compiles first (seconds), then samples for about `expected`: wait for its
            # first checkpoint, then kill it at a random moment of the rest of its run
            started = time.perf_counter()
            while not os.path.exists(path) and child.poll() is None and time.perf_counter() - started < 120:
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, expected))
            delay = time.perf_counter() - started
            child.send_signal(signal.SIGKILL)
            child.wait()
            killed = child.returncode == -signal.SIGKILL
            had_checkpoint = os.path.exists(path)
            chunks = len(checkpoint_progress(path)["chunks"]) if had_checkpoint else 0
            resumed = BayesianSVC(sampler="ssgld", n_chains=2, n_draws=args.kill_draws, thin=10, random_state=1,
                                  checkpoint=path, checkpoint_every=0).fit(X, y)
            same = bool(np.array_equal(resumed.coef_draws_, plain.coef_draws_)
                        and np.array_equal(resumed.intercept_draws_, plain.intercept_draws_))
            results.append({"trial": trial, "kill_after_s": delay, "killed": killed, "checkpoint_found": had_checkpoint,
                            "chunks_in_checkpoint": chunks, "identical_draws": same})
            log(f"trial {trial}: killed after {delay:.2f} s ({'killed' if killed else 'had finished'}), checkpoint "
                f"of {chunks} chunks, identical draws: {same}")
    return expected, results


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=10**5, help="rows of the cost fits")
    p.add_argument("--draws", type=int, default=1000, help="n_draws of the cost fits")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--kill-n", type=int, default=10**4, help="rows of the killed fits")
    p.add_argument("--kill-draws", type=int, default=20000, help="n_draws (thin 10, 2 chains) of the killed fits")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out")
    args = p.parse_args(argv)
    env = environment(("numpy",))
    rows = cost(args)
    print(markdown_table(rows, ["fit", "median s", "÷ no checkpoint"]))
    expected, trials = kill_trials(args) if args.trials else (None, [])
    if trials:
        n_same = sum(t["identical_draws"] for t in trials)
        n_killed = sum(t["killed"] for t in trials)
        print(f"\nkill and resume: {n_same} of {len(trials)} trials gave identical draws ({n_killed} killed mid-run, "
              f"{sum(t['checkpoint_found'] for t in trials)} with a checkpoint; an uninterrupted fit samples for {expected:.2f} s)")
    finish_environment(env)
    if args.out:
        write_json(args.out, {"cost": rows, "kill_trials": trials, "sampling_seconds": expected, "environment": env,
                              "settings": vars(args)})


if __name__ == "__main__":
    main()
