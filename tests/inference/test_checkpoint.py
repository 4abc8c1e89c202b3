"""Checkpoints of the driver: an interrupted run resumed from its checkpoint gives the
draws of an uninterrupted one (interrupted in every phase, and killed with SIGKILL in a
subprocess); a checkpoint of another run, a damaged file and a crash while writing."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from regbayes import BayesianSVC, archive
from regbayes.inference import checkpoint as ck
from regbayes.inference import sample
from regbayes.potentials import SVMData, build_potential
from regbayes.samplers import ssgld

SETTINGS = dict(n_warmup=300, n_draws=100, step_size=0.05, thin=3, n_chunks=5)


def _problem():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3)).astype(np.float32)
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=200) > 0, 1.0, -1.0).astype(np.float32)
    data = SVMData(jnp.asarray(X), jnp.asarray(y), jnp.float32(1.0), jnp.float32(1.0), jnp.float32(1.0))
    return ssgld(build_potential(20), "adagrad"), data, jnp.zeros((2, 3)), jax.random.key(1)


def _same(a, b):
    assert np.array_equal(a.positions, b.positions)
    assert set(a.stats) == set(b.stats) and all(np.array_equal(a.stats[f], b.stats[f]) for f in a.stats)
    np.testing.assert_array_equal(a.warmup_potential, b.warmup_potential)
    np.testing.assert_array_equal(a.iteration, b.iteration)
    np.testing.assert_array_equal(a.step_size, b.step_size)
    for x, y in zip(ck.host_leaves(a.final_states), ck.host_leaves(b.final_states)):
        np.testing.assert_array_equal(x, y)


class Interrupt(Exception):
    pass


@pytest.fixture(scope="module")
def reference():
    kernel, data, x0, key = _problem()
    return sample(kernel, data, x0, key, **SETTINGS)


# the run has 13 chunks: 8 of warm-up (two adaptation windows, the rest), then 5 of draws
@pytest.mark.parametrize("stop_after", [1, 2, 4, 7, 8, 9, 11, 13])
def test_interrupted_run_resumes_to_the_same_draws(reference, tmp_path, monkeypatch, stop_after):
    kernel, data, x0, key = _problem()
    path = tmp_path / "run.ckpt"
    add_chunk, count = ck.RunCheckpoint.add_chunk, []

    def interrupted(self, *args):
        add_chunk(self, *args)
        count.append(1)
        if len(count) == stop_after:
            raise Interrupt

    monkeypatch.setattr(ck.RunCheckpoint, "add_chunk", interrupted)
    with pytest.raises(Interrupt):
        sample(kernel, data, x0, key, checkpoint=path, checkpoint_every=0, **SETTINGS)
    monkeypatch.setattr(ck.RunCheckpoint, "add_chunk", add_chunk)
    _same(sample(kernel, data, x0, key, checkpoint=path, checkpoint_every=0, **SETTINGS), reference)
    _same(sample(kernel, data, x0, key, checkpoint=path, **SETTINGS), reference)  # the finished run, read back


def test_checkpoint_of_another_run_or_damaged_is_refused(tmp_path):
    kernel, data, x0, key = _problem()
    path = tmp_path / "run.ckpt"
    sample(kernel, data, x0, key, checkpoint=path, checkpoint_every=0, **SETTINGS)
    for change in ({"n_draws": 101}, {"step_size": 0.04}, {"thin": 2}):
        with pytest.raises(ck.CheckpointError, match="another run"):
            sample(kernel, data, x0, key, checkpoint=path, **{**SETTINGS, **change})
    with pytest.raises(ck.CheckpointError, match="another run"):
        sample(kernel, data, x0, jax.random.key(2), checkpoint=path, **SETTINGS)
    with pytest.raises(ck.CheckpointError, match="another run"):
        sample(kernel, data._replace(C=jnp.float32(2.0)), x0, key, checkpoint=path, **SETTINGS)
    good = path.read_bytes()
    for damaged in (good[: len(good) // 2], good[:100] + bytes([good[100] ^ 1]) + good[101:], b"not a checkpoint"):
        path.write_bytes(damaged)
        with pytest.raises(ck.CheckpointError, match="damaged|truncated|not a"):
            sample(kernel, data, x0, key, checkpoint=path, **SETTINGS)


def test_a_crash_while_writing_leaves_the_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "run.ckpt"
    ck.write(path, "run", {"n": 1}, {"a": np.arange(3)})
    before = path.read_bytes()

    def crash(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(archive.os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        ck.write(path, "run", {"n": 2}, {"a": np.arange(4)})
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["run.ckpt"]
    progress, arrays = ck.read(path, "run")
    assert progress == {"n": 1} and np.array_equal(arrays["a"], np.arange(3))
    with pytest.raises(TypeError, match="numeric"):
        ck.write(path, "run", {}, {"labels": np.array(["a"])})


FIT = textwrap.dedent("""
    import sys
    import numpy as np
    from regbayes import BayesianSVC
    from regbayes.datasets import load_breast_cancer_standardized
    X, _, y, _ = load_breast_cancer_standardized()
    kwargs = dict(sampler="ssgld", n_chains=2, n_draws=600, thin=100, n_warmup=2000, random_state=3,
                  checkpoint_every=0)
""")


def test_fit_killed_with_sigkill_resumes_to_the_uninterrupted_draws(tmp_path):
    """A BayesianSVC fit in a subprocess is killed (SIGKILL) once it has written six
    checkpoints (within its adaptation windows); the same fit in this process resumes from
    the last of them."""
    path = tmp_path / "fit.ckpt"
    script = FIT + f"BayesianSVC(checkpoint={str(path)!r}, **kwargs).fit(X, y)\n"
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    child = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    written = 0
    try:
        while time.monotonic() < deadline and child.poll() is None:
            if path.exists():
                progress, _ = ck.read(path, _fingerprint_of(path))
                written = len(progress["chunks"])
                if written >= 6:  # within warm-up (9 chunks, then 10 of draws): most of the run is still ahead
                    break
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait()
    assert child.returncode == -signal.SIGKILL, child.stderr.read().decode()[-2000:]
    assert written >= 6
    namespace = {}
    exec(FIT, namespace)
    X, y, kwargs = namespace["X"], namespace["y"], namespace["kwargs"]
    resumed = BayesianSVC(checkpoint=path, **kwargs).fit(X, y)
    plain = BayesianSVC(**{k: v for k, v in kwargs.items() if k != "checkpoint_every"}).fit(X, y)
    np.testing.assert_array_equal(resumed.coef_draws_, plain.coef_draws_)
    np.testing.assert_array_equal(resumed.intercept_draws_, plain.intercept_draws_)


def _fingerprint_of(path):
    """The fingerprint a checkpoint file records (to read a file written by another process)."""
    metadata, npz = archive.unpack(path, path.read_bytes(), ck.METADATA, ck.TRAILER, ck.CheckpointError, "checkpoint")
    npz.close()
    return metadata["fingerprint"]
