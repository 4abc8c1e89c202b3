"""InfiniteSVC: its conditionals against exact answers, and the estimator contract.

Exact references and tolerances:

* z | eta (numba CRP sweep, hinge switched off with C = 0): the chain over partitions of
  4 points must visit each of the 15 partitions with the probability
  ``∝ alpha^K prod_k (n_k - 1)! p(X_k)`` (CRP times the NIW marginal likelihood), computed by
  enumeration; |frequency - p| <= 4.5 MCSE (MCSE from the ESS of the indicator series).
* eta | z, Gibbs (data augmentation on a component's padded member block): the
  grid-integrated posterior of ``tests/support/svm_reference.py`` with the EXACT tolerance.
  Non-member rows sit in the design next to the component's rows, so masking errors show.
  (The SSGNHT and SSGLD eta steps against their references:
  ``tests/algorithms/test_isvm_sgmcmc.py``.)
* The whole estimator with one component forced (alpha = 1e-8, one k-means cluster):
  SSGLD's and SSGNHT's draws of the component's classifier against a long run of the
  Gibbs eta step (binary), and Crammer–Singer draws against a long random-walk Metropolis
  run (3 classes, one feature and the intercept: eta of shape (3, 2)); means within
  10 % sd, sds within 10 %, plus 4.5 combined MCSE (ESS from ArviZ).
* Crammer–Singer against one-vs-rest on a 5-class DP mixture built from
  ``make_dp_mixture_svm``'s clusters: mean test accuracy over 3 seeds at least
  one-vs-rest's minus one standard error.
* The rank-one up/downdates of the sweep agree with statistics recomputed from scratch.
"""
from __future__ import annotations


import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import gammaln

from regbayes.precision import enable_x64
from regbayes.datasets import make_dp_mixture_svm, make_multiclass_blobs
from regbayes.potentials import niw as _niw
from regbayes.algorithms.crp_kernels import crp_sweep
from regbayes.algorithms.isvm_gibbs import gibbs_component_sweep
from regbayes.inference import DivergenceError
from regbayes.models.isvm import InfiniteSVC
from regbayes.samplers.defaults import SAMPLER_DEFAULTS

from crammer_singer_reference import compare_runs, rwm_reference
from svm_reference import BINARY_2D, EXACT, binary_reference, compare_with_reference

PROBLEMS = {"2d": BINARY_2D}


@pytest.fixture(scope="module")
def references():
    return {name: binary_reference(p) for name, p in PROBLEMS.items()}


# ------------------------------------------------------------------------- z | eta
def _partitions(n):
    if n == 0:
        yield []
        return
    for p in _partitions(n - 1):
        for i in range(len(p)):
            yield p[:i] + [p[i] + [n - 1]] + p[i + 1 :]
        yield p + [[n - 1]]


def _canonical(z):
    _, first = np.unique(z, return_index=True)
    order = z[np.sort(first)]
    return tuple(int(np.flatnonzero(order == k)[0]) for k in z)


def _sweep(X, z, K, prior, eta, alpha, C, seed):
    counts, means, chols = _niw.component_posteriors(prior, X, z, K) if z[0] >= 0 else (
        np.zeros(K, np.int64), np.tile(prior.mean, (K, 1)), np.tile(prior.chol, (K, 1, 1)))
    n = len(X)
    design = np.hstack([X, np.ones((n, 1))])
    return crp_sweep(X, design, np.ones((n, 1)), z, counts, means, chols, eta, alpha=alpha, C=C, margin=1.0,
                     prior_scale=1.0, prior_mean=prior.mean, prior_kappa=prior.kappa, prior_dof=prior.dof,
                     prior_chol=prior.chol, n_aux=2, seed=seed)


def test_crp_sweep_visits_partitions_with_exact_probabilities():
    import arviz as az  # here, not at the top: 3 s of every xdist worker's collection
    X = np.array([[0.0], [0.4], [1.6], [2.2]])
    prior = _niw.niw_prior(np.array([1.0]), 0.2, 3.0, np.array([[0.5]]))
    alpha = 0.8
    parts = list(_partitions(4))
    logp = np.array([len(p) * np.log(alpha) + sum(gammaln(len(b)) + _niw.log_marginal_likelihood(prior, X[b]) for b in p)
                     for p in parts])
    exact = np.exp(logp - logp.max())
    exact /= exact.sum()
    index = {}
    for j, p in enumerate(parts):
        z = np.empty(4, int)
        for k, block in enumerate(p):
            z[block] = k
        index[_canonical(z)] = j
    n_sweeps = 6000
    z = np.full(4, -1, np.int64)
    eta = np.zeros((4, 1, 2))
    visits = np.empty(n_sweeps, int)
    for t in range(n_sweeps):
        z, _, _, _, eta, _ = _sweep(X, z, 4, prior, eta, alpha, 0.0, seed=t)
        visits[t] = index[_canonical(z)]
    for j, p in enumerate(exact):
        ind = (visits[500:] == j).astype(float)
        ess = float(az.ess(ind[None, :], method="mean")) if ind.std() > 0 else 1.0
        mcse = np.sqrt(max(p * (1 - p), 1e-4) / ess)
        assert abs(ind.mean() - p) <= 4.5 * mcse, (parts[j], ind.mean(), p, mcse)


def test_crp_sweep_statistics_and_growth():
    """Rank-one updates equal fresh statistics; buffers double when every slot is taken."""
    rng = np.random.default_rng(0)
    centres = np.array([[0, 0], [8, 0], [0, 8], [8, 8], [16, 0], [16, 8]], float)
    X = np.concatenate([rng.normal(c, 0.3, size=(15, 2)) for c in centres])
    prior = _niw.niw_prior(X.mean(axis=0), 0.05, 4.0, 0.3 * np.eye(2))
    z = np.full(len(X), -1, np.int64)
    eta = np.zeros((2, 1, 3))
    for t in range(5):
        z, counts, means, chols, eta, _ = _sweep(X, z, eta.shape[0], prior, eta, 1.0, 0.0, seed=t)
        assert eta.shape[0] == counts.shape[0] >= 6 and eta.shape[0] in (2, 4, 8, 16)
        c2, m2, ch2 = _niw.component_posteriors(prior, X, z, counts.shape[0])
        np.testing.assert_array_equal(counts, c2)
        np.testing.assert_allclose(means, m2, atol=1e-10)
        np.testing.assert_allclose(chols, ch2, atol=1e-8)
    assert (counts > 0).sum() == 6  # the six blobs, 8 units apart, sd 0.3


# ------------------------------------------------------------------------- eta | z
def _component_design(problem, n_copies, rng):
    """The problem's rows ``n_copies`` times, then three non-member rows."""
    X, y = problem["X"], problem["y"]
    other = rng.normal(size=(3, X.shape[1])) * 3
    design = np.vstack([np.tile(X, (n_copies, 1)), other])
    labels = np.concatenate([np.tile(y, n_copies), [1.0, -1.0, 1.0]])
    return design, labels[None, :]


def test_gibbs_eta_step_matches_grid(references):
    """The 2-D problem (correlated, skewed): its 6 rows padded to a block of 9 with
    non-member rows that the mask must remove."""
    problem, ref = PROBLEMS["2d"], references["2d"]
    rng = np.random.default_rng(1)
    design, Y = _component_design(problem, 1, rng)
    valid = np.arange(len(design)) < len(problem["y"])
    n_chains, n_draws = 16, 1000
    with enable_x64():
        args = [jnp.asarray(a, jnp.float64) for a in (design, Y)] + [jnp.asarray(valid)]
        hyper = [jnp.asarray(problem[k], jnp.float64) for k in ("c", "l", "nu")]

        def chain(key, eta):
            def body(e, k):
                e = gibbs_component_sweep(k, e, *args, *hyper)
                return e, e[0]

            return jax.lax.scan(body, eta, jax.random.split(key, n_draws))[1]

        init = jnp.asarray(ref.sampler(rng, n_chains)[:, None, :], jnp.float64)
        draws = np.asarray(jax.jit(jax.vmap(chain))(jax.random.split(jax.random.key(3), n_chains), init))
    report, failures = compare_with_reference(draws, ref, EXACT, "gibbs-component/2d")
    assert not failures, "\n".join(failures + [report])


def test_gibbs_eta_step_zero_rows_are_exact():
    """With every row masked the sweep returns a prior draw nu * z, z the kernel's own
    normal draw: zero rows add nothing to the precision or to b."""
    with enable_x64():
        key = jax.random.key(5)
        design = jnp.asarray(np.random.default_rng(0).normal(size=(4, 3)), jnp.float64)
        Y = jnp.ones((2, 4), jnp.float64)
        out = gibbs_component_sweep(key, jnp.zeros((2, 3), jnp.float64), design, Y, jnp.zeros(4, bool),
                                    jnp.asarray(2.0), jnp.asarray(1.0), jnp.asarray(1.7))
        for l, k in enumerate(jax.random.split(key, 2)):
            z = jax.random.normal(jax.random.split(k)[1], (3,), jnp.float64)
            np.testing.assert_allclose(np.asarray(out[l]), 1.7 * np.asarray(z), rtol=1e-12)


# ------------------------------------------------------------------------- estimator
def _xor_blobs(seed=0, n=50):
    """Four round blobs (sd 1, 7 apart) on a square with XOR labels: one component per
    blob classifies perfectly, one linear rule at most 75 %. (With labels split inside a
    blob the hinge term would pay for splitting it: iSVM clusters inputs and labels.)"""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [7.0, 0.0], [0.0, 7.0], [7.0, 7.0]])
    X = np.concatenate([c + rng.normal(size=(n, 2)) for c in centres])
    y = np.repeat([0, 1, 1, 0], n)
    return X, y


@pytest.mark.parametrize("sampler", ["gibbs", "ssgnht"])
def test_recovers_well_separated_clusters(sampler):
    X, y = _xor_blobs()
    clf = InfiniteSVC(sampler=sampler, n_iter=40, n_warmup=20, random_state=0).fit(X, y)
    # Posterior mode of the number of components that hold at least 15 % of the rows: the
    # DP posterior also keeps small components coming and going (with SSGNHT, a split-off
    # edge of a blob of 5-10 points for a while).
    large = (clf.component_sizes_ >= 30).sum(axis=1)
    assert np.bincount(large).argmax() == 4
    truth = np.repeat(np.arange(4), 50)
    # No component of the last draw mixes blobs. (A blob may be split in two: its pieces
    # share a label, so the hinge does not pay for the split, and the DP posterior visits
    # such states.) Seeds 0-9, both samplers: every cluster of 5+ rows 98-100 % one blob.
    for c in np.unique(clf.labels_):
        members = truth[clf.labels_ == c]
        if len(members) >= 5:
            assert np.bincount(members).max() / len(members) > 0.9
    kept = clf.n_components_trace_[clf.n_warmup :]
    assert clf.n_components_ == len(np.unique(clf.labels_))
    assert clf.score(X, y) > 0.95
    proba = clf.predict_proba(X[:5])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    S = len(kept)
    assert clf.coef_samples_.shape[:1] == (S,) and clf.coef_samples_.shape[2] == 2
    assert clf.intercept_samples_.shape == clf.coef_samples_.shape[:2] == clf.component_active_.shape
    assert len(clf.trace_["eta_seconds"]) == clf.n_iter


def test_multiclass_and_determinism():
    X, y = make_multiclass_blobs(n_samples=150, n_features=2, n_classes=3, class_sep=2.0, random_state=0)
    a = InfiniteSVC(sampler="ssgnht", n_iter=12, n_warmup=6, random_state=4).fit(X, y)
    b = InfiniteSVC(sampler="ssgnht", n_iter=12, n_warmup=6, random_state=4).fit(X, y)
    c = InfiniteSVC(sampler="ssgnht", n_iter=12, n_warmup=6, random_state=5).fit(X, y)
    np.testing.assert_array_equal(a.coef_samples_, b.coef_samples_)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.coef_samples_.shape[2:] == (3, 2)
    assert not np.array_equal(a.coef_samples_[-1], c.coef_samples_[-1])
    assert a.score(X, y) > 0.85
    X2, y2 = _xor_blobs()  # same shapes as the cluster test: no new compilation
    g1 = InfiniteSVC(n_iter=6, n_warmup=3, random_state=1).fit(X2, y2)
    g2 = InfiniteSVC(n_iter=6, n_warmup=3, random_state=1).fit(X2, y2)
    np.testing.assert_array_equal(g1.coef_samples_, g2.coef_samples_)


# ------------------------------------------------------------------------- one forced component
FORCED = dict(alpha=1e-8, init_components=1, n_iter=1000, n_warmup=100, batch_size=10, n_inner=60, random_state=0)


def _forced_eta(clf):
    """The one component's classifier in every kept draw, as eta (draws, L, d + 1) from
    the public attributes: ``w = coef``, ``b / s = (intercept + w . xbar) / s``."""
    active = clf.component_active_
    assert (active.sum(axis=1) == 1).all(), "a second component opened"
    k = np.argmax(active, axis=1)
    S = len(k)
    coef = clf.coef_samples_[np.arange(S), k].reshape(S, -1, clf.n_features_in_)
    intercept = clf.intercept_samples_[np.arange(S), k].reshape(S, -1)
    b = (intercept + coef @ clf.x_offset_) / clf.intercept_scaling_
    return np.concatenate([coef, b[..., None]], axis=2)


def test_ssgld_forced_component_matches_gibbs_long_run():
    """40 rows of one Gaussian cluster, binary labels from a noisy linear rule; SSGLD at
    its default step on minibatches of 40 drawn with replacement (with minibatches of 10
    the step cap halves the step, and the ESS of 900 draws falls to 100-170: the
    component's whitening, from every hinge active, is about 2.5 times narrower than this
    posterior).
    Reference: the Gibbs eta step (eqs. 17-18) on the same design, 8 chains of 1500
    sweeps after 100 (float64)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.7 * rng.normal(size=40) > 0).astype(int)
    clf = InfiniteSVC(sampler="ssgld", **{**FORCED, "batch_size": 40}).fit(X, y)
    draws = _forced_eta(clf)[:, 0]
    design = np.hstack([X - clf.x_offset_, np.full((40, 1), clf.intercept_scaling_)])
    with enable_x64():
        args = (jnp.asarray(design), jnp.asarray(2.0 * y[None, :] - 1.0), jnp.ones(40, bool),
                *(jnp.asarray(v, jnp.float64) for v in (clf.C, clf.margin, clf.prior_scale)))

        def chain(key):
            def body(e, k):
                e = gibbs_component_sweep(k, e, *args)
                return e, e[0]

            return jax.lax.scan(body, jnp.zeros((1, 3)), jax.random.split(key, 1600))[1][100:]

        ref = np.asarray(jax.jit(jax.vmap(chain))(jax.random.split(jax.random.key(1), 8)))
    failures = compare_runs(draws[None], ref, mean_bias=0.1, sd_bias=0.1)
    assert not failures, "\n".join(failures)


def test_crammer_singer_forced_component_matches_long_run():
    """15 rows of one cluster, one feature, 3 classes: eta of shape (3, 2) (weight and
    intercept per class), SSGLD with minibatches of 10, 500 kept draws; reference: random-walk Metropolis
    on the same design (300 chains of 1500 steps after 300)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(15, 1))
    y = np.digitize(X[:, 0] + 0.6 * rng.normal(size=15), [-0.4, 0.4])
    clf = InfiniteSVC(sampler="ssgld", multi_class="crammer_singer", **{**FORCED, "n_iter": 600}).fit(X, y)
    assert clf.multi_class_ == "crammer_singer" and clf.coef_samples_.shape[2:] == (3, 1)
    draws = _forced_eta(clf).reshape(1, -1, 6)
    design = np.hstack([X - clf.x_offset_, np.full((15, 1), clf.intercept_scaling_)])
    ref = rwm_reference(design, y, 3, nu=clf.prior_scale, c=clf.C, l=clf.margin, step=0.5, n_chains=300, n_burn=300,
                        n_keep=1500)
    failures = compare_runs(draws, ref, mean_bias=0.1, sd_bias=0.1)
    assert not failures, "\n".join(failures)


# ------------------------------------------------------------------------- Crammer–Singer vs one-vs-rest
def _multiclass_dp_mixture(seed, n=800, d=3, n_classes=5):
    """Paper 001's Setting I clusters (``make_dp_mixture_svm``: CRP, alpha = 1, at most 10
    clusters, ``x ~ N(mu_k, 0.25 I)`` with ``mu_k = (k, ..., k)``) and, per cluster, a
    multinomial-logit label ``p(y = m | x, k) ∝ exp(W_km^T (x - mu_k))`` with ``W_km ~ N(0,
    4 I)``, the multi-class analogue of eq. 37."""
    X, _, clusters, _ = make_dp_mixture_svm("I", n_samples=n, n_features=d, random_state=seed, return_clusters=True)
    rng = np.random.default_rng(seed + 1000)
    W = 2.0 * rng.standard_normal((clusters.max() + 1, n_classes, d))
    F = np.einsum("nmd,nd->nm", W[clusters], X - clusters[:, None])
    P = np.exp(F - F.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    y = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1)
    return X, y


def test_crammer_singer_at_least_as_accurate_as_one_vs_rest():
    """Five classes, three data sets (seeds 0-2), 300 training and 500 test rows each,
    SSGNHT for both hinges. Over seeds 0-9 (700 test rows each) Crammer–Singer scored
    0.483 against 0.462 (per-seed differences -0.020 to +0.049); the test allows one
    binomial standard error of the mean over the 1500 test rows (about 0.013)."""
    acc = {"ovr": [], "crammer_singer": []}
    for seed in range(3):
        X, y = _multiclass_dp_mixture(seed)
        for multi_class in acc:
            clf = InfiniteSVC(sampler="ssgnht", multi_class=multi_class, n_iter=40, n_warmup=20, random_state=seed)
            acc[multi_class].append(clf.fit(X[:300], y[:300]).score(X[300:], y[300:]))
    ovr, cs = np.mean(acc["ovr"]), np.mean(acc["crammer_singer"])
    se = np.sqrt(ovr * (1 - ovr) / 1500)
    assert cs >= ovr - se, acc


# Pinned draws of a small fit (this platform): a change of the sampler's arithmetic or of
# how its random streams derive from random_state shows here. Tolerances: float64 (gibbs)
# and float32 (ssgnht) rounding across BLAS builds.
PINNED = {
    "gibbs": ([11, 7, 6, 5, 5, 5], [-1.0665030000, 1.1180827164, -0.3839748547, 0.6387914038],
           [-1.3804961947, 5.0894540635], 1e-6),
    "ssgnht": ([11, 6, 5, 4, 5, 5], [-1.4736009836, 1.0841088295, 0.1126605794, -0.1498634517],
            [4.0871531973, 0.3894443608], 1e-4),
    "ssgld": ([11, 6, 5, 4, 5, 5], [-1.7045638561, 0.7879844308, 0.2688627541, 0.0904320329],
           [6.8267058819, -0.5102889482], 1e-4),
}


@pytest.mark.parametrize("sampler", ["gibbs", "ssgnht", "ssgld"])
def test_pinned_draws(sampler):
    X, y = _xor_blobs(n=10)
    clf = InfiniteSVC(sampler=sampler, n_iter=6, n_warmup=3, random_state=3).fit(X, y)
    trace, coef, intercept, rtol = PINNED[sampler]
    assert clf.n_components_trace_.tolist() == trace
    active = np.flatnonzero(clf.component_active_[-1])[:2]
    np.testing.assert_allclose(clf.coef_samples_[-1, active].ravel(), coef, rtol=rtol)
    np.testing.assert_allclose(clf.intercept_samples_[-1, active], intercept, rtol=rtol)


def test_resolved_settings_and_divergence():
    X, y = _xor_blobs(n=10)
    g = InfiniteSVC(n_iter=3, n_warmup=1).fit(X, y)
    radius = np.sqrt(np.mean(np.sum((X - X.mean(axis=0)) ** 2, axis=1)))
    assert g.n_warmup_ == 1 and g.step_size_ is None and g.batch_size_ is None
    np.testing.assert_allclose(g.intercept_scaling_, radius)
    np.testing.assert_allclose(g.x_offset_, X.mean(axis=0))
    s = InfiniteSVC(sampler="ssgnht", n_iter=3, n_warmup=1, batch_size=7, intercept_scaling=2.0).fit(X, y)
    assert s.step_size_ == SAMPLER_DEFAULTS["ssgnht"].relative_step and s.batch_size_ == 7 and s.intercept_scaling_ == 2.0
    np.testing.assert_array_equal(s.trace_["step_size"], s.step_size_)
    assert len(s.trace_["wall_time"]) == 3 and s.trace_["compile_seconds"] >= 0
    with pytest.raises(DivergenceError, match="lower step_size") as info:
        InfiniteSVC(sampler="ssgnht", step_size=1e6, n_iter=3, n_warmup=1).fit(X, y)
    assert info.value.step_size == 1e6


@pytest.mark.parametrize(
    "params,X,y,match",
    [
        ({}, [[np.nan, 1.0], [1.0, 2.0]], [0, 1], "NaN"),
        ({}, [[0.0, 1.0], [1.0, 2.0]], [1, 1], "1 class"),
        ({}, [[0.0, 1.0], [1.0, 2.0]], [0, 1, 1], "inconsistent"),
        ({}, np.zeros((0, 2)), [], "0 sample"),
        ({"alpha": 0.0}, None, None, "alpha"),
        ({"C": -1.0}, None, None, "'C' parameter"),
        ({"sampler": "nuts"}, None, None, "'sampler' parameter"),
        ({"multi_class": "ovo"}, None, None, "'multi_class' parameter"),
        ({"n_warmup": 10, "n_iter": 10}, None, None, "n_warmup"),
        ({"niw_dof": 2.0}, None, None, "niw_dof"),
        ({"niw_covariance": np.eye(3)}, None, None, "niw_covariance"),
        ({"niw_mean": [0.0]}, None, None, "niw_mean"),
        ({"step_size": 0.0}, None, None, "step_size"),
        ({"n_auxiliary": 0}, None, None, "n_auxiliary"),
    ],
)
def test_bad_input(params, X, y, match):
    if X is None:
        X, y = _xor_blobs(n=5)
    with pytest.raises(ValueError, match=match):
        InfiniteSVC(**{"n_iter": 3, "n_warmup": 1, **params}).fit(np.asarray(X, float), np.asarray(y))


def test_gibbs_refuses_the_multi_class_hinge():
    X, y = make_multiclass_blobs(n_samples=30, n_features=2, n_classes=3, random_state=0)
    with pytest.raises(ValueError, match="sampler='ssgnht' or sampler='ssgld'"):
        InfiniteSVC(multi_class="crammer_singer", n_iter=3, n_warmup=1).fit(X, y)
    X2, y2 = _xor_blobs(n=5)  # two classes: the binary hinge under either option
    a = InfiniteSVC(multi_class="crammer_singer", n_iter=3, n_warmup=1).fit(X2, y2)
    b = InfiniteSVC(n_iter=3, n_warmup=1).fit(X2, y2)
    assert a.multi_class_ == b.multi_class_ == "binary"
    np.testing.assert_array_equal(a.coef_samples_, b.coef_samples_)


def test_predict_before_fit():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        InfiniteSVC().predict(np.zeros((2, 2)))


