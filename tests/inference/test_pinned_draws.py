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
without it are unchanged.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from regbayes import BayesianSVC
from regbayes.datasets import make_higgs_like

LAST_DRAW = {
    "ssgld": [
        [0.1444071, -0.1948627, 0.2089302, 0.1910712, 0.02815599, 0.1235156, 0.5657951, 0.7328054, -0.3778463],
        [0.1566029, -0.05256986, 0.3470653, 0.2006087, 0.06952882, 0.0185767, 0.4143032, 0.5802265, -0.3473898],
    ],
    "ssgnht": [
        [0.1235413, -0.1978581, 0.3170477, 0.1182913, 0.09783397, 0.1751412, 0.436773, 0.7257742, -0.2564442],
        [0.1544916, -0.05036951, 0.2376851, 0.1534136, 0.2095563, 0.1172021, 0.4153172, 0.748671, -0.3146499],
    ],
    "shmc": [
        [0.3384772, -0.4129283, 0.3057461, -0.010982, 0.1488093, -0.096821, 0.5132374, 0.7138332, -0.2275836],
        [0.1314215, -0.4871384, 0.1946164, -0.0257669, -0.051729, 0.1430227, 0.5537456, 0.7524677, -0.4810857],
    ],
    "srwm": [
        [0.132085, -0.3059426, 0.0377258, 0.2116041, 0.1250511, 0.2493967, 0.368081, 0.7279338, -0.3893129],
        [0.0700246, -0.4377262, 0.3484266, 0.2235094, 0.0803573, 0.2744539, 0.4914131, 0.7761879, -0.2940405],
    ],
}

#: the potential at the last draw per chain (srwm records none)
LAST_POTENTIAL = {"ssgld": [243.08823, 267.42575], "ssgnht": [242.85081, 274.84814], "shmc": [230.55367, 229.98207]}

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


@pytest.fixture(scope="module")
def data():
    return make_higgs_like(300, n_features=8, random_state=0, dtype=np.float32)


@pytest.mark.parametrize("sampler", sorted(LAST_DRAW))
def test_same_seed_gives_the_pinned_draws(sampler, data):
    X, y = data
    clf = BayesianSVC(sampler=sampler, n_warmup=200, n_draws=30, thin=3, n_chains=2, batch_size=50, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few draws: ArviZ's small-sample notes
        clf.fit(X, y)
    last = np.concatenate([clf.coef_draws_[:, -1], clf.intercept_draws_[:, -1, None]], axis=1)
    np.testing.assert_allclose(last, LAST_DRAW[sampler], rtol=1e-5, atol=2e-6)
    stats = clf.idata_.sample_stats
    if sampler in LAST_POTENTIAL:
        np.testing.assert_allclose(stats["potential"].values[:, -1], LAST_POTENTIAL[sampler], rtol=1e-5)
    else:
        assert "potential" not in stats


@pytest.mark.parametrize("sampler", sorted(UNCALIBRATED))
def test_without_step_adaptation_the_draws_are_those_before_it(sampler, data, monkeypatch):
    X, y = data
    monkeypatch.setattr(BayesianSVC, "_calibration", lambda self, *args: None)
    clf = BayesianSVC(sampler=sampler, n_warmup=200, n_draws=30, thin=3, n_chains=2, batch_size=50, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    draws, potential = UNCALIBRATED[sampler]
    last = np.concatenate([clf.coef_draws_[:, -1], clf.intercept_draws_[:, -1, None]], axis=1)
    np.testing.assert_allclose(last, draws, rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(clf.idata_.sample_stats["potential"].values[:, -1], potential, rtol=1e-5)
