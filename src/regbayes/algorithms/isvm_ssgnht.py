"""eta | z of the Gibbs infinite SVM by SSGNHT-within-Gibbs (paper 000, Algorithm 2).

Every iteration runs ``n_inner`` steps of :func:`regbayes.samplers.sgnht.ssgnht` (eq. 14)
for every component and one-vs-rest problem at once (``vmap`` over slots and classes);
each keeps its momentum and thermostat across iterations, and a component that received
a new classifier in the z-sweep starts a new momentum. The subgradient (eq. 29) is
``eta_k / nu^2 + n_k / |D~| sum_{d in D~} dhinge_d`` over a minibatch ``D~`` of
``batch_size`` rows drawn with replacement among the component's members
(:func:`regbayes.potentials.component_svm.component_potential`).

Each component runs in whitened coordinates ``eta = T_k u`` with ``T_k T_k^T`` the
Gaussian analogue of its posterior covariance
(:func:`regbayes.potentials.component_svm.component_whitening`) and the step

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
import time

import jax
import jax.numpy as jnp
import numpy as np

from ..potentials.component_svm import ComponentRows, component_potential
from ..samplers.sgnht import SGNHTState, ssgnht


def ssgnht_init_states(keys, positions):
    """SSGNHT states for (slot, class) ``positions`` (kernel ``init``, one key each),
    with dense identity transforms (the shape the eta step installs)."""
    kernel = ssgnht(component_potential(1))
    states = jax.vmap(jax.vmap(lambda k, p: kernel.init(k, p, None)))(keys, positions)
    eye = jnp.eye(positions.shape[-1], dtype=positions.dtype)
    return states._replace(transform=jnp.broadcast_to(eye, positions.shape[:2] + eye.shape))


def rest_states(n_slots, n_classes, dim, dtype):
    """Placeholder SSGNHT states for ``n_slots`` slots: position and momentum 0, identity
    transforms, thermostat 1 (every eta step re-installs the transform and restarts the
    thermostat, ``kernel.adapt``). A slot is used only once the z-sweep gives it a
    classifier, and then it starts from ``kernel.init`` (``fresh`` in
    :func:`ssgnht_eta_step`). NumPy arrays: no device program per shape."""
    zero = np.zeros((n_slots, n_classes, dim), dtype)
    eye = np.broadcast_to(np.eye(dim, dtype=dtype), (n_slots, n_classes, dim, dim))
    return SGNHTState(zero, zero.copy(), np.ones((n_slots, n_classes), dtype), eye)


def pad_states(states, capacity):
    """Grow the slot axis of ``states`` to ``capacity`` with :func:`rest_states`."""
    extra = capacity - states.position.shape[0]
    if extra <= 0:
        return states
    _, n_classes, dim = states.position.shape
    rest = rest_states(extra, n_classes, dim, states.position.dtype)
    return SGNHTState(*(np.concatenate([np.asarray(a), b]) for a, b in zip(states, rest)))


def _slots_and_classes(fn):
    """vmap ``fn(state, key, y, start, count, h, transform)`` over classes, then over slots."""
    per_class = jax.vmap(fn, in_axes=(0, 0, 0, None, None, None, None))
    return jax.vmap(per_class, in_axes=(0, 0, None, 0, 0, 0, 0))


@functools.partial(jax.jit, static_argnames=("batch_size",))
def ssgnht_eta_step(states, fresh, positions, key, X, Y, members, starts, counts, steps, transforms,
                    C, margin, prior_scale, n_inner, *, batch_size):
    """``n_inner`` SSGNHT steps for every (slot, class); empty slots are left unchanged.

    ``states`` has leading axes (slot, class). Every slot starts from ``positions`` (the
    classifiers after the z-sweep); a ``fresh`` slot (a new component) also gets a new
    momentum and thermostat (``kernel.init``), the others keep theirs. ``Y`` (L, n);
    ``starts``, ``counts``, ``steps`` (h_k) have one entry per slot, ``transforms`` one
    lower-triangular (D, D) whitening factor per slot.
    """
    kernel = ssgnht(component_potential(batch_size))
    init_keys, keys = jax.random.split(key, (2,) + positions.shape[:2])
    init = ssgnht_init_states(init_keys, positions)
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


def component_steps(counts, step_size, batch_size, noise_step_factor):
    """``h_k = step_size * min(1, factor * sqrt(batch_size / n_k))`` per slot (empty
    slots as if ``n_k = 1``)."""
    n_k = np.maximum(counts, 1)
    return step_size * np.minimum(1.0, noise_step_factor * np.sqrt(batch_size / n_k))


def run_eta_step(key, states, eta, fresh, counts, members, starts, steps, transforms, design, Y, hyper, n_inner,
                 batch_size, compiled=frozenset()):
    """Host side of :func:`ssgnht_eta_step`: NumPy inputs to device arrays, and the first
    run of a capacity compiled (``lower().compile()``) and timed apart. ``states=None``
    (no eta step yet) starts every slot from ``kernel.init``.

    ``eta`` (K, L, D) the classifiers after the z-sweep; ``design`` (n, D) and ``Y``
    (L, n) device arrays; ``hyper`` the arrays
    ``(C, margin, prior_scale)``. ``compiled`` holds the capacities whose program this run
    has already compiled. Returns ``(states, compiled, compile_seconds)``.
    """
    dtype = hyper[0].dtype
    if states is None:
        states = rest_states(*eta.shape, dtype)
        fresh = np.ones(eta.shape[0], bool)
    args = (states, jnp.asarray(fresh), jnp.asarray(eta, dtype), key, design, Y,
            jnp.asarray(members, jnp.int32), jnp.asarray(starts, jnp.int32), jnp.asarray(counts, jnp.int32),
            jnp.asarray(steps, dtype), jnp.asarray(transforms, dtype), *hyper, jnp.asarray(n_inner, jnp.int32))
    compile_seconds = 0.0
    capacity = int(counts.shape[0])
    if capacity not in compiled:
        start = time.perf_counter()
        ssgnht_eta_step.lower(*args, batch_size=batch_size).compile()
        compile_seconds = time.perf_counter() - start
        compiled = compiled | {capacity}
    return ssgnht_eta_step(*args, batch_size=batch_size), compiled, compile_seconds
