"""Errors the driver raises, with the facts a caller needs as attributes."""
from __future__ import annotations


class DivergenceError(FloatingPointError):
    """A run produced a non-finite value (or left a model's stated bounds).

    Attributes
    ----------
    algorithm : str or None
        Name of the algorithm that diverged.
    iteration : int or None
        Index of the step (from 0, warm-up included) at or before which it diverged.
    step_size : float or None
        The step size in force there, where the algorithm has one; a retry with a
        smaller one is the usual remedy.
    """

    def __init__(self, message: str, *, algorithm: str | None = None, iteration: int | None = None,
                 step_size: float | None = None):
        super().__init__(message)
        self.algorithm = algorithm
        self.iteration = iteration
        self.step_size = step_size
