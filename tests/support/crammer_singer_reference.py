"""A long-run reference for Crammer–Singer posteriors too large for a grid, and the
comparison of two runs by Monte Carlo standard errors.

The posterior (paper 000, eqs. 24 and 26, one mixture component's classifier given its
rows) is

    p(eta | D) ∝ exp(-||eta||^2 / (2 nu^2)) prod_d exp(-c max_m (l [m != y_d] + f_m - f_{y_d})),

``eta`` of shape (M, D), ``f_m = eta_m^T x_d``. :func:`rwm_reference` samples it by
random-walk Metropolis on the exact (all-rows) density, many independent chains at once
(NumPy, float64): asymptotically exact, and with hundreds of chains its Monte Carlo error
is small and estimated from the chains themselves.
"""
from __future__ import annotations

import numpy as np


def log_density(E, X, y, nu, c, l):
    """Unnormalised log posterior of ``E`` (chains, M, D) for rows ``X`` (n, D), codes ``y``."""
    M = E.shape[1]
    F = np.einsum("kmd,nd->knm", E, X)
    onehot = np.arange(M)[None, :] == y[:, None]
    f_true = np.where(onehot[None], F, 0.0).sum(axis=2)
    f_other = np.where(onehot[None], -np.inf, F).max(axis=2)
    return -np.sum(E**2, axis=(1, 2)) / (2 * nu**2) - c * np.maximum(0.0, l + f_other - f_true).sum(axis=1)


def rwm_reference(X, y, n_classes, *, nu, c, l, step, n_chains=500, n_burn=500, n_keep=2000, seed=0):
    """Draws (chain, draw, M D) of random-walk Metropolis with proposal ``N(0, step^2 I)``,
    chains started from ``N(0, (nu / 2)^2 I)``, ``n_burn`` steps discarded."""
    rng = np.random.default_rng(seed)
    y = np.asarray(y).astype(int)
    E = rng.normal(0.0, nu / 2, size=(n_chains, n_classes, X.shape[1]))
    lp = log_density(E, X, y, nu, c, l)
    out = np.empty((n_chains, n_keep, E[0].size))
    for t in range(n_burn + n_keep):
        prop = E + step * rng.normal(size=E.shape)
        lq = log_density(prop, X, y, nu, c, l)
        accept = np.log(rng.random(n_chains)) < lq - lp
        E[accept], lp[accept] = prop[accept], lq[accept]
        if t >= n_burn:
            out[:, t - n_burn] = E.reshape(n_chains, -1)
    return out


def _mcse(series):
    """MCSE of the mean of a (chain, draw) series, from ArviZ's ESS."""
    series = np.ascontiguousarray(series)
    import arviz as az  # here, not at the top: 3 s of every xdist worker's collection

    return float(np.std(series)) / np.sqrt(float(az.ess(series, method="mean")))


def _mcse_sd(series):
    """MCSE of the standard deviation: that of the variance (the mean of the squared
    deviations) over ``2 sd`` (delta method)."""
    sq = (series - series.mean()) ** 2
    return _mcse(sq) / (2.0 * np.sqrt(sq.mean()))


def compare_runs(draws, ref, mean_bias, cov_bias=None, sd_bias=None, n_mcse=4.5):
    """Failures of ``draws`` against a reference run, both (chain, draw, P): means within
    ``mean_bias sd_i``, and covariances within ``cov_bias sd_i sd_j`` or standard
    deviations within ``sd_bias sd_i``, each plus ``n_mcse`` times the two runs' combined
    MCSE (from ArviZ's ESS). ``sd_i`` is the reference's."""
    failures = []
    m, m_ref = draws.mean(axis=(0, 1)), ref.mean(axis=(0, 1))
    sd = ref.reshape(-1, ref.shape[2]).std(axis=0)
    for i in range(draws.shape[2]):
        allowed = mean_bias * sd[i] + n_mcse * np.hypot(_mcse(draws[:, :, i]), _mcse(ref[:, :, i]))
        if abs(m[i] - m_ref[i]) > allowed:
            failures.append(f"mean[{i}]: {m[i]:+.4f} vs {m_ref[i]:+.4f}, allowed {allowed:.4f}")
        if sd_bias is not None:
            est = draws[:, :, i].std()
            allowed = sd_bias * sd[i] + n_mcse * np.hypot(_mcse_sd(draws[:, :, i]), _mcse_sd(ref[:, :, i]))
            if abs(est - sd[i]) > allowed:
                failures.append(f"sd[{i}]: {est:.4f} vs {sd[i]:.4f}, allowed {allowed:.4f}")
    if cov_bias is not None:
        c, c_ref = draws - m, ref - m_ref
        for i in range(draws.shape[2]):
            for j in range(i, draws.shape[2]):
                prod, prod_ref = c[:, :, i] * c[:, :, j], c_ref[:, :, i] * c_ref[:, :, j]
                allowed = cov_bias * sd[i] * sd[j] + n_mcse * np.hypot(_mcse(prod), _mcse(prod_ref))
                if abs(prod.mean() - prod_ref.mean()) > allowed:
                    failures.append(f"cov[{i},{j}]: {prod.mean():+.4f} vs {prod_ref.mean():+.4f}, allowed {allowed:.4f}")
    return failures
