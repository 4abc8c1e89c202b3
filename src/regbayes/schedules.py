"""Step-size schedules: functions of the iteration count ``t`` (Optax style).

A float and a schedule are interchangeable: :func:`as_schedule` turns a float into a
constant schedule. The built-in schedules are pytrees whose numbers are leaves, so the
driver passes them as traced arguments: a new step size reuses the compiled sampling
loop. Any other callable ``t -> h_t`` works too (compiled once per callable).

* constant:    ``h_t = h0``
* polynomial:  ``h_t = h0 * (1 + t / b) ** (-gamma)``      (paper 000, section 5)

AdaGrad (paper 000, section 5.1.2) is per-coordinate and depends on the gradients seen,
so it lives in the SSGLD kernel state as a preconditioner; its schedule is constant.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Union

import jax
import jax.numpy as jnp


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class Constant:
    h0: float

    def __call__(self, t):
        return self.h0 + 0.0 * t


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class Polynomial:
    """``h0 * (1 + t / b) ** (-gamma)``; the paper uses b = 1 for classifiers, 100 for topics."""

    h0: float
    b: float = 1.0
    gamma: float = 0.55

    def __call__(self, t):
        return self.h0 * (1.0 + t / self.b) ** (-self.gamma)


Schedule = Union[float, Callable]


def constant(h0: float) -> Constant:
    return Constant(float(h0))


def polynomial(h0: float, b: float = 1.0, gamma: float = 0.55) -> Polynomial:
    if b <= 0:
        raise ValueError(f"polynomial schedule needs b > 0, got {b}")
    if gamma < 0:
        raise ValueError(f"polynomial schedule needs gamma >= 0, got {gamma}")
    return Polynomial(float(h0), float(b), float(gamma))


def as_schedule(step_size: Schedule) -> Callable:
    """A float becomes a constant schedule; a callable is used as it is."""
    if callable(step_size):
        return step_size
    h0 = float(step_size)
    if not jnp.isfinite(h0) or h0 <= 0:
        raise ValueError(f"step_size must be a positive finite number, got {step_size!r}")
    return Constant(h0)
