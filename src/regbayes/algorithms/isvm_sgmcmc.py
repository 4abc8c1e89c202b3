"""eta | z of the Gibbs infinite SVM by a stochastic subgradient sampler within Gibbs (paper
000, section 4.2.2 and Algorithm 2): SSGNHT (eq. 14, :func:`regbayes.samplers.sgnht.ssgnht`)
or SSGLD (eq. 13, :func:`regbayes.samplers.sgld.ssgld`, constant step, no preconditioner).

Every iteration runs ``n_inner`` steps of the kernel for every component and classifier at
once (``vmap`` over slots and problems): one-vs-rest, a problem per class with ``eta_kl``
of shape (D,); Crammer–Singer, one problem with ``eta_k`` of shape (M, D). Each keeps its
kernel state across iterations (SSGNHT's momentum and thermostat), and a component that
received a new classifier in the z-sweep starts from the kernel's ``init``. The
subgradient (eq. 29) is ``eta_k / nu^2 + n_k / |D~| sum_{d in D~} dhinge_d`` over a
minibatch ``D~`` of ``batch_size`` rows drawn with replacement among the component's
members (:func:`regbayes.potentials.component_svm.component_potential`; the binary hinge
of eq. 15 per one-vs-rest problem, or the multi-class hinge of eqs. 24 and 26, whose
subgradient eq. 29 takes from eq. 21). A multi-class classifier is sampled in its
sum-zero coordinates and its row mean, which the hinge does not see, drawn exactly
(:func:`eta_step`).

Each component runs in whitened coordinates ``eta = T_k u`` with ``T_k T_k^T`` the
Gaussian analogue of its posterior covariance
(:func:`regbayes.potentials.component_svm.component_whitening`, block-diagonal over the
rows of a multi-class classifier) and the step

    h_k = step_size * min(1, factor * sqrt(batch_size / n_k)),

the minibatch-noise cap of :mod:`regbayes.samplers.defaults` in the component's own
coordinates (``factor`` is ``COMPONENT_NOISE_STEP_FACTOR`` there). A dense ``T_k``
matters: inside a component the centred features share a large offset, and an isotropic
scale fitted to it left the other directions crawling (on paper 001's Setting II
generator an isotropic scale fell far below Gibbs's test accuracy, ``T_k`` matched it;
CHANGELOG.md, "moved out of the code").
"""
from __future__ import annotations

import functools
import math
import time

import jax
import jax.numpy as jnp
import numpy as np

from ..potentials.component_svm import ComponentRows, component_potential, sum_zero_basis, sum_zero_potential
from ..samplers.sgld import SGLDState, ssgld
from ..samplers.sgnht import SGNHTState, ssgnht

KERNELS = ("ssgnht", "ssgld")


def component_kernel(name: str, batch_size: int, n_rows: int | None = None):
    """The kernel ``name`` on the component potential with minibatches of ``batch_size``:
    a binary hinge, or with ``n_rows`` = M a multi-class classifier in its sum-zero
    coordinates (:func:`regbayes.potentials.component_svm.sum_zero_potential`). Both are
    cached: the same object from fit to fit."""
    if name not in KERNELS:
        raise ValueError(f"unknown kernel {name!r}; choose one of {KERNELS}")
    potential = component_potential(batch_size) if n_rows is None else sum_zero_potential(batch_size, n_rows)
    return ssgnht(potential) if name == "ssgnht" else ssgld(potential)


def init_states(name, keys, positions):
    """Kernel states for (slot, problem) ``positions`` (kernel ``init``, one key each),
    with dense identity transforms on the flattened classifier (the shape the eta step
    installs)."""
    kernel = component_kernel(name, 1)
    states = jax.vmap(jax.vmap(lambda k, p: kernel.init(k, p, None)))(keys, positions)
    eye = jnp.eye(math.prod(positions.shape[2:]), dtype=positions.dtype)
    return states._replace(transform=jnp.broadcast_to(eye, positions.shape[:2] + eye.shape))


def rest_states(name, n_slots, n_problems, shape, dtype):
    """Placeholder states for ``n_slots`` slots of ``n_problems`` classifiers of ``shape``:
    position 0 and the kernel's other variables at rest (SSGNHT: momentum 0, thermostat 1;
    SSGLD: empty AdaGrad sums), identity transforms (every eta step re-installs the
    transform, ``kernel.adapt``). A slot is used only once the z-sweep gives it a
    classifier, and then it starts from ``kernel.init`` (``fresh`` in :func:`eta_step`).
    NumPy arrays: no device program per shape."""
    zero = np.zeros((n_slots, n_problems, *shape), dtype)
    P = math.prod(shape)
    eye = np.broadcast_to(np.eye(P, dtype=dtype), (n_slots, n_problems, P, P))
    if name == "ssgnht":
        return SGNHTState(zero, zero.copy(), np.ones((n_slots, n_problems), dtype), eye)
    if name == "ssgld":
        return SGLDState(zero, zero.copy(), zero.copy(), eye)
    raise ValueError(f"unknown kernel {name!r}; choose one of {KERNELS}")


def kernel_name(states) -> str:
    """The kernel whose states these are."""
    return "ssgnht" if isinstance(states, SGNHTState) else "ssgld"


def pad_states(states, capacity):
    """Grow the slot axis of ``states`` to ``capacity`` with :func:`rest_states`."""
    extra = capacity - states.position.shape[0]
    if extra <= 0:
        return states
    n_problems, *shape = states.position.shape[1:]
    rest = rest_states(kernel_name(states), extra, n_problems, shape, states.position.dtype)
    # fields a kernel does not use (noise_var without noise correction) stay None
    return type(states)(*(None if a is None else np.concatenate([np.asarray(a), b]) for a, b in zip(states, rest)))


def _slots_and_problems(fn):
    """vmap ``fn(state, key, y, start, count, h, transform)`` over problems, then over slots."""
    per_problem = jax.vmap(fn, in_axes=(0, 0, 0, None, None, None, None))
    return jax.vmap(per_problem, in_axes=(0, 0, None, 0, 0, 0, 0))


@functools.partial(jax.jit, static_argnames=("name", "batch_size", "joint"))
def eta_step(states, fresh, positions, key, X, Y, members, starts, counts, steps, transforms,
             C, margin, prior_scale, n_inner, *, name, batch_size, joint=False):
    """``n_inner`` steps of kernel ``name`` for every (slot, problem); empty slots are left
    unchanged. Returns ``(states, positions)``, the new classifiers.

    ``states`` and ``positions`` have leading axes (slot, problem). Every slot starts from
    ``positions`` (the classifiers after the z-sweep); a ``fresh`` slot (a new component)
    also gets new kernel variables (``kernel.init``), the others keep theirs. ``Y``
    (problems, n): +1/-1 per one-vs-rest problem, or one row of class codes for the
    multi-class hinge; ``starts``, ``counts``, ``steps`` (h_k) have one entry per slot,
    ``transforms`` one lower-triangular (P, P) whitening factor per slot, ``P`` the size
    of the kernel's position.

    ``joint``: one multi-class classifier per slot, ``positions`` (K, 1, M, D). The kernel
    then runs on its sum-zero coordinates ``Z = Q^T eta`` ((M-1) D coordinates: the
    states' positions), and the row mean is drawn exactly from ``N(0, nu^2 / M I)``
    (:func:`regbayes.potentials.component_svm.sum_zero_basis`): the hinge does not see it,
    so that is its exact conditional, and no stochastic kernel runs along a direction
    without gradient noise (SSGNHT's one thermostat, set by the noise of the others, would
    leave that direction too cold and, to make up, the others too hot).
    """
    eta_positions = positions
    if joint:
        M = positions.shape[2]
        Q = jnp.asarray(sum_zero_basis(M), positions.dtype)
        positions = jnp.einsum("mj,kpmd->kpjd", Q, positions)
        key, key_means = jax.random.split(key)
    kernel = component_kernel(name, batch_size, M if joint else None)
    init_keys, keys = jax.random.split(key, (2,) + positions.shape[:2])
    init = init_states(name, init_keys, positions)
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

    states = _slots_and_problems(one)(states, keys, Y, starts, counts, steps, transforms)
    if not joint:
        return states, states.position
    noise = jax.random.normal(key_means, eta_positions.shape[:2] + (1, eta_positions.shape[3]), positions.dtype)
    eta = jnp.einsum("mj,kpjd->kpmd", Q, states.position) + prior_scale / jnp.sqrt(M) * noise
    return states, jnp.where((counts > 0)[:, None, None, None], eta, eta_positions)


def component_steps(counts, step_size, batch_size, noise_step_factor):
    """``h_k = step_size * min(1, factor * sqrt(batch_size / n_k))`` per slot (empty
    slots as if ``n_k = 1``)."""
    n_k = np.maximum(counts, 1)
    return step_size * np.minimum(1.0, noise_step_factor * np.sqrt(batch_size / n_k))


def run_eta_step(name, key, states, eta, fresh, counts, members, starts, steps, transforms, design, Y, hyper,
                 n_inner, batch_size, joint=False, compiled=frozenset()):
    """Host side of :func:`eta_step`: NumPy inputs to device arrays, and the first run of a
    capacity compiled (``lower().compile()``) and timed apart. ``states=None`` (no eta
    step yet) starts every slot from ``kernel.init``.

    ``eta`` (K, L, D) the classifiers after the z-sweep: ``L`` one-vs-rest problems, or
    with ``joint`` one multi-class classifier of ``L = M`` rows per slot (``transforms``
    then act on its (M-1) D sum-zero coordinates); ``design`` (n, D) and ``Y`` (problems,
    n) device arrays; ``hyper`` the arrays ``(C, margin, prior_scale)``. ``compiled``
    holds the capacities whose program this run has already compiled. Returns ``(states,
    eta, compiled, compile_seconds)`` with ``eta`` the new classifiers (K, L, D) in
    float64.
    """
    dtype = hyper[0].dtype
    positions = eta[:, None] if joint else eta
    if states is None:  # a joint classifier's kernel runs on M - 1 rows (eta_step)
        shape = (eta.shape[1] - 1, eta.shape[2]) if joint else positions.shape[2:]
        states = rest_states(name, *positions.shape[:2], shape, dtype)
        fresh = np.ones(eta.shape[0], bool)
    args = (states, jnp.asarray(fresh), jnp.asarray(positions, dtype), key, design, Y,
            jnp.asarray(members, jnp.int32), jnp.asarray(starts, jnp.int32), jnp.asarray(counts, jnp.int32),
            jnp.asarray(steps, dtype), jnp.asarray(transforms, dtype), *hyper, jnp.asarray(n_inner, jnp.int32))
    compile_seconds = 0.0
    capacity = int(counts.shape[0])
    if capacity not in compiled:
        start = time.perf_counter()
        eta_step.lower(*args, name=name, batch_size=batch_size, joint=joint).compile()
        compile_seconds = time.perf_counter() - start
        compiled = compiled | {capacity}
    states, new = eta_step(*args, name=name, batch_size=batch_size, joint=joint)
    return states, np.asarray(new, np.float64).reshape(eta.shape), compiled, compile_seconds
