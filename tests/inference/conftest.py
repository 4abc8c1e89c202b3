"""A 2-worker Dask cluster for the tests of chains and shards on workers (one per module)."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    from regbayes.inference.distributed import WORKER_ENV

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40, env=dict(WORKER_ENV)) as cluster:
        with distributed.Client(cluster) as client:
            yield client
