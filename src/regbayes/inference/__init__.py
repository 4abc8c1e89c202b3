"""The driver: every algorithm of the library runs through it.

* :func:`sample` runs pure-JAX kernels (:class:`regbayes.samplers.SamplingAlgorithm`) as
  compiled blocks of steps, several chains at once, with warm-up adaptation and thinning.
* :func:`run` runs host-loop algorithms (:class:`Algorithm`: numba Gibbs sweeps, SVA and
  mean-field loops), with ``tol`` until converged.

Both own progress, timing (compile time apart), traces, divergence detection
(:class:`DivergenceError`), and mixing checks (:class:`MixingWarning`); :func:`to_inference_data`
converts draws for ArviZ.
"""
from .arviz_io import diagnostics, to_inference_data
from .driver import CHAIN_METHODS, SampleResult, sample
from .errors import DivergenceError
from .host import Algorithm, RunResult, run
from .progress import progress_bar
from .step_adaptation import MixingWarning

__all__ = [
    "CHAIN_METHODS",
    "Algorithm",
    "DivergenceError",
    "MixingWarning",
    "RunResult",
    "SampleResult",
    "diagnostics",
    "progress_bar",
    "run",
    "sample",
    "to_inference_data",
]
