"""Simulation-based calibration of the library's samplers for its generative models
(``regbayes.diagnostics.simulation_based_calibration``; issue 21, deliverable 3).

Each simulation draws parameters from the prior and data from the model, runs the
library's sampler on the data and ranks the true value among the posterior draws; for a
correct sampler the ranks are uniform. Tolerance: a chi-square p-value above 1e-3 for the
exact sampler. Each test also runs a deliberately wrong sampler on the same simulations
and requires p < 1e-6, so that the check has the power to fail.

* Topics: eq. 22's token sweep with the topics fixed (``topic_inference``): the topic
  proportions of a document drawn from LDA, ``theta | z ~ Dir(alpha + n_d)`` per kept sweep.
* Mixtures: the CRP sweep of the infinite SVM and dpMNL (``crp_kernels``) with a zero
  classifier weight (``C = 0``), which leaves a Dirichlet-process mixture of Gaussians with
  the NIW base measure: the number of clusters and the size of the first row's cluster
  (statistics with atoms; the ranks break ties at random).

The IBP models are fitted by mean field, not sampled; SBC does not apply to them.
"""
from __future__ import annotations

import numpy as np
from scipy.stats import invwishart

from regbayes.algorithms import lda_kernels as kern
from regbayes.algorithms import topic_inference
from regbayes.algorithms.crp_kernels import crp_sweep
from regbayes.diagnostics import simulation_based_calibration
from regbayes.potentials import niw

N_DRAWS = 49  # ranks in 0..49: five bins of ten


# ----------------------------------------------------------------------------- topics
K, V, N_TOKENS, ALPHA = 3, 12, 15, 0.5
PHI = np.random.default_rng(7).dirichlet(np.full(V, 0.5), size=K)


def simulate_document(rng):
    theta = rng.dirichlet(np.full(K, ALPHA))
    z = rng.choice(K, size=N_TOKENS, p=theta)
    words = np.array([rng.choice(V, p=PHI[k]) for k in z], np.int32)
    return theta[:2], words


def document_posterior(words, seed, phi=PHI, thin=3, burn=30):
    doc_ptr = np.array([0, len(words)], np.int64)
    _, _, z_kept, _ = topic_inference.fixed_topic_sweeps(
        1, doc_ptr, words, np.empty(len(words), np.int32), np.ascontiguousarray(phi.T), np.zeros((0, K)),
        np.zeros((1, 0)), np.zeros(1, np.int64), kern.MODE_UNSUPERVISED, 0.0, 0.0, ALPHA, burn + N_DRAWS * thin,
        burn, seed, True, kern.document_keys(doc_ptr, words), True)
    counts = np.stack([np.bincount(z, minlength=K) for z in z_kept[thin - 1::thin]])
    rng = np.random.default_rng(seed)
    return np.stack([rng.dirichlet(ALPHA + c) for c in counts])[:, :2]


def test_topic_proportions_of_the_fixed_topic_sweep_are_calibrated():
    exact = simulation_based_calibration(simulate_document, document_posterior, 300, random_state=0)
    assert exact.ranks.shape == (300, 2) and exact.n_draws == N_DRAWS
    assert np.all(exact.pvalues(n_bins=5) > 1e-3), exact.pvalues(n_bins=5)
    swapped = simulation_based_calibration(  # a sampler given topics 1 and 2 in each other's place
        simulate_document, lambda w, s: document_posterior(w, s, phi=PHI[[1, 0, 2]]), 150, random_state=0)
    assert np.all(swapped.pvalues(n_bins=5) < 1e-6), swapped.pvalues(n_bins=5)


# ----------------------------------------------------------------------------- mixtures
N_ROWS, CRP_ALPHA = 8, 1.0
PRIOR = niw.niw_prior(np.zeros(1), 0.2, 3.0, np.eye(1))


def simulate_mixture(rng):
    """A CRP partition of the rows, then per cluster (mu, Sigma) ~ NIW and its rows ~ N(mu, Sigma)."""
    z, sizes = np.zeros(N_ROWS, np.int64), [1]
    for i in range(1, N_ROWS):
        weights = np.array(sizes + [CRP_ALPHA])
        k = rng.choice(len(weights), p=weights / weights.sum())
        if k == len(sizes):
            sizes.append(0)
        sizes[k] += 1
        z[i] = k
    X = np.empty((N_ROWS, 1))
    for k in range(len(sizes)):
        sigma = np.atleast_2d(invwishart.rvs(PRIOR.dof, PRIOR.scale, random_state=rng))
        mu = rng.multivariate_normal(PRIOR.mean, sigma / PRIOR.kappa)
        X[z == k] = rng.multivariate_normal(mu, sigma, size=int(np.sum(z == k)))
    return np.array([len(sizes), sizes[0]], np.float64), X


def mixture_posterior(X, seed, alpha=CRP_ALPHA, thin=2, burn=10):
    slots = 16
    z, counts = -np.ones(N_ROWS, np.int64), np.zeros(slots, np.int64)
    means, chols = np.repeat(PRIOR.mean[None], slots, 0), np.repeat(PRIOR.chol[None], slots, 0)
    eta, design, Y = np.zeros((slots, 1, 1)), np.zeros((N_ROWS, 1)), np.ones((N_ROWS, 1))
    draws = []
    for sweep in range(burn + N_DRAWS * thin):
        if z[0] >= 0:
            counts, means, chols = niw.component_posteriors(PRIOR, X, z, counts.shape[0])
        z, counts, means, chols, eta, _ = crp_sweep(
            X, design, Y, z, counts, means, chols, eta, alpha=alpha, C=0.0, margin=1.0, prior_scale=1.0,
            prior_mean=PRIOR.mean, prior_kappa=PRIOR.kappa, prior_dof=PRIOR.dof, prior_chol=PRIOR.chol, n_aux=2,
            seed=seed + sweep)
        if sweep >= burn and (sweep - burn) % thin == thin - 1:
            draws.append([np.count_nonzero(counts), counts[z[0]]])
    return np.asarray(draws, np.float64)


def test_crp_sweep_of_a_dp_gaussian_mixture_is_calibrated():
    exact = simulation_based_calibration(simulate_mixture, mixture_posterior, 150, random_state=1)
    assert np.all(exact.pvalues(n_bins=5) > 1e-3), exact.pvalues(n_bins=5)
    wrong = simulation_based_calibration(  # a sampler run with three times the concentration
        simulate_mixture, lambda X, s: mixture_posterior(X, s, alpha=3.0 * CRP_ALPHA), 60, random_state=1)
    assert wrong.pvalues(n_bins=5)[0] < 1e-6, wrong.pvalues(n_bins=5)

