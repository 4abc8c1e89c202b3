"""regbayes: Bayesian max-margin learning (Bayesian SVMs, DP mixtures of SVMs,
max-margin topic models, RegBayes) with stochastic subgradient MCMC in JAX."""
from .models import (M2DPM, BayesianSVC, DPMeansSVC, DPMNLClassifier, IBPFeatures, InfiniteLatentSVC, InfiniteSVC, MedLDA,
                     MedLDARegressor, MultiTaskInfiniteLatentSVC, MultiTaskInfiniteLatentSVR, PassiveAggressiveMedLDA)
from .compilation_cache import enable_compilation_cache
from .persistence import ModelFileError, load

__all__ = ["BayesianSVC", "DPMeansSVC", "DPMNLClassifier", "IBPFeatures", "InfiniteLatentSVC", "InfiniteSVC", "M2DPM", "MedLDA",
           "MedLDARegressor", "MultiTaskInfiniteLatentSVC", "MultiTaskInfiniteLatentSVR", "PassiveAggressiveMedLDA",
           "enable_compilation_cache", "load", "ModelFileError"]
__version__ = "0.1.0"
