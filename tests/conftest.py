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
