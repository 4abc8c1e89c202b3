"""MedLDA: topics and labels recovered on a corpus drawn from the model, plain LDA as C -> 0,
bad input, determinism, the scikit-learn contract.

The token conditionals themselves are checked against enumeration in test_lda_kernels.py.
Reference points on the synthetic corpus below (D = 600 training / 400 test documents, K = 5,
V = 200, 50 words per document, measured for seeds 0 and 1): a linear SVM on the true topic
proportions theta scores 0.965-0.985; scikit-learn LDA + LinearSVC 0.97-0.98; the topics of
scikit-learn's LDA lie 0.07-0.08 (mean L1 after Hungarian matching) from the true ones, and
topics drawn at random from the prior lie 1.7-1.9 away (20 draws, mean 1.80).
"""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from sklearn.base import clone
from sklearn.decomposition import LatentDirichletAllocation

from regbayes.datasets.topic_corpus import make_topic_corpus
from regbayes.models.medlda import MedLDA
from regbayes.models.medlda_refit import to_proportion_units
from regbayes.potentials.topics import perplexity_from
from regbayes.samplers.defaults import REFIT_RUNS

K = 5
COMMON = dict(n_topics=K, alpha=0.1, beta=0.05, C=10.0, random_state=0)


@pytest.fixture(scope="module")
def corpus():
    X, y, phi, theta = make_topic_corpus(n_docs=1000, n_topics=K, n_words=200, doc_length=50, random_state=0)
    return X[:600], y[:600], X[600:], y[600:], phi, theta


@pytest.fixture(scope="module")
def gibbs_model(corpus):
    Xtr, ytr, *_ = corpus
    return MedLDA(sampler="gibbs", n_iter=30, **COMMON).fit(Xtr, ytr)


@pytest.fixture(scope="module")
def ssgrld_model(corpus):
    Xtr, ytr, *_ = corpus
    return MedLDA(sampler="ssgrld", n_iter=150, batch_size=50, snapshot_every=50, **COMMON).fit(Xtr, ytr)


def matched_topic_distance(topics, truth):
    """Mean L1 distance between estimated and true topics after Hungarian matching."""
    cost = np.abs(topics[:, None, :] - truth[None, :, :]).sum(axis=-1)
    rows, cols = linear_sum_assignment(cost)
    return cost[rows, cols].mean()


@pytest.mark.parametrize("which", ["gibbs_model", "ssgrld_model"])
def test_topics_recovered_and_labels_predicted(which, corpus, request):
    model = request.getfixturevalue(which)
    _, _, Xte, yte, phi, _ = corpus
    # measured: gibbs 0.05-0.07, ssgrld 0.10-0.12; 0.2 is a tenth of the random-topic distance
    assert matched_topic_distance(model.components_, phi) < 0.2
    # measured 0.96-0.98 (seeds 0, 1); a binomial standard error on 400 documents is 0.01,
    # so 0.93 is about 3 standard errors below the oracle SVM on the true theta
    assert model.score(Xte, yte) >= 0.93


def test_fitted_attributes(gibbs_model, ssgrld_model, corpus):
    _, _, Xte, _, _, _ = corpus
    for model in (gibbs_model, ssgrld_model):
        assert model.components_.shape == (K, 200)
        np.testing.assert_allclose(model.components_.sum(axis=1), 1.0)
        assert model.coef_.shape == (1, K)
        proba = model.predict_proba(Xte[:20])
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        theta = model.transform(Xte[:20])
        np.testing.assert_allclose(theta.sum(axis=1), 1.0)
        clear = proba.max(axis=1) > 0.5
        np.testing.assert_array_equal(model.predict(Xte[:20])[clear], model.classes_[proba.argmax(axis=1)][clear])
        assert [len(words) for words in model.top_words(4)] == [4] * K
    trace = ssgrld_model.trace_
    np.testing.assert_array_equal(trace["n_docs"], 50 * np.arange(1, 151))
    assert np.all(np.diff(trace["wall_time"]) > 0) and np.all(trace["tokens_per_second"] > 0)
    np.testing.assert_array_equal(gibbs_model.trace_["n_docs"], 600 * np.arange(1, 31))
    for model in (gibbs_model, ssgrld_model):  # compilation is timed apart, before sampling
        assert isinstance(model.trace_["compile_seconds"], float) and model.trace_["compile_seconds"] > 0


def test_staged_predict_follows_the_snapshots(ssgrld_model, corpus):
    _, _, Xte, yte, _, _ = corpus
    staged = list(ssgrld_model.staged_predict(Xte))
    assert [snap["n_docs"] for snap, _ in staged] == [2500, 5000, 7500]
    assert np.mean(staged[-1][1] == yte) >= 0.93  # the last snapshot is a draw like the kept ones


def test_gibbs_with_vanishing_c_is_collapsed_lda(corpus):
    """C -> 0 removes the classifier's pull on the topics: the perplexity of the training
    documents matches scikit-learn's LDA (both measured with ``perplexity_from``). Measured: 22.6
    (MedLDA, C = 1e-8) against 22.9 (scikit-learn) and 23.0 under the true parameters; seed-to-seed
    spread of collapsed Gibbs about 1 %; 5 % tolerance."""
    Xtr, ytr, *_ = corpus
    model = MedLDA(sampler="gibbs", n_iter=50, **{**COMMON, "C": 1e-8}).fit(Xtr, ytr)
    lda = LatentDirichletAllocation(K, doc_topic_prior=0.1, topic_word_prior=0.05, random_state=0).fit(Xtr)
    reference = perplexity_from(Xtr, lda.transform(Xtr), lda.components_)
    assert model.perplexity(Xtr) == pytest.approx(reference, rel=0.05)
    # and the classifier no longer shapes the topics: eta stays at its prior scale
    assert np.max(np.abs(model.coef_)) < 4.0


def test_same_random_state_same_result_and_threads_do_not_matter(corpus):
    Xtr, ytr, Xte, *_ = corpus
    a = MedLDA(sampler="ssgrld", n_iter=10, batch_size=50, **COMMON).fit(Xtr, ytr)
    b = MedLDA(sampler="ssgrld", n_iter=10, batch_size=50, n_jobs=1, **COMMON).fit(Xtr, ytr)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.predict_proba(Xte), b.predict_proba(Xte))
    c = MedLDA(sampler="gibbs", n_iter=3, **COMMON).fit(Xtr, ytr)
    d = MedLDA(sampler="gibbs", n_iter=3, **COMMON).fit(Xtr, ytr)
    np.testing.assert_array_equal(c.components_, d.components_)
    e = MedLDA(sampler="gibbs", n_iter=3, **{**COMMON, "random_state": 1}).fit(Xtr, ytr)
    assert not np.array_equal(c.components_, e.components_)


@pytest.mark.parametrize(
    "params, topics, coef, proba",
    [
        (dict(sampler="gibbs", n_iter=3),  # re-pinned: the classifier update's variates are NumPy's since 2026-11-27
         [0.0008662714086088838, 0.004776944496011053, 0.004553611051847994],
         [2.2718789388687135, -7.525390999920586, -7.23553166749536], [0.0, 1.0, 1.0]),
        (dict(sampler="ssgrld", n_iter=10, batch_size=50),  # re-pinned: the SGRLD step's variates come in blocks of topics
         [0.0012216308924634166, 0.001131238292998943, 0.0028992692557310265],
         [-11.09328977025187, 7.1626015229002675, 6.776692728123759], [0.0, 1.0, 1.0]),
    ],
)
def test_pinned_draws(params, topics, coef, proba, corpus):
    """One random_state, one key: the topics, the refitted classifier's mean and the votes of
    a short fit are pinned (float64 throughout; numba's streams, NumPy's PCG64 and JAX's
    threefry keys are the same on every CPU), so that a change of any random stream or update is seen.
    The classifier's mean was re-pinned on 2026-11-28 (it moved by 3e-6 relative, inside the
    dual's tolerance) when the duals' active-set finish was compiled and factorised by QR."""
    Xtr, ytr, Xte, *_ = corpus
    model = MedLDA(**params, **COMMON).fit(Xtr, ytr)
    np.testing.assert_allclose(model.components_[0, :3], topics, rtol=1e-9)
    np.testing.assert_allclose(model.coef_[0, :3], coef, rtol=1e-9)
    np.testing.assert_array_equal(model.predict_proba(Xte[:3])[:, 1], proba)


def test_multiclass_both_formulations():
    # seed 1: classes of 306 / 121 / 173 documents (the Crammer-Singer label model can leave a
    # class empty for other seeds)
    X, y, phi, _ = make_topic_corpus(n_docs=600, n_topics=4, n_words=100, doc_length=40, n_classes=3, random_state=1)
    for multi_class in ("ovr", "crammer_singer"):
        model = MedLDA(
            n_topics=4, alpha=0.1, beta=0.05, C=10.0, sampler="ssgrld", multi_class=multi_class, n_iter=60,
            batch_size=50, random_state=0,
        ).fit(X[:400], y[:400])
        assert model.coef_.shape == (3, 4)
        assert model.predict_proba(X[400:]).shape == (200, 3)
        # the majority class holds 53 % of the test documents; measured 0.905 for both
        # formulations, 0.7 is 7 binomial standard errors (0.02 on 200 documents) below
        assert model.score(X[400:], y[400:]) >= 0.7
    # Gibbs MedLDA trains one-vs-rest; by default its refitted prediction classifier is Crammer-Singer
    gibbs = MedLDA(n_topics=4, alpha=0.1, beta=0.05, C=10.0, sampler="gibbs", n_iter=30, random_state=0).fit(X[:400], y[:400])
    assert gibbs.coef_.shape == (3, 4) and gibbs.coef_samples_.shape[0] == REFIT_RUNS["ssgld"]["n_draws"]
    assert gibbs.score(X[400:], y[400:]) >= 0.7  # same threshold and reasoning as above
    with pytest.raises(ValueError, match="Crammer-Singer"):
        MedLDA(sampler="gibbs", multi_class="crammer_singer", refit_classifier=False).fit(X[:50], y[:50])


def test_raw_texts_use_a_count_vectorizer_without_stop_words():
    texts = ["the rocket launch and the moon orbit", "orbit of the moon by the rocket",
             "the engine of the car and its speed", "car engine speed and the brakes"] * 5
    y = [1, 1, 0, 0] * 5
    model = MedLDA(n_topics=2, sampler="gibbs", n_iter=20, random_state=0).fit(texts, y)
    vocabulary = set(model.vectorizer_.get_feature_names_out())
    assert "the" not in vocabulary and "rocket" in vocabulary
    assert all(isinstance(w, str) for topic in model.top_words(3) for w in topic)
    assert model.predict(["moon rocket orbit"]).shape == (1,)
    with pytest.raises(ValueError, match="fitted on raw texts"):
        model.predict(sp.csr_matrix(np.ones((1, len(vocabulary)))))


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda X, y: (-X, y), "Negative values"),
        (lambda X, y: (X * 0.5, y), "non-integer"),
        (lambda X, y: (np.where(np.arange(X.shape[1]) == 0, np.nan, X.toarray()), y), "NaN"),
        (lambda X, y: (X, np.zeros_like(y)), "1 class"),
        (lambda X, y: (X, y[:-1]), "labels"),
        (lambda X, y: (sp.csr_matrix((X.shape[0], 0)), y), "no columns|0 feature"),
        (lambda X, y: (sp.csr_matrix(X.shape, dtype=np.int64), y), "every document is empty"),
    ],
)
def test_bad_data(make, match, corpus):
    Xtr, ytr, *_ = corpus
    X, y = make(Xtr[:40].astype(np.float64), ytr[:40])
    with pytest.raises(ValueError, match=match):
        MedLDA(n_topics=2, sampler="gibbs", n_iter=1).fit(X, y)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_topics": 1}, "n_topics"),
        ({"sampler": "vb"}, "sampler"),
        ({"multi_class": "ovo"}, "multi_class"),
        ({"alpha": 0.0}, "alpha"),
        ({"C": -1.0}, "C"),
        ({"n_inner_burnin": 4}, "n_inner_burnin"),
        ({"topic_step_size": -0.1}, "topic_step_size"),
        ({"refit_classifier": "yes"}, "refit_classifier"),
        ({"n_iter": 0}, "n_iter"),
        ({"n_iter": "passes"}, "n_iter"),
        ({"n_iter": 2.5}, "n_iter"),
    ],
)
def test_bad_parameters(params, match, corpus):
    Xtr, ytr, *_ = corpus
    with pytest.raises(ValueError, match=match):
        MedLDA(**{"n_iter": 1, **params}).fit(Xtr[:40], ytr[:40])


def test_empty_documents_dropped_in_fit_and_predicted_from_the_prior(corpus, gibbs_model):
    Xtr, ytr, *_ = corpus
    X = sp.vstack([Xtr[:60], sp.csr_matrix((3, Xtr.shape[1]), dtype=np.int64)]).tocsr()
    y = np.concatenate([ytr[:60], [0, 1, 0]])
    with pytest.warns(UserWarning, match="3 empty documents"):
        model = MedLDA(sampler="ssgrld", n_iter=2, batch_size=50, **COMMON).fit(X, y)
    assert model.trace_["n_docs"][-1] == 100  # two minibatches drawn from the 60 non-empty documents
    theta = gibbs_model.transform(sp.csr_matrix((2, Xtr.shape[1]), dtype=np.int64))
    np.testing.assert_allclose(theta, 1.0 / K)
    expected = gibbs_model.classes_[int(gibbs_model.coef_.mean() > 0)]  # eta^T (1/K) of each draw
    scores = np.array([eta.mean() for eta in gibbs_model.coef_samples_[:, 0]])
    if np.all(scores > 0) or np.all(scores < 0):  # every draw agrees: the prediction is fixed
        assert np.all(gibbs_model.predict(sp.csr_matrix((2, Xtr.shape[1]))) == expected)


def test_clone_pickle_and_inputs_untouched(corpus, gibbs_model):
    Xtr, ytr, Xte, *_ = corpus
    X_copy = Xtr.copy()
    estimator = MedLDA(sampler="ssgrld", n_iter=2, batch_size=50, **COMMON)
    params = estimator.get_params()
    clone(estimator).fit(Xtr, ytr)
    assert estimator.get_params() == params
    assert (Xtr != X_copy).nnz == 0
    restored = pickle.loads(pickle.dumps(gibbs_model))
    np.testing.assert_array_equal(restored.predict(Xte[:10]), gibbs_model.predict(Xte[:10]))
    dense = gibbs_model.predict(Xte[:10].toarray())
    np.testing.assert_array_equal(dense, gibbs_model.predict(Xte[:10]))


def test_callback_sees_progress_and_can_stop(corpus):
    Xtr, ytr, *_ = corpus
    seen = []

    def callback(info):
        seen.append((info["iteration"], info["n_docs"], info["topic_word"].shape, info["coef"].shape))
        return info["iteration"] == 4

    model = MedLDA(sampler="ssgrld", n_iter=50, batch_size=50, callback=callback, **COMMON).fit(Xtr, ytr)
    assert [s[0] for s in seen] == [1, 2, 3, 4]
    assert seen[-1][1:] == (200, (K, 200), (1, K))
    assert len(model.trace_["iteration"]) == 4 and model.topic_word_samples_.shape[0] == 1


@pytest.mark.parametrize("sampler", ["gibbs", "ssgrld"])
def test_components_average_phi_over_the_second_half(sampler, corpus):
    """``components_`` is the mean of Phi over every iteration t >= n_iter // 2, not only
    over the kept draws; the draws are a subset of those iterates."""
    Xtr, ytr, *_ = corpus
    iterates = []

    def callback(info):
        iterates.append(info["topic_word"])

    n_iter = 9
    model = MedLDA(sampler=sampler, n_iter=n_iter, n_draws=2, batch_size=50, callback=callback, **COMMON).fit(Xtr, ytr)
    second_half = np.mean(iterates[n_iter // 2:], axis=0)
    np.testing.assert_allclose(model.components_, second_half / second_half.sum(axis=1, keepdims=True), rtol=1e-12)
    assert not np.allclose(model.components_, model.topic_word_samples_.mean(axis=0))
    for draw in model.topic_word_samples_:
        assert any(np.array_equal(draw, phi) for phi in iterates[n_iter // 2:])


# ---------------------------------------------------------------- scikit-learn's shared checks


def test_auto_run_length_scales_with_the_corpus(corpus):
    """n_iter="auto": SSGRLD makes AUTO_PASSES passes over the training documents within
    AUTO_ITER_RANGE; Gibbs its default sweeps; the resolved value is n_iter_."""
    from regbayes.models.medlda import AUTO_ITER_RANGE, AUTO_PASSES, auto_iterations

    assert auto_iterations("ssgrld", 65_099, 100) == int(np.ceil(AUTO_PASSES * 65_099 / 100)) == 2604
    assert auto_iterations("ssgrld", 11_645, 100) == AUTO_ITER_RANGE[0]
    assert auto_iterations("ssgrld", 10**9, 100) == AUTO_ITER_RANGE[1]
    assert auto_iterations("ssgrld", 40_000, 400) == 500 and auto_iterations("ssgrld", 300_000, 400) == 3000
    assert auto_iterations("gibbs", 65_099, 65_099) == 100
    Xtr, ytr, *_ = corpus  # 600 documents in minibatches of 3: 4 passes are 800 iterations
    for n_iter in ("auto", None):
        model = MedLDA(n_topics=3, n_iter=n_iter, batch_size=3, n_draws=1, n_transform_sweeps=2,
                       refit_classifier=False).fit(Xtr, ytr)
        assert model.n_iter_ == 800 and model.batch_size_ == 3 and len(model.trace_["iteration"]) == 800
    assert MedLDA().get_params()["n_iter"] == "auto"


def test_padding_rows_leaves_the_ssgrld_update_unchanged():
    """Zero feature rows (the compile-size padding) add nothing to the eta subgradient: the
    classifier update is bitwise the same."""
    import jax.numpy as jnp

    from regbayes.algorithms.medlda_gibbs import pad_rows
    from regbayes.algorithms.medlda_ssgrld import eta_update
    from regbayes.precision import enable_x64
    from regbayes.samplers.sgld import SGLDState

    rng = np.random.default_rng(0)
    zbar, y = rng.dirichlet(np.ones(3), size=5), np.array([[1.0], [-1.0], [1.0], [1.0], [-1.0]])
    with enable_x64():
        state = SGLDState(np.ones((1, 3)), np.zeros((1, 3)), np.zeros(1), np.ones((1, 3)))
        consts = [jnp.asarray(v, jnp.float64) for v in (20.0, 1.0, 1.0)]
        runs = [eta_update(0, state, pad_rows(zbar, n), pad_rows(y, n), *consts, 0.5, crammer_singer=False)
                for n in (5, 64)]
    np.testing.assert_array_equal(np.asarray(runs[0].position), np.asarray(runs[1].position))


def test_sgrld_topic_step_equals_the_reference_step():
    """The numba SGRLD step of the topics against Patterson & Teh's eq. 10 in NumPy
    (:func:`regbayes.samplers.sgrld.sgrld_simplex_step`'s formula) with the same normal
    variates (one generator per block of topics, seeded from the step's generator); Phi =
    theta / row sums, transposed. One thread or two: the same result."""
    import numba

    from regbayes.algorithms.sgrld_topics import NOISE_BLOCKS, sgrld_topics

    rng = np.random.default_rng(0)
    theta, expected = rng.gamma(1.0, size=(3, 8)), rng.poisson(2.0, size=(3, 8)).astype(float)
    theta[1, 2] = 1e-300  # a coordinate near 0: the result stays positive
    theta_new, phi_t, finite = sgrld_topics(np.random.default_rng(7), theta, expected, 4.0, 0.1, 0.05)
    seeds = np.random.default_rng(7).integers(2**63, size=NOISE_BLOCKS)
    bounds = np.linspace(0, 3, NOISE_BLOCKS + 1).round().astype(int)
    xi = np.vstack([np.random.Generator(np.random.PCG64(int(seed))).standard_normal((b - a, 8), dtype=np.float32)
                    for seed, a, b in zip(seeds, bounds[:-1], bounds[1:])]).astype(np.float64)
    pi = theta / theta.sum(axis=1, keepdims=True)
    drift = 0.1 - theta + 4.0 * (expected - pi * expected.sum(axis=1, keepdims=True))
    reference = np.maximum(np.abs(theta + 0.025 * drift + np.sqrt(theta) * np.sqrt(0.05) * xi), np.finfo(float).tiny)
    np.testing.assert_allclose(theta_new, reference, rtol=1e-12)
    np.testing.assert_allclose(phi_t.T, reference / reference.sum(axis=1, keepdims=True), rtol=1e-12)
    assert finite and np.all(theta_new > 0)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        serial = sgrld_topics(np.random.default_rng(7), theta, expected, 4.0, 0.1, 0.05)
    finally:
        numba.set_num_threads(threads)
    np.testing.assert_array_equal(serial[0], theta_new)
    np.testing.assert_array_equal(serial[1], phi_t)
    assert not sgrld_topics(np.random.default_rng(7), np.full((2, 3), np.inf), np.zeros((2, 3)), 1.0, 0.1, 0.05)[2]


# ---------------------------------------------------------------- many classes, eq. 21, divergence
def test_crammer_singer_with_many_classes_stays_bounded_and_predicts():
    """Ten unbalanced classes (1 to 168 training documents): classes missing from a minibatch
    must not get an unbounded classifier step (the eta of training, so no refit). Measured (seed 0): accuracy 0.87, max |eta| 5.3
    over the kept draws; before AdaGrad's accumulator had a floor, 0.25 (below the majority
    class's 0.28) with |eta| up to 1.3e4. 0.6 is 13 binomial standard errors (0.02 on 400
    documents) below 0.87 and 16 above the majority rate; |eta| < 20 is 20 prior standard
    deviations."""
    X, y, _, _ = make_topic_corpus(n_docs=1000, n_topics=10, n_words=200, doc_length=50, n_classes=10, random_state=0)
    model = MedLDA(n_topics=10, alpha=0.1, beta=0.05, C=10.0, multi_class="crammer_singer", sampler="ssgrld",
                   n_iter=100, batch_size=50, refit_classifier=False, random_state=0).fit(X[:600], y[:600])
    assert np.abs(model.coef_samples_).max() < 20.0
    assert model.score(X[600:], y[600:]) >= 0.6


@pytest.mark.parametrize("seed", range(3))
def test_crammer_singer_subgradient_matches_finite_differences(seed):
    """The eta subgradient of eq. 21 used by the ssgrld update (the Crammer–Singer potential
    on zbar) against central differences of the potential, at random points where no hinge
    sits at a kink (the active set is the same at eta +- h): agreement to 1e-6 relative,
    far above float64 round-off (1e-10 for h = 1e-5) and far below a sign or factor error."""
    from regbayes.precision import enable_x64
    from regbayes.potentials import SVMData, build_potential

    rng = np.random.default_rng(seed)
    n, M, Kt = 30, 6, 4
    zbar = rng.dirichlet(np.full(Kt, 0.3), size=n)
    eta = rng.normal(0.0, 5.0, size=(M, Kt))
    # half the documents labelled by their largest discriminant (hinges mostly inactive)
    labels = np.where(np.arange(n) < n // 2, np.argmax(zbar @ eta.T, axis=1), rng.integers(0, M, size=n))
    potential = build_potential(None)
    with enable_x64():
        data = SVMData(zbar, labels.astype(np.int32), 3.0, 1.0, 1.5)
        _, grad = potential.value_and_subgrad(eta, data)
        h = 1e-5
        numeric = np.zeros_like(eta)
        for index in np.ndindex(eta.shape):
            step = np.zeros_like(eta)
            step[index] = h
            up = float(potential.value_and_subgrad(eta + step, data)[0])
            down = float(potential.value_and_subgrad(eta - step, data)[0])
            numeric[index] = (up - down) / (2 * h)
    F = zbar @ eta.T
    others = np.where(np.eye(M, dtype=bool)[labels], -np.inf, F)
    zeta = 1.0 + others.max(axis=1) - F[np.arange(n), labels]
    gaps = np.diff(np.sort(others, axis=1)[:, -2:], axis=1)  # the runner-up must be unique too
    assert np.min(np.abs(zeta)) > 1e-3 and np.min(gaps) > 1e-3  # away from kinks at this h
    assert np.any(zeta > 0) and np.any(zeta < 0)  # both branches of the hinge present
    np.testing.assert_allclose(np.asarray(grad), numeric, rtol=1e-6, atol=1e-6)


def test_divergence_raises_instead_of_returning_huge_weights(corpus):
    """A classifier step far too large makes eta explode; fit raises DivergenceError (a
    FloatingPointError) instead of returning coefficients no posterior draw has."""
    from regbayes.inference import DivergenceError

    Xtr, ytr, *_ = corpus
    with pytest.raises(DivergenceError, match="classifier weights diverged"):
        MedLDA(sampler="ssgrld", n_iter=20, batch_size=50, classifier_step_size=1e4, **COMMON).fit(Xtr, ytr)


def test_topic_divergence_raises(corpus):
    """A topic step so large that the SGRLD move of theta overflows (eps = 1e308) gives a
    non-finite Phi; fit raises DivergenceError naming the topic step instead of going on."""
    from regbayes.inference import DivergenceError

    Xtr, ytr, *_ = corpus
    with pytest.raises(DivergenceError, match="diverged at iteration 0: the topics diverged.*topic_step_size"):
        MedLDA(sampler="ssgrld", n_iter=5, batch_size=50, topic_step_size=1e308, **COMMON).fit(Xtr, ytr)


def test_refit_classifier_samples_eta_on_label_free_topic_proportions(corpus):
    """``refit_classifier`` samples the classifier anew on the training documents' label-free
    topic proportions; the topics are untouched (same random_state, same Phi draws), the
    draws vote on ``transform`` of new documents, and the refitted classifier predicts
    (measured 0.96-0.97; threshold as in test_topics_recovered_and_labels_predicted)."""
    Xtr, ytr, Xte, yte, _, _ = corpus
    params = dict(sampler="gibbs", n_iter=10, **COMMON)
    plain = MedLDA(refit_classifier=False, **params).fit(Xtr, ytr)
    refitted = MedLDA(refit_classifier=True, **params).fit(Xtr, ytr)
    np.testing.assert_array_equal(plain.topic_word_samples_, refitted.topic_word_samples_)
    assert plain.coef_samples_.shape[0] == plain.topic_word_samples_.shape[0]
    assert refitted.coef_samples_.shape == (REFIT_RUNS["gibbs"]["n_draws"], 1, COMMON["n_topics"])
    assert "refit_seconds" not in plain.trace_ and refitted.trace_["refit_seconds"] > 0
    np.testing.assert_allclose(refitted.decision_function(Xte), refitted.transform(Xte) @ refitted.coef_[0], atol=1e-10)
    assert refitted.score(Xte, yte) >= 0.93


def test_refit_draws_fold_the_standardisation_into_eta():
    """eta from :func:`to_proportion_units` gives the standardised classifier's discriminant
    on every point of the simplex (exact up to rounding)."""
    rng = np.random.default_rng(0)
    S, M, K = 3, 4, 6
    w, b = rng.normal(size=(S, M, K)), rng.normal(size=(S, M))
    mean, scale = rng.dirichlet(np.ones(K)), rng.uniform(0.05, 0.3, size=K)
    x = rng.dirichlet(np.ones(K), size=20)
    eta = to_proportion_units(w, b, mean, scale)
    expected = np.einsum("smk,dk->sdm", w, (x - mean) / scale) + b[:, None, :]
    np.testing.assert_allclose(np.einsum("smk,dk->sdm", eta, x), expected, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- several labels per document
@pytest.fixture(scope="module")
def multilabel_corpus():
    """4 labels from per-label hinges on zbar (make_multilabel_topic_corpus; label rates
    0.36-0.71). Reference: one LinearSVC per label on the true theta scores micro-F1 0.972,
    macro-F1 0.971 on the 400 test documents."""
    from regbayes.datasets.topic_corpus import make_multilabel_topic_corpus

    X, Y, phi, _ = make_multilabel_topic_corpus(n_docs=1000, n_topics=K, n_words=200, doc_length=50, n_labels=4,
                                                intercept=0.0, random_state=0)
    return X[:600], Y[:600], X[600:], Y[600:], phi


@pytest.mark.parametrize("sampler, params", [("gibbs", dict(n_iter=30, refit_classifier=False)),
                                             ("ssgrld", dict(n_iter=150, batch_size=50))])
def test_label_matrix_fits_one_classifier_per_label(sampler, params, multilabel_corpus):
    from sklearn.metrics import f1_score

    Xtr, Ytr, Xte, Yte, phi = multilabel_corpus
    model = MedLDA(sampler=sampler, **params, **COMMON).fit(Xtr, Ytr)
    assert model.multi_class_ == "ovr" and model.coef_.shape == (4, K)
    np.testing.assert_array_equal(model.classes_, np.arange(4))
    pred = model.predict(Xte)
    assert pred.shape == (400, 4) and set(np.unique(pred)) <= {0, 1}
    # measured (seed 0): gibbs 0.971 micro / 0.971 macro, ssgrld (refit) 0.986 / 0.985; the
    # oracle on the true theta 0.972 / 0.971. 0.94 is 3 points below it, about 3 binomial
    # standard errors on 400 documents per label
    assert f1_score(Yte, pred, average="micro") >= 0.94
    assert f1_score(Yte, pred, average="macro") >= 0.94
    assert matched_topic_distance(model.components_, phi) < 0.2
    decision, proba = model.decision_function(Xte), model.predict_proba(Xte)
    assert decision.shape == proba.shape == (400, 4)
    np.testing.assert_array_equal(pred, (decision > 0).astype(int))  # the sign of each label's discriminant
    assert np.all((proba >= 0) & (proba <= 1))
    # the votes agree with the mean discriminant wherever they are unanimous
    np.testing.assert_array_equal(pred[proba == 1], 1)
    np.testing.assert_array_equal(pred[proba == 0], 0)


@pytest.mark.parametrize("sampler, params, refit", [("gibbs", dict(n_iter=4), False),
                                                    ("ssgrld", dict(n_iter=12, batch_size=40), True)])
def test_one_hot_label_matrix_is_exactly_one_vs_rest(sampler, params, refit):
    """A one-hot label matrix gives y_sign = 2 Y - 1, the one-vs-rest columns of the class
    labels: the same draws, bit for bit (the refit too, by the label-column Gibbs kernel)."""
    X, _, _, _ = make_topic_corpus(n_docs=240, n_topics=3, n_words=80, doc_length=30, random_state=3)
    y = np.arange(240) % 3
    common = dict(sampler=sampler, n_topics=3, refit_classifier=refit, n_transform_sweeps=4, **params)
    ovr = MedLDA(multi_class="ovr", **common).fit(X, y)
    labels = MedLDA(**common).fit(X, np.eye(3, dtype=int)[y])
    np.testing.assert_array_equal(ovr.components_, labels.components_)
    np.testing.assert_array_equal(ovr.coef_samples_, labels.coef_samples_)
    np.testing.assert_array_equal(ovr.decision_function(X[:30]), labels.decision_function(X[:30]))


@pytest.mark.parametrize(
    "Y, match",
    [
        (np.array([[0, 2], [1, 0]] * 20), r"values other than 0 and 1 \(20 entries, e.g. 2\)"),
        (np.array([[0.5, 1.0], [1.0, 0.0]] * 20), r"values other than 0 and 1"),
        (np.array([["a", "b"], ["b", "a"]] * 20), r"must be numeric or boolean"),
        (np.array([[0, 1, 0], [1, 1, 0]] * 20), r"label column 1 of y holds the value 1 \(every document has the label\)"),
        (np.array([[0, 1, 0], [1, 0, 0]] * 20), r"label column 2 of y holds the value 0 \(no document has the label\)"),
    ],
)
def test_bad_label_matrix(Y, match, corpus):
    Xtr = corpus[0][:40]
    with pytest.raises(ValueError, match=match):
        MedLDA(sampler="gibbs", n_iter=1, **COMMON).fit(Xtr, Y)


def test_label_matrix_refuses_crammer_singer_and_keeps_the_input(multilabel_corpus):
    Xtr, Ytr, *_ = multilabel_corpus
    with pytest.raises(ValueError, match="multi_class='crammer_singer' needs one class per document"):
        MedLDA(multi_class="crammer_singer", n_iter=1, **COMMON).fit(Xtr, Ytr)
    Y = sp.csr_matrix(Ytr[:200])
    before = Y.copy()
    model = MedLDA(sampler="gibbs", n_iter=2, refit_classifier=False, **COMMON).fit(Xtr[:200], Y)
    assert model.predict(Xtr[:5]).shape == (5, 4)
    assert (Y != before).nnz == 0
    staged = list(MedLDA(sampler="ssgrld", n_iter=4, batch_size=50, snapshot_every=2, refit_classifier=False, **COMMON)
                  .fit(Xtr[:200], Ytr[:200]).staged_predict(Xtr[:7]))
    assert [labels.shape for _, labels in staged] == [(7, 4), (7, 4)]
