"""Gibbs kernel with data augmentation for the Bayesian linear SVM: model-specific conditionals
that follow the sampler protocol (Polson & Scott 2011; paper 001, eqs. 12, 17 and 18 for one component).

Paper 000 writes the pseudo-likelihood as ``psi = exp(-c (l - y eta^T x)_+)``; paper 001
as ``phi = exp(-2 c' (zeta)_+)``, so ``c' = c / 2``. With ``zeta_i = l - y_i eta^T x_i``:

    omega_i^{-1} | eta ~ IG(1 / (c' |zeta_i|), 1)                                    (eq. 17)
    eta | omega      ~ N(Lambda b, Lambda),                                          (eq. 18)
        Lambda^{-1} = I / nu^2 + c'^2 sum_i x_i x_i^T / omega_i,
        b           = c' sum_i y_i (omega_i + c' l) / omega_i x_i.

Multi-class is one-vs-rest: K independent binary posteriors (class k against the rest),
sampled side by side; the position then has shape (K, d).

The exact conditional needs the d x d precision and its Cholesky factor, O(n d^2 + d^3)
per sweep: run it in float64 (the estimator does so inside a local x64 block).
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..potentials import features
from ..potentials.linear_svm import SVMData, value_and_subgrad
from ..samplers.augmentation import inverse_gaussian
from ..samplers.base import SamplingAlgorithm, StepInfo


class GibbsSVMState(NamedTuple):
    position: jnp.ndarray
    inv_omega: jnp.ndarray


def binary_sweep(key, eta, X, y, C, margin, prior_scale):
    """One sweep for a binary problem: omega | eta, then eta | omega. ``X`` dense."""
    c = 0.5 * C  # paper 001's c' (see module docstring)
    k_omega, k_eta = jax.random.split(key)
    zeta = margin - y * (X @ eta)
    abs_zeta = jnp.maximum(jnp.abs(zeta), jnp.finfo(X.dtype).tiny ** 0.5)  # guard zeta = 0
    inv_omega = inverse_gaussian(k_omega, 1.0 / (c * abs_zeta), 1.0)
    d = X.shape[1]
    precision = jnp.eye(d, dtype=X.dtype) / prior_scale**2 + c**2 * (X.T * inv_omega) @ X
    b = c * X.T @ (y * (1.0 + c * margin * inv_omega))
    chol = jnp.linalg.cholesky(precision)
    mean = jax.scipy.linalg.cho_solve((chol, True), b)
    z = jax.random.normal(k_eta, (d,), X.dtype)
    eta_new = mean + jax.scipy.linalg.solve_triangular(chol.T, z, lower=False)
    return eta_new, inv_omega


@functools.lru_cache(maxsize=None)
def gibbs_svm() -> SamplingAlgorithm:
    """Build the augmented Gibbs kernel for :class:`~regbayes.potentials.linear_svm.SVMData`.

    ``step_size`` is ignored (the sampler has none). Sparse inputs are densified: the
    precision matrix is dense anyway.
    """

    def init(key, position, data: SVMData):
        del key
        n = data.y.shape[0]
        shape = (n,) if position.ndim == 1 else (position.shape[0], n)
        return GibbsSVMState(position, jnp.ones(shape, position.dtype))

    def step(key, state, data: SVMData, step_size):
        del step_size
        X = features.to_dense(data.X)
        if state.position.ndim == 1:
            eta, inv_omega = binary_sweep(key, state.position, X, data.y, data.C, data.margin, data.prior_scale)
            u, _ = value_and_subgrad(eta, data)
        else:
            n_classes = state.position.shape[0]
            y_ovr = jnp.where(data.y[None, :] == jnp.arange(n_classes)[:, None], 1.0, -1.0).astype(X.dtype)
            keys = jax.random.split(key, n_classes)
            sweep = jax.vmap(binary_sweep, in_axes=(0, 0, None, 0, None, None, None))
            eta, inv_omega = sweep(keys, state.position, X, y_ovr, data.C, data.margin, data.prior_scale)
            binary = SVMData(data.X, y_ovr, data.C, data.margin, data.prior_scale)
            u = jnp.sum(jax.vmap(lambda e, yy: value_and_subgrad(e, binary._replace(y=yy))[0])(eta, y_ovr))
        info = StepInfo(u, jnp.ones((), u.dtype), jnp.asarray(data.y.shape[0]))
        return GibbsSVMState(eta, inv_omega), info

    return SamplingAlgorithm(init, step, "gibbs")
