"""Multi-task data generated from MT-iLSVM's own model (paper 002, section 4.3): a sparse
binary projection ``Z`` (D x K) shared by all tasks, ``x_n = Z w_n + noise`` and task
``m``'s target driven by ``(Z eta_m)^T x_n``."""
from __future__ import annotations

import numpy as np


def shared_projection(seed, *, n_samples=400, n_features=30, n_latent=4, n_tasks=6, density=0.25, noise=0.3):
    """``(X, F, Z, eta)``: inputs (N, D), the noiseless task scores ``F = X Z eta^T`` (N, M),
    the projection (D, K) and the task weights (M, K). Each column of Z has at least one one."""
    rng = np.random.default_rng(seed)
    Z = (rng.uniform(size=(n_features, n_latent)) < density).astype(float)
    for k in range(n_latent):
        if not Z[:, k].any():
            Z[rng.integers(n_features), k] = 1.0
    W = rng.standard_normal((n_samples, n_latent))
    X = W @ Z.T + noise * rng.standard_normal((n_samples, n_features))
    eta = rng.standard_normal((n_tasks, n_latent))
    F = X @ Z @ eta.T
    return X, F, Z, eta


def multilabel(seed, **kwargs):
    """``(X, Y)`` with ``Y[n, m] = 1`` where task m's score is above its median: balanced labels."""
    X, F, Z, eta = shared_projection(seed, **kwargs)
    rng = np.random.default_rng(seed + 1000)
    F = F + 0.1 * F.std(axis=0) * rng.standard_normal(F.shape)
    Y = (F > np.median(F, axis=0)).astype(int)
    return X, Y


def task_regression(seed, *, n_tasks=6, noise_y=0.3, offsets=2.0, **kwargs):
    """``(X, y, tasks)``: each row belongs to one task; ``y = score + offset_m + noise``
    with per-task offsets (task means differ)."""
    X, F, Z, eta = shared_projection(seed, n_tasks=n_tasks, **kwargs)
    rng = np.random.default_rng(seed + 2000)
    tasks = rng.integers(n_tasks, size=X.shape[0])
    offset = offsets * rng.standard_normal(n_tasks)
    score = F[np.arange(X.shape[0]), tasks]
    y = score / F.std() + offset[tasks] + noise_y * rng.standard_normal(X.shape[0])
    return X, y, tasks


def task_classification(seed, *, n_tasks=6, **kwargs):
    """``(X, y, tasks)``: each row belongs to one task; ``y`` in {0, 1} is 1 where the row's
    task score is above that task's median."""
    X, F, Z, eta = shared_projection(seed, n_tasks=n_tasks, **kwargs)
    rng = np.random.default_rng(seed + 3000)
    tasks = np.arange(X.shape[0]) % n_tasks
    rng.shuffle(tasks)
    score = F[np.arange(X.shape[0]), tasks]
    score = score + 0.1 * score.std() * rng.standard_normal(score.shape)
    y = np.zeros(X.shape[0], dtype=int)
    for m in range(n_tasks):
        sel = tasks == m
        y[sel] = score[sel] > np.median(score[sel])
    return X, y, tasks
