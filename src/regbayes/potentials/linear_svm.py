"""Potential of the Bayesian linear SVM (paper 000, section 3.3).

    U(eta; D) = ||eta||^2 / (2 nu^2)  +  sum_d c * hinge_d(eta)

with the binary hinge of eq. 15 (``eta`` of shape (d,)) or the Crammer–Singer hinge of
eqs. 16–17 (``eta`` of shape (K, d)). The minibatch estimate of eq. 7 scales the data
term by ``|D| / |D~|``; minibatches are drawn uniformly with replacement, so the
estimate is unbiased and costs O(|D~|) whatever ``|D|`` is.

Rows with rare features. When a feature is non-zero (off its most common value) in fewer
than ``|D| / |D~|`` rows, its subgradient is zero in most minibatches and ``|D| / |D~|``
times a row's in the few that hold one: a rare kick, not the near-Gaussian noise that the
samplers' step adaptation corrects, and a momentum sampler (SSGNHT) carries it. Such rows
(:func:`rare_feature_rows`) can be kept in every minibatch, with the rest drawn as before:

    U~(eta) = ||eta||^2 / (2 nu^2) + c sum_{d in E} hinge_d + c (|D| - |E|) / |D~| sum_{d in D~} hinge_d,

``D~`` drawn from the rows outside ``E``: still unbiased, and those features' kicks are gone.

Hyper-parameters travel inside :class:`SVMData` as arrays, so changing ``C`` or the
margin reuses the compiled sampler; only the minibatch size and the binary/multi-class
switch are static.
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp

from . import features
from .minibatch import rows_from_slots, rows_with_replacement
from .hinge import binary_hinge, crammer_singer_hinge
from .base import Potential


class SVMData(NamedTuple):
    """Training data and hyper-parameters of a Bayesian linear SVM.

    ``X`` is a dense (n, d) array or :class:`~regbayes.potentials.features.PaddedRows`;
    ``y`` is +1/-1 (binary) or integer classes (multi-class). ``n_rows`` (optional, a
    traced integer) says that only the first ``n_rows`` rows are data and the rest zero
    padding: minibatches are drawn from those rows and scaled by their number, so that
    one compiled sampler serves every data size padded to the same shape (zero rows add
    no subgradient to a full-data evaluation either).

    ``slot_rows`` and ``n_total`` (optional, traced) mark a pool of blocks streamed from
    disk (:mod:`regbayes.inference.streaming`): the rows are ``len(slot_rows)`` equal
    slots, slot ``s`` holding ``slot_rows[s]`` rows of one block; minibatches are drawn
    by :func:`~regbayes.potentials.minibatch.rows_from_slots` and scaled by
    ``n_total / |D~|``, ``n_total`` the rows of the whole data set. ``grad_offset``
    (optional, the shape of ``eta``) is subtracted from the minibatch subgradient (and
    ``grad_offset . eta`` from the potential): a shard's control variate
    (:mod:`regbayes.inference.sharded`), zero on average over the shards.
    """

    X: features.Design
    y: jnp.ndarray
    C: jnp.ndarray
    margin: jnp.ndarray
    prior_scale: jnp.ndarray
    n_rows: jnp.ndarray | None = None
    slot_rows: jnp.ndarray | None = None
    n_total: jnp.ndarray | None = None
    grad_offset: jnp.ndarray | None = None


def discriminant(eta, X):
    """``f = X eta`` (binary, (n,)) or ``X eta^T`` (multi-class, (n, K))."""
    if eta.ndim == 1:
        return features.matvec(X, eta)
    return features.matvec(X, eta.T)


def _loss_and_grad(eta, X, y, C, margin):
    f = discriminant(eta, X)
    if eta.ndim == 1:
        loss, dloss = binary_hinge(f, y, C, margin)
        grad = features.rmatvec(X, dloss)
    else:
        loss, dloss = crammer_singer_hinge(f, y, C, margin)
        grad = features.rmatvec(X, dloss).T
    return jnp.sum(loss), grad


def log_prior(eta, data: SVMData):
    """Gaussian prior N(0, nu^2 I), up to its normalising constant."""
    return -0.5 * jnp.sum(eta**2) / data.prior_scale**2


def value_and_subgrad(eta, data: SVMData):
    """Full-data ``U(eta; D)`` and its subgradient."""
    loss, grad = _loss_and_grad(eta, data.X, data.y, data.C, data.margin)
    u = loss + 0.5 * jnp.sum(eta**2) / data.prior_scale**2
    return u, grad + eta / data.prior_scale**2


def hinge_subgradient_sum(eta, data: SVMData):
    """The subgradient of ``sum_d c hinge_d(eta)`` over every row of ``data`` (no prior,
    no minibatch); ``eta`` is cast to the data's dtype."""
    eta = jnp.asarray(eta, data.C.dtype)
    return _loss_and_grad(eta, data.X, data.y, data.C, data.margin)[1]


def log_lik_terms(eta, data: SVMData, idx):
    """Per-datum ``log psi_d(eta) = -c hinge_d`` for rows ``idx`` (for the SRWM test)."""
    X = features.take(data.X, idx)
    y = data.y[idx]
    f = discriminant(eta, X)
    if eta.ndim == 1:
        loss, _ = binary_hinge(f, y, data.C, data.margin)
    else:
        loss, _ = crammer_singer_hinge(f, y, data.C, data.margin)
    return -loss


def n_data(data: SVMData) -> int:
    return data.y.shape[0]


def sigma_ref(X, C, prior_scale, fit_intercept=True, n_rows=None) -> float:
    """``(1/nu^2 + c N E[x^2])^(-1/2)``: the Gaussian analogue of the posterior's width for
    ``X`` (N, d) dense or sparse, where ``E[x^2]`` averages the squared features (the
    intercept's constant 1 included with ``fit_intercept``). It sets the sampler's starting
    scale (:func:`regbayes.samplers.defaults.start_scale`). With ``n_rows``, ``X`` is a
    sample of the data's ``N = n_rows`` rows."""
    sq = X.multiply(X).mean() if sp.issparse(X) else float(np.mean(np.square(X)))
    if fit_intercept:
        sq = (sq * X.shape[1] + 1.0) / (X.shape[1] + 1)
    n = X.shape[0] if n_rows is None else n_rows
    return 1.0 / math.sqrt(1.0 / prior_scale**2 + C * n * float(sq))


def weight_norm_bound(n_data, n_params, n_hinges, C, margin, prior_scale) -> float:
    """Largest ``||eta||^2`` a posterior draw can plausibly have, ``eta`` of ``n_params``
    coordinates.

    ``U(eta) = ||eta||^2 / (2 nu^2) + c sum_d hinge_d >= ||eta||^2 / (2 nu^2)`` and at eta = 0
    every hinge equals l, so ``U(0) = c |D| l n_hinges`` (``n_hinges`` hinges per datum: 1
    for the binary and Crammer–Singer hinges, M for M one-vs-rest classifiers) bounds the
    minimum whatever the features are. ``U`` is convex, and under a log-concave density in
    P dimensions ``U - min U`` exceeds ``P + 10 sqrt(P)`` with negligible probability; so a
    draw with ``||eta||^2 / (2 nu^2) > U(0) + P + 10 sqrt(P)`` means the sampler diverged."""
    P = n_params
    return 2.0 * prior_scale**2 * (C * n_data * margin * n_hinges + P + 10.0 * math.sqrt(P))


def rare_feature_rows(X, batch_size: int, limit: int) -> np.ndarray:
    """The rows to keep in every minibatch (module docstring), sorted: those off the most
    common value of a feature that fewer than ``N / batch_size`` of the ``N`` rows are off
    (zero for a sparse ``X``). Features are taken rarest first while the rows stay at most
    ``limit``; none when there are no rare features."""
    n = X.shape[0]
    if sp.issparse(X):
        X = sp.csc_matrix(X)
        counts = np.diff(X.indptr)
        rows_of = lambda j: X.indices[X.indptr[j]:X.indptr[j + 1]]  # noqa: E731
    else:
        # A rare feature's common value is off in fewer than N / b rows, so it holds more
        # than half of any m > 2 N / b rows: it is the median of the first m rows.
        X = np.asarray(X)
        m = min(n, 2 * (n // batch_size) + 1001)
        off = X != np.median(X[:m], axis=0)
        counts = off.sum(axis=0)
        rows_of = lambda j: np.flatnonzero(off[:, j])  # noqa: E731
    chosen = np.zeros(n, bool)
    for j in np.argsort(counts, kind="stable"):
        if counts[j] == 0 or counts[j] * batch_size >= n:
            continue
        more = chosen.copy()
        more[rows_of(j)] = True
        if more.sum() > limit:
            break
        chosen = more
    return np.flatnonzero(chosen)


@functools.lru_cache(maxsize=None)
def build_potential(batch_size: int | None, n_exact: int = 0) -> Potential:
    """The :class:`~regbayes.samplers.base.Potential` of the Bayesian linear SVM.

    ``batch_size=None`` makes the "stochastic" estimate exact (all rows). With ``n_exact``
    the data's first ``n_exact`` rows are in every minibatch and ``batch_size`` rows are
    drawn from the others (module docstring). The result is cached per setting so that
    repeated fits reuse compiled samplers.
    """

    def stochastic_value_and_subgrad(key, eta, data: SVMData):
        # a pool or shard smaller than a minibatch is still sampled: it is not the whole data
        if batch_size is None or (data.slot_rows is None and batch_size + n_exact >= n_data(data)):
            return value_and_subgrad(eta, data)
        n = n_data(data) if data.n_rows is None else data.n_rows  # rows past n_rows: padding
        if data.slot_rows is not None:  # a pool of streamed blocks: N / b over the whole data set
            idx = rows_from_slots(key, data.slot_rows, n_data(data) // data.slot_rows.shape[0], batch_size)
            n = data.n_total
        else:
            idx = n_exact + rows_with_replacement(key, n - n_exact, batch_size)
        X = features.take(data.X, idx)
        loss, grad = _loss_and_grad(eta, X, data.y[idx], data.C, data.margin)
        scale = (n - n_exact) / batch_size  # eq. 7
        u = scale * loss + 0.5 * jnp.sum(eta**2) / data.prior_scale**2
        grad = scale * grad + eta / data.prior_scale**2
        if data.grad_offset is not None:  # a shard's control variate
            u, grad = u - jnp.sum(data.grad_offset * eta), grad - data.grad_offset
        if n_exact:  # the rows kept in every minibatch, counted once
            exact = jnp.arange(n_exact)
            loss_e, grad_e = _loss_and_grad(eta, features.take(data.X, exact), data.y[:n_exact], data.C, data.margin)
            u, grad = u + loss_e, grad + grad_e
        return u, grad

    return Potential(
        value_and_subgrad=value_and_subgrad,
        stochastic_value_and_subgrad=stochastic_value_and_subgrad,
        log_prior=log_prior,
        log_lik_terms=log_lik_terms,
        n_data=n_data,
        batch_size=batch_size,
    )


def minibatch_noise(X, y, eta, C, margin, batch_size, T, full=False) -> np.ndarray:
    """Per-coordinate variance of the whitened minibatch subgradient ``T^T dU~(eta)`` (eq. 7);
    with ``full`` (a dense ``T`` only) its whole (P, P) covariance.

    With ``b = batch_size`` rows drawn with replacement, ``dU~`` is ``N/b`` times a sum of
    ``b`` per-row subgradients ``g_i``, so its covariance is ``(N^2 / b) Cov_i(g_i)``;
    here exactly, from every row (NumPy, on the host). ``X`` (N, P') dense or CSR with
    the intercept column already appended; ``y`` +1/-1 (binary, ``eta`` of shape (P',))
    or class codes (Crammer–Singer, ``eta`` (K, P')); ``T`` the whitening transform on
    the flattened ``eta`` (a (P, P) matrix or a (P,) diagonal). Returns (P,).
    """
    eta = np.asarray(eta, np.float64)
    n = X.shape[0]
    coef = _hinge_coefficients(X, y, eta, C, margin)
    cols = [(0, coef)] if eta.ndim == 1 else list(enumerate(coef.T))  # g_i = coef_i x_i per class row
    width = X.shape[1]
    T = np.asarray(T, np.float64)
    if full and T.ndim == 1:
        raise ValueError("the full covariance of the minibatch noise needs a dense (P, P) transform T")
    if T.ndim == 1:  # diagonal: Var of T_j g_ij, coordinate by coordinate
        sq = X.multiply(X) if sp.issparse(X) else np.square(X)
        var = np.concatenate([(np.asarray(sq.T @ c**2).ravel() - np.asarray(X.T @ c).ravel() ** 2 / n) / n
                              for _, c in cols])
        return n**2 / batch_size * T**2 * np.maximum(var, 0.0)
    G = np.zeros((n, T.shape[0]))  # dense T only for small P: every row's flattened g_i
    dense = X.toarray() if sp.issparse(X) else np.asarray(X)
    for k, c in cols:
        G[:, k * width:(k + 1) * width] = c[:, None] * dense
    G = G @ T
    return n**2 / batch_size * (np.cov(G.T, bias=True).reshape(G.shape[1], G.shape[1]) if full else np.var(G, axis=0))


def block_noise(X, y, blocks, block_rows, eta, C, margin, T, full=False) -> np.ndarray:
    """Per-coordinate variance over blocks of a block's mean whitened row subgradient,
    ``Var_B(T^T g_B)``, estimated from a sample of rows of a sample of blocks (the
    streamed pools of :mod:`regbayes.inference.streaming`). ``blocks`` (n,) labels each row
    of ``X``, ``y`` with its block (at least two blocks, each of two or more rows); the
    blocks should be drawn with probability proportional to their rows. ``block_rows``
    (n,) gives the rows ``m_B`` of each row's block, of which the ``n_B`` sampled were drawn
    without replacement: the variance of the sampled rows' means then overstates the
    blocks' by ``E[(1 - n_B / m_B) s_B^2 / n_B]`` (finite population), which is subtracted.
    Arguments as in :func:`minibatch_noise` (``full``: the (P, P) covariance)."""
    eta = np.asarray(eta, np.float64)
    if full and np.ndim(T) == 1:
        raise ValueError("the full covariance of the block noise needs a dense (P, P) transform T")
    coef = _hinge_coefficients(X, y, eta, C, margin)
    dense = X.toarray() if sp.issparse(X) else np.asarray(X, np.float64)
    G = dense[:, None, :] * (coef[:, None, None] if eta.ndim == 1 else coef[:, :, None])  # (n, classes, width)
    G = G.reshape(X.shape[0], -1)
    T = np.asarray(T, np.float64)
    G = G * T if T.ndim == 1 else G @ T
    ids, blocks = np.unique(np.asarray(blocks), return_inverse=True)
    if len(ids) < 2:
        raise ValueError("block_noise needs rows of at least two blocks")
    counts = np.bincount(blocks).astype(np.float64)
    population = np.bincount(blocks, weights=np.asarray(block_rows, np.float64)) / counts
    means = np.stack([np.bincount(blocks, weights=G[:, j]) for j in range(G.shape[1])], axis=1) / counts[:, None]
    # each row's weight in the mean over blocks of (1 - n_B / m_B) s_B^2 / n_B, s_B^2 its block's row variance
    weight = ((1.0 - counts / population) / counts / np.maximum(counts - 1.0, 1.0) / len(ids))[blocks]
    centred = G - means[blocks]
    if full:
        return np.cov(means.T).reshape(G.shape[1], G.shape[1]) - (centred * weight[:, None]).T @ centred
    return np.maximum(np.var(means, axis=0, ddof=1) - weight @ centred**2, 0.0)


def full_subgradient(X, y, eta, C, margin, prior_scale, scale=1.0) -> np.ndarray:
    """``dU(eta)`` on the host (NumPy), flattened: ``scale`` times the rows' hinge
    subgradients (``scale = N / n`` when ``X`` holds n of the N rows) plus the prior's
    ``eta / nu^2``. ``X``, ``y`` as in :func:`minibatch_noise`."""
    eta = np.asarray(eta, np.float64)
    coef = _hinge_coefficients(X, y, eta, C, margin)
    grad = np.asarray(X.T @ coef).ravel() if eta.ndim == 1 else np.asarray(X.T @ coef).T
    return (scale * grad + eta / prior_scale**2).ravel()


def _hinge_coefficients(X, y, eta, C, margin) -> np.ndarray:
    """Each row's hinge subgradient as ``coef_i x_i``: binary (``eta`` (D,), ``y`` +-1)
    ``coef_i = -C y_i`` where the margin is violated, shape (N,); Crammer–Singer (``eta``
    (M, D), ``y`` class codes) ``+C`` at the most violating other class and ``-C`` at ``y_i``,
    shape (N, M)."""
    scores = np.asarray(X @ (eta if eta.ndim == 1 else eta.T))
    if eta.ndim == 1:
        return np.where(margin - y * scores > 0, -C * y, 0.0)
    rows = np.arange(X.shape[0])
    other = scores.copy()
    other[rows, y] = -np.inf
    star = np.argmax(other, axis=1)
    active = margin + other[rows, star] - scores[rows, y] > 0
    coef = np.zeros(scores.shape)
    coef[rows, star] = C * active
    coef[rows, y] -= C * active
    return coef
