"""iLSVM by truncated mean field (paper 002, Algorithm 3, Appendix D.2) on the algorithm
protocol: ``ilsvm_step(seed, state, data) -> (state, info)``, one outer iteration.

The RegBayes problem of iLSVM (eq. 12) under the mean-field family of Appendix D.2
(``q(nu_k) = Beta(gamma_k)``, ``q(W_.k) = N(Phi_.k, sigma_k^2 I)``, ``q(z_nk) =
Bernoulli(psi_nk)``, ``q(eta) = N(mu, I)``) minimises

    F(q) = -ELBO(q) + C sum_{n in I_tr} max_y (l_n(y) - mu_{y_n}^T g_n + mu_y^T g_n),

``g_n = psi_n`` (with ``include_inputs``: ``g_n = (psi_n, x_n)``, footnote 8; with an
intercept, a constant ``s`` appended, as liblinear does, so that the intercept is
penalised with ``mu``; eq. 10 has none), ``l_n`` the 0/1 cost, and
``ELBO = sum_n L_n(q) - KL(q(W)||p(W))`` (:mod:`regbayes.potentials.ibp_factor`)
``+ E[log p(Z|nu)] + H[q(Z)] - KL(q(nu)||p(nu))`` (:mod:`regbayes.potentials.ibp_sticks`,
with the bound ``L_k`` of eq. 24) ``- KL(q(eta)||p(eta))``, the last ``||mu||^2 / 2``.
One outer iteration (lines 5-12 of Algorithm 3):

1. Mean-field phase, with ``mu`` and the dual ``omega`` fixed. The hinge is replaced by
   its linear minorant at ``omega`` (Lemma 12: ``C max_y(.) >= sum_y omega_n^y (.)`` on
   the simplex ``sum_y omega_n^y = C``, with equality where ``omega`` is the dual
   optimum), so the phase ascends

       S(q) = ELBO(q) + sum_{n in I_tr} sum_y omega_n^y (mu_{y_n} - mu_y)^T psi_n

   by block coordinate ascent, each block at its exact maximum: ``psi`` by the
   column sweep of eq. 33 (:func:`regbayes.potentials.ibp_factor.feature_sweep`), then
   ``q(nu)`` by eq. 24 and eq. 32 (:mod:`~regbayes.potentials.ibp_sticks`), then
   ``q(W)`` by eq. 31 (:func:`~regbayes.potentials.ibp_factor.update_loadings`); ``S``
   never decreases. The blocks are visited in Algorithm 3's cyclic order (nu, W, Z)
   started at Z, so that the initial ``Phi`` (from the SVD of X) is seen by the features
   before it is re-estimated; started at nu and W, the first loading update would
   replace the SVD factors by the fit to ``psi = 1/2 + noise``. The phase stops after
   ``n_inner`` iterations (T) or when ``|S_t - S_{t-1}| <= inner_tol |S_{t-1}|`` (tau).
   The margin term of the logit (eq. 33, corrected) is the derivative of ``S`` in
   ``psi_nk``::

       sum_y omega_n^y E[eta_{y_n}^k - eta_y^k] = C mu_{y_n, k} - sum_y omega_n^y mu_{y, k};

   eq. 33 as printed has ``E[eta_{y_n}^k - eta_{y_n}^k]``, identically zero. Rows without
   a label (the transductive rows of line 9) get no margin term.
2. Dual step on the host: with ``psi`` fixed, ``min_mu ||mu||^2 / 2 + C sum_n max_y(.)`` is
   the Crammer-Singer problem on the features ``g_n`` of the labelled rows, whose dual is
   eq. 34 with the cost of Lemma 12 (:func:`regbayes.core.duals.crammer_singer_dual`, warm
   started from the last ``omega``); two classes take the same path. Its solution
   minimises ``F`` over ``q(eta)``. The dual is solved inexactly, as precisely as the
   outer iterations can see (inexact alternating minimisation): its duality gap, the
   error it leaves in ``F``, is held below a tenth of the last outer change of ``F``,
   within the relative gaps ``[dual_tol, DUAL_TOL_START]`` (:func:`dual_tolerance`). The
   steps on features that the next phase replaces then take a few passes instead of
   hundreds (the problem is close to hard-margin when the features separate the
   classes, where coordinate descent converges slowly), and at convergence
   (``|dF| <= tol |F|``) the dual's error in ``F`` is at most a tenth of the driver's
   tolerance. After the last outer iteration, :func:`final_dual` solves the dual on the
   final features to ``dual_tol`` (:data:`DUAL_TOL`), so the classifier minimises ``F``
   over ``q(eta)`` to that gap whatever the last step's tolerance was.
3. Optionally (``estimate_variances``), ``sigma_0^2`` by eq. 35 and the noise variance by
   eq. 36 (:mod:`regbayes.potentials.ibp_factor`), each the maximum of the ELBO in it;
   the noise variance is shared by all rows (the mean of eq. 36's per-row values) so that
   new rows have one.

``S - sum omega l`` bounds ``-F`` from above, so ``F`` is not monotone over outer
iterations (only ``S`` within a phase): with a large ``C`` the margin term outweighs the
likelihood in the logits, the phase moves the features far along the linearisation, and
``F`` can oscillate over the first outer iterations (Algorithm 3 as printed; the dual
then needs more passes).

``info`` records ``F`` (``objective``; the driver stops when its relative change is below
``tol``), the ELBO, the dual's duality gap, the number of active features (mean
``psi_.k`` above :data:`ACTIVE_THRESHOLD`), the iterations of the phase and of the
dual, and the dual step's wall time. Without labels (``n_train = 0``, or ``C = 0``) there
is no dual step: the unsupervised IBP linear-Gaussian model by mean field, ``F = -ELBO``.

The phase is one compiled program per data shape (a ``lax.while_loop`` over iterations;
``n_inner`` and ``inner_tol`` are traced, so changing them does not recompile); every
program keeps the dtype of ``X``. float32 suffices for the fit: the difference between
float32 and float64 runs stays well below the objective's change per outer iteration
(CHANGELOG, paper 002's first measurements); the dual step always runs in float64.
"""
from __future__ import annotations

import time
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..core.duals import crammer_singer_dual
from ..potentials import ibp_factor as factor
from ..potentials import ibp_sticks as sticks

#: A feature is active when its mean activation ``mean_n psi_nk`` is above this value.
ACTIVE_THRESHOLD = 0.01
#: Relative duality gap of the final dual step (:func:`final_dual`), and the tightest of
#: the steps within the outer iterations (``InfiniteLatentSVC(dual_tol=)``). The
#: Crammer-Singer problem on latent features is close to hard-margin; coordinate descent
#: needs many more passes for each further digit, which the classifier's accuracy does not
#: repay (CHANGELOG, 2026-11-25).
DUAL_TOL = 1e-2
#: Most passes of one dual step.
DUAL_MAX_ITER = 1000
#: Relative duality gap of the first two dual steps, and the loosest of any
#: (:func:`dual_tolerance`).
DUAL_TOL_START = 1e-1
#: The dual's gap is held below this fraction of the last outer change of ``F``.
DUAL_GAP_FRACTION = 0.1
#: Standard deviation of the noise added to ``psi = 1/2`` at the start (line 3 of
#: Algorithm 3 writes ``epsilon ~ N(0, 0.001)``: a variance of 0.001).
INITIAL_NOISE = float(np.sqrt(1e-3))


class ILSVMData(NamedTuple):
    """The rows (labelled first) and constants of one fit; build with :func:`ilsvm_data`."""

    X: jnp.ndarray  # (N, D) every row, the n_train labelled rows first
    sq_norms: jnp.ndarray  # (N,) ||x_n||^2
    X_train: np.ndarray | None  # (n_train, D) float64, the raw inputs for the dual (include_inputs)
    labels: np.ndarray  # (n_train,) int64 classes 0..L-1
    n_classes: int
    C: float
    alpha: float
    n_inner: int
    inner_tol: float
    estimate_variances: bool
    dual_tol: float = DUAL_TOL
    dual_max_iter: int = DUAL_MAX_ITER
    intercept_scaling: float = 0.0  # the constant feature s of g_n; 0 for none

    @property
    def n_train(self) -> int:
        return int(self.labels.shape[0])

    @property
    def supervised(self) -> bool:
        return self.n_train > 0 and self.C > 0


class ILSVMState(NamedTuple):
    psi: jnp.ndarray  # (N, K) q(z_nk) = Bernoulli(psi_nk)
    gamma: jnp.ndarray  # (K, 2) q(nu_k) = Beta(gamma_k1, gamma_k2)
    Phi: jnp.ndarray  # (D, K) means of q(W_.k)
    sigma2: jnp.ndarray  # (K,) variances of q(W_.k)
    noise: jnp.ndarray  # () sigma_n0^2, shared by the rows
    loading_variance: jnp.ndarray  # () sigma_0^2
    dual: np.ndarray | None  # (n_train, L) omega, None before the first dual step
    coef: np.ndarray | None  # (L, K [+ D]) mu, None before the first dual step
    objective: float | None = None  # F after the last step (None before the first)
    next_dual_tol: float = DUAL_TOL_START  # relative gap of the next dual step


class ILSVMInfo(NamedTuple):
    objective: float  # F after the iteration (the RegBayes objective)
    elbo: float  # ELBO(q), KL(q(eta) || p(eta)) included
    gap: float  # duality gap of the dual step (0 without one)
    n_active: int
    inner_iterations: int
    dual_iterations: int
    dual_seconds: float  # wall time of the dual step


def ilsvm_data(X, labels=None, n_classes=0, *, C=1.0, alpha=1.0, n_inner=10, inner_tol=1e-3,
               estimate_variances=False, include_inputs=False, intercept_scaling=0.0, dual_tol=DUAL_TOL,
               dual_max_iter=DUAL_MAX_ITER, dtype=np.float32) -> ILSVMData:
    """The step's data. ``X`` (N, D) holds every row with the ``len(labels)`` labelled
    rows first; ``labels`` (classes ``0..n_classes-1``) None for the unsupervised model.
    ``dtype`` (float32, or float64 inside :func:`regbayes.precision.enable_x64`) is the
    dtype of every program; the dual step sees the inputs in float64."""
    X = np.asarray(X)
    labels = np.zeros(0, np.int64) if labels is None else np.asarray(labels, np.int64)
    X_train = np.array(X[: len(labels)], np.float64) if include_inputs and len(labels) else None
    X = jnp.asarray(X, dtype)
    return ILSVMData(X, jnp.sum(X**2, axis=1), X_train, labels, int(n_classes), float(C), float(alpha),
                     int(n_inner), float(inner_tol), bool(estimate_variances), float(dual_tol), int(dual_max_iter),
                     float(intercept_scaling))


# ----------------------------------------------------------------------------- initialisation
def svd_loadings(X, truncation: int) -> np.ndarray:
    """Initial ``Phi`` (D, K) from the SVD of X (section 5.1: "the SVD factors of the input
    feature matrix as the initial mean of weights"): ``Phi_.k = (s_k / sqrt(N)) v_k`` for
    the top right singular vectors ``v_k`` of the column-centred X with singular values
    ``s_k``, k <= min(K, N, D), so that ``Phi_.k`` has the root-mean-square length of the
    rows' coordinates along ``v_k``; the remaining columns are 0. (Line 3 of Algorithm 3
    writes ``Phi = 0``.) Centring changes nothing for standardised inputs; on uncentred
    data the top singular vector is the mean, a mixture of every feature's loading rather
    than one of them (on six planted 3-feature problems, 400 x 20, the centred start
    reached a higher final ELBO in five)."""
    X = np.asarray(X, np.float64)
    X = X - X.mean(axis=0)
    n, d = X.shape
    values, vectors = _top_right_singular(X, min(truncation, n, d))
    Phi = np.zeros((d, truncation))
    Phi[:, : len(values)] = vectors * (values / np.sqrt(n))
    return Phi


def _top_right_singular(X, r):
    """The ``r`` largest singular values of X and their right singular vectors (D, r),
    from the eigendecomposition of the smaller Gram matrix (O(N D min(N, D)))."""
    n, d = X.shape
    if r == 0:
        return np.zeros(0), np.zeros((d, 0))
    if d <= n:
        eigval, eigvec = np.linalg.eigh(X.T @ X)
        order = np.argsort(eigval)[::-1][:r]
        values = np.sqrt(np.clip(eigval[order], 0.0, None))
        vectors = eigvec[:, order]
    else:
        eigval, eigvec = np.linalg.eigh(X @ X.T)
        order = np.argsort(eigval)[::-1][:r]
        values = np.sqrt(np.clip(eigval[order], 0.0, None))
        vectors = X.T @ eigvec[:, order] / np.where(values > 0, values, 1.0)
    # a sign convention: the largest entry of each vector positive (a deterministic start)
    signs = np.sign(vectors[np.argmax(np.abs(vectors), axis=0), np.arange(r)])
    return values, vectors * np.where(signs == 0, 1.0, signs)


def expected_features(alpha: float, n_rows: int) -> float:
    """``alpha H_N``: the expected number of active features under the IBP prior (section 4.1)."""
    return float(alpha) * float(np.sum(1.0 / np.arange(1, n_rows + 1)))


def pca_noise_variance(X, n_components: int) -> float:
    """The probabilistic-PCA estimate of an isotropic noise variance (Tipping and Bishop,
    1999) with ``r`` components: the mean of the ``D - r`` smallest eigenvalues of
    ``X^T X / N`` (the model has no mean term, so X is not centred). ``r`` is clipped to
    ``min(N, D) - 1``; data with no variance left after ``r`` components gets
    ``1e-6 ||X||_F^2 / (N D)``, and an all-zero X gets 1."""
    X = np.asarray(X, np.float64)
    n, d = X.shape
    total = float(np.sum(X**2))
    if total == 0.0:
        return 1.0
    r = int(max(0, min(n_components, min(n, d) - 1)))
    values, _ = _top_right_singular(X, r)
    rest = max(total - float(np.sum(values**2)), 0.0) / (n * (d - r))
    return max(rest, 1e-6 * total / (n * d))


def ilsvm_init(key, data: ILSVMData, Phi, *, noise_variance, loading_variance=1.0) -> ILSVMState:
    """Line 3 of Algorithm 3: ``gamma_k = (alpha, 1)``, ``psi_nk = 1/2 + epsilon`` with
    ``epsilon ~ N(0, 0.001)`` drawn from ``key``, ``mu = 0``, and the given initial ``Phi``
    (D, K) (:func:`svd_loadings`), noise variance and ``sigma_0^2``.

    ``sigma_k^2`` starts at its eq. 31 value for the initial ``psi``,
    ``(1 / sigma_0^2 + sum_n psi_nk / s)^(-1)``, instead of line 3's 1: the first feature
    sweep charges every feature ``D sigma_k^2 / (2 s)`` in its logit, which with
    ``sigma_k^2 = 1`` (71 for D = 30, s = 0.21) turns every feature off before the loadings
    are ever re-estimated."""
    dtype = data.X.dtype
    n = data.X.shape[0]
    k = Phi.shape[1]
    eps = INITIAL_NOISE * jax.random.normal(key, (n, k), dtype)
    psi = jnp.clip(0.5 + eps, 0.01, 0.99)
    sigma2 = 1.0 / (1.0 / loading_variance + jnp.sum(psi, axis=0) / noise_variance)
    return ILSVMState(psi, sticks.initial_sticks(k, data.alpha, dtype), jnp.asarray(Phi, dtype), sigma2.astype(dtype),
                      jnp.asarray(noise_variance, dtype), jnp.asarray(loading_variance, dtype), None, None)


# ----------------------------------------------------------------------------- the mean-field phase
def model_elbo(stats: factor.DataStats, psi, gamma, Phi, sigma2, loading_variance, alpha):
    """The ELBO without ``KL(q(eta) || p(eta))``, from the data statistics of ``psi``."""
    return (factor.expected_log_likelihood_stats(stats, Phi, sigma2) - factor.loadings_kl(Phi, sigma2, loading_variance)
            + sticks.ibp_elbo(psi, gamma, alpha))


def surrogate(X, sq_norms, psi, gamma, Phi, sigma2, noise, loading_variance, alpha, margin):
    """``S(q) = ELBO(q) + sum_nk margin_nk psi_nk`` without ``KL(q(eta)||p(eta))`` (a constant
    of the phase): the quantity the mean-field phase ascends (module docstring)."""
    stats = factor.data_stats(X, sq_norms, psi, noise)
    return model_elbo(stats, psi, gamma, Phi, sigma2, loading_variance, alpha) + jnp.sum(margin * psi)


def update_features(X, psi, gamma, Phi, sigma2, noise, margin, bound=None):
    """The Z block: one sweep of eq. 33 with the prior logit of the current ``q(nu)``
    (``bound``: ``sticks.stick_bound(gamma)`` when already computed)."""
    bound = sticks.stick_bound(gamma) if bound is None else bound
    offset = sticks.prior_logit(gamma, bound) + margin
    return factor.feature_sweep(X @ Phi, psi, Phi, sigma2, noise, offset)


def update_sticks(psi, gamma, alpha, bound=None):
    """The nu block: the tight ``q_k.`` of eq. 24 at the current ``gamma``, then eq. 32."""
    bound = sticks.stick_bound(gamma) if bound is None else bound
    return sticks.update_sticks(jnp.sum(psi, axis=0), psi.shape[0], alpha, bound.q)


def mean_field_iteration(X, sq_norms, psi, gamma, Phi, sigma2, noise, loading_variance, alpha, margin):
    """One iteration of the phase (Z, then nu, then W; module docstring). Returns
    ``(psi, gamma, Phi, sigma2, elbo, margin_term)`` with the ELBO (without
    ``KL(q(eta)||p(eta))``) and ``sum margin * psi`` at the new parameters."""
    bound = sticks.stick_bound(gamma)  # both blocks use the bound of the iteration's starting q(nu)
    psi = update_features(X, psi, gamma, Phi, sigma2, noise, margin, bound)
    gamma = update_sticks(psi, gamma, alpha, bound)
    stats = factor.data_stats(X, sq_norms, psi, noise)
    Phi, sigma2 = factor.update_loadings(stats, loading_variance)
    elbo = model_elbo(stats, psi, gamma, Phi, sigma2, loading_variance, alpha)
    return psi, gamma, Phi, sigma2, elbo, jnp.sum(margin * psi)


@jax.jit
def mean_field_phase(X, sq_norms, psi, gamma, Phi, sigma2, noise, loading_variance, alpha, margin, n_inner, inner_tol):
    """Iterations of :func:`mean_field_iteration` until ``n_inner`` or a relative change of
    ``S`` at most ``inner_tol``. Returns ``(psi, gamma, Phi, sigma2, elbo, iterations)``."""
    stats = factor.data_stats(X, sq_norms, psi, noise)
    start = model_elbo(stats, psi, gamma, Phi, sigma2, loading_variance, alpha)
    start_s = start + jnp.sum(margin * psi)

    def cond(carry):
        it, _, _, _, _, _, previous, current = carry
        moving = jnp.abs(current - previous) > inner_tol * jnp.abs(previous)
        return (it < n_inner) & ((it == 0) | moving)

    def body(carry):
        it, psi, gamma, Phi, sigma2, _, _, current = carry
        psi, gamma, Phi, sigma2, elbo, margin_term = mean_field_iteration(
            X, sq_norms, psi, gamma, Phi, sigma2, noise, loading_variance, alpha, margin)
        return it + 1, psi, gamma, Phi, sigma2, elbo, current, elbo + margin_term

    init = (jnp.asarray(0, jnp.int32), psi, gamma, Phi, sigma2, start, start_s, start_s)
    it, psi, gamma, Phi, sigma2, elbo, _, _ = jax.lax.while_loop(cond, body, init)
    return psi, gamma, Phi, sigma2, elbo, it


@jax.jit
def _hyper_update(X, sq_norms, psi, gamma, Phi, sigma2, alpha):
    """Eqs. 35 and 36 (shared noise), and the ELBO (without ``KL(q(eta))``) after them."""
    s0 = factor.update_loading_variance(Phi, sigma2)
    noise = jnp.mean(factor.update_noise_variance(X, psi, Phi, sigma2))
    stats = factor.data_stats(X, sq_norms, psi, noise)
    return s0, noise, model_elbo(stats, psi, gamma, Phi, sigma2, s0, alpha)


# ----------------------------------------------------------------------------- the step
def margin_logits(state: ILSVMState, data: ILSVMData):
    """The margin term of eq. 33 (corrected) for every row, (N, K): ``C mu_{y_n} -
    sum_y omega_n^y mu_y`` on the latent block of ``mu`` for labelled rows, 0 for the
    others and before the first dual step."""
    n, k = state.psi.shape
    margin = np.zeros((n, k))
    if state.coef is not None:
        weights = -np.asarray(state.dual, np.float64)
        weights[np.arange(data.n_train), data.labels] += data.C
        margin[: data.n_train] = weights @ state.coef[:, :k]
    return jnp.asarray(margin, state.psi.dtype)


def dual_features(psi, data: ILSVMData) -> np.ndarray:
    """``g_n`` of the labelled rows: ``psi_n``, then ``x_n`` (``include_inputs``), then the
    constant ``intercept_scaling`` (when > 0), float64 (n_train, P)."""
    return classifier_features(psi[: data.n_train], data.X_train, data.intercept_scaling)


def classifier_features(psi, X=None, intercept_scaling: float = 0.0) -> np.ndarray:
    """``[psi, X (if given), s (if s > 0)]`` as one float64 matrix: the ``g_n`` of any rows."""
    blocks = [np.asarray(psi, np.float64)]
    if X is not None:
        blocks.append(np.asarray(X, np.float64))
    if intercept_scaling > 0:
        blocks.append(np.full((blocks[0].shape[0], 1), float(intercept_scaling)))
    return np.hstack(blocks) if len(blocks) > 1 else np.array(blocks[0])


def solve_dual(psi, initial_dual, data: ILSVMData, tol: float, seed: int):
    """The Crammer-Singer dual (eq. 34, Lemma 12's cost) on the labelled rows' ``g_n`` to
    the relative gap ``tol``, warm started from ``initial_dual`` (None: cold). Most of the
    truncation is usually switched off (``psi_nk`` near 0 on every row): those columns are
    screened out of a first solve (``screen=True``), and the result still meets ``tol`` on
    all columns."""
    return crammer_singer_dual(dual_features(psi, data), data.labels, data.C, n_classes=data.n_classes, tol=tol,
                               max_iter=data.dual_max_iter, initial_dual=initial_dual, seed=seed, screen=True)


def dual_tolerance(change, primal: float, final: float) -> float:
    """Relative duality gap of the next dual step: ``DUAL_GAP_FRACTION * |change| /
    primal`` (an absolute gap of a tenth of the last outer change of ``F``), clipped to
    ``[final, DUAL_TOL_START]``; ``DUAL_TOL_START`` while no change is known (``None``)."""
    if change is None or not primal > 0:
        return DUAL_TOL_START
    return float(min(DUAL_TOL_START, max(float(final), DUAL_GAP_FRACTION * abs(change) / primal)))


def n_active(psi) -> int:
    """Columns whose mean activation is above :data:`ACTIVE_THRESHOLD`."""
    return int(np.sum(np.asarray(jnp.mean(psi, axis=0)) > ACTIVE_THRESHOLD))


def ilsvm_step(seed: int, state: ILSVMState, data: ILSVMData):
    """One outer iteration of Algorithm 3 (module docstring). The inputs are not modified."""
    psi, gamma, Phi, sigma2, elbo, it = mean_field_phase(
        data.X, data.sq_norms, state.psi, state.gamma, state.Phi, state.sigma2, state.noise, state.loading_variance,
        data.alpha, margin_logits(state, data), data.n_inner, data.inner_tol)
    it = int(it)
    dual, coef, gap, dual_iter, risk = state.dual, state.coef, 0.0, 0, 0.0
    dual_seconds = 0.0
    if data.supervised:
        start = time.perf_counter()
        solution = solve_dual(psi, state.dual, data, state.next_dual_tol, seed)
        dual, coef, gap, dual_iter = solution.dual, solution.coef, solution.gap, solution.n_iter
        risk = solution.primal_objective  # ||mu||^2 / 2 + C sum_n max_y(.)
        dual_seconds = time.perf_counter() - start
    noise, s0 = state.noise, state.loading_variance
    if data.estimate_variances:
        s0, noise, elbo = _hyper_update(data.X, data.sq_norms, psi, gamma, Phi, sigma2, data.alpha)
    elbo = float(elbo)
    kl_eta = 0.0 if coef is None else 0.5 * float(np.sum(coef**2))
    objective = risk - elbo
    change = None if state.objective is None else objective - state.objective
    new = ILSVMState(psi, gamma, Phi, sigma2, noise, s0, dual, coef, objective,
                     dual_tolerance(change, risk, data.dual_tol))
    info = ILSVMInfo(objective=objective, elbo=elbo - kl_eta, gap=float(gap), n_active=n_active(psi),
                     inner_iterations=it, dual_iterations=int(dual_iter), dual_seconds=dual_seconds)
    return new, info


def final_dual(state: ILSVMState, data: ILSVMData, seed: int = 0):
    """The dual step on the final features solved to ``data.dual_tol``, warm started from
    the last one (module docstring). Returns ``(state with omega and mu replaced,
    DualSolution)``; ``(state, None)`` without a dual step (unsupervised)."""
    if not data.supervised or state.dual is None:
        return state, None
    solution = solve_dual(state.psi, state.dual, data, data.dual_tol, seed)
    return state._replace(dual=solution.dual, coef=solution.coef), solution


def initial_objective(state: ILSVMState, data: ILSVMData) -> float:
    """``F`` at the start (``mu = 0``: every labelled row's hinge is ``C max_y l_n(y) = C``),
    the ELBO from a phase of zero iterations (the program the fit runs anyway)."""
    elbo = float(mean_field_phase(data.X, data.sq_norms, state.psi, state.gamma, state.Phi, state.sigma2, state.noise,
                                  state.loading_variance, data.alpha, jnp.zeros_like(state.psi), 0, data.inner_tol)[4])
    return (data.C * data.n_train if data.supervised else 0.0) - elbo


def ilsvm_compile(state: ILSVMState, data: ILSVMData) -> None:
    """Compile the phase for the data's shapes (a run of zero iterations), so that the
    driver counts it as compilation."""
    jax.block_until_ready(mean_field_phase(
        data.X, data.sq_norms, state.psi, state.gamma, state.Phi, state.sigma2, state.noise, state.loading_variance,
        data.alpha, jnp.zeros_like(state.psi), 0, data.inner_tol))
    if data.estimate_variances:
        jax.block_until_ready(_hyper_update(data.X, data.sq_norms, state.psi, state.gamma, state.Phi, state.sigma2,
                                            data.alpha))


# ----------------------------------------------------------------------------- new rows
@jax.jit
def infer_features(X, Phi, sigma2, gamma, noise, max_iter, tol):
    """Posterior feature means of new rows with ``q(W)`` and ``q(nu)`` fixed (the inductive
    rule): sweeps of eq. 33 without a margin term, each of which maximises the ELBO of the
    rows' ``q(z)`` column by column, until no entry of a row moves by more than ``tol``
    (rows are frozen one by one) or ``max_iter`` sweeps.

    Binary features make this ELBO multimodal, and sweeps stop at the mode nearest their
    start. Each row is run from three starts, ``psi_n = 1/2`` (Algorithm 3's start),
    ``psi_n = 0`` and the ridge least-squares relaxation ``clip((Phi^T Phi + s I)^(-1)
    Phi^T x_n, 0, 1)``, and keeps the result with the largest ELBO
    (:func:`regbayes.potentials.ibp_factor.row_objective`). A row's result depends on that
    row only. Returns ``(psi, sweeps)``, the sweeps of the longest run."""
    offset = sticks.prior_logit(gamma, sticks.stick_bound(gamma))
    xphi = X @ Phi
    n, k = xphi.shape
    gram_phi = Phi.T @ Phi
    ridge = jnp.linalg.solve(gram_phi + noise * jnp.eye(k, dtype=X.dtype), xphi.T).T
    starts = jnp.stack([jnp.full((n, k), 0.5, X.dtype), jnp.zeros((n, k), X.dtype), jnp.clip(ridge, 0.0, 1.0)])

    def converge(psi0):
        def cond(carry):
            it, _, active = carry
            return (it < max_iter) & jnp.any(active)

        def body(carry):
            it, psi, active = carry
            new = factor.feature_sweep(xphi, psi, Phi, sigma2, noise, offset)
            new = jnp.where(active[:, None], new, psi)
            moved = jnp.max(jnp.abs(new - psi), axis=1, initial=0.0) > tol
            return it + 1, new, active & moved

        it, psi, _ = jax.lax.while_loop(cond, body, (jnp.asarray(0, jnp.int32), psi0, jnp.ones(n, bool)))
        return psi, it

    runs, its = jax.vmap(converge)(starts)
    scores = jax.vmap(lambda psi: factor.row_objective(xphi, psi, Phi, sigma2, noise, offset))(runs)
    best = jnp.argmax(scores, axis=0)
    return jnp.take_along_axis(runs, best[None, :, None], axis=0)[0], jnp.max(its)
