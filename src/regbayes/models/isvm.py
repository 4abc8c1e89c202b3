"""``InfiniteSVC``: the Gibbs infinite SVM, a Dirichlet-process mixture of Bayesian linear
SVMs (paper 001, "Gibbs Infinite SVMs", eqs. 11-18; paper 000, section 4.2).

Model. Data ``(x_i, y_i)``; assignments ``z ~ CRP(alpha)``; component ``k`` has a Gaussian
``N(mu_k, Sigma_k)`` for the features with a Normal–inverse-Wishart prior (collapsed:
:mod:`regbayes.potentials.niw`) and a Gibbs classifier ``eta_k`` with prior ``N(0, nu^2 I)``.
The posterior (eq. 11, with ``C`` the ``c`` of paper 000: ``psi = exp(-C (l - y f)_+)``) is

    q(z, eta) ∝ CRP(z) prod_k [ N(eta_k; 0, nu^2 I) ∫ prod_{i: z_i = k} N(x_i; mu, Sigma) dNIW ]
                        prod_i psi(y_i | eta_{z_i}, x_i).

Classifier inputs and intercept. Component ``k`` scores ``f_k(x) = w_k^T (x - xbar) + b_k``
with ``xbar`` the training mean: the classifier sees ``x~ = (x - xbar, s)`` and
``eta_k = (w_k, b_k / s)`` has the isotropic prior, so ``b_k ~ N(0, (s nu)^2)``.
``s = intercept_scaling`` defaults to the RMS distance of the data from their mean, the
prior standard deviation of ``b_k`` then equals that of ``w_k^T (x - xbar)`` at a typical
point. (Labels in paper 001's synthetic settings depend on ``x - mu_k``: without an
intercept each component's boundary would have to pass near ``xbar``.)

Several classes. One-vs-rest per component, as the Gibbs kernel of
:mod:`regbayes.algorithms.gibbs_svm`: ``eta_k`` has shape ``(L, d + 1)`` and
``psi = prod_l exp(-C (l - y_il f_kl)_+)`` with ``y_il = +1`` if ``y_i`` is class ``l``, else -1;
a binary problem has ``L = 1``. Or (``multi_class="crammer_singer"``, paper 000, eqs.
23-26) one classifier ``eta_k`` of shape ``(M, d + 1)`` per component with the
multi-class hinge

    psi = exp(-C max_m (l Delta(y_i, m) + f_km(x_i) - f_ky_i(x_i))),   Delta(y, m) = 1 - [m = y],

i.e. ``exp(-C max(0, l + max_{m != y_i} f_km - f_ky_i))``. A binary problem uses the
binary hinge (``L = 1``) under both options. Every sampler of an option targets the same
posterior.

Inference (:mod:`regbayes.algorithms.isvm`, run by :func:`regbayes.inference.run`): one
iteration is z | eta by a partially collapsed numba sweep (eqs. 15-16, Neal's Algorithm 8
for a new component), then eta | z by data augmentation (``sampler="gibbs"``, eqs. 17-18;
one-vs-rest only: the papers give no augmentation of the multi-class hinge's max) or by a
stochastic subgradient sampler within Gibbs (paper 000, Algorithm 2): SSGNHT
(``sampler="ssgnht"``, eq. 14) or SSGLD (``sampler="ssgld"``, eq. 13).

Prediction. A test point's component is unknown. For each kept posterior draw
``(z, eta)`` it joins component ``k`` with probability ``∝ n_k t(x | X_k)`` (the CRP times
the Student-t predictive) or a new component with probability ``∝ alpha t(x | prior)``,
whose classifier is a prior draw and votes for each class with probability ``1 / L``.
A component's vote is the class of largest ``f_km(x)`` (one-vs-rest or Crammer–Singer),
or the sign of ``f_k`` when binary.
``predict_proba`` is the Gibbs classifier's vote share averaged over these weights and
over the draws; ``predict`` takes its argmax.
"""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..algorithms import isvm
from ..inference import Algorithm, run
from ..precision import maybe_x64
from ..rng import key_from_seed
from ..samplers.defaults import COMPONENT_NOISE_STEP_FACTOR, SAMPLER_DEFAULTS
from .base import CHECKPOINT_CONSTRAINTS
from .dp_experts_base import DPExpertsClassifier

SAMPLERS = isvm.SAMPLERS
MULTI_CLASS = isvm.MULTI_CLASS


class InfiniteSVC(DPExpertsClassifier):
    """Gibbs infinite SVM: a Dirichlet-process mixture of Bayesian linear SVMs.

    Parameters
    ----------
    alpha : float, default=1.0
        Concentration of the CRP prior on the assignments.
    C : float, default=1.0
        c, the scale of the hinge pseudo-likelihood ``exp(-c max(0, l - y f))``.
    margin : float, default=1.0
        l, the margin.
    prior_scale : float, default=1.0
        nu, the standard deviation of the Gaussian prior of every component's weights
        (and of its intercept divided by ``intercept_scaling``).
    sampler : {"gibbs", "ssgnht", "ssgld"}, default="gibbs"
        The eta | z step: data augmentation (exact, float64), or SSGNHT or SSGLD on
        minibatches (paper 000, Algorithm 2). The z | eta step is the same for all.
    multi_class : {"ovr", "crammer_singer"}, default="ovr"
        With more than two classes: one-vs-rest binary hinges, or the Crammer–Singer
        multi-class hinge (paper 000, eq. 24), which needs sampler="ssgnht" or "ssgld".
        Binary problems use the binary hinge under both.
    n_iter : int, default=200
        Iterations (z-sweep then eta-step), warm-up included.
    n_warmup : int, default=100
        Iterations discarded before draws are kept (burn-in); must be < n_iter.
    batch_size : int, default=100
        Minibatch size of the SSGNHT or SSGLD eta step.
    step_size : float, optional
        SSGNHT or SSGLD base step in each component's whitened coordinates; default the
        sampler's ``relative_step`` in :data:`regbayes.samplers.defaults.SAMPLER_DEFAULTS`.
        Component ``k`` uses ``step_size * min(1, f sqrt(batch_size / n_k))`` with ``f``
        :data:`~regbayes.samplers.defaults.COMPONENT_NOISE_STEP_FACTOR`.
    n_inner : int, default=20
        SSGNHT or SSGLD steps per iteration and component.
    n_auxiliary : int, default=2
        Auxiliary classifiers per datum for a new component (Neal 2000, Algorithm 8).
    init : {"kmeans", "sequential"}, default="kmeans"
        Starting assignments: k-means with ``init_components`` clusters, or one
        CRP-style sweep that seats the rows one at a time. Single-site Gibbs merges
        surplus components readily (their rows move one by one to better ones) but can
        hardly split a component that covers several well-separated clusters: a row
        leaves it only for a new component, weighted by the broad prior predictive. So
        the default starts over-clustered: on paper 001's Setting II the sequential start
        ended with far too few components and lower accuracy (CHANGELOG.md, "moved out of
        the code").
    init_components : int, default=16
        Number of k-means clusters of ``init="kmeans"`` (at most the number of rows).
    niw_mean : array of shape (n_features,), optional
        m_0 of the NIW prior; default the training mean.
    niw_kappa : float, optional
        kappa_0: ``mu | Sigma ~ N(m_0, Sigma / kappa_0)``. Default ``r / (1 - r)`` with
        ``r = tr E[Sigma] / tr var(X)`` (1 if r >= 1): the prior predictive of a new
        component, covariance ``(1 + 1/kappa_0) E[Sigma]``, is then as wide as the data
        (0.111 with the default ``niw_covariance``).
    niw_dof : float, optional
        nu_0 > n_features + 1; default n_features + 2, the weakest prior with a finite
        mean covariance.
    niw_covariance : float or array of shape (n_features, n_features), default=0.1
        Prior mean of a component's covariance, ``E[Sigma] = Psi_0 / (nu_0 - d - 1)``: a
        matrix, or a float f for ``f * diag(var X)`` (a component a tenth as wide as the
        data along every feature by default).
    intercept_scaling : float, optional
        s: the intercept's prior is ``N(0, (s nu)^2)``. Default: the RMS distance of the
        training rows from their mean (1 if that is 0).
    random_state : int, RandomState or None, default=0
        Seeds the fit's one JAX key: k-means start, CRP sweeps and eta steps.
    progress : bool, default=False
        Show a progress bar over iterations.
    checkpoint : str or path-like, default=None
        A file where the fit writes a checkpoint, atomically, every ``checkpoint_every``
        seconds (0: every iteration); a fit interrupted and started again with the same
        arguments and data continues from it to the fitted attributes of an uninterrupted
        fit (:meth:`regbayes.models.base.RegBayesEstimator._host_checkpoint`).
    checkpoint_every : float, default=60.0

    Attributes
    ----------
    classes_ : labels seen in fit.
    labels_ : (n_samples,) component of every training row in the last draw, numbered
        0..n_components_-1 in order of first appearance.
    n_components_ : number of non-empty components in the last draw.
    n_components_trace_ : (n_iter,) non-empty components after every iteration.
    coef_samples_ : (n_draws, K, n_features) binary or (n_draws, K, L, n_features)
        (``L`` one-vs-rest problems or Crammer–Singer rows, one per class):
        kept draws of every slot's weights in the original feature coordinates
        (``f(x) = coef x + intercept``); ``K`` is the largest slot count used, and
        ``component_active_`` (n_draws, K) marks the non-empty slots.
    intercept_samples_ : (n_draws, K) or (n_draws, K, L).
    component_sizes_ : (n_draws, K) members per slot.
    trace_ : dict of per-iteration arrays ``z_seconds``, ``eta_seconds`` (compilation
        excluded), ``n_components``, ``wall_time`` (sampling seconds at the end of each
        iteration), ``step_size`` (ssgnht, ssgld), and the totals ``compile_seconds`` (programs
        compiled for new shapes), ``init_seconds`` (k-means), ``sampling_seconds`` (the
        driver's loop, compilation excluded).
    n_warmup_, batch_size_, step_size_ : the run's settings (``step_size_`` the base
        SSGNHT or SSGLD step, None for gibbs; ``batch_size_`` None for gibbs).
    multi_class_ : the hinge used: "ovr" or "crammer_singer", "binary" for two classes.
    intercept_scaling_ : s, resolved from the data when ``intercept_scaling`` is None.
    x_offset_ : (n_features,) training mean ``xbar`` that the classifiers' inputs subtract.
    prior_ : the NIW prior (:class:`regbayes.potentials.niw.NIW`) resolved from the data.
    """

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "margin": [Interval(Real, 0, None, closed="neither")],
        "prior_scale": [Interval(Real, 0, None, closed="neither")],
        "sampler": [StrOptions(set(SAMPLERS))],
        "multi_class": [StrOptions(set(MULTI_CLASS))],
        "n_iter": [Interval(Integral, 1, None, closed="left")],
        "n_warmup": [Interval(Integral, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "step_size": [Interval(Real, 0, None, closed="neither"), None],
        "n_inner": [Interval(Integral, 1, None, closed="left")],
        "n_auxiliary": [Interval(Integral, 1, None, closed="left")],
        "init": [StrOptions({"kmeans", "sequential"})],
        "init_components": [Interval(Integral, 1, None, closed="left")],
        "niw_mean": ["array-like", None],
        "niw_kappa": [Interval(Real, 0, None, closed="neither"), None],
        "niw_dof": [Interval(Real, 0, None, closed="neither"), None],
        "niw_covariance": [Interval(Real, 0, None, closed="neither"), "array-like"],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither"), None],
        "random_state": ["random_state"],
        "progress": ["boolean"],
        **CHECKPOINT_CONSTRAINTS,
    }

    def __init__(
        self,
        alpha=1.0,
        C=1.0,
        margin=1.0,
        prior_scale=1.0,
        sampler="gibbs",
        multi_class="ovr",
        n_iter=200,
        n_warmup=100,
        batch_size=100,
        step_size=None,
        n_inner=20,
        n_auxiliary=2,
        init="kmeans",
        init_components=16,
        niw_mean=None,
        niw_kappa=None,
        niw_dof=None,
        niw_covariance=0.1,
        intercept_scaling=None,
        random_state=0,
        progress=False,
        checkpoint=None,
        checkpoint_every=60.0,
    ):
        self.alpha = alpha
        self.C = C
        self.margin = margin
        self.prior_scale = prior_scale
        self.sampler = sampler
        self.multi_class = multi_class
        self.n_iter = n_iter
        self.n_warmup = n_warmup
        self.batch_size = batch_size
        self.step_size = step_size
        self.n_inner = n_inner
        self.n_auxiliary = n_auxiliary
        self.init = init
        self.init_components = init_components
        self.niw_mean = niw_mean
        self.niw_kappa = niw_kappa
        self.niw_dof = niw_dof
        self.niw_covariance = niw_covariance
        self.intercept_scaling = intercept_scaling
        self.random_state = random_state
        self.progress = progress
        self.checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Run the sampler on training data ``X`` (dense or sparse, densified), ``y``."""
        X, codes = self._prepare(X, y)
        d = X.shape[1]
        n_classes = len(self.classes_)
        multi_class = self.multi_class if n_classes > 2 else "binary"
        isvm.check_sampler(self.sampler, "ovr" if multi_class == "binary" else multi_class)
        if n_classes == 2:
            Y = (2.0 * codes - 1.0)[:, None]
        elif multi_class == "crammer_singer":
            Y = codes.astype(np.float64)
        else:
            Y = np.where(codes[:, None] == np.arange(n_classes), 1.0, -1.0)
        minibatch = self.sampler != "gibbs"
        self._store_settings(
            n_warmup=int(self.n_warmup),
            batch_size=int(self.batch_size) if minibatch else None,
            step_size=(float(self.step_size or SAMPLER_DEFAULTS[self.sampler].relative_step) if minibatch else None),
            multi_class=multi_class,
        )
        z0, seed_run, init_seconds = self._start(X)
        step = isvm.infinite_svm(self.sampler, n_auxiliary=self.n_auxiliary, batch_size=self.batch_size,
                                 n_inner=self.n_inner, step_size=self.step_size_,
                                 noise_step_factor=COMPONENT_NOISE_STEP_FACTOR)
        name = f"InfiniteSVC[{self.sampler}]"
        with maybe_x64(not minibatch):
            data = isvm.make_data(X, self._design(X), Y, self.prior_, alpha=self.alpha, C=self.C, margin=self.margin,
                                  prior_scale=self.prior_scale, x_offset=self.x_offset_,
                                  intercept_scaling=self.intercept_scaling_,
                                  dtype=np.float32 if minibatch else np.float64,
                                  multi_class="crammer_singer" if multi_class == "crammer_singer" else "ovr",
                                  n_classes=n_classes)
            state = isvm.init(data, z0)
            result = run(Algorithm(step, name, check=isvm.check), state, data, key_from_seed(seed_run),
                         n_iter=self.n_iter, keep=range(self.n_warmup, self.n_iter), draw=isvm.draw,
                         progress=self.progress, desc=name, checkpoint=self._host_checkpoint())
        self._store(result, d, n_classes, init_seconds)
        return self

    def _store(self, result, d, n_classes, init_seconds):
        weights, intercepts = self._coef_and_intercept(self._store_draws(result, d))
        if n_classes == 2:
            weights, intercepts = weights[:, :, 0], intercepts[:, :, 0]
        self.coef_samples_ = weights
        self.intercept_samples_ = intercepts
        self.trace_ = self._run_trace(result, init_seconds, ("z_seconds", "eta_seconds", "step_size"))

    # ------------------------------------------------------------------ predict
    def _expert_proba(self, design, eta):
        """The Gibbs classifier's vote, one-hot: the sign of ``f`` when binary, else the
        class of largest ``f`` (``f = eta x~``, eta (L, D))."""
        f = design @ eta.T
        n_classes = len(self.classes_)
        vote = (f[:, 0] > 0).astype(int) if n_classes == 2 else np.argmax(f, axis=1)
        return np.eye(n_classes)[vote]
