"""Warm-up tuning of a Metropolis–Hastings kernel's step size by dual averaging.

Hoffman and Gelman (2014, "The No-U-Turn Sampler", section 3.2.1 and Algorithm 5), with
Stan's constants. After block ``m`` of warm-up steps with mean acceptance probability
``a_m`` (over the block's steps and all chains):

    Hbar_m     = (1 - 1 / (m + t0)) Hbar_{m-1} + (delta - a_m) / (m + t0)
    log h_m    = mu - sqrt(m) / gamma * Hbar_m
    log hbar_m = m^(-kappa) log h_m + (1 - m^(-kappa)) log hbar_{m-1}

with target ``delta``, ``mu = log h`` for the ``h`` the tuning (re)starts from,
``gamma = 0.05``, ``t0 = 10``, ``kappa = 0.75``. (Stan takes ``mu = log(10 h)``, which
starts the iterates about tenfold above ``h``, a bias for NUTS's benefit; after a restart
late in a short warm-up the few updates left kept it in the average.) The chains run with
``h_m``; at the end of warm-up the step becomes ``hbar`` (the iterates' weighted average),
fixed for the draws, so the draws are those of an MH chain with one step. The tuning
restarts when the first transform estimated from warm-up draws replaces the starting one,
``T0 = scale * I`` (the step that suited the old coordinates is the new start). Stan
restarts at every new transform; the driver's second window re-estimates a transform
already fitted to the posterior, and a restart there leaves a short warm-up's last phase
too few noisy updates to settle on. The measurements behind both choices are in
CHANGELOG.md (2026-11-29).

The driver (:func:`regbayes.inference.sample`, ``target_acceptance``) updates after each
chunk of :func:`block_steps` warm-up steps, on the host: the step is a traced argument of
the compiled loop (:mod:`regbayes.schedules`), so a new step compiles nothing.
"""
from __future__ import annotations

import math

import numpy as np

#: Warm-up steps per dual-averaging update (one chunk of the compiled loop each) in phases
#: of up to ``BLOCK_STEPS * MAX_UPDATES`` steps.
BLOCK_STEPS = 5

#: Updates per warm-up phase: at least ``MIN_UPDATES`` (where the phase has that many
#: steps), at most about ``MAX_UPDATES`` in long phases (a chunk costs about a millisecond
#: on the host).
MIN_UPDATES, MAX_UPDATES = 20, 50

#: Dual averaging's constants (Hoffman and Gelman 2014; Stan's defaults).
GAMMA, T0, KAPPA = 0.05, 10.0, 0.75


def block_steps(phase_steps: int) -> int:
    """Steps per update in a warm-up phase of ``phase_steps`` steps: :data:`BLOCK_STEPS`,
    fewer where the phase would get under :data:`MIN_UPDATES` updates, more where it would
    get over :data:`MAX_UPDATES`."""
    return max(1, min(phase_steps // MIN_UPDATES, max(BLOCK_STEPS, phase_steps // MAX_UPDATES)))


class DualAveraging:
    """The step size of a warm-up tuned toward a mean acceptance probability ``target``."""

    def __init__(self, step_size: float, target: float):
        if not 0.0 < target < 1.0:
            raise ValueError(f"target_acceptance must be in (0, 1), got {target}")
        if not (math.isfinite(step_size) and step_size > 0):
            raise ValueError(f"the step size to tune must be positive and finite, got {step_size}")
        self.target = float(target)
        self.restart(step_size)

    def restart(self, step_size: float) -> None:
        """Start again from ``step_size`` (after the coordinates changed)."""
        self.mu = math.log(step_size)
        self.m = 0
        self.h_bar_stat = 0.0
        self.log_step = math.log(step_size)
        self.log_step_avg = math.log(step_size)

    def update(self, acceptance) -> None:
        """One update from a block's acceptance probabilities (any shape; NaN ignored)."""
        values = np.asarray(acceptance, dtype=np.float64)
        if values.size == 0 or np.isnan(values).all():
            return
        rate = float(np.nanmean(values))
        self.m += 1
        eta = 1.0 / (self.m + T0)
        self.h_bar_stat = (1.0 - eta) * self.h_bar_stat + eta * (self.target - rate)
        self.log_step = self.mu - math.sqrt(self.m) / GAMMA * self.h_bar_stat
        weight = self.m ** (-KAPPA)
        self.log_step_avg = weight * self.log_step + (1.0 - weight) * self.log_step_avg

    @property
    def step_size(self) -> float:
        """The step the chains take now."""
        return math.exp(self.log_step)

    @property
    def final_step_size(self) -> float:
        """The step for the draws: the iterates' weighted average."""
        return math.exp(self.log_step_avg)
