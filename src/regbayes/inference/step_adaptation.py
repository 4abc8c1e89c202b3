"""Warm-up step adaptation of the stochastic-gradient samplers, and the checks on mixing.

**Why a step needs adapting per coordinate.** A minibatch subgradient adds noise of
covariance ``V`` (in the whitened coordinates of :mod:`regbayes.samplers.base`) to every
step. For SSGLD with step ``a = h^2 / 2`` the stationary variance of a coordinate grows by
the factor ``1 + a V_j / 2`` (the noise acts as extra diffusion, whatever the curvature);
for SSGNHT with step ``h`` it heats coordinate ``j`` to ``(A + h V_j / 2) / xi``, and the
one scalar thermostat ``xi`` settles where the *average* temperature is 1. With heavy-
tailed features ``V_j`` differs between coordinates by orders of magnitude (2 to 1,600 on
DAAG's spam7 at N = 4,601, where ``N / batch_size`` is 46): the thermostat then cools the
quiet coordinates (posterior sd 0.5x the exact one) and heats the noisy ones (1.8x), and
SSGLD's noisy coordinates come out 1.1-1.6x too wide (CHANGELOG.md, 2026-11-27).

**The rule.** After each warm-up window the driver calls a calibration (built here by
:func:`noise_calibration`) with the window's transform ``T`` and the chains' last
positions; it measures ``V_j`` there and rescales the columns of ``T`` by

    s_j = min(1, sqrt(NOISE_TOLERANCE / excess_j)),   excess_j = step V_j / 2,

where ``step`` is SSGLD's ``a`` or SSGNHT's ``h / A``. Running in ``u' = u / s`` is the same
sampler with the constant diagonal preconditioner ``s^2`` (a per-coordinate step
``a s_j^2``, or ``h`` with frequency ``s_j``), exact in the small-step limit with no
correction term; every coordinate's excess is then at most ``NOISE_TOLERANCE``. The price
is mixing: a coordinate with step ``a s_j^2`` needs about ``2 / (a s_j^2)`` steps per
independent draw, ``2 / (h s_j^2)`` for SSGNHT. For ``V ~ N / batch_size`` that is of
order ``N / batch_size`` steps, a pass over the data per draw: at N = 10^6 no thinning
the defaults can afford gives independent draws, and :func:`check_draws` says so.

**The checks.** :func:`check_warmup` compares the two windows' transforms: when the
second window's covariance differs from the first's by more than ``TRANSFORM_RATIO`` along
some direction, the chains were still moving to the posterior and warm-up was too short.
:func:`check_draws` computes the bulk ESS of the draws (:func:`ess_bulk`, ArviZ's
rank-normalised split-chain estimator in NumPy: the fit does not import ArviZ) and warns
below ``MIN_ESS_FRACTION`` of the draws, with the thinning that would reach it.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

#: Largest relative excess of a coordinate's stationary variance that the adapted steps
#: allow (``a V_j / 2`` for SSGLD, ``h V_j / (2 A)`` for SSGNHT).
NOISE_TOLERANCE = 0.1

#: Warm-up has not converged when the covariance of the second window's draws differs
#: from the first window's by more than this factor along some direction.
TRANSFORM_RATIO = 10.0

#: A fit warns when its smallest bulk ESS is below this fraction of its draws.
MIN_ESS_FRACTION = 0.2


class MixingWarning(UserWarning):
    """The chains were not yet mixing at the end of warm-up, or their draws are too
    correlated; the message says what to change."""


def column_scales(noise_variance, step) -> np.ndarray:
    """``s_j = min(1, sqrt(NOISE_TOLERANCE / (step V_j / 2)))`` (module docstring)."""
    excess = 0.5 * float(step) * np.asarray(noise_variance, np.float64)
    return np.sqrt(np.minimum(1.0, NOISE_TOLERANCE / np.maximum(excess, 1e-300)))


def scale_columns(T, scales):
    """``T diag(scales)``, for a dense (P, P) or a diagonal (P,) transform."""
    T = np.asarray(T)
    return (T * scales) if T.ndim == 1 else (T * scales[None, :])


class NoiseCalibration:
    """The driver's ``calibrate(T, positions) -> T'`` for a minibatch sampler.

    ``noise(position, T)`` returns the per-coordinate variance of the whitened minibatch
    subgradient at one position (e.g. :func:`regbayes.potentials.linear_svm.minibatch_noise`);
    the variance is averaged over the chains' positions. ``step`` is ``a`` (SSGLD) or
    ``h / A`` (SSGNHT). ``scales`` holds the last scales computed (ones before any).
    Deterministic (no random numbers): a run resumed from a checkpoint recomputes the same
    scales from the same warm-up draws.
    """

    def __init__(self, noise, step: float, n_coords: int):
        self.noise = noise
        self.step = float(step)
        self.scales = np.ones(n_coords)

    def __call__(self, T, positions):
        T = np.asarray(T, np.float64)
        V = np.mean([self.noise(p, T) for p in np.asarray(positions, np.float64)], axis=0)
        self.scales = column_scales(V, self.step)
        return scale_columns(T, self.scales)

    def __repr__(self):  # part of the driver's checkpoint fingerprint
        return f"NoiseCalibration(step={self.step!r}, tolerance={NOISE_TOLERANCE!r})"


def _covariance(T):
    T = np.asarray(T, np.float64)
    return np.diag(T**2) if T.ndim == 1 else T @ T.T


def transform_ratio(T_first, T_second) -> float:
    """The largest factor by which the covariances ``T T^T`` of the two windows differ
    along some direction (>= 1)."""
    a, b = _covariance(T_first), _covariance(T_second)
    L = np.linalg.cholesky(a + 1e-12 * np.trace(a) / len(a) * np.eye(len(a)))
    Linv = np.linalg.inv(L)
    ev = np.linalg.eigvalsh(Linv @ b @ Linv.T)
    ev = ev[ev > 0]
    return float(max(ev.max(), 1.0 / ev.min())) if len(ev) else math.inf


def check_warmup(T_first, T_second, n_warmup: int, name: str) -> float:
    """Warn (:class:`MixingWarning`) when the two adaptation windows disagree by more than
    ``TRANSFORM_RATIO`` (module docstring); returns the ratio."""
    ratio = transform_ratio(T_first, T_second)
    if ratio > TRANSFORM_RATIO:
        warnings.warn(
            f"{name}: at the end of warm-up the chains were not yet mixing: the posterior scale "
            f"estimated in the second adaptation window differs from the first's by a factor of "
            f"{ratio:.3g} along some direction (more than {TRANSFORM_RATIO:g}). Increase n_warmup to "
            f"{4 * n_warmup} or more.",
            MixingWarning,
            stacklevel=3,
        )
    return ratio


def _autocovariance(x):
    """Autocovariance of each column of ``x`` (n, P) by FFT, biased (divided by n)."""
    n = x.shape[0]
    from scipy.fft import next_fast_len

    m = next_fast_len(2 * n)
    f = np.fft.rfft(x - x.mean(axis=0), n=m, axis=0)
    return np.fft.irfft(f * np.conj(f), n=m, axis=0)[:n] / n


def _ess_raw(chains):
    """ESS of each coordinate of (n_chains, n_draws, P): ArviZ's ``_ess`` (Geyer's initial
    positive, then monotone, sequence), one coordinate at a time."""
    m, n, _ = chains.shape
    acov = np.stack([_autocovariance(c) for c in chains])  # (m, n, P)
    out = np.empty(chains.shape[2])
    for j in range(chains.shape[2]):
        x, ac = chains[:, :, j], acov[:, :, j]
        if np.max(x) - np.min(x) < np.finfo(float).resolution:
            out[j] = x.size
            continue
        mean_var = np.mean(ac[:, 0]) * n / (n - 1.0)
        var_plus = mean_var * (n - 1.0) / n
        if m > 1:
            var_plus += np.var(x.mean(axis=1), ddof=1)
        rho = np.zeros(n)
        even, odd = 1.0, 1.0 - (mean_var - np.mean(ac[:, 1])) / var_plus
        rho[0], rho[1] = even, odd
        t = 1
        while t < n - 3 and even + odd > 0.0:
            even = 1.0 - (mean_var - np.mean(ac[:, t + 1])) / var_plus
            odd = 1.0 - (mean_var - np.mean(ac[:, t + 2])) / var_plus
            if even + odd >= 0:
                rho[t + 1], rho[t + 2] = even, odd
            t += 2
        max_t = t - 2
        if even > 0:
            rho[max_t + 1] = even
        t = 1
        while t <= max_t - 2:
            if rho[t + 1] + rho[t + 2] > rho[t - 1] + rho[t]:
                rho[t + 1] = rho[t + 2] = (rho[t - 1] + rho[t]) / 2.0
            t += 2
        tau = -1.0 + 2.0 * np.sum(rho[: max_t + 1]) + np.sum(rho[max_t + 1 : max_t + 2])
        out[j] = m * n / max(tau, 1.0 / np.log10(m * n))
    return out


def ess_bulk(draws) -> np.ndarray:
    """Bulk ESS per coordinate of ``draws`` (n_chains, n_draws, ...): the chains split in
    halves, the draws rank-normalised (Vehtari et al. 2021), as ``arviz.ess(method="bulk")``."""
    from scipy.special import ndtri
    from scipy.stats import rankdata

    a = np.asarray(draws, np.float64)
    a = a.reshape(a.shape[0], a.shape[1], -1)
    half = a.shape[1] // 2
    split = np.concatenate([a[:, :half], a[:, a.shape[1] - half:]], axis=0)  # an odd middle draw is dropped
    size = split.shape[0] * split.shape[1]
    ranks = rankdata(split.reshape(size, -1), axis=0, method="average")
    z = ndtri((ranks - 0.375) / (size + 0.25)).reshape(split.shape)
    return _ess_raw(z)


def check_draws(positions, thin: int, name: str) -> float:
    """Warn (:class:`MixingWarning`) when the smallest bulk ESS of ``positions``
    (n_chains, n_draws, ...) is below ``MIN_ESS_FRACTION`` of the draws; returns the
    smallest ESS as a fraction of the draws."""
    positions = np.asarray(positions)
    total = positions.shape[0] * positions.shape[1]
    if positions.shape[1] < 8:
        return math.nan
    ess = ess_bulk(positions)
    fraction = float(np.min(ess)) / total
    if fraction < MIN_ESS_FRACTION:
        need = math.ceil(thin * MIN_ESS_FRACTION / max(fraction, 1e-6))
        warnings.warn(
            f"{name}: the draws are strongly autocorrelated: the smallest effective sample size is "
            f"{np.min(ess):.0f} of {total} draws ({100 * fraction:.1f} %, coordinate {int(np.argmin(ess))}). "
            f"Summaries of these draws are less precise than their number suggests. Increase thin to "
            f"{need} or more (about {100 * MIN_ESS_FRACTION:.0f} % effective draws), or draw more.",
            MixingWarning,
            stacklevel=3,
        )
    return fraction
