"""One table of sampler defaults, read by every estimator and by the benchmarks.

The gradient kernels run in whitened coordinates (:mod:`regbayes.samplers.base`): the
driver starts from ``T0 = scale * I`` and re-estimates ``T`` from warm-up draws, so step
sizes are relative to the posterior's scale. ``sigma_ref = (1/nu^2 + c N E[x^2])^(-1/2)``
is the Gaussian analogue of a linear SVM posterior's width (``BayesianSVC``).

Why these values (measured; BENCHMARKS.md and CHANGELOG.md have the figures):

* relative steps were chosen on standardised breast-cancer data against a long Gibbs run;
  srwm's 2.38 is divided by sqrt(P) (the optimal random-walk scaling).
* thinning: a minibatch step costs O(batch_size d), so tens of them make one draw.
* the noise cap ``h <= factor * sqrt(batch_size / N)`` keeps ``h^2 V`` O(1), where the
  variance ``V`` of a whitened minibatch subgradient grows like ``N / batch_size``; for
  ssgnht 0.3 diverged on the Higgs-shaped set at N = 1e5 after warm-up, 0.15 did not.
* shmc's 0.3 is only where warm-up starts: dual averaging tunes it toward a mean
  acceptance of 0.65 (``target_acceptance``; the optimum for HMC of fixed path length,
  Beskos et al. 2013). On Crammer–Singer posteriors, which narrow as 1 / sqrt(N) in all
  but one direction, a fixed 0.3 froze the chains as N grew (CHANGELOG.md, 2026-11-29).
* srwm's 2.38 / sqrt(P) is tuned the same way toward 0.234 (Roberts, Gelman and Gilks
  1997): the Gaussian optimum in whitened coordinates is not the hinge posterior's.
* start scale: ``"geometric"`` is ``sqrt(nu sigma_ref)``: sigma_ref underestimates a hinge
  posterior's width (only points near the margin inform it) and nu bounds it from above;
  warm-up shrinks an over-large T faster than it grows a small one. Subgradient HMC, whose
  momentum blows up with an over-large T, starts from ``"sigma_ref"``.
"""
from __future__ import annotations

import math
from typing import NamedTuple

from .. import schedules


class SamplerDefaults(NamedTuple):
    relative_step: float  # h with a constant schedule, in whitened coordinates
    thin: int
    n_warmup: int
    minibatch: bool  # an iteration costs O(batch_size d), not a sweep over all rows
    start_scale: str  # "geometric" (sqrt(nu sigma_ref)) or "sigma_ref": T0 = scale * I
    noise_step_factor: float | None = None  # cap h <= factor * sqrt(batch_size / N)
    adagrad_step: float | None = None  # h with the AdaGrad preconditioner
    target_acceptance: float | None = None  # warm-up tunes the default h toward this MH acceptance


SAMPLER_DEFAULTS = {
    "ssgld": SamplerDefaults(0.5, thin=100, n_warmup=10_000, minibatch=True, start_scale="geometric",
                             noise_step_factor=1.0, adagrad_step=0.4),
    "ssgnht": SamplerDefaults(0.15, thin=50, n_warmup=10_000, minibatch=True, start_scale="geometric",
                              noise_step_factor=0.15),
    "srwm": SamplerDefaults(2.38, thin=50, n_warmup=10_000, minibatch=True, start_scale="geometric", target_acceptance=0.234),
    "shmc": SamplerDefaults(0.3, thin=1, n_warmup=1000, minibatch=False, start_scale="sigma_ref", target_acceptance=0.65),
    "gibbs": SamplerDefaults(1.0, thin=1, n_warmup=1000, minibatch=False, start_scale="sigma_ref"),
}

#: ``schedule="polynomial"``: ``h0 (1 + t)^(-gamma)`` with h0 set so that the step at the
#: end of warm-up equals the constant default.
POLYNOMIAL_GAMMA = 0.33

#: InfiniteSVC's SSGNHT-within-Gibbs (paper 000, Algorithm 2): each component's step is
#: ``ssgnht relative_step * min(1, sqrt(batch_size / n_k))``, the noise cap with factor 1
#: in the component's own whitened coordinates.
COMPONENT_NOISE_STEP_FACTOR = 1.0

#: MedLDA's SSGRLD (paper 000, Algorithm 1): topics by SGRLD with
#: ``eps_t = a (1 + t / b)^(-gamma)`` (paper 000, section 5: b = 100 for Phi), the
#: classifier by SSGLD with AdaGrad and a constant h.
TOPIC_STEP = {"a": 0.05, "b": 100.0, "gamma": 0.55}
CLASSIFIER_STEP = 0.5

#: MedLDA's iterations by default: full Gibbs sweeps over the corpus, or minibatch updates.
MEDLDA_N_ITER = {"gibbs": 100, "ssgrld": 1000}

#: MedLDA's ``refit_classifier``: the runs on the standardised topic proportions, SSGLD
#: (Crammer–Singer, minibatches of ``REFIT_BATCH_SIZE`` documents) or Gibbs with data
#: augmentation. SSGLD with these settings scored 0.700-0.704 on Gibbs MedLDA's proportions
#: of the 3,000-document medlda-fig8 corpus (K = 20, 2 seeds) against 0.700-0.712 with 5000
#: warm-up steps and 500 draws, in 0.7 s. Gibbs sweeps (data augmentation) mix in a few.
REFIT_RUNS = {
    "ssgld": {"n_warmup": 2000, "n_draws": 200, "thin": 20},
    "gibbs": {"n_warmup": 100, "n_draws": 200},
}
REFIT_BATCH_SIZE = 100


def run_lengths(sampler: str, n_warmup: int | None = None, thin: int | None = None) -> tuple[int, int]:
    """``(n_warmup, thin)`` with the sampler's defaults where ``None``."""
    row = SAMPLER_DEFAULTS[sampler]
    return (row.n_warmup if n_warmup is None else int(n_warmup), row.thin if thin is None else int(thin))


def start_scale(sampler: str, sigma_ref: float, prior_scale: float) -> float:
    """Scale of the starting transform ``T0 = scale * I`` (module docstring)."""
    if SAMPLER_DEFAULTS[sampler].start_scale == "sigma_ref":
        return sigma_ref
    return math.sqrt(prior_scale * sigma_ref)


def step_schedule(sampler: str, *, schedule="adagrad", step_size=None, n_data: int, batch_size: int,
                  n_params: int, n_warmup: int, sigma_ref: float, prior_scale: float):
    """The step schedule and the preconditioner (``"adagrad"`` or None) of a linear-SVM run.

    ``step_size`` (a float or a schedule) overrides the default step; ``schedule`` is
    "adagrad", "polynomial", "constant" or a callable ``t -> h_t``.
    """
    if sampler == "gibbs":
        return 1.0, None
    row = SAMPLER_DEFAULTS[sampler]
    preconditioner = "adagrad" if (sampler == "ssgld" and schedule == "adagrad") else None
    if step_size is not None:
        h = step_size
    elif preconditioner:
        h = row.adagrad_step
    else:
        h = row.relative_step
        if sampler == "srwm":
            h /= math.sqrt(n_params)
        elif row.noise_step_factor is not None:
            h = min(h, row.noise_step_factor * math.sqrt(batch_size / n_data))
            if sampler == "ssgnht" and n_warmup == 0:
                # No warm-up re-estimates T: the noise term h^2 V grows with T^2, so a start
                # from T0 = scale * I > sigma_ref * I keeps h^2 V at the cap's level with
                # h * sigma_ref / scale (the same wider T0 without the smaller h diverged at
                # N = 1e4 on the Higgs-shaped set).
                h *= sigma_ref / start_scale(sampler, sigma_ref, prior_scale)
    if callable(schedule):
        return schedule, preconditioner
    if schedule == "polynomial" and sampler in ("ssgld", "ssgnht") and not callable(h):
        h0 = h * (1.0 + max(n_warmup, 1)) ** POLYNOMIAL_GAMMA
        return schedules.polynomial(h0, b=1.0, gamma=POLYNOMIAL_GAMMA), preconditioner
    return h, preconditioner
