"""The Gibbs infinite SVM's algorithm (regbayes.algorithms.isvm, isvm_gibbs, isvm_sgmcmc).

Exact references:

* the Gibbs eta step on a padded member block equals the sweep on the component's rows
  alone, draw for draw (float64; JAX's threefry draws of a shorter vector are a prefix of
  a longer one's, so padding rows change no member's omega draw), up to rounding (1e-10);
* growing the capacity keeps every existing slot (statistics, classifier, SSGNHT state)
  bit for bit and adds free slots (prior statistics, zero classifier);
* a step that needs more slots than the state has grows the whole state consistently;
* the z-sweep's multi-class hinge against a direct NumPy formula (rounding, 1e-12), and
  one datum's conditional (eq. 15 with the Crammer–Singer psi) against its closed form
  ``∝ n_{-i,k} t(x_i | X_{k,-i}) exp(-C hinge_k)``: frequencies over 6000 seeded sweeps
  within 4.5 binomial standard errors.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from regbayes.algorithms import isvm
from regbayes.algorithms.crp_kernels import CRAMMER_SINGER, crp_sweep_kernel, log_expert, sweep_buffers
from regbayes.algorithms.isvm_gibbs import MIN_BLOCK, block_size, compile_ahead, gibbs_component_sweep, gibbs_eta_step
from regbayes.algorithms.isvm_sgmcmc import component_steps, pad_states, rest_states
from regbayes.inference import Algorithm, DivergenceError, run
from regbayes.potentials import niw
from regbayes.potentials.component_svm import group_members
from regbayes.precision import enable_x64, maybe_x64


def _blobs(n_per=15, seed=0):
    """Six tight blobs 8 units apart, labels by the sign of the first coordinate's offset."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0, 0], [8, 0], [0, 8], [8, 8], [16, 0], [16, 8]], float)
    X = np.concatenate([rng.normal(c, 0.3, size=(n_per, 2)) for c in centres])
    y = np.where(X[:, 0] - np.repeat(centres[:, 0], n_per) > 0, 1.0, -1.0)
    return X, y


def _data(X, y, dtype=np.float64, L=1):
    prior = niw.niw_prior(X.mean(axis=0), 0.05, 4.0, 0.3 * np.eye(X.shape[1]))
    offset = X.mean(axis=0)
    design = np.hstack([X - offset, np.ones((len(X), 1))])
    Y = np.repeat(y[:, None], L, axis=1)
    return isvm.make_data(X, design, Y, prior, alpha=1.0, C=1.0, margin=1.0, prior_scale=1.0, x_offset=offset,
                          intercept_scaling=1.0, dtype=dtype)


# ------------------------------------------------------------------------- eta | z, gibbs
def test_block_sizes():
    assert [block_size(n) for n in (1, MIN_BLOCK, MIN_BLOCK + 1, 1000)] == [MIN_BLOCK, MIN_BLOCK, 2 * MIN_BLOCK, 1024]


def test_padded_block_equals_unpadded_sweep():
    """Members first, then non-member rows (not zeros: the mask must remove them)."""
    rng = np.random.default_rng(3)
    n_k, B, L, D = 11, 64, 2, 4
    X = rng.normal(size=(B, D))
    Y = np.where(rng.random((L, B)) < 0.5, 1.0, -1.0)
    with enable_x64():
        key = jax.random.key(8)
        eta = jnp.asarray(rng.normal(size=(L, D)))
        hyper = [jnp.asarray(v, jnp.float64) for v in (2.0, 1.0, 1.5)]
        padded = gibbs_component_sweep(key, eta, jnp.asarray(X), jnp.asarray(Y), jnp.arange(B) < n_k, *hyper)
        alone = gibbs_component_sweep(key, eta, jnp.asarray(X[:n_k]), jnp.asarray(Y[:, :n_k]), jnp.ones(n_k, bool),
                                      *hyper)
    np.testing.assert_allclose(np.asarray(padded), np.asarray(alone), rtol=1e-10, atol=1e-12)


def test_gibbs_eta_step_updates_each_component_on_its_rows():
    """Every non-empty slot gets the sweep on its own rows with its own key; empty slots
    keep their classifier; a block size is compiled once per run."""
    X, y = _blobs(n_per=10)
    with enable_x64():
        data = _data(X, y, L=2)
        rng = np.random.default_rng(1)
        z = rng.integers(0, 3, size=len(X)) * 2  # slots 0, 2, 4 of 6
        counts = np.bincount(z, minlength=6)
        eta = rng.normal(size=(6, 2, 3))
        members, starts = group_members(z, counts)
        key = jax.random.key(4)
        new, compiled, seconds = gibbs_eta_step(key, eta, counts, members, starts, data.design, data.Y, data.hyper)
        keys = jax.random.split(key, 6)
        for k in range(6):
            rows = np.flatnonzero(z == k)
            if len(rows) == 0:
                np.testing.assert_array_equal(new[k], eta[k])
                continue
            ref = gibbs_component_sweep(keys[k], jnp.asarray(eta[k]), jnp.asarray(data.design[rows]),
                                        jnp.asarray(data.Y[rows].T), jnp.ones(len(rows), bool), *data.hyper)
            np.testing.assert_allclose(new[k], np.asarray(ref), rtol=1e-10, atol=1e-12)
        assert compiled == {MIN_BLOCK} and seconds > 0
        again, compiled2, seconds2 = gibbs_eta_step(key, eta, counts, members, starts, data.design, data.Y,
                                                    data.hyper, compiled)
        np.testing.assert_array_equal(again, new)
        assert compiled2 == compiled and seconds2 == 0.0


def test_compile_ahead_builds_the_program_the_eta_step_runs(caplog):
    """The program compiled in the background is the one gibbs_eta_step then calls: no
    second compilation, and the same classifiers as without it."""
    X, y = _blobs(n_per=10)
    with enable_x64():
        data = _data(X, y, L=2)
        z = np.repeat([0, 2], len(X) // 2)
        counts = np.bincount(z, minlength=4)
        eta = np.random.default_rng(1).normal(size=(4, 2, 3))
        members, starts = group_members(z, counts)
        key = jax.random.key(4)
        gibbs_component_sweep.clear_cache()
        assert compile_ahead(key, eta, data.hyper).result() > 0
        with jax.log_compiles(), caplog.at_level("WARNING"):
            new, _, _ = gibbs_eta_step(key, eta, counts, members, starts, data.design, data.Y, data.hyper, {MIN_BLOCK})
            jax.jit(lambda v: v + 1.0)(jnp.ones(3))  # a new program: the log does record compilations
        compiles = [r.getMessage() for r in caplog.records if "Finished XLA compilation" in r.getMessage()]
        assert any("<lambda>" in m for m in compiles)
        assert not any("gibbs_component_sweep" in m for m in compiles)
        gibbs_component_sweep.clear_cache()
        ref, _, _ = gibbs_eta_step(key, eta, counts, members, starts, data.design, data.Y, data.hyper)
    np.testing.assert_array_equal(new, ref)


# ------------------------------------------------------------------------- capacity
@pytest.mark.parametrize("sampler", ["gibbs", "ssgnht"])
def test_grow_keeps_the_state(sampler):
    X, y = _blobs()
    with maybe_x64(sampler == "gibbs"):
        data = _data(X, y, dtype=np.float32 if sampler == "ssgnht" else np.float64)
        state = isvm.init(data, np.repeat(np.arange(6), 15), capacity=8)
        if sampler == "ssgnht":  # SSGNHT states exist after the first eta step
            step = isvm.infinite_svm(sampler, batch_size=5, n_inner=2)
            state, _ = step(0, state, data)
            assert state.sgmcmc.position.shape[0] == state.capacity
    K = state.capacity
    state = state._replace(eta=np.random.default_rng(0).normal(size=state.eta.shape))
    grown = isvm.grow(state, 2 * K, data.prior)
    assert grown.capacity == 2 * K and grown.counts.shape == (2 * K,) and grown.eta.shape[0] == 2 * K
    np.testing.assert_array_equal(grown.z, state.z)
    for name in ("counts", "means", "chols", "eta"):
        np.testing.assert_array_equal(getattr(grown, name)[:K], getattr(state, name))
    np.testing.assert_array_equal(grown.counts[K:], 0)
    np.testing.assert_array_equal(grown.eta[K:], 0.0)
    np.testing.assert_array_equal(grown.means[K:], np.broadcast_to(data.prior.mean, (K, 2)))
    np.testing.assert_array_equal(grown.chols[K:], np.broadcast_to(data.prior.chol, (K, 2, 2)))
    if sampler == "ssgnht":
        for old, new in zip(state.sgmcmc, grown.sgmcmc):
            if old is None:  # noise_var: the components' kernels run without noise correction
                assert new is None
                continue
            assert new.shape[0] == 2 * K
            np.testing.assert_array_equal(np.asarray(new[:K]), np.asarray(old))
        np.testing.assert_array_equal(np.asarray(grown.sgmcmc.momentum[K:]), 0.0)
    else:
        assert grown.sgmcmc is None
    with pytest.raises(ValueError, match="shrink"):
        isvm.grow(grown, K, data.prior)


def test_rest_states_and_padding():
    states = rest_states("ssgnht", 3, 2, (4,), np.float32)
    assert states.position.shape == states.momentum.shape == (3, 2, 4) and states.transform.shape == (3, 2, 4, 4)
    assert pad_states(states, 3) is states
    grown = pad_states(states._replace(momentum=np.ones((3, 2, 4), np.float32)), 8)
    assert grown.position.shape == (8, 2, 4) and grown.position.dtype == np.float32
    np.testing.assert_array_equal(grown.momentum[:3], 1.0)
    np.testing.assert_array_equal(grown.momentum[3:], 0.0)
    np.testing.assert_array_equal(grown.transform[5, 1], np.eye(4))


@pytest.mark.parametrize("sampler", ["gibbs", "ssgnht"])
def test_step_grows_the_state_when_the_sweep_needs_slots(sampler):
    """Six blobs from a sequential start with 2 slots: the sweep doubles the buffers and
    the step grows the rest of the state with them."""
    X, y = _blobs()
    ssg = sampler == "ssgnht"
    step = isvm.infinite_svm(sampler, step_size=0.15 if ssg else None, batch_size=5, n_inner=3)
    with maybe_x64(not ssg):
        data = _data(X, y, np.float32 if ssg else np.float64)
        state = isvm.init(data, np.full(len(X), -1), capacity=2)
        for seed in range(3):
            state, info = step(seed, state, data)
    assert state.capacity >= 8 and state.capacity in (8, 16)
    assert state.counts.shape[0] == state.means.shape[0] == state.chols.shape[0] == state.eta.shape[0] == state.capacity
    assert state.counts.sum() == len(X) and info.n_components == np.count_nonzero(state.counts) >= 6
    np.testing.assert_array_equal(np.bincount(state.z, minlength=state.capacity), state.counts)
    if ssg:
        assert state.sgmcmc.position.shape[0] == state.capacity and state.capacity in state.compiled
        np.testing.assert_array_equal(state.eta, np.asarray(state.sgmcmc.position, np.float64))
        assert info.step_size == 0.15
    c2, m2, ch2 = niw.component_posteriors(data.prior, X, state.z, state.capacity)
    np.testing.assert_allclose(state.means, m2, atol=1e-8)


# ------------------------------------------------------------------------- driver
def test_divergence_is_reported_by_the_driver():
    X, y = _blobs()
    data = _data(X, y, np.float32)
    state = isvm.init(data, np.zeros(len(X), np.int64))
    step = isvm.infinite_svm("ssgnht", step_size=1e6, batch_size=5, n_inner=3)
    with pytest.raises(DivergenceError, match="lower step_size") as info:
        run(Algorithm(step, "isvm", check=isvm.check), state, data, jax.random.key(0), n_iter=3)
    assert info.value.step_size == 1e6 and info.value.iteration == 0
    nan_state = state._replace(eta=np.full_like(state.eta, np.nan))
    assert "check the scale of X" in isvm.check(nan_state, isvm.ISVMInfo(1, 0.0, 0.0, 0.0))
    assert isvm.check(state, isvm.ISVMInfo(1, 0.0, 0.0, 0.0)) is None


def test_component_steps_cap():
    steps = component_steps(np.array([0, 10, 100, 400]), 0.2, 100, 1.0)
    np.testing.assert_allclose(steps, [0.2, 0.2, 0.2, 0.1])  # h min(1, sqrt(100 / max(n_k, 1)))


def test_bad_settings():
    with pytest.raises(ValueError, match="unknown sampler"):
        isvm.infinite_svm("nuts")
    with pytest.raises(ValueError, match="unknown multi_class"):
        isvm.check_sampler("ssgld", "ovo")
    with pytest.raises(ValueError, match="sampler='ssgnht' or sampler='ssgld'"):
        isvm.check_sampler("gibbs", "crammer_singer")
    X, y = _blobs(n_per=3)
    data = isvm.make_data(X, X, y, niw.niw_prior(X.mean(0), 1.0, 4.0, np.eye(2)), alpha=1.0, C=1.0, margin=1.0,
                          prior_scale=1.0, x_offset=X.mean(0), intercept_scaling=1.0, dtype=np.float32,
                          multi_class="crammer_singer", n_classes=2)
    with pytest.raises(ValueError, match="crammer_singer"):  # the step refuses the combination too
        isvm.infinite_svm("gibbs")(0, isvm.init(data, np.zeros(len(X), np.int64)), data)
    with pytest.raises(ValueError, match="n_classes"):
        isvm.make_data(X, X, y, data.prior, alpha=1.0, C=1.0, margin=1.0, prior_scale=1.0, x_offset=X.mean(0),
                       intercept_scaling=1.0, dtype=np.float32, multi_class="crammer_singer")


# ------------------------------------------------------------------------- multi-class z | eta
def _read_only(values):
    """A read-only float64 copy: the row types the z-sweep passes (one compiled specialisation)."""
    a = np.array(values, dtype=np.float64)
    a.flags.writeable = False
    return a


def multi_class_hinge(eta, x, y, margin):
    """The sweep's Crammer–Singer term with C = 1, as a hinge."""
    return -log_expert(CRAMMER_SINGER, eta, x, y, 1.0, margin, np.empty(eta.shape[0]))


def test_multi_class_hinge_matches_numpy():
    rng = np.random.default_rng(0)
    for M, D in ((3, 2), (5, 4)):
        for _ in range(50):
            eta = rng.normal(size=(M, D))
            x = rng.normal(size=D)
            code = int(rng.integers(M))
            f = eta @ x
            expected = max(1.3 * (m != code) + f[m] - f[code] for m in range(M))  # max_m (l Delta + f_m - f_y)
            got = multi_class_hinge(eta, _read_only(x), _read_only([code]), 1.3)
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
    # a datum classified with margin to spare: the term m = y, 0, wins
    assert multi_class_hinge(np.array([[3.0], [0.0], [-1.0]]), _read_only([1.0]), _read_only([0.0]), 1.0) == 0.0


def test_multi_class_sweep_conditional():
    """The last datum's draw from eq. 15 (alpha tiny: no new component) with three
    occupied slots and one free one, Crammer–Singer psi with C = 1.5."""
    rng = np.random.default_rng(4)
    X = np.concatenate([rng.normal(0.0, 0.6, 5), rng.normal(1.0, 0.6, 4), rng.normal(0.5, 0.6, 3), [0.6]])[:, None]
    z = np.array([0] * 5 + [1] * 4 + [2] * 3 + [1])
    codes = rng.integers(0, 3, size=len(X)).astype(float)
    design = np.hstack([X - 0.5, np.ones((len(X), 1))])
    eta = 0.5 * rng.normal(size=(4, 3, 2))
    prior = niw.niw_prior(np.array([0.5]), 0.3, 3.0, np.array([[0.4]]))
    C, margin, K = 1.5, 1.0, 4
    counts, means, chols = niw.component_posteriors(prior, X, z, K)
    i = len(X) - 1
    c_rest, m_rest, ch_rest = niw.component_posteriors(prior, X[:i], z[:i], K)
    logw = np.full(K, -np.inf)
    for k in range(3):
        post = niw.NIW(m_rest[k], prior.kappa + c_rest[k], prior.dof + c_rest[k], ch_rest[k])
        f = eta[k] @ design[i]
        hinge = max(margin * (m != codes[i]) + f[m] - f[int(codes[i])] for m in range(3))
        logw[k] = np.log(c_rest[k]) + niw.log_predictive(post, X[i : i + 1])[0] - C * hinge
    p = np.exp(logw - logw.max())
    p /= p.sum()
    n_runs = 6000
    visits = np.zeros(K)
    Y = np.ascontiguousarray(codes[:, None])
    for a in (X, design, Y):  # read-only, as crp_sweep passes them: the kernel's one specialisation
        a.flags.writeable = False
    for seed in range(n_runs):
        zz, cc, mm, ch, ee = z.copy(), counts.copy(), means.copy(), chols.copy(), eta.copy()
        stop = crp_sweep_kernel(X, design, Y, zz, cc, mm, ch, ee, np.zeros(K, bool), 1e-12, C, margin, 1.0,
                                prior.mean, prior.kappa, prior.dof, prior.chol, 2, seed, i, CRAMMER_SINGER,
                                *sweep_buffers(1, K, 2, 3, 2))
        assert stop == len(X)
        visits[zz[i]] += 1
    freq = visits / n_runs
    assert visits[3] == 0
    se = np.sqrt(p * (1 - p) / n_runs)
    assert np.all(np.abs(freq - p) <= 4.5 * se + 1e-12), (freq, p)
    assert p[:3].min() > 0.05, p  # every component is a live option: the test can tell them apart
