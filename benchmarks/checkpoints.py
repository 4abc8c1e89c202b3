"""Checkpoints of BayesianSVC's fits: what they cost, and whether a killed fit resumes exactly.

With ``--model infinite-svc`` or ``--model medlda`` (or another host-loop estimator of
:data:`HOST_MODELS`), the same two measurements for an estimator that runs the host loop
(:mod:`regbayes.inference.host_checkpoint`): the cost of fits of ``--cost-iter``
iterations without a checkpoint, at the default interval (60 s) and every 5 s, with the
share of each fit spent in the checkpoint's own code (fingerprint, encoding, writing:
machine load blurs whole-fit ratios far more); and ``--trials`` SIGKILL trials of fits of ``--kill-iter`` iterations written
every iteration, resumed in this process, whose fitted attributes (timings apart) must
equal an uninterrupted fit's bit for bit.

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
    PYTHONPATH=src .venv/bin/python benchmarks/checkpoints.py --model infinite-svc --trials 20
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
from regbayes.inference import checkpoint, host_checkpoint  # noqa: E402

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


def kill_after_first_checkpoint(command, path, rng, expected, wait):
    """Start ``command``, wait (at most ``wait`` s) for its first checkpoint at ``path``, then
    SIGKILL it at a random moment of the next ``expected`` seconds. Returns (seconds from the
    start to the kill, whether the signal killed it, whether a checkpoint was there)."""
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started = time.perf_counter()
    while not os.path.exists(path) and child.poll() is None and time.perf_counter() - started < wait:
        time.sleep(0.01)
    time.sleep(rng.uniform(0.0, expected))
    delay = time.perf_counter() - started
    child.send_signal(signal.SIGKILL)
    child.wait()
    return delay, child.returncode == -signal.SIGKILL, os.path.exists(path)


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
            # the child imports and compiles first (seconds), then samples for about `expected`
            delay, killed, had_checkpoint = kill_after_first_checkpoint(
                [sys.executable, "-c", KILL_FIT.format(n=args.kill_n, draws=args.kill_draws, path=path)], path, rng,
                expected, 120)
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


# --------------------------------------------------------------------------- host-loop estimators
def _blobs(n):
    from sklearn.datasets import make_blobs

    X, y = make_blobs(n_samples=n, centers=4, n_features=4, random_state=0)
    return X, y % 2


def _corpus(n):
    from regbayes.datasets import make_topic_corpus

    return make_topic_corpus(n_docs=n, n_topics=10, n_words=500, random_state=0)[:2]


#: --model: (data of n rows, estimator of n_iter iterations)
HOST_MODELS = {
    "infinite-svc": (_blobs, lambda n_iter: __import__("regbayes").InfiniteSVC(n_iter=n_iter, n_warmup=n_iter // 2,
                                                                               random_state=1)),
    "medlda": (_corpus, lambda n_iter: __import__("regbayes").MedLDA(n_topics=10, n_iter=n_iter, random_state=1)),
    "medlda-gibbs": (_corpus, lambda n_iter: __import__("regbayes").MedLDA(n_topics=10, sampler="gibbs", n_iter=n_iter,
                                                                           random_state=1)),
    "dpmnl": (_blobs, lambda n_iter: __import__("regbayes").DPMNLClassifier(n_iter=n_iter, n_warmup=n_iter // 2,
                                                                            random_state=1)),
}
TIMING_KEYS = ("wall_time", "seconds", "per_second")


def same_attributes(a, b) -> bool:
    """Whether two fitted attributes (or values in them) are equal bit for bit, timings apart."""
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_attributes(a[k], b[k]) for k in a
                                            if not (isinstance(k, str) and any(t in k for t in TIMING_KEYS)))
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same_attributes(u, v) for u, v in zip(a, b))
    if callable(a) or hasattr(a, "get_params"):
        return type(a) is type(b)
    return type(a) is type(b) and bool(a == b)


def host_fit(model, n, n_iter, **params):
    data, make = HOST_MODELS[model]
    X, y = data(n)
    return make(n_iter).set_params(**params).fit(X, y)


def host_cost(args):
    """Fits without a checkpoint, at the default interval and every 5 s: whole-fit times, and
    the seconds spent in the checkpoint's own code (the fingerprint of the run, encoding and
    writing), which machine load does not blur as it blurs whole-fit ratios."""
    from regbayes.inference import host

    folder = tempfile.mkdtemp(prefix="regbayes-ckpt-")
    spent = []
    originals = {}

    def timed(owner, name, count):
        original = getattr(owner, name)
        originals[(owner, name)] = original

        def wrapper(*a, **k):
            start = time.perf_counter()
            try:
                return original(*a, **k)
            finally:
                spent[-1]["seconds"] += time.perf_counter() - start
                spent[-1]["writes"] += count

        setattr(owner, name, wrapper)

    timed(host, "tree_fingerprint", 0)
    timed(host_checkpoint.HostCheckpoint, "update", 0)
    timed(host_checkpoint.HostCheckpoint, "begin", 0)
    write = host_checkpoint.HostCheckpoint.write

    def counted_write(self):
        spent[-1]["writes"] += 1
        write(self)

    host_checkpoint.HostCheckpoint.write = counted_write  # timed within update
    variants = {"no checkpoint": None, "checkpoint_every=60 (default)": 60.0, "checkpoint_every=5": 5.0}

    def fit(every):
        def call(_round):
            path = os.path.join(folder, "fit.ckpt")
            if os.path.exists(path):
                os.unlink(path)
            spent.append({"seconds": 0.0, "writes": 0})
            start = time.perf_counter()
            host_fit(args.model, args.n, args.cost_iter, **({} if every is None else {"checkpoint": path,
                                                                                       "checkpoint_every": every}))
            return time.perf_counter() - start, spent[-1]["writes"], spent[-1]["seconds"]
        return call

    try:
        times = interleaved({name: fit(every) for name, every in variants.items()}, args.repeats)
    finally:
        for (owner, name), original in originals.items():
            setattr(owner, name, original)
        host_checkpoint.HostCheckpoint.write = write
    base = describe([t for t, _, _ in times["no checkpoint"]])["median"]
    rows = []
    for name, samples in times.items():
        median = describe([t for t, _, _ in samples])["median"]
        writes = describe([w for _, w, _ in samples])["median"]
        inside = describe([s / t for t, _, s in samples])["median"]
        rows.append([name, f"{median:.2f}", f"{median / base:.3f}", f"{writes:.0f}",
                     "" if name == "no checkpoint" else f"{100 * inside:.2f} %"])
    return rows


def host_kill_trials(args):
    plain = host_fit(args.model, args.kill_n, args.kill_iter)
    expected = float(plain.trace_["wall_time"][-1])
    reference = dict(vars(plain))
    rng = np.random.default_rng(args.seed)
    here = os.path.abspath(__file__)
    results = []
    for trial in range(args.trials):
        with tempfile.TemporaryDirectory(prefix="regbayes-kill-") as folder:
            path = os.path.join(folder, "fit.ckpt")
            delay, killed, had_checkpoint = kill_after_first_checkpoint(
                [sys.executable, here, "--model", args.model, "--child", path, "--kill-n", str(args.kill_n),
                 "--kill-iter", str(args.kill_iter)], path, rng, expected, 300)
            done = 0
            if had_checkpoint:
                parts = checkpoint_progress(path)[host_checkpoint.PROGRESS_KEY]
                done = sum(v for part in parts for k, v in part["tree"]["items"] if k == "t")  # iterations done
            resumed = host_fit(args.model, args.kill_n, args.kill_iter, checkpoint=path)  # writes rarely: faster
            same = all(same_attributes(value, vars(resumed)[name]) for name, value in reference.items()
                       if name not in ("checkpoint", "checkpoint_every"))
            results.append({"trial": trial, "kill_after_s": delay, "killed": killed, "checkpoint_found": had_checkpoint,
                            "iterations_in_checkpoint": done, "identical_attributes": same})
            log(f"trial {trial}: killed after {delay:.2f} s ({'killed' if killed else 'had finished'}), checkpoint "
                f"after {done} of {args.kill_iter} iterations, identical fitted attributes: {same}")
    return expected, results


def host_main(args, env):
    rows = host_cost(args) if args.repeats else []
    if rows:
        print(markdown_table(rows, ["fit", "median s", "÷ no checkpoint", "writes per fit",
                                    "in checkpoint code (median share of the fit)"]))
    expected, trials = host_kill_trials(args) if args.trials else (None, [])
    if trials:
        print(f"\n{args.model} kill and resume: {sum(t['identical_attributes'] for t in trials)} of {len(trials)} trials "
              f"gave identical fitted attributes ({sum(t['killed'] for t in trials)} killed mid-run, "
              f"{sum(t['checkpoint_found'] for t in trials)} with a checkpoint; an uninterrupted fit samples for "
              f"{expected:.2f} s)")
    finish_environment(env)
    if args.out:
        write_json(args.out, {"model": args.model, "cost": rows, "kill_trials": trials, "sampling_seconds": expected,
                              "environment": env, "settings": vars(args)})


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=("bayes-svc", *HOST_MODELS), default="bayes-svc")
    p.add_argument("--cost-iter", type=int, default=1000, help="iterations of the host-loop cost fits")
    p.add_argument("--kill-iter", type=int, default=300, help="iterations of the killed host-loop fits")
    p.add_argument("--child", metavar="PATH", help=argparse.SUPPRESS)  # a killed fit: its checkpoint path
    p.add_argument("--n", type=int, default=None,
                   help="rows (documents for medlda) of the cost fits (default 10^5; host-loop models 2000)")
    p.add_argument("--draws", type=int, default=1000, help="n_draws of the cost fits")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--kill-n", type=int, default=None,
                   help="rows (documents) of the killed fits (default 10^4; host-loop models 2000)")
    p.add_argument("--kill-draws", type=int, default=20000, help="n_draws (thin 10, 2 chains) of the killed fits")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out")
    args = p.parse_args(argv)
    host = args.model != "bayes-svc"
    args.n = args.n or (2000 if host else 10**5)
    args.kill_n = args.kill_n or (2000 if host else 10**4)
    if args.child:
        host_fit(args.model, args.kill_n, args.kill_iter, checkpoint=args.child, checkpoint_every=0)
        return
    env = environment(("numpy",))
    if host:
        return host_main(args, env)
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
