"""regbayes: Bayesian max-margin learning (Bayesian SVMs, DP mixtures of SVMs,
max-margin topic models, RegBayes) with stochastic subgradient MCMC in JAX."""
from .models import M2DPM, BayesianSVC, DPMeansSVC, InfiniteSVC, MedLDA, MultiTaskInfiniteLatentSVC, MultiTaskInfiniteLatentSVR

__all__ = ["BayesianSVC", "DPMeansSVC", "InfiniteSVC", "M2DPM", "MedLDA", "MultiTaskInfiniteLatentSVC", "MultiTaskInfiniteLatentSVR"]
__version__ = "0.1.0"
