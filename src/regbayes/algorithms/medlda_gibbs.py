"""Gibbs MedLDA with data augmentation (Zhu, Chen, Perkins & Zhang 2014; paper 000, section 4
and section 5.2's baseline) on the host-loop protocol of :func:`regbayes.inference.run`:
``state = init(seed, data)``, ``state, info = step(seed, state, data)``, with the hooks
:func:`compile_kernels` and :func:`divergence_check`.

Theta and Phi are collapsed. One iteration is

1. a collapsed Gibbs sweep over every token: the collapsed LDA term times the augmented
   likelihood of the candidate ``zbar_d`` (paper 001, eq. 13 with ``zbar_d`` in place of
   ``x_i``; :func:`regbayes.algorithms.medlda_gibbs_kernels.gibbs_medlda_sweep`, numba);
2. ``lambda_dm^{-1} | Z, eta`` inverse Gaussian, then ``eta_m | Z, lambda`` Gaussian for each
   binary classifier m (paper 001, eqs. 17-18;
   :func:`regbayes.algorithms.medlda_gibbs_kernels.gibbs_classifier_update`, numba: the
   update of :func:`regbayes.algorithms.gibbs_svm.binary_sweep` for the M classifiers in
   one pass over the documents' nonzero topics).

Several classes: one binary classifier per class sharing the topics (the multi-task
formulation); the Crammer–Singer hinge has no data augmentation. Several labels per
document (a label-indicator matrix): the same, one binary classifier per label, with
``y_dl = 2 Y_dl - 1`` in ``y_sign``.

:func:`label_columns_gibbs` is step 2 alone as a sampling kernel of the driver
(:func:`regbayes.inference.sample`) for given features: one binary classifier per column
of a +-1 label matrix (MedLDA's ``refit_classifier`` for several labels).

:func:`bucket` and :func:`pad_rows` serve the JAX classifier updates of the other MedLDA
algorithms: zero rows change neither eq. 17 nor eq. 18, and a new corpus size then rarely
compiles a new program.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numba
import numpy as np

from ..potentials import weight_norm_bound
from ..potentials.linear_svm import SVMData, value_and_subgrad
from ..potentials.topics import collapsed_topic_word
from ..samplers.base import SamplingAlgorithm, StepInfo
from . import lda_kernels as kern
from . import medlda_gibbs_kernels as gk
from .gibbs_svm import GibbsSVMState, binary_sweep


def bucket(n):
    """``n`` rounded up to one of 4 sizes per octave (at least 64): the classifier updates see
    documents in padded blocks, so a new corpus or batch size rarely triggers a new compile
    (about 1 s each, 3-5 s on a busy machine); the padding costs at most 25 % of the update."""
    step = 2 ** max(6, int(n).bit_length() - 2)
    return -(-n // step) * step


def pad_rows(a, n, value=0):
    """``a`` with rows appended up to ``n``. Zero feature rows leave every classifier update
    unchanged: their hinge subgradient ``-C y x`` and their terms ``x x^T / omega``, ``y x`` of
    eq. 18 vanish."""
    if a.shape[0] == n:
        return a
    pad = np.full((n - a.shape[0], *a.shape[1:]), value, dtype=a.dtype)
    return np.concatenate([a, pad])


@functools.lru_cache(maxsize=None)
def label_columns_gibbs() -> SamplingAlgorithm:
    """Gibbs sweeps with data augmentation for one binary classifier per column of
    ``data.y`` (n, M) of +-1 (0 on padding rows) on the dense features ``data.X``: position
    (M, d); per column, ``omega | eta`` then ``eta | omega`` (paper 001, eqs. 17-18;
    :func:`regbayes.algorithms.gibbs_svm.binary_sweep`), each with its own key split from
    the step's. ``step_size`` is ignored. The recorded potential sums the M binary
    potentials. Run it in float64."""

    def init(key, position, data: SVMData):
        del key
        return GibbsSVMState(position, jnp.ones((position.shape[0], data.y.shape[0]), position.dtype))

    def step(key, state, data: SVMData, step_size):
        del step_size
        keys = jax.random.split(key, state.position.shape[0])
        sweep = jax.vmap(binary_sweep, in_axes=(0, 0, None, 0, None, None, None))
        eta, inv_omega = sweep(keys, state.position, data.X, data.y.T, data.C, data.margin, data.prior_scale)
        column = jax.vmap(lambda e, y: value_and_subgrad(e, data._replace(y=y))[0], in_axes=(0, 1))
        u = jnp.sum(column(eta, data.y))
        return GibbsSVMState(eta, inv_omega), StepInfo(u, jnp.ones((), u.dtype), jnp.asarray(data.y.shape[0]))

    return SamplingAlgorithm(init, step, "gibbs-label-columns")


class GibbsMedLDAData(NamedTuple):
    """The corpus as flat tokens (document ``d`` owns ``words[doc_ptr[d]:doc_ptr[d+1]]``), the
    labels as ``y_sign`` (D, M) +-1 (one column per binary classifier), the priors and the
    hinge's constants."""

    doc_ptr: np.ndarray
    words: np.ndarray
    lengths: np.ndarray
    y_sign: np.ndarray
    n_topics: int
    n_words: int
    alpha: float
    beta: float
    C: float
    margin: float
    prior_scale: float


class GibbsMedLDAState(NamedTuple):
    """Topic assignments ``z`` and their count tables ``ndk`` (D, K), ``nwk`` (V, K), ``nk``
    (K,); classifier weights ``eta`` (M, K) and augmentation variables ``inv_omega`` (D, M);
    documents and tokens swept so far."""

    z: np.ndarray
    ndk: np.ndarray
    nwk: np.ndarray
    nk: np.ndarray
    eta: np.ndarray
    inv_omega: np.ndarray
    n_docs: int
    n_tokens: int


class GibbsMedLDAInfo(NamedTuple):
    n_docs: int  # documents swept so far (cumulative)
    n_tokens: int  # tokens swept so far (cumulative)


def make_data(doc_ptr, words, y_sign, *, n_topics, n_words, alpha, beta, C, margin, prior_scale):
    """:class:`GibbsMedLDAData` of a corpus (empty documents removed beforehand)."""
    return GibbsMedLDAData(doc_ptr, words, np.diff(doc_ptr).astype(np.float64), np.asarray(y_sign, np.float64),
                           int(n_topics), int(n_words), float(alpha), float(beta), float(C), float(margin),
                           float(prior_scale))


def init(seed, data: GibbsMedLDAData) -> GibbsMedLDAState:
    """Uniform random topics (stream ``seed``), eta = 0, every ``1/lambda`` = 1."""
    K, V = data.n_topics, data.n_words
    D, M = data.y_sign.shape
    z = kern.random_assignments(data.words.shape[0], K, int(seed))
    ndk, nwk, nk = kern.count_tables(data.doc_ptr, data.words, z, K, V)
    return GibbsMedLDAState(z, ndk, nwk, nk, np.zeros((M, K)), np.ones((D, M)), 0, 0)


def step(seed, state: GibbsMedLDAState, data: GibbsMedLDAData):
    """One iteration (module docstring): the token sweep, then lambda and eta. The
    classifier update's variates are drawn on a second thread during the sweep."""
    pool = kern._thread_pool() if numba.get_num_threads() > 1 else None
    variates = pool.submit(gk.classifier_variates, seed, *data.y_sign.shape, state.eta.shape[1]) if pool else None
    z, ndk, nwk, nk = gk.gibbs_medlda_sweep(
        data.doc_ptr, data.words, state.z, state.ndk, state.nwk, state.nk, state.eta, data.y_sign,
        state.inv_omega, data.alpha, data.beta, data.C, data.margin, seed,
    )
    eta, inv_omega = gk.gibbs_classifier_update(seed, state.eta, ndk, data.lengths, data.y_sign, data.C, data.margin,
                                                data.prior_scale, variates=variates.result() if variates else None)
    n_docs = state.n_docs + data.y_sign.shape[0]
    n_tokens = state.n_tokens + data.words.shape[0]
    return GibbsMedLDAState(z, ndk, nwk, nk, eta, inv_omega, n_docs, n_tokens), GibbsMedLDAInfo(n_docs, n_tokens)


def topic_word(state: GibbsMedLDAState, data: GibbsMedLDAData):
    """The topics (K, V) of the current counts: ``(n_kw + beta) / (n_k + V beta)``."""
    return collapsed_topic_word(state.nwk, state.nk, data.beta)


def compile_kernels(state: GibbsMedLDAState, data: GibbsMedLDAData):
    """Load (or compile) the numba sweep and classifier update, on the first document."""
    n_first = int(data.doc_ptr[1])
    gk.gibbs_medlda_sweep(data.doc_ptr[:2], data.words[:n_first], state.z[:n_first], state.ndk[:1], state.nwk,
                          state.nk, state.eta, data.y_sign[:1], state.inv_omega[:1], data.alpha, data.beta, data.C,
                          data.margin, 0)
    gk.gibbs_classifier_update(0, state.eta, state.ndk[:1], data.lengths[:1], data.y_sign[:1], data.C, data.margin,
                               data.prior_scale)


def coef_divergence(eta, bound, parameter):
    """The message of a classifier whose weights left the posterior (non-finite, or
    ``||eta||^2`` beyond ``bound``), naming the ``parameter`` to lower; None otherwise."""
    norm2 = float(np.sum(np.square(eta)))
    if np.isfinite(norm2) and norm2 <= bound:
        return None
    return (f"the classifier weights diverged (||eta||^2 = {norm2:.3g}, beyond the {bound:.3g} no posterior "
            f"draw reaches); use a smaller {parameter}")


def divergence_check(data):
    """``check(state, info)`` for :class:`regbayes.inference.Algorithm`: a message when
    ``||eta||^2`` leaves the bound of :func:`regbayes.potentials.weight_norm_bound` (M hinges
    per document), naming ``C``, which scales the hinge (the sampler has no step size).
    ``data``: a :class:`GibbsMedLDAData` or a paMedLDA one
    (:class:`regbayes.algorithms.pa_medlda.PAMedLDAData`)."""
    D, M = data.y_sign.shape
    bound = weight_norm_bound(D, M * data.n_topics, M, data.C, data.margin, data.prior_scale)

    def check(state, info):
        del info
        return coef_divergence(state.eta, bound, "C")

    return check
