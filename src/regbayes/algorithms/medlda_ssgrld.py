"""Stochastic subgradient MCMC for MedLDA: paper 000, Algorithm 1 (section 4.1.2), on the
host-loop protocol of :func:`regbayes.inference.run` (``state = init(seed, data)``,
``state, info = step(seed, state, data)``, hooks :func:`compile_kernels` and
:func:`divergence_check`).

One iteration draws a minibatch D~ of documents (without replacement) and

1. runs Gibbs sweeps of eq. 22 over its tokens, Theta collapsed, Phi and eta given::

       p(z_dn = k | ...) ∝ (n_dk^-n + alpha) Phi_kw psi(y_d | zbar_d(k), eta)      (eq. 22)

   (numba, documents in parallel: :func:`regbayes.algorithms.topic_inference.fixed_topic_sweeps`);
   the last ``n_inner_sweeps - n_inner_burnin`` sweeps give E[zbar_d] and the expected
   topic-word counts E[n_kw]. Each document's assignments persist between its visits and
   the sweeps start from them (Algorithm 1 leaves the start open; a fresh uniform start
   costs burn-in);
2. moves Phi by SGRLD in the expanded-mean parameterisation with step ``eps_t``
   (:func:`regbayes.algorithms.sgrld_topics.sgrld_topics`, numba: the step of
   :func:`regbayes.samplers.sgrld.sgrld_simplex_step` in one pass over the K x V entries);
3. moves eta by one SSGLD step (eq. 13, AdaGrad, :func:`regbayes.samplers.ssgld`) with the
   subgradient of eq. 21 (:func:`regbayes.potentials.build_potential` on E[zbar]): the
   minibatch estimate of eq. 7 is the full-data potential on the minibatch's E[zbar] with
   c scaled by |D| / |D~| (the hinge term is linear in c). The Crammer–Singer hinge
   (eq. 17) on eta (M, K), or one binary hinge (eq. 20) per row of eta.

From iteration ``soft_from`` on (the run's second half, whose Phi the estimator averages)
E[n_kw] adds each kept token's conditional ``p(z_dn = k | z_-dn, Phi, eta)`` instead of its
drawn topic (Rao-Blackwellised: the same expectation, a smaller variance); the first half
counts the drawn topics, whose noise helps the topics out of early merged states (from the
start, one of two seeds of the unit test's 5-topic corpus kept two topics merged for 250 of
600 iterations). E[zbar] for the classifier step averages the drawn counts: there the
smoother estimate cost accuracy (:func:`regbayes.algorithms.lda_kernels.fixed_topic_sweeps`).

Inner sweeps (the estimator's defaults: 4 sweeps, 2 of burn-in, 100 documents). Fewer
sweeps on larger minibatches (200 documents, 2 sweeps, 1 burn-in: the same tokens per
iteration, in about half the time) did not hold up: on ``medlda-fig8``'s corpus (12,000
documents, K = 50) they matched the defaults per document on seeds 0-5 (0.845 against 0.846
at 24,000 documents) but trailed on seeds 9-11 (0.840 against 0.846), and on the unit
tests' corpus (600 documents, K = 5) one of two seeds kept two topics merged for 600
iterations, against fewer than 100 with the defaults (3 sweeps with 1 burn-in: 150-300).

The classifier update sees the minibatch padded with zero rows to a few fixed sizes
(:func:`regbayes.algorithms.medlda_gibbs.bucket`; zero rows change nothing in eq. 21).
"""
from __future__ import annotations

import functools
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..potentials import SVMData, build_potential, weight_norm_bound
from ..potentials.minibatch import rows_without_replacement
from ..precision import enable_x64
from ..rng import KEY_IMPL
from ..samplers import ssgld
from . import lda_kernels as kern
from .medlda_gibbs import bucket, coef_divergence, pad_rows
from .sgrld_topics import sgrld_topics
from .topic_inference import fixed_topic_sweeps, gather

#: SSGLD with AdaGrad on the full-data potential of the minibatch's E[zbar] (eq. 21).
ETA_KERNEL = ssgld(build_potential(None), "adagrad")


def ssgld_eta(key, eta_state, zbar, labels, C, margin, prior_scale, h, crammer_singer):
    """One SSGLD step (eq. 13) with the subgradient of eq. 21: the Crammer–Singer hinge on
    ``eta`` (M, K), or one binary hinge per row of ``eta`` and column of ``labels``."""
    if crammer_singer:
        return ETA_KERNEL.step(key, eta_state, SVMData(zbar, labels, C, margin, prior_scale), h)[0]

    def one(k, st, y):
        return ETA_KERNEL.step(k, st, SVMData(zbar, y, C, margin, prior_scale), h)[0]

    keys = jax.random.split(key, labels.shape[1])
    return jax.vmap(one, in_axes=(0, 0, 1))(keys, eta_state, labels)


@functools.partial(jax.jit, static_argnames="crammer_singer")
def eta_update(seed, eta_state, zbar, labels, C, margin, prior_scale, h, crammer_singer):
    """Algorithm 1's classifier step with the key of the integer ``seed``: SSGLD for eta from
    the minibatch's E[zbar] (:func:`ssgld_eta`; ``C`` already scaled by |D| / |D~|)."""
    return ssgld_eta(jax.random.key(seed, impl=KEY_IMPL), eta_state, zbar, labels, C, margin, prior_scale, h,
                     crammer_singer)


def initial_eta_state(n_classifiers, n_topics, crammer_singer):
    """SSGLD's state (:data:`ETA_KERNEL`'s ``init``) at eta = 0: one (M, K) position for the
    Crammer–Singer hinge, one state per classifier row for one-vs-rest."""
    zeros = jnp.zeros((n_classifiers, n_topics), jnp.float64)
    if crammer_singer:
        return ETA_KERNEL.init(None, zeros, None)
    return jax.vmap(lambda position: ETA_KERNEL.init(None, position, None))(zeros)


class SSGRLDData(NamedTuple):
    """Corpus (flat tokens, as in :mod:`regbayes.algorithms.lda_kernels`), labels, priors and
    run settings of Algorithm 1. ``labels`` are what the eta step reads: class codes
    (Crammer–Singer) or ``y_sign``; ``mode`` selects psi in eq. 22; the step sizes are
    schedules ``t -> eps_t`` and ``t -> h_t``; ``constants`` are ``(C |D| / |D~|, margin,
    prior_scale)`` as float64 JAX scalars."""

    doc_ptr: np.ndarray
    words: np.ndarray
    lengths: np.ndarray
    y_sign: np.ndarray
    codes: np.ndarray
    labels: np.ndarray
    mode: int
    n_topics: int
    n_words: int
    alpha: float
    beta: float
    C: float
    margin: float
    prior_scale: float
    batch_size: int
    n_inner_sweeps: int
    n_inner_burnin: int
    soft_from: int
    topic_step: Callable
    classifier_step: Callable
    n_jobs: int | None
    rows: int
    constants: tuple
    n_total: float  # |D| of eq. 7's scale |D| / |D~|: these documents, or what a shard's documents stand for

    @property
    def crammer_singer(self):
        return self.mode == kern.MODE_CRAMMER_SINGER

    @property
    def scale(self):
        return self.n_total / self.batch_size


class SSGRLDState(NamedTuple):
    """Topic assignments ``z`` of every token (updated in place, see :func:`step`), theta
    (K, V), Phi transposed ``phi_t`` (V, K) for the token kernels, SSGLD's state
    of eta and eta itself (M, K) on the host; iterations, documents and token-sweeps so far."""

    z: np.ndarray
    theta: np.ndarray
    phi_t: np.ndarray
    eta_state: tuple
    eta: np.ndarray
    iteration: int
    n_docs: int
    n_tokens: int


class SSGRLDInfo(NamedTuple):
    n_docs: int  # documents processed so far (cumulative)
    n_tokens: int  # token-sweeps so far (cumulative)
    topic_step_size: float  # eps_t of this iteration
    classifier_step_size: float  # h_t of this iteration
    topics_finite: bool


def make_data(doc_ptr, words, y_sign, codes, *, crammer_singer, n_topics, n_words, alpha, beta, C, margin,
              prior_scale, batch_size, n_inner_sweeps, n_inner_burnin, soft_from, topic_step, classifier_step,
              n_jobs=None, n_total=None):
    """:class:`SSGRLDData` of a corpus (empty documents removed beforehand). ``n_total``:
    the documents the minibatch gradients stand for (default: these; a shard's corpus,
    :mod:`regbayes.algorithms.medlda_shards`)."""
    mode = kern.MODE_CRAMMER_SINGER if crammer_singer else kern.MODE_BINARY
    codes = np.asarray(codes, np.int64)
    y_sign = np.asarray(y_sign, np.float64)
    labels = codes.astype(np.int32) if crammer_singer else y_sign
    n_total = y_sign.shape[0] if n_total is None else float(n_total)
    scale = n_total / batch_size
    with enable_x64():
        constants = tuple(jnp.asarray(v, jnp.float64) for v in (C * scale, margin, prior_scale))
    return SSGRLDData(doc_ptr, words, np.diff(doc_ptr).astype(np.float64), y_sign, codes, labels, mode,
                      int(n_topics), int(n_words), float(alpha), float(beta), float(C), float(margin),
                      float(prior_scale), int(batch_size), int(n_inner_sweeps), int(n_inner_burnin), int(soft_from),
                      topic_step, classifier_step, n_jobs, bucket(batch_size), constants, n_total)


def init(seed, data: SSGRLDData) -> SSGRLDState:
    """Uniform random topics; theta with Gamma(1, 1) + beta entries (Phi near Dir(1) rows);
    eta = 0. Both draws from the stream ``seed``."""
    rng = np.random.default_rng(seed)
    z = kern.random_assignments(data.words.shape[0], data.n_topics, int(rng.integers(2**31 - 1)))
    return initial_globals(rng, data.n_topics, data.n_words, data.beta, data.y_sign.shape[1],
                           data.crammer_singer)._replace(z=z)


def initial_globals(rng, n_topics, n_words, beta, n_classifiers, crammer_singer) -> SSGRLDState:
    """:func:`init`'s state without the topic assignments (``z=None``): theta, Phi and eta
    drawn from ``rng``."""
    theta = rng.gamma(1.0, 1.0, size=(n_topics, n_words)) + beta
    phi_t = np.ascontiguousarray((theta / theta.sum(axis=1, keepdims=True)).T)
    with enable_x64():
        eta_state = initial_eta_state(n_classifiers, n_topics, crammer_singer)
    return SSGRLDState(None, theta, phi_t, eta_state, np.zeros((n_classifiers, n_topics)), 0, 0, 0)


def _sweeps(data, docs, doc_ptr_b, words_b, z_b, phi_t, eta, seed, soft):
    return fixed_topic_sweeps(
        data.n_jobs, doc_ptr_b, words_b, z_b, phi_t, eta, data.y_sign[docs], data.codes[docs], data.mode, data.C,
        data.margin, data.alpha, data.n_inner_sweeps, data.n_inner_burnin, seed, not soft, docs, False, soft,
    )


def step(seed, state: SSGRLDState, data: SSGRLDData):
    """One iteration of Algorithm 1 (module docstring).

    ``state.z`` is updated in place (the minibatch's tokens only): a copy of every token's
    topic per minibatch would cost O(corpus) where the step costs O(minibatch)."""
    t = state.iteration
    rng = np.random.default_rng(seed)
    docs = rows_without_replacement(rng, data.y_sign.shape[0], data.batch_size)
    doc_ptr_b, index, words_b, z_b = gather(data.doc_ptr, data.words, state.z, docs)
    soft = t >= data.soft_from
    z_b, ndk_mean, z_kept, p_kept = _sweeps(data, docs, doc_ptr_b, words_b, z_b, state.phi_t, state.eta,
                                            int(rng.integers(2**31 - 1)), soft)
    state.z[index] = z_b
    if soft:
        expected = kern.expected_topic_word_soft(words_b, p_kept, data.n_words)
    else:
        expected = kern.expected_topic_word(words_b, z_kept, data.n_topics, data.n_words)
    eps, h = float(data.topic_step(t)), float(data.classifier_step(t))
    theta, phi_t, finite = sgrld_topics(rng, state.theta, expected, data.scale, data.beta, eps)
    zbar = pad_rows(ndk_mean / data.lengths[docs][:, None], data.rows)
    with enable_x64():
        eta_state = eta_update(seed, state.eta_state, zbar, pad_rows(data.labels[docs], data.rows), *data.constants,
                               h, crammer_singer=data.crammer_singer)
        eta = np.array(eta_state.position)  # a copy: the token kernels are compiled for writable arrays
    n_docs = state.n_docs + data.batch_size
    n_tokens = state.n_tokens + words_b.shape[0] * data.n_inner_sweeps
    new = SSGRLDState(state.z, theta, phi_t, eta_state, eta, t + 1, n_docs, n_tokens)
    return new, SSGRLDInfo(n_docs, n_tokens, eps, h, finite)


def topic_word(state: SSGRLDState, data: SSGRLDData = None):
    """The current Phi (K, V)."""
    return np.ascontiguousarray(state.phi_t.T)


def compile_kernels(state: SSGRLDState, data: SSGRLDData):
    """Compile the classifier update and load (or compile) the numba kernels on one document."""
    docs = np.zeros(1, np.int64)
    doc_ptr_b, _, words_b, z_b = gather(data.doc_ptr, data.words, state.z, docs)
    _sweeps(data, docs, doc_ptr_b, words_b, z_b, state.phi_t, state.eta, 0, True)
    kern.expected_topic_word_soft(words_b, np.zeros((words_b.shape[0], data.n_topics)), data.n_words)
    sgrld_topics(np.random.default_rng(0), state.theta, np.zeros((data.n_topics, data.n_words)), data.scale,
                 data.beta, float(data.topic_step(0)))
    with enable_x64():
        jax.block_until_ready(eta_update(
            0, state.eta_state, np.zeros((data.rows, data.n_topics)), pad_rows(data.labels[:0], data.rows),
            *data.constants, float(data.classifier_step(0)), crammer_singer=data.crammer_singer,
        ))


def divergence_check(data: SSGRLDData):
    """``check(state, info)`` for :class:`regbayes.inference.Algorithm`: a message naming the
    step size to lower when ``||eta||^2`` leaves the bound of
    :func:`regbayes.potentials.weight_norm_bound` (``classifier_step_size``) or Phi is no
    longer finite (``topic_step_size``)."""
    return eta_divergence_check(data.n_total, data.y_sign.shape[1], data.n_topics, data.crammer_singer, data.C,
                                data.margin, data.prior_scale)


def eta_divergence_check(n_docs, n_classifiers, n_topics, crammer_singer, C, margin, prior_scale):
    """:func:`divergence_check` from the corpus' sizes and the model's constants."""
    n_hinges = 1 if crammer_singer else n_classifiers
    bound = weight_norm_bound(n_docs, n_classifiers * n_topics, n_hinges, C, margin, prior_scale)

    def check(state, info):
        message = coef_divergence(state.eta, bound, "classifier_step_size")
        if message is not None:
            return f"{message} (it was {info.classifier_step_size:.3g})"
        if not info.topics_finite:
            return f"the topics diverged (Phi is not finite); use a smaller topic_step_size (it was {info.topic_step_size:.3g})"
        return None

    return check
