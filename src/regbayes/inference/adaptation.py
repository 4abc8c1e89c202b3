"""Warm-up adaptation of the driver: the whitening transform estimated from warm-up draws."""
from __future__ import annotations

import numpy as np

# Positions with more coordinates get a diagonal transform (``dense_transform_max``). A dense P x P covariance from
# the few hundred warm-up draws of a window is poorly determined for large P, and its two
# matvecs per step cost O(P^2); on a 20-class fit (P = 400) the diagonal transform mixed far
# better in less time (CHANGELOG.md, "dense or diagonal whitening").
DENSE_TRANSFORM_MAX = 64


def estimate_transform(positions, dense: bool):
    """Whitening transform ``T`` (``T T^T`` = regularised covariance) from warm-up draws.

    ``positions`` has shape (chain, draw, *position_shape); chains are pooled. The
    covariance is shrunk towards a multiple of the identity as in Stan's window
    adaptation: ``n/(n+5) Sigma + 1e-3 * 5/(n+5) * mean(diag Sigma) I``.
    """
    flat = np.asarray(positions, dtype=np.float64).reshape(-1, int(np.prod(positions.shape[2:])))
    n = flat.shape[0]
    centred = flat - flat.mean(axis=0)
    var = np.mean(centred**2, axis=0)
    scale = max(float(var.mean()), 1e-300)
    w = n / (n + 5.0)
    if not dense:
        return np.sqrt(w * var + (1 - w) * 1e-3 * scale)
    cov = centred.T @ centred / max(n - 1, 1)
    cov = w * cov + (1 - w) * 1e-3 * scale * np.eye(flat.shape[1])
    try:
        return np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        return np.diag(np.sqrt(np.diag(cov)))
