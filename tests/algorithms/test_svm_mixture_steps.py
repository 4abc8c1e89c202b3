"""M2DPM's and DP-means' steps on the algorithm protocol: descent on every step, pure
steps, the driver's run-until-converged through the estimators, and pinned results."""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from regbayes.algorithms.dp_means import DPMeansInfo, dp_means_data, dp_means_init, dp_means_step
from regbayes.algorithms.m2dpm import M2DPMInfo, m2dpm_data, m2dpm_init, m2dpm_objective, m2dpm_step
from regbayes.datasets import make_dp_mixture_svm
from regbayes.inference import Algorithm, run
from regbayes.models.dpmeans import DPMeansSVC
from regbayes.models.m2dpm import M2DPM
from regbayes.potentials.svm_mixture import (
    ComponentSVM, classifier_features, dp_means_objective, feature_shift, svm_labels,
)


def _problem(seed, n_classes=2, divergence="euclidean", n=90, d=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 2.0) + rng.integers(0, 3, size=(n, 1)) * 3.0
    if divergence == "kl":
        X = rng.poisson(lam=np.exp(X / 3.0)).astype(float)
    codes = rng.integers(0, n_classes, size=n)
    codes[:n_classes] = np.arange(n_classes)
    return X, codes, rng


def _m2dpm_data(seed, n_classes=2, divergence="euclidean"):
    X, codes, rng = _problem(seed, n_classes, divergence)
    svm = ComponentSVM(n_classes, float(rng.uniform(0.1, 2.0)), float(rng.uniform(0.5, 2.0)),
                       float(rng.uniform(0.5, 2.0)))
    Xt = classifier_features(X, *feature_shift(X))
    return m2dpm_data(X, Xt, svm_labels(codes, n_classes), svm, divergence, float(rng.uniform(0.2, 5.0)),
                      float(rng.uniform(1.0, 15.0)))


@pytest.mark.parametrize("problem", range(8))
def test_m2dpm_step_never_increases_eq35(problem):
    # Theorem 1: z-, mu- and exact eta-step each lower eq. 35; only the rounding of its sum
    # may raise it (relative 1e-10), over steps with any seeds.
    data = _m2dpm_data(problem, n_classes=2 + problem % 2, divergence="kl" if problem % 4 == 3 else "euclidean")
    state = m2dpm_init(data)
    previous = m2dpm_objective(state, data)
    for seed in np.random.default_rng(problem).integers(0, 2**31 - 1, size=10):
        state, info = m2dpm_step(int(seed), state, data)
        assert isinstance(info, M2DPMInfo)
        assert info.objective <= previous + 1e-10 * abs(previous)
        assert info.n_components == state.means.shape[0] == state.weights.shape[0]
        assert np.array_equal(np.unique(state.labels), np.arange(info.n_components))
        assert info.objective == pytest.approx(m2dpm_objective(state, data), rel=1e-12)
        previous = info.objective


def test_m2dpm_step_is_pure_and_seeded():
    data = _m2dpm_data(1)
    state = m2dpm_init(data)
    labels, means, weights = state.labels.copy(), state.means.copy(), state.weights.copy()
    a, info_a = m2dpm_step(5, state, data)
    b, info_b = m2dpm_step(5, state, data)
    # The state passed in is unchanged, and the same seed gives the same step.
    assert np.array_equal(state.labels, labels) and np.array_equal(state.means, means)
    assert np.array_equal(state.weights, weights)
    assert np.array_equal(a.labels, b.labels) and info_a == info_b
    # The seed sets the visiting order: over a few seeds the first step differs.
    outcomes = {m2dpm_step(seed, state, data)[0].labels.tobytes() for seed in range(6)}
    assert len(outcomes) > 1


@pytest.mark.parametrize("seed", range(4))
def test_dp_means_step_never_increases_objective(seed):
    X, _, rng = _problem(seed, divergence="kl" if seed % 2 else "euclidean")
    data = dp_means_data(X, "kl" if seed % 2 else "euclidean", float(rng.uniform(2.0, 20.0)))
    state = dp_means_init(data)
    previous = np.inf
    for step_seed in range(8):
        state, info = dp_means_step(step_seed, state, data)
        assert isinstance(info, DPMeansInfo)
        assert info.objective <= previous + 1e-12 * abs(info.objective)
        assert info.objective == pytest.approx(
            dp_means_objective(data.divergence, data.cluster_penalty, X, state.labels, state.means), rel=1e-12)
        previous = info.objective


def test_driver_runs_the_step_as_the_estimator_does():
    # One run of the driver from Algorithm 1's start with the fit's key (run 0 of
    # n_init) is the estimator's fit.
    X, codes, _ = _problem(3)
    model = M2DPM(cluster_penalty=6.0, s=0.5, C=0.7, random_state=4).fit(X, codes)
    data = m2dpm_data(X, model._features(X), svm_labels(codes, 2), ComponentSVM(2, 0.7, 1.0, 1.0), "euclidean", 0.5, 6.0)
    start = m2dpm_init(data)
    result = run(Algorithm(m2dpm_step, "M2DPM"), start, data, model._fit_key(), n_iter=100, tol=1e-3,
                 initial_objective=m2dpm_objective(start, data))
    assert np.array_equal(result.state.labels, model.labels_)
    assert result.n_iter == model.n_iter_ and result.converged == model.converged_
    np.testing.assert_array_equal(result.trace["objective"], model.objective_[1:])


@pytest.mark.parametrize("make", [lambda **p: M2DPM(s=1.0, **p), lambda **p: DPMeansSVC(**p)])
def test_converged_flag_and_convergence_warning(make):
    X, y = make_dp_mixture_svm("I", n_samples=200, random_state=3)[:2]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = make(cluster_penalty=7.0, max_iter=100, tol=1e-3, random_state=0).fit(X, y)
    assert model.converged_ is True and 1 <= model.n_iter_ < 100
    with pytest.warns(ConvergenceWarning, match="did not converge in 1 iterations"):
        short = make(cluster_penalty=7.0, max_iter=1, tol=1e-12, random_state=0).fit(X, y)
    assert short.converged_ is False and short.n_iter_ == 1
    assert short.score(X, y) > 0.4  # a fitted, usable model all the same


# ---------------------------------------------------------------- pinned results
# Same random_state -> same visiting orders -> the same fit. These numbers pin the key
# derivation (one key per fit, the driver's per-iteration seeds) and the
# arithmetic of the steps; a change of either shows up here.
def test_m2dpm_pinned_fit():
    X, y = make_dp_mixture_svm("I", n_samples=200, random_state=11)[:2]
    model = M2DPM(cluster_penalty=7.0, s=1.0, C=0.3, random_state=7).fit(X, y)
    assert model.n_components_ == PINNED["M2DPM"]["n_components"]
    assert model.n_iter_ == PINNED["M2DPM"]["n_iter"]
    assert model.component_sizes_.tolist() == PINNED["M2DPM"]["sizes"]
    np.testing.assert_allclose(model.objective_, PINNED["M2DPM"]["objective"], rtol=1e-8)
    assert model.labels_[:12].tolist() == PINNED["M2DPM"]["labels"]
    restarts = M2DPM(cluster_penalty=5.0, s=1.0, C=0.3, n_init=3, random_state=7).fit(X, y)
    np.testing.assert_allclose(restarts.init_objectives_, PINNED["M2DPM"]["init_objectives"], rtol=1e-8)


def test_dpmeans_pinned_fit():
    X, y = make_dp_mixture_svm("I", n_samples=200, random_state=11)[:2]
    model = DPMeansSVC(cluster_penalty=7.0, C=0.3, random_state=7).fit(X, y)
    assert model.n_components_ == PINNED["DPMeansSVC"]["n_components"]
    assert model.n_iter_ == PINNED["DPMeansSVC"]["n_iter"]
    assert model.component_sizes_.tolist() == PINNED["DPMeansSVC"]["sizes"]
    np.testing.assert_allclose(model.objective_, PINNED["DPMeansSVC"]["objective"], rtol=1e-10)
    assert model.labels_[:12].tolist() == PINNED["DPMeansSVC"]["labels"]


PINNED = {
    "M2DPM": {
        "n_components": 4, "n_iter": 3, "sizes": [173, 4, 19, 4],
        "labels": [0, 0, 0, 0, 0, 2, 0, 0, 3, 0, 0, 0],
        "objective": [861.7956803354878, 382.4973600858761, 353.1504150977586, 353.1504150977586],
        # lambda = 5, n_init = 3: the final eq. 35 of runs 0, 1, 2
        "init_objectives": [346.694405959174, 346.7988235738051, 345.32561497823434],
    },
    "DPMeansSVC": {
        "n_components": 4, "n_iter": 3, "sizes": [173, 4, 19, 4],
        "labels": [0, 0, 0, 0, 0, 2, 0, 0, 3, 0, 0, 0],
        "objective": [327.65749248834766, 284.07892593519, 284.07892593519],
    },
}
