"""Quick runs of the paper 001 experiments (sva-table1, sva-table2, sva-clusters) and
``plot_clusters``."""
import json

import numpy as np
import pytest

from regbayes.experiments import sva_clusters, sva_table1, sva_table2


def test_sva_table1_quick(tmp_path):
    # InfiniteSVC is left out: its sampler is exercised by its own tests.
    methods = ("M2DPM", "DPMeansSVC", "LinearSVC", "SVC (RBF)", "LogisticRegression", "oracle")
    out = sva_table1.run(tmp_path, quick=True, n_datasets=1, n_samples=120, settings=("I",), methods=methods)
    numbers = json.loads((tmp_path / "sva-table1.json").read_text())
    assert (tmp_path / "sva-table1.png").stat().st_size > 0
    for setting in ("I",):
        for m in methods:
            summary = numbers["summary"][setting][m]
            assert summary["n_datasets"] == 1
            assert 0.0 <= summary["accuracy_mean"] <= 100.0
    assert "paper" in out["table"] and "71.1 (5.2)" in out["table"]
    # Without a seed the table's own seed (1) is used: the CLI passes one only when given.
    assert numbers["settings"]["seed"] == 1
    # the paper's own synthetic data, not a stand-in
    assert numbers["settings"]["data"] is None
    assert "Data: paper 001's synthetic Settings I and II" in (tmp_path / "results.md").read_text()


def test_sva_table1_m2dpm_grids():
    # Setting I cross-validates c at s = 10, lambda / s = 7 with refit_cells; Setting II
    # crosses (s, lambda / s, c) without refit_cells.
    grid = sva_table1._m2dpm_grid(sva_table1.M2DPM_GRID["I"])
    assert [c["C"] for c in grid] == sva_table1.SVM_C_GRID
    assert all(c["s"] == 10.0 and c["cluster_penalty"] == 70.0 and c["refit_cells"] for c in grid)
    grid_ii = sva_table1._m2dpm_grid(sva_table1.M2DPM_GRID["II"])
    assert len(grid_ii) == 2 * 2 * len(sva_table1.SVM_C_GRID)
    assert not any("refit_cells" in c for c in grid_ii)


def test_sva_table1_rejects_unknown_method(tmp_path):
    with pytest.raises(ValueError, match="unknown method"):
        sva_table1.run(tmp_path, quick=True, methods=("SVM-light",))


def test_sva_table2_quick(tmp_path):
    out = sva_table2.run(tmp_path, quick=True)
    rows = out["numbers"]["runs"][0]
    assert [r["n0"] for r in rows] == [100, 300]
    # The first n0 points of a CRP sample: K0 cannot shrink as n0 grows.
    assert rows[0]["K0"] <= rows[1]["K0"]
    assert all(r["K"] >= 1 for r in rows)
    assert (tmp_path / "results.md").read_text().startswith("# Table 2")


def test_sva_clusters_quick(tmp_path):
    out = sva_clusters.run(tmp_path, quick=True)
    assert (tmp_path / "sva-clusters.png").stat().st_size > 0
    assert set(out["numbers"]["methods"]) == {"M2DPM", "DPMeansSVC"}


def test_plot_clusters_refuses_more_than_two_features():
    from regbayes.models.m2dpm import M2DPM
    from regbayes.plotting import plot_clusters

    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 3))
    y = np.tile([0, 1], 15)
    model = M2DPM(max_iter=2).fit(X, y)
    with pytest.raises(ValueError, match="two features"):
        plot_clusters(model, X, y)
    fig = plot_clusters(M2DPM(max_iter=2).fit(X[:, :2], y), X[:, :2], y, grid_size=40)
    assert len(fig.axes) == 1
