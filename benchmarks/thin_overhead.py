"""What recording a kept draw costs: SSGLD's steps/s against BlackJAX SGLD at thin 1, 10, 100.

Both run the same minibatch potential (``regbayes.potentials.build_potential``, batch 100)
on HIGGS-shaped data (d = 28 plus an intercept), 20,000 steps from 0 without warm-up, and
both keep every ``thin``-th position: regbayes through its driver
(``regbayes.inference.sample``, what ``BayesianSVC.fit`` runs), BlackJAX as one jitted
``lax.scan`` per chunk. Interleaved warm repeats (compilation excluded), medians::

    PYTHONPATH=src .venv/bin/python benchmarks/thin_overhead.py            # ~2 min on 2 cores
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling modules
from competitors.blackjax_sgld import throughput_blackjax  # noqa: E402
from harness import describe, environment, interleaved, markdown_table  # noqa: E402
from svm_data import make_data, sigma_ref, svm_data  # noqa: E402
from svm_runners import throughput_regbayes  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--steps", type=int, default=20_000)
    p.add_argument("--thins", default="1,10,100")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    hyper = dict(C=1.0, margin=1.0, prior_scale=1.0)
    X, y, *_ = make_data(args.n, 10, 0)
    data = svm_data(X, y, **hyper)
    bj_step = 0.5 * (0.5 * sigma_ref(X, hyper["C"], hyper["prior_scale"])) ** 2  # bayes_svm.py's BlackJAX step
    rows = []
    for thin in (int(t) for t in args.thins.split(",")):
        calls = {
            "ssgld": throughput_regbayes("ssgld_plain", X, data, 100, None, args.steps, thin, hyper),
            "ssgld_adagrad": throughput_regbayes("ssgld", X, data, 100, None, args.steps, thin, hyper),
            "blackjax": throughput_blackjax(data, 100, bj_step, args.steps, thin),
        }
        got = interleaved(calls, args.repeats)
        rate = {name: describe([args.steps / wall for wall, _ in values])["median"] for name, values in got.items()}
        rows.append([thin, f"{rate['ssgld']:,.0f}", f"{rate['ssgld_adagrad']:,.0f}", f"{rate['blackjax']:,.0f}",
                     f"{rate['ssgld'] / rate['blackjax']:.2f}", f"{rate['ssgld_adagrad'] / rate['blackjax']:.2f}"])
    print(markdown_table(rows, ["thin", "SSGLD it/s", "SSGLD (AdaGrad) it/s", "BlackJAX SGLD it/s",
                                "SSGLD ÷ BlackJAX", "AdaGrad ÷ BlackJAX"]))
    env = environment()
    print(f"\n{env.get('cpu', '')}, N = {args.n:,}, {args.steps:,} steps, medians of {args.repeats} interleaved repeats")


if __name__ == "__main__":
    main()
