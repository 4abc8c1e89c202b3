"""Sampler kernels: pure ``init``/``step`` pairs over NamedTuple states.

Sign convention, kept everywhere: kernels work with potentials ``U = -log density``
and their (stochastic) subgradients. Every kernel is a :class:`SamplingAlgorithm`::

    state = kernel.init(key, position, data)
    state, info = kernel.step(key, state, data, step_size)

``data`` is an opaque pytree handed to the model's :class:`Potential`; ``step_size``
is a scalar the driver evaluates from a schedule. ``info`` is the kernel's own
NamedTuple (:class:`SGLDInfo`, :class:`SGNHTInfo`, :class:`HMCInfo`, :class:`SRWMInfo`,
:class:`SGRLDInfo`); the driver records each of its fields per kept draw.
"""
from .base import THIN_REDUCTIONS, Potential, SamplingAlgorithm, StepInfo
from .hmc import HMCInfo, shmc
from .sgld import SGLDInfo, ssgld
from .sgnht import SGNHTInfo, ssgnht
from .sgrld import SGRLDInfo, SimplexCounts, sgrld, sgrld_simplex_step, simplex_mean
from .srwm import SRWMInfo, srwm

__all__ = [
    "HMCInfo",
    "Potential",
    "SGLDInfo",
    "SGNHTInfo",
    "SGRLDInfo",
    "SRWMInfo",
    "SamplingAlgorithm",
    "StepInfo",
    "THIN_REDUCTIONS",
    "shmc",
    "ssgld",
    "ssgnht",
    "srwm",
    "SimplexCounts",
    "sgrld",
    "sgrld_simplex_step",
    "simplex_mean",
]
