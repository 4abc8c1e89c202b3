"""Many chains on one device: draws per second against the number of chains.

SSGLD (AdaGrad, the default kernel of ``BayesianSVC(sampler="ssgld")``) through regbayes'
driver, its chains side by side (``vmap``: one program steps them all), against BlackJAX's
``sgld`` ``vmap``-ed over the same number of chains. Both run regbayes' minibatch potential
of HIGGS-shaped rows (``--rows`` × 28 features and an intercept, batch ``--batch``, every
chain drawing its own minibatches from the shared rows), each with the step that
``bayes_svm.py``'s throughput table gives it (regbayes: its default relative step in whitened
coordinates; BlackJAX: ``(0.5 sigma_ref)^2 / 2``), keep
every ``--thin``-th position of ``--steps`` steps, and are timed on warm calls (compilation
apart) in ``--repeats`` interleaved rounds; the figures are medians.

* draws per second (per device) = chains × kept draws ÷ sampling seconds;
* speed-up over one chain = draws per second at ``c`` chains ÷ at 1 chain (``c`` if the
  chains cost no more than one, as long as the device has idle lanes);
* ``÷ BlackJAX`` = regbayes' draws per second ÷ BlackJAX's at the same number of chains.

``--estimator`` adds ``BayesianSVC(sampler="ssgld", n_chains=c)`` fits (warm-up, draws,
diagnostics: what a user runs), their sampling seconds and whole-fit seconds.

Usage::

    python benchmarks/many_chains.py --rows 1000000 --chains 1,16,128,1024 --repeats 3
"""
from __future__ import annotations

import argparse
import time
import warnings

import harness
from competitors.blackjax_sgld import throughput_blackjax_chains
from svm_data import make_data, sigma_ref, svm_data
from svm_runners import default_step, throughput_regbayes

HYPER = {"C": 1.0, "margin": 1.0, "prior_scale": 1.0}


def estimator_fit(X, y, n_chains, args):
    """``BayesianSVC(sampler="ssgld", n_chains=n_chains)``: (sampling s, whole fit s)."""
    from regbayes import BayesianSVC

    model = BayesianSVC(sampler="ssgld", n_chains=n_chains, n_warmup=args.estimator_warmup,
                        n_draws=args.steps // args.thin, thin=args.thin, batch_size=args.batch, random_state=0, **HYPER)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short runs: mixing warnings
        start = time.perf_counter()
        model.fit(X, y)
    return model.trace_["sampling_seconds"], time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--chains", default="1,4,16,64,256,1024", help="comma-separated chain counts")
    parser.add_argument("--steps", type=int, default=2_000, help="steps per chain of a timed run")
    parser.add_argument("--thin", type=int, default=10)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--estimator", action="store_true", help="also time BayesianSVC fits at each chain count")
    parser.add_argument("--estimator-warmup", type=int, default=1_000)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    counts = [int(c) for c in args.chains.split(",")]

    results = {"environment": harness.environment(("numpy", "blackjax")), "settings": vars(args)}
    X, y, _, _, source = make_data(args.rows, 0, seed=0)
    data = svm_data(X, y, HYPER["C"], HYPER["margin"], HYPER["prior_scale"])
    step = default_step("ssgld", X, args.batch, HYPER, n_warmup=0)
    blackjax_step = 0.5 * (0.5 * sigma_ref(X, HYPER["C"], HYPER["prior_scale"])) ** 2
    results.update(source=source, step_size=step, blackjax_step_size=blackjax_step)

    calls = {}
    for c in counts:
        harness.log(f"compiling for {c} chains")
        regbayes_run = throughput_regbayes("ssgld", X, data, args.batch, step, args.steps, args.thin, HYPER, n_chains=c)
        calls[("regbayes", c)] = lambda r, run=regbayes_run: run(10 + r)[0]
        calls[("blackjax", c)] = (lambda r, run=throughput_blackjax_chains(data, c, args.batch, blackjax_step, args.steps,
                                                                          args.thin): run(10 + r))
        if args.estimator:
            calls[("estimator", c)] = lambda r, c=c: estimator_fit(X, y, c, args)
    samples = harness.interleaved(calls, args.repeats)

    draws = args.steps // args.thin
    rows, table = [], {}
    for c in counts:
        rate = {lib: c * draws / harness.describe(samples[(lib, c)])["median"] for lib in ("regbayes", "blackjax")}
        entry = {"seconds": {lib: samples[(lib, c)] for lib in ("regbayes", "blackjax")}, "draws_per_s": rate}
        if args.estimator:
            fits = samples[("estimator", c)]
            entry["estimator"] = {"sampling_s": [s for s, _ in fits], "fit_s": [f for _, f in fits]}
        table[c] = entry
    one = table[counts[0]]["draws_per_s"]
    for c in counts:
        rate = table[c]["draws_per_s"]
        row = [str(c), f"{rate['regbayes']:.4g}", f"{rate['regbayes'] / one['regbayes'] * counts[0]:.1f}",
               f"{rate['blackjax']:.4g}", f"{rate['blackjax'] / one['blackjax'] * counts[0]:.1f}",
               f"{rate['regbayes'] / rate['blackjax']:.2f}",
               f"{1e6 * harness.describe(table[c]['seconds']['regbayes'])['median'] / args.steps:.0f}"]
        if args.estimator:
            fit = table[c]["estimator"]
            row += [f"{harness.describe(fit['sampling_s'])['median']:.2f}", f"{harness.describe(fit['fit_s'])['median']:.1f}"]
        rows.append(row)
    columns = ["chains", "regbayes draws/s", "× 1 chain", "BlackJAX draws/s", "× 1 chain", "regbayes ÷ BlackJAX",
               "µs per step of all chains"]
    if args.estimator:
        columns += ["BayesianSVC sampling s", "BayesianSVC fit s"]
    results["chains"] = table
    report = "\n".join([
        f"SSGLD, N = {args.rows} HIGGS-shaped rows ({source}), batch {args.batch}, {args.steps} steps per chain, "
        f"thin {args.thin}, steps {step:.3g} (regbayes, relative) and {blackjax_step:.3g} (BlackJAX); medians of {args.repeats} interleaved warm runs",
        harness.markdown_table(rows, columns),
    ])
    harness.close_run(results, start, report, args.out)


if __name__ == "__main__":
    main()
