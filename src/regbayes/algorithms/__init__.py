"""Model-specific algorithms on the shared protocol (``init``/``step``), and the numba
kernels of the sequential discrete loops they call.

Each algorithm here knows its model (SVM data augmentation, LDA token sweeps, CRP and
DP-means assignment passes); the generic kernels of :mod:`regbayes.samplers` do not.
"""
from .gibbs_svm import gibbs_svm

__all__ = ["gibbs_svm"]
