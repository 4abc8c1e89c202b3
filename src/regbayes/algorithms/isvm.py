"""The Gibbs infinite SVM on the algorithm protocol: a Dirichlet-process mixture of
Bayesian linear SVMs (paper 001, "Gibbs Infinite SVMs", eqs. 11-18; paper 000, section
4.2 and Algorithm 2).

Posterior (eq. 11, with ``C`` the ``c`` of paper 000: ``psi = exp(-C (l - y f)_+)``):

    q(z, eta) ∝ CRP(z) prod_k [ N(eta_k; 0, nu^2 I) ∫ prod_{i: z_i = k} N(x_i; mu, Sigma) dNIW ]
                        prod_i psi(y_i | eta_{z_i}, x~_i),

one-vs-rest over ``L`` problems (``eta_k`` of shape (L, D), ``L = 1`` when binary), or
(``multi_class="crammer_singer"``) paper 000's eqs. 24-26: ``eta_k`` of shape (M, D), one
row per class, and the multi-class hinge

    psi(y_i | eta_k, x~_i) = exp(-C max_m (l Delta(y_i, m) + f_m - f_{y_i})),   f_m = eta_km^T x~_i,

``Delta(y, m) = 1 - [m = y]``. One iteration, ``step(seed, state, data) -> (state, info)``
built by :func:`infinite_svm`, is

* z | eta, with (mu, Sigma) and the augmentation variables integrated out (the partially
  collapsed step, eqs. 15-16): the numba sweep
  :func:`regbayes.algorithms.crp_kernels.crp_sweep`, with Neal's (2000) Algorithm 8 for
  the new-component integral of eq. 16 (exact for every ``n_auxiliary``; it also
  supplies the new component's classifier);
* eta | z by data augmentation (``"gibbs"``, eqs. 17-18,
  :mod:`regbayes.algorithms.isvm_gibbs`; one-vs-rest only: the papers give no
  augmentation of the max over classes) or by a stochastic subgradient sampler within
  Gibbs (paper 000 Algorithm 2, :mod:`regbayes.algorithms.isvm_sgmcmc`): SSGNHT
  (``"ssgnht"``, eq. 14) or SSGLD (``"ssgld"``, eq. 13).

State: components live in ``capacity`` slots (counts, NIW posterior means and Cholesky
factors of the scale matrices, classifiers; free slots hold the prior and a zero
classifier). When a datum may open a component and every slot is taken the z-sweep
doubles the buffers; :func:`grow` is that event for the whole state (the kernel states
included), and the step applies it whenever the sweep grew the buffers.
"""
from __future__ import annotations

import time
from typing import Callable, NamedTuple

import jax.numpy as jnp
import numpy as np

from ..potentials import niw
from ..potentials.component_svm import block_whitening, component_whitening, group_members
from ..rng import key_from_seed
from ..samplers import defaults
from . import crp_kernels
from .crp_kernels import crp_sweep
from .isvm_gibbs import MIN_BLOCK, compile_ahead, gibbs_eta_step
from .isvm_sgmcmc import component_steps, pad_states, run_eta_step

SAMPLERS = ("gibbs", "ssgnht", "ssgld")
MULTI_CLASS = ("ovr", "crammer_singer")
INITIAL_CAPACITY = 16  # component slots before the first doubling


class ISVMData(NamedTuple):
    """What every iteration reads: data, prior and hyper-parameters.

    ``X`` (n, d) the features the NIW likelihood sees; ``design`` (n, D) the classifier
    inputs ``x~ = (x - x_offset, intercept_scaling)``; ``Y`` (n, L) +1/-1 one-vs-rest
    labels, or (n, 1) class codes for ``multi_class="crammer_singer"`` (NumPy float64,
    for the numba sweep and the Gibbs blocks). ``design_dev`` and ``Y_dev`` (L, n) are
    device copies and ``hyper`` the arrays ``(C, margin, prior_scale)``, all in the eta
    step's dtype (see :func:`make_data`). ``n_rows`` is the number of rows of one
    classifier ``eta_k``: ``L``, or the number of classes M.
    """

    X: np.ndarray
    design: np.ndarray
    Y: np.ndarray
    prior: niw.NIW
    alpha: float
    C: float
    margin: float
    prior_scale: float
    x_offset: np.ndarray
    intercept_scaling: float
    design_dev: jnp.ndarray
    Y_dev: jnp.ndarray
    hyper: tuple
    multi_class: str = "ovr"
    n_rows: int = 1


def make_data(X, design, Y, prior, *, alpha, C, margin, prior_scale, x_offset, intercept_scaling, dtype,
              multi_class="ovr", n_classes=None) -> ISVMData:
    """:class:`ISVMData` with device arrays of ``dtype`` (float64 needs JAX's x64 enabled,
    as for ``sampler="gibbs"``). ``multi_class="crammer_singer"`` takes ``Y`` as the
    class codes (n,) in ``0 .. n_classes - 1``."""
    if multi_class not in MULTI_CLASS:
        raise ValueError(f"unknown multi_class {multi_class!r}; choose one of {MULTI_CLASS}")
    X = np.ascontiguousarray(X, dtype=np.float64)
    design = np.ascontiguousarray(design, dtype=np.float64)
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    if multi_class == "crammer_singer":
        if n_classes is None or int(n_classes) < 2:
            raise ValueError(f"multi_class='crammer_singer' needs n_classes >= 2, got {n_classes}")
        Y = Y.reshape(-1, 1)
        n_rows = int(n_classes)
    else:
        n_rows = Y.shape[1]
    return ISVMData(
        X, design, Y, prior, float(alpha), float(C), float(margin), float(prior_scale),
        np.asarray(x_offset, np.float64), float(intercept_scaling),
        jnp.asarray(design, dtype), jnp.asarray(Y.T, dtype),
        tuple(jnp.asarray(v, dtype) for v in (C, margin, prior_scale)),
        multi_class, n_rows,
    )


class ISVMState(NamedTuple):
    """The chain: assignments ``z`` (n,) (-1: not seated yet) and ``capacity`` slots of
    ``counts`` (K,), NIW posterior ``means`` (K, d) and scale ``chols`` (K, d, d),
    classifiers ``eta`` (K, L, D) (float64 NumPy); ``sgmcmc`` the SSGNHT or SSGLD states
    with leading axes (slot, problem) (None for ``"gibbs"`` and before the first eta
    step); ``compiled`` the shape keys (block sizes, capacities) of the eta-step programs
    this run has compiled, whose first use a step times as compilation."""

    z: np.ndarray
    counts: np.ndarray
    means: np.ndarray
    chols: np.ndarray
    eta: np.ndarray
    sgmcmc: object
    capacity: int
    compiled: frozenset = frozenset()


class ISVMInfo(NamedTuple):
    """Per iteration: non-empty components, seconds of the z-sweep and of the eta step
    (compilation excluded), seconds compiling programs for new shapes."""

    n_components: int
    z_seconds: float
    eta_seconds: float
    compile_seconds: float


class ISVMSGMCMCInfo(NamedTuple):
    """:class:`ISVMInfo` and the SSGNHT or SSGLD base ``step_size`` (component ``k`` uses
    ``h_k``, at most this)."""

    n_components: int
    z_seconds: float
    eta_seconds: float
    compile_seconds: float
    step_size: float


class ISVMDraw(NamedTuple):
    """A kept draw: the slots up to the last non-empty one."""

    counts: np.ndarray
    means: np.ndarray
    chols: np.ndarray
    eta: np.ndarray


def _capacity_for(n_components: int) -> int:
    return max(INITIAL_CAPACITY, 1 << (max(int(n_components), 1) - 1).bit_length())


def init(data: ISVMData, z, capacity: int | None = None) -> ISVMState:
    """The starting state from assignments ``z`` (all -1: the first sweep seats the data
    one by one, as the CRP generates them). Classifiers start at 0 (``data.n_rows`` rows
    each) and kernel states at None: the first eta step starts every slot from the
    kernel's ``init`` (eq. 14's ``r_0 ~ N(0, I)``). ``capacity`` defaults to the smallest power of two >= 16 that
    holds the components of ``z``."""
    z = np.asarray(z, np.int64)
    n_used = int(z.max()) + 1 if z.size and z.max() >= 0 else 0
    K = _capacity_for(n_used) if capacity is None else int(capacity)
    if K < n_used:
        raise ValueError(f"capacity {K} is smaller than the {n_used} components of z")
    prior = data.prior
    if z.size and z[0] >= 0:
        counts, means, chols = niw.component_posteriors(prior, data.X, z, K)
    else:
        counts = np.zeros(K, np.int64)
        means = np.broadcast_to(prior.mean, (K, prior.mean.shape[0])).copy()
        chols = np.broadcast_to(prior.chol, (K, *prior.chol.shape)).copy()
    eta = np.zeros((K, data.n_rows, data.design.shape[1]))
    return ISVMState(z, counts, means, chols, eta, None, K)


def grow(state: ISVMState, capacity: int, prior: niw.NIW) -> ISVMState:
    """The state with ``capacity`` slots: the first ``state.capacity`` unchanged, the new
    ones free (prior statistics, zero classifier, kernel placeholder at rest)."""
    if capacity < state.capacity:
        raise ValueError(f"cannot shrink the capacity from {state.capacity} to {capacity}")
    fresh = np.zeros(state.capacity, bool)
    counts, means, chols, eta, _ = crp_kernels.grow(capacity, state.counts, state.means, state.chols, state.eta,
                                                   fresh, prior.mean, prior.chol)
    sgmcmc = None if state.sgmcmc is None else pad_states(state.sgmcmc, capacity)
    return state._replace(counts=counts, means=means, chols=chols, eta=eta, sgmcmc=sgmcmc, capacity=int(capacity))


def draw(state: ISVMState) -> ISVMDraw:
    """The kept part of ``state``: slots up to the last non-empty one (copies)."""
    used = int(np.flatnonzero(state.counts).max()) + 1
    return ISVMDraw(state.counts[:used].copy(), state.means[:used].copy(), state.chols[:used].copy(),
                    state.eta[:used].copy())


def z_step(seed: int, state: ISVMState, data: ISVMData, n_auxiliary: int):
    """z | eta (eqs. 15-16) by one numba sweep from fresh statistics. Returns the state
    after the sweep (grown where the sweep doubled the buffers) and ``fresh`` (K,), the
    slots that received a new classifier."""
    prior = data.prior
    counts, means, chols = state.counts, state.means, state.chols
    if state.z[0] >= 0:  # fresh statistics: no rounding carried over from the last sweep
        counts, means, chols = niw.component_posteriors(prior, data.X, state.z, state.capacity)
    z, counts, means, chols, eta, fresh = crp_sweep(
        data.X, data.design, data.Y, state.z, counts, means, chols, state.eta,
        alpha=data.alpha, C=data.C, margin=data.margin, prior_scale=data.prior_scale,
        prior_mean=prior.mean, prior_kappa=prior.kappa, prior_dof=prior.dof, prior_chol=prior.chol,
        n_aux=n_auxiliary, seed=seed, crammer_singer=data.multi_class == "crammer_singer",
    )
    if counts.shape[0] != state.capacity:  # the sweep doubled the buffers
        state = grow(state, counts.shape[0], prior)
    return state._replace(z=z, counts=counts, means=means, chols=chols, eta=eta), fresh


def check_sampler(sampler: str, multi_class: str = "ovr") -> None:
    """ValueError for an unknown ``sampler`` or ``multi_class``, or for ``"gibbs"`` with
    the multi-class hinge (no data augmentation of the max over classes in the papers)."""
    if sampler not in SAMPLERS:
        raise ValueError(f"unknown sampler {sampler!r}; choose one of {SAMPLERS}")
    if multi_class not in MULTI_CLASS:
        raise ValueError(f"unknown multi_class {multi_class!r}; choose one of {MULTI_CLASS}")
    if sampler == "gibbs" and multi_class == "crammer_singer":
        raise ValueError(
            "sampler='gibbs' samples eta | z by data augmentation, which the papers give for one-vs-rest "
            "binary hinges only: multi_class='crammer_singer' needs sampler='ssgnht' or sampler='ssgld' "
            "(or use multi_class='ovr')"
        )


def infinite_svm(sampler: str = "gibbs", *, n_auxiliary: int = 2, batch_size: int = 100, n_inner: int = 20,
                 step_size: float | None = None,
                 noise_step_factor: float = defaults.COMPONENT_NOISE_STEP_FACTOR) -> Callable:
    """``step(seed, state, data) -> (state, info)``: one iteration, z | eta then eta | z.

    ``sampler`` picks the eta | z step; ``batch_size``, ``n_inner`` (kernel steps per
    iteration), ``step_size`` (the base step; default the kernel's ``relative_step`` in
    :data:`regbayes.samplers.defaults.SAMPLER_DEFAULTS`) and ``noise_step_factor``
    configure ``"ssgnht"`` and ``"ssgld"`` (:mod:`regbayes.algorithms.isvm_sgmcmc`).
    ``seed`` seeds the numba sweep and, as a JAX key (:func:`regbayes.rng.key_from_seed`),
    the eta step. The hinge (``data.multi_class``) comes with the data; ``"gibbs"`` with
    the multi-class hinge raises ValueError (:func:`check_sampler`).
    """
    check_sampler(sampler)
    if step_size is None and sampler != "gibbs":
        step_size = defaults.SAMPLER_DEFAULTS[sampler].relative_step

    def step(seed, state: ISVMState, data: ISVMData):
        check_sampler(sampler, data.multi_class)
        key = key_from_seed(seed)
        ahead = None
        if sampler == "gibbs" and MIN_BLOCK not in state.compiled:  # overlaps the z-sweep's first compilation
            ahead = compile_ahead(key, state.eta, data.hyper)
        start = time.perf_counter()
        state, fresh = z_step(seed, state, data, n_auxiliary)
        mid = time.perf_counter()
        members, starts = group_members(state.z, state.counts)
        if sampler == "gibbs":
            compiled, waited = state.compiled, 0.0
            if ahead is not None:  # the wait for the program compiled ahead counts as compilation
                ahead.result()
                compiled, waited = compiled | {MIN_BLOCK}, time.perf_counter() - mid
            eta, compiled, compile_seconds = gibbs_eta_step(key, state.eta, state.counts, members, starts,
                                                            data.design, data.Y, data.hyper, compiled)
            compile_seconds += waited
            state = state._replace(eta=eta, compiled=compiled)
        else:
            joint = data.multi_class == "crammer_singer"
            # the multi-class hinge touches about 2 of the M rows per datum (block_whitening)
            C_rows = 2.0 * data.C / data.n_rows if joint else data.C
            transforms = component_whitening(state.counts, state.means, state.chols, data.prior.dof, data.x_offset,
                                             data.intercept_scaling, C_rows, data.prior_scale)
            if joint:  # the kernel runs on the M - 1 sum-zero rows (isvm_sgmcmc.eta_step)
                transforms = block_whitening(transforms, data.n_rows - 1)
            steps = component_steps(state.counts, step_size, batch_size, noise_step_factor)
            states, eta, compiled, compile_seconds = run_eta_step(
                sampler, key, state.sgmcmc, state.eta, fresh, state.counts, members, starts, steps, transforms,
                data.design_dev, data.Y_dev, data.hyper, n_inner, batch_size, joint, state.compiled)
            state = state._replace(eta=eta, sgmcmc=states, compiled=compiled)
        eta_seconds = time.perf_counter() - mid - compile_seconds
        n_components = int(np.count_nonzero(state.counts))
        if sampler == "gibbs":
            return state, ISVMInfo(n_components, mid - start, eta_seconds, compile_seconds)
        return state, ISVMSGMCMCInfo(n_components, mid - start, eta_seconds, compile_seconds, float(step_size))

    return step


def check(state: ISVMState, info) -> str | None:
    """Divergence test for the driver: every classifier must be finite."""
    if np.isfinite(state.eta).all():
        return None
    advice = "lower step_size" if hasattr(info, "step_size") else "check the scale of X"
    return f"a component's classifier eta is not finite; {advice}"
