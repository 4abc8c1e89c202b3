"""``MedLDA``: the max-margin supervised topic model (Gibbs MedLDA) as a scikit-learn classifier.

Model (paper 000, section 4.1; paper 002, Appendix B): LDA with K topics
``phi_k ~ Dir(beta)``, ``theta_d ~ Dir(alpha)``, ``z_dn ~ theta_d``, ``w_dn ~ phi_{z_dn}``,
and a Gibbs classifier on the average topic assignment ``zbar_d`` (eq. 16) with the hinge
pseudo-likelihood ``psi(y_d | zbar_d, eta) = exp(-c max(0, l - y_d eta^T zbar_d))`` (eq. 20;
Crammer–Singer form ``exp(-c max(0, l + max_{y != y_d} eta_y^T zbar_d - eta_{y_d}^T zbar_d))``
for ``multi_class="crammer_singer"``, eq. 17) and ``eta ~ N(0, nu^2 I)``.

Two samplers, each an algorithm of :mod:`regbayes.algorithms` run by the driver
(:func:`regbayes.inference.run`):

* ``"gibbs"`` -- Gibbs MedLDA with data augmentation (:mod:`regbayes.algorithms.medlda_gibbs`):
  Theta and Phi collapsed, one binary classifier per class for several classes (the
  Crammer–Singer hinge has no data augmentation, so it enters only through
  ``refit_classifier``).
* ``"ssgrld"`` -- paper 000, Algorithm 1 (:mod:`regbayes.algorithms.medlda_ssgrld`): per
  minibatch, Gibbs sweeps of eq. 22, then SGRLD for Phi and SSGLD for eta (eq. 21).

Prediction. With ``refit_classifier=False``, as the papers do (paper 000, section 4.1.2, "as
described in [42]"): for each of the ``n_draws`` kept draws (Phi_s, eta_s), E[zbar_d] of a
new document from Gibbs sweeps with Phi_s fixed and no label (the second half of
``n_transform_sweeps`` averaged), then the vote of ``argmax_y eta_s,y^T E[zbar_d]`` (two
classes: its sign). With ``refit_classifier=True`` (default, a departure from the papers;
see the parameter) the classifier is sampled anew on the training documents' label-free
topic proportions (:meth:`MedLDA.transform`; :mod:`regbayes.models.medlda_refit`), and its
draws vote on a new document's proportions. A document's random stream is keyed by its
content, so predictions do not depend on row order or on the other rows.

Multi-label: ``y`` may be a label-indicator matrix Y (D, L) of 0/1. Each label then has its
own binary hinge (eq. 20 with ``y_dl = 2 Y_dl - 1``) and classifier ``eta_l``, sharing the
topics: the token conditionals (eq. 22 for ssgrld; the augmented collapsed conditional for
gibbs) multiply the L hinge factors, the one-vs-rest machinery of several classes with the
label's sign in place of the class indicator. ``predict`` returns the indicator matrix,
``predict_proba`` and ``decision_function`` one column per label
(:mod:`regbayes.models.topic_classifier`).

Empty documents: dropped from training with a warning (they carry no word and no
``zbar_d``); at prediction time they are kept and get the prior mean topic proportions
``1/K``, so they are predicted from the classifier at ``zbar = 1/K``.
"""
from __future__ import annotations

import os
import time
import warnings

import jax
import numpy as np
from sklearn.base import ClassifierMixin, TransformerMixin
from sklearn.utils._param_validation import StrOptions

from .. import schedules
from ..algorithms import lda_kernels as kern
from ..algorithms import medlda_gibbs, medlda_ssgrld
from ..algorithms.topic_inference import topic_proportions
from ..datasets.row_blocks import is_row_source
from ..inference import Algorithm, run
from ..rng import host_seeds
from ..samplers import defaults
from .base import RegBayesEstimator
from .medlda_refit import refit_classifier
from .medlda_shards import fit_sharded
from .topic_classifier import TopicClassifierMixin, multilabel_tags
from .topic_input import (
    POSITIVE, TOPIC_CLASSIFIER_CONSTRAINTS, TOPIC_CONSTRAINTS, CountInputMixin, at_least, run_trace,
)

SAMPLERS = ("ssgrld", "gibbs")
MULTI_CLASS = ("auto", "ovr", "crammer_singer")
_STEP = [POSITIVE, callable, None]
#: ``n_iter="auto"`` with sampler="ssgrld": this many passes over the training documents
#: (``ceil(AUTO_PASSES * n_docs / batch_size)`` minibatches), within ``AUTO_ITER_RANGE``.
#: What the real corpora needed to come within a point of Gibbs MedLDA's default accuracy
#: (BENCHMARKS.md, "Real corpora"; CHANGELOG.md): on wordnet-nouns (65,099 documents) 3
#: passes ended 2.5 points short (0.492 against 0.518) and 4 passes 0.5 short (0.513), 6
#: passes 0.526; 500 iterations on fortunes (11,645 documents, 4.3 passes; the floor),
#: 180-240 on the synthetic 12,000 documents.
AUTO_PASSES = 4.0
AUTO_ITER_RANGE = (500, 20_000)


def _is_block_data(X) -> bool:
    """Data read block by block: a Dask collection, RowBlocks, or a string or path that
    names files (a single string of text is one document, refused as such elsewhere)."""
    if isinstance(X, (str, os.PathLike)):
        path = os.fspath(X)
        return os.path.exists(os.path.expanduser(path)) or any(ch in path for ch in "*?[")
    return is_row_source(X)


def auto_iterations(sampler, n_docs, batch_size):
    """The run length ``n_iter="auto"`` stands for: Gibbs MedLDA's default sweeps, or for
    SSGRLD :data:`AUTO_PASSES` passes over ``n_docs`` documents in minibatches of
    ``batch_size``, clipped to :data:`AUTO_ITER_RANGE`."""
    if sampler != "ssgrld":
        return defaults.MEDLDA_N_ITER[sampler]
    lo, hi = AUTO_ITER_RANGE
    return int(min(max(int(np.ceil(AUTO_PASSES * n_docs / batch_size)), lo), hi))


class MedLDA(ClassifierMixin, TransformerMixin, TopicClassifierMixin, CountInputMixin, RegBayesEstimator):
    """Max-margin supervised topic model (Gibbs MedLDA) with a Gibbs or a stochastic sampler.

    Parameters
    ----------
    n_topics : int, default=20
        K, the number of topics (>= 2).
    alpha, beta : float, default=0.1, 0.01
        Symmetric Dirichlet parameters of the document-topic and topic-word priors
        (paper 000's 20 Newsgroups setting is ``alpha = beta = 1``).
    C : float, default=1.0
        c, scale of the hinge pseudo-likelihood (eq. 20).
    margin : float, default=1.0
        l, the margin.
    prior_scale : float, default=1.0
        nu, standard deviation of the Gaussian prior on the classifier weights eta.
    sampler : {"ssgrld", "gibbs"}, default="ssgrld"
    multi_class : {"auto", "ovr", "crammer_singer"}, default="auto"
        Three or more classes: one binary classifier per class sharing the topics ("ovr",
        the papers' multi-task formulation), or the Crammer–Singer hinge of eqs. 16-17
        ("crammer_singer"). sampler="ssgrld" trains with the chosen hinge. sampler="gibbs"
        always trains one-vs-rest (data augmentation exists for the binary hinge only);
        there the choice applies to the ``refit_classifier`` classifier, so
        "crammer_singer" needs ``refit_classifier=True``. "auto" is "crammer_singer",
        except "ovr" for sampler="gibbs" with ``refit_classifier=False`` (measurements
        under ``refit_classifier``). Ignored for two classes (one binary classifier). A
        label matrix y is always one binary classifier per label ("auto" is "ovr";
        "crammer_singer" is refused).
    batch_size : int, default=100
        Documents per minibatch (ssgrld).
    n_iter : int or "auto", default="auto"
        Iterations: full Gibbs sweeps over the corpus (gibbs; "auto" is 100) or minibatch
        updates (ssgrld; "auto" is 4 passes over the training documents,
        ``ceil(4 n_docs / batch_size)``, at least 500 and at most 20,000: 500 up to 12,500
        documents in minibatches of 100, 2,604 for 65,099). None is "auto". The resolved
        value is ``n_iter_``.
    n_inner_sweeps : int, default=4
        ssgrld: Gibbs sweeps of eq. 22 over a minibatch per iteration; the last
        ``n_inner_sweeps - n_inner_burnin`` give the expected counts E[zbar], E[n_kw]
        (E[n_kw] in the run's second half from the tokens' conditional probabilities).
        Each document's assignments persist between its visits, so the sweeps continue a
        chain rather than start one (the defaults: :mod:`regbayes.algorithms.medlda_ssgrld`).
    n_inner_burnin : int, default=2
    topic_step_size : float or callable, optional
        ssgrld: SGRLD step ``eps_t`` for Phi; a float ``a`` means
        ``a (1 + t / 100)^(-0.55)`` (paper 000: b = 100); a callable ``t -> eps_t`` is used
        as is. Default ``a = 0.05``.
    classifier_step_size : float or callable, optional
        ssgrld: SSGLD step h for eta (AdaGrad-preconditioned; a float is constant; default 0.5).
    n_draws : int, default=5
        Posterior draws of (Phi, eta) kept, evenly spaced over the second half of the run
        (``components_`` averages Phi over every iteration of that half). ``predict_proba``
        gives the Gibbs classifier's vote fractions over the draws of eta (these, or the
        refitted classifier's: ``refit_classifier``); ``predict`` the class with most votes
        (ties: larger mean discriminant).
    n_transform_sweeps : int, default=20
        Gibbs sweeps with Phi fixed used by ``transform``/``predict`` (once with
        ``components_`` under ``refit_classifier``, else once per kept draw); the first
        half is burn-in, the second half averaged.
    refit_classifier : bool, default=True
        After sampling, sample the classifier anew on the training documents' label-free
        topic proportions -- :meth:`transform`'s features, the ones ``predict`` computes for
        new documents -- standardised per topic, with this model's ``C``, ``margin`` and
        ``prior_scale`` and an intercept (:data:`regbayes.samplers.defaults.REFIT_RUNS`;
        :mod:`regbayes.models.medlda_refit`): SSGLD with the Crammer–Singer hinge for three
        or more classes, else Gibbs with data augmentation (one binary classifier, or one per class under
        ``multi_class="ovr"``, or one per label). Its draws, folded back into
        topic-proportion units (``coef_samples_``), vote on :meth:`transform` of new
        documents. A departure from the papers, which predict with the eta of training:
        that eta separates features shaped by the labels (eq. 13/22 pulls each training
        token towards its class), which new documents never get (measured gains:
        :mod:`regbayes.models.medlda_refit`). It does not apply to ``staged_predict``
        (snapshots keep their eta).
    vectorizer : sklearn CountVectorizer, optional
        Used (cloned) when ``fit`` gets raw texts; default
        ``CountVectorizer(stop_words="english")``. The fitted copy is ``vectorizer_``.
    snapshot_every : int, optional
        Keep a snapshot of (Phi, eta) every that many iterations in ``snapshots_`` (for
        accuracy against documents processed / wall time: see ``staged_predict``).
    callback : callable, optional
        ``callback(info)`` after every iteration, with ``info`` a dict of ``iteration``,
        ``n_docs`` (cumulative documents processed), ``wall_time`` (seconds of sampling,
        callback time excluded), ``topic_word`` (K, V) and ``coef`` (current eta).
        Returning True stops the run.
    n_jobs : int, optional
        Threads for the documents of a minibatch and for ``transform``/``predict`` (the
        documents split into ranges of equal token counts, one numba kernel call per range,
        the GIL released); None uses numba's default (all cores), 1 one thread. The
        collapsed Gibbs sweep of ``sampler="gibbs"`` is sequential whatever n_jobs is.
        Results do not depend on n_jobs.
    random_state : int, default=0
    progress : bool, default=False
    checkpoint : str or path-like, default=None
        A file where the fit writes a checkpoint, atomically, every ``checkpoint_every``
        seconds (0: every iteration); a fit interrupted and started again with the same
        arguments and data continues from it to the fitted attributes of an uninterrupted
        fit (:meth:`regbayes.models.base.RegBayesEstimator._host_checkpoint`).
    checkpoint_every : float, default=60.0
    chain_method : {"local", "dask"}, default="local"
        Where the sampler runs: in this process, or (``sampler="ssgrld"``) with the
        documents sharded over the workers of a Dask cluster (Dask's current ``Client``,
        else an embedded ``LocalCluster`` with one single-threaded worker per core), the
        topics and the classifier travelling between the shards (distributed SGLD;
        :mod:`regbayes.models.medlda_shards`). ``X`` may then also be documents read block
        by block, each worker reading its own: svmlight files, Parquet, Zarr or a Dask
        array of word counts (:func:`regbayes.datasets.open_row_blocks`; ``y`` as there).
        It is one chain, one shard at a time: the cluster holds a corpus larger than one
        machine's memory, it does not run faster. ``trace_`` then has one entry per
        trajectory (``trace_["trajectory_iterations"]`` iterations on one shard), and
        ``trace_["shard_documents"]`` the documents of each shard. No ``checkpoint``,
        ``callback`` or ``snapshot_every``.

    Attributes
    ----------
    classes_ : labels; for a label matrix y, the label indices ``0 .. L-1``.
    components_ : (K, V) posterior mean topic-word distributions, averaged over every
        iteration of the run's second half (rows sum to 1).
    coef_ : (M, K) posterior mean classifier weights (M = 1 for two classes, else one row
        per class, or per label for a label matrix), in topic-proportion units.
    topic_word_samples_ : the ``n_draws`` kept draws of Phi (S, K, V).
    coef_samples_ : the draws of eta used for prediction: the refitted classifier's
        (``refit_classifier``, ``REFIT_RUNS`` draws) or the ``n_draws`` kept with Phi.
    vectorizer_ : fitted CountVectorizer (raw-text input only).
    n_iter_, batch_size_, multi_class_, topic_step_size_, classifier_step_size_ : the
        resolved settings: iterations run (``n_iter``, "auto" resolved, unless the callback
        stopped the run), documents per iteration (all of them for gibbs), "auto" resolved, and the
        schedules ``t -> eps_t``, ``t -> h_t`` (ssgrld; None for gibbs).
    trace_ : dict of arrays per iteration: ``iteration``, ``n_docs`` (cumulative
        documents processed), ``n_tokens`` (cumulative tokens sampled), ``wall_time``
        (cumulative seconds of sampling; callbacks, snapshots and compilation excluded),
        ``tokens_per_second`` (token-sweeps per second, cumulative), the algorithm's other
        per-iteration records (ssgrld: ``topic_step_size``, ``classifier_step_size``,
        ``topics_finite``) and the scalar ``compile_seconds`` (compiling the classifier update and loading or compiling the
        numba kernels, done on one document before sampling starts: about 1 s, more on a
        busy machine; numba's first compile without its disk cache takes longer) and, when
        ``refit_classifier`` applies, the scalar ``refit_seconds``.
    snapshots_ : list of dicts ``{iteration, n_docs, wall_time, topic_word, coef}``
        (when ``snapshot_every`` is set).
    """

    _parameter_constraints = {
        **TOPIC_CONSTRAINTS,
        **TOPIC_CLASSIFIER_CONSTRAINTS,
        "n_iter": [at_least(1), StrOptions({"auto"}), None],
        "sampler": [StrOptions(set(SAMPLERS))],
        "multi_class": [StrOptions(set(MULTI_CLASS))],
        "topic_step_size": _STEP,
        "classifier_step_size": _STEP,
        "chain_method": [StrOptions({"local", "dask"})],
    }

    def __init__(
        self,
        n_topics=20,
        alpha=0.1,
        beta=0.01,
        C=1.0,
        margin=1.0,
        prior_scale=1.0,
        sampler="ssgrld",
        multi_class="auto",
        batch_size=100,
        n_iter="auto",
        n_inner_sweeps=4,
        n_inner_burnin=2,
        topic_step_size=None,
        classifier_step_size=None,
        n_draws=5,
        n_transform_sweeps=20,
        refit_classifier=True,
        vectorizer=None,
        snapshot_every=None,
        callback=None,
        n_jobs=None,
        random_state=0,
        progress=False,
        checkpoint=None,
        checkpoint_every=60.0,
        chain_method="local",
    ):
        self.n_topics = n_topics
        self.alpha = alpha
        self.beta = beta
        self.C = C
        self.margin = margin
        self.prior_scale = prior_scale
        self.sampler = sampler
        self.multi_class = multi_class
        self.batch_size = batch_size
        self.n_iter = n_iter
        self.n_inner_sweeps = n_inner_sweeps
        self.n_inner_burnin = n_inner_burnin
        self.topic_step_size = topic_step_size
        self.classifier_step_size = classifier_step_size
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
        self.chain_method = chain_method

    # ------------------------------------------------------------------ checks
    def _check_settings(self, n_docs, n_classes):
        """The checks that need the data or several parameters; returns the resolved
        ``(batch_size, n_iter, multi_class)``."""
        if self._multilabel and self.multi_class == "crammer_singer":
            raise ValueError("multi_class='crammer_singer' needs one class per document, but y is a label matrix "
                             "(one binary classifier per label); use multi_class='ovr' or 'auto'")
        if self.sampler == "gibbs" and self.multi_class == "crammer_singer" and not self.refit_classifier and n_classes > 2:
            raise ValueError(
                "sampler='gibbs' samples one binary classifier per class (the Crammer-Singer hinge has no "
                "data augmentation), so multi_class='crammer_singer' needs refit_classifier=True; "
                "or use multi_class='ovr' or sampler='ssgrld'"
            )
        if self.n_inner_burnin >= self.n_inner_sweeps:
            raise ValueError(
                f"n_inner_burnin ({self.n_inner_burnin}) must be smaller than n_inner_sweeps ({self.n_inner_sweeps})"
            )
        batch_size = self.batch_size if self.sampler == "ssgrld" else n_docs
        if batch_size > n_docs:
            warnings.warn(
                f"batch_size={batch_size} is larger than the {n_docs} training documents; using {n_docs}",
                UserWarning,
                stacklevel=3,
            )
            batch_size = n_docs
        auto = self.n_iter is None or isinstance(self.n_iter, str)
        n_iter = auto_iterations(self.sampler, n_docs, batch_size) if auto else int(self.n_iter)
        # "auto": "ovr" only where the Gibbs sampler's own one-vs-rest eta predicts
        multi_class = self.multi_class
        if multi_class == "auto":
            gibbs_eta = self.sampler == "gibbs" and not self.refit_classifier
            multi_class = "ovr" if (gibbs_eta or self._multilabel) else "crammer_singer"
        return batch_size, n_iter, multi_class

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Fit on a (n_docs, V) count matrix (scipy.sparse or dense) or a list of raw texts,
        with class labels y (n_docs,) or a 0/1 label-indicator matrix y (n_docs, L)."""
        self._validate_params()
        if self.chain_method == "dask":
            return fit_sharded(self, X, y)
        if _is_block_data(X):
            raise ValueError(f"X ({type(X).__name__}) is data read block by block, which MedLDA reads on Dask workers: "
                             f"use chain_method='dask' (sampler='ssgrld'), or pass a count matrix or texts")
        counts, y = self._training_documents(X, y)
        codes, y_sign = self._encode_targets(y)
        n_classes = len(self.classes_)
        batch_size, n_iter, multi_class = self._check_settings(counts.shape[0], n_classes)
        doc_ptr, words = kern.tokens_from_counts(counts)
        self._n_words = counts.shape[1]
        # one key per fit: the initial state and prediction seeds, the run, the refit
        k_init, k_run, k_refit = jax.random.split(self._fit_key(), 3)
        init_seed, self._inference_seed = (int(s) for s in host_seeds(k_init, 2))
        data, module = self._algorithm_data(doc_ptr, words, y_sign, codes, batch_size, n_iter, multi_class)
        ssgrld = self.sampler == "ssgrld"
        self._store_settings(batch_size=batch_size, multi_class=multi_class,
                             topic_step_size=data.topic_step if ssgrld else None,
                             classifier_step_size=data.classifier_step if ssgrld else None)
        algorithm = Algorithm(module.step, f"MedLDA[{self.sampler}]", compile=module.compile_kernels,
                              check=module.divergence_check(data))
        result, topics = self._run(algorithm, module, module.init(init_seed, data), data, k_run, n_iter)
        refitted, refit_seconds = None, None
        if self.refit_classifier:
            start = time.perf_counter()
            features = topic_proportions(doc_ptr, words, topics, self.alpha, self.n_transform_sweeps,
                                         self._inference_seed, self.n_jobs)
            refitted = self._refit(features, codes, y_sign, multi_class, k_refit)
            refit_seconds = time.perf_counter() - start
        self._store(result, topics, refitted, refit_seconds)
        return self

    def _refit(self, features, codes, y_sign, multi_class, key):
        """The ``refit_classifier`` draws on the training documents' topic proportions."""
        return refit_classifier(
            features, codes, y_sign, crammer_singer=len(self.classes_) > 2 and multi_class == "crammer_singer",
            C=self.C, margin=self.margin, prior_scale=self.prior_scale, key=key, progress=self.progress,
            multilabel=self._multilabel,
        )

    def _algorithm_data(self, doc_ptr, words, y_sign, codes, batch_size, n_iter, multi_class):
        """The data of the chosen algorithm, and its module (``init``, ``step``, hooks)."""
        common = dict(n_topics=self.n_topics, n_words=self._n_words, alpha=self.alpha, beta=self.beta, C=self.C,
                      margin=self.margin, prior_scale=self.prior_scale)
        if self.sampler == "gibbs":
            return medlda_gibbs.make_data(doc_ptr, words, y_sign, **common), medlda_gibbs
        settings = self._ssgrld_settings(y_sign.shape[1], batch_size, n_iter, multi_class)
        return medlda_ssgrld.make_data(doc_ptr, words, y_sign, codes, **settings), medlda_ssgrld

    def _ssgrld_settings(self, n_classifiers, batch_size, n_iter, multi_class):
        """The arguments of :func:`regbayes.algorithms.medlda_ssgrld.make_data` beside the corpus."""
        topic = self.topic_step_size if self.topic_step_size is not None else defaults.TOPIC_STEP["a"]
        if not callable(topic):
            topic = schedules.polynomial(topic, b=defaults.TOPIC_STEP["b"], gamma=defaults.TOPIC_STEP["gamma"])
        h = self.classifier_step_size if self.classifier_step_size is not None else defaults.CLASSIFIER_STEP
        return dict(crammer_singer=n_classifiers > 1 and multi_class == "crammer_singer", n_topics=self.n_topics,
                    n_words=self._n_words, alpha=self.alpha, beta=self.beta, C=self.C, margin=self.margin,
                    prior_scale=self.prior_scale, batch_size=batch_size, n_inner_sweeps=self.n_inner_sweeps,
                    n_inner_burnin=self.n_inner_burnin, soft_from=n_iter // 2, topic_step=topic,
                    classifier_step=schedules.as_schedule(h), n_jobs=self.n_jobs)

    def _run(self, algorithm, module, state, data, key, n_iter):
        """Run the driver: the ``n_draws`` (Phi, eta) pairs evenly spaced over the second half,
        and ``components_``, the mean Phi of every iteration of that half (of the kept pairs
        if the callback stopped the run before it): a Monte Carlo estimate of E[Phi] from
        every iterate, where the pairs give five (SSGRLD's Phi iterates are noisy minibatch
        Langevin steps). On ``medlda-fig8``'s corpus (12,000 documents, K = 50, SSGRLD, 240
        iterations, 3 seeds) the refitted classifier scored 0.842 on either mean; the last
        iterate alone gave 0.832."""
        average_from = n_iter // 2
        keep = np.unique(np.linspace(average_from, n_iter - 1, self.n_draws).round().astype(int))
        # the running sum of Phi and the snapshots: the run's carry, checkpointed with it
        total = {"sum": None, "n": 0, "snapshots": []}

        def draw(state):
            return module.topic_word(state, data), np.array(state.eta)

        def observe(t, state, info):
            if t >= average_from:
                phi = module.topic_word(state, data)
                total["sum"] = phi if total["sum"] is None else total["sum"] + phi
                total["n"] += 1

        def monitor(t, state, info, wall_time):
            record = {"iteration": t + 1, "n_docs": int(info.n_docs), "wall_time": wall_time}
            if self.snapshot_every is not None and (t + 1) % self.snapshot_every == 0:
                total["snapshots"].append({**record, "topic_word": module.topic_word(state, data), "coef": np.array(state.eta)})
            if self.callback is not None:
                return bool(self.callback({**record, "topic_word": module.topic_word(state, data), "coef": np.array(state.eta)}))
            return False

        watched = self.snapshot_every is not None or self.callback is not None
        result = run(algorithm, state, data, key, n_iter=n_iter, keep=keep, draw=draw, observe=observe,
                     monitor=monitor if watched else None, progress=self.progress, desc=algorithm.name, carry=total,
                     checkpoint=self._host_checkpoint())
        self.snapshots_ = total["snapshots"]
        if not result.draws:  # stopped by the callback before the first kept iteration
            result = result._replace(draws=[draw(result.state)])
        mean = total["sum"] / total["n"] if total["n"] else np.mean([pair[0] for pair in result.draws], axis=0)
        return result, mean / mean.sum(axis=1, keepdims=True)  # rows sum to 1 despite rounding

    def _store(self, result, topics, refitted, refit_seconds):
        self.topic_word_samples_ = np.stack([pair[0] for pair in result.draws])
        self.coef_samples_ = np.stack([pair[1] for pair in result.draws]) if refitted is None else refitted
        self._refitted = refitted is not None
        self.components_ = topics
        self.coef_ = self.coef_samples_.mean(axis=0)
        self.n_topics_ = self.n_topics
        self.n_iter_ = result.n_iter
        trace = run_trace(result)
        if refit_seconds is not None:
            trace["refit_seconds"] = float(refit_seconds)
        self.trace_ = trace

    def __sklearn_tags__(self):
        return multilabel_tags(super().__sklearn_tags__())
