"""Figure 6 of paper 000 (Section 5.1.3): sensitivity of SSGLD and SSGNHT to the
minibatch size |D~|.

For each data set and each of SSGLD (AdaGrad) and SSGNHT, the same number of iterations
is run with minibatches of 1, 10, 100 and 1000 rows (sizes above the training set are
skipped). Data: without ``data``, the offline stand-ins for the paper's HIGGS and Realsim
(Higgs-like with ``n`` rows, 10 % test; standardised breast cancer), named as stand-ins
in the outputs; with ``data``, the registered sets or svmlight files given (as in
:mod:`regbayes.experiments.fig5`).
The figure has one panel per (data set, sampler) with the test accuracy of the running
posterior mean against wall time, one line per batch size; the table gives the final
accuracy and the time. Runs start at eta = 0 without warm-up (as in Fig. 5).

``paper_settings`` sets the step schedules of paper 000 Sec. 5.1.2 (SSGLD with AdaGrad,
SSGNHT with ``h_t = h0 (1 + t)^(-0.33)``, b = 1) and HIGGS's 10 / 1 split; Sec. 5.1.3
prints no batch sizes beyond the figure's, nor c and nu (c = nu = 1 are kept). The JSON
records the settings.
"""
from __future__ import annotations

import time

from ._common import (
    PAPER_SETTINGS_TEXT,
    accuracy_run,
    finish,
    higgs_and_cancer,
    is_large,
    markdown_table,
    paper_sampler_params,
    paper_settings_record,
    rows_asked,
    stand_in_text,
)

NAME = "fig6"
TITLE = "Fig. 6: sensitivity to the minibatch size (SSGLD, SSGNHT)"
SAMPLERS = ("ssgld", "ssgnht")
DEFAULT_BATCH_SIZES = (1, 10, 100, 1000)


def run(
    out_dir,
    *,
    n: int | None = None,
    quick: bool = False,
    seed: int = 0,
    iterations: int | None = None,
    batch_sizes=DEFAULT_BATCH_SIZES,
    samplers=SAMPLERS,
    datasets=("higgs-like", "breast-cancer"),
    data=None,
    paper_settings: bool = False,
    progress: bool = False,
    **unused,
) -> dict:
    """Run the experiment and write ``fig6.png``, ``fig6.json`` and ``results.md``.

    ``n``: rows of the Higgs-like set (default 10^6; ``quick``: 20000), or with ``data``
    the rows read from each data set (default all; quick 20000); ``iterations`` per run
    (default 10000 on a large set and 5000 on a small one; quick: 1000). ``data``: a
    registered name, an svmlight file, ``TRAIN,TEST`` or a list of them, instead of the
    stand-ins; ``paper_settings``: the settings of the module docstring.
    """
    from .. import BayesianSVC
    from ..plotting import accuracy_vs_time_grid

    start = time.perf_counter()
    n = rows_asked(n, quick, data)
    bad = sorted(set(samplers) - set(SAMPLERS))
    if bad:
        raise ValueError(f"fig6 compares {SAMPLERS}; got {bad}")
    batch_sizes = sorted({int(b) for b in batch_sizes})
    if not batch_sizes or batch_sizes[0] < 1:
        raise ValueError(f"batch sizes must be positive integers, got {batch_sizes}")
    panels, rows, numbers_data, records = {}, [], {}, []
    for dataset, label, (X_train, X_test, y_train, y_test), record in higgs_and_cancer(
            datasets, n, seed, data=data, quick=quick, paper_settings=paper_settings):
        it = iterations or (1000 if quick else (10000 if is_large(dataset, len(y_train)) else 5000))
        records.append(record)
        numbers_data[dataset] = {"n_train": len(y_train), "n_test": len(y_test), "iterations": it, "data": record,
                                 "runs": {}}
        for sampler in samplers:
            curves = {}
            for batch in batch_sizes:
                if batch > len(y_train):
                    continue
                params = dict(sampler=sampler, batch_size=batch, n_draws=it, n_warmup=0, thin=1, n_chains=1,
                              random_state=seed, progress=progress)
                if sampler == "ssgld":
                    params["schedule"] = "adagrad"
                if paper_settings:
                    params.update(paper_sampler_params(sampler, X_train))
                r = accuracy_run(BayesianSVC, X_train, y_train, X_test, y_test, **params)
                numbers_data[dataset]["runs"][f"{sampler}/batch={batch}"] = r
                curves[f"batch {batch}"] = (r["times"], r["accuracy"])
                if r["error"]:
                    rows.append([dataset, sampler, batch, "-", "-", "-", "-", "failed: " + r["error"]])
                else:
                    rows.append([dataset, sampler, batch, r["n_iterations"], r["final_accuracy"],
                                 r["sampling_seconds"], r["seconds_per_iteration"], r["note"] or ""])
            panels[f"{label}, {sampler}"] = curves
    fig = accuracy_vs_time_grid(panels, ncols=max(1, len(samplers)), suptitle=TITLE)
    table = markdown_table(
        ["data", "sampler", "batch", "iterations", "final test acc.", "sampling s", "s / iteration", "note"], rows
    )
    text = (
        f"{stand_in_text(records)} "
        "Same number of iterations for every batch size; accuracy of the running posterior mean "
        "(second half of the draws so far) on held-out data. Larger minibatches cost more per "
        "iteration but inject less gradient noise."
        + (f" With the {PAPER_SETTINGS_TEXT}." if paper_settings else "")
    )
    return finish(out_dir, NAME, TITLE, start, fig, table, text, {
        "settings": {"n": n, "quick": quick, "seed": seed, "iterations": iterations,
                     "batch_sizes": batch_sizes, "samplers": list(samplers),
                     "datasets": [r["name"] for r in records], "data": records,
                     "paper_settings": paper_settings_record(paper_settings, samplers)},
        "datasets": numbers_data,
    })
