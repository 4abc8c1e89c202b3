"""Plotting helpers: every function returns a Figure that renders to PNG (no display)."""
from __future__ import annotations

import io

import numpy as np
import pytest
from matplotlib.figure import Figure

from regbayes import plotting


def _png_bytes(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def test_density_images_share_one_grid(rng):
    samples = {"gibbs": rng.normal(size=(400, 2)), "ssgld": rng.normal(0.1, 1.2, size=(300, 2))}
    extent = plotting.shared_extent(samples)
    fig = plotting.posterior_density_images(samples, truth=(0.0, 0.0), reference="gibbs")
    assert isinstance(fig, Figure)
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == 2
    assert all(tuple(im.get_extent()) == pytest.approx(extent) for im in images)
    assert images[0].get_clim() == images[1].get_clim()  # one gray scale for all panels
    assert _png_bytes(fig).startswith(b"\x89PNG")


def test_density_images_reject_non_2d(rng):
    with pytest.raises(ValueError, match=r"\(n, 2\)"):
        plotting.posterior_density_images({"a": rng.normal(size=(10, 3))})
    with pytest.raises(ValueError, match="no samples"):
        plotting.posterior_density_images({})


def test_truth_off_grid_is_annotated(rng):
    fig = plotting.posterior_density_images({"a": rng.normal(size=(200, 2))}, truth=(50.0, 50.0))
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert any("off grid" in t for t in texts)


def test_accuracy_vs_time_uses_log_axis_and_drops_nonpositive_times():
    curves = {"ssgld": ([0.0, 0.01, 0.1, 1.0], [0.5, 0.6, 0.7, 0.8]), "gibbs": ([], [])}
    fig = plotting.accuracy_vs_time(curves, title="t")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    (line,) = ax.get_lines()
    assert np.all(line.get_xdata() > 0) and len(line.get_xdata()) == 3
    _png_bytes(fig)


def test_accuracy_grid_panels():
    panels = {"A": {"x": ([1, 2], [0.5, 0.6])}, "B": {"y": ([1, 2], [0.7, 0.8])}, "C": {}}
    fig = plotting.accuracy_vs_time_grid(panels, ncols=2, suptitle="grid")
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["A", "B", "C"]
    _png_bytes(fig)


def test_trace_intervals_and_marginals(rng):
    samples = {"gibbs": rng.normal(size=(300, 5)), "ssgnht": rng.normal(size=(200, 5))}
    fig = plotting.trace_plot(samples, coords=(0, 2))
    assert len(fig.axes) == 2
    fig = plotting.posterior_intervals(samples, names=[f"w{i}" for i in range(5)])
    ax = fig.axes[0]
    by_height = sorted(zip(ax.get_yticks(), (t.get_text() for t in ax.get_yticklabels())), reverse=True)
    assert [name for _, name in by_height] == ["w0", "w1", "w2", "w3", "w4"]  # first weight on top
    fig = plotting.posterior_marginals(samples, coords=(0, 1, 4), ncols=2)
    assert sum(ax.get_visible() for ax in fig.axes) == 3
    _png_bytes(fig)


def test_method_colors_are_stable():
    assert plotting.method_color("gibbs (full data)") == plotting.method_color("Gibbs")
    assert plotting.method_color("ssgld") != plotting.method_color("ssgnht")
