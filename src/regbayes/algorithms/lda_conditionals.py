"""MedLDA's token conditionals (numba), one function each so that tests can enumerate them.

* collapsed Gibbs MedLDA with data augmentation: :func:`augmented_token_weights` (and
  :func:`augmented_token_weights_gram`, the same from per-document Gram terms);
* paper 000, eq. 22 (Theta collapsed, Phi and eta given): :func:`fixed_topic_token_weights`
  and :func:`supervised_token_weights`. The equations are in :mod:`.lda_kernels`.
"""
from __future__ import annotations

import numba
import numpy as np

from .lda_tokens import MODE_BINARY, MODE_CRAMMER_SINGER, MODE_UNSUPERVISED  # noqa: F401


@numba.njit(inline="always")
def _times_lda_weights(out, top, ndk_minus, nwk_minus_w, nk_minus, alpha, beta, vbeta):
    """``out`` holds log-likelihood terms with maximum ``top``: turn them into the token's
    unnormalised topic weights, the collapsed LDA factor times ``exp(out - top)``."""
    for k in range(out.shape[0]):
        out[k] = (ndk_minus[k] + alpha) * (nwk_minus_w[k] + beta) / (nk_minus[k] + vbeta) * np.exp(out[k] - top)
    return out


@numba.njit(cache=True)
def augmented_token_weights(ndk_minus, nwk_minus_w, nk_minus, n_d, f_minus, eta, y_sign, inv_omega,
                            alpha, beta, vbeta, C, margin, out):
    """Unnormalised collapsed Gibbs MedLDA conditional of one token (module docstring).

    ``ndk_minus`` (K,), ``nwk_minus_w`` (K,) (counts of the token's word), ``nk_minus`` (K,):
    counts without the token. ``f_minus`` (M,) holds ``eta_m^T n_d^-n`` (unnormalised
    discriminants without the token); ``eta`` (M, K); ``y_sign`` and ``inv_omega`` (M,).
    Writes the weights to ``out`` (K,) and returns it.
    """
    K = ndk_minus.shape[0]
    M = eta.shape[0]
    if M == 0:
        for k in range(K):
            out[k] = (ndk_minus[k] + alpha) * (nwk_minus_w[k] + beta) / (nk_minus[k] + vbeta)
        return out
    c = 0.5 * C
    top = -np.inf
    for k in range(K):  # log of the augmented likelihood, kept in out until normalised
        s = 0.0
        for m in range(M):
            zeta = margin - y_sign[m] * (f_minus[m] + eta[m, k]) / n_d
            s -= c * zeta + 0.5 * c * c * zeta * zeta * inv_omega[m]
        out[k] = s
        if s > top:
            top = s
    return _times_lda_weights(out, top, ndk_minus, nwk_minus_w, nk_minus, alpha, beta, vbeta)


@numba.njit(cache=True)
def document_terms(eta, y_sign, inv_omega, n_d, C, margin, linear, quadratic, b):
    """Per-document terms of the O(K) form of :func:`augmented_token_weights`.

    With ``u_m(k) = eta_m^T (n_d^-n + e_k)`` (the discriminant times ``n_d`` when the token
    takes topic k) and ``c' = C / 2``, the log augmented likelihood is, up to terms free of k,

        sum_m a_m u_m(k) - b_m u_m(k)^2,   a_m = c' y_m (1 + c' l / omega_m) / n_d,
                                           b_m = c'^2 / (2 omega_m n_d^2)
        = A_k - 2 (G n_d^-n)_k - Q_k,       A_k = sum_m a_m eta_mk, Q_k = sum_m b_m eta_mk^2,
                                           G = eta^T diag(b) eta   (K, K).

    Writes ``A`` to ``linear`` (K,), ``Q`` to ``quadratic`` (K,) and ``b`` (M,).

    ``b_m`` omits the label's square (1 for +-1 labels), so the label enters as a real
    coefficient of the linear term only: MedLDA regression passes real labels
    (:func:`regbayes.algorithms.medlda_regression.sweep_arguments`).
    """
    K = eta.shape[1]
    M = eta.shape[0]
    c = 0.5 * C
    for k in range(K):
        linear[k] = 0.0
        quadratic[k] = 0.0
    for m in range(M):
        a = c * y_sign[m] * (1.0 + c * margin * inv_omega[m]) / n_d
        b[m] = 0.5 * c * c * inv_omega[m] / (n_d * n_d)
        for k in range(K):
            linear[k] += a * eta[m, k]
            quadratic[k] += b[m] * eta[m, k] * eta[m, k]


@numba.njit(inline="always")
def _gram_column(eta, b, j, gram, gram_exp, with_exp, known):
    """Column ``j`` of ``G = eta^T diag(b) eta`` and, ``with_exp``, its factors
    ``exp(-2 G[:, j])``, computed on first use (a document touches few topics, so most of G
    is never needed). G is symmetric: the column is stored as row ``gram[j]``, contiguous
    for the loops that read it."""
    if not known[j]:
        K = eta.shape[1]
        row = gram[j]
        for k in range(K):
            row[k] = 0.0
        for m in range(eta.shape[0]):
            bj = b[m] * eta[m, j]
            for k in range(K):
                row[k] += bj * eta[m, k]
        if with_exp:
            for k in range(K):
                gram_exp[j, k] = np.exp(-2.0 * row[k])
        known[j] = True


@numba.njit(cache=True)
def augmented_token_weights_gram(ndk_minus, nwk_minus_w, nk_minus, linear, quadratic, g, alpha, beta, vbeta, out):
    """:func:`augmented_token_weights` in O(K): ``linear``, ``quadratic`` from
    :func:`document_terms` and ``g = G n_d^-n`` (K,), kept current token by token
    (``G[:, old]`` out, ``G[:, new]`` in)."""
    K = ndk_minus.shape[0]
    top = -np.inf
    for k in range(K):
        s = linear[k] - 2.0 * g[k] - quadratic[k]
        out[k] = s
        if s > top:
            top = s
    return _times_lda_weights(out, top, ndk_minus, nwk_minus_w, nk_minus, alpha, beta, vbeta)


# The two eq. 22 conditionals below are the reference the sweeps are tested against; the
# sweeps (_fixed_topic_sweeps_range) write the same arithmetic out in their token loop
# rather than calling them. As calls, or inlined at numba IR level (inline="always"), every
# array argument becomes a new variable whose reference count numba updates, atomically,
# once per token: a large share of the token loop's time, and the IR inlining made up most
# of the kernel's compile time.
@numba.njit(cache=True)
def fixed_topic_token_weights(ndk_minus, phi_w, n_d, f_minus, eta, y_sign, y_class, mode, C, margin, alpha, out):
    """Unnormalised eq. 22 conditional of one token with Phi and eta given (module docstring).

    ``phi_w`` (K,) is ``Phi[:, w]``; ``f_minus`` (M,) is ``eta_m^T n_d^-n``; ``y_sign`` (M,)
    the +-1 labels of the binary classifiers (mode 0); ``y_class`` the class (mode 1).
    """
    K = ndk_minus.shape[0]
    M = eta.shape[0]
    if mode == MODE_UNSUPERVISED or M == 0:
        for k in range(K):
            out[k] = (ndk_minus[k] + alpha) * phi_w[k]
        return out
    # log psi, accumulated in out until normalised. The classifier loop is outside the topic
    # loop, so that the inner loop runs over contiguous eta[m, :] with no division or branch
    # and vectorises (about 2x faster than the topic-outer loop at K = 50, M = 20).
    if mode == MODE_BINARY:
        for k in range(K):
            out[k] = 0.0
        inv_n = 1.0 / n_d
        for m in range(M):
            slope = y_sign[m] * inv_n  # zeta_m(k) = margin - y_m (f_m + eta_mk) / n_d
            offset = margin - slope * f_minus[m]
            for k in range(K):
                out[k] += max(offset - slope * eta[m, k], 0.0)
        for k in range(K):
            out[k] = -C * out[k]
    else:
        for k in range(K):  # out holds the largest competing discriminant first
            out[k] = -np.inf
        inv_n = 1.0 / n_d
        for m in range(M):  # unnormalised: max_m (f_m + eta_mk), divided by n_d below
            if m != y_class:
                f_m = f_minus[m]
                for k in range(K):
                    out[k] = max(out[k], f_m + eta[m, k])
        f_y = f_minus[y_class]
        for k in range(K):
            zeta = margin + (out[k] - f_y - eta[y_class, k]) * inv_n
            out[k] = -C * max(zeta, 0.0)
    top = -np.inf
    for k in range(K):
        if out[k] > top:
            top = out[k]
    for k in range(K):
        out[k] = (ndk_minus[k] + alpha) * phi_w[k] * np.exp(out[k] - top)
    return out


@numba.njit(inline="always")
def _factor_row(eta, m, y_class, y_m, n_d, C, mode, table, known):
    """Row ``m`` of a document's factor table, filled on first use (:func:`supervised_token_weights`):
    ``exp(C y_m (eta_mk - max_k y_m eta_mk) / n_d)`` (binary, values in (0, 1]) or
    ``exp(-C (eta_mk - eta_yk) / n_d)`` (Crammer–Singer, ``y = y_class``)."""
    if not known[m]:
        K = eta.shape[1]
        if mode == MODE_BINARY:
            top = -np.inf
            for k in range(K):
                top = max(top, y_m * eta[m, k])
            for k in range(K):
                table[m, k] = np.exp(C * (y_m * eta[m, k] - top) / n_d)
        else:
            for k in range(K):
                table[m, k] = np.exp(-C * (eta[m, k] - eta[y_class, k]) / n_d)
        known[m] = True


@numba.njit(cache=True)
def supervised_token_weights(ndk_minus, phi_w, n_d, f_minus, eta, row_max, row_min, y_sign, y_class, mode, C,
                             margin, alpha, table, known, out):
    """:func:`fixed_topic_token_weights` for the supervised modes, with few exponentials.

    The hinge arguments are affine in the candidate topic's ``eta_mk``, so their range over k
    follows from ``row_max[m] = max_k eta_mk`` and ``row_min[m]`` in O(M). Where a hinge is
    inactive for every k its factor is 1; where it is active for every k its factor is,
    up to a constant, a per-document row of exponentials (``table``, rows filled on first
    use, ``known`` reset per document), so most tokens need no exponential:

    * binary: ``zeta_m(k) = margin - y_m (f_m + eta_mk) / n_d``; active for every k, the
      factor ``exp(-C zeta_m(k))`` is proportional to ``exp(C y_m eta_mk / n_d)``;
    * Crammer–Singer: ``zeta(k) = margin + (F_k - f_y - eta_yk) / n_d`` with
      ``F_k = max_{m != y} (f_m + eta_mk)``. Only classes with ``f_m + row_max[m] >= H =
      max_m (f_m + row_min[m])`` can attain ``F_k``; active for every k,
      ``exp(-C zeta(k))`` is proportional to
      ``min_m exp(-C (f_m - H) / n_d) exp(-C (eta_mk - eta_yk) / n_d)`` over those classes.

    Hinges active for some topics only take the exact path (``exp`` per topic); so does a
    token whose product of factors underflows. Same distribution as
    :func:`fixed_topic_token_weights`, to rounding.
    """
    K = ndk_minus.shape[0]
    M = eta.shape[0]
    inv_n = 1.0 / n_d
    for k in range(K):  # out holds psi (up to a constant) until the last loop
        out[k] = 1.0
    if mode == MODE_BINARY:
        for m in range(M):
            y_m = y_sign[m]
            offset = margin - y_m * f_minus[m] * inv_n
            if y_m > 0.0:
                lo, hi = offset - row_max[m] * inv_n, offset - row_min[m] * inv_n
            else:
                lo, hi = offset + row_min[m] * inv_n, offset + row_max[m] * inv_n
            if hi <= 0.0:
                continue  # inactive for every topic
            if lo >= 0.0:
                _factor_row(eta, m, y_class, y_m, n_d, C, mode, table, known)
                for k in range(K):
                    out[k] *= table[m, k]
            else:  # the exact minimum over k of the hinge is 0 (lo < 0): factors in (0, 1]
                for k in range(K):
                    out[k] *= np.exp(-C * max(offset - y_m * eta[m, k] * inv_n, 0.0))
    else:
        H = -np.inf
        G = -np.inf
        for m in range(M):
            if m != y_class:
                H = max(H, f_minus[m] + row_min[m])
                G = max(G, f_minus[m] + row_max[m])
        f_y = f_minus[y_class]
        hi = margin + (G - f_y - row_min[y_class]) * inv_n
        if hi > 0.0:
            lo = margin + (H - f_y - row_max[y_class]) * inv_n
            if lo < 0.0:
                return fixed_topic_token_weights(ndk_minus, phi_w, n_d, f_minus, eta, y_sign, y_class, mode, C,
                                                 margin, alpha, out)
            for k in range(K):
                out[k] = np.inf
            for m in range(M):
                if m != y_class and f_minus[m] + row_max[m] >= H:
                    _factor_row(eta, m, y_class, 0.0, n_d, C, mode, table, known)
                    scale = np.exp(-C * (f_minus[m] - H) * inv_n)
                    for k in range(K):
                        out[k] = min(out[k], scale * table[m, k])
    total = 0.0
    for k in range(K):
        out[k] *= (ndk_minus[k] + alpha) * phi_w[k]
        total += out[k]
    if not (total > 0.0 and total < np.inf):
        return fixed_topic_token_weights(ndk_minus, phi_w, n_d, f_minus, eta, y_sign, y_class, mode, C, margin,
                                         alpha, out)
    return out
