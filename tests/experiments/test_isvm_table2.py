"""``isvm-table2`` runs end to end with tiny settings and writes its outputs."""
from __future__ import annotations

import json

import pytest

from regbayes.experiments import isvm_table2


def test_isvm_table2_quick(tmp_path):
    result = isvm_table2.run(tmp_path, quick=True, n=400, params=dict(n_iter=4, n_warmup=2))
    assert (tmp_path / "isvm-table2.png").read_bytes().startswith(b"\x89PNG")
    numbers = json.loads((tmp_path / "isvm-table2.json").read_text())  # strict JSON
    assert numbers["experiment"] == "isvm-table2"
    entry = numbers["datasets"]["stand-in"]
    assert entry["n_train"] == 320 and entry["n_features"] == 22
    for sampler in ("gibbs", "ssgnht"):
        summary = entry["samplers"][sampler]["summary"]
        assert 0.4 < summary["accuracy"][0] <= 1.0
        assert 0 < summary["eta_seconds"][0] <= summary["total_seconds"][0]
    assert entry["eta_speedup"] > 0
    text = (tmp_path / "results.md").read_text()
    assert text.startswith("# ") and "ssgnht-iSVM" in text and "|---" in text
    assert "Data: the offline stand-in" in text and entry["data"]["stand_in"] is True
    assert numbers["settings"]["paper_settings"] is False
    assert result["seconds"] > 0 and isvm_table2.NAME == "isvm-table2"
    with pytest.raises(ValueError, match="unknown sampler"):
        isvm_table2.run(tmp_path, samplers=("hmc",))
