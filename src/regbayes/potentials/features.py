"""Design matrices inside JAX: dense arrays, or sparse rows in padded (ELL) form.

Text data have 10^4–10^6 features, so a CSR matrix is never densified. Inside
``jit`` it is held as two ``(n_rows, max_nnz)`` arrays — column indices and values,
rows padded with value 0 — so that a minibatch is a plain row gather of static shape
and ``x_i^T w`` is ``sum(values_i * w[indices_i])``.

Both forms support the same three operations, all a potential needs:

* ``take(X, idx)``        rows ``idx`` (a minibatch),
* ``matvec(X, W)``        ``X W`` for ``W`` of shape ``(d,)`` or ``(d, K)``,
* ``rmatvec(X, R)``       ``X^T R`` for ``R`` of shape ``(n,)`` or ``(n, K)``.
"""
from __future__ import annotations

from typing import Union

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp


@jax.tree_util.register_pytree_node_class
class PaddedRows:
    """Sparse rows in ELL form: ``indices`` and ``values`` of shape (n, max_nnz).

    ``n_features`` is static (pytree aux data), so shapes stay known under ``jit``.
    """

    def __init__(self, indices, values, n_features: int):
        self.indices = indices
        self.values = values
        self.n_features = int(n_features)

    @property
    def shape(self):
        return (self.indices.shape[0], self.n_features)

    def tree_flatten(self):
        return (self.indices, self.values), self.n_features

    @classmethod
    def tree_unflatten(cls, n_features, children):
        return cls(*children, n_features)


Design = Union[jnp.ndarray, PaddedRows]


def csr_to_padded(X: sp.spmatrix, dtype=np.float32, intercept: bool = False, width: int | None = None) -> PaddedRows:
    """Convert a SciPy sparse matrix to :class:`PaddedRows` without densifying it.

    With ``intercept=True`` a constant-1 column is appended (column index ``d``). ``width``
    (at least the widest row, intercept included) pads every row to that many entries, so
    that blocks of one data set share a shape.
    """
    X = sp.csr_matrix(X)
    X.sort_indices()
    n, d = X.shape
    nnz_per_row = np.diff(X.indptr)
    widest = int(nnz_per_row.max(initial=0)) + (1 if intercept else 0)
    if width is not None and width < widest:
        raise ValueError(f"width={width} is narrower than the widest row ({widest} entries)")
    width = max(widest, 1) if width is None else width
    indices = np.zeros((n, width), dtype=np.int32)
    values = np.zeros((n, width), dtype=dtype)
    rows = np.repeat(np.arange(n), nnz_per_row)
    slot = np.arange(X.nnz) - np.repeat(X.indptr[:-1], nnz_per_row)
    indices[rows, slot] = X.indices
    values[rows, slot] = X.data
    if intercept:
        indices[np.arange(n), nnz_per_row] = d
        values[np.arange(n), nnz_per_row] = 1.0
        d += 1
    return PaddedRows(jnp.asarray(indices), jnp.asarray(values), int(d))


def n_features(X: Design) -> int:
    return X.n_features if isinstance(X, PaddedRows) else X.shape[1]


def n_rows(X: Design) -> int:
    return X.indices.shape[0] if isinstance(X, PaddedRows) else X.shape[0]


def take(X: Design, idx: jnp.ndarray) -> Design:
    """Rows ``idx`` of ``X`` (a minibatch gather of static shape)."""
    if isinstance(X, PaddedRows):
        return PaddedRows(X.indices[idx], X.values[idx], X.n_features)
    return X[idx]


def matvec(X: Design, W: jnp.ndarray) -> jnp.ndarray:
    """``X @ W`` for ``W`` of shape ``(d,)`` or ``(d, K)``."""
    if isinstance(X, PaddedRows):
        gathered = W[X.indices]  # (n, nnz) or (n, nnz, K)
        if W.ndim == 1:
            return jnp.sum(X.values * gathered, axis=1)
        return jnp.einsum("nj,njk->nk", X.values, gathered)
    return X @ W


def rmatvec(X: Design, R: jnp.ndarray) -> jnp.ndarray:
    """``X.T @ R`` for ``R`` of shape ``(n,)`` or ``(n, K)``; a scatter-add for sparse rows."""
    if isinstance(X, PaddedRows):
        if R.ndim == 1:
            contrib = X.values * R[:, None]
            return jnp.zeros(X.n_features, contrib.dtype).at[X.indices.ravel()].add(contrib.ravel())
        contrib = X.values[:, :, None] * R[:, None, :]
        out = jnp.zeros((X.n_features, R.shape[1]), contrib.dtype)
        return out.at[X.indices.ravel()].add(contrib.reshape(-1, R.shape[1]))
    return X.T @ R


def to_dense(X: Design) -> jnp.ndarray:
    """Dense copy (for the exact Gibbs sampler, which forms X^T W X anyway)."""
    if isinstance(X, PaddedRows):
        n = X.indices.shape[0]
        out = jnp.zeros((n, X.n_features), X.values.dtype)
        return out.at[jnp.arange(n)[:, None], X.indices].add(X.values)
    return X
