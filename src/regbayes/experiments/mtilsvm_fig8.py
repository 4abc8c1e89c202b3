"""Figure 8 of paper 002: sensitivity of MT-iLSVM to the IBP's alpha and the margin's C.

Protocol (paper 002, section 5.3): MT-iLSVM with one hyper-parameter varied and the others
at their defaults: (a) accuracy against alpha and (b) against C on Yeast; (c) explained
variance against alpha and (d) against C on School-type data (one split; the latent
model as in Figure 7, with the shared prior component, alpha's curve at
``C =`` :data:`regbayes.experiments.mtilsvm_fig7.SCHOOL_C` and C over Figure 7's
cross-validation grid). The accuracy is
the example-based accuracy of :func:`regbayes.experiments.latent_data.multilabel_scores`
(micro- and macro-F1 are in the JSON). The paper finds Yeast insensitive to both and
School insensitive to alpha and stable for C between 0.3 and 1.
"""
from __future__ import annotations

import time

import numpy as np

from ._common import finish, markdown_table
from .latent_data import explained_variance, multilabel_scores, school_data, yeast_data
from .mtilsvm_fig7 import C_GRID as SCHOOL_CS
from .mtilsvm_fig7 import SCHOOL_C, fit_predict
from .mtilsvm_fig7 import make_method as make_regressor
from .mtilsvm_table2 import make_method as make_classifier

NAME = "mtilsvm-fig8"
TITLE = "Figure 8 of paper 002: MT-iLSVM's sensitivity to alpha and C (Yeast, School-type data)"
ALPHAS = (0.5, 1.0, 2.0, 4.0, 8.0)
CS = (0.1, 0.3, 1.0, 3.0, 10.0)


def run(out_dir, *, quick: bool = False, seed: int = 0, data: str = "auto", truncation=None, progress: bool = False,
        **unused) -> dict:
    """Run Figure 8 and write ``mtilsvm-fig8.png``, ``mtilsvm-fig8.json`` and ``results.md``.

    quick: three values of each hyper-parameter on the quick data of Table 2 and Figure 7.
    """
    from matplotlib.ticker import FormatStrFormatter, NullLocator

    from ..plotting import new_figure

    start = time.perf_counter()
    alphas, cs, school_cs = (ALPHAS[1:4], CS[1:4], SCHOOL_CS[1:4]) if quick else (ALPHAS, CS, SCHOOL_CS)
    base = {"truncation": truncation if truncation is not None else (20 if quick else None)}
    yeast = yeast_data(data, quick=quick, seed=seed)
    school = school_data(data, split=0, quick=quick)
    curves = {}
    for param, values, school_values in (("alpha", alphas, alphas), ("C", cs, school_cs)):
        yeast_rows, school_rows = [], []
        for value in values:
            model = make_classifier("MT-iLSVM", seed, {**base, param: value})
            model.fit(yeast.X_train, yeast.y_train)
            yeast_rows.append({param: value, **multilabel_scores(yeast.y_test, model.predict(yeast.X_test))})
        for value in school_values:
            regressor = make_regressor("MT-iLSVM", seed, {**base, "C": SCHOOL_C, param: value})
            school_rows.append({param: value, "explained_variance": explained_variance(school.y_test, fit_predict(regressor, school))})
        curves[param] = {"yeast": yeast_rows, "school": school_rows}

    fig = new_figure(8.0, 5.0)
    axes = fig.subplots(2, 2)
    for col, param in enumerate(("alpha", "C")):
        xs = [r[param] for r in curves[param]["yeast"]]
        axes[0, col].semilogx(xs, [r["example_accuracy"] for r in curves[param]["yeast"]], "o-")
        axes[0, col].set_ylabel("Yeast accuracy")
        xs = [r[param] for r in curves[param]["school"]]
        axes[1, col].semilogx(xs, [r["explained_variance"] for r in curves[param]["school"]], "o-", color="#d62728")
        axes[1, col].set_ylabel("explained variance (%)")
        axes[1, col].set_xlabel(param)
        for row, span in ((0, 0.05), (1, 2.0)):  # a flat curve drawn flat: at least this range on the y axis
            ax = axes[row, col]
            ax.set_xticks(xs if row else [r[param] for r in curves[param]["yeast"]])
            ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
            ax.xaxis.set_minor_locator(NullLocator())
            low, high = ax.get_ylim()
            if high - low < span:
                middle = 0.5 * (low + high)
                ax.set_ylim(middle - span / 2, middle + span / 2)
    rows = []
    for param in ("alpha", "C"):
        yeast_by, school_by = ({r[param]: r for r in curves[param][d]} for d in ("yeast", "school"))
        for value in sorted(set(yeast_by) | set(school_by)):
            y_row, s_row = yeast_by.get(value), school_by.get(value)
            rows.append([param, value, y_row["example_accuracy"] if y_row else "-", y_row["macro_f1"] if y_row else "-",
                         s_row["explained_variance"] if s_row else "-"])
    table = markdown_table(["varied", "value", "Yeast example acc.", "Yeast macro-F1", "School explained var. %"], rows)
    spread = {param: {"yeast_accuracy_range": float(np.ptp([r["example_accuracy"] for r in curves[param]["yeast"]])),
                      "school_ev_range": float(np.ptp([r["explained_variance"] for r in curves[param]["school"]]))}
              for param in curves}
    text = (f"Data: {yeast.name}; {school.name} (split 0). Other hyper-parameters at their defaults. Range over the "
            f"values (max - min): {spread}.")
    return finish(out_dir, NAME, TITLE, start, fig, table, text, {
        "data": [yeast.name, school.name], "settings": {"quick": quick, "seed": seed, **base}, "curves": curves,
        "spread": spread})
