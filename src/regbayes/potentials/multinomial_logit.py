"""Potential of one multinomial-logit expert of the dpMNL mixture (Shahbaba & Neal 2009,
"Nonlinear models using Dirichlet process mixtures"; the baseline dpMNL of paper 001,
Tables 1, 3 and 4, and of paper 000, Table 2).

Component ``k`` owns the rows ``i`` with ``z_i = k``; its expert ``beta`` (M, D), one row per
class, gives ``p(y = m | x~, beta) = softmax_m(beta x~)`` and has the prior ``N(0, nu^2 I)``.
Given the assignments its potential (the ``-log`` of the conditional ``beta_k | z`` up to a
constant; paper 001's eq. 11 with ``psi`` replaced by the softmax likelihood) is

    U_k(beta) = ||beta||^2 / (2 nu^2) - sum_{i: z_i = k} [ f_{i, y_i} - log sum_m exp f_{im} ],
    f_i = beta x~_i,

with gradient ``beta / nu^2 - sum_i (e_{y_i} - softmax(f_i)) x~_i^T``. All ``M`` rows of
``beta`` are free (no reference class): the direction that adds one vector to every row
leaves the likelihood unchanged, and the prior alone sets it.

A component's rows travel as a padded block (:class:`MNLRows`: rows, class codes, a mask):
padding rows add nothing to ``U``, so one compiled program serves every component of a
block size.

:func:`contrast_whitening` is the linear reparameterisation ``beta = T u`` of the gradient
kernels (:mod:`regbayes.samplers.base`): the square root of the inverse Hessian of ``U`` at
``beta = 0`` (its factors :func:`contrast_factors` in float64 on the host).
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .base import Potential


class MNLRows(NamedTuple):
    """One component's rows: ``X`` (B, D) the experts' inputs x~, ``y`` (B,) integer class
    codes in ``0..M-1``, ``valid`` (B,) the rows that belong to the component (the others
    are padding), ``prior_scale`` nu."""

    X: jnp.ndarray
    y: jnp.ndarray
    valid: jnp.ndarray
    prior_scale: jnp.ndarray


def log_lik_terms(beta, data: MNLRows, idx=None):
    """``log softmax_{y_i}(beta x~_i)`` for rows ``idx`` (all rows when None); 0 for
    padding rows."""
    X, y, valid = (data.X, data.y, data.valid) if idx is None else (data.X[idx], data.y[idx], data.valid[idx])
    f = X @ beta.T
    chosen = jnp.take_along_axis(f, y[:, None], axis=1)[:, 0]
    return jnp.where(valid, chosen - jax.nn.logsumexp(f, axis=1), 0.0)


def value_and_grad(beta, data: MNLRows):
    """``U_k(beta)`` and its gradient (module docstring)."""
    f = data.X @ beta.T
    log_p = jax.nn.log_softmax(f, axis=1)
    mask = data.valid.astype(beta.dtype)
    onehot = jax.nn.one_hot(data.y, beta.shape[0], dtype=beta.dtype)
    log_lik = jnp.sum(mask * jnp.sum(onehot * log_p, axis=1))
    residual = mask[:, None] * (onehot - jnp.exp(log_p))  # (B, M)
    inv_var = 1.0 / data.prior_scale**2
    u = 0.5 * inv_var * jnp.sum(beta**2) - log_lik
    return u, inv_var * beta - residual.T @ data.X


def log_prior(beta, data: MNLRows):
    """``log N(beta; 0, nu^2 I)`` up to its constant."""
    return -0.5 * jnp.sum(beta**2) / data.prior_scale**2


@functools.lru_cache(maxsize=None)
def component_potential() -> Potential:
    """The :class:`~regbayes.samplers.base.Potential` of one expert on its full block of rows
    (no minibatch estimate: ``batch_size`` None, the stochastic estimate is the exact
    value). Cached, so that kernels built on it are the same object from fit to fit."""
    return Potential(
        value_and_subgrad=value_and_grad,
        stochastic_value_and_subgrad=lambda key, beta, data: value_and_grad(beta, data),
        log_prior=log_prior,
        log_lik_terms=log_lik_terms,
        n_data=lambda data: data.X.shape[0],
        batch_size=None,
    )


def contrast_factors(gram, n_classes: int, prior_scale: float):
    """``L`` (K, D, D), lower Cholesky factors of ``S = (I / nu^2 + G / M)^{-1}`` for the
    Gram matrices ``G = sum_i x~_i x~_i^T`` of ``K`` components (``gram`` (K, D, D)), in
    float64 NumPy (see :func:`contrast_whitening`)."""
    gram = np.asarray(gram, np.float64)
    precision = np.eye(gram.shape[-1]) / prior_scale**2 + gram / n_classes
    return np.linalg.cholesky(np.linalg.inv(precision))


def contrast_whitening(factor, n_classes: int, prior_scale):
    """``T`` (M D, M D) with ``T T^T`` the inverse Hessian of ``U_k`` at ``beta = 0``.

    There ``softmax = 1/M`` and the Hessian is ``I / nu^2 + (1/M) P ⊗ G`` with
    ``G = sum_i x~_i x~_i^T`` and ``P = I - 1 1^T / M`` the projection onto the contrasts
    between classes. ``P`` and ``Q = 1 1^T / M`` are complementary projections, so the
    inverse is ``Q ⊗ nu^2 I + P ⊗ S`` with ``S = (I / nu^2 + G / M)^{-1}``, and
    ``T = Q ⊗ nu I + P ⊗ L`` is a square root of it, ``factor`` being ``L`` (``S = L L^T``,
    :func:`contrast_factors`). Rows of ``beta`` flatten class-major (``beta.ravel()``).
    The softmax's curvature is largest at ``beta = 0`` for two classes, so the posterior
    is then at least as wide as ``T`` says.
    """
    dtype = factor.dtype
    Q = jnp.full((n_classes, n_classes), 1.0 / n_classes, dtype)
    P = jnp.eye(n_classes, dtype=dtype) - Q
    return jnp.kron(Q, prior_scale * jnp.eye(factor.shape[0], dtype=dtype)) + jnp.kron(P, factor)
