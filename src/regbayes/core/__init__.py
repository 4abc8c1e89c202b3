"""RegBayes itself (paper 002, sections 3.2-3.3): the conjugates of the max-margin
regularisers (Lemmas 9-11), the dual problems they give for a Gaussian prior (eqs. 28 and
34, Lemma 11), and the Gibbs-classifier posterior builder for a user's own JAX model."""
from .conjugates import g0, g0_conjugate, g1, g1_conjugate, g2, g2_conjugate
from .duals import DualSolution, binary_svm_dual, crammer_singer_dual, svr_dual
from .gibbs_posterior import GibbsData, GibbsPosterior, gibbs_posterior

__all__ = [
    "DualSolution", "binary_svm_dual", "crammer_singer_dual", "svr_dual",
    "GibbsData", "GibbsPosterior", "gibbs_posterior",
    "g0", "g0_conjugate", "g1", "g1_conjugate", "g2", "g2_conjugate",
]
