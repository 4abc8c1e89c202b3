"""paMedLDA-gibbs: online Bayesian passive-aggressive MedLDA (Shi & Zhu 2014, "Online
Bayesian Passive-Aggressive Learning"; the comparison of paper 000, section 5.2, Fig. 8) on
the host-loop protocol of :func:`regbayes.inference.run` (``state = init(seed, data)``,
``state, info = step(seed, state, data)``, hooks :func:`compile_kernels` and
:func:`divergence_check`).

Each document is seen once, in minibatches ``B_t`` (a random order fixed at the start).
BayesPA's update of the global parameters is the posterior closest in KL to the previous
one that pays the batch's hinge loss; with the Gibbs classifier's hinge and the data
augmentation of paper 001 (eqs. 17-18, ``c' = c / 2``), under the factorisation
``q(Phi) q(eta) q(Z, lambda)``, it keeps the conjugate families:

    q_t(phi_k) = Dir(Delta_t,k),       Delta_{t+1},kw = Delta_t,kw + sum_{d in B_t} sum_n E[1(z_dn = k)] 1(w_dn = w)
    q_t(eta_m) = N(P_t,m^-1 b_t,m, P_t,m^-1),
        P_{t+1},m = P_t,m + c'^2 sum_{d in B_t} E[zbar_d zbar_d^T / lambda_dm]
        b_{t+1},m = b_t,m + c'  sum_{d in B_t} E[y_dm (1 + c' l / lambda_dm) zbar_d]

from ``Delta_0 = beta``, ``P_0 = I / nu^2``, ``b_0 = 0`` (one Gaussian per binary classifier
m: a binary problem, each class one-vs-rest, or each label of a label matrix). Without
forgetting, one pass gives the prior plus every document's expected counts and augmented
statistics, as a batch posterior would.

The expectations over the batch's local variables come from Gibbs sampling, per batch:

1. ``n_inner_iter`` times: ``n_inner_sweeps`` Gibbs sweeps over the batch's topic
   assignments with Phi fixed at ``E_q[Phi]`` (``topic_weights="mean"``) or at the
   mean-field value ``exp(E_q[log Phi])`` (``"mean_field"``; the reference implementation
   offers both, see :func:`topic_weights`) and the classifier at ``eta``, a draw from the
   current ``q(eta)`` (the Gibbs classifier):

       p(z_dn = k | ...) ∝ (n_dk^-n + alpha) Phi_kw psi(y_d | zbar_d(k), eta)   (paper 000, eq. 22)

   with ``lambda`` integrated out, so that ``psi`` is the hinge pseudo-likelihood itself
   (the fixed-topic sweep of :func:`regbayes.algorithms.topic_inference.fixed_topic_sweeps`,
   the one SSGRLD runs; the first iteration starts from uniform topics). The last
   ``n_inner_sweeps - n_inner_burnin`` sweeps give the expected topic-word counts and
   ``E[zbar_d]``;
2. ``1/lambda_dm | zbar_d, eta ~ IG(1 / (c' |l - y_dm eta_m^T zbar_d|), 1)`` at ``zbar_d =
   E[zbar_d]`` (paper 001, eq. 17), the batch's statistics above, and a new ``eta`` drawn
   from ``q(eta)`` with them (eq. 18 with the prior ``q_t(eta)``). The next inner iteration
   sweeps with Phi from ``Delta_t`` plus this iteration's counts and with this ``eta``.

Departures from the paper, in the Monte Carlo estimate of the local expectations: the
paper's conditional of ``z_dn`` takes expectations over ``q(eta)`` (``E[eta]``,
``E[eta eta^T]``) with ``lambda`` explicit; here ``eta`` is a draw from ``q(eta)`` and
``lambda`` is collapsed in the token conditional (its marginal is exactly ``psi``), which
reuses the fixed-topic kernel; ``E[zbar zbar^T / lambda]`` is estimated at ``E[zbar_d]`` with
one draw of ``lambda``.

The structure (inner iterations whose statistics replace the previous iteration's, the
batch's own counts in Phi from the second iteration on, uniform starting topics) follows
the authors' reference implementation (``OnlineGibbsMedLDA``, whose ``stepsize`` scales the
statistics: 1 here, BayesPA's update as written).

With the classifier fixed (one inner iteration), a step's sweeps are exactly the fixed-topic
kernel's for the same seed: :func:`batch_sweeps` is that call.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from scipy.special import digamma

from ..precision import enable_x64
from ..rng import KEY_IMPL, host_seeds
from ..samplers.augmentation import inverse_gaussian
from . import lda_kernels as kern
from .medlda_gibbs import bucket, pad_rows
from .medlda_gibbs import divergence_check as divergence_check  # the same bound serves paMedLDA
from .topic_inference import fixed_topic_sweeps, gather


TOPIC_WEIGHTS = ("mean", "mean_field")


def topic_weights(topic_counts, kind="mean"):
    """Phi for the token sweeps under ``q(phi_k) = Dir(topic_counts[k])``, transposed to
    (V, K) for the token kernels: ``E[phi_kw] = Delta_kw / sum_w Delta_kw`` ("mean"), or
    ``exp(E[log phi_kw])`` with ``E[log phi_kw] = digamma(Delta_kw) - digamma(sum_w
    Delta_kw)`` ("mean_field"), each word's row then divided by its largest entry (a factor
    the token conditional of eq. 22 does not see; it keeps rare words from underflowing).

    "mean" is the default: the mean-field value gives a word a topic has not yet seen a
    weight of ``exp(digamma(beta))`` (about ``e^-20`` at beta = 0.05) against ``beta`` for the
    mean, so early topics absorb new words and merge. On ``medlda-multilabel``'s stand-in
    (6,000 documents, K = 20, seed 0) one pass scored micro-F1 0.45-0.51 with it and
    0.64-0.68 with the mean."""
    if kind == "mean":
        return np.ascontiguousarray((topic_counts / topic_counts.sum(axis=1, keepdims=True)).T)
    log_phi = (digamma(topic_counts) - digamma(topic_counts.sum(axis=1, keepdims=True))).T
    return np.ascontiguousarray(np.exp(log_phi - log_phi.max(axis=1, keepdims=True)))


def gaussian_draw(key, precision, shift):
    """``eta_m ~ N(P_m^-1 b_m, P_m^-1)`` for each row m of ``shift`` (M, K), ``precision``
    (M, K, K), by the Cholesky factor of ``P_m``."""
    chol = jnp.linalg.cholesky(precision)
    mean = jax.vmap(lambda c, b: jax.scipy.linalg.cho_solve((c, True), b))(chol, shift)
    noise = jax.random.normal(key, shift.shape, shift.dtype)
    return mean + jax.vmap(lambda c, u: jax.scipy.linalg.solve_triangular(c.T, u, lower=False))(chol, noise)


@jax.jit
def augmented_update(seed, eta, precision, shift, zbar, y_sign, C, margin):
    """Step 2 of the module docstring with the key of the integer ``seed``: ``1/lambda``
    (R, M) given ``eta`` (M, K) at ``zbar`` (R, K), the batch's ``(P_batch (M, K, K),
    b_batch (M, K))``, and a draw of eta from ``N`` with precision ``precision + P_batch``
    and shift ``shift + b_batch``. Rows with ``y_sign = 0`` (padding) add nothing. Run it
    in float64."""
    c = 0.5 * C  # paper 001's c' (regbayes.algorithms.gibbs_svm)
    k_omega, k_eta = jax.random.split(jax.random.key(seed, impl=KEY_IMPL))
    zeta = margin - y_sign * (zbar @ eta.T)
    abs_zeta = jnp.maximum(jnp.abs(zeta), jnp.finfo(zbar.dtype).tiny ** 0.5)
    inv_omega = jnp.where(y_sign != 0, inverse_gaussian(k_omega, 1.0 / (c * abs_zeta), 1.0), 0.0)
    p_batch = c**2 * jnp.einsum("rm,rk,rj->mkj", inv_omega, zbar, zbar)
    b_batch = c * jnp.einsum("rm,rk->mk", y_sign * (1.0 + c * margin * inv_omega), zbar)
    return p_batch, b_batch, gaussian_draw(k_eta, precision + p_batch, shift + b_batch)


class PAMedLDAData(NamedTuple):
    """The corpus as flat tokens (:mod:`regbayes.algorithms.lda_kernels`), ``y_sign`` (D, M)
    +-1, the priors and hinge constants, the run's settings, and ``order``: the documents
    in the order the pass visits them (batch t is ``order[t B:(t + 1) B]``)."""

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
    batch_size: int
    n_inner_iter: int
    n_inner_sweeps: int
    n_inner_burnin: int
    topic_weights: str
    order: np.ndarray
    n_jobs: int | None
    rows: int

    @property
    def n_batches(self):
        return -(-self.order.shape[0] // self.batch_size)


class PAMedLDAState(NamedTuple):
    """``q(Phi)``'s Dirichlet parameters ``topic_counts`` (K, V); ``q(eta)``'s natural
    parameters ``precision`` (M, K, K) and ``shift`` (M, K); ``eta`` (M, K), the current draw
    from ``q(eta)``; batches, documents and token-sweeps so far."""

    topic_counts: np.ndarray
    precision: np.ndarray
    shift: np.ndarray
    eta: np.ndarray
    iteration: int
    n_docs: int
    n_tokens: int


class PAMedLDAInfo(NamedTuple):
    n_docs: int  # documents processed so far (cumulative)
    n_tokens: int  # token-sweeps so far (cumulative)


def make_data(doc_ptr, words, y_sign, *, n_topics, n_words, alpha, beta, C, margin, prior_scale, batch_size,
              n_inner_iter, n_inner_sweeps, n_inner_burnin, order, topic_weights="mean", n_jobs=None):
    """:class:`PAMedLDAData` of a corpus (empty documents removed beforehand)."""
    if topic_weights not in TOPIC_WEIGHTS:
        raise ValueError(f"topic_weights must be one of {TOPIC_WEIGHTS}, got {topic_weights!r}")
    return PAMedLDAData(doc_ptr, words, np.diff(doc_ptr).astype(np.float64), np.asarray(y_sign, np.float64),
                        int(n_topics), int(n_words), float(alpha), float(beta), float(C), float(margin),
                        float(prior_scale), int(batch_size), int(n_inner_iter), int(n_inner_sweeps),
                        int(n_inner_burnin), topic_weights, np.asarray(order, np.int64), n_jobs,
                        bucket(int(batch_size)))


def init(seed, data: PAMedLDAData) -> PAMedLDAState:
    """The priors: ``Delta_0 = beta``, ``P_0 = I / nu^2``, ``b_0 = 0``, and eta at the prior
    mean 0 (the first batch's sweeps then see no classifier). ``seed`` is unused."""
    del seed
    K, V = data.n_topics, data.n_words
    M = data.y_sign.shape[1]
    precision = np.broadcast_to(np.eye(K) / data.prior_scale**2, (M, K, K)).copy()
    return PAMedLDAState(np.full((K, V), data.beta), precision, np.zeros((M, K)), np.zeros((M, K)), 0, 0, 0)


def batch_documents(t, data: PAMedLDAData):
    """The documents of batch ``t`` (the last batch may be smaller)."""
    return data.order[t * data.batch_size:(t + 1) * data.batch_size]


def batch_sweeps(data: PAMedLDAData, docs, doc_ptr_b, words_b, z_b, phi_t, eta, seed, first):
    """Step 1's sweeps over the batch ``docs`` (its tokens ``doc_ptr_b``, ``words_b``, topics
    ``z_b``): the fixed-topic kernel in the binary-hinge mode with Phi^T ``phi_t`` (V, K) and
    the classifier ``eta`` (M, K), from uniform topics when ``first``; each document's
    stream keyed by its index. Returns the kernel's ``(z, ndk_mean, z_kept, p_kept)``."""
    return fixed_topic_sweeps(
        data.n_jobs, doc_ptr_b, words_b, z_b, phi_t, eta, data.y_sign[docs], np.zeros(len(docs), np.int64),
        kern.MODE_BINARY, data.C, data.margin, data.alpha, data.n_inner_sweeps, data.n_inner_burnin, seed, True,
        docs, bool(first),
    )


def step(seed, state: PAMedLDAState, data: PAMedLDAData):
    """One minibatch (module docstring): the inner iterations, then ``q_{t+1}`` and its draw
    of eta. Seeds of the inner iterations: ``numpy.random.default_rng(seed)``'s integers in
    [0, 2^31 - 1), two per iteration (the sweeps', then the classifier update's)."""
    t = state.iteration
    rng = np.random.default_rng(seed)
    docs = batch_documents(t, data)
    doc_ptr_b, _, words_b, _ = gather(data.doc_ptr, data.words, data.words, docs)
    z_b = np.zeros(words_b.shape[0], np.int32)
    y_b = pad_rows(data.y_sign[docs], data.rows)
    eta = state.eta
    counts_b = np.zeros_like(state.topic_counts)
    for i in range(data.n_inner_iter):
        sweep_seed, update_seed = (int(s) for s in rng.integers(2**31 - 1, size=2))
        phi_t = topic_weights(state.topic_counts + counts_b, data.topic_weights)
        z_b, ndk_mean, z_kept, _ = batch_sweeps(data, docs, doc_ptr_b, words_b, z_b, phi_t, eta, sweep_seed, i == 0)
        counts_b = kern.expected_topic_word(words_b, z_kept, data.n_topics, data.n_words)
        zbar = pad_rows(ndk_mean / data.lengths[docs][:, None], data.rows)
        with enable_x64():
            p_batch, b_batch, eta = augmented_update(update_seed, eta, state.precision, state.shift, zbar, y_b,
                                                     data.C, data.margin)
            p_batch, b_batch, eta = np.array(p_batch), np.array(b_batch), np.array(eta)
    n_docs = state.n_docs + len(docs)
    n_tokens = state.n_tokens + words_b.shape[0] * data.n_inner_sweeps * data.n_inner_iter
    new = PAMedLDAState(state.topic_counts + counts_b, state.precision + p_batch, state.shift + b_batch, eta, t + 1,
                        n_docs, n_tokens)
    return new, PAMedLDAInfo(n_docs, n_tokens)


def topic_word(state: PAMedLDAState, data: PAMedLDAData = None):
    """``E_q[Phi]`` (K, V): the Dirichlet parameters normalised per topic."""
    return state.topic_counts / state.topic_counts.sum(axis=1, keepdims=True)


def posterior_draws(key, state: PAMedLDAState, n_draws):
    """``n_draws`` pairs ``(Phi_s, eta_s)`` from ``q(Phi) q(eta)``: Phi (S, K, V) by normalised
    Gamma draws, eta (S, M, K) by the Cholesky factors of the precisions (NumPy, float64),
    from one generator seeded by ``key``."""
    rng = np.random.default_rng(int(host_seeds(key, 1)[0]))
    phi = rng.gamma(state.topic_counts[None], 1.0, size=(n_draws, *state.topic_counts.shape))
    phi /= phi.sum(axis=2, keepdims=True)
    chol = np.linalg.cholesky(state.precision)  # P_m = L_m L_m^T
    mean = np.linalg.solve(state.precision, state.shift[..., None])[..., 0]
    noise = rng.standard_normal((n_draws, *state.shift.shape))
    # eta = mean + L^-T u has covariance L^-T L^-1 = P^-1
    eta = mean[None] + np.linalg.solve(np.swapaxes(chol, -1, -2)[None], noise[..., None])[..., 0]
    return phi, eta


def compile_kernels(state: PAMedLDAState, data: PAMedLDAData):
    """Compile the classifier update and load (or compile) the numba kernels on one document."""
    docs = data.order[:1]
    doc_ptr_b, _, words_b, _ = gather(data.doc_ptr, data.words, data.words, docs)
    batch_sweeps(data, docs, doc_ptr_b, words_b, np.zeros(words_b.shape[0], np.int32),
                 topic_weights(state.topic_counts, data.topic_weights), state.eta, 0, True)
    with enable_x64():
        jax.block_until_ready(augmented_update(
            0, state.eta, state.precision, state.shift, np.zeros((data.rows, data.n_topics)),
            np.zeros((data.rows, data.y_sign.shape[1])), data.C, data.margin))
