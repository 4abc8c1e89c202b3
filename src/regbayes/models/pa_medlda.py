"""``PassiveAggressiveMedLDA``: online Bayesian passive-aggressive MedLDA (paMedLDA-gibbs;
Shi & Zhu 2014; the comparison of paper 000, section 5.2, Fig. 8) as a scikit-learn
classifier.

The model is MedLDA's (paper 000, section 4.1): LDA with K topics, the Gibbs classifier's
binary hinge pseudo-likelihood ``exp(-c max(0, l - y_d eta^T zbar_d))`` (eq. 20) on the
average topic assignment (eq. 16), ``eta ~ N(0, nu^2 I)``; several classes one-vs-rest, or
one binary classifier per label of a 0/1 label matrix, sharing the topics. The documents
are read once, in minibatches: each minibatch moves ``q(Phi) q(eta)`` to the distribution
closest in KL to the previous one that pays the minibatch's hinge loss, with Gibbs
sampling for the minibatch's topic assignments and data augmentation for eta
(:mod:`regbayes.algorithms.pa_medlda`, run by :func:`regbayes.inference.run`).

Prediction (:mod:`regbayes.models.topic_classifier`): ``n_draws`` pairs ``(Phi_s, eta_s)``
from the final ``q(Phi) q(eta)``; each votes with ``eta_s`` on ``E[zbar_d | Phi_s]`` of a new
document (the papers' rule), or, with ``refit_classifier=True``, the classifier sampled
anew on the training documents' label-free topic proportions
(:mod:`regbayes.models.medlda_refit`, as ``MedLDA`` does by default) votes on
:meth:`~PassiveAggressiveMedLDA.transform`'s proportions. A document's random stream is
keyed by its content, so predictions do not depend on row order or on the other rows.

Empty documents: dropped from training with a warning; at prediction time they get the
prior mean topic proportions ``1/K``.
"""
from __future__ import annotations

import time

import jax
import numpy as np
from sklearn.base import ClassifierMixin, TransformerMixin
from sklearn.utils._param_validation import StrOptions

from ..algorithms import lda_kernels as kern
from ..algorithms import pa_medlda
from ..algorithms.topic_inference import topic_proportions
from ..inference import Algorithm, run
from ..rng import host_seeds
from .base import RegBayesEstimator
from .medlda_refit import refit_classifier
from .topic_classifier import TopicClassifierMixin, multilabel_tags
from .topic_input import TOPIC_CLASSIFIER_CONSTRAINTS, TOPIC_CONSTRAINTS, CountInputMixin, at_least, run_trace

_CONSTRAINTS = {key: value for key, value in TOPIC_CONSTRAINTS.items() if key != "n_iter"}


class PassiveAggressiveMedLDA(ClassifierMixin, TransformerMixin, TopicClassifierMixin, CountInputMixin,
                              RegBayesEstimator):
    """Online Bayesian passive-aggressive MedLDA with Gibbs sampling (paMedLDA-gibbs).

    Parameters
    ----------
    n_topics : int, default=20
        K, the number of topics (>= 2).
    alpha, beta : float, default=0.1, 0.01
        Symmetric Dirichlet parameters of the document-topic and topic-word priors
        (``beta`` is ``q_0(Phi)``).
    C : float, default=1.0
        c, scale of the hinge pseudo-likelihood (eq. 20).
    margin : float, default=1.0
        l, the margin.
    prior_scale : float, default=1.0
        nu: ``q_0(eta) = N(0, nu^2 I)``.
    batch_size : int, default=100
        Documents per minibatch; one pass reads ``ceil(n_docs / batch_size)`` of them (the
        last may be smaller), in a random order drawn from ``random_state``.
    n_inner_iter : int, default=3
        Inner iterations per minibatch: sweeps, then the classifier's augmented update,
        each iteration seeing the previous one's counts and eta (the reference
        implementation's default ``I = 3``). On the unit tests' corpus (600 documents,
        K = 5, minibatches of 50) one pass scored 0.84-0.94 with one inner iteration
        (seeds 0-4, ``topic_weights="mean_field"``) and 0.935-0.972 with three (seeds 0-5,
        "mean").
    n_inner_sweeps : int, default=4
        Gibbs sweeps over the minibatch's tokens per inner iteration; the last
        ``n_inner_sweeps - n_inner_burnin`` give the expected counts.
    n_inner_burnin : int, default=2
    topic_weights : {"mean", "mean_field"}, default="mean"
        Phi in the sweeps: ``E_q[Phi]``, or the mean-field ``exp(E_q[log Phi])`` of the
        paper's derivation (:func:`regbayes.algorithms.pa_medlda.topic_weights` says why
        the mean is the default).
    n_draws : int, default=5
        Pairs ``(Phi_s, eta_s)`` drawn from the final ``q(Phi) q(eta)`` for prediction.
    n_transform_sweeps : int, default=20
        Gibbs sweeps with Phi fixed used by ``transform``/``predict`` (the first half is
        burn-in, the second half averaged).
    refit_classifier : bool, default=False
        After the pass, sample the classifier anew on the training documents' label-free
        topic proportions (:mod:`regbayes.models.medlda_refit`; one binary classifier per
        column of ``y_sign``) and predict with it. A second pass over the training
        documents, so not online; off by default.
    vectorizer : sklearn CountVectorizer, optional
        Used (cloned) when ``fit`` gets raw texts; default
        ``CountVectorizer(stop_words="english")``. The fitted copy is ``vectorizer_``.
    snapshot_every : int, optional
        Keep a snapshot ``{iteration, n_docs, wall_time, topic_word (E_q[Phi]), coef (the
        current draw of eta)}`` every that many minibatches in ``snapshots_`` (for
        ``staged_predict``).
    callback : callable, optional
        ``callback(info)`` after every minibatch, with ``info`` a dict of ``iteration``,
        ``n_docs``, ``wall_time``, ``topic_word`` and ``coef`` as in the snapshots;
        returning True stops the run.
    n_jobs : int, optional
        Threads for the documents of a minibatch and for ``transform``/``predict``; None
        uses numba's default (all cores). Results do not depend on n_jobs.
    random_state : int, default=0
    progress : bool, default=False
    checkpoint : str or path-like, default=None
        A file where the fit writes a checkpoint, atomically, every ``checkpoint_every``
        seconds (0: every iteration); a fit interrupted and started again with the same
        arguments and data continues from it to the fitted attributes of an uninterrupted
        fit (:meth:`regbayes.models.base.RegBayesEstimator._host_checkpoint`).
    checkpoint_every : float, default=60.0

    Attributes
    ----------
    classes_ : labels; for a label matrix y, the label indices ``0 .. L-1``.
    components_ : (K, V) ``E_q[Phi]`` after the pass (rows sum to 1).
    topic_counts_ : (K, V) the Dirichlet parameters of ``q(Phi)``.
    coef_ : (M, K) mean of the classifier draws used for prediction (M = 1 for two
        classes, else one row per class or label).
    coef_mean_, coef_precision_ : (M, K) and (M, K, K): ``q(eta)``'s mean and precision.
    topic_word_samples_, coef_samples_ : the draws voting in ``predict``: the ``n_draws``
        pairs from ``q(Phi) q(eta)``, or the refitted classifier's draws.
    n_iter_ : minibatches processed; batch_size_ : documents per minibatch.
    trace_ : dict of arrays per minibatch: ``iteration``, ``n_docs``, ``n_tokens``,
        ``wall_time`` (cumulative seconds of sampling, callbacks and snapshots excluded),
        ``tokens_per_second``; scalars ``compile_seconds`` and, with
        ``refit_classifier``, ``refit_seconds``.
    snapshots_ : list of snapshot dicts (``snapshot_every``).
    """

    _parameter_constraints = {
        **_CONSTRAINTS,
        **TOPIC_CLASSIFIER_CONSTRAINTS,
        "n_inner_iter": [at_least(1)],
        "topic_weights": [StrOptions(set(pa_medlda.TOPIC_WEIGHTS))],
    }

    def __init__(
        self,
        n_topics=20,
        alpha=0.1,
        beta=0.01,
        C=1.0,
        margin=1.0,
        prior_scale=1.0,
        batch_size=100,
        n_inner_iter=3,
        n_inner_sweeps=4,
        n_inner_burnin=2,
        topic_weights="mean",
        n_draws=5,
        n_transform_sweeps=20,
        refit_classifier=False,
        vectorizer=None,
        snapshot_every=None,
        callback=None,
        n_jobs=None,
        random_state=0,
        progress=False,
        checkpoint=None,
        checkpoint_every=60.0,
    ):
        self.n_topics = n_topics
        self.alpha = alpha
        self.beta = beta
        self.C = C
        self.margin = margin
        self.prior_scale = prior_scale
        self.batch_size = batch_size
        self.n_inner_iter = n_inner_iter
        self.n_inner_sweeps = n_inner_sweeps
        self.n_inner_burnin = n_inner_burnin
        self.topic_weights = topic_weights
        self.n_draws = n_draws
        self.n_transform_sweeps = n_transform_sweeps
        self.refit_classifier = refit_classifier
        self.vectorizer = vectorizer
        self.snapshot_every = snapshot_every
        self.callback = callback
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.progress = progress
        self.checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every

    def fit(self, X, y):
        """One pass over a (n_docs, V) count matrix (scipy.sparse or dense) or a list of raw
        texts, with class labels y (n_docs,) or a 0/1 label-indicator matrix y (n_docs, L)."""
        self._validate_params()
        if self.n_inner_burnin >= self.n_inner_sweeps:
            raise ValueError(
                f"n_inner_burnin ({self.n_inner_burnin}) must be smaller than n_inner_sweeps ({self.n_inner_sweeps})"
            )
        counts, y = self._training_documents(X, y)
        codes, y_sign = self._encode_targets(y)
        n_docs = counts.shape[0]
        batch_size = min(self.batch_size, n_docs)
        doc_ptr, words = kern.tokens_from_counts(counts)
        # one key per fit: the order and prediction seeds, the pass, the final draws, the refit
        k_init, k_run, k_draws, k_refit = jax.random.split(self._fit_key(), 4)
        order_seed, self._inference_seed = (int(s) for s in host_seeds(k_init, 2))
        order = np.random.default_rng(order_seed).permutation(n_docs)
        data = pa_medlda.make_data(
            doc_ptr, words, y_sign, n_topics=self.n_topics, n_words=counts.shape[1], alpha=self.alpha, beta=self.beta,
            C=self.C, margin=self.margin, prior_scale=self.prior_scale, batch_size=batch_size,
            n_inner_iter=self.n_inner_iter, n_inner_sweeps=self.n_inner_sweeps, n_inner_burnin=self.n_inner_burnin,
            order=order, topic_weights=self.topic_weights, n_jobs=self.n_jobs,
        )
        self._store_settings(batch_size=batch_size)
        algorithm = Algorithm(pa_medlda.step, "PassiveAggressiveMedLDA", compile=pa_medlda.compile_kernels,
                              check=pa_medlda.divergence_check(data))
        result = self._run(algorithm, pa_medlda.init(0, data), data, k_run)
        state = result.state
        self.topic_counts_ = state.topic_counts
        self.components_ = pa_medlda.topic_word(state)
        self.coef_precision_ = state.precision
        self.coef_mean_ = np.linalg.solve(state.precision, state.shift[..., None])[..., 0]
        self.topic_word_samples_, self.coef_samples_ = pa_medlda.posterior_draws(k_draws, state, self.n_draws)
        self._refitted = False
        trace = run_trace(result)
        if self.refit_classifier:
            start = time.perf_counter()
            features = topic_proportions(doc_ptr, words, self.components_, self.alpha, self.n_transform_sweeps,
                                         self._inference_seed, self.n_jobs)
            self.coef_samples_ = refit_classifier(features, codes, y_sign, crammer_singer=False, C=self.C,
                                                  margin=self.margin, prior_scale=self.prior_scale, key=k_refit,
                                                  progress=self.progress, multilabel=self._multilabel)
            self._refitted = True
            trace["refit_seconds"] = time.perf_counter() - start
        self.coef_ = self.coef_samples_.mean(axis=0)
        self.n_topics_ = self.n_topics
        self.n_iter_ = result.n_iter
        self.trace_ = trace
        return self

    def _run(self, algorithm, state, data, key):
        """The pass: one driver iteration per minibatch, with snapshots and the callback."""
        snapshots = {"snapshots": []}  # the run's carry: checkpointed with it

        def monitor(t, state, info, wall_time):
            record = {"iteration": t + 1, "n_docs": int(info.n_docs), "wall_time": wall_time}
            if self.snapshot_every is not None and (t + 1) % self.snapshot_every == 0:
                snapshots["snapshots"].append({**record, "topic_word": pa_medlda.topic_word(state), "coef": np.array(state.eta)})
            if self.callback is not None:
                return bool(self.callback({**record, "topic_word": pa_medlda.topic_word(state),
                                           "coef": np.array(state.eta)}))
            return False

        watched = self.snapshot_every is not None or self.callback is not None
        result = run(algorithm, state, data, key, n_iter=data.n_batches, monitor=monitor if watched else None,
                     progress=self.progress, desc=algorithm.name, carry=snapshots, checkpoint=self._host_checkpoint())
        self.snapshots_ = snapshots["snapshots"]
        return result

    def __sklearn_tags__(self):
        return multilabel_tags(super().__sklearn_tags__())
