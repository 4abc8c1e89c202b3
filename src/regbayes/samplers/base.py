"""The protocol shared by every kernel and every model potential."""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax.numpy as jnp
import numpy as np

from ..potentials.base import Potential  # noqa: F401  (the kernels' input, defined with the models' math)


class StepInfo(NamedTuple):
    """A generic per-step record for kernels with nothing of their own to report:
    potential (exact or minibatch estimate), acceptance probability, data rows evaluated."""

    potential: jnp.ndarray
    acceptance: jnp.ndarray
    n_evaluated: jnp.ndarray


#: How the driver condenses an ``info`` field over the ``thin`` steps behind a kept draw:
#: ``"mean"`` (averaged over them) or ``"sum"`` (added up). Every other field is the value
#: of the kept step itself.
THIN_REDUCTIONS = {"acceptance": "mean", "n_evaluated": "sum"}


class SamplingAlgorithm(NamedTuple):
    """``init(key, position, data) -> state``; ``step(key, state, data, step_size) -> (state, info)``.

    ``info`` is the kernel's own NamedTuple of scalars or small arrays (its potential,
    acceptance probability, thermostat, rows evaluated, ...); the driver records every
    field per kept draw, condensed over the thinned steps by :data:`THIN_REDUCTIONS`. A
    field that is a NumPy constant (:func:`is_fixed`: the same at every step, e.g. a
    fixed minibatch size) is recorded once rather than per draw. ``name`` labels the
    kernel in diagnostics and error messages. ``adapt(state, T)``, where defined, installs
    the linear reparameterisation ``theta = theta_0 + T u`` (see :func:`transform_apply`);
    kernels without one (exact Gibbs) leave it ``None``.
    """

    init: Callable[..., Any]
    step: Callable[..., Any]
    name: str
    adapt: Callable[..., Any] | None = None


def nan_like(x):
    """A NaN of ``x``'s dtype, as a constant: the driver sees that it never changes."""
    return np.full((), np.nan, dtype=jnp.result_type(x))


def fixed_count(n: int):
    """``n`` as a constant of JAX's default integer dtype (for an ``n_evaluated`` field).

    A kernel that evaluates the same number of rows every step reports it this way, so
    that the driver can multiply instead of adding it up step by step.
    """
    if isinstance(n, (int, np.integer)):
        return np.asarray(n, dtype=jnp.result_type(int))
    return jnp.asarray(n)  # traced (a count that depends on the data)


def is_fixed(x) -> bool:
    """Whether an ``info`` field is a constant (NumPy) rather than a traced value."""
    return isinstance(x, (np.ndarray, np.generic))


# --- Linear reparameterisation shared by the kernels -------------------------------
#
# Every gradient kernel runs in whitened coordinates u with theta = theta_0 + T u, so
# that a posterior with covariance Sigma = T T^T looks isotropic with unit scale and a
# dimensionless step size fits every data set. The potential's subgradient maps as
# dU/du = T^T dU/dtheta. ``T`` is a lower-triangular (P, P) matrix or, for large P, a
# vector (diagonal). The driver estimates it during warm-up (see driver.sample) and
# installs it with ``kernel.adapt(state, T)``; kernels start from the identity.


def identity_transform(position):
    return jnp.ones((position.size,), position.dtype)


def transform_apply(T, v):
    """``T v`` for ``v`` shaped like a position (any shape; T acts on its flattening)."""
    if T.ndim == 1:
        return (T * v.ravel()).reshape(v.shape)
    return (T @ v.ravel()).reshape(v.shape)


def transform_apply_t(T, g):
    """``T^T g``: a subgradient in theta mapped to the whitened coordinates."""
    if T.ndim == 1:
        return (T * g.ravel()).reshape(g.shape)
    return (T.T @ g.ravel()).reshape(g.shape)
