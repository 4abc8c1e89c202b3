"""Chains on Dask workers (chain_method="dask") on a 2-worker local cluster: the draws of a
single-process run, the embedded cluster's settings, a worker lost mid-run, bad input."""
from __future__ import annotations

import os
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from regbayes import BayesianSVC  # noqa: E402
from regbayes.inference import distributed as dask_chains  # noqa: E402
from regbayes.inference import sample  # noqa: E402
from regbayes.potentials import SVMData, build_potential  # noqa: E402
from regbayes.samplers import ssgld, ssgnht  # noqa: E402


def svm_data(n=400, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0).astype(np.float32)
    return SVMData(jnp.asarray(X), jnp.asarray(y), jnp.float32(1.0), jnp.float32(1.0), jnp.float32(1.0)), X, y


@pytest.mark.parametrize("n_chains", [3, 4])
def test_chains_on_workers_give_the_draws_of_one_process(client, n_chains):
    """3 chains on 2 workers: a group of 2 and a group of 1 (sent as a pair, module
    docstring); 4: two groups of 2. Warm-up adapts the transform from the pooled draws."""
    data, _, _ = svm_data()
    kernel = ssgnht(build_potential(50))
    settings = dict(n_warmup=300, n_draws=60, thin=5, step_size=0.01, n_chunks=4)
    init = jnp.zeros((n_chains, 4), jnp.float32)
    local = sample(kernel, data, init, jax.random.key(3), **settings)
    spread = sample(kernel, data, init, jax.random.key(3), chain_method="dask", client=client, **settings)
    np.testing.assert_array_equal(spread.positions, local.positions)
    for field in local.stats:
        np.testing.assert_array_equal(spread.stats[field], local.stats[field])
    np.testing.assert_array_equal(spread.final_keys, local.final_keys)
    assert spread.compile_seconds > 0 and spread.sampling_seconds > 0


def test_estimator_with_dask_chains_matches_vectorized_float64_gibbs(client):
    """BayesianSVC(chain_method="dask") uses the current client; Gibbs runs in float64 on
    the workers as in the caller's x64 block."""
    _, X, y = svm_data(n=120, d=3, seed=1)
    settings = dict(sampler="gibbs", n_chains=2, n_draws=40, n_warmup=20, random_state=4)
    local = BayesianSVC(**settings).fit(X, y)
    spread = BayesianSVC(chain_method="dask", **settings).fit(X, y)
    np.testing.assert_array_equal(spread.coef_draws_, local.coef_draws_)
    spread.sample_more(X, y, 10)
    local.sample_more(X, y, 10)
    np.testing.assert_array_equal(spread.coef_draws_, local.coef_draws_)


def _interrupt_third_chunk(monkeypatch, action):
    """Run ``action(chains)`` before the third chunk's tasks go out; count placements."""
    calls = {"n": 0, "placed": 0}
    each_group, place = dask_chains.DaskChains._each_group, dask_chains.DaskChains._place

    def interrupted(self, fn, *args):
        if fn == "run":
            calls["n"] += 1
            if calls["n"] == 3:
                action(self)
        return each_group(self, fn, *args)

    def counting_place(self):
        calls["placed"] += 1
        return place(self)

    monkeypatch.setattr(dask_chains.DaskChains, "_each_group", interrupted)
    monkeypatch.setattr(dask_chains.DaskChains, "_place", counting_place)
    return calls


def kill_a_worker(chains):
    victim = chains.workers[0]
    chains.client.submit(os._exit, 1, workers=[victim], pure=False)
    deadline = time.monotonic() + 60
    while victim in chains.client.scheduler_info(n_workers=-1)["workers"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert victim not in chains.client.scheduler_info(n_workers=-1)["workers"]


def test_a_worker_lost_mid_run_costs_one_chunk_not_the_draws(client, monkeypatch):
    """A worker killed before the third chunk: the caller starts the runners again on the
    workers there are and reruns the chunk from the states it holds, to the draws of an
    uninterrupted run."""
    data, _, _ = svm_data(seed=2)
    kernel = ssgld(build_potential(50))
    settings = dict(n_warmup=0, n_draws=80, step_size=0.05, n_chunks=8)
    init = jnp.zeros((4, 4), jnp.float32)
    local = sample(kernel, data, init, jax.random.key(5), **settings)
    calls = _interrupt_third_chunk(monkeypatch, kill_a_worker)
    spread = sample(kernel, data, init, jax.random.key(5), chain_method="dask", client=client, **settings)
    np.testing.assert_array_equal(spread.positions, local.positions)
    assert calls["n"] >= 9 and calls["placed"] == 2  # the third chunk twice; placed at the start and after the loss
    client.wait_for_workers(2, timeout=60)


def test_a_cluster_without_workers_is_a_clear_error():
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None, silence_logs=40) as cluster:
        with distributed.Client(cluster) as empty:
            data, _, _ = svm_data()
            with pytest.raises(dask_chains.ClusterError, match="no worker"):
                sample(ssgld(build_potential(50)), data, jnp.zeros((2, 4), jnp.float32), jax.random.key(0),
                       n_warmup=0, n_draws=2, step_size=0.1, chain_method="dask", client=empty)


def test_chain_groups_are_contiguous_and_balanced():
    assert dask_chains.chain_groups(4, 2) == [(0, 2), (2, 4)]
    assert dask_chains.chain_groups(3, 2) == [(0, 2), (2, 3)]
    assert dask_chains.chain_groups(2, 8) == [(0, 1), (1, 2)]
    groups = dask_chains.chain_groups(1000, 7)
    sizes = [b - a for a, b in groups]
    assert groups[0][0] == 0 and groups[-1][1] == 1000 and max(sizes) - min(sizes) <= 1
    assert all(a2 == b1 for (_, b1), (a2, _) in zip(groups, groups[1:]))


def test_bad_chain_method_and_unreachable_scheduler(monkeypatch):
    data, _, _ = svm_data()
    init = jnp.zeros((2, 4), jnp.float32)
    with pytest.raises(ValueError, match="chain_method"):
        sample(ssgld(build_potential(50)), data, init, jax.random.key(0), n_warmup=0, n_draws=2, step_size=0.1,
               chain_method="threads")
    monkeypatch.setattr(dask_chains, "CONNECT_TIMEOUT", 1.0)
    with pytest.raises(dask_chains.ClusterError, match="cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'"):
        sample(ssgld(build_potential(50)), data, init, jax.random.key(0), n_warmup=0, n_draws=2, step_size=0.1,
               chain_method="dask", client="tcp://127.0.0.1:9")
    with pytest.raises(TypeError, match="client must be"):
        dask_chains.resolve_client(object())


def test_cli_fit_with_a_scheduler(client, tmp_path, monkeypatch, capsys):
    """``regbayes fit --scheduler ADDRESS`` runs BayesianSVC's chains on that cluster; an
    unreachable address and a model the driver's chains do not run are clear errors."""
    from sklearn.datasets import dump_svmlight_file

    from regbayes import cli

    _, X, y = svm_data(n=120, d=3, seed=1)  # the estimator test's shapes: its programs serve
    train = tmp_path / "train.svm"
    dump_svmlight_file(X, y, str(train))
    common = [str(train), "--model-out", str(tmp_path / "m.npz"), "--n-chains", "2", "--n-draws", "40",
              "--n-warmup", "20", "--sampler", "gibbs", "--no-progress"]
    assert cli.main(["fit", *common, "--scheduler", client.scheduler.address]) == 0
    assert "2 chain(s) x 40" in capsys.readouterr().out
    monkeypatch.setattr(dask_chains, "CONNECT_TIMEOUT", 1.0)
    assert cli.main(["fit", *common, "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "cannot reach the Dask scheduler" in capsys.readouterr().err
    assert cli.main(["fit", str(train), "--model-out", str(tmp_path / "m.npz"), "--model", "m2dpm",
                     "--scheduler", "local"]) == 2
    assert "--scheduler spreads the chains of --model bayes-svc" in capsys.readouterr().err
