"""``DPMNLClassifier``: dpMNL, the Dirichlet-process mixture of multinomial-logit experts
(Shahbaba & Neal 2009, "Nonlinear models using Dirichlet process mixtures"), the baseline
of paper 001's Tables 1, 3 and 4 and of paper 000's Table 2.

Model. Data ``(x_i, y_i)``; assignments ``z ~ CRP(alpha)``; component ``k`` has a Gaussian
``N(mu_k, Sigma_k)`` for the features with a Normal–inverse-Wishart prior (collapsed:
:mod:`regbayes.potentials.niw`) and a multinomial-logit expert ``beta_k`` (M, d + 1) with
prior ``N(0, nu^2 I)``:

    p(y_i = m | x_i, z_i = k, beta) = softmax_m(beta_k x~_i),    x~ = (x - xbar, s).

The posterior is paper 001's eq. 11 with the hinge pseudo-likelihood replaced by this
softmax. Shahbaba & Neal model the features of a component with independent Gaussians
and hierarchical priors; here, as in :class:`~regbayes.models.isvm.InfiniteSVC`, the
features have a full covariance with the conjugate NIW prior, so that (mu, Sigma) are
integrated out. Every class has its row of ``beta_k`` (no reference class); for two
classes ``coef_samples_`` reports the identified contrast ``beta_k1 - beta_k0``, the
weights of ``log p(y = 1) / p(y = 0)``.

Inference (:mod:`regbayes.algorithms.dpmnl`, run by :func:`regbayes.inference.run`): one
iteration is beta | z by ``n_inner`` transitions of HMC with the Metropolis correction
(:func:`regbayes.samplers.hmc.shmc`) for every component at once, then z | beta by the
numba CRP sweep of the Gibbs infinite SVM with the softmax term (Neal's Algorithm 8 for a
new component).

Prediction (:class:`~regbayes.models.dp_experts_base.DPExpertsClassifier`): the softmax of
each component's expert weighted by ``n_k t(x | X_k)``, a new component's ``alpha t(x |
prior)`` with class probabilities ``1 / M``, averaged over the kept draws.
"""
from __future__ import annotations

from numbers import Integral, Real

from scipy.special import softmax
from sklearn.utils._param_validation import Interval

from ..algorithms import dpmnl
from ..inference import Algorithm, run
from ..rng import key_from_seed
from ..samplers.defaults import SAMPLER_DEFAULTS
from ..validation import scale_errors
from .dp_experts_base import DP_CONSTRAINTS, DPExpertsClassifier


class DPMNLClassifier(DPExpertsClassifier):
    """dpMNL: a Dirichlet-process mixture of multinomial-logit experts.

    Parameters
    ----------
    alpha : float, default=1.0
        Concentration of the CRP prior on the assignments.
    prior_scale : float, default=1.0
        nu, the standard deviation of the Gaussian prior of every expert's weights (and of
        its intercepts divided by ``intercept_scaling``).
    n_iter : int, default=200
        Iterations (beta step then z-sweep), warm-up included.
    n_warmup : int, default=100
        Iterations discarded before draws are kept (burn-in); must be < n_iter.
    thin : int, default=1
        Keep every ``thin``-th iteration after the warm-up.
    step_size : float, optional
        HMC leapfrog step in each expert's whitened coordinates; default shmc's
        ``relative_step`` in :data:`regbayes.samplers.defaults.SAMPLER_DEFAULTS`. Each
        transition draws its step uniformly within +-50 % of it.
    n_leapfrog : int, default=5
        Leapfrog steps per HMC transition.
    n_inner : int, default=1
        HMC transitions of every expert per iteration.
    n_auxiliary : int, default=2
        Auxiliary experts per datum for a new component (Neal 2000, Algorithm 8).
    init : {"kmeans", "sequential"}, default="kmeans"
        Starting assignments: k-means with ``init_components`` clusters, or one CRP-style
        sweep that seats the rows one at a time (single-site Gibbs merges surplus
        components readily but hardly splits one, hence the over-clustered default).
    init_components : int, default=16
        Number of k-means clusters of ``init="kmeans"`` (at most the number of rows).
    niw_mean, niw_kappa, niw_dof, niw_covariance :
        The NIW prior of the components' features, defaults resolved from the data as
        :func:`regbayes.potentials.niw.default_prior` says (``niw_covariance`` 0.1: a
        component a tenth as wide as the data along every feature).
    intercept_scaling : float, optional
        s: the intercepts' prior is ``N(0, (s nu)^2)``. Default: the RMS distance of the
        training rows from their mean (1 if that is 0).
    random_state : int, RandomState or None, default=0
        Seeds the fit's one JAX key: k-means start, CRP sweeps and HMC transitions.
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
    labels_ : (n_samples,) component of every training row in the last iteration, numbered
        0..n_components_-1 in order of first appearance.
    n_components_ : number of non-empty components in the last iteration.
    n_components_trace_ : (n_iter,) non-empty components after every iteration.
    coef_samples_ : (n_draws, K, n_features) for two classes (the contrast of class 1
        against class 0), (n_draws, K, n_classes, n_features) otherwise: kept draws of
        every slot's expert in the original feature coordinates; ``K`` is the largest slot
        count used and ``component_active_`` (n_draws, K) marks the non-empty slots.
    intercept_samples_ : (n_draws, K) or (n_draws, K, n_classes).
    component_sizes_ : (n_draws, K) members per slot.
    trace_ : dict of per-iteration arrays ``z_seconds``, ``beta_seconds`` (compilation
        excluded), ``n_components``, ``acceptance`` (mean Metropolis acceptance
        probability over the components), ``wall_time``, and the totals
        ``compile_seconds``, ``init_seconds`` (k-means), ``sampling_seconds``.
    n_warmup_, step_size_ : the run's settings.
    intercept_scaling_ : s, resolved from the data when ``intercept_scaling`` is None.
    x_offset_ : (n_features,) training mean ``xbar`` that the experts' inputs subtract.
    prior_ : the NIW prior (:class:`regbayes.potentials.niw.NIW`) resolved from the data.
    """

    _parameter_constraints = {
        **DP_CONSTRAINTS,
        "thin": [Interval(Integral, 1, None, closed="left")],
        "step_size": [Interval(Real, 0, None, closed="neither"), None],
        "n_leapfrog": [Interval(Integral, 1, None, closed="left")],
        "n_inner": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        alpha=1.0,
        prior_scale=1.0,
        n_iter=200,
        n_warmup=100,
        thin=1,
        step_size=None,
        n_leapfrog=5,
        n_inner=1,
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
        self.prior_scale = prior_scale
        self.n_iter = n_iter
        self.n_warmup = n_warmup
        self.thin = thin
        self.step_size = step_size
        self.n_leapfrog = n_leapfrog
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

    def fit(self, X, y):
        """Run the sampler on training data ``X`` (dense or sparse, densified), ``y``."""
        X, codes = self._prepare(X, y)
        self._store_settings(n_warmup=int(self.n_warmup),
                             step_size=float(self.step_size or SAMPLER_DEFAULTS["shmc"].relative_step))
        z0, seed_run, init_seconds = self._start(X)
        step = dpmnl.dp_mnl(n_auxiliary=self.n_auxiliary, step_size=self.step_size_, n_leapfrog=self.n_leapfrog,
                            n_inner=self.n_inner)
        data = dpmnl.make_data(X, self._design(X), codes, len(self.classes_), self.prior_, alpha=self.alpha,
                               prior_scale=self.prior_scale)
        with scale_errors(X, "DPMNLClassifier"):
            result = run(Algorithm(step, "DPMNLClassifier", check=dpmnl.check), dpmnl.init(data, z0), data,
                         key_from_seed(seed_run), n_iter=self.n_iter, keep=range(self.n_warmup, self.n_iter, self.thin),
                         draw=dpmnl.draw, progress=self.progress, desc="DPMNLClassifier", checkpoint=self._host_checkpoint())
        eta = self._store_draws(result, X.shape[1])
        if len(self.classes_) == 2:  # the identified contrast of class 1 against class 0
            eta = eta[:, :, 1] - eta[:, :, 0]
        self.coef_samples_, self.intercept_samples_ = self._coef_and_intercept(eta)
        self.trace_ = self._run_trace(result, init_seconds, ("z_seconds", "beta_seconds", "acceptance"))
        return self

    def _expert_proba(self, design, eta):
        """``softmax(eta x~)`` for every row (the expert's class probabilities)."""
        return softmax(design @ eta.T, axis=1)
