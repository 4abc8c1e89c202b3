"""scikit-learn estimators: thin classes over potentials, kernels and the driver."""
from .bayes_svm import BayesianSVC

__all__ = ["BayesianSVC"]
