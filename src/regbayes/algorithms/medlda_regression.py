"""Gibbs MedLDA regression with data augmentation: LDA for the words and the
epsilon-insensitive loss on a real response (paper 002, Appendix B), sampled on the
host-loop protocol of :func:`regbayes.inference.run` (``state = init(seed, data)``,
``state, info = step(seed, state, data)``, hooks :func:`compile_kernels` and
:func:`divergence_check`), as :mod:`regbayes.algorithms.medlda_gibbs` samples classification.

Model. LDA with Theta and Phi collapsed; document d has the average topic assignment
``zbar_d`` (``n_d / N_d``) and the prediction ``f_d = eta^T zbar_d + b``; the response enters
through the pseudo-likelihood of the epsilon-insensitive loss (Appendix B's ``R_eps``, the
function ``g_2`` of Lemma 11)::

    psi(y_d | z_d, eta, b) = exp(-C max(0, |y_d - f_d| - eps)) = exp(-2c max(0, |y_d - f_d| - eps)),

``c = C / 2``: the library's convention for the classification hinge, whose pseudo-likelihood
is ``exp(-C (l - y f)_+)`` with paper 001's ``c' = C / 2`` in the augmentation
(:mod:`regbayes.algorithms.gibbs_svm`). Prior ``eta ~ N(0, nu^2 I_K)``; the intercept b
(``fit_intercept``) has a flat prior. Because ``sum_k zbar_dk = 1``, b and the mean of eta
move f alike: the flat prior lets b carry the level of y, so that ``nu`` shrinks only the
differences between topics. As in Gibbs MedLDA (paper 000, section 4.1), the loss is on the
sampled prediction ``eta^T zbar_d + b`` (a Gibbs regressor), where Appendix B's variational
MedLDA puts it on the expected prediction ``E_q[eta^T zbar_d]``; the loss being convex, the
expected Gibbs loss bounds the loss of the expected prediction from above (Jensen).

Augmentation. With ``eps >= 0`` at most one of ``Delta - eps`` and ``-Delta - eps``
(``Delta = y - f``) is positive, so

    max(0, |Delta| - eps) = max(0, zeta) + max(0, zeta*),  zeta = y - f - eps,  zeta* = f - y - eps,

and each one-sided hinge gets Polson & Scott's scale mixture (paper 001, eq. 12)::

    exp(-2c max(0, u)) = int_0^inf (2 pi lam)^(-1/2) exp(-(lam + c u)^2 / (2 lam)) dlam.       (A)

Expanding ``(lam + c u)^2 / (2 lam) = lam / 2 + c u + c^2 u^2 / (2 lam)``, the two linear
terms ``-c zeta - c zeta* = 2 c eps`` do not depend on f, so the augmented factor of
document d is, as a function of f_d,

    exp(-c^2/2 [w_d (f_d - y_d + eps)^2 + w*_d (f_d - y_d - eps)^2]),   w = 1/lam, w* = 1/lam*  (B)

a Gaussian pseudo-observation of f_d: precision ``c^2 s_d`` and centre ``r_d / s_d`` with
``s_d = w_d + w*_d``, ``r_d = w_d (y_d - eps) + w*_d (y_d + eps)``. The conditionals:

1. ``(eta, b) | Z, lam``: the prior times (B), a Gaussian (weighted least squares with a
   ridge on eta). With ``x_d = [zbar_d, 1]`` (without the 1 when there is no intercept)
   and ``P0 = diag(1/nu^2 I_K, 0)``::

       Sigma^{-1} = P0 + c^2 sum_d s_d x_d x_d^T,   mean = Sigma c^2 sum_d r_d x_d.

2. ``1/lam_d | Z, eta, b ~ IG(1 / (c |zeta_d|), 1)`` and ``1/lam*_d ~ IG(1 / (c |zeta*_d|), 1)``
   (the integrand of (A) is a generalised inverse Gaussian in lam; paper 001, eq. 17).

3. the token ``z_dn`` (paper 001, eq. 13 with ``zbar_d`` in place of ``x_i``; paper 000,
   eq. 22 with the augmented factor in place of psi): the collapsed LDA term times (B)
   at the candidate ``zbar_d(k)``. With ``U(k) = eta^T (n_d^-n + e_k)``, ``f_d(k) = U(k) / N_d + b``,
   the log of (B) is, up to terms free of k,

       a U(k) - b2 U(k)^2,   a = c^2 (r_d - s_d b) / N_d,   b2 = c^2 s_d / (2 N_d^2),

   the form of one augmented binary hinge in the classification sweep
   (:func:`regbayes.algorithms.lda_kernels.document_terms`: ``a = c y (1 + c l / omega) / N_d``,
   ``b2 = c^2 / (2 omega N_d^2)``: the label is a coefficient of the linear term only, its
   square being 1 for +-1 labels) with margin ``l = 0``, ``1/omega = s_d`` and the real label
   ``y = c (r_d - s_d b)``. The sweep is therefore the classification kernel
   :func:`regbayes.algorithms.lda_kernels.gibbs_medlda_sweep` with these arguments
   (:func:`sweep_arguments`), and keeps its incremental O(K) form:
   ``A_k - 2 (G n_d^-n)_k - Q_k`` with ``A = a eta``, ``Q = b2 eta^2``, ``G = b2 eta eta^T``.

Lemma 15 (paper 002). The variational MedLDA posterior is the prior-times-likelihood
tilted by ``exp(sum_d (omega_d - omega'_d) eta^T zbar_d)`` (eq. 22), with ``omega_d, omega'_d``
in ``[0, C]`` the multipliers of the two constraints ``y_d - f_d <= eps + xi_d`` and
``f_d - y_d <= eps + xi*_d``. Here the derivative of the log of (B) in f_d is
``c^2 w_d zeta_d - c^2 w*_d zeta*_d``, whose expectation over the conditional of step 2
(``E[w_d] = 1 / (c |zeta_d|)``) is ``c sign(zeta_d) - c sign(zeta*_d)``: C above the tube,
-C below, 0 inside it. So ``c^2 E[w_d] zeta_d + c`` and ``c^2 E[w*_d] zeta*_d + c`` play the
parts of ``omega_d`` and ``omega'_d`` (each C when its constraint is violated, 0 when it holds),
and their difference is the expected slope of the augmented log factor: the sampler's
counterpart of eq. 22's linear tilt. (Lemma 15 writes the conjugate term as
``g_2^*(omega_d; -y_d + eps, y_d + eps)`` for a pair ``omega_d = (omega_d, omega'_d)``; read it
as ``omega_d (eps - y_d) + omega'_d (eps + y_d) + I(0 <= omega_d, omega'_d <= C)``, which equals
Lemma 11's ``g_2^*(omega'_d - omega_d; y_d, eps)`` when ``omega_d omega'_d = 0``, as at the optimum.)

One iteration: the token sweep (step 3, numba), then step 2 and step 1 (float64 JAX, on the
documents padded with zero-weight rows to a few sizes: :func:`regbayes.algorithms.medlda_gibbs.bucket`).
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..potentials.topics import collapsed_topic_word
from ..precision import enable_x64
from ..rng import KEY_IMPL
from ..samplers.augmentation import inverse_gaussian
from . import lda_kernels as kern
from .medlda_gibbs import bucket, pad_rows


def epsilon_insensitive(residual, epsilon):
    """``max(0, |residual| - eps)`` (Appendix B's loss, Lemma 11's ``g_2 / C``)."""
    return np.maximum(0.0, np.abs(residual) - epsilon)


def pseudo_observations(y, intercept, inv_lam, inv_lam_star, epsilon):
    """``(s, r)`` of (B) (module docstring): ``s = w + w*`` and ``r = w (y - eps) + w* (y + eps)``,
    then shifted by the intercept, ``r - s b`` (the centre of the pseudo-observation of
    ``eta^T zbar_d``)."""
    s = inv_lam + inv_lam_star
    r = inv_lam * (y - epsilon) + inv_lam_star * (y + epsilon)
    return s, r - s * intercept


def sweep_arguments(y, intercept, inv_lam, inv_lam_star, epsilon, C):
    """The classification sweep's ``(y_sign, inv_omega)`` (D, 1) that give the regression
    token conditional (module docstring, step 3): the label ``c (r_d - s_d b)`` and
    ``1/omega = s_d``, with margin 0."""
    s, centred = pseudo_observations(y, intercept, inv_lam, inv_lam_star, epsilon)
    return (0.5 * C * centred)[:, None], s[:, None]


def draw_inverse_scales(key, f, y, C, epsilon):
    """Step 2 of the module docstring: ``1/lam ~ IG(1 / (c |zeta|), 1)`` and
    ``1/lam* ~ IG(1 / (c |zeta*|), 1)`` (paper 001, eq. 17) for the predictions ``f`` and
    responses ``y`` (R,), ``c = C / 2``. Returns ``(inv_lam, inv_lam_star)``."""
    c = 0.5 * C
    k_lam, k_star = jax.random.split(key)
    tiny = jnp.finfo(f.dtype).tiny ** 0.5  # guard zeta = 0 (mean 1/(c|zeta|) = inf)
    zeta = y - f - epsilon
    zeta_star = f - y - epsilon
    inv_lam = inverse_gaussian(k_lam, 1.0 / (c * jnp.maximum(jnp.abs(zeta), tiny)), 1.0)
    inv_lam_star = inverse_gaussian(k_star, 1.0 / (c * jnp.maximum(jnp.abs(zeta_star), tiny)), 1.0)
    return inv_lam, inv_lam_star


def coef_conditional(design, s, centred, C, prior_precision):
    """Step 1 of the module docstring: the Gaussian ``(eta, b) | Z, lam``, as its mean and the
    lower Cholesky factor of its precision ``P0 + c^2 sum_d s_d x_d x_d^T``. ``design`` (R, P)
    holds the rows ``x_d``, ``s`` and ``centred`` (R,) are :func:`pseudo_observations` with
    b = 0 (rows with ``s = 0`` change nothing), ``prior_precision`` (P,) the diagonal of P0."""
    c2 = (0.5 * C) ** 2
    precision = jnp.diag(prior_precision) + c2 * (design.T * s) @ design
    chol = jnp.linalg.cholesky(precision)
    return jax.scipy.linalg.cho_solve((chol, True), c2 * design.T @ centred), chol


def design_matrix(zbar, mask, prior_scale, fit_intercept):
    """Rows ``x_d = [zbar_d, 1]`` (``[zbar_d]`` without intercept; padding rows ``mask = 0`` get
    0 for the 1) and the prior precisions ``diag(P0) = (1/nu^2, ..., 1/nu^2, 0)``: flat on b."""
    K = zbar.shape[1]
    ridge = jnp.full(K, 1.0 / prior_scale**2, zbar.dtype)
    if not fit_intercept:
        return zbar, ridge
    return jnp.concatenate([zbar, mask[:, None]], axis=1), jnp.concatenate([ridge, jnp.zeros(1, zbar.dtype)])


@functools.partial(jax.jit, static_argnames=("fit_intercept",))
def augmentation_update(seed, coef, intercept, zbar, y, mask, C, epsilon, prior_scale, *, fit_intercept):
    """Steps 2 then 1 of the module docstring with the key of the integer ``seed``:
    ``1/lam, 1/lam* | Z, eta, b`` (:func:`draw_inverse_scales`), then ``(eta, b) | Z, lam``
    (:func:`coef_conditional`). ``zbar`` (R, K), ``y`` and ``mask`` (R,): rows with mask 0
    are padding and change nothing. Returns ``(coef (K,), intercept, inv_lam (R,),
    inv_lam_star (R,))``. Run it in float64."""
    k_scales, k_coef = jax.random.split(jax.random.key(seed, impl=KEY_IMPL))
    inv_lam, inv_lam_star = draw_inverse_scales(k_scales, zbar @ coef + intercept, y, C, epsilon)
    s, centred = pseudo_observations(y, 0.0, mask * inv_lam, mask * inv_lam_star, epsilon)
    design, prior_precision = design_matrix(zbar, mask, prior_scale, fit_intercept)
    mean, chol = coef_conditional(design, s, centred, C, prior_precision)
    noise = jax.random.normal(k_coef, mean.shape, zbar.dtype)
    draw = mean + jax.scipy.linalg.solve_triangular(chol.T, noise, lower=False)
    K = zbar.shape[1]
    intercept = draw[K] if fit_intercept else jnp.zeros((), zbar.dtype)
    return draw[:K], intercept, inv_lam, inv_lam_star


class RegressionData(NamedTuple):
    """The corpus as flat tokens (document ``d`` owns ``words[doc_ptr[d]:doc_ptr[d+1]]``),
    the responses ``y`` (D,), the priors and the loss's constants; ``rows`` is the padded
    row count of the update, ``y_padded``, ``mask`` and ``constants`` its float64 JAX inputs."""

    doc_ptr: np.ndarray
    words: np.ndarray
    lengths: np.ndarray
    y: np.ndarray
    n_topics: int
    n_words: int
    alpha: float
    beta: float
    C: float
    epsilon: float
    prior_scale: float
    fit_intercept: bool
    rows: int
    y_padded: jnp.ndarray
    mask: jnp.ndarray
    constants: tuple


class RegressionState(NamedTuple):
    """Topic assignments ``z`` and their count tables ``ndk`` (D, K), ``nwk`` (V, K), ``nk``
    (K,); regression weights ``coef`` (K,) and ``intercept``; augmentation variables
    ``inv_lam``, ``inv_lam_star`` (D,) (``1/lam``, ``1/lam*``); documents and tokens swept."""

    z: np.ndarray
    ndk: np.ndarray
    nwk: np.ndarray
    nk: np.ndarray
    coef: np.ndarray
    intercept: float
    inv_lam: np.ndarray
    inv_lam_star: np.ndarray
    n_docs: int
    n_tokens: int


class RegressionInfo(NamedTuple):
    n_docs: int  # documents swept so far (cumulative)
    n_tokens: int  # tokens swept so far (cumulative)
    loss: float  # mean epsilon-insensitive loss of eta^T zbar_d + b on the training responses
    intercept: float  # b after the iteration


def make_data(doc_ptr, words, y, *, n_topics, n_words, alpha, beta, C, epsilon, prior_scale, fit_intercept):
    """:class:`RegressionData` of a corpus (empty documents removed beforehand)."""
    y = np.asarray(y, np.float64)
    rows = bucket(y.shape[0])
    with enable_x64():
        y_padded = jnp.asarray(pad_rows(y, rows))
        mask = jnp.asarray(pad_rows(np.ones_like(y), rows))
        constants = tuple(jnp.asarray(v, jnp.float64) for v in (C, epsilon, prior_scale))
    return RegressionData(doc_ptr, words, np.diff(doc_ptr).astype(np.float64), y, int(n_topics), int(n_words),
                          float(alpha), float(beta), float(C), float(epsilon), float(prior_scale), bool(fit_intercept),
                          rows, y_padded, mask, constants)


def init(seed, data: RegressionData) -> RegressionState:
    """Uniform random topics (stream ``seed``), eta = 0, b = the median of y (0 without an
    intercept), every ``1/lam`` and ``1/lam*`` = 1."""
    K, V = data.n_topics, data.n_words
    D = data.y.shape[0]
    z = kern.random_assignments(data.words.shape[0], K, int(seed))
    ndk, nwk, nk = kern.count_tables(data.doc_ptr, data.words, z, K, V)
    intercept = float(np.median(data.y)) if data.fit_intercept else 0.0
    return RegressionState(z, ndk, nwk, nk, np.zeros(K), intercept, np.ones(D), np.ones(D), 0, 0)


def token_sweep(seed, state: RegressionState, data: RegressionData, doc_ptr=None, n_docs=None):
    """Step 3 of the module docstring: one collapsed Gibbs sweep over every token (of the
    first ``n_docs`` documents, tokens up to ``doc_ptr[-1]``, when given) with eta, b and the
    augmentation variables of ``state``. Returns new ``(z, ndk, nwk, nk)``; ``state`` is not
    modified."""
    y_sign, inv_omega = sweep_arguments(data.y, state.intercept, state.inv_lam, state.inv_lam_star, data.epsilon, data.C)
    doc_ptr = data.doc_ptr if doc_ptr is None else doc_ptr
    n_docs = y_sign.shape[0] if n_docs is None else n_docs
    n_tokens = int(doc_ptr[-1])
    return kern.gibbs_medlda_sweep(doc_ptr, data.words[:n_tokens], state.z[:n_tokens], state.ndk[:n_docs], state.nwk,
                                   state.nk, state.coef[None, :], y_sign[:n_docs], inv_omega[:n_docs], data.alpha,
                                   data.beta, data.C, 0.0, seed)


def step(seed, state: RegressionState, data: RegressionData):
    """One iteration (module docstring): the token sweep, then lam, lam* and (eta, b)."""
    z, ndk, nwk, nk = token_sweep(seed, state, data)
    zbar = ndk / data.lengths[:, None]
    with enable_x64():
        coef, intercept, inv_lam, inv_lam_star = augmentation_update(
            seed, state.coef, state.intercept, pad_rows(zbar, data.rows), data.y_padded, data.mask, *data.constants,
            fit_intercept=data.fit_intercept,
        )
        D = data.y.shape[0]
        coef = np.array(coef)  # copies: the sweep is compiled for writable arrays
        intercept = float(intercept)
        inv_lam = np.array(np.asarray(inv_lam)[:D])
        inv_lam_star = np.array(np.asarray(inv_lam_star)[:D])
    loss = float(np.mean(epsilon_insensitive(data.y - zbar @ coef - intercept, data.epsilon)))
    n_docs = state.n_docs + data.y.shape[0]
    n_tokens = state.n_tokens + data.words.shape[0]
    new = RegressionState(z, ndk, nwk, nk, coef, intercept, inv_lam, inv_lam_star, n_docs, n_tokens)
    return new, RegressionInfo(n_docs, n_tokens, loss, intercept)


def topic_word(state: RegressionState, data: RegressionData):
    """The topics (K, V) of the current counts: ``(n_kw + beta) / (n_k + V beta)``."""
    return collapsed_topic_word(state.nwk, state.nk, data.beta)


def compile_kernels(state: RegressionState, data: RegressionData):
    """Compile the augmentation update and load (or compile) the numba sweep on one document."""
    token_sweep(0, state, data, doc_ptr=data.doc_ptr[:2], n_docs=1)
    with enable_x64():
        zbar = np.zeros((data.rows, data.n_topics))
        jax.block_until_ready(augmentation_update(0, state.coef, state.intercept, zbar, data.y_padded, data.mask,
                                                  *data.constants, fit_intercept=data.fit_intercept))


def coef_bound(data: RegressionData) -> float:
    """Largest ``||eta||^2`` a posterior draw can plausibly have (as
    :func:`regbayes.potentials.weight_norm_bound` for the hinge): with
    ``U(eta, b) = ||eta||^2 / (2 nu^2) + C sum_d max(0, |y_d - f_d| - eps)`` convex, its
    minimum is at most ``U(0, b0)`` (b0 the median of y with an intercept, else 0), and a
    log-concave density in P = K + 1 dimensions puts negligible mass where ``U - min U``
    exceeds ``P + 10 sqrt(P)``."""
    b0 = float(np.median(data.y)) if data.fit_intercept else 0.0
    P = data.n_topics + 1
    u0 = data.C * float(np.sum(epsilon_insensitive(data.y - b0, data.epsilon)))
    return 2.0 * data.prior_scale**2 * (u0 + P + 10.0 * np.sqrt(P))


def divergence_check(data: RegressionData):
    """``check(state, info)`` for :class:`regbayes.inference.Algorithm`: a message when the
    weights are not finite or ``||eta||^2`` leaves :func:`coef_bound`, naming ``C``."""
    bound = coef_bound(data)

    def check(state, info):
        del info
        norm2 = float(np.sum(np.square(state.coef)))
        if np.isfinite(norm2) and norm2 <= bound and np.isfinite(state.intercept):
            return None
        return (f"the regression weights diverged (||eta||^2 = {norm2:.3g}, beyond the {bound:.3g} no posterior "
                f"draw reaches; intercept {state.intercept:.3g}); use a smaller C")

    return check
