"""``BayesianSVC``: the Bayesian linear SVM of paper 000, section 3.3, as a scikit-learn classifier.

Posterior (a Gibbs classifier, RegBayes with the expected hinge loss, eq. 3):

    p(eta | D)  ∝  N(eta; 0, nu^2 I)  prod_d exp(-c * max(0, l - y_d eta^T x_d))

binary, or with the Crammer–Singer hinge ``max(0, l + max_{y != y_d} eta_y^T x_d -
eta_{y_d}^T x_d)`` for three or more classes (eqs. 16–17). The Gibbs sampler with data
augmentation handles several classes one-vs-rest (paper 000, section 5.2), so its
multi-class posterior is the product of K binary ones.

With ``fit_intercept=True`` a constant feature 1 is appended, so the intercept has the
same N(0, nu^2) prior as the weights.
"""
from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import schedules
from ..rng import make_key
from ..precision import maybe_x64
from ..inference import sample, to_inference_data
from ..algorithms import gibbs_svm
from ..potentials import SVMData, build_potential, csr_to_padded
from ..samplers import shmc, srwm, ssgld, ssgnht
from ..validation import check_choice, check_finite_features, check_int, check_positive

SAMPLERS = ("gibbs", "shmc", "ssgld", "ssgnht", "srwm")
SCHEDULES = ("adagrad", "polynomial", "constant")
MINIBATCH_SAMPLERS = ("ssgld", "ssgnht", "srwm")
MAX_GIBBS_FEATURES = 5000

# The kernels run in whitened coordinates (regbayes.samplers.base): the driver starts
# from T0 = scale * I, with scale set from sigma_ref = (1/nu^2 + c N mean(x^2))^(-1/2)
# (the Gaussian analogue of the posterior width; see BayesianSVC._initial_scale), and
# re-estimates T from warm-up draws. Step sizes are therefore relative to the
# posterior's scale; these defaults were chosen on standardised breast-cancer data
# against a long Gibbs run. srwm's is 2.38 / sqrt(P).
DEFAULT_RELATIVE_STEP = {"ssgld": 0.5, "ssgnht": 0.15, "shmc": 0.3, "srwm": 2.38}
DEFAULT_ADAGRAD_STEP = 0.4
# Thinning: a minibatch step costs O(batch_size * d), so tens of them go into one draw.
DEFAULT_THIN = {"ssgld": 100, "ssgnht": 50, "srwm": 50, "shmc": 1, "gibbs": 1}
# Constant-step ssgld/ssgnht also cap h at factor * sqrt(batch_size / N) (see _step_schedule).
# For ssgld the cap reproduces the default above at breast cancer's N = 398, batch 100;
# for ssgnht 0.3 diverged on the Higgs-shaped set at N = 1e5 after warm-up, 0.15 did not
# (1e5 and 1e6, two seeds each) at the price of slower mixing on small data.
NOISE_STEP_FACTOR = {"ssgld": 1.0, "ssgnht": 0.15}


def _chain_mean(values):
    """Mean over chains (axis 0), ignoring NaN; NaN where every chain has NaN (srwm records
    no potential), without numpy's empty-slice warning."""
    counts = np.sum(~np.isnan(values), axis=0)
    sums = np.nansum(values, axis=0)
    return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


class BayesianSVC(ClassifierMixin, BaseEstimator):
    """Bayesian linear SVM with a full posterior over the weights.

    Parameters
    ----------
    C : float, default=1.0
        c, the scale of the hinge pseudo-likelihood ``exp(-c max(0, l - y f))``.
    margin : float, default=1.0
        l, the margin (cost of a wrong prediction).
    prior_scale : float, default=1.0
        nu, the standard deviation of the Gaussian prior on the weights and intercept.
    sampler : {"ssgld", "ssgnht", "shmc", "gibbs", "srwm"}, default="ssgld"
        Inference engine: stochastic subgradient Langevin (eq. 13), stochastic subgradient
        Nosé–Hoover thermostat (eq. 14), subgradient HMC with MH correction (eq. 9),
        Gibbs with data augmentation (exact), stochastic random-walk Metropolis.
    n_draws, n_warmup, n_chains, thin : int
        Draws kept per chain, warm-up steps discarded, chains run side by side (vmap),
        and the thinning interval. ``n_warmup=None`` and ``thin=None`` pick the
        sampler's defaults: 1000 and 1 for the full-data samplers (gibbs, shmc), whose
        iteration is a sweep over all rows; 10,000 warm-up steps and thin 100 (ssgld) or
        50 (ssgnht, srwm) for the minibatch samplers, whose iteration costs
        O(batch_size * d) and which need tens of iterations per effective draw
        (``DEFAULT_THIN``). Measured on breast cancer, one chain, 8 seeds, posterior-mean
        relative error against 4 x 20,000 Gibbs draws (``benchmarks/posterior_mean_error.py``;
        1000 independent draws would be 3.6% away): SSGLD (AdaGrad, h = 0.4, thin 100)
        4.4%, SSGNHT (thin 50) 4.9%. Against a 4 x 5000-draw reference, SSGLD had 4.5% with
        h = 0.4 and thin 100, 6.1% with thin 50, 5.1% with h = 0.5 and thin 100.
    batch_size : int, default=100
        Minibatch size |D~| of the stochastic samplers (ssgld, ssgnht, srwm's test
        increment). Larger than the number of rows: clipped to it with a warning.
    step_size : float or callable, optional
        h (``t -> h_t`` if callable), relative to the posterior's scale: the samplers run
        in coordinates whitened by a transform estimated during warm-up (see
        :func:`regbayes.inference.sample`). Default ``DEFAULT_RELATIVE_STEP``; for srwm,
        the proposal standard deviation in those coordinates. Without warm-up
        (``n_warmup=0``) the transform stays at its start ``T0 = sqrt(nu sigma_ref) I``
        (``sigma_ref I`` for shmc; ``sigma_ref`` as in the module comment), and ssgnht's
        default step shrinks by ``sigma_ref / sqrt(nu sigma_ref)`` to match, and ssgnht
        starts at rest (momentum 0, not eq. 14's N(0, I) draw).
    schedule : {"adagrad", "polynomial", "constant"}, default="adagrad"
        Step schedule of ssgld and ssgnht. "adagrad" is SSGLD's per-coordinate
        preconditioner (constant h); other samplers read it as "constant".
        "polynomial" is ``h0 (1 + t)^(-0.33)`` with h0 set so that the step at the end of
        warm-up equals the constant default.
    fit_intercept : bool, default=True
    prediction : {"mean", "gibbs"}, default="mean"
        ``predict`` by the posterior-mean discriminant, or by one posterior draw per call
        (the Gibbs classifier).
    n_leapfrog : int, default=10
        Leapfrog steps per shmc iteration.
    random_state : int, default=0
    progress : bool, default=False
        Show a progress bar.
    """

    def __init__(
        self,
        C=1.0,
        margin=1.0,
        prior_scale=1.0,
        sampler="ssgld",
        n_draws=1000,
        n_warmup=None,
        n_chains=1,
        thin=None,
        batch_size=100,
        step_size=None,
        schedule="adagrad",
        fit_intercept=True,
        prediction="mean",
        n_leapfrog=10,
        random_state=0,
        progress=False,
    ):
        self.C = C
        self.margin = margin
        self.prior_scale = prior_scale
        self.sampler = sampler
        self.n_draws = n_draws
        self.n_warmup = n_warmup
        self.n_chains = n_chains
        self.thin = thin
        self.batch_size = batch_size
        self.step_size = step_size
        self.schedule = schedule
        self.fit_intercept = fit_intercept
        self.prediction = prediction
        self.n_leapfrog = n_leapfrog
        self.random_state = random_state
        self.progress = progress

    # ------------------------------------------------------------------ checks
    def _check_params(self, n_samples):
        check_positive("C", self.C)
        check_positive("margin", self.margin)
        check_positive("prior_scale", self.prior_scale)
        check_choice("sampler", self.sampler, SAMPLERS)
        check_int("n_draws", self.n_draws, 1)
        if self.n_warmup is not None:
            check_int("n_warmup", self.n_warmup, 0)
        check_int("n_chains", self.n_chains, 1)
        if self.thin is not None:
            check_int("thin", self.thin, 1)
        check_int("batch_size", self.batch_size, 1)
        check_int("n_leapfrog", self.n_leapfrog, 1)
        check_choice("prediction", self.prediction, ("mean", "gibbs"))
        if not callable(self.schedule):
            check_choice("schedule", self.schedule, SCHEDULES)
        if self.step_size is not None and not callable(self.step_size):
            check_positive("step_size", self.step_size)
        batch_size = self.batch_size
        if batch_size > n_samples:
            warnings.warn(
                f"batch_size={batch_size} is larger than the {n_samples} training rows; "
                f"using batch_size={n_samples} (full data)",
                UserWarning,
                stacklevel=3,
            )
            batch_size = n_samples
        return batch_size

    def _prepare_X(self, X, dtype):
        """Dense JAX array or padded sparse rows, with the intercept column appended."""
        if sp.issparse(X):
            return csr_to_padded(X, dtype=dtype, intercept=self.fit_intercept)
        X = np.asarray(X, dtype=dtype)
        if self.fit_intercept:
            X = np.hstack([X, np.ones((X.shape[0], 1), dtype=dtype)])
        return jnp.asarray(X)

    # ------------------------------------------------------------------ steps
    def _sigma_ref(self, X, n):
        sq = X.multiply(X).mean() if sp.issparse(X) else float(np.mean(np.square(X)))
        if self.fit_intercept:
            sq = (sq * X.shape[1] + 1.0) / (X.shape[1] + 1)
        return 1.0 / math.sqrt(1.0 / self.prior_scale**2 + self.C * n * float(sq))

    def _initial_scale(self, X, n):
        """Scale of the starting transform ``T0 = scale * I``.

        ``sigma_ref`` (the Gaussian analogue of the posterior width) underestimates the
        width of a hinge posterior, where only points near the margin inform the weights,
        and the prior scale ``nu`` bounds it from above. SSGLD (whose AdaGrad bounds each
        move), SSGNHT (whose thermostat damps the first large moves) and SRWM (which
        rejects bad moves) start from the geometric mean ``sqrt(nu * sigma_ref)``, since
        warm-up shrinks an over-large T faster than it grows a small one; subgradient HMC,
        whose momentum would blow up with an over-large T in the first steps, starts from
        ``sigma_ref``. Measured for SSGNHT on breast cancer (one chain, defaults): posterior-
        mean error 3.3-6.6% from the geometric mean, 16-27% from ``sigma_ref``, where the
        too-small T of the first warm-up window is never grown back. Without warm-up
        (``n_warmup=0``) T is never re-estimated: SSGNHT then shrinks its default step by
        ``sigma_ref / scale`` (see :meth:`_step_schedule`).
        """
        return self._scale_for(self._sigma_ref(X, n))

    def _scale_for(self, sigma_ref):
        """:meth:`_initial_scale` given ``sigma_ref`` (one pass over X fewer)."""
        if self.sampler == "shmc":
            return sigma_ref
        return math.sqrt(self.prior_scale * sigma_ref)

    def _run_lengths(self):
        """``(n_warmup, thin)`` with the sampler-specific defaults filled in."""
        minibatch = self.sampler in MINIBATCH_SAMPLERS
        n_warmup = self.n_warmup if self.n_warmup is not None else (10_000 if minibatch else 1000)
        thin = self.thin if self.thin is not None else DEFAULT_THIN[self.sampler]
        return n_warmup, thin

    def _step_schedule(self, X, n, batch_size):
        if self.sampler == "gibbs":
            return 1.0, None
        preconditioner = "adagrad" if (self.sampler == "ssgld" and self.schedule == "adagrad") else None
        if self.step_size is not None:
            h = self.step_size
        elif preconditioner:
            h = DEFAULT_ADAGRAD_STEP
        else:
            h = DEFAULT_RELATIVE_STEP[self.sampler]
            if self.sampler == "srwm":
                h /= math.sqrt(X.shape[1] + int(self.fit_intercept))
            elif self.sampler in ("ssgld", "ssgnht"):
                # Minibatch noise: in whitened coordinates the variance V of the
                # subgradient estimate grows like N / batch_size, and both kernels stay
                # stable and nearly unbiased only while h^2 V is O(1).
                h = min(h, NOISE_STEP_FACTOR[self.sampler] * math.sqrt(batch_size / n))
                if self.sampler == "ssgnht" and self._run_lengths()[0] == 0:
                    # No warm-up re-estimates T: the noise term h^2 V grows with T^2, so a
                    # start from T0 = scale * I > sigma_ref * I keeps h^2 V at the cap's
                    # level with h * sigma_ref / scale. Higgs-shaped data, 20,000 steps
                    # from 0, 3-5 seeds, posterior-mean error against Gibbs: 5.7 / 7.1 / 77 %
                    # at N = 1e4 / 1e5 / 1e6 from T0 = sigma_ref, 5.1 / 2.1 / 4.9 % this
                    # way (the heated thermostat crawls less far from a wider T0); the
                    # same wider T0 without the smaller h diverged at N = 1e4.
                    sigma_ref = self._sigma_ref(X, n)
                    h *= sigma_ref / self._scale_for(sigma_ref)
        if callable(self.schedule):
            return self.schedule, preconditioner
        if self.schedule == "polynomial" and self.sampler in ("ssgld", "ssgnht") and not callable(h):
            gamma = 0.33
            h0 = h * (1.0 + max(self._run_lengths()[0], 1)) ** gamma
            return schedules.polynomial(h0, b=1.0, gamma=gamma), preconditioner
        return h, preconditioner

    def _kernel(self, batch_size, preconditioner):
        if self.sampler == "gibbs":
            return gibbs_svm()
        if self.sampler == "shmc":
            return shmc(build_potential(None), self.n_leapfrog, True)
        potential = build_potential(batch_size)
        if self.sampler == "ssgld":
            return ssgld(potential, preconditioner)
        if self.sampler == "ssgnht":
            # Without warm-up the chain starts at rest (r_0 = 0) instead of eq. 14's
            # r_0 ~ N(0, I): from eta = 0, far from the posterior, r_0 is a random kick that
            # the minibatch subgradients must average away before the direction is right.
            # Higgs-shaped data, N = 1e6, 7 seeds: 55 (28-76) steps to the Gibbs accuracy
            # instead of 128 (73-153), the same 4.8-4.9 % posterior-mean error
            # (benchmarks/ssgnht_start.py). With warm-up the start is forgotten before
            # the first draw, and eq. 14's is kept.
            start = "zero" if self._run_lengths()[0] == 0 else "normal"
            return ssgnht(potential, initial_momentum=start)
        return srwm(potential)

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Sample the posterior of the weights given training data ``X`` (dense or sparse), ``y``."""
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32], copy=False)
        check_finite_features(X)
        check_classification_targets(y)
        n, d = X.shape
        batch_size = self._check_params(n)
        encoder = LabelEncoder().fit(y)
        self.classes_ = encoder.classes_
        if len(self.classes_) < 2:
            raise ValueError(f"y has 1 class ({self.classes_[0]!r}); a classifier needs at least two")
        codes = encoder.transform(y)
        n_classes = len(self.classes_)
        use_x64 = self.sampler == "gibbs"
        if use_x64 and d + int(self.fit_intercept) > MAX_GIBBS_FEATURES:
            raise ValueError(
                f"sampler='gibbs' forms a dense {d} x {d} precision matrix per sweep; with "
                f"{d} features use 'ssgld' or 'ssgnht' (limit {MAX_GIBBS_FEATURES})"
            )
        h, preconditioner = self._step_schedule(X, n, batch_size)
        n_warmup, thin = self._run_lengths()
        kernel = self._kernel(batch_size, preconditioner)
        dim = d + int(self.fit_intercept)
        shape = (dim,) if n_classes == 2 else (n_classes, dim)
        key = make_key(self.random_state)
        with maybe_x64(use_x64):
            dtype = np.float64 if use_x64 else np.float32
            labels = (2.0 * codes - 1.0).astype(dtype) if n_classes == 2 else codes.astype(np.int32)
            data = SVMData(
                self._prepare_X(X, dtype),
                jnp.asarray(labels),
                jnp.asarray(self.C, dtype),
                jnp.asarray(self.margin, dtype),
                jnp.asarray(self.prior_scale, dtype),
            )
            init = jnp.zeros((self.n_chains, *shape), dtype)
            result = sample(
                kernel,
                data,
                init,
                key,
                n_warmup=n_warmup,
                n_draws=self.n_draws,
                thin=thin,
                step_size=h,
                initial_scale=self._initial_scale(X, n),
                progress=self.progress,
                desc=f"BayesianSVC[{self.sampler}]",
            )
        self._store(result, shape, d)
        # Gibbs runs one binary problem per class (one-vs-rest) and records their summed
        # potential; the other samplers record one Crammer–Singer potential.
        n_problems = n_classes if (self.sampler == "gibbs" and n_classes > 2) else 1
        self._warn_if_escaped(result.potential, n_problems * n, int(np.prod(shape)))
        return self

    def _warn_if_escaped(self, potential, n, dim):
        """Warn when the chains' potential settles far above its value at the start.

        At the start (eta = 0) every hinge equals the margin: U(0) = C n l, with ``n`` the
        rows summed over the problems whose potential is recorded. A chain in the
        posterior's typical set keeps U within about dim / 2 of its minimum, which is at
        most U(0). A median over the second half of the draws above 10 (U(0) + dim) means
        the chain has left the posterior (a step too large for the data) while every value
        stayed finite, which :class:`~regbayes.inference.DivergenceError` does not catch.
        """
        second_half = potential[:, potential.shape[1] // 2 :]
        if not np.isfinite(second_half).any():
            return  # srwm records no potential
        settled = np.nanmedian(second_half, axis=1)
        start = self.C * n * self.margin
        limit = 10.0 * (start + dim)
        escaped = np.nonzero(settled > limit)[0]
        if len(escaped):
            warnings.warn(
                f"sampler '{self.sampler}': the potential of chain(s) {escaped.tolist()} settled at "
                f"{settled[escaped].max():.3g}, far above its value {start:.3g} at the start "
                f"(eta = 0): the chains have left the posterior. Lower step_size.",
                RuntimeWarning,
                stacklevel=2,
            )

    def _store(self, result, shape, d):
        draws = result.positions.reshape(-1, *shape).astype(np.float64)
        weights, intercepts = (draws[..., :d], draws[..., d]) if self.fit_intercept else (draws, np.zeros(draws.shape[:-1]))
        self.coef_samples_ = weights
        self.intercept_samples_ = intercepts
        self.coef_ = weights.mean(axis=0)
        self.intercept_ = intercepts.mean(axis=0)
        self.idata_ = to_inference_data(result, var_name="eta")
        self.trace_ = {
            "iteration": result.iteration,
            "wall_time": result.wall_time,
            "potential": _chain_mean(result.potential),
            "step_size": result.step_size,
            "compile_seconds": result.compile_seconds,
            "sampling_seconds": result.sampling_seconds,
        }
        self._gibbs_rng = np.random.default_rng(check_random_state(self.random_state).randint(2**31 - 1))

    # ------------------------------------------------------------------ predict
    def _discriminant(self, X, coef, intercept):
        scores = X @ coef.T + intercept
        return np.asarray(scores)

    def _check_X(self, X):
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, accept_sparse="csr", reset=False, dtype=[np.float64, np.float32])
        check_finite_features(X)
        return X

    def _labels_from_scores(self, scores):
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def decision_function(self, X):
        """Posterior-mean discriminant ``E[eta]^T x`` ((n,) binary, (n, K) multi-class)."""
        X = self._check_X(X)
        return self._discriminant(X, self.coef_, self.intercept_)

    def predict(self, X):
        """Labels from the posterior-mean discriminant, or from one posterior draw per call
        when ``prediction="gibbs"`` (the Gibbs classifier)."""
        X = self._check_X(X)
        if self.prediction == "gibbs":
            s = self._gibbs_rng.integers(len(self.coef_samples_))
            return self._labels_from_scores(self._discriminant(X, self.coef_samples_[s], self.intercept_samples_[s]))
        return self._labels_from_scores(self._discriminant(X, self.coef_, self.intercept_))

    def predict_proba(self, X, max_draws=1000):
        """Vote fractions of the Gibbs classifier: the share of posterior draws (at most
        ``max_draws``, evenly spaced) that predict each class."""
        X = self._check_X(X)
        n_total = len(self.coef_samples_)
        index = np.unique(np.linspace(0, n_total - 1, min(n_total, max_draws)).astype(int))
        n_classes = len(self.classes_)
        votes = np.zeros((X.shape[0], n_classes))
        for s in index:
            scores = self._discriminant(X, self.coef_samples_[s], self.intercept_samples_[s])
            winner = (scores > 0).astype(int) if scores.ndim == 1 else np.argmax(scores, axis=1)
            votes[np.arange(X.shape[0]), winner] += 1
        return votes / len(index)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
