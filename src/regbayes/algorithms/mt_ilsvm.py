"""MT-iLSVM (paper 002, section 4.4, Appendix D.1, Algorithm 2) on the algorithm protocol.

The model: a shared binary projection ``Z`` (D x K) with the IBP prior and the likelihood
of :mod:`regbayes.potentials.ibp_projection`; per task ``m`` a classifier
``eta_m ~ N(0, I)`` with ``q(eta_m) = N(mu_m, I)`` on the features ``psi^T x`` (with
``include_inputs`` also on ``x``, the paper's "^f" variant, footnote 8; with an intercept a
constant feature ``s``), so that ``f_m(x) = E[eta_m]^T [psi^T x; x; s]``. The intercept and
the raw inputs are features of the classifier only: they do not enter the ``Z`` update.

One :func:`mt_step` is one outer iteration of Algorithm 2:

1. the mean-field phase (lines 5-9), jitted as one ``lax.while_loop``: sticks (eq. 26),
   loadings (eq. 25, the joint maximum), features (eq. 27, a coordinate sweep over k),
   until the relative change of the phase's objective is below ``inner_tol`` or after
   ``n_inner`` sweeps. The phase's objective is the ELBO of the latent-feature model plus
   the linear margin term of the Lagrangian with the dual variables and ``mu`` of the last
   dual step fixed; each block update maximises it exactly, so it never decreases;
2. the dual step (lines 10-12): per task, on the features of the task's rows,

   * classification, the hinge loss (Lemma 9, eq. 28):
     ``max sum_n omega_mn - ||mu_m||^2 / 2``, ``0 <= omega_mn <= C``,
     ``mu_m = sum_n y_mn omega_mn psi^T x_n`` (:func:`regbayes.core.duals.binary_svm_dual`);
   * regression, the epsilon-insensitive loss ``C max(0, |f_m(x_n) - y_mn| - eps)``
     (derived as Appendix B derives MedLDA regression): its conjugate is Lemma 11's
     ``g2*(beta; y, eps) = beta y + eps |beta| + I(|beta| <= C)``, so Theorem 6 gives
     ``q(eta_m) ∝ p(eta_m) exp(sum_n beta_mn eta_m^T psi^T x_n)`` with ``beta = omega - omega*``
     maximising ``sum_n (beta_mn y_mn - eps |beta_mn|) - ||mu_m||^2 / 2``, ``|beta_mn| <= C``,
     ``mu_m = sum_n beta_mn psi^T x_n`` (:func:`regbayes.core.duals.svr_dual`);

   each warm-started from the previous outer iteration's dual variables. With
   ``shared_variance = s0 > 0`` the prior is ``eta_m = v_m + u``, ``u ~ N(0, s0 I)`` shared
   by the tasks, and the tasks' duals are one problem
   (:func:`regbayes.core.multitask_duals.multitask_dual`); ``mu_m = E[eta_m]`` and the rest
   of the step are unchanged, ``KL(q(eta) || p(eta))`` is the dual's. The next
   phase's margin term in the logit of ``psi_dk`` is ``sum_{m,n} c_mn mu_mk x_nd`` with
   ``c_mn = y_mn omega_mn`` (classification; eq. 27 as printed omits ``omega``) or
   ``c_mn = omega_mn - omega*_mn`` (regression);
3. optionally (``estimate_variances``) eqs. 29 and 30 (line 13).

How much the margin can move ``psi``. The logit of ``psi_dk`` is a likelihood part, a
sum over all N rows of terms of order ``x_nd phi_nk / lambda^2`` (eq. 27), plus the margin
part ``sum_{m,n} c_mn mu_mk x_nd``. Both grow with N; their ratio is set by ``C`` alone:
rescaling the inputs by ``s`` leaves the likelihood part unchanged (``lambda^2`` scales by
``s^2``) and, for a given classifier ``f_m(x) = varsigma_m^T x``, leaves the margin part
``C sum_{violators} y_mn d f_m(x_n) / d psi_dk`` unchanged too; what ``s`` changes is the
classifiers' own regularisation (the hinge-to-prior trade-off of the SVM on ``s psi^T x``
is ``C s^2``). So ``C`` is the one weight of eq. 15 that sets the margin against the
likelihood, and the input scale decides what a given ``C`` means for the classifiers. With
many rows per input dimension the likelihood part is large (hundreds on a thousand rows),
``psi`` is driven to 0/1 in the first phase (which has no margin term: ``mu = 0``) and a
margin part of moderate ``C`` cannot move it: the joint fit is then the decoupled one.

Tempering (``anneal_iterations = T > 0``, deterministic annealing, Ueda and Nakano 1998).
Outer iteration ``t < T`` runs its phase on

    beta_t (ELBO - H[q(Z)]) + H[q(Z)] + margin term,     beta_t = beta_0^(1 - t / T),

(:func:`phase_objective`), i.e. the model's expected log joint and the entropies of
``q(W)``, ``q(nu)`` weighted by ``beta_t``, the entropy of ``q(Z)`` and the margin not; it
equals ``beta_t`` times the phase objective at temperature ``1 / beta_t`` on ``Z`` with hinge
weight ``C / beta_t``. The sticks and loadings maxima are unchanged (all their terms carry
``beta_t``); the logit of ``psi_dk`` becomes ``beta_t (likelihood + prior parts) + margin``.
Early phases keep ``psi`` soft and let the margin choose among the features the
likelihood would accept; from ``t = T`` on ``beta = 1``: the phases, the reported
objective and the stopping test are those of the RegBayes problem itself.

Tasks are given as the rows that carry a label of each task (every row, for a
label-indicator matrix; the rows of one task index otherwise). Solving each task's dual on
its own rows is the dual over all rows with ``C_n = 0`` for the other rows, without
their cost.

``info`` records the ELBO (the latent-feature model's, less ``KL(q(eta) || p(eta)) =
sum_m ||mu_m||^2 / 2``), the risk (``C`` times the summed hinge or epsilon-insensitive
losses), the RegBayes objective ``-ELBO + risk`` that the driver's ``tol`` watches, the
largest relative duality gap of the tasks' duals, the number of active features and the
sweeps of the phase. With ``joint=False`` the phases have no margin term: the
decoupled MT-IBP+SVM of footnote 17, ``Z`` inferred by the IBP factor model alone and one
SVM per task on ``psi^T x``.

Precision: the mean-field math runs in float64 (inside :func:`regbayes.precision.enable_x64`).
The expected log-likelihood is a difference of sums over all N x D entries
(``x.x - 2 x^T psi Phi + E[w^T U w]``) that cancel to a small residual when the features fit
well, and both loops stop on relative changes of 1e-3 and 1e-4 of objectives of that size;
float32's rounding of those sums is of the order of the changes watched.
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from threadpoolctl import threadpool_limits

from ..core.duals import binary_svm_dual, svr_dual
from ..core.multitask_duals import multitask_dual
from ..potentials import ibp_projection as proj
from .ilsvm import classifier_features as stack_features
from ..potentials import ibp_sticks as sticks
from ..precision import enable_x64

#: A feature (column of ``psi``) is active when its mean activation ``mean_d psi_dk``
#: exceeds this.
ACTIVE_THRESHOLD = 0.01

#: With ``estimate_variances``, eq. 30's ``lambda_n^2`` is kept above this fraction of the
#: mean squared input entry.
NOISE_FLOOR = 1e-3

LOSSES = ("hinge", "epsilon_insensitive")


class MTData(NamedTuple):
    """The step's data and constants; build with :func:`mt_data`."""

    X: np.ndarray  # (N, D) float64 inputs
    task_rows: tuple  # per task, the (N_m,) rows that carry its label
    targets: tuple  # per task, (N_m,) labels +-1 (hinge) or real targets (epsilon-insensitive)
    loss: str
    costs: tuple  # per task, (N_m,) the loss weights C_mn (C times the row's class weight)
    epsilon: float
    alpha: float
    n_inner: int
    inner_tol: float
    joint: bool
    include_inputs: bool
    intercept_scaling: float  # the constant feature s; 0 for none
    estimate_variances: bool
    noise_floor: float
    dual_tol: float
    dual_max_iter: int
    anneal_iterations: int  # outer iterations of the tempering schedule (0: none)
    anneal_start: float  # beta_0 of the schedule, in (0, 1]
    shared_variance: float = 0.0  # s0 of the shared prior component u (0: independent tasks, the paper's prior)


class MTState(NamedTuple):
    gamma: jax.Array  # (K, 2) q(nu_k) = Beta(gamma_k1, gamma_k2)
    psi: jax.Array  # (D, K) q(z_dk) = Bernoulli(psi_dk)
    phi: jax.Array  # (N, K) means of q(w_n)
    sigma2: jax.Array  # (N,) variances of q(w_n)
    noise_variance: jax.Array  # (N,) lambda_n^2
    loading_variance: jax.Array  # () sigma_0^2
    coef: np.ndarray  # (M, P) E[eta_m] over the classifier features
    duals: tuple  # per task, the (N_m,) dual variables (omega, or omega - omega*)
    iteration: int = 0  # outer iterations done (the tempering schedule's clock)


class MTInfo(NamedTuple):
    objective: float  # -elbo + risk after the iteration
    elbo: float
    risk: float
    duality_gap: float  # largest relative gap of the tasks' duals
    dual_converged: bool
    n_active: int
    inner_iterations: int
    model_weight: float  # beta of the tempering schedule in this iteration's phase (1: the exact objective)


def mt_data(X, task_rows, targets, *, loss="hinge", C=1.0, row_weights=None, epsilon=0.0, alpha=1.0, n_inner=10,
            inner_tol=1e-3, joint=True, include_inputs=False, intercept_scaling=0.0, estimate_variances=False,
            dual_tol=1e-3, dual_max_iter=1000, anneal_iterations=0, anneal_start=1.0, shared_variance=0.0) -> MTData:
    """Pack the data: ``X`` (N, D); ``task_rows[m]`` the rows with a label of task m and
    ``targets[m]`` those labels (+-1 for ``loss="hinge"``, reals for ``"epsilon_insensitive"``);
    ``row_weights[m]`` (N_m,) positive weights of those rows' losses, ``C_mn = C w_mn``
    (None: all 1); ``anneal_iterations`` and ``anneal_start`` set the tempering schedule of
    :func:`model_weight`; ``shared_variance`` is ``s0`` of the prior ``eta_m = v_m + u``,
    ``u ~ N(0, s0 I)`` (:mod:`regbayes.core.multitask_duals`; 0: the paper's independent tasks)."""
    if loss not in LOSSES:
        raise ValueError(f"unknown loss {loss!r}; choose one of {LOSSES}")
    if not 0.0 < float(anneal_start) <= 1.0:
        raise ValueError(f"anneal_start must be in (0, 1], got {anneal_start!r}")
    if int(anneal_iterations) < 0:
        raise ValueError(f"anneal_iterations must be >= 0, got {anneal_iterations!r}")
    if not float(shared_variance) >= 0.0:
        raise ValueError(f"shared_variance must be >= 0, got {shared_variance!r}")
    X = np.ascontiguousarray(X, dtype=np.float64)
    rows = tuple(np.asarray(r, dtype=np.int64) for r in task_rows)
    targets = tuple(np.asarray(t, dtype=np.float64) for t in targets)
    if len(rows) != len(targets) or any(r.shape != t.shape for r, t in zip(rows, targets)):
        raise ValueError("task_rows and targets must hold one array of the same length per task")
    if row_weights is None:
        row_weights = [np.ones(len(r)) for r in rows]
    costs = tuple(float(C) * np.asarray(w, dtype=np.float64) for w in row_weights)
    if len(costs) != len(rows) or any(c.shape != r.shape or not np.all(c > 0) for c, r in zip(costs, rows)):
        raise ValueError("row_weights must hold one array of positive weights per task, one weight per row of the task")
    floor = NOISE_FLOOR * float(np.mean(X * X)) if X.size else NOISE_FLOOR
    return MTData(X, rows, targets, loss, costs, float(epsilon), float(alpha), int(n_inner), float(inner_tol),
                  bool(joint), bool(include_inputs), float(intercept_scaling), bool(estimate_variances),
                  max(floor, 1e-12), float(dual_tol), int(dual_max_iter), int(anneal_iterations), float(anneal_start),
                  float(shared_variance))


def n_classifier_features(n_inputs: int, truncation: int, include_inputs: bool, intercept: bool) -> int:
    """P, the length of each ``E[eta_m]``: K latent features, then D inputs, then the constant."""
    return truncation + (n_inputs if include_inputs else 0) + (1 if intercept else 0)


INITS = ("paper", "svd")


def initial_features(seed: int, X, truncation: int, init: str = "paper") -> np.ndarray:
    """The initial ``psi`` (D, K).

    * ``"paper"`` (Algorithm 2, line 3): ``psi_dk = 0.5 + e`` with ``e ~ N(0, 0.001)``
      (variance 0.001, drawn from ``seed``; clipped into (0, 1)): all columns alike.
    * ``"svd"`` (section 5.1 initialises iLSVM from the SVD factors of the inputs): with
      ``v_j`` the j-th right singular vector of ``X`` (unit norm), columns ``2j`` and ``2j + 1``
      are ``sigmoid(+-3 sqrt(D) v_jd)`` plus the same small noise: the inputs that load
      positively, and negatively, on the j-th principal direction (a binary ``Z`` with
      loadings ``w`` of either sign needs one column for each part).
    """
    if init not in INITS:
        raise ValueError(f"unknown init {init!r}; choose one of {INITS}")
    X = np.asarray(X, dtype=np.float64)
    D, K = X.shape[1], int(truncation)
    rng = np.random.default_rng(int(seed))
    noise = np.sqrt(1e-3) * rng.standard_normal((D, K))
    if init == "paper":
        return np.clip(0.5 + noise, 1e-3, 1.0 - 1e-3)
    directions = np.linalg.svd(X, full_matrices=False)[2].T * np.sqrt(D)  # (D, min(N, D)), entries of order one
    columns = np.arange(K) // 2
    sign = np.where(np.arange(K) % 2 == 0, 1.0, -1.0)
    signed = np.where(columns < directions.shape[1], directions[:, np.minimum(columns, directions.shape[1] - 1)], 0.0) * sign
    return np.clip(1.0 / (1.0 + np.exp(-3.0 * signed)) + noise, 1e-3, 1.0 - 1e-3)


def mt_init(seed: int, data: MTData, truncation: int, noise_variance, loading_variance, init: str = "paper") -> MTState:
    """Algorithm 2, line 3: ``gamma = (alpha, 1)``, ``psi`` from :func:`initial_features`,
    ``Phi = 0``, ``sigma_n^2 = sigma_0^2``; ``noise_variance`` is ``lambda_n^2``, a scalar or (N,).

    ``init="paper"`` then starts from ``mu = 0`` and zero dual variables, as Algorithm 2
    does: its first phase has no margin term. ``init="svd"`` (with ``joint=True``) solves
    the duals on the initial features (a dual step before the first phase, seeded by
    ``seed``), so that the first phase already has the margin term; from the paper's
    initial ``psi``, whose columns are all alike, such a step gives every column the same
    margin term, which is why it is not taken there."""
    N, D = data.X.shape
    K = int(truncation)
    psi = initial_features(seed, data.X, K, init)
    noise = np.broadcast_to(np.asarray(noise_variance, dtype=np.float64), (N,)).copy()
    P = n_classifier_features(D, K, data.include_inputs, data.intercept_scaling > 0)
    coef, duals = np.zeros((len(data.task_rows), P)), tuple(np.zeros(len(r)) for r in data.task_rows)
    if data.joint and init == "svd":
        features = classifier_features(data.X, psi, data.include_inputs, data.intercept_scaling)
        coef, duals = solve_duals(features, data, duals, int(seed))[:2]
    with enable_x64():
        return MTState(
            gamma=jnp.asarray(sticks.initial_sticks(K, data.alpha, jnp.float64)),
            psi=jnp.asarray(psi),
            phi=jnp.zeros((N, K)),
            sigma2=jnp.full((N,), float(loading_variance), dtype=jnp.float64),  # not weakly typed: the phase compiles once
            noise_variance=jnp.asarray(noise),
            loading_variance=jnp.asarray(float(loading_variance), dtype=jnp.float64),
            coef=coef,
            duals=duals,
        )


def model_weight(iteration: int, data: MTData) -> float:
    """``beta_t`` of the tempering schedule: ``beta_0^(1 - t / T)`` for the first ``T =
    anneal_iterations`` outer iterations (geometric from ``beta_0 = anneal_start`` towards 1),
    then exactly 1 (the RegBayes objective itself; :func:`phase_objective`)."""
    T = data.anneal_iterations
    if iteration >= T:
        return 1.0
    return float(data.anneal_start ** (1.0 - iteration / T))


# ---------------------------------------------------------------- the mean-field phase (JAX)
def phase_objective(X, psi, gamma, phi, sigma2, noise_variance, loading_variance, alpha, margin, weight=1.0):
    """The phase's objective::

        beta (ELBO - H[q(Z)]) + H[q(Z)] + sum_dk psi_dk margin_dk,

    the latent-feature ELBO and the linear margin term of the Lagrangian with ``omega`` and
    ``mu`` fixed (``margin = X^T V``). ``beta = weight`` tempers the model's part (the
    expected log joint of ``X, Z, W, nu`` and the entropies of ``q(W)``, ``q(nu)``) while the
    entropy of ``q(Z)`` and the margin keep their weight: deterministic annealing (Ueda and
    Nakano 1998) at temperature ``1 / beta`` on the model with hinge weight ``C / beta``, the
    same as ``beta (ELBO + (1/beta - 1) H[q(Z)] + margin / beta)``. At ``beta = 1`` it is the
    phase's objective of Algorithm 2, i.e. of the RegBayes problem (15)."""
    elbo = proj.latent_elbo(X, psi, gamma, proj.Loadings(phi, sigma2), alpha, noise_variance, loading_variance)
    entropy = sticks.bernoulli_entropy(psi)
    return weight * (elbo - entropy) + entropy + jnp.sum(psi * margin)


def mean_field_sweep(X, psi, gamma, noise_variance, loading_variance, alpha, margin, weight=1.0):
    """One sweep of lines 6-8 of Algorithm 2: sticks (eq. 26, with the tight ``q`` of eq. 24),
    loadings (eq. 25), then the features column by column (eq. 27, with ``margin`` added to
    the logit). Returns ``(psi, gamma, phi, sigma2)``; each block is an exact maximum of
    :func:`phase_objective`: the sticks' and loadings' terms are all multiplied by ``weight``,
    which leaves their maxima where they are, and the logit of ``psi_dk`` is
    ``weight (likelihood + prior parts) + margin_dk``."""
    D = X.shape[1]
    gamma = sticks.update_sticks(jnp.sum(psi, axis=0), D, alpha, sticks.stick_bound(gamma).q)
    loadings = proj.update_loadings(X, psi, noise_variance, loading_variance)
    stats = proj.feature_stats(X, loadings, noise_variance)
    stats = proj.FeatureStats(weight * stats.A, weight * stats.B)
    extra = weight * sticks.prior_logit(gamma, sticks.stick_bound(gamma))[None, :] + margin
    psi = proj.update_features(psi, stats, extra)
    return psi, gamma, loadings.phi, loadings.sigma2


@jax.jit
def mean_field_phase(X, V, psi, gamma, phi, sigma2, noise_variance, loading_variance, alpha, n_inner, inner_tol,
                     weight=1.0):
    """Sweeps of :func:`mean_field_sweep` until the relative change of :func:`phase_objective`
    between two sweeps is at most ``inner_tol`` (so at least two sweeps) or ``n_inner`` sweeps
    have run (both traced: one program per shape). ``V`` (N, K) gives the margin term
    ``X^T V``; ``weight`` is the tempering ``beta`` (traced). Returns ``(psi, gamma, phi,
    sigma2, sweeps, objective)``; ``objective`` is ``-inf`` when no sweep ran."""
    margin = X.T @ V
    objective = partial(phase_objective, X, noise_variance=noise_variance, loading_variance=loading_variance,
                        alpha=alpha, margin=margin, weight=weight)
    start = jnp.asarray(jnp.inf, dtype=X.dtype)  # the first change is measured after the second sweep

    def cond(carry):
        i, previous, current = carry[:3]
        moving = jnp.abs(current - previous) > inner_tol * jnp.abs(previous)
        return (i < n_inner) & ((i < 2) | moving)

    def body(carry):
        i, _, current, psi, gamma, phi, sigma2 = carry
        psi, gamma, phi, sigma2 = mean_field_sweep(X, psi, gamma, noise_variance, loading_variance, alpha, margin, weight)
        return i + 1, current, objective(psi, gamma, phi, sigma2), psi, gamma, phi, sigma2

    i, _, value, psi, gamma, phi, sigma2 = jax.lax.while_loop(
        cond, body, (jnp.asarray(0), start, -start, psi, gamma, phi, sigma2))
    return psi, gamma, phi, sigma2, i, value


@jax.jit
def _finish(X, psi, gamma, phi, sigma2, noise_variance, loading_variance, alpha, noise_floor):
    """Line 13 (eqs. 29, 30), then the latent-feature ELBO."""
    loadings = proj.Loadings(phi, sigma2)
    noise_variance = proj.update_noise_variance(X, psi, loadings, noise_floor)
    loading_variance = proj.update_loading_variance(loadings)
    elbo = proj.latent_elbo(X, psi, gamma, loadings, alpha, noise_variance, loading_variance)
    return noise_variance, loading_variance, elbo


# ---------------------------------------------------------------- the dual step (host)
def classifier_features(X, psi, include_inputs: bool, intercept_scaling: float) -> np.ndarray:
    """``[X psi, X (with include_inputs), s (with an intercept)]``: row n is the feature
    vector of ``x_n`` for every task's classifier; ``f_m(x_n) = features[n] @ coef[m]``."""
    X = np.asarray(X, dtype=np.float64)
    return stack_features(X @ np.asarray(psi, dtype=np.float64), X if include_inputs else None, intercept_scaling)


def margin_directions(state: MTState, data: MTData) -> np.ndarray:
    """``V`` (N, K) with ``V_n = sum_m c_mn mu_m[:K]``: the margin term of eq. 27 is
    ``X^T V`` (zero with ``joint=False``)."""
    N = data.X.shape[0]
    K = state.psi.shape[1]
    V = np.zeros((N, K))
    if not data.joint:
        return V
    for m, (rows, target) in enumerate(zip(data.task_rows, data.targets)):
        weight = state.duals[m] * target if data.loss == "hinge" else state.duals[m]
        np.add.at(V, rows, weight[:, None] * state.coef[m, :K][None, :])
    return V


def solve_duals(features, data: MTData, previous: tuple, seed: int):
    """The tasks' duals (eq. 28 or Lemma 11's), warm-started from ``previous``. Returns
    ``(coef (M, P), duals, summed primal objectives, largest relative gap, all converged,
    KL(q(eta) || p(eta)))``. With ``shared_variance = 0`` each task's dual is solved on its
    own; otherwise the tasks are coupled by the shared component and solved as one
    (:func:`regbayes.core.multitask_duals.multitask_dual`).

    BLAS runs on one thread here: the solvers' linear algebra is on matrices of P columns
    (tens), where a multi-threaded BLAS only adds synchronisation, and on a machine whose
    cores are busy its threads wait for one another at every call."""
    with threadpool_limits(limits=1, user_api="blas"):
        if data.shared_variance > 0:
            return _solve_shared(features, data, previous, seed)
        return _solve_duals(features, data, previous, seed)


def _solve_duals(features, data: MTData, previous: tuple, seed: int):
    coef = np.zeros((len(data.task_rows), features.shape[1]))
    duals, primal, gap, converged = [], 0.0, 0.0, True
    for m, (rows, target) in enumerate(zip(data.task_rows, data.targets)):
        F = features[rows]
        if data.loss == "hinge":
            sol = binary_svm_dual(F, target, data.costs[m], tol=data.dual_tol, max_iter=data.dual_max_iter,
                                  initial_dual=previous[m], seed=seed)
        else:
            sol = svr_dual(F, target, data.costs[m], data.epsilon, tol=data.dual_tol, max_iter=data.dual_max_iter,
                           initial_dual=previous[m], seed=seed)
        coef[m] = sol.coef
        duals.append(sol.dual)
        primal += sol.primal_objective
        scale = max(abs(sol.primal_objective), abs(sol.dual_objective), 1e-300)
        gap = max(gap, sol.gap / scale)
        converged &= sol.converged
    return coef, tuple(duals), primal, gap, converged, 0.5 * float(np.sum(coef * coef))


def _solve_shared(features, data: MTData, previous: tuple, seed: int):
    sizes = [len(r) for r in data.task_rows]
    sol = multitask_dual(features, np.concatenate(data.task_rows), np.repeat(np.arange(len(sizes)), sizes),
                         np.concatenate(data.targets), np.concatenate(data.costs), n_tasks=len(sizes), loss=data.loss,
                         epsilon=data.epsilon, shared_variance=data.shared_variance, tol=data.dual_tol,
                         max_iter=data.dual_max_iter, initial_dual=np.concatenate(previous), seed=seed)
    duals = tuple(np.split(sol.dual, np.cumsum(sizes)[:-1]))
    scale = max(abs(sol.primal_objective), abs(sol.dual_objective), 1e-300)
    return sol.coef, duals, sol.primal_objective, sol.gap / scale, sol.converged, sol.kl


def n_active(psi) -> int:
    """Columns of ``psi`` whose mean activation exceeds :data:`ACTIVE_THRESHOLD`."""
    return int(np.sum(np.mean(np.asarray(psi), axis=0) > ACTIVE_THRESHOLD))


def mt_step(seed: int, state: MTState, data: MTData):
    """One outer iteration of Algorithm 2 (module docstring); ``seed`` orders the dual
    solvers' coordinate passes. The phase is tempered by :func:`model_weight` of the
    iteration count; ``info`` reports the exact (untempered) ELBO, risk and objective.
    The inputs are not modified."""
    V = margin_directions(state, data)
    weight = model_weight(state.iteration, data)
    with enable_x64():
        X = jnp.asarray(data.X)
        psi, gamma, phi, sigma2, sweeps, value = mean_field_phase(
            X, jnp.asarray(V), state.psi, state.gamma, state.phi, state.sigma2, state.noise_variance,
            state.loading_variance, data.alpha, data.n_inner, data.inner_tol, weight)
        features = classifier_features(data.X, psi, data.include_inputs, data.intercept_scaling)
        coef, duals, primal, gap, converged, kl_eta = solve_duals(features, data, state.duals, seed)
        if data.estimate_variances:
            noise, loading, latent = _finish(X, psi, gamma, phi, sigma2, state.noise_variance, state.loading_variance,
                                             data.alpha, data.noise_floor)
        else:  # the phase's objective less its margin term, untempered
            noise, loading = state.noise_variance, state.loading_variance
            entropy = float(sticks.bernoulli_entropy(psi))
            latent = (float(value) - float(np.sum(np.asarray(psi) * (data.X.T @ V))) - entropy) / weight + entropy
    elbo = float(latent) - kl_eta
    risk = primal - kl_eta
    new = MTState(gamma, psi, phi, sigma2, noise, loading, coef, duals, state.iteration + 1)
    return new, MTInfo(-elbo + risk, elbo, risk, gap, bool(converged), n_active(psi), int(sweeps), weight)


def mt_compile(state: MTState, data: MTData) -> None:
    """Compile the phase and the closing step for the data's shapes (no sweep is run)."""
    with enable_x64():
        X = jnp.asarray(data.X)
        mean_field_phase(X, jnp.zeros(state.phi.shape), state.psi, state.gamma, state.phi, state.sigma2,
                         state.noise_variance, state.loading_variance, data.alpha, 0, data.inner_tol, 1.0)
        if data.estimate_variances:
            _finish(X, state.psi, state.gamma, state.phi, state.sigma2, state.noise_variance, state.loading_variance,
                    data.alpha, data.noise_floor)


def decision_values(X, psi, coef, include_inputs: bool, intercept_scaling: float) -> np.ndarray:
    """``f_m(x_n)`` for every row and task, (N, M)."""
    return classifier_features(X, psi, include_inputs, intercept_scaling) @ np.asarray(coef).T
