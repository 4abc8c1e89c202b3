"""Model math: losses with explicit subgradients, priors, and potentials ``U(theta; D)``."""
from .features import PaddedRows, csr_to_padded
from .linear_svm import (
    SVMData,
    block_noise,
    build_potential,
    full_subgradient,
    hinge_subgradient_sum,
    minibatch_noise,
    rare_feature_rows,
    sigma_ref,
    weight_norm_bound,
)

__all__ = ["PaddedRows", "SVMData", "block_noise", "build_potential", "csr_to_padded", "full_subgradient",
           "hinge_subgradient_sum", "minibatch_noise",
           "rare_feature_rows", "sigma_ref", "weight_norm_bound"]
