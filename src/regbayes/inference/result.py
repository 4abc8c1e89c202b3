"""What the driver's :func:`~regbayes.inference.sample` returns."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class SampleResult(NamedTuple):
    """Draws and per-draw records; arrays are NumPy, leading axes (chain, draw).

    ``stats`` maps every field of the kernel's ``info`` to a (chain, draw, ...) array:
    the value at the kept step, or condensed over the ``thin`` steps behind it as
    :data:`~regbayes.samplers.base.THIN_REDUCTIONS` says (``acceptance`` averaged,
    ``n_evaluated`` summed). ``potential``, ``acceptance`` and ``n_evaluated`` read
    ``stats``, NaN-filled where the kernel lacks the field.
    """

    positions: np.ndarray
    stats: dict
    step_size: np.ndarray  # (draw,)
    iteration: np.ndarray  # (draw,) kernel step index of each saved draw (warm-up included)
    wall_time: np.ndarray  # (draw,) seconds since sampling started (compile excluded)
    compile_seconds: float
    sampling_seconds: float
    warmup_potential: np.ndarray  # (chain, recorded warm-up step): potential at warmup_iteration (NaN: none)
    warmup_iteration: np.ndarray  # step index of each recorded warm-up potential
    final_states: object
    final_keys: object = None  # (chain, 2) uint32: the key data of the chains' keys after the last step

    def _stat(self, name):
        if name in self.stats:
            return self.stats[name]
        return np.full(self.positions.shape[:2], np.nan)

    @property
    def potential(self) -> np.ndarray:
        return self._stat("potential")

    @property
    def acceptance(self) -> np.ndarray:
        return self._stat("acceptance")

    @property
    def n_evaluated(self) -> np.ndarray:
        return self._stat("n_evaluated")
