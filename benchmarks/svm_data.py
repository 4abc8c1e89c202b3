"""The data of the Bayesian linear SVM benchmarks: HIGGS-shaped rows, regbayes' ``SVMData``
with the intercept column, and the posterior width ``sigma_ref`` that sets the BlackJAX
step and the NUTS start."""
from __future__ import annotations


import numpy as np

N_FEATURES = 28


def make_data(n_train, n_test, seed):
    from regbayes.datasets import make_higgs_like

    X, y = make_higgs_like(n_train + n_test, n_features=N_FEATURES, random_state=seed, dtype=np.float32)
    source = "regbayes.datasets.make_higgs_like"
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:], source


def augment(X):
    return np.hstack([X, np.ones((X.shape[0], 1), X.dtype)])


def svm_data(X, y, C, margin, prior_scale, dtype=np.float32):
    import jax.numpy as jnp

    from regbayes.potentials import SVMData

    return SVMData(
        jnp.asarray(augment(X).astype(dtype)),
        jnp.asarray((2.0 * y - 1.0).astype(dtype)),
        jnp.asarray(C, dtype),
        jnp.asarray(margin, dtype),
        jnp.asarray(prior_scale, dtype),
    )


def sigma_ref(X, C, prior_scale):
    """(1/nu^2 + C N mean(x^2))^(-1/2) over the augmented design, as BayesianSVC computes it
    (:func:`regbayes.potentials.sigma_ref`)."""
    from regbayes.potentials import sigma_ref as design_sigma_ref

    return design_sigma_ref(np.asarray(X, np.float64), C, prior_scale, fit_intercept=True)
