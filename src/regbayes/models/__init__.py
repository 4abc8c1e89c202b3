"""scikit-learn estimators: thin classes over potentials, kernels and the driver."""
from .bayes_svm import BayesianSVC
from .dpmeans import DPMeansSVC
from .dpmnl import DPMNLClassifier
from .ibp_features import IBPFeatures
from .ilsvm import InfiniteLatentSVC
from .isvm import InfiniteSVC
from .m2dpm import M2DPM
from .medlda import MedLDA
from .medlda_regressor import MedLDARegressor
from .mt_ilsvm import MultiTaskInfiniteLatentSVC, MultiTaskInfiniteLatentSVR
from .pa_medlda import PassiveAggressiveMedLDA

__all__ = ["BayesianSVC", "DPMeansSVC", "DPMNLClassifier", "IBPFeatures", "InfiniteLatentSVC", "InfiniteSVC", "M2DPM", "MedLDA",
           "MedLDARegressor", "MultiTaskInfiniteLatentSVC", "MultiTaskInfiniteLatentSVR", "PassiveAggressiveMedLDA"]
