"""Small synthetic classification sets from the papers.

``make_bayes_svm_2d`` is the 2-D synthetic experiment of paper 000 (stochastic
subgradient MCMC for Bayesian max-margin models), Section 5.1.1: x_i ~ U(0, 1)^2 i.i.d.,
eta ~ N(0, (1/3) I), and y_i ~ Bernoulli(delta_i) with

    delta_i = psi(+1 | x_i, eta) / (psi(+1 | x_i, eta) + psi(-1 | x_i, eta)),

where psi is the hinge pseudo-likelihood of Section 3.3 (the likelihood whose subgradient
is eq. 15): psi(y | x, eta) = exp(-c * max(0, l - y * eta^T x)).

``make_multiclass_blobs`` is a thin wrapper over scikit-learn's ``make_classification``
(one Gaussian cluster per class at the vertices of a hypercube of side 2 * class_sep)
that also accepts a ``np.random.Generator``.
"""

from __future__ import annotations

import numpy as np
from sklearn.datasets import make_classification

from ..rng import check_generator, int_seed
from ..validation import check_int, check_real

__all__ = ["make_bayes_svm_2d", "hinge_label_probability", "make_multiclass_blobs"]


def hinge_label_probability(scores, c: float = 1.0, margin: float = 1.0) -> np.ndarray:
    """P(y = +1) = psi(+1) / (psi(+1) + psi(-1)) for discriminant values ``scores``.

    psi(y) = exp(-c * max(0, margin - y * score)) (paper 000, Section 3.3). Computed as
    a logistic function of log psi(+1) - log psi(-1), which never overflows.
    """
    f = np.asarray(scores, dtype=np.float64)
    log_ratio = -c * (np.maximum(0.0, margin - f) - np.maximum(0.0, margin + f))
    return 0.5 * (1.0 + np.tanh(0.5 * log_ratio))


def make_bayes_svm_2d(
    n_samples: int = 1000,
    c: float = 1.0,
    margin: float = 1.0,
    prior_var: float = 1.0 / 3.0,
    random_state=None,
    return_coef: bool = False,
):
    """Generate the 2-D Bayesian linear SVM data of paper 000, Section 5.1.1.

    Parameters
    ----------
    n_samples : int
        Number of observations (the paper uses 1000).
    c : float > 0
        Scale of the hinge pseudo-likelihood psi.
    margin : float >= 0
        The margin l in psi.
    prior_var : float > 0
        Variance of each coordinate of eta ~ N(0, prior_var * I) (the paper: 1/3).
    random_state : None, int or np.random.Generator
        Draw order: X (n_samples x 2 uniforms), then eta (2 normals), then the labels.
    return_coef : bool
        Also return eta.

    Returns
    -------
    X : ndarray of shape (n_samples, 2), float64
    y : ndarray of shape (n_samples,), int64, values in {-1, +1}
    coef : ndarray of shape (2,), float64, only if ``return_coef``
    """
    n_samples = check_int("n_samples", n_samples)
    c = check_real("c", c, low=0.0, low_inclusive=False)
    margin = check_real("margin", margin, low=0.0)
    prior_var = check_real("prior_var", prior_var, low=0.0, low_inclusive=False)
    rng = check_generator(random_state)

    X = rng.uniform(0.0, 1.0, size=(n_samples, 2))
    coef = rng.normal(0.0, np.sqrt(prior_var), size=2)
    p_pos = hinge_label_probability(X @ coef, c=c, margin=margin)
    y = np.where(rng.uniform(size=n_samples) < p_pos, 1, -1).astype(np.int64)
    if return_coef:
        return X, y, coef
    return X, y


def make_multiclass_blobs(
    n_samples: int = 1000,
    n_features: int = 2,
    n_classes: int = 3,
    class_sep: float = 1.0,
    random_state=None,
):
    """Gaussian classes for multi-class tests: ``sklearn.datasets.make_classification``
    with all features informative, one cluster per class and no label noise.

    An int ``random_state`` is passed to scikit-learn unchanged (same data as
    ``make_classification(..., random_state=seed)``); a Generator supplies one seed.

    Returns ``X`` (n_samples, n_features) float64 and ``y`` int64 in {0, ..., n_classes-1}.
    """
    n_samples = check_int("n_samples", n_samples)
    n_features = check_int("n_features", n_features)
    n_classes = check_int("n_classes", n_classes, 2)
    class_sep = check_real("class_sep", class_sep, low=0.0, low_inclusive=False)
    if n_classes > 2**n_features:
        raise ValueError(
            f"n_classes={n_classes} needs n_features >= log2(n_classes); "
            f"got n_features={n_features} (classes sit on hypercube vertices)"
        )
    if n_samples < n_classes:
        raise ValueError(f"n_samples={n_samples} must be >= n_classes={n_classes}")
    seed = int_seed(random_state)
    X, y = make_classification(
        n_samples=n_samples,
        n_features=n_features,
        n_informative=n_features,
        n_redundant=0,
        n_repeated=0,
        n_classes=n_classes,
        n_clusters_per_class=1,
        class_sep=class_sep,
        flip_y=0.0,
        shuffle=True,
        random_state=seed,
    )
    return X.astype(np.float64, copy=False), y.astype(np.int64, copy=False)
