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

Several classes. One-vs-rest per component, as the foundation's Gibbs kernel
(:mod:`regbayes.algorithms.gibbs_svm`): ``eta_k`` has shape ``(L, d + 1)`` and
``psi = prod_l exp(-C (l - y_il f_kl)_+)`` with ``y_il = +1`` if ``y_i`` is class ``l``, else -1;
a binary problem has ``L = 1``. Both samplers target this same posterior.

Samplers (one iteration = z given eta, then eta given z):

* z | eta, with (mu, Sigma) and the augmentation variables omega integrated out (the
  partially collapsed step, eqs. 15-16): a numba sweep
  (:mod:`regbayes.algorithms.crp_kernels`). The new-component integral of eq. 16 is handled
  by Neal's (2000) Algorithm 8 with ``n_auxiliary`` classifiers drawn from the prior:
  exact for every ``n_auxiliary`` and it also supplies the new component's classifier,
  where importance sampling would approximate eq. 16 and need a second sampler for it.
* ``sampler="gibbs"``: eta_k | z by the data-augmentation sweep omega | eta, eta | omega
  (eqs. 17-18) of :func:`regbayes.algorithms.gibbs_svm.binary_sweep` on the component's
  members, in float64. The members are gathered into a block padded with zero rows to a
  power of two (one compiled program per block size); a zero row adds nothing to the precision ``sum_i x_i x_i^T / omega_i`` nor
  to ``b = sum_i y_i (...) x_i``, so the conditional is exact.
* ``sampler="ssgnht"``: paper 000, Algorithm 2: eta_k | z by ``n_inner`` steps of
  :func:`regbayes.samplers.sgnht.ssgnht` per iteration, every component at once
  (``vmap``), each keeping its momentum and thermostat across iterations. The subgradient
  (eq. 29) is ``eta_k / nu^2 + n_k / |D~| sum_{d in D~} dhinge_d`` over a minibatch ``D~``
  of ``batch_size`` rows drawn with replacement among the component's members; eq. 29
  draws ``D~`` from all the data and keeps the members, scaling by ``|D| / |D~|`` -- the
  same expectation, but a small component would then see almost no rows per step. The
  hinge and its subgradient come from :mod:`regbayes.potentials.linear_svm`. Each
  component runs in whitened coordinates ``eta = T_k u`` (the kernel's transform), with
  ``T_k T_k^T = (I / nu^2 + C n_k E_k[x~ x~^T])^{-1}``, the Gaussian analogue of its
  posterior covariance, the members' second moments read from the component's NIW
  posterior (no pass over the rows), and step ``h_k = step_size * min(1, sqrt(batch_size
  / n_k))`` (the foundation's minibatch-noise cap, :class:`~regbayes.models.bayes_svm.BayesianSVC`).
  A dense ``T_k`` matters: inside a component the centred features share a large offset,
  and an isotropic scale fitted to it left the other directions crawling (measured on
  paper 001's Setting II generator with 22 features, 40 iterations: 59.7 % test accuracy
  with an isotropic scale against 71.1 % for Gibbs on 40,000 training rows; with
  ``T_k``, 71.2 % against 71.0 % on 50,000).

Prediction. A test point's component is unknown. For each kept posterior draw
``(z, eta)`` it joins component ``k`` with probability ``∝ n_k t(x | X_k)`` (the CRP times
the Student-t predictive) or a new component with probability ``∝ alpha t(x | prior)``,
whose classifier is a prior draw and votes for each class with probability ``1 / L``.
``predict_proba`` is the Gibbs classifier's vote share averaged over these weights and
over the draws; ``predict`` takes its argmax.
"""
from __future__ import annotations

import functools
import math
import time
import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..precision import maybe_x64
from ..potentials import linear_svm
from ..algorithms.gibbs_svm import binary_sweep
from ..samplers.base import Potential
from ..samplers.sgnht import ssgnht
from ..potentials import niw as _niw
from ..algorithms.crp_kernels import crp_sweep
from ..validation import check_choice, check_finite_features, check_int, check_positive

SAMPLERS = ("gibbs", "ssgnht")
INITIAL_CAPACITY = 16  # component slots before the first doubling
MIN_BLOCK = 64  # smallest padded member block of the Gibbs eta step


# ---------------------------------------------------------------------------------------
# eta | z, Gibbs with data augmentation
# ---------------------------------------------------------------------------------------
def gibbs_component_sweep(key, eta, X, Y, valid, C, margin, prior_scale):
    """One omega | eta, eta | omega sweep for one component (eqs. 17-18).

    ``eta`` (L, D); ``X`` (B, D) the component's rows padded to a block size ``B``;
    ``Y`` (L, B) +1/-1; ``valid`` (B,) marks real members. Padding rows are zeroed.
    """
    mask = valid.astype(X.dtype)
    X = X * mask[:, None]
    y = Y * mask[None, :]
    keys = jax.random.split(key, eta.shape[0])
    sweep = jax.vmap(binary_sweep, in_axes=(0, 0, None, 0, None, None, None))
    eta_new, _ = sweep(keys, eta, X, y, C, margin, prior_scale)
    return eta_new


_gibbs_component_sweep_jit = jax.jit(gibbs_component_sweep)


# ---------------------------------------------------------------------------------------
# eta | z, SSGNHT on minibatches of a component's members (paper 000, Algorithm 2)
# ---------------------------------------------------------------------------------------
class ComponentRows(NamedTuple):
    """One component's rows for one one-vs-rest classifier.

    ``members`` lists row indices grouped by component; the component's rows are
    ``members[start : start + count]``. ``y`` holds +1/-1 for every row.
    """

    X: jnp.ndarray
    y: jnp.ndarray
    members: jnp.ndarray
    start: jnp.ndarray
    count: jnp.ndarray
    C: jnp.ndarray
    margin: jnp.ndarray
    prior_scale: jnp.ndarray


def _svm_rows(data: ComponentRows, idx):
    return linear_svm.SVMData(data.X[idx], data.y[idx], data.C, data.margin, data.prior_scale)


def _prior_terms(eta, data):
    return 0.5 * jnp.sum(eta**2) / data.prior_scale**2, eta / data.prior_scale**2


def _member_rows(data: ComponentRows):
    """All rows in ``members`` order with a mask of the component's own."""
    r = jnp.arange(data.members.shape[0])
    inside = (r >= data.start) & (r < data.start + data.count)
    return data.members, inside


def _component_value_and_subgrad(eta, data: ComponentRows):
    """Exact ``U_k(eta) = ||eta||^2 / (2 nu^2) + C sum_{i in k} (l - y_i eta^T x~_i)_+``."""
    rows, inside = _member_rows(data)
    svm = linear_svm.SVMData(data.X[rows], jnp.where(inside, data.y[rows], 0.0), data.C, data.margin, data.prior_scale)
    # a row with y = 0 has a constant loss C l and a zero subgradient: drop the constant
    u, g = linear_svm.value_and_subgrad(eta, svm)
    return u - data.C * data.margin * jnp.sum(~inside), g


def _component_log_lik_terms(eta, data: ComponentRows, idx):
    rows, inside = _member_rows(data)
    return jnp.where(inside[idx], linear_svm.log_lik_terms(eta, _svm_rows(data, rows), idx), 0.0)


@functools.lru_cache(maxsize=None)
def component_potential(batch_size: int) -> Potential:
    """Potential of one component's classifier with the minibatch estimate of eq. 29 taken
    over the component's members (``n_k / |D~|`` scaling; see the module docstring)."""

    def stochastic_value_and_subgrad(key, eta, data: ComponentRows):
        j = jax.random.randint(key, (batch_size,), 0, jnp.maximum(data.count, 1))
        idx = data.members[data.start + j]
        u_batch, g_batch = linear_svm.value_and_subgrad(eta, _svm_rows(data, idx))
        u_prior, g_prior = _prior_terms(eta, data)
        scale = data.count.astype(eta.dtype) / batch_size
        return scale * (u_batch - u_prior) + u_prior, scale * (g_batch - g_prior) + g_prior

    return Potential(
        value_and_subgrad=_component_value_and_subgrad,
        stochastic_value_and_subgrad=stochastic_value_and_subgrad,
        log_prior=lambda eta, data: -_prior_terms(eta, data)[0],
        log_lik_terms=_component_log_lik_terms,
        n_data=lambda data: data.members.shape[0],
        batch_size=batch_size,
    )


def _slots_and_classes(fn):
    """vmap ``fn(state, key, y, start, count, h, transform)`` over classes, then over slots."""
    per_class = jax.vmap(fn, in_axes=(0, 0, 0, None, None, None, None))
    return jax.vmap(per_class, in_axes=(0, 0, None, 0, 0, 0, 0))


@jax.jit
def _ssgnht_init(keys, positions):
    """SSGNHT states for (slot, class) positions, with dense identity transforms (the
    shape the eta step installs)."""
    kernel = ssgnht(component_potential(1))
    states = jax.vmap(jax.vmap(lambda k, p: kernel.init(k, p, None)))(keys, positions)
    eye = jnp.eye(positions.shape[-1], dtype=positions.dtype)
    return states._replace(transform=jnp.broadcast_to(eye, positions.shape[:2] + eye.shape))


def ssgnht_eta_step(states, fresh, positions, key, X, Y, members, starts, counts, steps, transforms,
                    C, margin, prior_scale, n_inner, *, batch_size):
    """``n_inner`` SSGNHT steps for every (slot, class); empty slots are left unchanged.

    ``states`` has leading axes (slot, class). Every slot starts from ``positions``
    (the classifiers after the z-sweep); a ``fresh`` slot (a new component) also gets a new
    momentum and thermostat (``kernel.init``), the others keep theirs. ``Y`` (L, n); ``starts``, ``counts``, ``steps`` (h_k) have one
    entry per slot, ``transforms`` one lower-triangular (D, D) whitening factor per slot.
    """
    kernel = ssgnht(component_potential(batch_size))
    init_keys, keys = jax.random.split(key, (2,) + positions.shape[:2])
    init = _ssgnht_init(init_keys, positions)
    states = jax.tree_util.tree_map(
        lambda new, old: jnp.where(fresh.reshape(fresh.shape + (1,) * (new.ndim - 1)), new, old), init, states
    )._replace(position=positions)

    def one(state, key, y, start, count, h, transform):
        data = ComponentRows(X, y, members, start, count, C, margin, prior_scale)
        state = kernel.adapt(state, transform)

        def body(_, carry):
            s, k = carry
            k, sub = jax.random.split(k)
            s, _ = kernel.step(sub, s, data, h)
            return s, k

        new, _ = jax.lax.fori_loop(0, n_inner, body, (state, key))
        return jax.tree_util.tree_map(lambda a, b: jnp.where(count > 0, a, b), new, state)

    return _slots_and_classes(one)(states, keys, Y, starts, counts, steps, transforms)


_ssgnht_eta_step_jit = jax.jit(ssgnht_eta_step, static_argnames=("batch_size",))


# Compiled eta steps, shared by every fit: (tag, shapes and dtypes) -> executable.
_COMPILED: dict = {}


def _signature(args):
    leaves = jax.tree_util.tree_leaves(args)
    return tuple((getattr(a, "shape", None), str(getattr(a, "dtype", type(a)))) for a in leaves)


def compiled(tag, jitted, args, **static):
    """The executable of ``jitted`` for these argument shapes, and the seconds spent
    compiling it now (0 when it was already compiled)."""
    key = (tag, _signature(args), tuple(sorted(static.items())))
    if key in _COMPILED:
        return _COMPILED[key], 0.0
    start = time.perf_counter()
    _COMPILED[key] = jitted.lower(*args, **static).compile()
    return _COMPILED[key], time.perf_counter() - start


# ---------------------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------------------
class InfiniteSVC(ClassifierMixin, BaseEstimator):
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
    sampler : {"gibbs", "ssgnht"}, default="gibbs"
        The eta | z step: data augmentation (exact, float64) or SSGNHT on minibatches
        (paper 000, Algorithm 2). The z | eta step is the same for both.
    n_iter : int, default=200
        Iterations (z-sweep then eta-step), warm-up included.
    n_warmup : int, default=100
        Iterations discarded before draws are kept (burn-in); must be < n_iter.
    batch_size : int, default=100
        Minibatch size of the SSGNHT eta step.
    step_size : float, optional
        SSGNHT base step in each component's scaled coordinates (default 0.15, the
        foundation's SSGNHT default); component ``k`` uses
        ``step_size * min(1, sqrt(batch_size / n_k))``.
    n_inner : int, default=20
        SSGNHT steps per iteration and component.
    n_auxiliary : int, default=2
        Auxiliary classifiers per datum for a new component (Neal 2000, Algorithm 8).
    init : {"kmeans", "sequential"}, default="kmeans"
        Starting assignments: k-means with ``init_components`` clusters, or one
        CRP-style sweep that seats the rows one at a time. Single-site Gibbs merges
        surplus components readily (their rows move one by one to better ones) but can
        hardly split a component that covers several well-separated clusters: a row
        leaves it only for a new component, weighted by the broad prior predictive. So
        the default starts over-clustered (measured on paper 001's Setting II, 5000 rows,
        40 iterations: 2 components and 55-58 % test accuracy from the sequential start,
        12-15 and 62-68 % from k-means with 16).
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
    random_state : int, default=0
    progress : bool, default=False
        Show a progress bar over iterations.

    Attributes
    ----------
    classes_ : labels seen in fit.
    labels_ : (n_samples,) component of every training row in the last draw, numbered
        0..n_components_-1 in order of first appearance.
    n_components_ : number of non-empty components in the last draw.
    n_components_trace_ : (n_iter,) non-empty components after every iteration.
    coef_samples_ : (n_draws, K, n_features) binary or (n_draws, K, L, n_features):
        kept draws of every slot's weights in the original feature coordinates
        (``f(x) = coef x + intercept``); ``K`` is the largest slot count used, and
        ``component_active_`` (n_draws, K) marks the non-empty slots.
    intercept_samples_ : (n_draws, K) or (n_draws, K, L).
    component_sizes_ : (n_draws, K) members per slot.
    trace_ : dict of per-iteration arrays ``z_seconds``, ``eta_seconds``,
        ``n_components`` and the totals ``compile_seconds``, ``init_seconds`` (k-means),
        ``sampling_seconds`` (z and eta steps).
    """

    def __init__(
        self,
        alpha=1.0,
        C=1.0,
        margin=1.0,
        prior_scale=1.0,
        sampler="gibbs",
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
    ):
        self.alpha = alpha
        self.C = C
        self.margin = margin
        self.prior_scale = prior_scale
        self.sampler = sampler
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

    # ------------------------------------------------------------------ checks
    def _check_params(self, d):
        for name in ("alpha", "C", "margin", "prior_scale"):
            check_positive(name, getattr(self, name))
        check_positive("niw_kappa", self.niw_kappa, allow_none=True)
        check_positive("step_size", self.step_size, allow_none=True)
        check_positive("intercept_scaling", self.intercept_scaling, allow_none=True)
        check_choice("sampler", self.sampler, SAMPLERS)
        check_int("n_iter", self.n_iter, 1)
        check_int("n_warmup", self.n_warmup, 0)
        if self.n_warmup >= self.n_iter:
            raise ValueError(f"n_warmup={self.n_warmup} must be smaller than n_iter={self.n_iter} (no draws would be kept)")
        check_int("batch_size", self.batch_size, 1)
        check_int("n_inner", self.n_inner, 1)
        check_int("n_auxiliary", self.n_auxiliary, 1)
        check_choice("init", self.init, ("kmeans", "sequential"))
        check_int("init_components", self.init_components, 1)
        if self.niw_dof is not None:
            check_positive("niw_dof", self.niw_dof)
            if self.niw_dof <= d + 1:
                raise ValueError(f"niw_dof must exceed n_features + 1 = {d + 1}, got {self.niw_dof}")

    def _prior(self, X):
        cov = self.niw_covariance
        if np.ndim(cov) == 0:
            check_positive("niw_covariance", cov)
        try:
            return _niw.default_prior(X, self.niw_kappa, self.niw_dof, cov, self.niw_mean)
        except ValueError as exc:  # name the estimator's parameter
            message = str(exc).replace("the NIW covariance", "niw_covariance").replace("the NIW mean", "niw_mean")
            raise ValueError(message) from None

    def _validate_X(self, X, reset, y=None):
        kwargs = dict(accept_sparse="csr", dtype=[np.float64, np.float32])
        if reset:
            X, y = validate_data(self, X, y, **kwargs)
        else:
            X = validate_data(self, X, reset=False, **kwargs)
        check_finite_features(X)
        X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
        return (X, y) if reset else X

    def _design(self, X):
        return np.hstack([X - self._x_offset, np.full((X.shape[0], 1), self._intercept_scaling)])

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Run the sampler on training data ``X`` (dense or sparse, densified), ``y``."""
        X, y = self._validate_X(X, True, y)
        check_classification_targets(y)
        n, d = X.shape
        self._check_params(d)
        encoder = LabelEncoder().fit(y)
        self.classes_ = encoder.classes_
        if len(self.classes_) < 2:
            raise ValueError(f"y has 1 class ({self.classes_[0]!r}); a classifier needs at least two")
        codes = encoder.transform(y)
        n_classes = len(self.classes_)
        n_ovr = 1 if n_classes == 2 else n_classes
        Y = (2.0 * codes - 1.0)[:, None] if n_classes == 2 else np.where(codes[:, None] == np.arange(n_classes), 1.0, -1.0)
        prior = self._prior(X)
        self.prior_ = prior
        self._x_offset = X.mean(axis=0)
        radius = math.sqrt(float(np.mean(np.sum((X - self._x_offset) ** 2, axis=1))))
        self._intercept_scaling = float(self.intercept_scaling or (radius if radius > 0 else 1.0))
        design = self._design(X)
        D = d + 1
        rng = np.random.RandomState(self.random_state)
        use_x64 = self.sampler == "gibbs"
        with maybe_x64(use_x64):
            runner = _Runner(self, X, design, Y, n_ovr, prior, rng, use_x64)
            runner.run()
        self._store(runner, d, n_classes)
        return self

    def _store(self, runner, d, n_classes):
        K = max(len(c) for c in runner.kept_counts)
        S = len(runner.kept_counts)
        L = runner.n_ovr
        eta = np.zeros((S, K, L, d + 1))
        counts = np.zeros((S, K), np.int64)
        means = np.broadcast_to(self.prior_.mean, (S, K, d)).copy()
        chols = np.broadcast_to(self.prior_.chol, (S, K, d, d)).copy()
        for s, (c, m, ch, e) in enumerate(zip(runner.kept_counts, runner.kept_means, runner.kept_chols, runner.kept_eta)):
            k = len(c)
            counts[s, :k], means[s, :k], chols[s, :k], eta[s, :k] = c, m, ch, e
        weights = eta[..., :d]
        intercepts = self._intercept_scaling * eta[..., d] - weights @ self._x_offset
        if n_classes == 2:
            weights, intercepts = weights[:, :, 0], intercepts[:, :, 0]
        self.coef_samples_ = weights
        self.intercept_samples_ = intercepts
        self.component_sizes_ = counts
        self.component_active_ = counts > 0
        self._eta_samples = eta
        self._component_means = means
        self._component_chols = chols
        z = runner.z
        _, first = np.unique(z, return_index=True)
        order = z[np.sort(first)]
        relabel = np.empty(runner.counts.shape[0], np.int64)
        relabel[order] = np.arange(len(order))
        self.labels_ = relabel[z]
        self.n_components_ = int(len(order))
        self.n_components_trace_ = np.asarray(runner.n_components, np.int64)
        self.trace_ = {
            "z_seconds": np.asarray(runner.z_seconds),
            "eta_seconds": np.asarray(runner.eta_seconds),
            "n_components": self.n_components_trace_,
            "compile_seconds": runner.compile_seconds,
            "init_seconds": runner.init_seconds,
            "sampling_seconds": float(np.sum(runner.z_seconds) + np.sum(runner.eta_seconds)),
        }

    # ------------------------------------------------------------------ predict
    def _component_weights(self, X, s):
        """(m, K_s + 1) predictive component probabilities of draw ``s`` (last: new)."""
        active = np.flatnonzero(self.component_active_[s])
        logw = np.empty((X.shape[0], len(active) + 1))
        for j, k in enumerate(active):
            n_k = self.component_sizes_[s, k]
            post = _niw.NIW(self._component_means[s, k], self.prior_.kappa + n_k, self.prior_.dof + n_k, self._component_chols[s, k])
            logw[:, j] = math.log(n_k) + _niw.log_predictive(post, X)
        logw[:, -1] = math.log(self.alpha) + _niw.log_predictive(self.prior_, X)
        logw -= logw.max(axis=1, keepdims=True)
        w = np.exp(logw)
        return active, w / w.sum(axis=1, keepdims=True)

    def predict_proba(self, X, max_draws=100):
        """Vote shares of the Gibbs classifier, averaged over at most ``max_draws`` kept
        draws (evenly spaced) and over each test point's predictive component weights."""
        check_is_fitted(self, "coef_samples_")
        X = self._validate_X(X, False)
        design = self._design(X)
        n_classes = len(self.classes_)
        S = self._eta_samples.shape[0]
        index = np.unique(np.linspace(0, S - 1, min(S, max_draws)).astype(int))
        proba = np.zeros((X.shape[0], n_classes))
        rows = np.arange(X.shape[0])
        for s in index:
            active, w = self._component_weights(X, s)
            for j, k in enumerate(active):
                f = design @ self._eta_samples[s, k].T  # (m, L)
                vote = (f[:, 0] > 0).astype(int) if n_classes == 2 else np.argmax(f, axis=1)
                np.add.at(proba, (rows, vote), w[:, j])
            proba += w[:, -1:] / n_classes
        return proba / len(index)

    def predict(self, X):
        """The class with the largest :meth:`predict_proba`."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.non_deterministic = False
        return tags


class _Runner:
    """The sampling loop of one fit (state lives here, not on the estimator)."""

    def __init__(self, est: InfiniteSVC, X, design, Y, n_ovr, prior, rng, use_x64):
        self.est, self.X, self.Y, self.n_ovr, self.prior, self.rng = est, X, Y, n_ovr, prior, rng
        self.design = design
        self.dtype = np.float64 if use_x64 else np.float32
        n, D = design.shape
        self.n = n
        self.init_seconds = 0.0
        cap = INITIAL_CAPACITY
        if est.init == "kmeans" and n > 1:
            from sklearn.cluster import KMeans

            start = time.perf_counter()
            k = min(est.init_components, n)
            seed = int(rng.randint(2**31 - 1))
            with warnings.catch_warnings():  # fewer distinct rows than clusters: fine here
                warnings.simplefilter("ignore", ConvergenceWarning)
                self.z = KMeans(k, n_init=1, random_state=seed).fit_predict(X).astype(np.int64)
            self.init_seconds = time.perf_counter() - start
            if k > INITIAL_CAPACITY:
                cap = 1 << (k - 1).bit_length()
        else:  # the first sweep seats the data one by one, as the CRP generates them
            self.z = np.full(n, -1, np.int64)
        self.counts = np.zeros(cap, np.int64)
        self.means = np.broadcast_to(prior.mean, (cap, prior.mean.shape[0])).copy()
        self.chols = np.broadcast_to(prior.chol, (cap, *prior.chol.shape)).copy()
        self.eta = np.zeros((cap, n_ovr, D))
        self.design_dev = jnp.asarray(design, self.dtype)
        self.Y_dev = jnp.asarray(Y.T, self.dtype)  # (L, n)
        self.Y_rows = np.ascontiguousarray(Y, dtype=np.float64)  # (n, L) for the numba sweep
        self.compile_seconds = 0.0
        self.states = None
        self.z_seconds, self.eta_seconds, self.n_components = [], [], []
        self.kept_counts, self.kept_means, self.kept_chols, self.kept_eta = [], [], [], []
        hyper = (est.C, est.margin, est.prior_scale)
        self.hyper_dev = tuple(jnp.asarray(v, self.dtype) for v in hyper)

    def _key(self):
        return jax.random.key(int(self.rng.randint(2**31 - 1)))

    # -------------------------------------------------------------- z | eta
    def z_step(self):
        est = self.est
        K = self.counts.shape[0]
        if self.z[0] >= 0:  # fresh statistics: no rounding carried over from the last sweep
            self.counts, self.means, self.chols = _niw.component_posteriors(self.prior, self.X, self.z, K)
        out = crp_sweep(
            self.X, self.design, self.Y_rows, self.z, self.counts, self.means, self.chols, self.eta,
            alpha=est.alpha, C=est.C, margin=est.margin, prior_scale=est.prior_scale,
            prior_mean=self.prior.mean, prior_kappa=self.prior.kappa, prior_dof=self.prior.dof,
            prior_chol=self.prior.chol, n_aux=est.n_auxiliary, seed=int(self.rng.randint(2**31 - 1)),
        )
        self.z, self.counts, self.means, self.chols, self.eta, fresh = out
        return fresh

    # -------------------------------------------------------------- eta | z
    def _groups(self):
        perm = np.argsort(self.z.astype(np.int32 if self.counts.shape[0] > 2**15 else np.int16), kind="stable")  # radix sort
        starts = np.cumsum(self.counts) - self.counts
        return perm, starts

    def eta_step_gibbs(self):
        perm, starts = self._groups()
        keys = jax.random.split(self._key(), self.counts.shape[0])
        new = self.eta.copy()
        for k in np.flatnonzero(self.counts):
            n_k = int(self.counts[k])
            block = max(MIN_BLOCK, 1 << (n_k - 1).bit_length())
            idx = np.zeros(block, np.int64)
            idx[:n_k] = perm[starts[k] : starts[k] + n_k]
            args = (keys[k], jnp.asarray(self.eta[k], self.dtype), jnp.asarray(self.design[idx], self.dtype),
                    jnp.asarray(self.Y_rows[idx].T, self.dtype), jnp.asarray(np.arange(block) < n_k), *self.hyper_dev)
            fn, seconds = compiled("gibbs", _gibbs_component_sweep_jit, args)
            self.compile_seconds += seconds
            new[k] = np.asarray(fn(*args))
        self.eta = new

    def _whitening(self):
        """Per slot, the Cholesky factor ``T_k`` of ``(I / nu^2 + C n_k E_k[x~ x~^T])^{-1}``, the
        Gaussian analogue of the classifier's posterior covariance (every row active), with
        the members' second moments ``E_k[x~ x~^T]`` read from the component's NIW posterior
        (``x~ = (x - xbar, s)``: mean ``a = m_k - xbar``, covariance ``E[Sigma_k]``) rather than
        from a pass over the rows. Within a component the centred features share a large
        offset ``a``, so an isotropic scale would fit the offset direction and crawl along
        the others."""
        est, prior = self.est, self.prior
        K, D = self.counts.shape[0], self.design.shape[1]
        d = D - 1
        s = self.est._intercept_scaling
        out = np.broadcast_to(est.prior_scale * np.eye(D), (K, D, D)).copy()
        active = np.flatnonzero(self.counts)
        n_k = self.counts[active].astype(np.float64)
        chols = self.chols[active]
        cov = chols @ np.swapaxes(chols, 1, 2) / (prior.dof + n_k - d - 1)[:, None, None]
        a = self.means[active] - self.est._x_offset
        moment = np.empty((len(active), D, D))
        moment[:, :d, :d] = cov + a[:, :, None] * a[:, None, :]
        moment[:, :d, d] = moment[:, d, :d] = s * a
        moment[:, d, d] = s * s
        precision = np.eye(D) / est.prior_scale**2 + est.C * n_k[:, None, None] * moment
        out[active] = np.linalg.cholesky(np.linalg.inv(precision))
        return out

    def eta_step_ssgnht(self, fresh):
        est = self.est
        K, L = self.counts.shape[0], self.n_ovr
        positions = jnp.asarray(self.eta, self.dtype)
        if self.states is None or self.states.position.shape[0] != K:  # first call or grown buffers
            init_keys = jax.random.split(self._key(), (K, L))
            fn, seconds = compiled("ssgnht-init", _ssgnht_init, (init_keys, positions))
            self.compile_seconds += seconds
            self.states = fn(init_keys, positions)
            fresh = np.ones(K, bool)
        perm, starts = self._groups()
        n_k = np.maximum(self.counts, 1)
        h0 = 0.15 if est.step_size is None else float(est.step_size)
        steps = h0 * np.minimum(1.0, np.sqrt(est.batch_size / n_k))
        transforms = self._whitening()
        args = (self.states, jnp.asarray(fresh), positions, self._key(), self.design_dev, self.Y_dev,
                jnp.asarray(perm, jnp.int32), jnp.asarray(starts, jnp.int32), jnp.asarray(self.counts, jnp.int32),
                jnp.asarray(steps, self.dtype), jnp.asarray(transforms, self.dtype), *self.hyper_dev,
                jnp.asarray(est.n_inner, jnp.int32))
        fn, seconds = compiled("ssgnht", _ssgnht_eta_step_jit, args, batch_size=est.batch_size)
        self.compile_seconds += seconds
        self.states = fn(*args)
        self.eta = np.asarray(self.states.position, np.float64)

    # -------------------------------------------------------------- loop
    def run(self):
        est = self.est
        iterations = range(est.n_iter)
        if est.progress:
            from tqdm.auto import tqdm

            iterations = tqdm(iterations, desc=f"InfiniteSVC[{est.sampler}]", unit="it", leave=False)
        for it in iterations:
            start = time.perf_counter()
            fresh = self.z_step()
            mid = time.perf_counter()
            compile_before = self.compile_seconds
            if est.sampler == "gibbs":
                self.eta_step_gibbs()
            else:
                self.eta_step_ssgnht(fresh)
            if not np.all(np.isfinite(self.eta)):
                advice = "lower step_size" if est.sampler == "ssgnht" else "check the scale of X"
                raise FloatingPointError(f"sampler {est.sampler!r} produced a non-finite classifier at iteration {it}; {advice}")
            end = time.perf_counter()
            self.z_seconds.append(mid - start)
            self.eta_seconds.append(end - mid - (self.compile_seconds - compile_before))
            active = self.counts > 0
            self.n_components.append(int(active.sum()))
            if it >= est.n_warmup:
                used = int(np.flatnonzero(active).max()) + 1
                self.kept_counts.append(self.counts[:used].copy())
                self.kept_means.append(self.means[:used].copy())
                self.kept_chols.append(self.chols[:used].copy())
                self.kept_eta.append(self.eta[:used].copy())
