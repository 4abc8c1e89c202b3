"""The minibatch noise and curvature of BayesianSVC's potential, measured on the host for
warm-up's per-coordinate step adaptation (:mod:`regbayes.inference.step_adaptation`)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .. import potentials
from ..inference.step_adaptation import NoiseCalibration

#: Most rounds of the fixed point of a sharded fit's step scales (:class:`ShardNoiseCalibration`).
PULL_ITERATIONS = 50
#: Rows on which warm-up measures the minibatch noise (a random subset of larger data sets).
NOISE_ROWS = 20_000


def noise_calibration(est, X, codes, h, n_warmup, batch_size, n_coords) -> NoiseCalibration:
    """:class:`NoiseCalibration` of a BayesianSVC fit (``est``, with ``sampler``,
    ``preconditioner_`` and ``exact_rows_`` set) on training data ``X`` and class codes:
    the variance of the minibatch subgradient from at most ``NOISE_ROWS`` of the rows that
    minibatches are drawn from (the exact rows add no noise), and the full-data
    subgradient for the curvature (those rows' estimate plus the exact rows')."""
    kind, step = _step_kind(est, h, n_warmup)
    drawn = np.setdiff1d(np.arange(X.shape[0]), est.exact_rows_)
    rows = np.sort(np.random.default_rng(0).choice(drawn, NOISE_ROWS, replace=False)) if len(drawn) > NOISE_ROWS else drawn
    (Xh, labels), exact = (_host_rows(est, X, codes, r) for r in (rows, est.exact_rows_))
    # the variance of the sum of b rows scales with the drawn rows' N^2 / b: Var_i from the subset
    factor = (len(drawn) / Xh.shape[0]) ** 2

    def noise(position, T):
        return factor * potentials.minibatch_noise(Xh, labels, position, est.C, est.margin, batch_size, T, np.ndim(T) == 2)

    def gradient(position):
        g = potentials.full_subgradient(Xh, labels, position, est.C, est.margin, est.prior_scale, len(drawn) / Xh.shape[0])
        if len(est.exact_rows_):  # prior_scale inf: the prior's term is in g already
            g = g + potentials.full_subgradient(*exact, position, est.C, est.margin, np.inf)
        return g

    return NoiseCalibration(noise, kind, step, n_coords, gradient)


def stream_noise_calibration(est, sample, h, n_warmup, n_coords, n_total, steps_per_block) -> NoiseCalibration:
    """:class:`NoiseCalibration` of a BayesianSVC fit on data streamed from disk
    (:mod:`regbayes.inference.streaming`), from ``sample = (X, codes, blocks)``: rows of a
    sample of blocks (drawn with probability proportional to their rows) and the block of
    each row. The noise per step is the minibatch's ``V`` plus the pool's,
    ``r N^2 Var_B(g_B)`` with ``r = steps_per_block`` (the module docstring of
    :mod:`~regbayes.inference.streaming`); the curvature's gradient is the sample's,
    scaled to ``n_total`` rows."""
    X, codes, blocks, block_rows = sample
    kind, step = _step_kind(est, h, n_warmup)
    Xh, labels = _host_rows(est, X, codes, np.arange(X.shape[0]))
    factor = (n_total / Xh.shape[0]) ** 2

    def noise(position, T):
        full = np.ndim(T) == 2
        V = factor * potentials.minibatch_noise(Xh, labels, position, est.C, est.margin, est.batch_size_, T, full)
        return V + steps_per_block * n_total**2 * potentials.block_noise(
            Xh, labels, blocks, block_rows, position, est.C, est.margin, T, full)

    def gradient(position):
        return potentials.full_subgradient(Xh, labels, position, est.C, est.margin, est.prior_scale, n_total / Xh.shape[0])

    return NoiseCalibration(noise, kind, step, n_coords, gradient)


class ShardNoiseCalibration(NoiseCalibration):
    """:class:`NoiseCalibration` that first gives each shard its control variate at the
    centre of the window's draws (:mod:`regbayes.inference.sharded`); its
    ``noise(position, T)`` returns the minibatch noise and the variance of the shards'
    pull apart."""

    def __init__(self, sharded, noise, kind, step, n_coords, gradient):
        super().__init__(noise, kind, step, n_coords, gradient)
        self.sharded = sharded

    def __call__(self, T, window):
        center = np.asarray(window, np.float64).reshape(-1, *np.shape(window)[2:]).mean(axis=0)
        self.sharded.chains.set_offsets(shard_deviations(self.sharded.chains, center).reshape(-1, *center.shape))
        return super().__call__(T, window)

    def _total(self, noise):
        """The minibatch noise plus the shards' pull counted as white, ``L sigma^2``: the
        matrix whose eigenvectors become the coordinates."""
        V_batch, pull = noise
        return V_batch + self.sharded.steps_per_chunk * pull

    def _adapt(self, noise):
        """The minibatch noise plus the shards' pull as the white noise that widens each
        coordinate as much (:func:`pull_noise_factor`; for SSGNHT, ``L sigma^2``). Its
        factor falls as the adapted step grows, and the step grows as the noise falls:
        iterated from ``c = 1`` to the fixed point."""
        V_batch, pull = noise
        L = self.sharded.steps_per_chunk
        V = V_batch + L * pull
        s2 = self._limit(V)
        if self.kind == "thermostat":
            return s2, V
        for _ in range(PULL_ITERATIONS):
            V, previous = V_batch + L * pull * pull_noise_factor(L * self.effective_steps(s2, V) * self.curvature), V
            s2 = self._limit(V)
            if np.allclose(V, previous, rtol=1e-9, atol=0.0):
                break
        return s2, V


def shard_deviations(chains, position) -> np.ndarray:
    """``delta_s = sum_s(shard) / q_s - sum over shards`` of the hinge subgradient at
    ``position``, flattened: (n_shards, P)."""
    sums = chains.gradient_sums(np.asarray(position), potentials.hinge_subgradient_sum)
    sums = sums.reshape(len(chains.q), -1).astype(np.float64)
    return sums / chains.q[:, None] - sums.sum(axis=0)


def shard_noise_calibration(est, sample, h, n_warmup, n_coords, n_total, sharded) -> NoiseCalibration:
    """:class:`ShardNoiseCalibration` of a BayesianSVC fit on shards on Dask workers
    (:mod:`regbayes.inference.sharded`): the minibatch noise of a visit to shard ``s``,
    ``(m_s / q_s)^2 s^2 / b`` averaged over the visits (the rows' variance ``s^2`` from
    ``sample``, as :func:`stream_noise_calibration` takes it), and the variance of the
    shards' pull ``sum_s q_s (delta_s - offset_s)^2`` from each worker's exact shard
    subgradient."""
    X, codes, _, _ = sample
    kind, step = _step_kind(est, h, n_warmup)
    Xh, labels = _host_rows(est, X, codes, np.arange(X.shape[0]))

    def noise(position, T):
        chains = sharded.chains
        q, m = chains.q, chains.shard_rows.astype(np.float64)
        V = np.sum(m**2 / q) / Xh.shape[0] ** 2 * potentials.minibatch_noise(
            Xh, labels, position, est.C, est.margin, est.batch_size_, T, T.ndim == 2)
        delta = shard_deviations(chains, position)
        if chains.offsets is not None:
            delta = delta - chains.offsets.reshape(len(q), -1)
        if T.ndim == 1:
            return V, np.sum(q[:, None] * (delta * T) ** 2, axis=0)
        delta = delta @ T
        return V, (delta * q[:, None]).T @ delta

    def gradient(position):
        return potentials.full_subgradient(Xh, labels, position, est.C, est.margin, est.prior_scale, n_total / Xh.shape[0])

    return ShardNoiseCalibration(sharded, noise, kind, step, n_coords, gradient)


def pull_noise_factor(u):
    """``c(u) = (2 / u) (1 - (1 - e^-u) / u)``: the white noise of per-step variance
    ``c(u) L sigma^2`` that widens a Langevin coordinate as much as a pull held constant
    for ``L`` steps at a time, of variance ``sigma^2`` between the holds, does, where
    ``u = L a kappa`` is ``L`` in relaxation times (step ``a``, curvature ``kappa``).

    For ``x' = x - a kappa x + a f + sqrt(2 a) xi`` the pull adds ``sigma^2 g(u) / kappa^2``
    to the stationary variance, ``g(u) = 1 - (1 - e^-u) / u`` (the integral of ``e^-lambda
    |t|`` against the hold's triangular autocovariance); white noise of per-step variance
    ``W`` adds ``a W / (2 kappa)``. ``c -> 1`` as ``u -> 0``; for ``u >> 1`` the pull only
    moves the chains' centre, and ``c ~ 2 / u``."""
    u = np.maximum(np.asarray(u, np.float64), 1e-12)
    return np.where(u < 1e-4, 1.0 - u / 3.0, 2.0 / u * (1.0 + np.expm1(-u) / u))


def _step_kind(est, h, n_warmup):
    """The calibration's kind and step for ``est``'s sampler at the end of warm-up."""
    h_end = float(h(n_warmup)) if callable(h) else float(h)
    if est.sampler == "ssgnht":
        return "thermostat", h_end  # h / A with A = 1
    return ("adagrad" if est.preconditioner_ == "adagrad" else "langevin"), 0.5 * h_end**2


def _host_rows(est, X, codes, rows):
    """``(X, labels)`` of ``rows``: the intercept column appended, binary labels as +1/-1."""
    Xh, labels = X[rows], codes[rows]
    if est.fit_intercept:
        ones = np.ones((Xh.shape[0], 1))
        Xh = sp.hstack([Xh, ones], format="csr") if sp.issparse(Xh) else np.hstack([Xh, ones])
    return Xh, (2.0 * labels - 1.0 if len(est.classes_) == 2 else labels)
