"""Hinge losses with explicit subgradients.

Binary (paper 000, eq. 15): the pseudo-likelihood is
``psi(y | f) = exp(-c * max(0, l - y f))`` and

    d/df [c * max(0, l - y f)] = -c y   if l - y f > 0,   0 otherwise.

Multi-class, Crammer–Singer (paper 000, eqs. 16–17, 20–21): with ``f_k = eta_k^T x``
and ``y* = argmax_{k != y} f_k``, the loss is ``c * max(0, l + f_{y*} - f_y)`` and its
subgradient is ``+c`` on ``f_{y*}``, ``-c`` on ``f_y`` when the hinge is active.

At the kink (``l - y f == 0``) the subgradient 0 is chosen, explicitly: ``jax.grad`` of
``jnp.maximum`` would split the tie and return half the slope there.
"""
from __future__ import annotations

import jax.numpy as jnp


def binary_hinge(f, y, C, margin):
    """Per-datum loss ``c (l - y f)_+`` and its subgradient with respect to ``f``.

    ``y`` holds +1/-1. Returns ``(loss, dloss_df)``, both shaped like ``f``.
    """
    zeta = margin - y * f
    active = zeta > 0
    loss = C * jnp.where(active, zeta, 0.0)
    dloss = jnp.where(active, -C * y, 0.0)
    return loss, dloss


def crammer_singer_hinge(F, y, C, margin):
    """Per-datum Crammer–Singer loss and its subgradient with respect to ``F``.

    ``F`` has shape (n, K) (discriminants ``f_k``), ``y`` integer classes in [0, K).
    Returns ``(loss (n,), dloss_dF (n, K))``.
    """
    n_classes = F.shape[1]
    true_onehot = jnp.arange(n_classes)[None, :] == y[:, None]
    f_true = jnp.sum(jnp.where(true_onehot, F, 0.0), axis=1)
    F_other = jnp.where(true_onehot, -jnp.inf, F)
    y_star = jnp.argmax(F_other, axis=1)
    zeta = margin + jnp.max(F_other, axis=1) - f_true
    active = zeta > 0
    loss = C * jnp.where(active, zeta, 0.0)
    star_onehot = jnp.arange(n_classes)[None, :] == y_star[:, None]
    dloss = C * (star_onehot.astype(F.dtype) - true_onehot.astype(F.dtype))
    dloss = jnp.where(active[:, None], dloss, 0.0)
    return loss, dloss
