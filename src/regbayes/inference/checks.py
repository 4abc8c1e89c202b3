"""The driver's checks of a run: divergence (an error) and chains that barely move (warnings)."""
from __future__ import annotations

import warnings

import jax.numpy as jnp
import numpy as np

from .errors import DivergenceError


def check_finite(positions, stats, t_first, t_last, schedule, kernel_name):
    """Raise :class:`DivergenceError` on a non-finite position or an infinite float stat
    (NaN there marks a value the kernel does not define)."""
    bad = None if np.isfinite(positions).all() else "position"
    for name, values in stats.items():
        if bad is None and np.issubdtype(values.dtype, np.floating) and np.isinf(values).any():
            bad = name
    if bad is None:
        return
    h = float(np.asarray(schedule(jnp.asarray(t_first, jnp.float32))))
    raise DivergenceError(
        f"sampler '{kernel_name}' diverged between iterations {t_first} and {t_last}: "
        f"non-finite {bad} at step size {h:.3g}. "
        f"Lower step_size below {h:.3g} (for example step_size={h / 10:.3g}).",
        algorithm=kernel_name,
        iteration=int(t_first),
        step_size=h,
    )


#: A chain whose mean acceptance over the kept draws is below this gets a warning.
STUCK_ACCEPTANCE = 0.01


def warn_if_stuck(acceptance, step_size, kernel_name):
    """Warn when a chain accepted almost none of its proposals over the kept draws.

    Such a chain repeats its position, so its draws look like a posterior of width zero;
    nothing is non-finite, so :class:`DivergenceError` does not catch it. Kernels without
    an accept step record no ``acceptance`` (or NaN) and are skipped.
    """
    if np.isnan(acceptance).all():
        return
    rates = np.nanmean(acceptance, axis=1)
    stuck = np.nonzero(rates < STUCK_ACCEPTANCE)[0]
    if len(stuck):
        warnings.warn(
            f"sampler '{kernel_name}': chain(s) {stuck.tolist()} accepted at most "
            f"{rates[stuck].max():.1%} of their proposals over the draws, so their draws barely "
            f"move. Lower step_size (it was {step_size:.3g} at the last draw).",
            RuntimeWarning,
            stacklevel=3,
        )


def window_moved(window, step_size, kernel_name, index) -> bool:
    """False, with a warning, when no chain of a warm-up window (chain, draw, ...) moved.

    Every proposal was then rejected: the window's draws have no spread, and a transform
    estimated from them would be zero in every direction, freezing the chains for good
    while they accept every (empty) move, so that :func:`warn_if_stuck` could not see
    them. The driver keeps the transform it had instead.
    """
    flat = np.asarray(window).reshape(window.shape[0], window.shape[1], -1)
    if np.any(np.ptp(flat, axis=1) > 0):
        return True
    warnings.warn(
        f"sampler '{kernel_name}': no chain moved in warm-up window {index} (every proposal was "
        f"rejected), so the whitening transform stays as it was. Lower step_size (it was "
        f"{step_size:.3g}).",
        RuntimeWarning,
        stacklevel=3,
    )
    return False


def warn_if_escaped(potential, start, dim, kernel_name, stacklevel=3):
    """Warn when the chains' potential (chain, draw) settles far above ``start``, its value
    at the chains' starting point, for a posterior of ``dim`` coordinates.

    A chain in the posterior's typical set keeps U within about dim / 2 of its minimum,
    which is at most ``start``. A median over the second half of the draws above
    10 (``start`` + dim) means the chain has left the posterior (a step too large for the
    data) while every value stayed finite, which :class:`DivergenceError` does not catch.
    Kernels that record no potential (NaN) are skipped.
    """
    second_half = potential[:, potential.shape[1] // 2 :]
    if not np.isfinite(second_half).any():
        return
    settled = np.nanmedian(second_half, axis=1)
    escaped = np.nonzero(settled > 10.0 * (start + dim))[0]
    if len(escaped):
        warnings.warn(
            f"sampler '{kernel_name}': the potential of chain(s) {escaped.tolist()} settled at "
            f"{settled[escaped].max():.3g}, far above its value {start:.3g} at the start "
            f"(eta = 0): the chains have left the posterior. Lower step_size.",
            RuntimeWarning,
            stacklevel=stacklevel,
        )
