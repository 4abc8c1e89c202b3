"""scikit-learn estimators: thin classes over potentials, kernels and the driver."""
from .bayes_svm import BayesianSVC
from .medlda import MedLDA

__all__ = ["BayesianSVC", "MedLDA"]
