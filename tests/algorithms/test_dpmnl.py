"""dpMNL's algorithm (regbayes.algorithms.dpmnl) and the softmax term of the CRP sweep.

Exact references and tolerances:

* z | beta (the numba CRP sweep with ``likelihood="logit"``): the chain over partitions of
  4 points (two classes) visits each of the 15 partitions with probability
  ``∝ alpha^K prod_k (n_k - 1)! p(X_k) Z_k``, ``Z_k = ∫ N(beta; 0, nu^2 I) prod_{i in k}
  softmax_{y_i}(beta x~_i) d beta`` (a 2-D Gauss–Hermite rule, 60 x 60 nodes, on the
  contrast ``beta_1 - beta_0 ~ N(0, 2 nu^2 I)``): Algorithm 8's auxiliary prior draws make
  the z-sweep alone leave the beta-integrated partition posterior invariant.
  |frequency - p| <= 4.5 MCSE (from the ESS of the indicator series). Without the softmax
  term some probabilities move by 0.1, 15 MCSE.
* beta | z (HMC with the Metropolis correction): a two-class expert on one feature has a 2-D
  posterior; mean and sd of both coordinates from 16 chains of 290 transitions against
  grid integration (400 x 400 nodes over +-7 prior sd), within 4.5 MCSE;
  the rows sit in the design between rows that are not the expert's, and those would
  move the posterior if they counted.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import gammaln, log_softmax, roots_hermitenorm

from regbayes.algorithms import crp_kernels, dpmnl
from regbayes.algorithms.crp_kernels import crp_sweep
from regbayes.inference import Algorithm, DivergenceError, run
from regbayes.potentials import niw as _niw


def _growth_strings(n):
    """Every partition of ``n`` points as its restricted growth string: block labels in
    order of first appearance."""
    strings = [(0,)]
    for _ in range(n - 1):
        strings = [s + (k,) for s in strings for k in range(max(s) + 2)]
    return strings


def _first_appearance(z):
    """``z`` relabelled in order of first appearance (its restricted growth string)."""
    seen = {}
    return tuple(seen.setdefault(int(k), len(seen)) for k in z)


def _frozen(a):
    a = np.ascontiguousarray(a, dtype=np.float64)
    a.flags.writeable = False
    return a


def test_softmax_term_of_the_sweep():
    """The sweep's expert term, called with the argument types the sweep passes it (inputs
    and labels read-only), so that no second specialisation is compiled."""
    rng = np.random.default_rng(0)
    for scale in (1.0, 300.0):  # large logits: the streaming log-sum-exp must not overflow
        eta = scale * rng.normal(size=(4, 3))
        x = _frozen(rng.normal(size=3))
        for c in range(4):
            y = _frozen(np.where(np.arange(4) == c, 1.0, -1.0))
            expected = log_softmax(eta @ x)[c]
            got = crp_kernels.log_expert(crp_kernels.LOGIT, eta, x, y, 0.0, 0.0, np.empty(4))
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
            hinge = np.sum(np.maximum(0.0, 1.0 - y * (eta @ x)))
            got = crp_kernels.log_expert(crp_kernels.HINGE, eta, x, y, 2.0, 1.0, np.empty(4))
            np.testing.assert_allclose(got, -2.0 * hinge, rtol=1e-12)
    with pytest.raises(ValueError, match="likelihood"):
        crp_sweep(np.zeros((1, 1)), np.zeros((1, 1)), np.ones((1, 1)), np.zeros(1, np.int64), np.ones(1, np.int64),
                  np.zeros((1, 1)), np.ones((1, 1, 1)), np.zeros((1, 1, 1)), alpha=1.0, C=1.0, margin=1.0, prior_scale=1.0,
                  prior_mean=np.zeros(1), prior_kappa=1.0, prior_dof=3.0, prior_chol=np.eye(1), n_aux=1, seed=0,
                  likelihood="probit")


def test_logit_sweep_visits_partitions_with_exact_probabilities():
    import arviz as az  # here, not at the top: 3 s of every xdist worker's collection
    X = np.array([[0.0], [0.4], [1.6], [2.2]])
    design = np.hstack([X - 1.0, np.full((4, 1), 0.5)])
    codes = np.array([0, 1, 1, 0])
    prior = _niw.niw_prior(np.array([1.0]), 0.2, 3.0, np.array([[0.5]]))
    alpha, nu = 0.8, 1.3
    nodes, weights = roots_hermitenorm(60)
    weights = np.outer(weights, weights).ravel() / weights.sum() ** 2
    g1, g2 = np.meshgrid(nodes, nodes, indexing="ij")
    contrast = np.sqrt(2.0) * nu * np.stack([g1.ravel(), g2.ravel()], axis=1)  # beta_1 - beta_0

    def log_z(block):
        f = design[block] @ contrast.T
        log_lik = np.where(codes[block][:, None] == 1, -np.logaddexp(0.0, -f), -np.logaddexp(0.0, f)).sum(axis=0)
        return np.log(np.sum(weights * np.exp(log_lik)))

    parts = _growth_strings(4)
    blocks = [[np.flatnonzero(np.array(p) == k) for k in range(max(p) + 1)] for p in parts]
    logp = np.array([len(bs) * np.log(alpha) + sum(gammaln(len(b)) + _niw.log_marginal_likelihood(prior, X[b]) + log_z(b)
                                                   for b in bs) for bs in blocks])
    exact = np.exp(logp - logp.max())
    exact /= exact.sum()
    index = {p: j for j, p in enumerate(parts)}
    data = dpmnl.make_data(X, design, codes, 2, prior, alpha=alpha, prior_scale=nu)
    state = dpmnl.init(data, np.full(4, -1), capacity=4)
    visits = []
    for t in range(6000):  # z-sweeps alone (dpmnl.z_step): beta changes only through the auxiliary draws
        state = dpmnl.z_step(t, state, data, 2)
        visits.append(index[_first_appearance(state.z)])
    visits = np.asarray(visits[500:])
    for j, p in enumerate(exact):
        hits = (visits == j).astype(float)
        ess = float(az.ess(hits[None, :], method="mean")) if hits.std() > 0 else 1.0
        assert abs(hits.mean() - p) <= 4.5 * np.sqrt(max(p * (1 - p), 1e-4) / ess), (parts[j], hits.mean(), p, ess)


def test_hmc_expert_step_matches_grid():
    """Two classes, one input: beta (2, 1); 16 slots, each its own chain on the same 7
    rows, which sit in ``design`` between rows that are not theirs."""
    import arviz as az  # here, not at the top: 3 s of every xdist worker's collection
    rng = np.random.default_rng(4)
    x = np.array([-1.5, -0.7, -0.2, 0.3, 0.9, 1.4, 2.0])
    y = np.array([0, 0, 1, 0, 1, 1, 1])
    nu = 1.5
    g = np.linspace(-7 * nu, 7 * nu, 400)
    b0, b1 = np.meshgrid(g, g, indexing="ij")
    f = np.stack([b0, b1], axis=-1)[..., None, :] * x[:, None]  # (400, 400, n, 2)
    log_lik = np.take_along_axis(log_softmax(f, axis=-1), y[None, None, :, None], axis=-1)[..., 0].sum(axis=-1)
    logp = -0.5 * (b0**2 + b1**2) / nu**2 + log_lik
    w = np.exp(logp - logp.max())
    w /= w.sum()
    ref_mean = np.array([np.sum(w * b0), np.sum(w * b1)])
    ref_sd = np.sqrt(np.array([np.sum(w * b0**2), np.sum(w * b1**2)]) - ref_mean**2)

    others = 40.0 * rng.normal(size=(9, 1))
    design = np.concatenate([others[:4], x[:, None], others[4:]])
    codes = np.concatenate([np.ones(4, int), y, np.zeros(5, int)])
    n_slots, B, n_draws = 16, 8, 300
    rows = np.broadcast_to(np.concatenate([np.arange(4, 11), [0]]), (n_slots, B))
    sizes = np.full(n_slots, 7)
    gram = np.full((n_slots, 1, 1), np.sum(x**2))
    factors = dpmnl.mnl.contrast_factors(gram, 2, nu)
    args = [jnp.asarray(design, jnp.float32), jnp.asarray(codes, jnp.int32), jnp.asarray(rows, jnp.int32),
            jnp.asarray(sizes, jnp.int32), jnp.asarray(factors, jnp.float32), jnp.asarray(nu, jnp.float32),
            jnp.asarray(0.3, jnp.float32), jnp.asarray(0.5, jnp.float32)]
    beta = jnp.zeros((n_slots, 2, 1), jnp.float32)
    draws = np.empty((n_slots, n_draws, 2))
    keys = jax.random.split(jax.random.key(5), n_draws)
    for t in range(n_draws):
        beta, acceptance = dpmnl.hmc_expert_step(keys[t], 0, beta, *args, n_leapfrog=5)
        draws[:, t] = np.asarray(beta)[:, :, 0]
    assert 0.5 < float(np.mean(acceptance)) <= 1.0
    draws = draws[:, 10:]
    for j in range(2):
        ess = float(az.ess(draws[..., j]))
        mean, sd = draws[..., j].mean(), draws[..., j].std()
        ess_sq = float(az.ess((draws[..., j] - ref_mean[j]) ** 2))
        assert abs(mean - ref_mean[j]) <= 4.5 * ref_sd[j] / np.sqrt(ess), (j, mean, ref_mean[j], ess)
        assert abs(sd - ref_sd[j]) <= 4.5 * ref_sd[j] / np.sqrt(2 * ess_sq), (j, sd, ref_sd[j], ess_sq)


def _blobs(seed=0, n=20):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [8.0, 0.0], [0.0, 8.0]])
    X = np.concatenate([c + rng.normal(size=(n, 2)) for c in centres])
    codes = np.concatenate([(rng.random(n) < 0.5).astype(int) + (k > 1) for k in range(3)])
    return X, codes


def test_expert_rows_compact_the_non_empty_slots():
    X, codes = _blobs()
    design = np.hstack([X, np.ones((len(X), 1))])
    z = np.repeat([3, 0, 5], 20)
    counts = np.bincount(z, minlength=8)
    slots, rows, sizes, gram = dpmnl.expert_rows(z, counts, design)
    assert slots.shape == (dpmnl.SLOT_CHUNK,) and rows.shape[0] == dpmnl.SLOT_CHUNK
    assert slots[:3].tolist() == [0, 3, 5] and sizes.tolist() == [20, 20, 20] + [0] * (dpmnl.SLOT_CHUNK - 3)
    for j, k in enumerate(slots[:3]):
        np.testing.assert_array_equal(np.sort(rows[j, : sizes[j]]), np.flatnonzero(z == k))
        np.testing.assert_allclose(gram[j], design[z == k].T @ design[z == k], rtol=1e-12)
    np.testing.assert_array_equal(gram[3:], 0.0)
    many = np.arange(60) % 20  # 20 components: two chunks of working slots
    slots, rows, sizes, _ = dpmnl.expert_rows(many, np.bincount(many, minlength=32), design)
    assert slots.shape == (2 * dpmnl.SLOT_CHUNK,) and sizes[:20].tolist() == [3] * 20 and not sizes[20:].any()


def test_iterations_keep_statistics_grow_and_are_reproducible():
    X, codes = _blobs()
    prior = _niw.default_prior(X)
    design = np.hstack([X - X.mean(axis=0), np.ones((len(X), 1))])
    data = dpmnl.make_data(X, design, codes, 3, prior, alpha=1.0, prior_scale=1.0)
    step = dpmnl.dp_mnl()
    finals = []
    for _ in range(2):
        state = dpmnl.init(data, np.full(len(X), -1), capacity=2)  # the first sweep seats the rows and grows
        result = run(Algorithm(step, "dpmnl", check=dpmnl.check), state, data, jax.random.key(1), n_iter=4, keep=[3],
                     draw=dpmnl.draw)
        finals.append(result.state)
    state = finals[0]
    np.testing.assert_array_equal(state.z, finals[1].z)
    np.testing.assert_array_equal(state.eta, finals[1].eta)
    assert state.capacity >= 4 and state.eta.shape == (state.capacity, 3, 3)
    counts, means, chols = _niw.component_posteriors(prior, X, state.z, state.capacity)
    np.testing.assert_array_equal(state.counts, counts)
    np.testing.assert_allclose(state.means, means, atol=1e-10)
    assert result.trace["acceptance"][0] == 1.0  # no components before the first sweep: no transition
    assert np.all((result.trace["acceptance"][1:] > 0) & (result.trace["acceptance"][1:] <= 1))
    assert len(result.draws) == 1 and result.draws[0].eta.shape[1:] == (3, 3)


def test_beta_step_moves_every_expert_in_chunks():
    """20 components: two calls of the program per transition; after 4 transitions every
    non-empty slot's expert has moved (a proposal is rejected with probability about 0.04),
    the empty ones keep theirs."""
    X, codes = _blobs()
    design = np.hstack([X - X.mean(axis=0), np.ones((len(X), 1))])
    data = dpmnl.make_data(X, design, codes, 3, _niw.default_prior(X), alpha=1.0, prior_scale=1.0)
    state = dpmnl.init(data, np.arange(len(X)) % 20, capacity=32)
    state = state._replace(eta=np.full_like(state.eta, 0.25))
    new, acceptance, _ = dpmnl.beta_step(jax.random.key(2), state, data, 0.3, 0.5, 5, 4)
    moved = np.any(new.eta != state.eta, axis=(1, 2))
    np.testing.assert_array_equal(moved, state.counts > 0)
    assert 0.0 < acceptance <= 1.0


def test_divergence_and_bad_settings():
    X, codes = _blobs(n=5)
    data = dpmnl.make_data(X, np.hstack([X, np.ones((len(X), 1))]), codes, 3, _niw.default_prior(X), alpha=1.0,
                           prior_scale=1.0)
    state = dpmnl.init(data, np.zeros(len(X), np.int64))
    bad = state._replace(eta=np.full_like(state.eta, np.nan))
    assert "lower step_size" in dpmnl.check(bad, None) and dpmnl.check(state, None) is None
    with pytest.raises(DivergenceError, match="not finite"):
        run(Algorithm(lambda seed, s, d: (bad, None), "dpmnl", check=dpmnl.check), state, data, jax.random.key(0), n_iter=1)
    with pytest.raises(ValueError, match="jitter"):
        dpmnl.dp_mnl(jitter=1.0)
