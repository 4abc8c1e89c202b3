"""DPMNLClassifier: its posterior on a case with an exact answer, and the estimator contract.

Exact reference: with one component forced (``alpha = 1e-10``, one starting cluster: the
chance of opening a second component is about ``alpha`` per row and sweep) the experts'
posterior is the Bayesian multinomial logit ``N(beta; 0, nu^2 I) prod_i softmax_{y_i}(beta
x~_i)`` on the same inputs, which NumPyro's NUTS samples. Every coordinate of beta (3
classes x (2 features + intercept)) must agree in mean within 0.15 posterior sd and within
4 Monte Carlo standard errors of the difference (from the ESS of both chains), and in sd
within a ratio of [0.85, 1.15] and within 4 MCSE (the sd's MCSE ~ sd / sqrt(2 ESS) of the
centred squares). At these lengths 4 MCSE of the mean difference is 0.13-0.16 sd and of
the sd ratio about 0.10.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics.cluster import contingency_matrix

from regbayes import DPMNLClassifier
from regbayes.datasets import make_multiclass_blobs
from regbayes.diagnostics import compare_to_reference
from regbayes.samplers.defaults import SAMPLER_DEFAULTS


def _one_cluster_problem():
    rng = np.random.default_rng(0)
    n = 60
    X = rng.normal(size=(n, 2))
    W = np.array([[1.5, -1.0], [-1.0, 1.0], [0.0, 0.5]])
    logits = X @ W.T
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    y = np.array([rng.choice(3, p=pi) for pi in p])
    return X, y


def test_one_forced_component_matches_numpyro_nuts():
    numpyro = pytest.importorskip("numpyro")
    import jax
    import jax.numpy as jnp
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS

    X, y = _one_cluster_problem()
    nu = 1.0
    clf = DPMNLClassifier(alpha=1e-10, init_components=1, prior_scale=nu, n_iter=2600, n_warmup=100, random_state=0)
    clf.fit(X, y)
    assert np.all(clf.n_components_trace_ == 1)
    k = np.flatnonzero(clf.component_active_[0])[0]
    assert np.all(clf.component_active_[:, k])
    ours = clf._expert_samples[:, k].reshape(len(clf._expert_samples), -1)  # beta on x~ = (x - xbar, s)

    design = clf._design(X)

    def model(inputs, labels):
        beta = numpyro.sample("beta", dist.Normal(0.0, nu).expand([3, inputs.shape[1]]).to_event(2))
        numpyro.sample("y", dist.Categorical(logits=inputs @ beta.T), obs=labels)

    mcmc = MCMC(NUTS(model), num_warmup=500, num_samples=3000, progress_bar=False)
    mcmc.run(jax.random.key(0), jnp.asarray(design, jnp.float32), jnp.asarray(y))
    ref = np.asarray(mcmc.get_samples()["beta"], np.float64).reshape(3000, -1)
    agreement = compare_to_reference(ours, ref)
    assert np.all(np.abs(agreement.mean_error) < 0.15), agreement.mean_error
    assert np.all((0.85 <= agreement.sd_ratio) & (agreement.sd_ratio <= 1.15)), agreement.sd_ratio
    assert agreement.within_monte_carlo_error(4.0), agreement
    assert 0.5 < clf.trace_["acceptance"].mean() <= 1.0


def _xor_blobs(seed=0, n=40):
    """Four round blobs (sd 1, 7 apart) with XOR labels: one component per blob classifies
    perfectly, one linear rule at most 75 %."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [7.0, 0.0], [0.0, 7.0], [7.0, 7.0]])
    X = np.concatenate([c + rng.normal(size=(n, 2)) for c in centres])
    y = np.repeat([0, 1, 1, 0], n)
    return X, y


def test_recovers_well_separated_clusters():
    X, y = _xor_blobs()
    clf = DPMNLClassifier(n_iter=40, n_warmup=20, random_state=0).fit(X, y)
    large = (clf.component_sizes_ >= 24).sum(axis=1)  # components with at least 15 % of the rows
    assert np.bincount(large).argmax() == 4
    # no component of 5+ rows in the last iteration mixes blobs
    table = contingency_matrix(np.repeat(np.arange(4), 40), clf.labels_)  # (blob, component)
    sizeable = table.sum(axis=0) >= 5
    assert np.all(table[:, sizeable].max(axis=0) > 0.9 * table[:, sizeable].sum(axis=0))
    assert clf.n_components_ == len(np.unique(clf.labels_))
    assert clf.score(X, y) > 0.95
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[np.argmax(proba, axis=1)])
    S = clf.n_iter - clf.n_warmup
    assert clf.coef_samples_.shape[0] == S and clf.coef_samples_.shape[2:] == (2,)  # binary: the contrast
    assert clf.intercept_samples_.shape == clf.coef_samples_.shape[:2] == clf.component_active_.shape
    # the contrast in the original coordinates reproduces the experts' log-odds
    s, k = S - 1, np.flatnonzero(clf.component_active_[-1])[0]
    beta = clf._expert_samples[s, k]
    log_odds = clf._design(X) @ (beta[1] - beta[0])
    np.testing.assert_allclose(X @ clf.coef_samples_[s, k] + clf.intercept_samples_[s, k], log_odds, rtol=1e-9, atol=1e-9)
    assert len(clf.trace_["beta_seconds"]) == clf.n_iter and clf.trace_["compile_seconds"] >= 0


def test_multiclass_thinning_and_determinism():
    X, y = make_multiclass_blobs(n_samples=120, n_features=2, n_classes=3, class_sep=2.0, random_state=0)
    a = DPMNLClassifier(n_iter=12, n_warmup=4, thin=2, random_state=4).fit(X, y)
    b = DPMNLClassifier(n_iter=12, n_warmup=4, thin=2, random_state=4).fit(X, y)
    c = DPMNLClassifier(n_iter=12, n_warmup=4, thin=2, random_state=5).fit(X, y)
    np.testing.assert_array_equal(a.coef_samples_, b.coef_samples_)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.coef_samples_.shape[0] == 4 and a.coef_samples_.shape[2:] == (3, 2)
    assert a.intercept_samples_.shape == a.coef_samples_.shape[:3]
    assert not np.array_equal(a.coef_samples_[-1], c.coef_samples_[-1])
    assert a.score(X, y) > 0.85
    assert a.step_size_ == SAMPLER_DEFAULTS["shmc"].relative_step and a.n_warmup_ == 4
    radius = np.sqrt(np.mean(np.sum((X - X.mean(axis=0)) ** 2, axis=1)))
    np.testing.assert_allclose(a.intercept_scaling_, radius)
    np.testing.assert_allclose(a.x_offset_, X.mean(axis=0))


BAD_DATA = {  # error message -> (X, y)
    "NaN": ([[np.nan, 1.0], [1.0, 2.0]], [0, 1]),
    "1 class": ([[0.0, 1.0], [1.0, 2.0]], [1, 1]),
    "inconsistent": ([[0.0, 1.0], [1.0, 2.0]], [0, 1, 1]),
    "0 sample": (np.zeros((0, 2)), []),
}
BAD_PARAMS = {  # error message -> parameters
    "alpha": {"alpha": 0.0}, "prior_scale": {"prior_scale": -1.0}, "n_warmup": {"n_warmup": 10, "n_iter": 10},
    "thin": {"thin": 0}, "niw_dof": {"niw_dof": 2.0}, "niw_covariance": {"niw_covariance": np.eye(3)},
    "niw_mean": {"niw_mean": [0.0]}, "step_size": {"step_size": 0.0}, "n_leapfrog": {"n_leapfrog": 0},
    "n_auxiliary": {"n_auxiliary": 0}, "init": {"init": "random"},
}


@pytest.mark.parametrize("match", list(BAD_DATA) + list(BAD_PARAMS))
def test_bad_input(match):
    X, y = BAD_DATA.get(match, _xor_blobs(n=5))
    X, y = np.asarray(X, float), np.asarray(y)
    X_before = X.copy()
    with pytest.raises(ValueError, match=match):
        DPMNLClassifier(**{"n_iter": 3, "n_warmup": 1, **BAD_PARAMS.get(match, {})}).fit(X, y)
    np.testing.assert_array_equal(X, X_before)  # never modified in place


def test_predict_before_fit_and_wrong_width():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        DPMNLClassifier().predict(np.zeros((2, 2)))
    X, y = _xor_blobs()  # the shapes of the cluster test: no new program to compile
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = DPMNLClassifier(n_iter=3, n_warmup=1).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :1])
