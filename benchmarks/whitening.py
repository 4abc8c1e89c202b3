"""Dense against diagonal whitening for a multi-class BayesianSVC (P = 400 coordinates).

The features are the label-free topic proportions (K = 20) of a Gibbs MedLDA fit to the
synthetic 20-class corpus of ``medlda-fig8`` (3,000 training and 750 test documents). On
them ``BayesianSVC(sampler="ssgld", fit_intercept=False)`` with its defaults (Crammer–Singer
hinge, 20 x 20 weights) is fitted with the driver's whitening transform dense and
diagonal (the driver's ``DENSE_TRANSFORM_MAX`` above and below P, set through
``library_internals``), for a few
seeds. Reported: test accuracy, fit seconds, minimum bulk ESS over the 400 coordinates.

    PYTHONPATH=src .venv/bin/python benchmarks/whitening.py            # ~3 min on 2 cores
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings

import arviz as az

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling modules, also under runpy
from harness import markdown_header, markdown_row, timed  # noqa: E402
from library_internals import fig8_synthetic_corpus, forced_dense_transform_max  # noqa: E402

from regbayes import BayesianSVC, MedLDA  # noqa: E402
from regbayes.inference.adaptation import DENSE_TRANSFORM_MAX  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=2)
    args = p.parse_args(argv)
    corpus = fig8_synthetic_corpus(3000, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # empty documents dropped: reported by MedLDA itself
        topics = MedLDA(n_topics=20, sampler="gibbs", n_iter=40, random_state=0).fit(corpus["X_train"], corpus["y_train"])
    Z_train, Z_test = topics.transform(corpus["X_train"]), topics.transform(corpus["X_test"])
    P = 20 * len(set(corpus["y_train"]))
    print(f"P = {P} coordinates; DENSE_TRANSFORM_MAX = {DENSE_TRANSFORM_MAX}\n")
    print(markdown_header(["transform", "seed", "test accuracy", "fit s", "min bulk ESS"]))
    for name, limit in (("dense", P), ("diagonal", P - 1)):
        with forced_dense_transform_max(limit):
            for seed in range(args.seeds):
                model = BayesianSVC(sampler="ssgld", fit_intercept=False, random_state=seed)
                clf, seconds = timed(model.fit, Z_train, corpus["y_train"])
                ess = float(az.ess(clf.idata_).to_array().min())
                accuracy = clf.score(Z_test, corpus["y_test"])
                print(markdown_row([name, seed, f"{accuracy:.3f}", f"{seconds:.1f}", f"{ess:.0f}"]), flush=True)


if __name__ == "__main__":
    main()
