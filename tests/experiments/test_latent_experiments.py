"""Paper 002's experiments run end to end on their stand-ins and write their outputs."""
import json

import numpy as np
import pytest

from regbayes.experiments import EXPERIMENTS


def _check_outputs(result):
    numbers = json.loads(open(result["json"]).read())
    assert numbers["experiment"] == result["name"]
    assert open(result["markdown"]).read().startswith("# ")
    assert open(result["png"], "rb").read(4) == b"\x89PNG"
    return numbers


def test_mtilsvm_table2_scores_every_method(tmp_path):
    result = EXPERIMENTS["mtilsvm-table2"].run(tmp_path, quick=True, data="synthetic", n_seeds=1, truncation=6)
    numbers = _check_outputs(result)
    assert numbers["stand_in"] is True
    for method, runs in numbers["results"].items():
        assert len(runs) == 1
        assert 0.0 <= runs[0]["macro_f1"] <= 1.0
    assert "paper: MT-iLSVM" in result["table"]


def test_mtilsvm_fig7_and_fig9(tmp_path):
    fig7 = _check_outputs(EXPERIMENTS["mtilsvm-fig7"].run(tmp_path / "7", quick=True, data="synthetic", n_splits=1, truncation=6))
    assert set(fig7["results"]) == {"MT-iLSVM", "MT-iLSVM^f", "MT-IBP+SVM", "MT-IBP+SVM^f", "single-task ridge", "pooled ridge"}
    assert all(np.isfinite(r[0]["explained_variance"]) for r in fig7["results"].values())
    fig9 = _check_outputs(EXPERIMENTS["mtilsvm-fig9"].run(tmp_path / "9", quick=True, data="synthetic", n_splits=1, truncation=6))
    rows = fig9["rows"]
    assert [r["fraction"] for r in rows] == [0.5, 0.7, 0.9]
    assert rows[0]["train_rows"] < rows[-1]["train_rows"]


@pytest.mark.parametrize("name", ["mtilsvm-fig8"])
def test_sensitivity_curves(tmp_path, name):
    numbers = _check_outputs(EXPERIMENTS[name].run(tmp_path, quick=True, data="synthetic", truncation=6))
    assert [r["alpha"] for r in numbers["curves"]["alpha"]["yeast"]] == [1.0, 2.0, 4.0]
    assert len(numbers["curves"]["C"]["school"]) == 3


def test_ilsvm_table1(tmp_path):
    numbers = _check_outputs(EXPERIMENTS["ilsvm-table1"].run(tmp_path, quick=True, data="synthetic", n_seeds=1, truncation=6))
    assert set(numbers["results"]) == {"iLSVM", "IBP+SVM", "LinearSVC"}
    for runs in numbers["results"].values():
        assert 0.0 <= runs[0]["accuracy"] <= 1.0
    assert numbers["results"]["iLSVM"][0]["n_active_features"] <= 6
