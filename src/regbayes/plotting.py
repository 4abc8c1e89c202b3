"""Figures for the Bayesian linear SVM experiments (paper 000, Section 5.1, Figs. 4-7).

Every function returns a :class:`matplotlib.figure.Figure` built on the non-interactive
Agg canvas (no display and no global ``pyplot`` state), so the functions can run in
tests, on servers and in worker processes. Save with ``fig.savefig(path)``.

* :func:`posterior_density_images` -- 2-D sample densities as grayscale images on one
  shared grid, one panel per method (Fig. 4).
* :func:`accuracy_vs_time` -- test accuracy against wall-clock time, log time axis
  (Figs. 5-7); :func:`accuracy_vs_time_grid` lays several of them out.
* :func:`trace_plot` -- traces of a few coordinates, one row per coordinate.
* :func:`posterior_intervals` -- per-weight posterior means with 50 % and 94 % central
  intervals, methods side by side (a forest plot).
* :func:`posterior_marginals` -- histograms of the marginals of a few coordinates.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = [
    "new_figure",
    "shared_extent",
    "posterior_density_images",
    "accuracy_vs_time",
    "accuracy_vs_time_grid",
    "trace_plot",
    "posterior_intervals",
    "posterior_marginals",
    "method_color",
    "salient_topics",
    "plot_topic_proportions",
    "accuracy_vs_progress",
    "plot_clusters",
]

_PALETTE = {
    "gibbs": "#000000",
    "shmc": "#8c564b",
    "ssgld": "#1f77b4",
    "ssgnht": "#d62728",
    "srwm": "#2ca02c",
}
COLOR_CYCLE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]


def new_figure(width: float, height: float, dpi: int = 110) -> Figure:
    """A Figure attached to an Agg canvas (no pyplot, no display)."""
    fig = Figure(figsize=(width, height), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def method_color(name: str, index: int = 0) -> str:
    """A stable colour for a sampler name (first word, case-insensitive), else from a cycle."""
    key = str(name).split()[0].split("(")[0].lower()
    return _PALETTE.get(key, COLOR_CYCLE[index % len(COLOR_CYCLE)])


def _as_2d(samples) -> np.ndarray:
    arr = np.asarray(samples, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"expected samples of shape (n, 2), got {arr.shape}")
    return arr


def shared_extent(samples: Mapping[str, np.ndarray], quantile: float = 0.005, pad: float = 0.1):
    """``(xmin, xmax, ymin, ymax)`` covering the central ``1 - 2 quantile`` of all samples
    pooled, widened by ``pad`` times the range on every side."""
    pooled = np.concatenate([_as_2d(s) for s in samples.values()], axis=0)
    lo = np.quantile(pooled, quantile, axis=0)
    hi = np.quantile(pooled, 1.0 - quantile, axis=0)
    span = np.maximum(hi - lo, 1e-12)
    lo, hi = lo - pad * span, hi + pad * span
    return float(lo[0]), float(hi[0]), float(lo[1]), float(hi[1])


def posterior_density_images(
    samples: Mapping[str, np.ndarray],
    *,
    bins: int | None = None,
    extent=None,
    truth=None,
    reference: str | None = None,
    labels: Sequence[str] = ("$\\eta_1$", "$\\eta_2$"),
    title: str | None = None,
) -> Figure:
    """Posterior densities of 2-D samples as grayscale images, one panel per method.

    All panels share one grid (``extent``, default :func:`shared_extent`) with ``bins`` x
    ``bins`` cells and one gray scale (darker = denser, normalised densities), as in
    paper 000, Fig. 4. Each panel marks the sample mean (+); ``truth`` (the generating
    coefficients) is marked with x; ``reference`` (a method name) draws that method's
    mean on the other panels as a hollow circle for comparison.
    """
    if not samples:
        raise ValueError("no samples to plot")
    if bins is None:
        smallest = min(len(s) for s in samples.values())
        bins = int(np.clip(np.sqrt(smallest) / 1.5, 15, 60))
    extent = tuple(extent) if extent is not None else shared_extent(samples)
    x_edges = np.linspace(extent[0], extent[1], bins + 1)
    y_edges = np.linspace(extent[2], extent[3], bins + 1)
    cell = (x_edges[1] - x_edges[0]) * (y_edges[1] - y_edges[0])
    densities = {}
    for name, s in samples.items():
        s = _as_2d(s)
        h, _, _ = np.histogram2d(s[:, 0], s[:, 1], bins=[x_edges, y_edges])
        densities[name] = h.T / (len(s) * cell)  # rows = y
    vmax = max(float(d.max()) for d in densities.values()) or 1.0
    n = len(samples)
    fig = new_figure(3.4 * n + 0.9, 3.6)
    axes = fig.subplots(1, n, sharex=True, sharey=True, squeeze=False)[0]
    ref_mean = _as_2d(samples[reference]).mean(axis=0) if reference in samples else None
    image = None
    for ax, (name, dens) in zip(axes, densities.items()):
        image = ax.imshow(
            dens, origin="lower", extent=extent, aspect="auto", cmap="gray_r",
            vmin=0.0, vmax=vmax, interpolation="nearest",
        )
        mean = _as_2d(samples[name]).mean(axis=0)
        ax.plot(*mean, marker="+", color="tab:orange", ms=12, mew=2, ls="none", label="sample mean")
        if ref_mean is not None and name != reference:
            ax.plot(*ref_mean, marker="o", mfc="none", mec="tab:blue", ms=10, mew=1.5, ls="none",
                    label=f"{reference} mean")
        if truth is not None:
            tx, ty = np.asarray(truth, dtype=np.float64)[:2]
            if extent[0] <= tx <= extent[1] and extent[2] <= ty <= extent[3]:
                ax.plot(tx, ty, marker="x", color="tab:red", ms=9, mew=2, ls="none", label="true $\\eta$")
            else:
                ax.annotate(f"true $\\eta$ = ({tx:.2f}, {ty:.2f}) off grid", (0.02, 0.02),
                            xycoords="axes fraction", fontsize=7, color="tab:red")
        ax.set_title(f"{name} ({len(samples[name])} samples)")
        ax.set_xlabel(labels[0])
        ax.set_xlim(extent[0], extent[1])
        ax.set_ylim(extent[2], extent[3])
    axes[0].set_ylabel(labels[1])
    axes[-1].legend(loc="best", fontsize=7, framealpha=0.8)
    fig.colorbar(image, ax=list(axes), shrink=0.85, label="density")
    if title:
        fig.suptitle(title)
    return fig


def accuracy_vs_time(
    curves: Mapping[str, tuple],
    *,
    ax=None,
    title: str | None = None,
    xlabel: str = "wall-clock time (s, log scale)",
    ylabel: str = "test accuracy",
    annotations: Mapping[str, str] | None = None,
    ylim=None,
) -> Figure:
    """Test accuracy against wall-clock time, one line per method, log time axis.

    ``curves`` maps a label to ``(times, accuracies)`` (non-positive times are dropped:
    they cannot be drawn on a log axis). ``annotations`` adds text to legend labels.
    Draws on ``ax`` when given (and returns its figure), else on a new figure.
    """
    if ax is None:
        fig = new_figure(6.0, 4.2)
        ax = fig.add_subplot(1, 1, 1)
    else:
        fig = ax.figure
    plotted = False
    for i, (name, (times, acc)) in enumerate(curves.items()):
        times = np.asarray(times, dtype=np.float64)
        acc = np.asarray(acc, dtype=np.float64)
        keep = np.isfinite(times) & np.isfinite(acc) & (times > 0)
        if not keep.any():
            continue
        label = name if not annotations or name not in annotations else f"{name} {annotations[name]}"
        style = "-o" if keep.sum() <= 25 else "-"
        ax.plot(times[keep], acc[keep], style, ms=3, lw=1.6, color=method_color(name, i), label=label)
        plotted = True
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.grid(True, which="both", alpha=0.3)
    if plotted:
        ax.legend(fontsize=8, loc="lower right")
    if title:
        ax.set_title(title)
    return fig


def accuracy_vs_time_grid(
    panels: Mapping[str, Mapping[str, tuple]],
    *,
    ncols: int | None = None,
    suptitle: str | None = None,
    ylims: Mapping[str, tuple] | None = None,
) -> Figure:
    """Several :func:`accuracy_vs_time` panels: ``panels`` maps a panel title to its curves."""
    n = len(panels)
    if n == 0:
        raise ValueError("no panels to plot")
    ncols = ncols or min(n, 2)
    nrows = -(-n // ncols)
    fig = new_figure(5.4 * ncols, 3.9 * nrows)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    for ax, (title, curves) in zip(axes, panels.items()):
        accuracy_vs_time(curves, ax=ax, title=title, ylim=(ylims or {}).get(title))
    for ax in axes[n:]:
        ax.set_visible(False)
    if suptitle:
        fig.suptitle(suptitle)
    return fig


def trace_plot(
    samples: Mapping[str, np.ndarray],
    *,
    coords: Sequence[int] = (0, 1),
    coord_names: Sequence[str] | None = None,
    times: Mapping[str, np.ndarray] | None = None,
    max_points: int = 5000,
) -> Figure:
    """Trace plots: one row per coordinate in ``coords``, one line per method.

    ``samples`` maps a method to draws of shape (draws, d) (chains concatenated, or one
    chain). The x axis is the draw index, or wall time when ``times`` gives it per method.
    Long traces are thinned to ``max_points`` for drawing.
    """
    coords = list(coords)
    fig = new_figure(7.5, 1.9 * len(coords) + 0.6)
    axes = fig.subplots(len(coords), 1, sharex=True, squeeze=False)[:, 0]
    for i, (name, draws) in enumerate(samples.items()):
        draws = np.asarray(draws, dtype=np.float64).reshape(len(draws), -1)
        step = max(1, len(draws) // max_points)
        x = np.arange(len(draws)) if times is None else np.asarray(times[name], dtype=np.float64)
        for ax, j in zip(axes, coords):
            ax.plot(x[::step], draws[::step, j], lw=0.7, alpha=0.85, color=method_color(name, i), label=name)
    for ax, j in zip(axes, coords):
        ax.set_ylabel(coord_names[j] if coord_names else f"$\\eta_{{{j + 1}}}$")
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=8, ncol=len(samples), loc="upper right")
    axes[-1].set_xlabel("draw" if times is None else "wall-clock time (s)")
    return fig


def posterior_intervals(
    samples: Mapping[str, np.ndarray],
    *,
    names: Sequence[str] | None = None,
    inner: float = 0.5,
    outer: float = 0.94,
    title: str | None = None,
) -> Figure:
    """Forest plot: for every coordinate, each method's posterior mean with central
    ``inner`` (thick) and ``outer`` (thin) credible intervals, methods offset vertically.

    ``samples`` maps a method to draws of shape (draws, d).
    """
    arrays = {k: np.asarray(v, dtype=np.float64).reshape(len(v), -1) for k, v in samples.items()}
    d = next(iter(arrays.values())).shape[1]
    names = list(names) if names is not None else [f"$\\eta_{{{j + 1}}}$" for j in range(d)]
    m = len(arrays)
    fig = new_figure(7.0, 0.24 * d * max(1.0, 0.45 * m) + 1.3)
    ax = fig.add_subplot(1, 1, 1)
    offsets = (np.arange(m) - (m - 1) / 2) * (0.7 / max(m, 1))
    qs = [(1 - outer) / 2, (1 - inner) / 2, (1 + inner) / 2, (1 + outer) / 2]
    ypos = np.arange(d)[::-1]
    for i, (method, draws) in enumerate(arrays.items()):
        lo_o, lo_i, hi_i, hi_o = np.quantile(draws, qs, axis=0)
        mean = draws.mean(axis=0)
        y = ypos + offsets[i]
        color = method_color(method, i)
        ax.hlines(y, lo_o, hi_o, color=color, lw=0.9)
        ax.hlines(y, lo_i, hi_i, color=color, lw=3.0)
        ax.plot(mean, y, "o", ms=3.5, color=color, mec="white", mew=0.5, label=method)
    ax.axvline(0.0, color="0.5", lw=0.8, ls=":")
    ax.set_yticks(ypos)
    ax.set_yticklabels(names, fontsize=7 if d > 20 else 9)
    ax.set_ylim(-0.8, d - 0.2)
    ax.set_xlabel(f"weight (dot: mean; thick: {int(inner * 100)} %, thin: {int(outer * 100)} % interval)")
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    if title:
        ax.set_title(title)
    return fig


def posterior_marginals(
    samples: Mapping[str, np.ndarray],
    *,
    coords: Sequence[int] = (0, 1, 2, 3),
    coord_names: Sequence[str] | None = None,
    bins: int = 40,
    ncols: int = 4,
) -> Figure:
    """Histograms (normalised) of the marginal posteriors of ``coords``, methods overlaid."""
    coords = list(coords)
    ncols = min(ncols, len(coords))
    nrows = -(-len(coords) // ncols)
    fig = new_figure(3.0 * ncols, 2.5 * nrows)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    arrays = {k: np.asarray(v, dtype=np.float64).reshape(len(v), -1) for k, v in samples.items()}
    for ax, j in zip(axes, coords):
        pooled = np.concatenate([a[:, j] for a in arrays.values()])
        edges = np.linspace(*np.quantile(pooled, [0.001, 0.999]), bins + 1)
        for i, (method, draws) in enumerate(arrays.items()):
            ax.hist(draws[:, j], bins=edges, density=True, histtype="step", lw=1.4,
                    color=method_color(method, i), label=method)
        ax.set_title(coord_names[j] if coord_names else f"$\\eta_{{{j + 1}}}$", fontsize=9)
        ax.tick_params(labelsize=7)
    for ax in axes[len(coords):]:
        ax.set_visible(False)
    axes[0].legend(fontsize=7)
    return fig


def salient_topics(proportions, *, max_topics: int = 3, threshold: float = 2.0) -> list:
    """For each row of ``proportions`` (classes x K), the topics whose share exceeds
    ``threshold`` times the uniform share 1/K, largest first, at most ``max_topics``;
    the single largest topic when none does."""
    props = np.asarray(proportions, dtype=np.float64)
    if props.ndim != 2 or props.shape[1] < 1:
        raise ValueError(f"expected proportions of shape (n_classes, K), got {props.shape}")
    K = props.shape[1]
    out = []
    for row in props:
        order = np.argsort(row)[::-1]
        chosen = [int(k) for k in order[:max_topics] if row[k] > threshold / K]
        out.append(chosen or [int(order[0])])
    return out


def plot_topic_proportions(
    proportions,
    class_names: Sequence[str] | None = None,
    *,
    salient: Sequence[Sequence[int]] | None = None,
    ncols: int = 4,
    title: str | None = None,
) -> Figure:
    """Average topic proportions of each class's documents, one bar panel per class
    (paper 000, Fig. 9).

    ``proportions`` is (n_classes, K): row c is the mean of the documents' topic
    proportions (e.g. ``MedLDA.transform``) over the documents of class c. Bars of the
    ``salient`` topics of each class (default :func:`salient_topics`) are coloured and
    labelled with their topic index; the dotted line marks the uniform share 1/K. All
    panels share the y axis, so sparse (peaked) classes stand out.
    """
    props = np.asarray(proportions, dtype=np.float64)
    if props.ndim != 2 or props.shape[0] < 1 or props.shape[1] < 1:
        raise ValueError(f"expected proportions of shape (n_classes, K), got {props.shape}")
    n_classes, K = props.shape
    names = list(class_names) if class_names is not None else [f"class {c}" for c in range(n_classes)]
    if len(names) != n_classes:
        raise ValueError(f"{len(names)} class names for {n_classes} rows of proportions")
    salient = salient_topics(props) if salient is None else [list(s) for s in salient]
    ncols = max(1, min(ncols, n_classes))
    nrows = -(-n_classes // ncols)
    fig = new_figure(3.0 * ncols, 1.9 * nrows + 0.5)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False)).ravel()
    top = float(props.max()) if props.size else 1.0
    topics = np.arange(K)
    for c, ax in enumerate(axes[:n_classes]):
        colors = ["#bbbbbb"] * K
        for k in salient[c]:
            colors[k] = "#d62728"
        ax.bar(topics, props[c], width=0.85, color=colors)
        ax.axhline(1.0 / K, color="0.4", lw=0.7, ls=":")
        for k in salient[c]:
            ax.annotate(str(k), (k, props[c, k]), xytext=(0, 1), textcoords="offset points",
                        ha="center", va="bottom", fontsize=7, color="#d62728")
        ax.set_title(names[c], fontsize=8)
        ax.set_ylim(0.0, 1.15 * top if top > 0 else 1.0)
        ax.tick_params(labelsize=7)
    for ax in axes[n_classes:]:
        ax.set_visible(False)
    for ax in axes[(nrows - 1) * ncols:n_classes]:
        ax.set_xlabel("topic", fontsize=8)
    for ax in axes[::ncols]:
        ax.set_ylabel("avg. proportion", fontsize=8)
    if title:
        fig.suptitle(title)
    return fig


def accuracy_vs_progress(
    curves: Mapping[str, Mapping[str, Sequence[float]]],
    *,
    title: str | None = None,
    baseline: Mapping[str, float] | None = None,
) -> Figure:
    """Two panels: test accuracy against documents processed and against wall time (log
    axes), one line per method (paper 000, Fig. 8).

    ``curves`` maps a method to a dict with ``n_docs``, ``times`` and ``accuracy``
    (equal lengths). ``baseline`` maps a label to a final accuracy drawn as a horizontal
    dashed line on both panels.
    """
    fig = new_figure(11.0, 4.2)
    left, right = fig.subplots(1, 2, sharey=True)
    accuracy_vs_time({k: (v["n_docs"], v["accuracy"]) for k, v in curves.items()}, ax=left,
                     xlabel="documents processed (log scale)")
    accuracy_vs_time({k: (v["times"], v["accuracy"]) for k, v in curves.items()}, ax=right)
    for i, (label, value) in enumerate((baseline or {}).items()):
        for ax in (left, right):
            ax.axhline(value, color=method_color(label, len(curves) + i), ls="--", lw=1.0, label=label)
        right.legend(fontsize=8, loc="lower right")
        left.legend(fontsize=8, loc="lower right")
    if title:
        fig.suptitle(title)
    return fig


def plot_clusters(model, X, y, ax=None, grid_size: int = 300, title: str | None = None):
    """Clusters and per-component classifiers of a fitted mixture of linear SVMs
    (:class:`~regbayes.models.m2dpm.M2DPM`, :class:`~regbayes.models.dpmeans.DPMeansSVC`)
    on two features.

    Points are coloured by their component (``model.predict_component``) and marked by
    their label; the background shows the predicted class, thin grey lines the borders
    between components (nearest mean) and black lines each component's decision boundary
    inside its own region; crosses mark the component means. Returns the Figure.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"plot_clusters draws two features; X has shape {X.shape}")
    if ax is None:
        fig = new_figure(5.5, 5.0)
        ax = fig.add_subplot(1, 1, 1)
    else:
        fig = ax.figure
    pad = 0.05 * (X.max(axis=0) - X.min(axis=0) + 1e-12)
    lo, hi = X.min(axis=0) - pad, X.max(axis=0) + pad
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], grid_size), np.linspace(lo[1], hi[1], grid_size))
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    classes = np.asarray(model.classes_)
    predicted = np.searchsorted(classes, model.predict(grid)).reshape(gx.shape)
    component = model.predict_component(grid).reshape(gx.shape)
    ax.contourf(gx, gy, predicted, levels=np.arange(len(classes) + 1) - 0.5, cmap="Pastel2", alpha=0.5)
    ax.contour(gx, gy, component, levels=np.arange(model.n_components_ + 1) - 0.5, colors="#7f7f7f",
               linewidths=0.6)
    scores = model.decision_function(grid)
    if scores.ndim == 1:
        ax.contour(gx, gy, scores.reshape(gx.shape), levels=[0.0], colors="#000000", linewidths=1.2)
    members = model.predict_component(X)
    markers = ["o", "^", "s", "D", "v", "P", "*", "X"]
    for j, label in enumerate(classes):
        mask = y == label
        ax.scatter(X[mask, 0], X[mask, 1], c=[COLOR_CYCLE[k % len(COLOR_CYCLE)] for k in members[mask]], s=12,
                   marker=markers[j % len(markers)], linewidths=0.3, edgecolors="#333333",
                   label=f"y = {label}")
    centers = np.asarray(model.cluster_centers_)
    ax.scatter(centers[:, 0], centers[:, 1], marker="x", s=80, c="#000000", linewidths=2.0, label="component mean")
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.legend(fontsize=7, loc="best")
    ax.set_title(title or f"{type(model).__name__}: {model.n_components_} components")
    return fig
