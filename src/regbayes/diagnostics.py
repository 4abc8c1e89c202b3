"""Posterior checks users can run on their own fits.

* :func:`effective_sample_size` -- bulk ESS per coordinate, pooled over chains and per
  chain (ArviZ's rank-normalised estimator, Vehtari et al. 2021), with a
  :class:`PosteriorWarning` when the draws are too correlated for the estimate itself to be
  trusted.
* :func:`compare_to_reference` -- a sampler's draws against a reference run of the same
  posterior (a long run of an exact sampler, ``BayesianSVC(sampler="gibbs")`` or NUTS):
  per coordinate the error of the mean in reference posterior standard deviations,

      z_j = (mean_j - mean_ref_j) / sd_ref_j,

  and the ratio of standard deviations ``r_j = sd_j / sd_ref_j``, each with its Monte
  Carlo standard error from the two runs' effective sample sizes,

      se(z_j) = sqrt(var_j / ESS_mean_j + var_ref_j / ESS_mean_ref_j) / sd_ref_j,
      se(r_j) = r_j sqrt(1 / (2 ESS_sd_j) + 1 / (2 ESS_sd_ref_j)).

  :func:`plot_reference_comparison` draws both with the tolerance bands.
* :func:`simulation_based_calibration` -- SBC (Talts et al. 2018) for generative models:
  draw parameters from the prior, data given them, posterior draws given the data; the
  rank of the true value among the draws is uniform on ``0..L`` for every statistic when
  the posterior is right. :meth:`SBCResult.pvalues` tests the uniformity (chi-square over
  equal-width rank bins), :func:`plot_sbc_ranks` shows the histograms.
* :func:`posterior_draws` -- a fitted estimator's draws as ``(n_chains, n_draws, n_params)``
  (weights, then intercepts), the shape the functions above take.

Draws are arrays shaped ``(n_chains, n_draws, ...)``; a 2-D ``(n_draws, n_params)`` array
is one chain. Trailing dimensions are flattened into coordinates.
"""
from __future__ import annotations

import warnings
from typing import Callable, NamedTuple

import numpy as np

from .validation import check_int

#: Below this bulk ESS the estimate of the ESS (and of R-hat) is itself unreliable (Vehtari
#: et al. 2021 recommend at least 100 per chain before trusting either).
MIN_RELIABLE_ESS = 100


class PosteriorWarning(UserWarning):
    """The draws do not support the summary asked for (too correlated, too few)."""


def _as_chains(draws, name="draws") -> np.ndarray:
    """``draws`` as float64 ``(n_chains, n_draws, n_params)``; a 2-D array is one chain."""
    if np.iscomplexobj(draws):
        raise TypeError(f"{name} must be real numbers, got complex values")
    a = np.asarray(draws, dtype=np.float64)
    if a.size == 0:
        raise ValueError(f"{name} is empty (shape {a.shape}); pass (n_chains, n_draws, ...) draws")
    if a.ndim == 2:
        a = a[None]
    if a.ndim < 2:
        raise ValueError(f"{name} must be shaped (n_chains, n_draws, ...) or (n_draws, n_params), got shape {a.shape}")
    a = a.reshape(a.shape[0], a.shape[1], -1)
    if a.shape[1] < 4:
        raise ValueError(f"{name} has {a.shape[1]} draws per chain; at least 4 are needed")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return a


def _ess(a, method="bulk") -> np.ndarray:
    """ArviZ's ESS of every coordinate of ``a`` (n_chains, n_draws, n_params)."""
    import arviz as az

    values = az.ess(az.convert_to_dataset({"x": a}), method=method)["x"].values
    # a constant coordinate has no autocorrelation to estimate: as many draws as there are
    return np.where(np.isfinite(values), values, a.shape[0] * a.shape[1])


class ESSReport(NamedTuple):
    """Bulk effective sample sizes of every coordinate."""

    pooled: np.ndarray  # (n_params,) over all chains
    per_chain: np.ndarray  # (n_chains, n_params)
    n_chains: int
    n_draws: int  # per chain

    @property
    def min_fraction(self) -> float:
        """The smallest pooled ESS as a fraction of all draws."""
        return float(self.pooled.min() / (self.n_chains * self.n_draws))


def effective_sample_size(draws, *, min_ess: float = MIN_RELIABLE_ESS, warn: bool = True) -> ESSReport:
    """Bulk ESS of every coordinate, pooled over the chains and per chain.

    Warns (:class:`PosteriorWarning`) when the smallest pooled ESS is below ``min_ess``:
    the draws are then too correlated to summarise, and the ESS estimate itself is
    unreliable; the message says which coordinate and what to change.
    """
    a = _as_chains(draws)
    pooled = _ess(a)
    per_chain = np.stack([_ess(a[c : c + 1]) for c in range(a.shape[0])])
    report = ESSReport(pooled, per_chain, a.shape[0], a.shape[1])
    worst = int(np.argmin(pooled))
    if warn and pooled[worst] < min_ess:
        warnings.warn(
            f"the smallest effective sample size is {pooled[worst]:.1f} (coordinate {worst}) out of "
            f"{a.shape[0] * a.shape[1]} draws: the draws are too correlated to summarise, and an ESS this "
            f"small is itself not a reliable estimate (needs at least {min_ess:g}). Draw more (n_draws), "
            "thin more (thin), run more chains, or, for the stochastic samplers, lengthen the warm-up.",
            PosteriorWarning,
            stacklevel=2,
        )
    return report


class ReferenceComparison(NamedTuple):
    """Per-coordinate agreement of draws with a reference run (module docstring)."""

    mean_error: np.ndarray  # z_j, in reference posterior sds
    mean_error_se: np.ndarray
    sd_ratio: np.ndarray  # r_j
    sd_ratio_se: np.ndarray
    mean: np.ndarray
    reference_mean: np.ndarray
    reference_sd: np.ndarray

    def agrees(self, mean_tol: float = 0.2, sd_range=(0.9, 1.1)) -> bool:
        """Every ``|z_j| <= mean_tol`` and the median ``r_j`` within ``sd_range``."""
        low, high = sd_range
        return bool(np.all(np.abs(self.mean_error) <= mean_tol) and low <= np.median(self.sd_ratio) <= high)

    def within_monte_carlo_error(self, n_se: float = 4.0) -> bool:
        """Every difference smaller than ``n_se`` of its Monte Carlo standard errors."""
        return bool(np.all(np.abs(self.mean_error) <= n_se * self.mean_error_se)
                    and np.all(np.abs(self.sd_ratio - 1.0) <= n_se * self.sd_ratio_se))


def compare_to_reference(draws, reference) -> ReferenceComparison:
    """``draws`` against ``reference`` draws of the same posterior, coordinate by
    coordinate (equations in the module docstring). Both are ``(n_chains, n_draws, ...)``
    or ``(n_draws, n_params)`` with the same coordinates."""
    a, b = _as_chains(draws), _as_chains(reference, "reference")
    if a.shape[2] != b.shape[2]:
        raise ValueError(f"draws have {a.shape[2]} coordinates and the reference {b.shape[2]}")
    flat_a, flat_b = a.reshape(-1, a.shape[2]), b.reshape(-1, b.shape[2])
    mean, ref_mean = flat_a.mean(axis=0), flat_b.mean(axis=0)
    var, ref_var = flat_a.var(axis=0), flat_b.var(axis=0)
    ref_sd = np.sqrt(ref_var)
    if np.any(ref_sd == 0.0):
        raise ValueError(f"the reference is constant in coordinate(s) {np.flatnonzero(ref_sd == 0.0).tolist()}")
    ratio = np.sqrt(var) / ref_sd
    mean_se = np.sqrt(var / _ess(a, "mean") + ref_var / _ess(b, "mean")) / ref_sd
    ratio_se = ratio * np.sqrt(1.0 / (2.0 * _ess(a, "sd")) + 1.0 / (2.0 * _ess(b, "sd")))
    return ReferenceComparison((mean - ref_mean) / ref_sd, mean_se, ratio, ratio_se, mean, ref_mean, ref_sd)


def plot_reference_comparison(comparison: ReferenceComparison, *, mean_tol: float = 0.2, sd_range=(0.9, 1.1), labels=None):
    """Two panels: the mean errors ``z_j`` with ``±2 se`` bars and the band ``±mean_tol``,
    and the sd ratios ``r_j`` with ``±2 se`` bars and ``sd_range``. Returns the figure."""
    from .plotting import new_figure

    fig = new_figure(7.0, 3.0)
    axes = fig.subplots(1, 2)
    j = np.arange(len(comparison.mean_error))
    panels = ((comparison.mean_error, comparison.mean_error_se, (-mean_tol, mean_tol), "mean error (reference sd)"),
              (comparison.sd_ratio, comparison.sd_ratio_se, sd_range, "sd / reference sd"))
    for ax, (values, se, band, title) in zip(axes, panels):
        ax.axhspan(*band, color="0.9")
        ax.errorbar(j, values, yerr=2 * se, fmt="o", ms=3, lw=1)
        ax.set_title(title, fontsize=9)
        ax.set_xticks(j, labels if labels is not None else j, fontsize=7, rotation=90 if len(j) > 12 else 0)
    return fig


class SBCResult(NamedTuple):
    """Ranks of the true values among the posterior draws (simulations x statistics)."""

    ranks: np.ndarray  # (n_simulations, n_statistics), each in 0..n_draws
    n_draws: int

    def pvalues(self, n_bins: int = 10) -> np.ndarray:
        """Chi-square p-value of uniform ranks, per statistic, over ``n_bins`` equal bins
        of ``0..n_draws`` (``n_draws + 1`` must be a multiple of ``n_bins``)."""
        from scipy.stats import chisquare

        if (self.n_draws + 1) % n_bins:
            raise ValueError(f"n_draws + 1 = {self.n_draws + 1} is not a multiple of n_bins = {n_bins}")
        counts = np.stack([np.bincount(r * n_bins // (self.n_draws + 1), minlength=n_bins) for r in self.ranks.T])
        return np.atleast_1d(chisquare(counts, axis=1).pvalue)


def simulation_based_calibration(simulate: Callable, posterior: Callable, n_simulations: int, *,
                                 random_state=0) -> SBCResult:
    """SBC: ``simulate(rng) -> (truth, data)`` draws parameters from the prior and data given
    them (``truth`` the statistics of interest, shape ``(n_statistics,)``); ``posterior(data,
    seed) -> draws`` returns ``(n_draws, n_statistics)`` posterior draws of the same
    statistics. The draws should be close to independent (thin them): autocorrelated draws
    make the ranks non-uniform even for a correct sampler.

    The rank of a true value is the number of draws below it plus, for draws equal to it, a
    uniform share ``U{0..#ties}`` (Talts et al. 2018, section 4.2): statistics with atoms
    (a number of clusters, whether two rows share one) then have uniform ranks too. Ties
    are drawn from a stream of their own, so continuous statistics get the same ranks and
    seeds with or without them.
    """
    n_simulations = check_int("n_simulations", n_simulations, minimum=1)
    rng = np.random.default_rng(random_state)
    ties_rng = rng.spawn(1)[0]  # a child stream: rng's own draws (the seeds) stay as they were
    ranks, n_draws = [], None
    for s in range(n_simulations):
        truth, data = simulate(rng)
        truth = np.atleast_1d(np.asarray(truth, np.float64))
        draws = np.asarray(posterior(data, int(rng.integers(2**31 - 1))), np.float64).reshape(-1, truth.size)
        if n_draws is None:
            n_draws = draws.shape[0]
        elif draws.shape[0] != n_draws:
            raise ValueError(f"posterior returned {draws.shape[0]} draws in simulation {s} and {n_draws} before")
        below = np.sum(draws < truth[None, :], axis=0)
        ties = np.sum(draws == truth[None, :], axis=0)
        ranks.append(below + (ties_rng.integers(0, ties + 1) if ties.any() else 0))
    return SBCResult(np.asarray(ranks, np.int64), int(n_draws))


def plot_sbc_ranks(result: SBCResult, *, n_bins: int = 10, labels=None):
    """Histogram of the ranks of each statistic, with the 99 % band of uniform counts."""
    from scipy.stats import binom

    from .plotting import new_figure

    n_stats = result.ranks.shape[1]
    fig = new_figure(min(2.2 * n_stats, 9.0), 2.4)
    axes = np.atleast_1d(fig.subplots(1, n_stats))
    n_sims = result.ranks.shape[0]
    low, high = binom.ppf([0.005, 0.995], n_sims, 1.0 / n_bins)
    for i, ax in enumerate(axes):
        bins = result.ranks[:, i] * n_bins // (result.n_draws + 1)
        ax.axhspan(low, high, color="0.9")
        ax.bar(np.arange(n_bins), np.bincount(bins, minlength=n_bins), width=0.9)
        ax.set_title(labels[i] if labels is not None else f"statistic {i}", fontsize=9)
        ax.set_xticks([])
    return fig


def posterior_draws(estimator) -> np.ndarray:
    """A fitted estimator's posterior draws, ``(n_chains, n_draws, n_params)``: the weights
    (``coef_draws_``), then the intercepts (``intercept_draws_``) where present."""
    if not hasattr(estimator, "coef_draws_"):
        raise TypeError(f"{type(estimator).__name__} has no coef_draws_: fit it first, or pass its draws as an array")
    coef = np.asarray(estimator.coef_draws_, np.float64)
    parts = [coef.reshape(coef.shape[0], coef.shape[1], -1)]
    if hasattr(estimator, "intercept_draws_"):
        icpt = np.asarray(estimator.intercept_draws_, np.float64)
        parts.append(icpt.reshape(icpt.shape[0], icpt.shape[1], -1))
    return np.concatenate(parts, axis=2)
