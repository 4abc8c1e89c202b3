"""What :class:`~regbayes.models.ibp_features.IBPFeatures` and
:class:`~regbayes.models.ilsvm.InfiniteLatentSVC` share: the linear-Gaussian IBP latent
feature model fitted by truncated mean field (paper 002, Appendix D.2,
:mod:`regbayes.algorithms.ilsvm`), its parameters, the resolved defaults, the run through
the driver and the inductive feature inference for new rows.

Resolved defaults (stored as fitted attributes):

* ``Phi`` starts from the SVD of X (section 5.1): ``Phi_.k = (s_k / sqrt(N)) v_k`` for the
  top right singular vectors of the column-centred X
  (:func:`regbayes.algorithms.ilsvm.svd_loadings`).
* New rows: their ``psi`` by sweeps of eq. 33 with ``q(W)``, ``q(nu)`` fixed, from three
  starts, the best ELBO kept (:func:`regbayes.algorithms.ilsvm.infer_features`; at most
  ``TRANSFORM_MAX_ITER`` sweeps, to a change below ``TRANSFORM_TOL``).
* ``noise_variance=None``: the probabilistic-PCA estimate with ``r = round(alpha H_N)``
  components, the IBP's expected number of features (section 4.1): the mean of the
  ``D - r`` smallest eigenvalues of ``X^T X / N`` over every row of the fit
  (:func:`regbayes.algorithms.ilsvm.pca_noise_variance`); Algorithm 3 (line 3) computes
  ``sigma_n0^2`` "from the data" without saying how.
* The model has no mean term and the loading prior has variance ``loading_variance``
  (1 by default): standardise X first (``StandardScaler``).

Dense arrays; a scipy.sparse matrix is densified. The fit's mean-field programs run in
float32 (JAX's default; the objective is compared at relative tolerances of 1e-3 and
1e-4); the dual step runs in float64 on the host, and the inference for new rows in
float64, so that a row's features do not depend on the other rows passed with it (in
float32 the product ``X Phi`` rounds differently with the number of rows, by ~1e-7).
"""
from __future__ import annotations

import hashlib
import time
from numbers import Integral, Real

import jax
import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from ..algorithms.ilsvm import (
    DUAL_TOL,
    final_dual,
    ilsvm_compile,
    ilsvm_data,
    ilsvm_init,
    ilsvm_step,
    infer_features,
    initial_objective,
    n_active,
    expected_features,
    pca_noise_variance,
    svd_loadings,
)
from ..core.duals import warm_up_crammer_singer
from ..inference import Algorithm, run
from ..precision import enable_x64
from ..validation import FLOAT32_SCALE, check_feature_scale
from .base import CHECKPOINT_CONSTRAINTS, RegBayesEstimator

POSITIVE = Interval(Real, 0, None, closed="neither")

#: Sweeps of the inductive feature inference at most, and the largest change of a row's
#: ``psi`` below which it stops.
TRANSFORM_MAX_ITER = 200
TRANSFORM_TOL = 1e-4

LATENT_CONSTRAINTS = {
    "truncation": [Interval(Integral, 1, None, closed="left")],
    "alpha": [POSITIVE],
    "n_iter": [Interval(Integral, 1, None, closed="left")],
    "n_inner": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="left")],
    "inner_tol": [Interval(Real, 0, None, closed="left")],
    "noise_variance": [POSITIVE, None],
    "loading_variance": [POSITIVE],
    "estimate_variances": ["boolean"],
    "random_state": ["random_state"],
    "progress": ["boolean"],
    **CHECKPOINT_CONSTRAINTS,
}


def data_digest(X: np.ndarray) -> str:
    """A digest of a float64 matrix's shape and values (recognises data seen at ``fit``)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    return hashlib.sha1(repr(X.shape).encode() + X.tobytes()).hexdigest()


class LatentParameters(RegBayesEstimator):
    """The parameters every IBP latent-feature estimator has (``LATENT_CONSTRAINTS``: the
    truncated IBP of paper 002, section 4.1, and the mean-field loop of Algorithms 2 and 3)
    and its dense float64 input; the single-task and multi-task estimators build on it."""

    _parameter_constraints: dict = dict(LATENT_CONSTRAINTS)

    def __init__(self, truncation=50, alpha=1.0, n_iter=20, n_inner=10, tol=1e-4, inner_tol=1e-3, noise_variance=None,
                 loading_variance=1.0, estimate_variances=False, random_state=None, progress=False, checkpoint=None,
                 checkpoint_every=60.0):
        self.truncation = truncation
        self.alpha = alpha
        self.n_iter = n_iter
        self.n_inner = n_inner
        self.tol = tol
        self.inner_tol = inner_tol
        self.noise_variance = noise_variance
        self.loading_variance = loading_variance
        self.estimate_variances = estimate_variances
        self.random_state = random_state
        self.progress = progress
        self.checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every

    def _check_X(self, X, *, reset: bool):
        """X validated as a dense float64 array (sparse input densified; never modified)."""
        X = validate_data(self, X, accept_sparse=["csr", "csc", "coo"], dtype=np.float64, reset=reset)
        if sp.issparse(X):
            X = X.toarray()
        return np.asarray(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class LatentFeatureModel(LatentParameters):
    """Base of the IBP latent-feature estimators (module docstring)."""

    # ------------------------------------------------------------------ fit
    def _fit_latent(self, X, labels=None, n_classes=0, *, C=0.0, include_inputs=False, intercept_scaling=0.0,
                    dual_tol=DUAL_TOL, name="iLSVM", key=None):
        """Run Algorithm 3 on the rows ``X`` (the ``len(labels)`` labelled ones first) until
        the objective's relative change is below ``tol``; store the fitted attributes.
        ``key``: the fit's JAX key (default: from ``random_state``). Returns the driver's
        result."""
        check_feature_scale(X, type(self).__name__, smallest=FLOAT32_SCALE[0], largest=FLOAT32_SCALE[1])
        n, d = X.shape
        K = int(self.truncation)
        key_init, key_run = jax.random.split(self._fit_key() if key is None else key)
        r = int(round(expected_features(self.alpha, n)))
        noise = pca_noise_variance(X, r) if self.noise_variance is None else float(self.noise_variance)
        data = ilsvm_data(X, labels, n_classes, C=C, alpha=self.alpha, n_inner=self.n_inner, inner_tol=self.inner_tol,
                          estimate_variances=self.estimate_variances, include_inputs=include_inputs,
                          intercept_scaling=intercept_scaling, dual_tol=dual_tol)
        state = ilsvm_init(key_init, data, svd_loadings(X, K), noise_variance=noise,
                           loading_variance=float(self.loading_variance))
        if data.supervised:
            warm_up_crammer_singer()  # numba compiles the dual's kernels while XLA compiles the phase
        start = time.perf_counter()
        F0 = initial_objective(state, data)  # compiles the phase for these shapes (a run of zero iterations)
        start_seconds = time.perf_counter() - start
        result = run(Algorithm(ilsvm_step, name, compile=ilsvm_compile), state, data, key_run, n_iter=self.n_iter,
                     tol=self.tol, initial_objective=F0, progress=self.progress, desc=name,
                     checkpoint=self._host_checkpoint())
        s, final = final_dual(result.state, data)  # the last dual step to the exact tolerance
        result = result._replace(state=s)
        if final is not None:
            self.duality_gap_ = float(final.gap)
        self.components_ = np.asarray(s.Phi, np.float64).T.copy()
        self.component_variances_ = np.asarray(s.sigma2, np.float64)
        self.sticks_ = np.asarray(s.gamma, np.float64)
        self.noise_variance_ = float(s.noise)
        self.loading_variance_ = float(s.loading_variance)
        self.n_active_features_ = n_active(s.psi)
        self.objective_ = np.concatenate([[F0], result.trace["objective"]])
        self.elbo_ = np.asarray(result.trace["elbo"], np.float64)
        self.n_iter_ = result.n_iter
        self.converged_ = bool(result.converged)
        self.trace_ = {name: np.asarray(v) for name, v in result.trace.items()}
        self.trace_.update(wall_time=result.wall_time, compile_seconds=result.compile_seconds + start_seconds,
                           sampling_seconds=result.sampling_seconds)
        return result

    # ------------------------------------------------------------------ new rows
    def _infer(self, X):
        """Inductive feature means of the rows of X (W and nu fixed), float64 (n, K)."""
        if X.shape[0] == 0:
            return np.zeros((0, self.components_.shape[0]))
        with enable_x64():
            psi, _ = infer_features(np.asarray(X, np.float64), self.components_.T, self.component_variances_, self.sticks_,
                                    np.float64(self.noise_variance_), TRANSFORM_MAX_ITER, TRANSFORM_TOL)
            return np.asarray(psi, np.float64)

    def _latent_features(self, X):
        check_is_fitted(self, "components_")
        return self._infer(self._check_X(X, reset=False))
