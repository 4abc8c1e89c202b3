"""Sampler kernels: pure ``init``/``step`` pairs over NamedTuple states.

Sign convention, kept everywhere: kernels work with potentials ``U = -log density``
and their (stochastic) subgradients. Every kernel is a :class:`SamplingAlgorithm`::

    state = kernel.init(key, position, data)
    state, info = kernel.step(key, state, data, step_size)

``data`` is an opaque pytree handed to the model's :class:`Potential`; ``step_size``
is a scalar the driver evaluates from a schedule. ``info`` is a :class:`StepInfo`.
"""
from .base import Potential, SamplingAlgorithm, StepInfo
from .hmc import shmc
from .sgld import ssgld
from .sgnht import ssgnht
from .sgrld import SimplexCounts, sgrld, sgrld_simplex_step, simplex_mean
from .srwm import srwm

__all__ = [
    "Potential",
    "SamplingAlgorithm",
    "StepInfo",
    "shmc",
    "ssgld",
    "ssgnht",
    "srwm",
    "SimplexCounts",
    "sgrld",
    "sgrld_simplex_step",
    "simplex_mean",
]
