"""Checkpoints of the host loop: every estimator that runs it, interrupted after some
iterations (in any of its runs) and fitted again with the same checkpoint, ends with the
fitted attributes of an uninterrupted fit, bit for bit (timings apart); a checkpoint of
another fit, a damaged file and the codec's round trip."""
import re

import jax
import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_regression
from sklearn.feature_extraction.text import CountVectorizer

from regbayes import (M2DPM, DPMeansSVC, DPMNLClassifier, IBPFeatures, InfiniteLatentSVC, InfiniteSVC, MedLDA,
                      MedLDARegressor, MultiTaskInfiniteLatentSVC, MultiTaskInfiniteLatentSVR, PassiveAggressiveMedLDA)
from regbayes.algorithms.isvm import ISVMDraw
from regbayes.inference import Algorithm, host_checkpoint, run
from regbayes.inference.checkpoint import CheckpointError
from regbayes.schedules import polynomial

# the data and settings of tests/test_persistence.py (programs compiled for them are shared), longer runs
X, Y = make_blobs(n_samples=60, centers=2, n_features=3, random_state=0)
X3, Y3 = make_blobs(n_samples=60, centers=3, n_features=3, random_state=0)
XR, YR = make_regression(n_samples=60, n_features=3, random_state=0)
COUNTS = np.random.default_rng(0).poisson(1.0, size=(40, 12)).astype(float)
LABELS = (COUNTS[:, :6].sum(1) > COUNTS[:, 6:].sum(1)).astype(int)
TEXTS = ["apple banana cherry", "banana split dessert", "cherry pie apple", "dessert cake banana"] * 5
TEXT_LABELS = np.array(["fruit", "sweet", "fruit", "sweet"] * 5, dtype=object)
TOPICS = dict(n_topics=2, n_transform_sweeps=2, random_state=0)

# (id, estimator, X, y, iterations after which the fit is interrupted: counted over all its runs)
CASES = [
    ("InfiniteSVC", InfiniteSVC(n_iter=5, n_warmup=2, random_state=0), X, Y, 3),
    ("InfiniteSVC-ssgld-3class", InfiniteSVC(sampler="ssgld", n_iter=4, n_warmup=1, n_inner=3, batch_size=20), X3, Y3, 2),
    ("DPMNLClassifier", DPMNLClassifier(n_iter=5, n_warmup=2, random_state=0), X, Y, 2),
    ("M2DPM-2-inits", M2DPM(max_iter=4, n_init=2, tol=1e-12, random_state=0), X, Y, 6),
    ("DPMeansSVC", DPMeansSVC(cluster_penalty=2.0, max_iter=5, tol=1e-12, random_state=0), X, Y, 1),
    ("MedLDA-ssgrld", MedLDA(n_iter=6, n_draws=2, batch_size=20, snapshot_every=2, **TOPICS), COUNTS, LABELS, 4),
    ("MedLDA-gibbs-texts", MedLDA(sampler="gibbs", n_iter=5, n_draws=2, snapshot_every=1, **TOPICS), TEXTS, TEXT_LABELS, 3),
    ("MedLDARegressor", MedLDARegressor(n_iter=5, **TOPICS), COUNTS, COUNTS[:, 0], 3),
    ("PassiveAggressiveMedLDA", PassiveAggressiveMedLDA(batch_size=8, n_draws=2, snapshot_every=1, **TOPICS),
     COUNTS, LABELS, 2),
    ("IBPFeatures", IBPFeatures(truncation=5, n_iter=4, tol=0, random_state=0), X, None, 2),
    ("InfiniteLatentSVC", InfiniteLatentSVC(truncation=5, n_iter=4, tol=0, random_state=0), X, Y, 2),
    ("MultiTaskInfiniteLatentSVC-annealed", MultiTaskInfiniteLatentSVC(truncation=4, n_iter=3, tol=1e-12, anneal_iterations=2,
                                                                       include_inputs=True, random_state=0),
     X, np.stack([Y, 1 - Y], 1), 3),
    ("MultiTaskInfiniteLatentSVR", MultiTaskInfiniteLatentSVR(truncation=4, n_iter=4, tol=1e-12, include_inputs=True,
                                                              random_state=0), XR, YR, 2),
]
TIMING = re.compile(r"wall_time|seconds|per_second")


def assert_same(a, b, where):
    """``b`` equals ``a`` bit for bit, recursively; timings are skipped."""
    if isinstance(a, (np.ndarray, jax.Array)):
        a, b = np.asarray(a), np.asarray(b)
        assert (a.dtype, a.shape) == (b.dtype, b.shape) and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), where
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            if not (isinstance(key, str) and TIMING.search(key)):
                assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (u, v) in enumerate(zip(a, b)):
            assert_same(u, v, f"{where}[{i}]")
    elif isinstance(a, CountVectorizer):
        assert a.vocabulary_ == b.vocabulary_, where
    elif callable(a) and not isinstance(a, type):
        assert type(a) is type(b), where  # a schedule rebuilt by the fit
    else:
        assert type(a) is type(b) and (a == b or (a != a and b != b)), where


class Interrupt(Exception):
    pass


def interrupt_after(monkeypatch, n):
    """Make the n-th iteration of the fit (over all its runs) raise once its checkpoint is written."""
    update, count = host_checkpoint.HostCheckpoint.update, []

    def interrupted(self, snapshot, finished):
        update(self, snapshot, finished)
        count.append(1)
        if len(count) == n:
            raise Interrupt

    monkeypatch.setattr(host_checkpoint.HostCheckpoint, "update", interrupted)
    return update


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # short runs, on purpose
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_interrupted_fit_resumes_to_the_uninterrupted_attributes(case, tmp_path, monkeypatch):
    _, estimator, data, y, stop_after = case
    args = (data,) if y is None else (data, y)
    plain = vars(estimator.set_params(checkpoint=None).fit(*args)).copy()
    path = tmp_path / "fit.ckpt"
    update = interrupt_after(monkeypatch, stop_after)
    with pytest.raises(Interrupt):
        estimator.set_params(checkpoint=path, checkpoint_every=0).fit(*args)
    monkeypatch.setattr(host_checkpoint.HostCheckpoint, "update", update)
    resumed = vars(estimator.fit(*args))
    assert resumed.keys() == plain.keys()
    for name in plain:
        if name not in ("checkpoint", "checkpoint_every"):
            assert_same(plain[name], resumed[name], name)


def test_finished_fit_is_read_back_and_another_fit_is_refused(tmp_path):
    path = tmp_path / "fit.ckpt"
    first = InfiniteSVC(n_iter=3, n_warmup=1, init_components=4, checkpoint=path, checkpoint_every=0).fit(X, Y)
    again = InfiniteSVC(n_iter=3, n_warmup=1, init_components=4, checkpoint=path, checkpoint_every=0).fit(X, Y)
    assert_same(vars(first), vars(again), "InfiniteSVC")
    assert again.trace_["wall_time"].tolist() == first.trace_["wall_time"].tolist()  # read back, not run again
    for change in ({"random_state": 1}, {"alpha": 2.0}, {"n_iter": 4}):
        with pytest.raises(CheckpointError, match="another run"):
            InfiniteSVC(n_iter=3, n_warmup=1, init_components=4, checkpoint=path).set_params(**change).fit(X, Y)
    with pytest.raises(CheckpointError, match="another run"):
        InfiniteSVC(n_iter=3, n_warmup=1, init_components=4, checkpoint=path).fit(X + 1.0, Y)
    with pytest.raises(CheckpointError, match="another run"):
        DPMNLClassifier(n_iter=3, n_warmup=1, init_components=4, checkpoint=path).fit(X, Y)
    good = path.read_bytes()
    for damaged in (good[: len(good) // 2], good[:200] + bytes([good[200] ^ 1]) + good[201:], b"not a checkpoint"):
        path.write_bytes(damaged)
        with pytest.raises(CheckpointError, match="damaged|truncated|not a"):
            InfiniteSVC(n_iter=3, n_warmup=1, init_components=4, checkpoint=path).fit(X, Y)


def _count_step(seed, state, data):
    """A toy algorithm: the state accumulates the seeds; its objective converges (tol 0.02) at iteration 5."""
    i = state["i"] + 1
    total = state["total"] + seed % 7
    return {"i": i, "total": total, "path": state["path"] + [seed % 3]}, {"objective": 1.0 + 2.0**-i, "total": total}


@pytest.mark.parametrize("stop_after", [1, 3, 5, 6])
def test_run_resumes_with_tol_carry_and_callback(tmp_path, monkeypatch, stop_after):
    algorithm = Algorithm(_count_step, "count")
    state = {"i": 0, "total": np.int64(0), "path": []}
    key = jax.random.key(0)
    kwargs = dict(n_iter=10, keep=[2, 4, 6], draw=lambda s: int(s["total"]), tol=0.02)

    def observe_into(carry):
        def observe(t, s, info):
            carry["sum"] = carry["sum"] + info["objective"]
        return observe

    ref_carry = {"sum": 0.0}
    reference = run(algorithm, state, None, key, observe=observe_into(ref_carry), **kwargs)
    path = tmp_path / "run.ckpt"
    update = interrupt_after(monkeypatch, stop_after)
    carry = {"sum": 0.0}
    with pytest.raises(Interrupt):
        run(algorithm, state, None, key, observe=observe_into(carry), carry=carry, checkpoint=path, checkpoint_every=0,
            **kwargs)
    monkeypatch.setattr(host_checkpoint.HostCheckpoint, "update", update)
    carry = {"sum": 0.0}
    resumed = run(algorithm, state, None, key, observe=observe_into(carry), carry=carry, checkpoint=path, **kwargs)
    assert carry == ref_carry and reference.n_iter == 6 and reference.converged
    for field in ("state", "draws", "kept_iterations", "trace", "n_iter", "converged", "stopped_early"):
        assert_same(getattr(reference, field), getattr(resumed, field), field)


def test_codec_round_trip_of_states():
    value = {
        "arrays": (np.arange(6.0).reshape(2, 3).T, np.array([True, False]), np.float32(1.5), np.int64(-3)),
        "jax": jax.numpy.ones(3), "key": jax.random.key(7), "numbers": [1, 2.5, float("nan"), -float("inf"), None, True],
        b"\x00\x01": frozenset({(1, 2), (3,)}), "draw": ISVMDraw(np.ones(2), np.zeros((2, 1)), np.eye(1)[None], np.ones(1)),
        "schedule": polynomial(0.1, b=10.0), "text": "a", 5: {1, 2},
    }
    node, arrays = host_checkpoint.encode(value)
    back = host_checkpoint.decode(node, arrays)
    assert list(back) == list(value)
    assert back["arrays"][0].flags.f_contiguous and type(back["arrays"][2]) is np.float32
    assert jax.random.key_data(back["key"]).tolist() == jax.random.key_data(value["key"]).tolist()
    assert back["numbers"][2] != back["numbers"][2] and back["numbers"][3] == -float("inf")
    assert type(back["draw"]) is ISVMDraw and back["schedule"] == value["schedule"] and back[5] == {1, 2}
    assert back[b"\x00\x01"] == value[b"\x00\x01"]
    with pytest.raises(TypeError, match="cannot store"):
        host_checkpoint.encode({"f": lambda t: t})
    node["items"][0][1]["items"][0]["kind"] = "pickle"
    with pytest.raises(CheckpointError, match="unknown value kind"):
        host_checkpoint.decode(node, arrays)
    with pytest.raises(CheckpointError, match="unknown record type"):
        host_checkpoint.decode({"kind": "record", "type": "os:system", "items": []}, {})
