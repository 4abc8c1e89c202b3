"""Shared by every test module: ``tests/support`` (reference samplers and data that
several test files use) is importable by name, and JAX's persistent compilation cache is
on for the test run.

The cache is one temporary folder per run, made by the process that pytest starts and
removed when it ends; the run's ``pytest-xdist`` workers and the processes they start
(Dask workers, scikit-learn's ``n_jobs`` workers) inherit it through the environment, where
JAX reads it at import. A program that several test files compile for the same shapes is
then compiled once per run instead of once per process. ``REGBAYES_TEST_JAX_CACHE=0`` turns
it off."""
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "support"))

_CACHE_MADE_HERE = None
if os.environ.get("REGBAYES_TEST_JAX_CACHE", "1") != "0" and "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    _CACHE_MADE_HERE = tempfile.mkdtemp(prefix="regbayes-tests-jax-")
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _CACHE_MADE_HERE
    os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
    os.environ["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] = "0"


def pytest_unconfigure(config):
    if _CACHE_MADE_HERE is not None and not hasattr(config, "workerinput"):
        shutil.rmtree(_CACHE_MADE_HERE, ignore_errors=True)


@pytest.fixture(scope="module")
def client():
    """A 2-worker Dask cluster for the tests of chains and shards on workers (one per module)."""
    distributed = pytest.importorskip("distributed")
    from regbayes.inference.distributed import WORKER_ENV

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40, env=dict(WORKER_ENV)) as cluster:
        with distributed.Client(cluster) as client:
            yield client
