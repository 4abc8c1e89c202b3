"""The three convex functions of RegBayes' max-margin regularisers and their conjugates
(paper 002, section 3.3, Lemmas 9-11, proofs in Appendix C.2-C.4).

The convex conjugate (Definition 3) is ``g*(mu) = sup_x (<mu, x> - g(x))``. With the
expectation operator of Theorem 6 these give the dual problems solved in
:mod:`regbayes.core.duals`:

* ``g0(x) = C max(0, x)``,             ``g0*(mu) = I(0 <= mu <= C)``                 (Lemma 9);
* ``g1(x) = C max_i x_i``,             ``g1*(mu) = I(mu >= 0, sum_i mu_i = C)``      (Lemma 10, eq. 8);
* ``g2(x; y, eps) = C max(0, |x - y| - eps)``,
  ``g2*(mu; y, eps) = mu y + eps |mu| + I(|mu| <= C)``                              (Lemma 11).

``I(.)`` is the indicator of convex analysis: 0 where the condition holds, ``+inf``
elsewhere. The indicators here accept points outside the set by at most ``feasibility_tol``
(absolute), so that the output of a floating-point solver is not declared infeasible by
rounding. All functions are plain vectorised NumPy: scalars and arrays broadcast.
"""
from __future__ import annotations

import numpy as np

from ..validation import check_real

__all__ = ["g0", "g0_conjugate", "g1", "g1_conjugate", "g2", "g2_conjugate"]


def _scale(C):
    return check_real("C", C, low=0.0)


def _tol(feasibility_tol):
    return check_real("feasibility_tol", feasibility_tol, low=0.0)


def g0(x, C=1.0):
    """``g0(x) = C max(0, x)`` (Lemma 9): the binary hinge ``C (1 - y f)_+`` as a function of
    ``x = 1 - y f``. Elementwise."""
    C = _scale(C)
    return C * np.maximum(0.0, np.asarray(x, dtype=float))


def g0_conjugate(mu, C=1.0, *, feasibility_tol=1e-12):
    """``g0*(mu) = I(0 <= mu <= C)`` (Lemma 9, proof in Appendix C.2): 0 on ``[0, C]``,
    ``+inf`` elsewhere. Elementwise."""
    C, tol = _scale(C), _tol(feasibility_tol)
    mu = np.asarray(mu, dtype=float)
    inside = (mu >= -tol) & (mu <= C + tol)
    return np.where(inside, 0.0, np.inf)


def g1(x, C=1.0):
    """``g1(x) = C max(x_1, ..., x_L)`` (eq. 8): the Crammer–Singer hinge as a function of
    ``x_y = l(y) - (f_{y_n} - f_y)``. Reduces the last axis of ``x``."""
    C = _scale(C)
    x = np.asarray(x, dtype=float)
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError(f"x must have a non-empty last axis (the L coordinates), got shape {x.shape}")
    return C * np.max(x, axis=-1)


def g1_conjugate(mu, C=1.0, *, feasibility_tol=1e-12):
    """``g1*(mu) = I(mu_i >= 0 for all i, sum_i mu_i = C)`` (Lemma 10, proof in Appendix
    C.3): 0 on the simplex scaled by ``C``, ``+inf`` elsewhere. Reduces the last axis of
    ``mu``; the sum may miss ``C`` by ``feasibility_tol * max(1, C)``."""
    C, tol = _scale(C), _tol(feasibility_tol)
    mu = np.asarray(mu, dtype=float)
    if mu.ndim == 0 or mu.shape[-1] == 0:
        raise ValueError(f"mu must have a non-empty last axis (the L coordinates), got shape {mu.shape}")
    inside = np.all(mu >= -tol, axis=-1) & (np.abs(np.sum(mu, axis=-1) - C) <= tol * max(1.0, C))
    return np.where(inside, 0.0, np.inf)


def g2(x, y, epsilon, C=1.0):
    """``g2(x; y, eps) = C max(0, |x - y| - eps)`` (Lemma 11): the epsilon-insensitive loss
    of the prediction ``x`` for the target ``y``. Elementwise (``x``, ``y`` broadcast)."""
    C = _scale(C)
    epsilon = check_real("epsilon", epsilon, low=0.0)
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return C * np.maximum(0.0, np.abs(x - y) - epsilon)


def g2_conjugate(mu, y, epsilon, C=1.0, *, feasibility_tol=1e-12):
    """``g2*(mu; y, eps) = mu y + eps |mu| + I(|mu| <= C)`` (Lemma 11, proof in Appendix C.4).

    The proof's last step sets ``alpha = |mu|``, which is the minimiser for ``eps >= 0``
    (the paper says "positive"; ``eps = 0`` is included). Elementwise."""
    C, tol = _scale(C), _tol(feasibility_tol)
    epsilon = check_real("epsilon", epsilon, low=0.0)
    mu, y = np.asarray(mu, dtype=float), np.asarray(y, dtype=float)
    value = mu * y + epsilon * np.abs(mu)
    return np.where(np.abs(mu) <= C + tol, value, np.inf)
