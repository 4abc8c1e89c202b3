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

**The rule.** After each warm-up window the driver calls a calibration (a
:class:`NoiseCalibration`) with the window's transform ``T`` and the chains' draws of the
window. It measures ``V_j`` at ``NOISE_POSITIONS`` of them (averaged; the noise moves with
the position) and

0. where ``T`` is dense (a few dozen coordinates) and the noise comes as its whole
   covariance matrix, first turns ``T`` onto that matrix's eigenvectors (``T Q``, with
   ``V = Q diag(lambda) Q^T``): the kernels correct the noise coordinate by coordinate, and
   the off-diagonal noise they would leave in adds ``a^2 V_ij`` of diffusion between
   coordinates that the drift turns into wrong spreads. On HIGGS-shaped rows (28 features,
   minibatch noise correlations up to 0.64) the linearised dynamics predicted the posterior
   sds' errors from it (correlation 0.95-0.98 with the measured ones; CHANGELOG.md,
   2026-11-29). Turning a whitening transform by an orthogonal ``Q`` keeps it one. ``Q``
   comes from every other position of the average and ``V`` in its columns from the rest:
   the eigenvalues of one noisy average overstate its noisiest directions, and an
   overstated ``V_j`` makes the kernel inject too little noise there;
1. rescales the columns of ``T`` by ``s_j = min(1, sqrt(x / V_j))``, with ``x`` the noise
   variance at which the gradient noise supplies ``NOISE_FRACTION`` of a step's diffusion
   (``a x / 2 = NOISE_FRACTION`` for SSGLD, with AdaGrad's ``a = a0 / sqrt(1 + x)``;
   ``h x / 2 = NOISE_FRACTION A`` for SSGNHT). Running in ``u' = u / s`` is the same
   sampler with the constant diagonal preconditioner ``s^2`` (exact in the small-step
   limit, no correction term);
2. hands the kernel ``V'_j = s_j^2 V_j``, the noise in the new coordinates, which it
   subtracts from the noise it injects (``noise_correction`` of
   :func:`~regbayes.samplers.ssgld` and :func:`~regbayes.samplers.ssgnht`), so that every
   coordinate's total diffusion is the one the dynamics need.

For SSGLD the step is also held to ``a kappa_j / 2 <= DISCRETISATION`` where a
coordinate's curvature ``kappa_j`` (estimated from the full-data subgradient at warm-up
draws) is large: a hinge posterior's curvature sits at the kinks, and on ISLR's
``Default`` (3 % positives) the default step gave posterior sds 1.10x the exact ones with
no minibatch noise to blame (h = 0.2 gave 0.97-1.00).

The price is mixing: a noisy coordinate's step becomes ``2 NOISE_FRACTION / V_j`` (in
posterior-sd units), so it needs about ``V_j / NOISE_FRACTION`` steps per independent
draw. For ``V ~ N / batch_size`` that is of the order of a pass over the data per draw:
at N = 10^6 no thinning the defaults can afford gives independent draws, and
:func:`check_draws` says so.

**The checks.** :func:`check_warmup` predicts each coordinate's relaxation time from the
adapted steps (about ``1 / a_j`` steps for SSGLD, ``1 / (h s_j^2)`` for SSGNHT when the
thermostat over-damps it) and warns when warm-up's steps after its first window are fewer
than ``WARMUP_RELAXATIONS`` of the slowest: the chains had no time to forget their start
(the remedy names the n_warmup that gives them that time). A test on the draws of a window
cannot tell a chain still travelling from one that mixes slowly: at the defaults the
slowest direction of a window holds 2-8 effective draws on these data.
:func:`check_draws` computes the bulk ESS of the draws (:func:`ess_bulk`, ArviZ's
rank-normalised split-chain estimator in NumPy: the fit does not import ArviZ) and warns
below ``MIN_ESS_FRACTION`` of the draws, with the thinning that would reach it.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

#: The share of a step's diffusion that the minibatch noise may supply on any coordinate
#: (the kernel injects the rest).
NOISE_FRACTION = 0.5

#: Largest excess variance of the Langevin (Euler) step itself, ``a kappa / 2``, that the
#: adapted steps allow on a coordinate of curvature ``kappa``; and the warm-up draws per
#: chain that estimate ``kappa``.
DISCRETISATION = 0.02
CURVATURE_DRAWS = 16

#: At most this many chains (evenly spaced) give the positions where the noise and the
#: curvature are evaluated: their averages estimate the posterior's, not a chain's, and
#: each position costs a pass over the noise rows on the host (hundreds of chains would
#: spend seconds there).
CALIBRATION_CHAINS = 16
#: The noise is averaged over about this many positions: the last draw of each of those
#: chains and earlier ones of the window, evenly spaced. A hinge's minibatch noise moves
#: with the position (which rows violate the margin), most where a feature is rare: on
#: AER's HMDA (a feature in 2 % of the rows) the last draws of 4 chains overstated one
#: direction's noise 2x, and SSGNHT's sd there came out 0.73x the exact one.
NOISE_POSITIONS = 32

#: Warm-up is too short when the steps after its first window are fewer than this many
#: relaxation times of the slowest coordinate (e^-3: 5 % of an initial offset left).
WARMUP_RELAXATIONS = 3.0

#: A fit warns when its smallest bulk ESS is below this fraction of its draws.
MIN_ESS_FRACTION = 0.2


class MixingWarning(UserWarning):
    """The chains were not yet mixing at the end of warm-up, or their draws are too
    correlated; the message says what to change."""


def noise_allowance(kind: str, step: float) -> float:
    """``x``: the whitened noise variance per coordinate at which the minibatch noise
    supplies ``NOISE_FRACTION`` of a step's diffusion (module docstring). ``kind`` is
    "langevin" (``step`` = ``a``), "adagrad" (``a0``; AdaGrad divides it by the
    subgradient's RMS, about ``sqrt(1 + x)`` in whitened coordinates) or "thermostat"
    (``step`` = ``h / A``)."""
    c, step = NOISE_FRACTION, float(step)
    if kind == "adagrad":  # a0 x / (2 sqrt(1 + x)) = c
        return 2.0 * c / step**2 * (c + math.sqrt(c * c + step * step))
    if kind in ("langevin", "thermostat"):
        return 2.0 * c / step
    raise ValueError(f"unknown kind {kind!r}")


def column_scales(noise_variance, allowance: float) -> np.ndarray:
    """``s_j = min(1, sqrt(allowance / V_j))``."""
    V = np.asarray(noise_variance, np.float64)
    return np.sqrt(np.minimum(1.0, allowance / np.maximum(V, 1e-300)))


def scale_columns(T, scales):
    """``T diag(scales)``, for a dense (P, P) or a diagonal (P,) transform."""
    T = np.asarray(T)
    return (T * scales) if T.ndim == 1 else (T * scales[None, :])


class NoiseCalibration:
    """The driver's ``calibrate(T, window) -> (T', V')`` for a minibatch sampler.

    ``noise(position, T)`` returns the per-coordinate variance of the whitened minibatch
    subgradient at one position (e.g. :func:`regbayes.potentials.linear_svm.minibatch_noise`),
    or for a dense ``T`` its whole (P, P) covariance, and then ``T`` is turned onto the
    eigenvectors of its average (rule 0 of the module docstring); it is averaged over about
    :data:`NOISE_POSITIONS` positions of ``window`` (chain, draw, ...): draws evenly spaced
    through the window, from the last, of at most :data:`CALIBRATION_CHAINS` chains.
    ``kind`` and ``step`` as in :func:`noise_allowance`. For the Langevin kinds,
    ``gradient(position)`` (optional) returns the full-data subgradient: the mean of its
    whitened square over ``CURVATURE_DRAWS`` draws per chain of the window estimates each
    coordinate's curvature ``kappa_j`` (Stein's identity, ``E[(dU/du_j)^2] = E[d^2U/du_j^2]``),
    and the step is also kept to ``a kappa_j / 2 <= DISCRETISATION`` (the Euler step's own
    excess variance). ``scales`` holds the last column scales (ones before any),
    ``noise_variance`` the last ``V'`` and ``curvature`` the last ``kappa``. Deterministic
    (no random numbers): a run resumed from a checkpoint recomputes the same values from
    the same warm-up draws.
    """

    def __init__(self, noise, kind: str, step: float, n_coords: int, gradient=None):
        self.noise = noise
        self.kind = kind
        self.step = float(step)
        self.gradient = gradient if kind != "thermostat" else None
        self.allowance = noise_allowance(kind, step)
        self.scales = np.ones(n_coords)
        self.noise_variance = np.zeros(n_coords)
        self.curvature = np.ones(n_coords)

    def __call__(self, T, window):
        T = np.asarray(T, np.float64)
        window = np.asarray(window, np.float64)
        if window.shape[0] > CALIBRATION_CHAINS:
            window = window[np.linspace(0, window.shape[0] - 1, CALIBRATION_CHAINS).round().astype(int)]
        per_chain = max(1, min(NOISE_POSITIONS // window.shape[0], window.shape[1]))
        recent = window.shape[1] - 1 - np.linspace(0, window.shape[1] - 1, per_chain).round().astype(int)
        values = [self.noise(p, T) for p in window[:, recent].reshape(-1, *window.shape[2:])]
        if np.ndim(self._total(values[0])) == 1:
            noise = _mean(values)
        elif len(values) > 1:  # a matrix: rule 0 of the module docstring
            # the basis from every other position, the noise in it from the rest: the
            # eigenvalues of the same average would overstate the noisiest directions
            Q = np.linalg.eigh(self._total(_mean(values[0::2])))[1]
            T = T @ Q
            # diag(Q^T M Q), at least 0 (the block noise's estimate subtracts a sampling error)
            noise = _map(lambda M: np.maximum(np.einsum("ij,ik,kj->j", Q, M, Q), 0.0), _mean(values[1::2]))
        else:
            noise = _map(np.diag, values[0])
        if self.gradient is not None:
            take = np.unique(np.linspace(0, window.shape[1] - 1, min(CURVATURE_DRAWS, window.shape[1])).astype(int))
            g = np.stack([self.gradient(p) for p in window[:, take].reshape(-1, *window.shape[2:])])
            g = g * T if T.ndim == 1 else g @ T  # rows T^T dU
            self.curvature = np.mean(g**2, axis=0)
        s2, V = self._adapt(noise)
        self.scales = np.sqrt(s2)
        self.noise_variance = s2 * V
        return scale_columns(T, self.scales), self.noise_variance

    def _total(self, noise):
        """The noise per step from what ``noise(position, T)`` returns (averaged)."""
        return noise

    def _adapt(self, noise):
        """``(s^2, V)``: the squared column scales and the noise ``V`` per step in the
        columns of ``T`` (from what ``noise`` returns, averaged over the positions)."""
        V = self._total(noise)
        return self._limit(V), V

    def _limit(self, V):
        """``s_j^2`` for noise ``V``: the allowance's cap, and the discretisation's where the
        curvature is known (module docstring)."""
        s2 = np.minimum(1.0, self.allowance / np.maximum(V, 1e-300))
        if self.gradient is not None:
            s2 = np.minimum(s2, 2.0 * DISCRETISATION / (self.step * np.maximum(self.curvature, 1e-300)))
        return s2

    def effective_steps(self, s2, V) -> np.ndarray:
        """``a_j``: SSGLD's step on each coordinate in the adapted coordinates, ``a s_j^2``
        (AdaGrad: divided by ``sqrt(1 + s_j^2 V_j)``)."""
        a = self.step * s2
        return a / np.sqrt(1.0 + s2 * V) if self.kind == "adagrad" else a

    def relaxation_steps(self) -> np.ndarray:
        """Predicted steps for coordinate ``j`` to forget an offset by a factor e, in the
        adapted coordinates (unit curvature in the whitened ones): ``1 / a_j`` for SSGLD
        with the effective step ``a_j = a s_j^2`` (AdaGrad: ``/ sqrt(1 + V'_j)``); for
        SSGNHT, frequency ``s_j`` under friction ``A = 1``, ``max(2, 1 / s_j^2) / h``."""
        s2 = self.scales**2
        if self.kind == "thermostat":
            return np.maximum(2.0, 1.0 / s2) / self.step
        return 1.0 / self.effective_steps(s2, self.noise_variance / s2)

    def __repr__(self):  # part of the driver's checkpoint fingerprint
        return f"NoiseCalibration({self.kind!r}, step={self.step!r}, fraction={NOISE_FRACTION!r})"


def _mean(values):
    """The mean of a list of arrays, or of tuples of arrays (element by element)."""
    if isinstance(values[0], tuple):
        return tuple(np.mean(part, axis=0) for part in zip(*values))
    return np.mean(values, axis=0)


def _map(f, value):
    """``f`` of an array, or of each array of a tuple."""
    return tuple(f(v) for v in value) if isinstance(value, tuple) else f(value)


def check_warmup(calibration: NoiseCalibration, n_warmup: int, name: str) -> float:
    """Warn (:class:`MixingWarning`) when the warm-up steps after the first calibration
    (70 % of them) are fewer than ``WARMUP_RELAXATIONS`` times the slowest coordinate's
    relaxation time (:meth:`NoiseCalibration.relaxation_steps`); returns that time."""
    tau = float(np.max(calibration.relaxation_steps()))
    if 0.7 * n_warmup < WARMUP_RELAXATIONS * tau:
        need = math.ceil(WARMUP_RELAXATIONS * tau / 0.7 / 100) * 100
        warnings.warn(
            f"{name}: at the end of warm-up the chains were not yet mixing: with the steps that the "
            f"minibatch noise allows, the slowest coordinate relaxes over about {tau:.0f} steps, and the "
            f"{int(0.7 * n_warmup)} warm-up steps after the first adaptation window are fewer than "
            f"{WARMUP_RELAXATIONS:g} of those. Increase n_warmup to {need} or more (or batch_size, "
            f"which lowers the noise).",
            MixingWarning,
            stacklevel=3,
        )
    return tau


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
