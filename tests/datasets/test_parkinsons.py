"""UCI Parkinson's reader (files in the UCI layout, written here; the registered file
served by a local HTTP server) and the generated stand-in."""
from __future__ import annotations

import csv

import numpy as np
import pytest
from local_http import http_server  # noqa: F401 (fixture)

from regbayes.datasets import fetch_dataset_files, get_dataset, load_parkinsons, make_parkinsons_like, write_parkinsons_csv
from regbayes.datasets.parkinsons import PARKINSONS_COLUMNS, PARKINSONS_FEATURES


@pytest.fixture
def small():
    d = make_parkinsons_like(random_state=1)
    keep = np.r_[0:7, 150:155]  # two ill subjects' recordings, then a healthy one's
    return d.X[keep], d.y[keep], [d.names[i] for i in keep]


def test_write_then_load_is_exact(tmp_path, small):
    X, y, names = small
    write_parkinsons_csv(tmp_path / "parkinsons.data", X, y, names)
    header = (tmp_path / "parkinsons.data").read_text().splitlines()[0]
    assert header.split(",") == list(PARKINSONS_COLUMNS) and header.split(",")[17] == "status"
    d = load_parkinsons(tmp_path / "parkinsons.data")
    np.testing.assert_array_equal(d.X, X)
    np.testing.assert_array_equal(d.y, y)
    assert d.names == tuple(names) and d.feature_names == PARKINSONS_FEATURES and not d.stand_in
    assert d.subjects[0] == "phon_R01_S01" and len(set(d.subjects)) == 3


def test_columns_are_read_by_name(tmp_path, small):
    X, y, names = small
    order = list(reversed(PARKINSONS_COLUMNS))
    with open(tmp_path / "shuffled.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(order)
        for name, row, label in zip(names, X, y):
            values = dict(zip(PARKINSONS_FEATURES, row), name=name, status=int(label))
            w.writerow([values[c] if c in ("name", "status") else repr(float(values[c])) for c in order])
    d = load_parkinsons(tmp_path / "shuffled.csv")
    np.testing.assert_array_equal(d.X, X)
    np.testing.assert_array_equal(d.y, y)


@pytest.mark.parametrize("edit, message", [
    (lambda lines: [], "is empty"),
    (lambda lines: [lines[0].replace(",PPE", "")] + [line.rsplit(",", 1)[0] for line in lines[1:]],
     "lacks 1 column.*PPE"),
    (lambda lines: lines[:2], "1 data row"),
    (lambda lines: [lines[0], lines[1] + ",7"] + lines[2:], "line 2: 25 values, the header has 24"),
    (lambda lines: [lines[0], lines[1].replace(",1,", ",2,", 1)] + lines[2:], "status must be 0 or 1"),
    (lambda lines: [lines[0], lines[1].replace(",1,", ",yes,", 1)] + lines[2:], "line 2: a measure or the status is not"),
])
def test_bad_files_are_refused_with_the_reason(tmp_path, small, edit, message):
    X, y, names = small
    write_parkinsons_csv(tmp_path / "ok.csv", X, y, names)
    lines = (tmp_path / "ok.csv").read_text().splitlines()
    (tmp_path / "bad.csv").write_text("\n".join(edit(lines)) + "\n")
    with pytest.raises(ValueError, match=message):
        load_parkinsons(tmp_path / "bad.csv")


def test_stand_in_has_the_uci_shape():
    d = make_parkinsons_like(random_state=0)
    assert d.X.shape == (195, 22) and d.stand_in and int(d.y.sum()) == 147
    subjects = np.asarray(d.subjects)
    assert len(set(d.subjects)) == 31
    ill = {s for s, label in zip(d.subjects, d.y) if label == 1}
    assert len(ill) == 23
    # a subject's recordings share its status
    assert all(len(set(d.y[subjects == s])) == 1 for s in set(d.subjects))
    j = PARKINSONS_FEATURES.index
    assert (d.X[:, j("MDVP:Fo(Hz)")] > 0).all() and (d.X[:, j("spread1")] < 0).mean() > 0.9
    np.testing.assert_array_equal(make_parkinsons_like(random_state=0).X, d.X)


def test_registered_file_is_fetched_and_read(tmp_path, small, http_server):  # noqa: F811
    spec = get_dataset("parkinsons")
    assert (spec.file_format, spec.n_features, spec.labels, spec.files[0].sha256) == ("uci-parkinsons", 22, (0, 1), None)
    X, y, names = small
    write_parkinsons_csv(http_server.root / "parkinsons.data", X, y, names)
    with pytest.warns(UserWarning, match="No published checksum"):
        path = fetch_dataset_files("parkinsons", data_home=tmp_path / "cache", base_url=http_server.url)["data"]
    assert http_server.count("parkinsons.data") == 1
    np.testing.assert_array_equal(load_parkinsons(path).X, X)
