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

import os
import warnings

import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
from numbers import Integral, Real

from sklearn.base import ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..algorithms import gibbs_svm
from ..datasets.row_blocks import is_row_source
from ..inference import CHAIN_METHODS, sample, to_inference_data
from ..inference.checks import warn_if_escaped
from .. import potentials
from ..potentials import SVMData, build_potential, csr_to_padded
from ..precision import maybe_x64
from ..samplers import defaults, shmc, srwm, ssgld, ssgnht
from ..validation import FLOAT32_SCALE, check_feature_scale, check_finite_features, check_int
from .base import RegBayesEstimator, vote_fractions
from .svm_noise import noise_calibration
from .svm_stream import fit_from_blocks

SAMPLERS = ("gibbs", "shmc", "ssgld", "ssgnht", "srwm")
SCHEDULES = ("adagrad", "polynomial", "constant")
MAX_GIBBS_FEATURES = 5000


def _chain_mean(values):
    """Mean over chains (axis 0), ignoring NaN; NaN where every chain has NaN (srwm records
    no potential), without numpy's empty-slice warning."""
    counts = np.sum(~np.isnan(values), axis=0)
    sums = np.nansum(values, axis=0)
    return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


class BayesianSVC(ClassifierMixin, RegBayesEstimator):
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
        (:data:`regbayes.samplers.defaults.SAMPLER_DEFAULTS`). Measured on breast cancer, one chain, 8 seeds, posterior-mean
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
        :func:`regbayes.inference.sample`). Default: the sampler's row of
        :data:`regbayes.samplers.defaults.SAMPLER_DEFAULTS`; for srwm,
        the proposal standard deviation in those coordinates. Without warm-up
        (``n_warmup=0``) the transform stays at its start ``T0 = sqrt(nu sigma_ref) I``
        (``sigma_ref I`` for shmc; see :mod:`regbayes.samplers.defaults`), and ssgnht's
        default step shrinks by ``sigma_ref / sqrt(nu sigma_ref)`` to match, and ssgnht
        starts at rest (momentum 0, not eq. 14's N(0, I) draw). shmc's and srwm's
        default steps are where warm-up starts: each is tuned by dual averaging toward a
        mean acceptance of 0.65 (shmc) or 0.234 (srwm)
        (:mod:`regbayes.inference.step_size_tuning`), and the tuned step is
        ``step_size_``; a step given here is used as it is.
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
    checkpoint : str or path-like, default=None
        A file where the run writes a checkpoint (draws so far, sampler states, keys)
        every ``checkpoint_every`` seconds, atomically. A fit started again with the same
        parameters and data finds it and continues from it: its draws are those of an
        uninterrupted fit. The file stays after the fit: the same fit run again continues
        from its last checkpoint (to the same draws). A checkpoint of another fit raises
        :class:`~regbayes.inference.checkpoint.CheckpointError`.
    checkpoint_every : float, default=60.0
        Seconds between checkpoints (0: after every chunk of steps).
    chain_method : {"vectorized", "dask"}, default="vectorized"
        Where the chains run: side by side in this process, or spread over the workers of
        a Dask cluster (Dask's current ``Client``, one the user created, else an embedded
        ``LocalCluster`` with one single-threaded worker per core), ``vmap``-ed within
        each (:mod:`regbayes.inference.distributed`). The draws are the same. A script
        that starts the local cluster needs an ``if __name__ == "__main__":`` guard.

    Attributes
    ----------
    coef_draws_, intercept_draws_ : ndarray of shape (n_chains, n_draws, ...)
        The posterior draws per chain; ``coef_samples_``, ``intercept_samples_`` the same
        draws with the chains concatenated, ``coef_``, ``intercept_`` their means.
    idata_ : arviz.InferenceData
        The draws and the samplers' statistics for ArviZ (R-hat, ESS, trace plots). It is
        built on first access, so that a fit does not wait for ArviZ's import.
    trace_ : dict
        Iteration, wall time, potential and step size per kept draw; compile and sampling
        seconds.
    step_scale_ : ndarray shaped like ``coef_`` with the intercept, or None
        ssgld and ssgnht with warm-up (and minibatches smaller than the data): the factors
        ``s_j <= 1`` by which warm-up scaled each whitened coordinate's step so that the
        minibatch noise supplies at most half of its diffusion (with a dense whitening
        transform the coordinates are the eigenvectors of the whitened minibatch noise,
        noisiest last, not the parameters); ``noise_correction_`` is
        then True and the kernel injects the rest
        (:mod:`regbayes.inference.step_adaptation`). None for the other samplers.
    exact_rows_ : ndarray of int
        ssgld and ssgnht: the training rows kept in every minibatch, those off the common
        value of a feature that fewer than ``N / batch_size`` rows are off (at most
        ``batch_size // 2`` rows; :func:`regbayes.potentials.rare_feature_rows`); the
        minibatch is drawn from the others. Empty for the other samplers.

    Warns :class:`~regbayes.inference.step_adaptation.MixingWarning` (ssgld, ssgnht) when
    warm-up was too short for the adapted steps (with the ``n_warmup`` that would do) and
    when the draws' smallest bulk ESS is under 20 % of them (with the ``thin`` that would
    do). The minibatch noise limits the steps: where it is large (N much larger than
    ``batch_size``, rare large feature values) an independent draw takes about
    ``V / 0.5`` steps for a coordinate with whitened noise variance ``V``, and the defaults'
    thinning then gives correlated draws; the exact ``sampler="gibbs"`` may be cheaper.
    """

    _unsaved_attributes = {"_idata": None}  # rebuilt from _sample_result by idata_
    _parameter_constraints = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "margin": [Interval(Real, 0, None, closed="neither")],
        "prior_scale": [Interval(Real, 0, None, closed="neither")],
        "sampler": [StrOptions(set(SAMPLERS))],
        "n_draws": [Interval(Integral, 1, None, closed="left")],
        "n_warmup": [Interval(Integral, 0, None, closed="left"), None],
        "n_chains": [Interval(Integral, 1, None, closed="left")],
        "thin": [Interval(Integral, 1, None, closed="left"), None],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "step_size": [Interval(Real, 0, None, closed="neither"), callable, None],
        "schedule": [StrOptions(set(SCHEDULES)), callable],
        "fit_intercept": ["boolean"],
        "prediction": [StrOptions({"mean", "gibbs"})],
        "n_leapfrog": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "progress": ["boolean"],
        "checkpoint": [str, os.PathLike, None],
        "checkpoint_every": [Interval(Real, 0, None, closed="left")],
        "chain_method": [StrOptions(set(CHAIN_METHODS))],
    }

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
        checkpoint=None,
        checkpoint_every=60.0,
        chain_method="vectorized",
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
        self.checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every
        self.chain_method = chain_method

    # ------------------------------------------------------------------ checks
    def _batch_size(self, n_samples):
        """``batch_size``, clipped (with a warning) to the number of rows."""
        if self.batch_size > n_samples:
            warnings.warn(
                f"batch_size={self.batch_size} is larger than the {n_samples} training rows; "
                f"using batch_size={n_samples} (full data)",
                UserWarning,
                stacklevel=3,
            )
            return n_samples
        return self.batch_size

    def _prepare_X(self, X, dtype):
        """Dense JAX array or padded sparse rows, with the intercept column appended."""
        if sp.issparse(X):
            return csr_to_padded(X, dtype=dtype, intercept=self.fit_intercept)
        X = np.asarray(X, dtype=dtype)
        if self.fit_intercept:
            X = np.hstack([X, np.ones((X.shape[0], 1), dtype=dtype)])
        return jnp.asarray(X)

    # ------------------------------------------------------------------ steps
    def _kernel(self, batch_size, preconditioner):
        if self.sampler == "gibbs":
            return gibbs_svm()
        if self.sampler == "shmc":
            return shmc(build_potential(None), self.n_leapfrog, True)
        potential = build_potential(batch_size, len(getattr(self, "exact_rows_", ())))
        if self.sampler == "ssgld":
            return ssgld(potential, preconditioner, noise_correction=getattr(self, "noise_correction_", False))
        if self.sampler == "ssgnht":
            # Without warm-up the chain starts at rest (r_0 = 0) instead of eq. 14's
            # r_0 ~ N(0, I): from eta = 0, far from the posterior, r_0 is a random kick that
            # the minibatch subgradients must average away before the direction is right.
            # At rest it reached the Gibbs accuracy in fewer steps with the same
            # posterior-mean error (benchmarks/ssgnht_start.py; CHANGELOG.md). With warm-up
            # the start is forgotten before the first draw, and eq. 14's is kept.
            start = "zero" if self.n_warmup_ == 0 else "normal"
            return ssgnht(potential, initial_momentum=start, noise_correction=getattr(self, "noise_correction_", False))
        return srwm(potential)

    # ------------------------------------------------------------------ fit
    def fit(self, X, y=None):
        """Sample the posterior of the weights given training data ``X`` (dense or sparse), ``y``.

        ``X`` may also be data larger than memory, read from disk block by block
        (:mod:`regbayes.models.svm_stream`; ``sampler`` 'ssgld' or 'ssgnht'): a path to
        Parquet files (``y`` names the label column), a Zarr group (arrays ``X`` and ``y``),
        svmlight files (``y=None``), or a Dask array or dataframe."""
        self._validate_params()
        if is_row_source(X):
            return fit_from_blocks(self, X, y)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32], copy=False)
        check_finite_features(X)
        check_feature_scale(X, "BayesianSVC", largest=FLOAT32_SCALE[1])
        codes = self._encode_labels(y)
        n, d = X.shape
        batch_size = self._batch_size(n)
        n_classes = len(self.classes_)
        use_x64 = self.sampler == "gibbs"
        if use_x64 and d + int(self.fit_intercept) > MAX_GIBBS_FEATURES:
            raise ValueError(
                f"sampler='gibbs' forms a dense {d} x {d} precision matrix per sweep; with "
                f"{d} features use 'ssgld' or 'ssgnht' (limit {MAX_GIBBS_FEATURES})"
            )
        dim = d + int(self.fit_intercept)
        stochastic = self.sampler in ("ssgld", "ssgnht") and batch_size < n
        self.exact_rows_ = potentials.rare_feature_rows(X, batch_size, batch_size // 2) if stochastic else np.zeros(0, int)
        n_warmup, thin = defaults.run_lengths(self.sampler, self.n_warmup, self.thin)
        sigma_ref = potentials.sigma_ref(X, self.C, self.prior_scale, self.fit_intercept)
        h, preconditioner = defaults.step_schedule(
            self.sampler, schedule=self.schedule, step_size=self.step_size, n_data=n, batch_size=batch_size,
            n_params=dim, n_warmup=n_warmup, sigma_ref=sigma_ref, prior_scale=self.prior_scale,
        )
        self._store_settings(n_warmup=n_warmup, thin=thin, batch_size=batch_size, step_size=h,
                             preconditioner=preconditioner,
                             initial_scale=defaults.start_scale(self.sampler, sigma_ref, self.prior_scale))
        shape = (dim,) if n_classes == 2 else (n_classes, dim)
        calibration = self._calibration(X, codes, h, n_warmup, batch_size, int(np.prod(shape)))
        self.noise_correction_ = calibration is not None
        kernel = self._kernel(batch_size, preconditioner)
        key = self._fit_key()
        # SHMC's and SRWM's default steps are tuned in warm-up to an acceptance (a step the user gives is kept)
        target = defaults.SAMPLER_DEFAULTS[self.sampler].target_acceptance if self.step_size is None else None
        with maybe_x64(use_x64):
            dtype = np.float64 if use_x64 else np.float32
            data = self._svm_data(X, codes, dtype)
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
                initial_scale=self.initial_scale_,
                progress=self.progress,
                desc=f"BayesianSVC[{self.sampler}]",
                checkpoint=self.checkpoint,
                checkpoint_every=self.checkpoint_every,
                calibrate=calibration,
                chain_method=self.chain_method,
                target_acceptance=target,
            )
        if target is not None and n_warmup > 0:  # the step warm-up tuned, which sample_more continues with
            self.step_size_ = float(result.step_size[-1])
        self.step_scale_ = None if calibration is None else calibration.scales.reshape(shape)
        self._n_train = n
        self._store(result, shape, d)
        # Gibbs runs one binary problem per class (one-vs-rest) and records their summed
        # potential; the other samplers record one Crammer–Singer potential.
        n_problems = n_classes if (self.sampler == "gibbs" and n_classes > 2) else 1
        self._warn_if_escaped(result.potential, n_problems * n, int(np.prod(shape)))
        return self

    def _calibration(self, X, codes, h, n_warmup, batch_size, n_coords):
        """Warm-up's per-coordinate step adaptation for ssgld and ssgnht (None otherwise)."""
        if self.sampler not in ("ssgld", "ssgnht") or n_warmup < 100 or batch_size >= X.shape[0]:
            return None
        return noise_calibration(self, X, codes, h, n_warmup, batch_size, n_coords)

    def _svm_data(self, X, codes, dtype):
        """The sampler's data: inputs, labels (+1/-1 when binary, else class codes) and
        hyper-parameters, in ``dtype``; the rows of ``exact_rows_`` first."""
        exact = getattr(self, "exact_rows_", ())
        if len(exact):
            order = np.concatenate([exact, np.setdiff1d(np.arange(X.shape[0]), exact)])
            X, codes = X[order], codes[order]
        labels = (2.0 * codes - 1.0).astype(dtype) if len(self.classes_) == 2 else codes.astype(np.int32)
        return SVMData(self._prepare_X(X, dtype), jnp.asarray(labels), jnp.asarray(self.C, dtype),
                       jnp.asarray(self.margin, dtype), jnp.asarray(self.prior_scale, dtype))

    def sample_more(self, X, y, n_draws):
        """Continue the fitted chains for ``n_draws`` more draws each and append them.

        ``X``, ``y`` must be the training data of the fit. The chains go on from their
        final states and keys with the fit's sampler, thinning and step-size schedule
        (no second warm-up), so the draws equal those of one fit with the draws of both
        runs: ``coef_draws_`` and the other draw arrays, the means, ``trace_`` and
        ``idata_`` then cover all of them. ``n_draws`` is not changed (``coef_draws_``
        tells how many there are).
        """
        check_is_fitted(self, "coef_")
        n_draws = check_int("n_draws", n_draws)
        if is_row_source(X):
            raise ValueError("sample_more continues fits on data in memory; for data read from disk, fit again with "
                             "n_draws covering both runs")
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        check_finite_features(X)
        y = np.asarray(y)
        unknown = np.setdiff1d(np.unique(y), self.classes_)
        if len(unknown) or len(y) != self._n_train:
            raise ValueError(f"sample_more continues the chains on the fit's training data ({self._n_train} rows, classes "
                             f"{self.classes_.tolist()}); got {len(y)} rows" + (f" and unknown labels {unknown.tolist()}"
                                                                                  if len(unknown) else ""))
        codes = np.searchsorted(self.classes_, y)
        previous = self._sample_result
        use_x64 = self.sampler == "gibbs"
        with maybe_x64(use_x64):
            data = self._svm_data(X, codes, np.float64 if use_x64 else np.float32)
            more = sample(self._kernel(self.batch_size_, self.preconditioner_), data, None, None, n_warmup=0,
                          n_draws=n_draws, thin=self.thin_, step_size=self.step_size_, start=previous,
                          progress=self.progress, desc=f"BayesianSVC[{self.sampler}]", chain_method=self.chain_method)
        both = more._replace(
            positions=np.concatenate([previous.positions, more.positions], axis=1),
            stats={f: np.concatenate([previous.stats[f], more.stats[f]], axis=1) for f in previous.stats},
            step_size=np.concatenate([previous.step_size, more.step_size]),
            iteration=np.concatenate([previous.iteration, more.iteration]),
            wall_time=np.concatenate([previous.wall_time, previous.sampling_seconds + more.wall_time]),
            compile_seconds=previous.compile_seconds + more.compile_seconds,
            sampling_seconds=previous.sampling_seconds + more.sampling_seconds,
            warmup_potential=previous.warmup_potential, warmup_iteration=previous.warmup_iteration)
        self._store(both, previous.positions.shape[2:], X.shape[1])
        return self

    def _warn_if_escaped(self, potential, n, dim):
        """:func:`~regbayes.inference.checks.warn_if_escaped` with the start value
        ``U(0) = C n l``: at eta = 0 every hinge equals the margin (``n`` rows summed over
        the problems whose potential is recorded)."""
        warn_if_escaped(potential, self.C * n * self.margin, dim, self.sampler)

    def _store(self, result, shape, d):
        draws = result.positions.astype(np.float64)  # (chain, draw, *shape)
        weights, intercepts = (draws[..., :d], draws[..., d]) if self.fit_intercept else (draws, np.zeros(draws.shape[:-1]))
        self.coef_draws_ = weights
        self.intercept_draws_ = intercepts
        weights = weights.reshape(-1, *weights.shape[2:])
        intercepts = intercepts.reshape(-1, *intercepts.shape[2:])
        self.coef_samples_ = weights
        self.intercept_samples_ = intercepts
        self.coef_ = weights.mean(axis=0)
        self.intercept_ = intercepts.mean(axis=0)
        self._sample_result = result
        self._idata = None
        self.trace_ = {
            "iteration": result.iteration,
            "wall_time": result.wall_time,
            "potential": _chain_mean(result.potential),
            "step_size": result.step_size,
            "compile_seconds": result.compile_seconds,
            "sampling_seconds": result.sampling_seconds,
        }
        self._gibbs_rng = np.random.default_rng(check_random_state(self.random_state).randint(2**31 - 1))

    @property
    def idata_(self):
        """The draws as an :class:`arviz.InferenceData` (built on first access)."""
        check_is_fitted(self, "coef_")
        if self._idata is None:
            self._idata = to_inference_data(self._sample_result, var_name="eta")
        return self._idata

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
        winners = []
        for s in index:
            scores = self._discriminant(X, self.coef_samples_[s], self.intercept_samples_[s])
            winners.append((scores > 0).astype(int) if scores.ndim == 1 else np.argmax(scores, axis=1))
        return vote_fractions(np.stack(winners), len(self.classes_))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
