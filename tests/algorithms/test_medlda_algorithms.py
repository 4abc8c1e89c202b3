"""MedLDA's two algorithms on the host-loop protocol: one step of each keeps its state
consistent, the divergence checks name the step size to lower, the SSGLD eta state is the
kernel's own, and a short run through the driver gives pinned draws."""
import jax
import numpy as np
import pytest

from regbayes.algorithms import lda_kernels as kern
from regbayes.algorithms import medlda_gibbs, medlda_ssgrld
from regbayes.datasets.topic_corpus import make_topic_corpus
from regbayes.inference import Algorithm, DivergenceError, run
from regbayes.schedules import as_schedule, polynomial

K = 4


@pytest.fixture(scope="module")
def corpus():
    X, y, _, _ = make_topic_corpus(n_docs=60, n_topics=K, n_words=40, doc_length=20, random_state=0)
    X = X[np.asarray(X.sum(axis=1)).ravel() > 0]
    doc_ptr, words = kern.tokens_from_counts(X)
    y_sign = (2.0 * y[: X.shape[0]] - 1.0)[:, None]
    return doc_ptr, words, y_sign, X.shape[1]


def gibbs_data(corpus, **overrides):
    doc_ptr, words, y_sign, V = corpus
    params = dict(n_topics=K, n_words=V, alpha=0.1, beta=0.05, C=10.0, margin=1.0, prior_scale=1.0, **overrides)
    return medlda_gibbs.make_data(doc_ptr, words, y_sign, **params)


def ssgrld_data(corpus, classifier_step=0.5, topic_step=0.05):
    doc_ptr, words, y_sign, V = corpus
    codes = (y_sign[:, 0] > 0).astype(np.int64)
    return medlda_ssgrld.make_data(
        doc_ptr, words, y_sign, codes, crammer_singer=False, n_topics=K, n_words=V, alpha=0.1, beta=0.05, C=10.0,
        margin=1.0, prior_scale=1.0, batch_size=10, n_inner_sweeps=4, n_inner_burnin=2, soft_from=2,
        topic_step=polynomial(topic_step, b=100.0, gamma=0.55), classifier_step=as_schedule(classifier_step),
    )


def test_gibbs_step_keeps_the_count_tables_of_its_assignments(corpus):
    data = gibbs_data(corpus)
    state = medlda_gibbs.init(3, data)
    for seed in (11, 12):
        state, info = medlda_gibbs.step(seed, state, data)
    ndk, nwk, nk = kern.count_tables(data.doc_ptr, data.words, state.z, K, data.n_words)
    np.testing.assert_array_equal(state.ndk, ndk)
    np.testing.assert_array_equal(state.nwk, nwk)
    np.testing.assert_array_equal(state.nk, nk)
    D = data.y_sign.shape[0]
    assert state.eta.shape == (1, K) and np.all(np.isfinite(state.eta))
    assert state.inv_omega.shape == (D, 1) and np.all(state.inv_omega > 0)
    assert info.n_docs == 2 * D and info.n_tokens == 2 * data.words.shape[0]
    np.testing.assert_allclose(medlda_gibbs.topic_word(state, data).sum(axis=1), 1.0)


def test_ssgrld_step_moves_only_the_minibatch_and_keeps_phi_on_the_simplex(corpus):
    data = ssgrld_data(corpus)
    state = medlda_ssgrld.init(5, data)
    z_before = state.z.copy()
    state, info = medlda_ssgrld.step(7, state, data)
    changed_docs = {int(np.searchsorted(data.doc_ptr, i, side="right") - 1) for i in np.nonzero(state.z != z_before)[0]}
    assert 0 < len(changed_docs) <= data.batch_size
    np.testing.assert_allclose(medlda_ssgrld.topic_word(state).sum(axis=1), 1.0)
    np.testing.assert_allclose(state.phi_t, np.asarray(state.theta).T / np.asarray(state.theta).sum(axis=1))
    assert state.iteration == 1 and info.n_docs == 10 and info.topics_finite
    assert info.n_tokens > 0 and info.n_tokens % data.n_inner_sweeps == 0  # 4 sweeps over the minibatch's tokens
    np.testing.assert_array_equal(state.eta, np.asarray(state.eta_state.position))
    assert info.topic_step_size == pytest.approx(0.05) and info.classifier_step_size == 0.5


def test_eta_state_comes_from_the_ssgld_kernel():
    """eta starts at 0 with the kernel's own initial state (one per classifier one-vs-rest)."""
    from regbayes.precision import enable_x64

    with enable_x64():
        ovr = medlda_ssgrld.initial_eta_state(3, K, crammer_singer=False)
        cs = medlda_ssgrld.initial_eta_state(3, K, crammer_singer=True)
        reference = medlda_ssgrld.ETA_KERNEL.init(None, np.zeros((3, K)), None)
    for state in (ovr, cs):
        assert type(state) is type(reference) and state.position.shape == (3, K)
        np.testing.assert_array_equal(np.asarray(state.position), 0.0)
    np.testing.assert_array_equal(np.asarray(cs.transform), np.asarray(reference.transform))
    assert np.asarray(ovr.transform).shape == (3, K)


def test_checks_fire_on_huge_eta_and_non_finite_topics(corpus):
    gibbs = gibbs_data(corpus)
    state = medlda_gibbs.init(0, gibbs)
    check = medlda_gibbs.divergence_check(gibbs)
    assert check(state, None) is None
    message = check(state._replace(eta=np.full((1, K), 1e4)), None)
    assert "classifier weights diverged" in message and "smaller C" in message
    assert "smaller C" in check(state._replace(eta=np.full((1, K), np.nan)), None)

    data = ssgrld_data(corpus)
    state, info = medlda_ssgrld.step(1, medlda_ssgrld.init(0, data), data)
    check = medlda_ssgrld.divergence_check(data)
    assert check(state, info) is None
    assert "classifier_step_size (it was 0.5)" in check(state._replace(eta=np.full((1, K), 1e4)), info)
    assert "topic_step_size" in check(state, info._replace(topics_finite=False))


def test_the_driver_stops_a_diverging_classifier_and_names_the_step(corpus):
    data = ssgrld_data(corpus, classifier_step=1e4)
    algorithm = Algorithm(medlda_ssgrld.step, "MedLDA[ssgrld]", compile=medlda_ssgrld.compile_kernels,
                          check=medlda_ssgrld.divergence_check(data))
    with pytest.raises(DivergenceError, match="classifier weights diverged.*classifier_step_size") as err:
        run(algorithm, medlda_ssgrld.init(0, data), data, jax.random.key(0), n_iter=20)
    assert err.value.algorithm == "MedLDA[ssgrld]" and err.value.iteration is not None


@pytest.mark.parametrize("which", ["gibbs", "ssgrld"])
def test_pinned_draws(which, corpus):
    """Same key, same draws: a few numbers of a 6-iteration run pinned (numba's counter-based
    streams, NumPy's PCG64 and JAX's threefry keys are the same on every CPU), so that a change of the
    random streams or of the updates is seen. Tolerance: float64 rounding."""
    module = medlda_gibbs if which == "gibbs" else medlda_ssgrld
    data = gibbs_data(corpus) if which == "gibbs" else ssgrld_data(corpus)
    algorithm = Algorithm(module.step, which, check=module.divergence_check(data))
    result = run(algorithm, module.init(1, data), data, jax.random.key(2), n_iter=6, keep=[5],
                 draw=lambda s: (module.topic_word(s, data), np.array(s.eta)))
    again = run(algorithm, module.init(1, data), data, jax.random.key(2), n_iter=6, keep=[5],
                draw=lambda s: (module.topic_word(s, data), np.array(s.eta)))
    phi, eta = result.draws[0]
    np.testing.assert_array_equal(phi, again.draws[0][0])
    np.testing.assert_array_equal(eta, again.draws[0][1])
    np.testing.assert_allclose(eta[0], PINNED[which]["eta"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(phi[:, 0], PINNED[which]["phi_col0"], rtol=1e-9, atol=1e-12)


PINNED = {
    # gibbs: re-pinned when the classifier update moved to numba with NumPy's generator
    # (medlda_gibbs_kernels.gibbs_classifier_update; before, JAX's threefry key of the seed)
    "gibbs": {"eta": [1.0489938255352933, 1.641363691045713, -1.9308725583484425, 1.2033578852060116],
              "phi_col0": [0.21458852867830422, 0.0001466275659824047, 0.01639676113360324, 0.003888888888888889]},
    # ssgrld: re-pinned when the SGRLD step's normal variates came in blocks of topics, each
    # from its own generator (algorithms.sgrld_topics.NOISE_BLOCKS)
    "ssgrld": {"eta": [0.3731582144510085, 1.0705016377149084, 0.7416451492596066, 0.2639325759044323],
               "phi_col0": [0.0012548527782891596, 0.01965716908563323, 0.04325443373765816, 0.112220954392465]},
}
