"""Fetchers, cache and downloader, against files written here and served from a local
HTTP server (see conftest.py), file:// URLs and local folders. No internet is used."""

import bz2
import gzip
import hashlib
import json
import lzma
import warnings

import numpy as np
import pytest

from regbayes.datasets import (
    ChecksumError,
    DownloadError,
    RemoteFile,
    fetch_dataset,
    fetch_dataset_files,
    fetch_file,
    fetch_higgs,
    fetch_ijcnn1,
    fetch_protein,
    fetch_realsim,
    get_data_home,
    get_dataset,
    list_datasets,
    resolve_base_url,
)

RNG = np.random.default_rng(0)
HIGGS_X = RNG.normal(size=(7, 28)).round(6)
HIGGS_Y = np.array([1, 0, 0, 1, 1, 0, 1])


def svmlight_bytes(X, y):
    lines = []
    for label, row in zip(y, X):
        items = " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(row) if v != 0)
        lines.append(f"{label:+d} {items}".rstrip())
    return ("\n".join(lines) + "\n").encode()


def write_realsim(root):
    X = np.zeros((4, 20958))
    X[0, [0, 100]] = [0.5, 0.25]
    X[1, 20957] = 1.0
    X[2, 7] = 0.75
    y = [1, -1, -1, 1]
    (root / "real-sim.bz2").write_bytes(bz2.compress(svmlight_bytes(X, y)))
    return X, np.array(y)


def write_ijcnn1(root):
    X_tr = np.round(RNG.uniform(-1, 1, size=(6, 22)), 4)
    X_te = np.round(RNG.uniform(-1, 1, size=(3, 22)), 4)
    X_te[:, 21] = 0.0  # test file never mentions feature 22
    y_tr, y_te = [1, -1, 1, -1, -1, 1], [-1, 1, -1]
    (root / "ijcnn1.bz2").write_bytes(bz2.compress(svmlight_bytes(X_tr, y_tr)))
    (root / "ijcnn1.t.bz2").write_bytes(bz2.compress(svmlight_bytes(X_te, y_te)))
    return X_tr, X_te, np.array(y_tr), np.array(y_te)


def higgs_libsvm_bytes():
    lines = [
        f"{float(lab):.18e} " + " ".join(f"{j + 1}:{v:.18e}" for j, v in enumerate(row))
        for lab, row in zip(HIGGS_Y, HIGGS_X)
    ]
    return ("\n".join(lines) + "\n").encode()


def higgs_csv_bytes():
    rows = np.column_stack([HIGGS_Y.astype(float), HIGGS_X])
    return ("\n".join(",".join(f"{v:.18e}" for v in r) for r in rows) + "\n").encode()


# --------------------------------------------------------------------------- registry


def test_registry_lists_the_papers_datasets():
    reg = list_datasets()
    assert set(reg) >= {"realsim", "ijcnn1", "higgs", "higgs-uci"}
    libsvm = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"
    assert reg["realsim"].urls() == {"data": libsvm + "real-sim.bz2"}
    assert reg["ijcnn1"].urls() == {"train": libsvm + "ijcnn1.bz2", "test": libsvm + "ijcnn1.t.bz2"}
    assert reg["higgs"].urls() == {"data": libsvm + "HIGGS.bz2"}
    assert reg["higgs-uci"].urls() == {
        "data": "https://archive.ics.uci.edu/ml/machine-learning-databases/00280/HIGGS.csv.gz"
    }
    assert [reg[k].n_features for k in ("realsim", "ijcnn1", "higgs", "higgs-uci")] == [
        20958, 22, 28, 28]
    assert reg["higgs-uci"].file_format == "csv" and reg["realsim"].file_format == "svmlight"
    # No checksum is published by the LIBSVM and UCI hosts; none may be invented.
    assert all(f.sha256 is None for name, spec in reg.items() for f in spec.files if name != "20news")
    # 20news is scikit-learn's archive, with the digest scikit-learn checks.
    from sklearn.datasets._twenty_newsgroups import ARCHIVE

    assert reg["20news"].urls() == {"archive": ARCHIVE.url}
    assert reg["20news"].files[0].sha256 == ARCHIVE.checksum
    assert reg["protein"].urls() == {
        "train": "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/protein.bz2",
        "test": "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/protein.t.bz2"}
    assert "not paper 000's Protein" in reg["protein"].description
    json.dumps({k: v.to_dict() for k, v in reg.items()})  # printable by the CLI
    reg.pop("realsim")
    assert "realsim" in list_datasets()  # a copy is returned
    with pytest.raises(ValueError, match="Unknown data set 'mnist'"):
        get_dataset("mnist")


def test_remote_file_validation():
    with pytest.raises(ValueError, match="sha256"):
        RemoteFile("a.bz2", sha256="abc")
    with pytest.raises(ValueError, match="plain file name"):
        RemoteFile("../a.bz2")


# ------------------------------------------------------------------ homes and hosts


def test_get_data_home_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv("REGBAYES_DATA", str(tmp_path / "from_env"))
    assert get_data_home() == tmp_path / "from_env"
    assert (tmp_path / "from_env").is_dir()
    assert get_data_home(tmp_path / "explicit") == tmp_path / "explicit"
    monkeypatch.delenv("REGBAYES_DATA")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert get_data_home() == tmp_path / "home" / "regbayes_data"


def test_resolve_base_url(tmp_path, monkeypatch):
    monkeypatch.delenv("REGBAYES_DATA_URL", raising=False)
    assert resolve_base_url("https://a.org/x/") == "https://a.org/x/"
    assert resolve_base_url("https://a.org/x/", "http://mirror/y") == "http://mirror/y/"
    monkeypatch.setenv("REGBAYES_DATA_URL", "http://env-mirror/")
    assert resolve_base_url("https://a.org/x/") == "http://env-mirror/"
    assert resolve_base_url("https://a.org/x/", "http://arg/") == "http://arg/"
    assert resolve_base_url("https://a.org/", str(tmp_path)) == tmp_path.as_uri() + "/"
    with pytest.raises(ValueError, match="base_url"):
        resolve_base_url("https://a.org/", "")


# --------------------------------------------------------------------- the fetchers


def test_fetch_realsim_over_http_records_checksum_and_caches(tmp_path, http_server):
    X_true, y_true = write_realsim(http_server.root)
    home = tmp_path / "cache"
    with pytest.warns(UserWarning, match="No published checksum"):
        X, y = fetch_realsim(data_home=home, base_url=http_server.url)
    assert X.shape == (4, 20958) and X.format == "csr"
    np.testing.assert_allclose(X.toarray(), X_true)
    assert y.dtype == np.int64
    np.testing.assert_array_equal(y, y_true)
    cached = home / "realsim" / "real-sim.bz2"
    digest = hashlib.sha256((http_server.root / "real-sim.bz2").read_bytes()).hexdigest()
    assert (home / "realsim" / "real-sim.bz2.sha256").read_text().split() == [
        digest, "real-sim.bz2"]
    assert http_server.count("real-sim.bz2") == 1
    # Cache hit: no request, no warning, no leftovers from the download.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X2, _ = fetch_realsim(data_home=home, base_url=http_server.url)
    assert http_server.count("real-sim.bz2") == 1
    assert (X2 != X).nnz == 0
    assert sorted(p.name for p in cached.parent.iterdir()) == [
        "real-sim.bz2", "real-sim.bz2.sha256"]


def test_fetch_ijcnn1_train_and_test(tmp_path, http_server, monkeypatch):
    X_tr, X_te, y_tr, y_te = write_ijcnn1(http_server.root)
    monkeypatch.setenv("REGBAYES_DATA", str(tmp_path / "env_home"))
    monkeypatch.setenv("REGBAYES_DATA_URL", http_server.url)
    with pytest.warns(UserWarning):
        A_tr, A_te, b_tr, b_te = fetch_ijcnn1()
    assert A_tr.shape == (6, 22) and A_te.shape == (3, 22)
    np.testing.assert_allclose(A_tr.toarray(), X_tr)
    np.testing.assert_allclose(A_te.toarray(), X_te)
    np.testing.assert_array_equal(b_tr, y_tr)
    np.testing.assert_array_equal(b_te, y_te)
    assert (tmp_path / "env_home" / "ijcnn1" / "ijcnn1.t.bz2").is_file()
    assert http_server.count("ijcnn1.bz2") == http_server.count("ijcnn1.t.bz2") == 1


def test_fetch_higgs_libsvm_and_uci_agree(tmp_path, http_server):
    (http_server.root / "HIGGS.bz2").write_bytes(bz2.compress(higgs_libsvm_bytes()))
    (http_server.root / "HIGGS.csv.gz").write_bytes(gzip.compress(higgs_csv_bytes()))
    home = tmp_path / "cache"
    with pytest.warns(UserWarning):
        X, y = fetch_higgs(data_home=home, base_url=http_server.url)
    assert X.shape == (7, 28) and X.dtype == np.float32
    np.testing.assert_allclose(X, HIGGS_X, rtol=1e-6)
    assert y.dtype == np.int64
    np.testing.assert_array_equal(y, HIGGS_Y)
    with pytest.warns(UserWarning):
        Xu, yu = fetch_higgs(data_home=home, base_url=http_server.url, source="uci",
                             dtype=np.float64)
    assert Xu.dtype == np.float64
    np.testing.assert_allclose(Xu, HIGGS_X, rtol=1e-12)
    np.testing.assert_array_equal(yu, HIGGS_Y)
    X3, y3 = fetch_higgs(data_home=home, base_url=http_server.url, n_rows=3)
    np.testing.assert_array_equal(X3, X[:3])
    np.testing.assert_array_equal(y3, HIGGS_Y[:3])
    assert http_server.count("HIGGS.bz2") == 1 and http_server.count("HIGGS.csv.gz") == 1
    with pytest.raises(ValueError, match="source"):
        fetch_higgs(data_home=home, source="kaggle")
    with pytest.raises(ValueError, match="n_rows"):
        fetch_higgs(data_home=home, n_rows=0)


def test_fetch_higgs_falls_back_to_xz_name(tmp_path, http_server):
    (http_server.root / "HIGGS.xz").write_bytes(lzma.compress(higgs_libsvm_bytes()))
    home = tmp_path / "cache"
    with pytest.warns(UserWarning):
        X, y = fetch_higgs(data_home=home, base_url=http_server.url)
    np.testing.assert_allclose(X, HIGGS_X, rtol=1e-6)
    assert http_server.requests == ["/HIGGS.bz2", "/HIGGS.xz"]
    assert (home / "higgs" / "HIGGS.xz").is_file()
    assert not (home / "higgs" / "HIGGS.bz2").exists()
    fetch_higgs(data_home=home, base_url=http_server.url)  # cache hit under the alt name
    assert len(http_server.requests) == 2
    with pytest.raises(FileNotFoundError, match="or under the name HIGGS.xz"):
        fetch_higgs(data_home=tmp_path / "empty", download_if_missing=False)


def test_fetch_from_file_url_and_local_folder(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    X_true, y_true = write_realsim(mirror)
    for i, base in enumerate([mirror.as_uri(), str(mirror)]):
        with pytest.warns(UserWarning):
            X, y = fetch_realsim(data_home=tmp_path / f"home{i}", base_url=base)
        np.testing.assert_allclose(X.toarray(), X_true)
        np.testing.assert_array_equal(y, y_true)
    with pytest.raises(DownloadError, match="no such file"):
        fetch_ijcnn1(data_home=tmp_path / "home_x", base_url=str(mirror))


def test_wrong_labels_in_cached_file_are_reported(tmp_path):
    folder = tmp_path / "realsim"
    folder.mkdir()
    (folder / "real-sim.bz2").write_bytes(bz2.compress(b"3 1:1\n4 2:1\n"))
    with pytest.raises(ValueError, match="labels \\[3, 4\\]"):
        fetch_realsim(data_home=tmp_path, download_if_missing=False)


# ---------------------------------------------------------- failures of the download


def test_download_if_missing_false_names_the_path(tmp_path, http_server):
    with pytest.raises(OSError, match=r"real-sim\.bz2.*download_if_missing=False") as info:
        fetch_realsim(data_home=tmp_path, download_if_missing=False, base_url=http_server.url)
    assert str(tmp_path / "realsim" / "real-sim.bz2") in str(info.value)
    assert isinstance(info.value, FileNotFoundError)
    assert http_server.requests == []


def test_unreachable_host_gives_clear_error(tmp_path, closed_port_url):
    with pytest.raises(DownloadError) as info:
        fetch_realsim(data_home=tmp_path, base_url=closed_port_url)
    message = str(info.value)
    assert closed_port_url + "real-sim.bz2" in message
    assert "Failed to download" in message and "refused" in message.lower()
    assert str(tmp_path / "realsim" / "real-sim.bz2") in message  # where to put it by hand
    assert isinstance(info.value, OSError)
    assert list((tmp_path / "realsim").iterdir()) == []  # no partial file


def test_checksum_verified_after_download(tmp_path, http_server):
    payload = b"some bytes of a data file\n" * 100
    (http_server.root / "f.bin").write_bytes(payload)
    good = hashlib.sha256(payload).hexdigest()
    folder = tmp_path / "c"
    with pytest.raises(ChecksumError, match=f"expected sha256 {'0' * 64}, got {good}"):
        fetch_file(RemoteFile("f.bin", "0" * 64), folder, base_url=http_server.url)
    assert list(folder.iterdir()) == []  # the bad download was discarded
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a known checksum: nothing to warn about
        path = fetch_file(RemoteFile("f.bin", good), folder, base_url=http_server.url)
    assert path.read_bytes() == payload
    assert not (folder / "f.bin.sha256").exists()
    fetch_file(RemoteFile("f.bin", good), folder, base_url=http_server.url)
    assert http_server.count("f.bin") == 2  # one failed, one good, then the cache


def test_http_errors_and_truncated_transfers(tmp_path, http_server):
    (http_server.root / "f.bin").write_bytes(b"x" * 5000)
    http_server.fail["/f.bin"] = 500
    with pytest.raises(DownloadError, match="HTTP 500"):
        fetch_file(RemoteFile("f.bin"), tmp_path / "a", base_url=http_server.url)
    with pytest.raises(DownloadError, match="HTTP 404"):
        fetch_file(RemoteFile("missing.bin"), tmp_path / "a", base_url=http_server.url)
    http_server.fail.clear()
    http_server.truncate["/f.bin"] = 1000
    with pytest.raises(DownloadError, match="f.bin"):
        fetch_file(RemoteFile("f.bin"), tmp_path / "a", base_url=http_server.url)
    assert list((tmp_path / "a").iterdir()) == []


def test_fetch_dataset_files_returns_paths_by_role(tmp_path, http_server):
    write_ijcnn1(http_server.root)
    with pytest.warns(UserWarning):
        paths = fetch_dataset_files("ijcnn1", data_home=tmp_path, base_url=http_server.url)
    assert set(paths) == {"train", "test"}
    assert paths["test"] == tmp_path / "ijcnn1" / "ijcnn1.t.bz2"
    with pytest.raises(ValueError, match="Unknown data set"):
        fetch_dataset_files("nope", data_home=tmp_path)


# ------------------------------------------------------- fetch_dataset, fetch_protein


def test_fetch_dataset_reads_every_file_of_a_registered_set(tmp_path, http_server):
    X_tr, X_te, y_tr, y_te = write_ijcnn1(http_server.root)
    with pytest.warns(UserWarning, match="No published checksum"):
        parts = fetch_dataset("ijcnn1", n_rows=4, data_home=tmp_path / "cache", base_url=http_server.url)
    assert set(parts) == {"train", "test"}
    (A, a), (B, b) = parts["train"], parts["test"]
    # 22 features: dense; n_rows cuts the training file only
    assert isinstance(A, np.ndarray) and A.shape == (4, 22) and B.shape == (3, 22)
    np.testing.assert_allclose(A, X_tr[:4])
    np.testing.assert_allclose(B, X_te)
    np.testing.assert_array_equal(a, y_tr[:4])
    np.testing.assert_array_equal(b, y_te)
    assert a.dtype == np.int64
    X_true, y_true = write_realsim(http_server.root)
    with pytest.warns(UserWarning):
        (X, y), = fetch_dataset("realsim", data_home=tmp_path / "cache", base_url=http_server.url).values()
    assert X.format == "csr" and X.shape == (4, 20958)  # wide: stays sparse
    np.testing.assert_allclose(X.toarray(), X_true)
    np.testing.assert_array_equal(y, y_true)
    with pytest.raises(ValueError, match="not a table of rows"):
        fetch_dataset("20news", data_home=tmp_path / "cache", base_url=http_server.url)
    with pytest.raises(ValueError, match="ships with"):
        fetch_dataset("yeast")


def _labelled_rows(X, y) -> bytes:
    """svmlight lines with integer class labels (0, 1, 2, ...)."""
    rows = (f"{lab} " + " ".join(f"{j + 1}:{v:g}" for j, v in enumerate(row) if v) for lab, row in zip(y, X))
    return ("\n".join(rows) + "\n").encode()


def test_fetch_protein_train_and_test(tmp_path, http_server):
    X_tr = np.zeros((5, 357))
    X_tr[0, [0, 356]] = [0.5, -1.0]
    X_tr[3, 100] = 0.25
    X_te = np.zeros((2, 357))
    X_te[1, 3] = 1.0  # the test file never mentions feature 357
    y_tr, y_te = [0, 1, 2, 1, 0], [2, 0]
    (http_server.root / "protein.bz2").write_bytes(bz2.compress(_labelled_rows(X_tr, y_tr)))
    (http_server.root / "protein.t.bz2").write_bytes(bz2.compress(_labelled_rows(X_te, y_te)))
    with pytest.warns(UserWarning):
        A, B, a, b = fetch_protein(data_home=tmp_path / "c", base_url=http_server.url)
    assert A.shape == (5, 357) and B.shape == (2, 357) and A.format == "csr"
    np.testing.assert_allclose(A.toarray(), X_tr)
    np.testing.assert_allclose(B.toarray(), X_te)
    np.testing.assert_array_equal(a, y_tr)
    np.testing.assert_array_equal(b, y_te)
