"""The Gibbs-classifier posterior of a user's own JAX model (paper 000, section 3.3, eqs. 7
and 15; paper 002, Theorem 6).

RegBayes with the expected hinge loss of a Gibbs classifier as posterior regulariser has
the solution ``q(theta) ∝ p0(theta) p(D | theta) prod_n exp(-c max(0, l - y_n f(x_n; theta)))``
(the pseudo-likelihood of eq. 15 of paper 000; Theorem 6 of paper 002 with the constraint
features taken inside the expectation). Its potential is

    U(theta) = -log p0(theta) - sum_n log p(x_n, y_n | theta) + c sum_n max(0, l - y_n f(x_n; theta))

for any discriminant ``f``. :func:`gibbs_posterior` builds it as a
:class:`regbayes.potentials.base.Potential`, so that every gradient kernel of
:mod:`regbayes.samplers` samples it through :func:`regbayes.inference.sample`; this
generalises :class:`regbayes.BayesianSVC` (linear ``f``, Gaussian prior, no likelihood)
to non-linear discriminants and extra likelihood terms.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..potentials.base import Potential
from ..potentials.hinge import binary_hinge
from ..potentials.minibatch import rows_with_replacement
from ..validation import check_int, check_real

__all__ = ["GibbsData", "GibbsPosterior", "gibbs_posterior"]


class GibbsData(NamedTuple):
    """The data of a Gibbs-classifier potential, passed to the kernels as a jit argument
    (not closed over): features ``X`` (n, ...), labels ``y`` in {-1, +1} (n,), and the
    hyper-parameters ``C`` (c) and ``margin`` (l) as arrays, so that changing them
    reuses the compiled sampler."""

    X: jnp.ndarray
    y: jnp.ndarray
    C: jnp.ndarray
    margin: jnp.ndarray


class GibbsPosterior(NamedTuple):
    """What :func:`gibbs_posterior` returns: the ``potential`` for a kernel and the ``data``
    to hand to :func:`regbayes.inference.sample` with it."""

    potential: Potential
    data: GibbsData


def _check_labels(y, n):
    y = np.asarray(y)
    if y.shape != (n,):
        raise ValueError(f"y must have shape ({n},) to match X, got {y.shape}")
    if y.dtype.kind not in "iuf" or not np.all((y == 1) | (y == -1)):
        raise ValueError("y must hold only +1 and -1 (binary labels); encode the classes first")
    return y


def gibbs_posterior(discriminant: Callable, log_prior: Callable, X, y, *, C=1.0, margin=1.0,
                    log_likelihood: Callable | None = None, batch_size: int | None = None,
                    dtype=np.float32) -> GibbsPosterior:
    """Potential of the Gibbs-classifier posterior of a user's model::

        U(theta; D) = -log_prior(theta) - sum_n log_likelihood(theta, x_n, y_n)
                      + C sum_n max(0, margin - y_n discriminant(theta, x_n)),

    and its minibatch estimate (eq. 7 of paper 000): the data terms of ``b = batch_size``
    rows drawn uniformly with replacement
    (:func:`regbayes.potentials.minibatch.rows_with_replacement`), scaled by ``n / b``;
    the prior is not scaled. ``batch_size=None`` (or ``>= n``) uses every row.

    The hinge's subgradient is written explicitly (:func:`regbayes.potentials.hinge.binary_hinge`:
    ``-C y_n`` where ``margin - y_n f_n > 0`` and 0 otherwise, so 0 at the kink
    ``y_n f_n = margin``) and carried back through ``discriminant`` by its vector-Jacobian
    product; the prior's and the likelihood's gradients are ``jax.grad``'s. (``jax.grad``
    of ``jnp.maximum(0, .)`` would give half the slope at the kink.)

    Parameters
    ----------
    discriminant : ``(theta, X_batch) -> f`` of shape (b,), differentiable in ``theta``
        (a JAX function; ``X_batch`` is a (b, ...) slice of ``X``).
    log_prior : ``theta -> log p0(theta)`` (a scalar, up to a constant).
    X : (n, ...) array of inputs; y : (n,) labels in {-1, +1}.
    C : the scale ``c > 0`` of the hinge pseudo-likelihood; margin : ``l >= 0``.
    log_likelihood : optional ``(theta, X_batch, y_batch) -> (b,)`` log-likelihood terms.
    batch_size : rows per stochastic estimate (None: all rows).
    dtype : float dtype of ``X`` and the hyper-parameters in the data (float32 by default;
        float64 needs :func:`regbayes.precision.enable_x64` around the sampling).

    Returns
    -------
    GibbsPosterior(potential, data). Positions ``theta`` are arrays (any fixed shape; a
    pytree of parameters can be flattened with ``jax.flatten_util.ravel_pytree``).

    Example
    -------
    A quadratic discriminant on two concentric circles, sampled by SSGLD::

        import jax, jax.numpy as jnp, numpy as np
        from regbayes.core import gibbs_posterior
        from regbayes.inference import sample
        from regbayes.rng import make_key
        from regbayes.samplers import ssgld

        rng = np.random.default_rng(0)
        radius = np.where(rng.random(400) < 0.5, 1.0, 2.0)
        angle = rng.uniform(0, 2 * np.pi, 400)
        X = np.c_[radius * np.cos(angle), radius * np.sin(angle)] + 0.2 * rng.normal(size=(400, 2))
        y = np.where(radius > 1.5, 1.0, -1.0)

        def discriminant(theta, X):  # f = theta . (x1, x2, x1^2, x2^2, x1 x2, 1)
            feats = jnp.stack([X[:, 0], X[:, 1], X[:, 0] ** 2, X[:, 1] ** 2,
                               X[:, 0] * X[:, 1], jnp.ones(X.shape[0])], axis=1)
            return feats @ theta

        def log_prior(theta):  # N(0, 10^2 I)
            return -0.5 * jnp.sum(theta**2) / 10.0**2

        post = gibbs_posterior(discriminant, log_prior, X, y, C=1.0, batch_size=50)
        result = sample(ssgld(post.potential, "adagrad"), post.data, jnp.zeros((2, 6)),
                        make_key(0), n_warmup=1000, n_draws=500, step_size=0.5)
        thetas = result.positions.reshape(-1, 6)  # (chains * draws, 6)
        votes = np.mean(np.sign(jax.vmap(discriminant, (0, None))(thetas, X)), axis=0)
        accuracy = np.mean(np.where(votes >= 0, 1.0, -1.0) == y)  # the Gibbs classifier's vote
    """
    if not callable(discriminant):
        raise TypeError(f"discriminant must be a function (theta, X_batch) -> f, got {type(discriminant).__name__}")
    if not callable(log_prior):
        raise TypeError(f"log_prior must be a function theta -> scalar, got {type(log_prior).__name__}")
    if log_likelihood is not None and not callable(log_likelihood):
        raise TypeError(f"log_likelihood must be None or a function (theta, X_batch, y_batch) -> (b,), "
                        f"got {type(log_likelihood).__name__}")
    X_np = np.asarray(X)
    if X_np.ndim < 1 or X_np.shape[0] == 0:
        raise ValueError(f"X must have at least one row, got shape {X_np.shape}")
    if X_np.dtype.kind not in "iuf" or not np.all(np.isfinite(X_np)):
        raise ValueError("X must be a finite numeric array (no NaN or infinity)")
    n = X_np.shape[0]
    y_np = _check_labels(y, n)
    C = check_real("C", C, low=0.0, low_inclusive=False)
    margin = check_real("margin", margin, low=0.0)
    if batch_size is not None:
        batch_size = check_int("batch_size", batch_size, minimum=1)
    dtype = np.dtype(dtype)
    data = GibbsData(jnp.asarray(X_np, dtype), jnp.asarray(y_np, dtype), jnp.asarray(C, dtype), jnp.asarray(margin, dtype))
    return GibbsPosterior(_build(discriminant, log_prior, log_likelihood, batch_size), data)


def _build(discriminant, log_prior, log_likelihood, batch_size) -> Potential:
    prior_value_and_grad = jax.value_and_grad(log_prior)

    def data_terms(theta, X, y, C, margin):
        """Sum over rows of ``c hinge - log lik`` and its subgradient in ``theta``."""
        f, pullback = jax.vjp(lambda t: discriminant(t, X), theta)
        loss, dloss = binary_hinge(f, y, C, margin)  # explicit subgradient in f (0 at the kink)
        (grad,) = pullback(dloss.astype(f.dtype))
        value = jnp.sum(loss)
        if log_likelihood is not None:
            ll, dll = jax.value_and_grad(lambda t: jnp.sum(log_likelihood(t, X, y)))(theta)
            value, grad = value - ll, grad - dll
        return value, grad

    def value_and_subgrad(theta, data: GibbsData):
        value, grad = data_terms(theta, data.X, data.y, data.C, data.margin)
        lp, dlp = prior_value_and_grad(theta)
        return value - lp, grad - dlp

    def stochastic_value_and_subgrad(key, theta, data: GibbsData):
        n = data.y.shape[0]
        if batch_size is None or batch_size >= n:
            return value_and_subgrad(theta, data)
        idx = rows_with_replacement(key, n, batch_size)
        value, grad = data_terms(theta, data.X[idx], data.y[idx], data.C, data.margin)
        scale = n / batch_size  # eq. 7
        lp, dlp = prior_value_and_grad(theta)
        return scale * value - lp, scale * grad - dlp

    def prior(theta, data: GibbsData):
        return log_prior(theta)

    def log_lik_terms(theta, data: GibbsData, idx):
        """Per-datum ``log psi_n = -c hinge_n + log p(x_n, y_n | theta)`` for rows ``idx``."""
        X, y = data.X[idx], data.y[idx]
        loss, _ = binary_hinge(discriminant(theta, X), y, data.C, data.margin)
        terms = -loss
        if log_likelihood is not None:
            terms = terms + log_likelihood(theta, X, y)
        return terms

    def n_data(data: GibbsData) -> int:
        return data.y.shape[0]

    return Potential(
        value_and_subgrad=value_and_subgrad,
        stochastic_value_and_subgrad=stochastic_value_and_subgrad,
        log_prior=prior,
        log_lik_terms=log_lik_terms,
        n_data=n_data,
        batch_size=batch_size,
    )
