"""Driver (chains, warm-up, thinning, progress, divergence) and ArviZ conversion."""
from .arviz_io import diagnostics, to_inference_data
from .driver import DivergenceError, SampleResult, sample

__all__ = ["DivergenceError", "SampleResult", "diagnostics", "sample", "to_inference_data"]
