"""Reproductions of the papers' experiments (paper 000 Sections 5.1-5.3, paper 001, paper 002 Section 5).

Each module has ``run(out_dir, **options) -> dict`` that writes ``<name>.png``,
``<name>.json`` (the numbers) and ``results.md`` (a markdown table) into ``out_dir`` and
returns the paths, the table and the numbers. Common options: ``n`` (data size where it
applies), ``quick`` (small and fast), ``seed``, ``progress`` (progress bars).

* ``fig4`` -- posterior samples of a 2-D Bayesian SVM: Gibbs vs SSGLD vs SSGNHT
* ``fig5`` -- test accuracy vs wall time, five samplers, Higgs-like and breast cancer
* ``fig6`` -- minibatch-size sensitivity of SSGLD and SSGNHT
* ``fig7`` -- SSGLD with AdaGrad vs polynomial step sizes
* ``sva-table1`` -- paper 001 Table 1: M2DPM and baselines on Settings I and II
* ``sva-table2`` -- paper 001 Table 2: inferred number of components vs n0, and time
* ``sva-table3`` -- paper 001 Table 3: protein fold classification
* ``sva-table4`` -- paper 001 Table 4: Parkinson's disease detection (Table 5 needs clinical data
  that is not public)
* ``sva-clusters`` -- M2DPM's clusters and per-component classifiers on a 2-D example
* ``isvm-table2`` -- paper 000 Table 2: Gibbs iSVM, eta-step by Gibbs DA vs SSGNHT
* ``medlda-fig8`` -- MedLDA accuracy vs documents processed and wall time (paper 000, Fig. 8)
* ``medlda-topics`` -- per-class topic proportions and salient topics' words (Fig. 9, Table 1)
* ``medlda-multilabel`` -- multi-label MedLDA F1 vs documents and wall time, SSGRLD vs Gibbs vs
  paMedLDA (Fig. 8 right)
* ``ilsvm-table1`` -- paper 002 Table 1: iLSVM vs IBP+SVM vs LinearSVC on multi-view data
* ``mtilsvm-table2`` -- paper 002 Table 2: MT-iLSVM on multi-label Yeast
* ``mtilsvm-fig7`` / ``-fig8`` / ``-fig9`` -- paper 002: multi-task regression (School-type data),
  sensitivity to alpha and C, training size and time
* ``demo`` -- a short tour on breast cancer (not a paper figure)

:mod:`.bench` (``regbayes bench``) is not an experiment: it times the samplers on this machine.
"""
from __future__ import annotations

from . import (
    demo,
    fig4,
    fig5,
    fig6,
    fig7,
    ilsvm_table1,
    isvm_table2,
    medlda_fig8,
    medlda_multilabel,
    medlda_topics,
    mtilsvm_fig7,
    mtilsvm_fig8,
    mtilsvm_fig9,
    mtilsvm_table2,
    sva_clusters,
    sva_table1,
    sva_table2,
    sva_table3,
    sva_table4,
)

EXPERIMENTS = {
    "fig4": fig4,
    "fig5": fig5,
    "fig6": fig6,
    "fig7": fig7,
    "sva-table1": sva_table1,
    "sva-table2": sva_table2,
    "sva-table3": sva_table3,
    "sva-table4": sva_table4,
    "sva-clusters": sva_clusters,
    "isvm-table2": isvm_table2,
    "medlda-fig8": medlda_fig8,
    "medlda-topics": medlda_topics,
    "medlda-multilabel": medlda_multilabel,
    "ilsvm-table1": ilsvm_table1,
    "mtilsvm-table2": mtilsvm_table2,
    "mtilsvm-fig7": mtilsvm_fig7,
    "mtilsvm-fig8": mtilsvm_fig8,
    "mtilsvm-fig9": mtilsvm_fig9,
    "demo": demo,
}


def get_experiment(name: str):
    """The experiment module called ``name`` (``KeyError`` with the known names otherwise)."""
    try:
        return EXPERIMENTS[name]
    except (KeyError, TypeError):
        raise KeyError(f"unknown experiment {name!r}; known: {', '.join(sorted(EXPERIMENTS))}") from None


def describe() -> dict:
    """``{name: one-line title}`` of the registered experiments."""
    return {name: getattr(mod, "TITLE", name) for name, mod in EXPERIMENTS.items()}


__all__ = ["EXPERIMENTS", "describe", "get_experiment"]
