"""Same seed, same draws: BayesianSVC's last draw per chain, pinned for every gradient sampler.

The numbers were computed before each kernel got its own ``info`` record and before the
driver chose loops of fixed length on the CPU; neither may change the draws. The run
covers warm-up with both adaptation windows (a dense whitening transform for 9
coordinates), thinning and two vmapped chains. A change of the random stream or of a
kernel's arithmetic moves these numbers by O(0.1); float32 rounding by far less than the
tolerance.

Since warm-up adapts SSGLD's and SSGNHT's steps to the minibatch noise
(:mod:`regbayes.inference.step_adaptation`), their default draws are pinned anew
(``LAST_DRAW``); the numbers before that change stay pinned for the same fits with the
adaptation turned off (``UNCALIBRATED``): the kernels' arithmetic and random stream
without it are unchanged. They were pinned anew again when the adaptation began to turn a
dense transform onto the eigenvectors of the minibatch noise, measured at 32 positions.
SHMC's and SRWM's default steps are tuned in warm-up since
(:mod:`regbayes.inference.step_size_tuning`): their default draws are pinned anew, and
their former pins hold for the former default steps given explicitly (``UNTUNED``).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from regbayes import BayesianSVC
from regbayes.datasets import make_higgs_like

LAST_DRAW = {
    "ssgld": [
        [0.2386658, -0.2219478, 0.1624794, 0.03073074, 0.08062723, 0.0615153, 0.6247661, 0.7037814, -0.2354486],
        [0.2422169, -0.2684343, 0.3180906, 0.2135144, -0.06207826, 0.01180213, 0.6049685, 0.7085432, -0.4910139],
    ],
    "ssgnht": [
        [0.06705575, -0.1636249, 0.2277628, 0.05466551, 0.06236946, -0.03095166, 0.4631605, 0.8283674, -0.2857983],
        [0.05327074, -0.2834654, 0.206068, 0.08107782, -0.01321501, 0.006206039, 0.419328, 0.6634278, -0.3388664],
    ],
    "shmc": [
        [0.2558979, -0.2800417, 0.2815451, 0.0714629, 0.1179009, -0.0019945, 0.4596478, 0.7092237, -0.2841755],
        [0.2627541, -0.2772588, 0.1241964, 0.1771338, 0.0037951, -0.0490815, 0.4626007, 0.7622224, -0.3561657],
    ],
    "srwm": [
        [0.1336111, -0.4195094, 0.1753648, -0.0415025, 0.0317667, 0.2258733, 0.44066, 0.6897503, -0.3422242],
        [0.1462478, -0.1456188, 0.1678305, -0.0095274, -0.0043513, 0.136352, 0.4990173, 0.887395, -0.3738787],
    ],
}

#: the potential at the last draw per chain (srwm records none)
LAST_POTENTIAL = {"ssgld": [244.99115, 272.81689], "ssgnht": [246.46207, 276.89371], "shmc": [226.89488, 228.64636]}

#: The same SSGLD and SSGNHT fits without warm-up's step adaptation: the pins before it.
UNCALIBRATED = {
    "ssgld": (
        [[0.1553563, -0.2077611, 0.171393, 0.1697561, 0.0459471, 0.1193582, 0.5208499, 0.7315665, -0.477216],
         [0.1217353, -0.0370598, 0.3695768, 0.2213467, 0.0771664, -0.0248077, 0.4467761, 0.6512458, -0.3109346]],
        [241.54686, 265.72635],
    ),
    "ssgnht": (
        [[0.1155598, -0.2124639, 0.2815345, 0.1182474, 0.1097241, 0.1578431, 0.4193834, 0.7265241, -0.2811333],
         [0.1814759, 0.0024489, 0.2217238, 0.164816, 0.2175189, 0.0269677, 0.3634955, 0.7567577, -0.3289607]],
        [241.64346, 280.99185],
    ),
}


#: SHMC and SRWM with their former default steps given explicitly (no tuning): the pins
#: before tuning (srwm records no potential).
UNTUNED = {
    "shmc": (
        0.3,
        [[0.3384772, -0.4129283, 0.3057461, -0.010982, 0.1488093, -0.096821, 0.5132374, 0.7138332, -0.2275836],
         [0.1314215, -0.4871384, 0.1946164, -0.0257669, -0.051729, 0.1430227, 0.5537456, 0.7524677, -0.4810857]],
        [230.55367, 229.98207],
    ),
    "srwm": (
        2.38 / 3.0,  # 2.38 / sqrt(9 coordinates)
        [[0.132085, -0.3059426, 0.0377258, 0.2116041, 0.1250511, 0.2493967, 0.368081, 0.7279338, -0.3893129],
         [0.0700246, -0.4377262, 0.3484266, 0.2235094, 0.0803573, 0.2744539, 0.4914131, 0.7761879, -0.2940405]],
        None,
    ),
}


@pytest.fixture(scope="module")
def data():
    return make_higgs_like(300, n_features=8, random_state=0, dtype=np.float32)


def _fit_last_draws(X, y, sampler, **kwargs):
    """The pinned fit: each chain's last draw (coefficients and intercept) and the estimator."""
    clf = BayesianSVC(sampler=sampler, n_warmup=200, n_draws=30, thin=3, n_chains=2, batch_size=50, random_state=3,
                      **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few draws: ArviZ's small-sample notes
        clf.fit(X, y)
    return np.concatenate([clf.coef_draws_[:, -1], clf.intercept_draws_[:, -1, None]], axis=1), clf


@pytest.mark.parametrize("sampler", sorted(LAST_DRAW))
def test_same_seed_gives_the_pinned_draws(sampler, data):
    last, clf = _fit_last_draws(*data, sampler)
    np.testing.assert_allclose(last, LAST_DRAW[sampler], rtol=1e-5, atol=2e-6)
    stats = clf.idata_.sample_stats
    if sampler in LAST_POTENTIAL:
        np.testing.assert_allclose(stats["potential"].values[:, -1], LAST_POTENTIAL[sampler], rtol=1e-5)
    else:
        assert "potential" not in stats


@pytest.mark.parametrize("sampler", sorted(UNCALIBRATED))
def test_without_step_adaptation_the_draws_are_those_before_it(sampler, data, monkeypatch):
    monkeypatch.setattr(BayesianSVC, "_calibration", lambda self, *args: None)
    last, clf = _fit_last_draws(*data, sampler)
    draws, potential = UNCALIBRATED[sampler]
    np.testing.assert_allclose(last, draws, rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(clf.idata_.sample_stats["potential"].values[:, -1], potential, rtol=1e-5)


@pytest.mark.parametrize("sampler", sorted(UNTUNED))
def test_a_step_given_is_not_tuned_and_gives_the_draws_before_tuning(sampler, data):
    step, draws, potential = UNTUNED[sampler]
    last, clf = _fit_last_draws(*data, sampler, step_size=step)
    np.testing.assert_allclose(last, draws, rtol=1e-5, atol=2e-6)
    if potential is not None:
        np.testing.assert_allclose(clf.idata_.sample_stats["potential"].values[:, -1], potential, rtol=1e-5)
    assert clf.step_size_ == step
