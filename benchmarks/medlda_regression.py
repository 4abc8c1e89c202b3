"""MedLDA regression: token throughput of its Gibbs sweep against the classification Gibbs
MedLDA's, on the same corpus and K, measured side by side in one process.

* kernel: one collapsed Gibbs sweep over every token, the regression's
  (:func:`regbayes.algorithms.medlda_regression.token_sweep`: the classification kernel with
  the regression's per-document arguments) against ``gibbs_medlda_sweep`` with one binary
  classifier (M = 1, ``MedLDA(sampler="gibbs")`` on two classes), with the same eta and
  augmentation variables of typical size; median over ``--repeats`` sweeps after one untimed, the two taking turns;
* end to end: ``MedLDARegressor`` against ``MedLDA(sampler="gibbs", refit_classifier=False)``
  on the labels ``y > median(y)`` (``trace_["tokens_per_second"]`` at the last iteration: the
  sweeps plus the augmentation / eta updates and bookkeeping, compilation excluded; a warm-up
  fit first so that nothing compiles inside the timed ones), the median of ``--fits`` fits each,
  the two estimators taking turns.

Corpus: ``make_topic_regression_corpus`` (``--n`` documents, K topics, V = 2000, mean length 80).

Usage::

    PYTHONPATH=src python benchmarks/medlda_regression.py            # 5000 documents, ~0.4 M tokens
    PYTHONPATH=src python benchmarks/medlda_regression.py --n 20000 --topics 50
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from regbayes import MedLDA, MedLDARegressor
from regbayes.algorithms import lda_kernels as kern
from regbayes.algorithms import medlda_regression as reg
from regbayes.datasets.topic_corpus import make_topic_regression_corpus


def median_rates(sweeps, n_tokens, repeats):
    """Tokens per second of each sweep (dict name -> function of a seed): the median over
    ``repeats`` timed calls after one untimed call, the sweeps taking turns so that a change
    of the machine's load falls on all of them alike."""
    for sweep in sweeps.values():
        sweep(0)
    seconds = {name: [] for name in sweeps}
    for r in range(repeats):
        for name, sweep in sweeps.items():
            start = time.perf_counter()
            sweep(r + 1)
            seconds[name].append(time.perf_counter() - start)
    return {name: n_tokens / float(np.median(values)) for name, values in seconds.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--topics", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--n-iter", type=int, default=20)
    parser.add_argument("--fits", type=int, default=3)
    args = parser.parse_args()

    corpus = make_topic_regression_corpus(n_docs=args.n, n_topics=args.topics, n_words=2000, doc_length=80, noise=0.1,
                                          random_state=0)
    X, y = corpus.X, corpus.y
    K = args.topics
    doc_ptr, words = kern.tokens_from_counts(X)
    n_tokens = int(words.shape[0])
    rng = np.random.default_rng(0)
    coef = rng.normal(0, 1, K)
    inv_lam, inv_star = rng.uniform(0.2, 5.0, (2, y.shape[0]))

    data = reg.make_data(doc_ptr, words, y, n_topics=K, n_words=X.shape[1], alpha=0.1, beta=0.01, C=5.0, epsilon=0.05,
                         prior_scale=1.0, fit_intercept=True)
    state = reg.init(0, data)._replace(coef=coef, inv_lam=inv_lam, inv_lam_star=inv_star)
    z, ndk, nwk, nk = state.z, state.ndk, state.nwk, state.nk
    y_sign = np.where(y > np.median(y), 1.0, -1.0)[:, None]

    def regression(seed):
        return reg.token_sweep(seed, state, data)

    def classification(seed):
        return kern.gibbs_medlda_sweep(doc_ptr, words, z, ndk, nwk, nk, coef[None, :], y_sign, inv_lam[:, None], 0.1, 0.01,
                                       5.0, 1.0, seed)

    rates = median_rates({"regression sweep": regression, "classification sweep (M = 1)": classification}, n_tokens,
                         args.repeats)

    labels = (y > np.median(y)).astype(int)
    common = dict(n_topics=K, alpha=0.1, beta=0.01, C=5.0, random_state=0, n_transform_sweeps=2)
    fits = {"MedLDARegressor end to end": (lambda n: MedLDARegressor(epsilon=0.05, n_iter=n, **common), y),
            "MedLDA gibbs end to end": (lambda n: MedLDA(sampler="gibbs", refit_classifier=False, n_draws=1, n_iter=n,
                                                         **common), labels)}
    for make, target in fits.values():
        make(2).fit(X[:200], target[:200])  # warm-up: compile or load every kernel
    end_to_end = {name: [] for name in fits}
    for _ in range(args.fits):  # the two take turns
        for name, (make, target) in fits.items():
            end_to_end[name].append(float(make(args.n_iter).fit(X, target).trace_["tokens_per_second"][-1]))
    rates.update({name: float(np.median(values)) for name, values in end_to_end.items()})

    print(f"corpus: {args.n} documents, {n_tokens} tokens, K = {K}")
    for name, rate in rates.items():
        print(f"  {name:32s} {rate / 1e6:7.2f} M tokens/s")
    print(f"  ratio regression / classification: sweep {rates['regression sweep'] / rates['classification sweep (M = 1)']:.3f}, "
          f"end to end {rates['MedLDARegressor end to end'] / rates['MedLDA gibbs end to end']:.3f}")


if __name__ == "__main__":
    main()
