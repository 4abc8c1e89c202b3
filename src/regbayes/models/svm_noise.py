"""The minibatch noise and curvature of BayesianSVC's potential, measured on the host for
warm-up's per-coordinate step adaptation (:mod:`regbayes.inference.step_adaptation`)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .. import potentials
from ..inference.step_adaptation import NoiseCalibration

#: Rows on which warm-up measures the minibatch noise (a random subset of larger data sets).
NOISE_ROWS = 20_000


def noise_calibration(est, X, codes, h, n_warmup, batch_size, n_coords) -> NoiseCalibration:
    """:class:`NoiseCalibration` of a BayesianSVC fit (``est``, with ``sampler``,
    ``preconditioner_`` and ``exact_rows_`` set) on training data ``X`` and class codes:
    the variance of the minibatch subgradient from at most ``NOISE_ROWS`` of the rows that
    minibatches are drawn from (the exact rows add no noise), and the full-data
    subgradient for the curvature (those rows' estimate plus the exact rows')."""
    h_end = float(h(n_warmup)) if callable(h) else float(h)
    if est.sampler == "ssgnht":
        kind, step = "thermostat", h_end  # h / A with A = 1
    else:
        kind, step = ("adagrad" if est.preconditioner_ == "adagrad" else "langevin"), 0.5 * h_end**2
    drawn = np.setdiff1d(np.arange(X.shape[0]), est.exact_rows_)
    rows = np.sort(np.random.default_rng(0).choice(drawn, NOISE_ROWS, replace=False)) if len(drawn) > NOISE_ROWS else drawn
    (Xh, labels), exact = (_host_rows(est, X, codes, r) for r in (rows, est.exact_rows_))
    # the variance of the sum of b rows scales with the drawn rows' N^2 / b: Var_i from the subset
    factor = (len(drawn) / Xh.shape[0]) ** 2

    def noise(position, T):
        return factor * potentials.minibatch_noise(Xh, labels, position, est.C, est.margin, batch_size, T)

    def gradient(position):
        g = potentials.full_subgradient(Xh, labels, position, est.C, est.margin, est.prior_scale, len(drawn) / Xh.shape[0])
        if len(est.exact_rows_):  # prior_scale inf: the prior's term is in g already
            g = g + potentials.full_subgradient(*exact, position, est.C, est.margin, np.inf)
        return g

    return NoiseCalibration(noise, kind, step, n_coords, gradient)


def _host_rows(est, X, codes, rows):
    """``(X, labels)`` of ``rows``: the intercept column appended, binary labels as +1/-1."""
    Xh, labels = X[rows], codes[rows]
    if est.fit_intercept:
        ones = np.ones((Xh.shape[0], 1))
        Xh = sp.hstack([Xh, ones], format="csr") if sp.issparse(Xh) else np.hstack([Xh, ones])
    return Xh, (2.0 * labels - 1.0 if len(est.classes_) == 2 else labels)
