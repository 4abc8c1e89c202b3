"""``augmentation.inverse_gaussian`` against SciPy's inverse Gaussian.

Parameterisation: IG(mu, lam) with density sqrt(lam/(2 pi x^3)) exp(-lam (x-mu)^2/(2 mu^2 x))
is ``scipy.stats.invgauss(mu / lam, scale=lam)``; mean mu, variance mu^3 / lam, excess
kurtosis 15 mu / lam.

Tolerances: Kolmogorov–Smirnov p-value > 1e-4 per case (about a dozen KS tests, so a
correct sampler fails one with probability ~1e-3, while with 20 000 draws a CDF error of
~0.02 anywhere is detected); moments within 4.5 standard errors, the standard error of
the sample variance being sigma^2 sqrt((2 + kurtosis) / n).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats as st

from regbayes.precision import enable_x64
from regbayes.samplers.augmentation import inverse_gaussian

N_KS = 20_000
P_MIN = 1e-4

KS_CASES = [
    (1.0, 1.0),
    (0.3, 2.0),
    (5.0, 0.5),  # mu / lam = 10: long right tail
    (1e6, 1.0),  # huge mu: close to the Levy limit, the case of zeta ~ 0 in the Gibbs sampler
    (1e6, 1e7),
    (1e-4, 1.0),  # tiny mu: nearly Gaussian, sd 1e-6
    (1e-4, 1e-6),
]


def draws(key, mu, lam, n, dtype):
    x = inverse_gaussian(key, jnp.asarray(mu, dtype), jnp.asarray(lam, dtype), shape=(n,))
    assert x.dtype == dtype
    return np.asarray(x, dtype=np.float64)


@pytest.mark.parametrize("mu,lam", KS_CASES)
def test_inverse_gaussian_ks_float64(mu, lam):
    with enable_x64():
        x = draws(jax.random.key(11), mu, lam, N_KS, jnp.float64)
    assert np.all(np.isfinite(x)) and np.all(x > 0)
    p = st.kstest(x, st.invgauss(mu / lam, scale=lam).cdf).pvalue
    assert p > P_MIN, f"IG({mu}, {lam}) float64: KS p = {p:.2e}"


@pytest.mark.parametrize("mu,lam", [(1.0, 1.0), (1e6, 1.0), (1e-4, 1.0)])
def test_inverse_gaussian_ks_float32(mu, lam):
    x = draws(jax.random.key(12), mu, lam, N_KS, jnp.float32)
    assert np.all(np.isfinite(x)) and np.all(x > 0)
    p = st.kstest(x, st.invgauss(mu / lam, scale=lam).cdf).pvalue
    assert p > P_MIN, f"IG({mu}, {lam}) float32: KS p = {p:.2e}"


def test_inverse_gaussian_mean_and_variance_with_broadcasting():
    """Moments for cases whose kurtosis allows a meaningful variance check
    (mu / lam <= 1; for (1e6, 1) the kurtosis is 1.5e7 and only the KS test applies),
    drawn in one call with array-valued mu and lam broadcast against ``shape``."""
    mu = np.array([1.0, 0.3, 1e6, 1e-4, 2.0])
    lam = np.array([1.0, 2.0, 1e7, 1.0, 2.0])
    n = 200_000
    with enable_x64():
        x = np.asarray(inverse_gaussian(jax.random.key(13), jnp.asarray(mu), jnp.asarray(lam), shape=(n, mu.size)))
    assert x.shape == (n, mu.size)
    var = mu**3 / lam
    kurt = 15 * mu / lam
    mean_err = np.abs(x.mean(axis=0) - mu) / np.sqrt(var / n)
    var_err = np.abs(x.var(axis=0) - var) / (var * np.sqrt((2 + kurt) / n))
    assert np.all(mean_err < 4.5), mean_err
    assert np.all(var_err < 4.5), var_err


def test_inverse_gaussian_default_shape_broadcasts_mu_and_lam():
    x = inverse_gaussian(jax.random.key(0), jnp.ones((3, 1)), jnp.ones((4,)))
    assert x.shape == (3, 4)


@pytest.mark.parametrize(
    "dtype,mu",
    [
        # the values gibbs_svm passes when zeta == 0: mu = 1 / (c' * sqrt(tiny)), c' = 0.5
        ("float32", 2.0 / float(np.finfo(np.float32).tiny) ** 0.5),
        ("float64", 2.0 / float(np.finfo(np.float64).tiny) ** 0.5),
        ("float32", 1e20),
    ],
)
def test_inverse_gaussian_extreme_mu_is_levy(dtype, mu):
    """As mu -> inf, IG(mu, lam) -> Levy(0, lam) (draw ~ lam / v^2, v ~ N(0, 1)). The
    draws must stay positive and follow that limit; the Gibbs kernel feeds such mu
    whenever a margin zeta_i is exactly 0 (its |zeta| guard)."""
    lam = 1.0
    with enable_x64():
        x = draws(jax.random.key(14), mu, lam, N_KS, jnp.dtype(dtype))
    zeros = float(np.mean(x == 0))
    assert np.all(np.isfinite(x))
    assert zeros == 0.0, f"{zeros:.1%} of IG({mu:.3g}, 1) {dtype} draws are exactly 0"
    p = st.kstest(x, st.levy(scale=lam).cdf).pvalue
    assert p > P_MIN, f"IG({mu:.3g}, 1) {dtype} vs Levy(1): KS p = {p:.2e}"
