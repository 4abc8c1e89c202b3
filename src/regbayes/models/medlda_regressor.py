"""``MedLDARegressor``: MedLDA with a real response and the epsilon-insensitive loss (paper
002, Appendix B; Lemmas 11 and 15) as a scikit-learn regressor, sampled by Gibbs with data
augmentation (:mod:`regbayes.algorithms.medlda_regression`, run by :func:`regbayes.inference.run`).

Model: LDA with K topics ``phi_k ~ Dir(beta)``, ``theta_d ~ Dir(alpha)``, ``z_dn ~ theta_d``,
``w_dn ~ phi_{z_dn}``; the response enters through the pseudo-likelihood
``psi(y_d | z_d, eta, b) = exp(-C max(0, |y_d - eta^T zbar_d - b| - eps))`` (``zbar_d`` the
average topic assignment), ``eta ~ N(0, nu^2 I)`` and, with ``fit_intercept``, a flat prior on
the intercept b.

Prediction (as the papers predict with MedLDA: inferred topics of the new document times the
posterior mean weights): ``transform(X) @ coef_ + intercept_``, the topic proportions of a new
document with Phi fixed at ``components_`` and no response, times the posterior mean of eta,
plus the posterior mean of b. A document's random stream is keyed by its content, so
predictions do not depend on row order or on the other rows.

Empty documents: dropped from training with a warning; at prediction time they get the
prior mean proportions ``1/K``.
"""
from __future__ import annotations

from numbers import Real

import jax
import numpy as np
from sklearn.base import RegressorMixin, TransformerMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from ..algorithms import lda_kernels as kern
from ..algorithms import medlda_regression
from ..algorithms.topic_inference import topic_proportions
from ..inference import Algorithm, run
from ..rng import host_seeds
from ..samplers import defaults
from .base import RegBayesEstimator
from .topic_input import TOPIC_CONSTRAINTS, CountInputMixin, run_trace

class MedLDARegressor(RegressorMixin, TransformerMixin, CountInputMixin, RegBayesEstimator):
    """Max-margin supervised topic model for a real response (Gibbs MedLDA regression).

    Parameters
    ----------
    n_topics : int, default=20
        K, the number of topics (>= 2).
    alpha, beta : float, default=0.1, 0.01
        Symmetric Dirichlet parameters of the document-topic and topic-word priors.
    C : float, default=1.0
        Scale of the epsilon-insensitive pseudo-likelihood ``exp(-C max(0, |y - f| - eps))``
        (Appendix B's ``R_eps``; ``C = 2c`` in the augmentation, as for ``MedLDA``'s hinge).
        It is in units of 1/y: about the inverse of the residual scale one expects.
    epsilon : float, default=0.1
        eps >= 0, half-width of the insensitive tube, in units of y.
    prior_scale : float, default=1.0
        nu, standard deviation of the Gaussian prior on the regression weights eta.
    fit_intercept : bool, default=True
        Sample an intercept b with a flat prior jointly with eta (the responses are not
        centred). Since topic proportions sum to 1, b carries the level of y and ``nu``
        shrinks only the differences between topics. False: b = 0.
    n_iter : int, optional
        Gibbs sweeps over the corpus (default ``defaults.MEDLDA_N_ITER["gibbs"]``, 100).
        The posterior means (``components_``, ``coef_``, ``intercept_``) average every
        iteration of the second half.
    n_transform_sweeps : int, default=20
        Gibbs sweeps with Phi fixed used by ``transform``/``predict``; the first half is
        burn-in, the second half averaged (Rao-Blackwellised).
    vectorizer : sklearn CountVectorizer, optional
        Used (cloned) when ``fit`` gets raw texts; default
        ``CountVectorizer(stop_words="english")``. The fitted copy is ``vectorizer_``.
    n_jobs : int, optional
        Threads for ``transform``/``predict`` (documents split into ranges of equal token
        counts); None uses numba's default, 1 one thread. The training sweep is sequential.
        Results do not depend on n_jobs.
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
    components_ : (K, V) posterior mean topic-word distributions, averaged over every
        iteration of the run's second half (rows sum to 1).
    coef_ : (K,) posterior mean regression weights (topic-proportion units).
    intercept_ : float, posterior mean intercept (0.0 without ``fit_intercept``).
    coef_samples_, intercept_samples_ : the draws of eta (S, K) and b (S,) of every
        iteration of the second half.
    vectorizer_ : fitted CountVectorizer (raw-text input only).
    n_iter_, n_topics_ : the iterations run and K.
    trace_ : dict of arrays per iteration: ``iteration``, ``n_docs``, ``n_tokens``
        (cumulative), ``loss`` (mean epsilon-insensitive loss of ``eta^T zbar_d + b`` on the
        training documents' current assignments), ``intercept``, ``wall_time`` (cumulative
        seconds of sampling, compilation excluded), ``tokens_per_second``, and the scalar
        ``compile_seconds`` (loading or compiling the kernels before sampling starts).
    """

    _parameter_constraints = {
        **TOPIC_CONSTRAINTS,
        "epsilon": [Interval(Real, 0, np.inf, closed="left")],
        "fit_intercept": ["boolean"],
    }

    def __init__(
        self,
        n_topics=20,
        alpha=0.1,
        beta=0.01,
        C=1.0,
        epsilon=0.1,
        prior_scale=1.0,
        fit_intercept=True,
        n_iter=None,
        n_transform_sweeps=20,
        vectorizer=None,
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
        self.epsilon = epsilon
        self.prior_scale = prior_scale
        self.fit_intercept = fit_intercept
        self.n_iter = n_iter
        self.n_transform_sweeps = n_transform_sweeps
        self.vectorizer = vectorizer
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.progress = progress
        self.checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every

    def fit(self, X, y):
        """Fit on a (n_docs, V) count matrix (scipy.sparse or dense) or a list of raw texts,
        and finite real responses y (n_docs,)."""
        self._validate_params()
        counts, y = self._training_documents(X, y, responses=True)
        n_iter = self.n_iter if self.n_iter is not None else defaults.MEDLDA_N_ITER["gibbs"]
        doc_ptr, words = kern.tokens_from_counts(counts)
        k_init, k_run = jax.random.split(self._fit_key())
        init_seed, self._inference_seed = (int(s) for s in host_seeds(k_init, 2))
        data = medlda_regression.make_data(
            doc_ptr, words, y, n_topics=self.n_topics, n_words=counts.shape[1], alpha=self.alpha, beta=self.beta,
            C=self.C, epsilon=self.epsilon, prior_scale=self.prior_scale, fit_intercept=self.fit_intercept,
        )
        algorithm = Algorithm(medlda_regression.step, "MedLDARegressor[gibbs]", compile=medlda_regression.compile_kernels,
                              check=medlda_regression.divergence_check(data))
        average_from = n_iter // 2
        total = {"topics": 0.0, "n": 0}  # the running sum of Phi: the run's carry, checkpointed with it

        def observe(t, state, info):
            if t >= average_from:
                total["topics"] = total["topics"] + medlda_regression.topic_word(state, data)
                total["n"] += 1

        result = run(algorithm, medlda_regression.init(init_seed, data), data, k_run, n_iter=n_iter,
                     keep=range(average_from, n_iter), draw=lambda state: (state.coef.copy(), state.intercept),
                     observe=observe, progress=self.progress, desc=algorithm.name, carry=total,
                     checkpoint=self._host_checkpoint())
        topics = total["topics"] / total["n"]
        self.components_ = topics / topics.sum(axis=1, keepdims=True)  # rows sum to 1 despite rounding
        self.coef_samples_ = np.stack([coef for coef, _ in result.draws])
        self.intercept_samples_ = np.array([b for _, b in result.draws])
        self.coef_ = self.coef_samples_.mean(axis=0)
        self.intercept_ = float(self.intercept_samples_.mean())
        self.n_topics_ = self.n_topics
        self.n_iter_ = result.n_iter
        self.trace_ = run_trace(result)
        return self

    def transform(self, X):
        """Topic proportions (n_docs, K): posterior mean ``(E[n_dk] + alpha) / (N_d + K alpha)``
        with Phi fixed at ``components_`` and no response (``n_transform_sweeps`` Gibbs sweeps
        of paper 000, eq. 22 with psi = 1, the second half averaged, Rao-Blackwellised).
        Empty documents get ``1/K``."""
        check_is_fitted(self, "components_")
        counts = self._counts(X, fit=False)
        if counts.shape[1] != self.components_.shape[1]:
            raise ValueError(f"X has {counts.shape[1]} words (columns); this {type(self).__name__} was fitted on "
                             f"{self.components_.shape[1]}")
        doc_ptr, words = kern.tokens_from_counts(counts)
        return topic_proportions(doc_ptr, words, self.components_, self.alpha, self.n_transform_sweeps,
                                 self._inference_seed, self.n_jobs)

    def predict(self, X):
        """``transform(X) @ coef_ + intercept_``: the posterior mean prediction ``E[eta]^T theta_d + E[b]``
        on the inferred topic proportions (module docstring)."""
        return self.transform(X) @ self.coef_ + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        return tags
