"""Potential of one mixture component's linear SVM (paper 000, section 4.2, Algorithm 2; the
eta | z conditional of paper 001's Gibbs iSVM, eq. 11 restricted to one component).

Component ``k`` of the Dirichlet-process mixture of SVMs owns the rows ``i`` with
``z_i = k``; given the assignments its classifier ``eta_k`` has the potential

    U_k(eta) = ||eta||^2 / (2 nu^2) + C sum_{i: z_i = k} (l - y_i eta^T x~_i)_+

with the binary hinge of :mod:`regbayes.potentials.linear_svm` (one one-vs-rest problem,
``eta`` of shape (D,), ``y_i`` = +1/-1), or, with ``eta`` of shape (M, D) and ``y_i`` the
class code, the multi-class hinge of paper 000, eqs. 24 and 26,

    U_k(eta) = ||eta||^2 / (2 nu^2) + C sum_{i: z_i = k} max_m (l Delta(y_i, m) + f_m - f_{y_i}),

``f_m = eta_m^T x~_i``, ``Delta(y, m) = 1 - [m = y]``: the Crammer–Singer hinge
``max(0, l + max_{m != y} f_m - f_y)``, whose subgradient (eq. 21 with the component's
rows) is ``C x~_i`` on the runner-up row ``y*`` and ``-C x~_i`` on row ``y_i`` where the
hinge is active, 0 at the kink. Its minibatch estimate (paper 000, eq. 29) draws ``D~`` of ``batch_size`` rows with
replacement among the component's members and scales the hinge sum by ``n_k / |D~|``;
eq. 29 draws ``D~`` from all the data and keeps the members, scaling by ``|D| / |D~|``: the
same expectation, but a small component would then see almost no rows per step.

The rows of every component live in one array: ``members`` lists row indices grouped by
component (:func:`group_members`), so that the shapes do not depend on the partition.

:func:`component_whitening` gives the linear reparameterisation ``eta = T_k u`` of the
stochastic-gradient kernels (:mod:`regbayes.samplers.base`) for each component, from
the Gaussian analogue of its posterior covariance, and :func:`block_whitening` its
block-diagonal extension to a multi-class classifier.

The multi-class hinge sees only the differences of ``eta``'s rows. With ``Q`` (M, M-1) an
orthonormal basis of the vectors whose entries sum to 0 (:func:`sum_zero_basis`),
``eta = 1 s^T + Q Z`` splits the prior as ``||eta||^2 = M ||s||^2 + ||Z||^2``, so the row
mean ``s`` has the posterior ``N(0, nu^2 / M I)`` whatever the data, independently of
``Z`` (M-1, D), whose potential is :func:`sum_zero_potential`.
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from . import linear_svm
from .hinge import binary_hinge, crammer_singer_hinge
from .minibatch import rows_with_replacement
from .base import Potential


class ComponentRows(NamedTuple):
    """One component's rows for one classifier.

    ``members`` lists row indices grouped by component; the component's rows are
    ``members[start : start + count]``. ``y`` holds +1/-1 for every row (one one-vs-rest
    problem, ``eta`` (D,)) or the class codes (multi-class hinge, ``eta`` (M, D)).
    """

    X: jnp.ndarray
    y: jnp.ndarray
    members: jnp.ndarray
    start: jnp.ndarray
    count: jnp.ndarray
    C: jnp.ndarray
    margin: jnp.ndarray
    prior_scale: jnp.ndarray


def group_members(z, counts):
    """``(members, starts)``: row indices sorted by component (stable) and the offset of
    each slot's rows in that order, for ``z`` (n,) and the slot sizes ``counts`` (K,)."""
    # a stable integer sort of small keys is a radix sort
    members = np.argsort(z.astype(np.int32 if counts.shape[0] > 2**15 else np.int16), kind="stable")
    starts = np.cumsum(counts) - counts
    return members, starts


def _svm_rows(data: ComponentRows, idx):
    return linear_svm.SVMData(data.X[idx], data.y[idx], data.C, data.margin, data.prior_scale)


def _prior_terms(eta, data):
    return 0.5 * jnp.sum(eta**2) / data.prior_scale**2, eta / data.prior_scale**2


def _member_rows(data: ComponentRows):
    """All rows in ``members`` order with a mask of the component's own."""
    r = jnp.arange(data.members.shape[0])
    inside = (r >= data.start) & (r < data.start + data.count)
    return data.members, inside


def value_and_subgrad(eta, data: ComponentRows):
    """Exact ``U_k(eta)`` and its subgradient (binary hinge for ``eta`` (D,), multi-class
    hinge for ``eta`` (M, D)); rows outside the component are masked out."""
    rows, inside = _member_rows(data)
    X = data.X[rows]
    f = linear_svm.discriminant(eta, X)
    hinge = binary_hinge if eta.ndim == 1 else crammer_singer_hinge
    loss, dloss = hinge(f, data.y[rows], data.C, data.margin)
    dloss = jnp.where(inside.reshape(inside.shape + (1,) * (dloss.ndim - 1)), dloss, 0.0)
    u_prior, g_prior = _prior_terms(eta, data)
    return jnp.sum(jnp.where(inside, loss, 0.0)) + u_prior, (X.T @ dloss).T + g_prior


def log_lik_terms(eta, data: ComponentRows, idx):
    """``log psi_i(eta) = -C hinge_i(eta)`` for positions ``idx`` of ``members`` (0 for rows
    outside the component)."""
    rows, inside = _member_rows(data)
    return jnp.where(inside[idx], linear_svm.log_lik_terms(eta, _svm_rows(data, rows), idx), 0.0)


@functools.lru_cache(maxsize=None)
def component_potential(batch_size: int) -> Potential:
    """The :class:`~regbayes.samplers.base.Potential` of one component's classifier with
    the minibatch estimate of eq. 29 taken over the component's members (``n_k / |D~|``
    scaling; see the module docstring). Cached per ``batch_size`` so that kernels built
    on it are the same object from fit to fit."""

    def stochastic_value_and_subgrad(key, eta, data: ComponentRows):
        j = rows_with_replacement(key, data.count, batch_size)
        idx = data.members[data.start + j]
        u_batch, g_batch = linear_svm.value_and_subgrad(eta, _svm_rows(data, idx))
        u_prior, g_prior = _prior_terms(eta, data)
        scale = data.count.astype(eta.dtype) / batch_size
        return scale * (u_batch - u_prior) + u_prior, scale * (g_batch - g_prior) + g_prior

    return Potential(
        value_and_subgrad=value_and_subgrad,
        stochastic_value_and_subgrad=stochastic_value_and_subgrad,
        log_prior=lambda eta, data: -_prior_terms(eta, data)[0],
        log_lik_terms=log_lik_terms,
        n_data=lambda data: data.members.shape[0],
        batch_size=batch_size,
    )


def sum_zero_basis(n_rows: int) -> np.ndarray:
    """``Q`` (M, M-1): an orthonormal basis of the M-vectors whose entries sum to 0 (the
    Helmert contrasts, normalised): ``Q^T Q = I`` and ``Q Q^T = I - 1 1^T / M``."""
    M = int(n_rows)
    Q = np.zeros((M, M - 1))
    for j in range(1, M):
        Q[:j, j - 1] = 1.0
        Q[j, j - 1] = -float(j)
        Q[:, j - 1] /= math.sqrt(j * (j + 1))
    return Q


@functools.lru_cache(maxsize=None)
def sum_zero_potential(batch_size: int, n_rows: int) -> Potential:
    """:func:`component_potential` of a multi-class classifier of ``n_rows`` = M rows in
    its sum-zero coordinates ``Z`` (M-1, D), ``eta = Q Z`` (:func:`sum_zero_basis`):

        U(Z) = U_k(Q Z),   dU/dZ = Q^T dU_k/deta.

    ``U(Z) = ||Z||^2 / (2 nu^2) + C sum hinge_i(Q Z)`` is the posterior of ``Z`` with the
    row mean integrated out (module docstring). Cached per ``(batch_size, n_rows)``."""
    base = component_potential(batch_size)
    Q = sum_zero_basis(n_rows)

    def value_and_subgrad_z(Z, data):
        u, g = base.value_and_subgrad(jnp.asarray(Q, Z.dtype) @ Z, data)
        return u, jnp.asarray(Q.T, Z.dtype) @ g

    def stochastic_value_and_subgrad_z(key, Z, data):
        u, g = base.stochastic_value_and_subgrad(key, jnp.asarray(Q, Z.dtype) @ Z, data)
        return u, jnp.asarray(Q.T, Z.dtype) @ g

    return Potential(
        value_and_subgrad=value_and_subgrad_z,
        stochastic_value_and_subgrad=stochastic_value_and_subgrad_z,
        log_prior=lambda Z, data: base.log_prior(jnp.asarray(Q, Z.dtype) @ Z, data),
        log_lik_terms=lambda Z, data, idx: base.log_lik_terms(jnp.asarray(Q, Z.dtype) @ Z, data, idx),
        n_data=base.n_data,
        batch_size=batch_size,
    )


def component_whitening(counts, means, chols, prior_dof, x_offset, intercept_scaling, C, prior_scale):
    """Per slot, the lower Cholesky factor ``T_k`` of ``(I / nu^2 + C n_k E_k[x~ x~^T])^{-1}``.

    It is the Gaussian analogue of the classifier's posterior covariance (every hinge
    active), with the members' second moments ``E_k[x~ x~^T]`` read from the component's
    NIW posterior (``counts``, ``means``, ``chols`` of its scale matrix, ``prior_dof``)
    rather than from a pass over the rows: ``x~ = (x - xbar, s)`` has mean
    ``a = m_k - xbar`` and covariance ``E[Sigma_k] = Psi_k / (nu_k - d - 1)``. Within a
    component the centred features share a large offset ``a``, so an isotropic scale
    would fit the offset direction and crawl along the others. Empty slots get ``nu I``.
    Returns (K, D, D) with ``D = d + 1``.
    """
    K, d = means.shape
    D = d + 1
    s = float(intercept_scaling)
    out = np.broadcast_to(prior_scale * np.eye(D), (K, D, D)).copy()
    active = np.flatnonzero(counts)
    n_k = counts[active].astype(np.float64)
    L = chols[active]
    cov = L @ np.swapaxes(L, 1, 2) / (prior_dof + n_k - d - 1)[:, None, None]
    a = means[active] - x_offset
    moment = np.empty((len(active), D, D))
    moment[:, :d, :d] = cov + a[:, :, None] * a[:, None, :]
    moment[:, :d, d] = moment[:, d, :d] = s * a
    moment[:, d, d] = s * s
    precision = np.eye(D) / prior_scale**2 + C * n_k[:, None, None] * moment
    out[active] = np.linalg.cholesky(np.linalg.inv(precision))
    return out


def block_whitening(transforms, n_rows):
    """``I_R (x) T_k`` per slot: the whitening of ``n_rows`` = R rows of D coordinates
    (flattened row by row) with the factor ``T_k`` (K, D, D) for every row. For the
    sum-zero coordinates ``Z = Q^T eta`` of a classifier of M rows, ``R = M - 1``: the
    factor ``I_M (x) T_k`` on ``eta`` restricted to the span of ``Q``, since
    ``(Q (x) I)^T (I_M (x) T_k) (Q (x) I) = I_{M-1} (x) T_k``.

    For the multi-class hinge the factor is computed by :func:`component_whitening` with
    ``C`` replaced by ``2 C / M``: an active hinge of row ``i`` touches two of the M rows
    (``y_i`` and the runner-up ``y*``, eq. 21), so a row sees about ``2 n_k / M`` of the
    component's hinges rather than all ``n_k`` as a one-vs-rest problem does. The factor
    only preconditions the sampler; the target does not depend on it.
    Returns (K, R D, R D).
    """
    K, D, _ = transforms.shape
    out = np.zeros((K, n_rows, D, n_rows, D), transforms.dtype)
    for m in range(n_rows):
        out[:, m, :, m, :] = transforms
    return out.reshape(K, n_rows * D, n_rows * D)
