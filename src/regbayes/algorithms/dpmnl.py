"""dpMNL on the algorithm protocol: a Dirichlet-process mixture of multinomial-logit experts
(Shahbaba & Neal 2009, "Nonlinear models using Dirichlet process mixtures"; the dpMNL
baseline of paper 001, Tables 1, 3 and 4).

Posterior (paper 001's eq. 11 with the hinge pseudo-likelihood replaced by the softmax):

    q(z, beta) ∝ CRP(z) prod_k [ N(beta_k; 0, nu^2 I) ∫ prod_{i: z_i = k} N(x_i; mu, Sigma) dNIW ]
                        prod_i softmax_{y_i}(beta_{z_i} x~_i),

``beta_k`` of shape (M, D), one row per class. One iteration, ``step(seed, state, data) ->
(state, info)`` built by :func:`dp_mnl`, is

* beta | z: ``n_inner`` transitions of subgradient HMC with the Metropolis correction
  (paper 000, eq. 9; :func:`regbayes.samplers.hmc.shmc`, exact for this smooth potential)
  for every non-empty component at once, on the potential of
  :mod:`regbayes.potentials.multinomial_logit`, in the whitened coordinates of
  :func:`~regbayes.potentials.multinomial_logit.contrast_whitening` (a function of the
  component's rows only, never of ``beta``, so each transition leaves ``beta_k | z``
  invariant). Each transition draws its step size uniformly from ``step_size * [1 -
  jitter, 1 + jitter]`` (Neal 2011, "MCMC using Hamiltonian dynamics": a fixed trajectory
  length can be periodic in some direction of the posterior);
* z | beta, with (mu, Sigma) integrated out: the numba sweep of the Gibbs infinite SVM
  (:func:`regbayes.algorithms.crp_kernels.crp_sweep` with ``likelihood="logit"``; paper
  001's eqs. 15-16 with ``log psi = log softmax``, Neal's (2000) Algorithm 8 for a new
  component, whose expert is one of the auxiliary prior draws).

The experts come first, so that the first sweep weighs the starting components by experts
fitted to them rather than by the uniform ``softmax`` of ``beta = 0`` (before the first
sweep of a sequential start there is no component and no beta step).

The state, its growth and its kept draws are those of the Gibbs infinite SVM
(:class:`regbayes.algorithms.isvm.ISVMState`, :func:`~regbayes.algorithms.isvm.init`,
:func:`~regbayes.algorithms.isvm.grow`, :func:`~regbayes.algorithms.isvm.draw`), with
``eta`` holding the experts ``beta`` (K, M, D).
"""
from __future__ import annotations

import functools
import time
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..potentials import multinomial_logit as mnl
from ..potentials import niw
from ..potentials.component_svm import group_members
from ..rng import key_from_seed
from ..samplers.hmc import shmc
from . import isvm
from .crp_kernels import crp_sweep
from .isvm_gibbs import block_size

init, grow, draw = isvm.init, isvm.grow, isvm.draw

#: experts per call of the beta step's compiled program (the initial capacity): more
#: components take more calls of the same program, not a new one
SLOT_CHUNK = isvm.INITIAL_CAPACITY


class DPMNLData(NamedTuple):
    """What every iteration reads. ``X`` (n, d) the features the NIW likelihood sees;
    ``design`` (n, D) the experts' inputs x~; ``Y`` (n, M) +1 at the row's class and -1
    elsewhere (the numba sweep's coding); ``design_dev`` and ``codes_dev`` (n,) the inputs
    and class indices on the device, in the beta step's dtype (float64 needs JAX's x64
    enabled); ``n_rows`` the rows of one expert, M (the shape :func:`init` gives ``eta``)."""

    X: np.ndarray
    design: np.ndarray
    Y: np.ndarray
    prior: niw.NIW
    alpha: float
    prior_scale: float
    design_dev: jnp.ndarray
    codes_dev: jnp.ndarray
    n_rows: int


class DPMNLInfo(NamedTuple):
    """Per iteration: non-empty components, seconds of the z-sweep and of the beta step
    (compilation excluded), seconds compiling programs for new shapes, the mean Metropolis
    acceptance probability over the non-empty components and ``n_inner`` transitions (1
    when there was no component to move), and the base ``step_size``."""

    n_components: int
    z_seconds: float
    beta_seconds: float
    compile_seconds: float
    acceptance: float
    step_size: float


def make_data(X, design, codes, n_classes, prior, *, alpha, prior_scale, dtype=np.float32) -> DPMNLData:
    """:class:`DPMNLData` from features, inputs and integer class codes ``0..n_classes-1``."""
    codes = np.asarray(codes, np.int64)
    Y = np.where(codes[:, None] == np.arange(n_classes), 1.0, -1.0)
    design = np.ascontiguousarray(design, dtype=np.float64)
    return DPMNLData(np.ascontiguousarray(X, dtype=np.float64), design, np.ascontiguousarray(Y), prior, float(alpha),
                     float(prior_scale), jnp.asarray(design, dtype), jnp.asarray(codes, jnp.int32), int(n_classes))


def z_step(seed: int, state: isvm.ISVMState, data: DPMNLData, n_auxiliary: int) -> isvm.ISVMState:
    """z | beta by one numba sweep from fresh statistics (the iSVM's sweep with the softmax
    term); a new component's expert is its auxiliary prior draw."""
    prior = data.prior
    counts, means, chols = state.counts, state.means, state.chols
    if state.z[0] >= 0:
        counts, means, chols = niw.component_posteriors(prior, data.X, state.z, state.capacity)
    swept = crp_sweep(data.X, data.design, data.Y, state.z, counts, means, chols, state.eta, alpha=data.alpha, C=0.0,
                      margin=0.0, prior_scale=data.prior_scale, prior_mean=prior.mean, prior_kappa=prior.kappa,
                      prior_dof=prior.dof, prior_chol=prior.chol, n_aux=n_auxiliary, seed=seed, likelihood="logit")
    if swept[1].shape[0] != state.capacity:  # the sweep doubled the buffers
        state = grow(state, swept[1].shape[0], prior)
    return state._replace(**dict(zip(("z", "counts", "means", "chols", "eta"), swept[:5])))


@functools.partial(jax.jit, static_argnames=("n_leapfrog",))
def hmc_expert_step(key, call, beta, design, codes, rows, sizes, factors, prior_scale, step_size, jitter, *, n_leapfrog):
    """One HMC transition (paper 000, eq. 9, with the Metropolis correction) of each of
    ``S`` experts, on its potential ``U_k`` (:mod:`regbayes.potentials.multinomial_logit`),
    with the randomness of ``fold_in(key, call)``.

    ``beta`` (S, M, D); ``design`` (n, D) and ``codes`` (n,) all rows; ``rows`` (S, B) each
    expert's row indices, its first ``sizes`` (S,) real and the others padding;
    ``factors`` (S, D, D) the experts'
    :func:`~regbayes.potentials.multinomial_logit.contrast_factors`; the step size is
    drawn uniformly from ``step_size * [1 - jitter, 1 + jitter]``. An expert without rows
    samples the prior. Returns the new ``beta`` and the acceptance probabilities (S,).
    """
    kernel = shmc(mnl.component_potential(), n_leapfrog, True)
    n_classes = beta.shape[1]
    valid = jnp.arange(rows.shape[1]) < sizes[:, None]

    def one(key, beta_k, rows_k, valid_k, factor_k):
        data = mnl.MNLRows(design[rows_k] * valid_k[:, None].astype(design.dtype), codes[rows_k], valid_k, prior_scale)
        key_init, key_h, key_step = jax.random.split(key, 3)
        state = kernel.adapt(kernel.init(key_init, beta_k, data), mnl.contrast_whitening(factor_k, n_classes, prior_scale))
        h = step_size * (1.0 + jitter * jax.random.uniform(key_h, (), beta.dtype, -1.0, 1.0))
        state, info = kernel.step(key_step, state, data, h)
        return state.position, info.acceptance

    keys = jax.random.split(jax.random.fold_in(key, call), beta.shape[0])
    return jax.vmap(one)(keys, beta, rows, valid, factors)


def expert_rows(z, counts, design):
    """The non-empty slots' rows: ``(slots, rows, sizes, gram)`` with ``slots`` (S,) the
    slots in block order (a multiple of :data:`SLOT_CHUNK` of them; the padding ones have
    no rows), ``rows`` (S, B) their row indices (padded with row 0), ``sizes`` (S,) their
    numbers of rows and ``gram`` (S, D, D) their ``sum_i x~_i x~_i^T``. ``B`` is the block
    size (:func:`regbayes.algorithms.isvm_gibbs.block_size`) of the largest component, at
    most the power of two that holds all ``n`` rows: one block size for every iteration
    of a fit on up to :data:`~regbayes.algorithms.isvm_gibbs.MIN_BLOCK` rows."""
    members, starts = group_members(z, counts)
    active = np.flatnonzero(counts)
    n_work = SLOT_CHUNK * -(-len(active) // SLOT_CHUNK)
    slots = np.zeros(n_work, np.int64)
    slots[: len(active)] = active
    sizes = np.zeros(n_work, np.int64)
    sizes[: len(active)] = counts[active]
    B = min(block_size(int(sizes.max())), 1 << (len(z) - 1).bit_length())
    rows = members[np.where(np.arange(B) < sizes[:, None], starts[slots][:, None] + np.arange(B), 0)]
    gram = np.zeros((n_work, design.shape[1], design.shape[1]))
    grouped = design[members]
    for j, k in enumerate(active):
        block = grouped[starts[k] : starts[k] + counts[k]]
        gram[j] = block.T @ block
    return slots, rows, sizes, gram


def beta_step(key, state: isvm.ISVMState, data: DPMNLData, step_size, jitter, n_leapfrog, n_inner):
    """beta | z for every non-empty slot (empty slots keep their expert): ``n_inner``
    transitions, each in chunks of :data:`SLOT_CHUNK` experts (one compiled program per
    block size, whatever the number of components). Returns the state, the mean
    acceptance over the non-empty slots and the seconds spent compiling a new block size,
    timed apart with ``lower().compile()``."""
    slots, rows, sizes, gram = expert_rows(state.z, state.counts, data.design)
    factors = mnl.contrast_factors(gram, data.n_rows, data.prior_scale)
    dtype = np.dtype(data.design_dev.dtype)
    real = dtype.type
    # NumPy arguments: the compiled program's fast path converts them without eager JAX ops
    beta, rows, sizes, factors = (state.eta[slots].astype(dtype), rows.astype(np.int32), sizes.astype(np.int32),
                                  factors.astype(dtype))
    const = (real(data.prior_scale), real(step_size), real(jitter))
    compile_seconds, compiled = 0.0, state.compiled
    acceptance = np.zeros(len(slots))
    for t in range(n_inner):
        for c in range(len(slots) // SLOT_CHUNK):
            part = slice(c * SLOT_CHUNK, (c + 1) * SLOT_CHUNK)
            args = (key, np.int32(t * len(slots) + c), beta[part], data.design_dev, data.codes_dev, rows[part],
                    sizes[part], factors[part], *const)
            if rows.shape[1] not in compiled:
                start = time.perf_counter()
                hmc_expert_step.lower(*args, n_leapfrog=n_leapfrog).compile()
                compile_seconds += time.perf_counter() - start
                compiled = compiled | {rows.shape[1]}
            moved, accepted = hmc_expert_step(*args, n_leapfrog=n_leapfrog)
            beta[part] = np.asarray(moved)
            acceptance[part] += np.asarray(accepted) / n_inner
    n_active = int(np.count_nonzero(state.counts))
    eta = state.eta.copy()
    eta[slots[:n_active]] = beta[:n_active]
    mean_acceptance = float(np.mean(acceptance[:n_active]))
    return state._replace(eta=eta, compiled=compiled), mean_acceptance, compile_seconds


def dp_mnl(*, n_auxiliary: int = 2, step_size: float = 0.3, n_leapfrog: int = 5, jitter: float = 0.5,
           n_inner: int = 1) -> Callable:
    """``step(seed, state, data) -> (state, info)``: one iteration, beta | z then z | beta.

    ``n_auxiliary`` auxiliary experts per datum (Neal's Algorithm 8); ``step_size``,
    ``n_leapfrog``, ``jitter`` and ``n_inner`` configure the HMC transitions (module
    docstring). ``seed`` seeds the numba sweep and, as a JAX key
    (:func:`regbayes.rng.key_from_seed`), the beta step.
    """
    if not 0.0 <= jitter < 1.0:
        raise ValueError(f"jitter must be in [0, 1), got {jitter}")

    def step(seed, state, data: DPMNLData):
        start = time.perf_counter()
        acceptance, compile_seconds = 1.0, 0.0
        if state.counts.any():  # beta | z (not before the first sweep of init="sequential")
            state, acceptance, compile_seconds = beta_step(key_from_seed(seed), state, data, step_size, jitter, n_leapfrog,
                                                           n_inner)
        mid = time.perf_counter()
        state = z_step(seed, state, data, n_auxiliary)
        beta_seconds = mid - start - compile_seconds
        info = DPMNLInfo(int(np.count_nonzero(state.counts)), time.perf_counter() - mid, beta_seconds, compile_seconds,
                         acceptance, float(step_size))
        return state, info

    return step


def check(state: isvm.ISVMState, info) -> str | None:
    """Divergence test for the driver: every expert must be finite."""
    if np.isfinite(state.eta).all():
        return None
    return "a component's expert beta is not finite; lower step_size"
