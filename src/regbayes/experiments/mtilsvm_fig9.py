"""Figure 9 of paper 002: MT-iLSVM's explained variance and fit time against training size.

Protocol (paper 002, section 5.3): on School-type data, the first b % of each split's
training pupils (b = 50, 60, ..., 100, per school) train MT-iLSVM, scored on the split's
test pupils; mean over the splits. The paper finds both the explained variance and the
time growing with b, the state of the art reached at about 70 %. The model as in Figure 7
(shared prior component), at ``C =`` :data:`regbayes.experiments.mtilsvm_fig7.SCHOOL_C`.
"""
from __future__ import annotations

import time

import numpy as np

from ._common import finish, markdown_table
from .latent_data import explained_variance, school_data
from .mtilsvm_fig7 import SCHOOL_C, fit_predict, make_method

NAME = "mtilsvm-fig9"
TITLE = "Figure 9 of paper 002: MT-iLSVM's explained variance and time against training size"
FRACTIONS = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def run(out_dir, *, quick: bool = False, seed: int = 0, n_splits: int | None = None, data: str = "auto", truncation=None,
        progress: bool = False, **unused) -> dict:
    """Run Figure 9 and write ``mtilsvm-fig9.png``, ``mtilsvm-fig9.json`` and ``results.md``.

    ``n_splits`` of the 10 splits (quick: 2 splits on 15 schools, three fractions).
    """
    from ..plotting import new_figure

    start = time.perf_counter()
    n_splits = (2 if quick else 10) if n_splits is None else int(n_splits)
    fractions = FRACTIONS[::2] if quick else FRACTIONS
    params = {"truncation": truncation if truncation is not None else (20 if quick else None), "C": SCHOOL_C}
    rows, name = [], None
    for fraction in fractions:
        evs, secs, n_train = [], [], []
        for split_index in range(n_splits):
            split = school_data(data, split=split_index, quick=quick, train_fraction=fraction)
            name = split.name
            model = make_method("MT-iLSVM", seed + split_index, params)
            t0 = time.perf_counter()
            pred = fit_predict(model, split)
            secs.append(time.perf_counter() - t0)
            evs.append(explained_variance(split.y_test, pred))
            n_train.append(len(split.y_train))
        rows.append({"fraction": fraction, "train_rows": float(np.mean(n_train)), "explained_variance": float(np.mean(evs)),
                     "explained_variance_std": float(np.std(evs)), "fit_seconds": float(np.mean(secs))})

    fig = new_figure(7.0, 3.0)
    ax1, ax2 = fig.subplots(1, 2)
    pct = [100 * r["fraction"] for r in rows]
    ax1.errorbar(pct, [r["explained_variance"] for r in rows], yerr=[r["explained_variance_std"] for r in rows], fmt="o-")
    ax1.set_xlabel("training data used (%)")
    ax1.set_ylabel("explained variance (%)")
    ax2.plot(pct, [r["fit_seconds"] for r in rows], "s-", color="#d62728")
    ax2.set_xlabel("training data used (%)")
    ax2.set_ylabel("fit time (s)")
    table = markdown_table(["training %", "training rows", "explained variance %", "fit s"],
                           [[100 * r["fraction"], r["train_rows"], f"{r['explained_variance']:.2f} ± {r['explained_variance_std']:.2f}",
                             r["fit_seconds"]] for r in rows])
    return finish(out_dir, NAME, TITLE, start, fig, table, f"Data: {name}; mean over {n_splits} splits.", {
        "data": name, "settings": {"quick": quick, "seed": seed, "n_splits": n_splits, **params}, "rows": rows})
