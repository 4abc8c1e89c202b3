"""Synthetic data with binary latent features: offline stand-ins for paper 002's sets.

Each generator draws from the model the paper fits, so the experiments run without the
optional data packages and the latent structure is known.

* :func:`make_latent_classification` (iLSVM, section 4.2): ``z_n`` binary with the
  decreasing feature probabilities of a stick-breaking IBP (``pi_k = prod_{j<=k} nu_j``,
  ``nu_j ~ Beta(alpha, 1)``), inputs ``x_n = W z_n + noise`` (a linear-Gaussian
  likelihood), and a class ``y_n = argmax_y eta_y^T (2 z_n - 1)`` (noisy). ``label_features``
  picks which latent features carry the label; by default the weakest ones (the smallest
  loadings), so that an unsupervised factor model that explains the input variance first
  finds them last -- the situation where learning the features with the margin helps.
* :func:`make_latent_multilabel` (MT-iLSVM, section 4.3): a shared binary projection
  ``Z`` (D x K), inputs ``x_n = Z w_n + noise`` with ``w_n ~ N(0, I)``, and task ``m``'s
  label ``1[eta_m^T Z^T x_n > t_m]`` with ``t_m`` the quantile that gives ``density``.
* :func:`make_latent_multitask_regression`: the same projection; each row belongs to one
  task (a school); ``y = eta_m^T Z^T x_n / sqrt(D) + b_m + noise``.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..rng import check_generator
from ..validation import check_int, check_real

__all__ = ["LatentData", "make_latent_classification", "make_latent_multilabel", "make_latent_multitask_regression"]


class LatentData(NamedTuple):
    """Generated data with the truth: ``X``, ``y`` (labels, an indicator matrix or a
    response), ``tasks`` (task index or None), ``Z`` (the binary latent matrix), ``loadings``
    and ``coef`` (the discriminant's weights)."""

    X: np.ndarray
    y: np.ndarray
    tasks: np.ndarray | None
    Z: np.ndarray
    loadings: np.ndarray
    coef: np.ndarray


def _check_fraction(name, value, *, open_interval=False):
    value = check_real(name, value, low=0.0, low_inclusive=not open_interval)
    if value > 1.0 or (open_interval and value == 1.0):
        raise ValueError(f"{name} must be in {'(0, 1)' if open_interval else '[0, 1]'}, got {value}")
    return value


def _ibp_probabilities(rng, n_latent, alpha):
    nu = rng.beta(alpha, 1.0, size=n_latent)
    return np.clip(np.cumprod(nu), 0.05, 0.95)


def make_latent_classification(n_samples=600, n_features=40, n_latent=8, n_classes=3, *, alpha=4.0,
                               noise=0.5, label_noise=0.05, label_features=None, random_state=None) -> LatentData:
    """Rows with binary latent features ``z_n`` (stick-breaking IBP probabilities), inputs
    ``x_n = W z_n + N(0, noise^2 I)`` (``W``'s column k scaled by ``2 / (1 + k)``: later
    features explain less variance) and classes ``argmax_y eta_y^T z_n`` over the
    ``label_features`` (default: the last half of the latent features, centred as ``2 z - 1``), each label
    replaced by a uniform class with probability ``label_noise``.
    Returns :class:`LatentData` with ``Z`` (n, K) and ``loadings`` ``W`` (D, K).
    """
    n_samples = check_int("n_samples", n_samples, minimum=2)
    n_features = check_int("n_features", n_features, minimum=1)
    n_latent = check_int("n_latent", n_latent, minimum=1)
    n_classes = check_int("n_classes", n_classes, minimum=2)
    check_real("alpha", alpha, low=0.0, low_inclusive=False)
    check_real("noise", noise, low=0.0)
    _check_fraction("label_noise", label_noise)
    rng = check_generator(random_state)
    pi = _ibp_probabilities(rng, n_latent, alpha)
    Z = (rng.random((n_samples, n_latent)) < pi).astype(np.float64)
    W = rng.normal(size=(n_features, n_latent)) * (2.0 / (1.0 + np.arange(n_latent)))
    X = Z @ W.T + noise * rng.normal(size=(n_samples, n_features))
    chosen = np.arange(n_latent // 2, n_latent) if label_features is None else np.asarray(label_features)
    eta = np.zeros((n_classes, n_latent))
    eta[:, chosen] = rng.normal(size=(n_classes, len(chosen))) * 2.0
    y = np.argmax((2.0 * Z - 1.0) @ eta.T, axis=1)  # centred features: no class takes every all-off row
    flip = rng.random(n_samples) < label_noise
    y[flip] = rng.integers(0, n_classes, size=int(flip.sum()))
    return LatentData(X, y, None, Z, W, eta)


def _projected_rows(rng, n_rows, n_features, n_latent, alpha, noise):
    """A shared binary projection ``Z`` (D x K) and ``n_rows`` inputs ``x_n = Z w_n +
    N(0, noise^2 I)``, ``w_n ~ N(0, I)``: ``(Z, X)``."""
    pi = _ibp_probabilities(rng, n_latent, alpha)
    Z = (rng.random((n_features, n_latent)) < pi).astype(np.float64)
    empty = Z.sum(axis=0) == 0
    Z[rng.integers(0, n_features, size=int(empty.sum())), np.flatnonzero(empty)] = 1.0  # every column used once
    X = rng.normal(size=(n_rows, n_latent)) @ Z.T + noise * rng.normal(size=(n_rows, n_features))
    return Z, X


def make_latent_multilabel(n_samples=600, n_features=30, n_labels=6, n_latent=6, *, alpha=3.0, noise=0.5,
                           density=0.3, random_state=None) -> LatentData:
    """Multi-label rows sharing a binary projection ``Z`` (D x K): ``x_n = Z w_n +
    N(0, noise^2 I)``, ``w_n ~ N(0, I)``; label m is ``1[eta_m^T Z^T x_n > t_m]`` with
    ``t_m`` the ``1 - density`` quantile over the rows. ``y`` is the (n, M) 0/1 matrix.
    """
    n_samples = check_int("n_samples", n_samples, minimum=2)
    n_features = check_int("n_features", n_features, minimum=1)
    n_labels = check_int("n_labels", n_labels, minimum=1)
    n_latent = check_int("n_latent", n_latent, minimum=1)
    check_real("alpha", alpha, low=0.0, low_inclusive=False)
    check_real("noise", noise, low=0.0)
    _check_fraction("density", density, open_interval=True)
    rng = check_generator(random_state)
    Z, X = _projected_rows(rng, n_samples, n_features, n_latent, alpha, noise)
    eta = rng.normal(size=(n_labels, n_latent))
    scores = (X @ Z) @ eta.T
    thresholds = np.quantile(scores, 1.0 - density, axis=0)
    Y = (scores > thresholds).astype(np.int64)
    return LatentData(X, Y, None, Z, Z, eta)


def make_latent_multitask_regression(n_tasks=20, n_per_task=60, n_features=20, n_latent=5, *, alpha=3.0,
                                     noise=0.5, response_noise=0.3, task_offset=0.5, random_state=None) -> LatentData:
    """Regression tasks (e.g. schools) sharing a binary projection ``Z`` (D x K): row n of
    task m has ``x_n = Z w_n + N(0, noise^2 I)`` and ``y_n = eta_m^T Z^T x_n / sqrt(D) + b_m
    + N(0, response_noise^2)``, with ``eta_m = eta_0 + 0.5 N(0, I)`` (related tasks) and
    ``b_m ~ N(0, task_offset^2)``. ``tasks`` holds each row's task (rows grouped by task).
    """
    n_tasks = check_int("n_tasks", n_tasks, minimum=1)
    n_per_task = check_int("n_per_task", n_per_task, minimum=2)
    n_features = check_int("n_features", n_features, minimum=1)
    n_latent = check_int("n_latent", n_latent, minimum=1)
    check_real("alpha", alpha, low=0.0, low_inclusive=False)
    for name, value in (("noise", noise), ("response_noise", response_noise), ("task_offset", task_offset)):
        check_real(name, value, low=0.0)
    rng = check_generator(random_state)
    n = n_tasks * n_per_task
    tasks = np.repeat(np.arange(n_tasks), n_per_task)
    Z, X = _projected_rows(rng, n, n_features, n_latent, alpha, noise)
    eta = rng.normal(size=n_latent) + 0.5 * rng.normal(size=(n_tasks, n_latent))
    offsets = task_offset * rng.normal(size=n_tasks)
    y = np.einsum("nk,nk->n", X @ Z, eta[tasks]) / np.sqrt(n_features) + offsets[tasks]
    y = y + response_noise * rng.normal(size=n)
    return LatentData(X, y, tasks, Z, Z, eta)
