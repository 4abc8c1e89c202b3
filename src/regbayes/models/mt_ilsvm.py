"""``MultiTaskInfiniteLatentSVC`` and ``MultiTaskInfiniteLatentSVR``: MT-iLSVM (paper 002,
sections 4.3-4.4, Appendix D.1, Algorithm 2) and its regression form.

Several tasks share a binary projection ``Z`` (D x K, truncation K) with an IBP prior; task m
predicts with ``f_m(x) = E[eta_m]^T psi^T x`` (``psi = E[Z]``), plus ``beta_m^T x`` with
``include_inputs=True`` (the paper's "^f" variant) and an intercept with ``fit_intercept``.
The model math is :mod:`regbayes.potentials.ibp_projection`, one outer iteration of
Algorithm 2 is :func:`regbayes.algorithms.mt_ilsvm.mt_step`, run by the driver
(:func:`regbayes.inference.run`) until the RegBayes objective ``-ELBO + risk`` changes by
less than ``tol`` (relative). ``joint=False`` is the decoupled MT-IBP+SVM (footnote 17).

Tasks come in two forms:

* a label-indicator matrix ``Y`` (N x M of 0/1; multi-label data): task m's labels are
  ``Y[:, m]`` as -1/+1 and every row carries a label of every task; ``predict`` returns the
  indicator matrix;
* a task index ``tasks`` (N,) with one label per row (School-type data):
  ``fit(X, y, tasks=tasks)``, ``predict(X, tasks=tasks)``.

A 1-D ``y`` without ``tasks`` is one task. Each row has one loading vector ``w_n``, so a
row's likelihood is counted once however many tasks label it.

Scale. The inputs are centred with the training means and divided by
``feature_scale_ = sqrt(D) * std`` (the training standard deviation of each column; 1 for a
constant column): every column has variance 1 / D, so a training row has expected squared
norm 1. The likelihood ``N(Z w_n, lambda^2 I)`` has mean zero and one noise variance for
all dimensions, hence the common scale; the 1 / D keeps the classifier features
``psi^T x`` of order one whatever D, so that ``C`` means what it means for a linear SVM on
normalised rows. ``noise_variance`` is in these units; None sets ``lambda^2`` as
probabilistic PCA's maximum-likelihood noise variance with ``q = min(truncation, D // 2)``
factors (Tipping and Bishop 1999): the mean of the ``D - q`` smallest eigenvalues of the
covariance of the scaled training inputs, at least 1e-3 / D. The intercept is a
constant feature of value 1 of every classifier (prior ``N(0, 1)`` on its weight like the
other weights); it does not enter the ``Z`` update. The regressor removes each task's
training mean from its targets and divides by ``target_scale_``, the standard deviation of
the centred targets, and adds both back in ``predict``: task means are fitted exactly,
unregularised, and ``epsilon`` and ``C`` refer to standardised targets.

New rows (inductive): ``psi`` is shared by all rows, so a new row's features are
``psi^T x`` with no inference of its own (the paper's transductive variant also lets test
rows shape ``q(Z)`` through the likelihood; this estimator does not).
"""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin, TransformerMixin
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ..algorithms.mt_ilsvm import INITS, decision_values, mt_compile, mt_data, mt_init, mt_step
from ..inference import Algorithm, run
from ..rng import host_seeds, key_from_seed
from .latent_base import LATENT_CONSTRAINTS, POSITIVE, LatentParameters
NOISE_VARIANCE_FLOOR = 1e-3  # times the mean variance of a scaled input column, 1 / D
DUAL_TOL = 1e-3  # relative duality gap of each task's dual (LinearSVC's default tolerance is of this order)
DUAL_MAX_ITER = 1000


def ppca_noise_variance(X, truncation: int) -> float:
    """Probabilistic PCA's maximum-likelihood noise variance with ``q = min(truncation, D // 2)``
    factors: the mean of the ``D - q`` smallest eigenvalues of the covariance of ``X``, at
    least :data:`NOISE_VARIANCE_FLOOR` times the mean variance of a column."""
    D = X.shape[1]
    q = min(int(truncation), D // 2)
    values = np.sort(np.linalg.eigvalsh(np.atleast_2d(np.cov(X, rowvar=False, bias=True))))
    return max(float(np.mean(values[: D - q])), NOISE_VARIANCE_FLOOR * float(np.mean(values)), 1e-300)


class _MultiTaskLatentBase(LatentParameters):
    """What the two estimators share: parameters, scaling, the run, features."""

    _parameter_constraints: dict = {
        **LATENT_CONSTRAINTS,
        "tol": [POSITIVE],
        "inner_tol": [POSITIVE],
        "C": [POSITIVE],
        "include_inputs": ["boolean"],
        "fit_intercept": ["boolean"],
        "joint": ["boolean"],
        "init": [StrOptions(set(INITS))],
        "anneal_iterations": [Interval(Integral, 0, None, closed="left")],
        "anneal_start": [Interval(Real, 0, 1, closed="right")],
        "shared_variance": [Interval(Real, 0, None, closed="left")],
    }
    _loss = "hinge"

    def __init__(self, truncation=50, alpha=1.0, C=1.0, n_iter=20, n_inner=10, tol=1e-4, inner_tol=1e-3,
                 noise_variance=None, loading_variance=1.0, estimate_variances=False, include_inputs=False,
                 fit_intercept=True, joint=True, init="paper", anneal_iterations=0, anneal_start=0.01, random_state=None,
                 progress=False, checkpoint=None, checkpoint_every=60.0, shared_variance=0.0):
        super().__init__(truncation, alpha, n_iter, n_inner, tol, inner_tol, noise_variance, loading_variance, estimate_variances,
                         random_state, progress, checkpoint, checkpoint_every)  # LatentParameters' order
        self.shared_variance = shared_variance
        self.C = C
        self.include_inputs = include_inputs
        self.fit_intercept = fit_intercept
        self.joint = joint
        self.init = init
        self.anneal_iterations = anneal_iterations
        self.anneal_start = anneal_start

    def _scale(self, X):
        return (X - self.feature_mean_) / self.feature_scale_  # a new array: the user's X is not changed

    def _fit_tasks(self, X, task_rows, targets, row_weights=None):
        """Scale, run Algorithm 2, store the fitted attributes."""
        mean = X.mean(axis=0)
        scale = X.std(axis=0)
        scale[scale == 0] = 1.0
        scale = scale * np.sqrt(X.shape[1])
        self._store_settings(feature_mean=mean, feature_scale=scale)
        Xs = self._scale(X)
        lam2 = ppca_noise_variance(Xs, self.truncation) if self.noise_variance is None else float(self.noise_variance)
        data = mt_data(Xs, task_rows, targets, loss=self._loss, C=self.C, row_weights=row_weights, epsilon=getattr(self, "epsilon", 0.0),
                       alpha=self.alpha, n_inner=self.n_inner, inner_tol=self.inner_tol, joint=self.joint,
                       include_inputs=self.include_inputs, intercept_scaling=1.0 if self.fit_intercept else 0.0,
                       estimate_variances=self.estimate_variances, dual_tol=DUAL_TOL, dual_max_iter=DUAL_MAX_ITER,
                       anneal_iterations=self.anneal_iterations, anneal_start=self.anneal_start,
                       shared_variance=self.shared_variance)
        init_seed, run_seed = host_seeds(self._fit_key(), 2)
        state = mt_init(int(init_seed), data, self.truncation, lam2, self.loading_variance, init=self.init)
        name = "MT-iLSVM" if self.joint else "MT-IBP+SVM"
        algorithm = Algorithm(mt_step, name, compile=mt_compile)
        key = key_from_seed(int(run_seed))
        parts, checkpoint = [], self._host_checkpoint()  # the runs are the checkpoint's parts
        if data.anneal_iterations > 0:  # the tempered iterations run in full; tol watches the exact objective after them
            parts.append(run(algorithm, state, data, key, n_iter=data.anneal_iterations, progress=self.progress,
                             checkpoint=checkpoint))
            state, key = parts[-1].state, key_from_seed(int(host_seeds(key, 1)[0]))
        parts.append(run(algorithm, state, data, key, n_iter=self.n_iter, tol=self.tol, progress=self.progress,
                         checkpoint=checkpoint))
        result = parts[-1]
        state = result.state
        trace = {k: np.concatenate([np.asarray(p.trace[k]) for p in parts]) for k in result.trace}
        self.components_ = np.asarray(state.psi).T.copy()  # (K, D): E[Z]^T
        self.coef_ = np.asarray(state.coef).copy()
        self.n_active_features_ = int(trace["n_active"][-1])
        self.elbo_ = [float(v) for v in trace["elbo"]]
        self.objective_ = [float(v) for v in trace["objective"]]
        self.n_iter_ = sum(p.n_iter for p in parts)
        self.converged_ = bool(result.converged)
        noise = np.asarray(state.noise_variance)
        self._store_settings(noise_variance=float(noise[0]) if not self.estimate_variances else noise.copy(),
                             loading_variance=float(state.loading_variance))
        elapsed = np.cumsum([0.0] + [p.sampling_seconds for p in parts[:-1]])
        self.trace_ = {**trace, "wall_time": np.concatenate([np.asarray(p.wall_time) + t for p, t in zip(parts, elapsed)]),
                       "compile_seconds": sum(p.compile_seconds for p in parts),
                       "sampling_seconds": sum(p.sampling_seconds for p in parts)}
        return self

    def transform(self, X):
        """The latent features ``psi^T x`` of every row (N, K), on the scaled inputs."""
        check_is_fitted(self, "components_")
        return self._scale(self._check_X(X, reset=False)) @ self.components_.T

    def _all_decisions(self, X):
        check_is_fitted(self, "coef_")
        Xs = self._scale(self._check_X(X, reset=False))
        return decision_values(Xs, self.components_.T, self.coef_, self.include_inputs, 1.0 if self.fit_intercept else 0.0)

    def _task_codes(self, tasks, n_rows: int):
        """Positions of ``tasks`` in ``tasks_`` (the task ids seen in fit)."""
        if tasks is None:
            raise ValueError("this model was fitted with a task index: pass tasks=... (one task id per row)")
        tasks = np.asarray(tasks)
        if tasks.shape != (n_rows,):
            raise ValueError(f"tasks must have one entry per row of X ({n_rows}), got shape {tasks.shape}")
        codes = np.searchsorted(self.tasks_, tasks)
        codes = np.clip(codes, 0, len(self.tasks_) - 1)
        unknown = self.tasks_[codes] != tasks
        if unknown.any():
            raise ValueError(f"tasks holds task ids not seen in fit, e.g. {tasks[unknown][0]!r}")
        return codes

    def _task_rows(self, tasks, n_rows: int):
        """The per-task row lists: one task of every row (``tasks`` None), else by ``tasks``
        (:meth:`_task_index`); sets the prediction mode."""
        if tasks is None:
            self._mode = "single"
            return [np.arange(n_rows)]
        self._mode = "tasks"
        return self._task_index(tasks, n_rows)

    def _task_index(self, tasks, n_rows: int):
        """Set ``tasks_`` from a task index and return the per-task row lists."""
        tasks = np.asarray(tasks)
        if tasks.ndim != 1 or tasks.shape[0] != n_rows:
            raise ValueError(f"tasks must be a 1-D array with one task id per row of X ({n_rows} rows), got shape {tasks.shape}")
        if tasks.dtype.kind == "f" and not np.all(np.isfinite(tasks)):
            raise ValueError("tasks contains NaN or infinity")
        self.tasks_, codes = np.unique(tasks, return_inverse=True)
        return [np.flatnonzero(codes == m) for m in range(len(self.tasks_))]


def _check_y(y):
    """``y`` as an array: None refused; an (N, 1) column raveled with a DataConversionWarning."""
    if y is None:
        raise ValueError("requires y to be passed, but the target y is None")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = column_or_1d(y, warn=True)
    return y


def _check_finite_target(y):
    if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity")


class MultiTaskInfiniteLatentSVC(ClassifierMixin, TransformerMixin, _MultiTaskLatentBase):
    """MT-iLSVM: binary classification tasks that share IBP latent features (Algorithm 2).

    Parameters
    ----------
    truncation : int, default=50
        K, the number of columns of ``Z`` (the paper reports fewer than 50 in use).
    alpha : float, default=1.0
        Concentration of the IBP prior.
    C : float, default=1.0
        Weight of the hinge losses (``U^MT(xi) = C sum xi_mn``, eq. 28's box): the one weight
        of the margin against the likelihood in the ``Z`` update, and, with the input
        scaling below, the classifiers' regularisation (a linear SVM's ``C`` on
        standardised inputs corresponds to about ``D`` times it here). Cross-validate it:
        at the default the hinge is light next to the likelihood of N x D inputs and the
        joint fit may equal the decoupled one.
    n_iter : int, default=20
        Outer iterations at most (T' of Algorithm 2).
    n_inner : int, default=10
        Mean-field sweeps per outer iteration at most (T).
    tol : float, default=1e-4
        Stop when the RegBayes objective ``-ELBO + risk`` changes by less than this,
        relative (tau'); otherwise warn with ConvergenceWarning after ``n_iter``.
    inner_tol : float, default=1e-3
        Relative change of the mean-field phase's objective that ends a phase (tau).
    noise_variance : float or None, default=None
        ``lambda^2`` of the likelihood on the scaled inputs (module docstring: each column
        has variance 1 / D); None: probabilistic PCA's estimate.
    loading_variance : float, default=1.0
        ``sigma_0^2``, the prior variance of the loadings ``w_n``.
    estimate_variances : bool, default=False
        Run eqs. 29 and 30 after every dual step (``lambda_n^2`` per row, kept above 1e-3
        of the mean squared scaled input).
    include_inputs : bool, default=False
        Classify on ``[psi^T x, x]`` (the "^f" variant) instead of ``psi^T x``.
    fit_intercept : bool, default=True
        Add a constant feature 1 to every classifier.
    joint : bool, default=True
        False: the decoupled MT-IBP+SVM (no margin term in the ``Z`` update).
    init : {"paper", "svd"}, default="paper"
        Initial ``psi``: Algorithm 2's ``0.5 + N(0, 0.001)``, or the positive and negative
        parts of the leading right singular vectors of the scaled inputs (section 5.1's
        SVD start), followed by a dual step so that the first phase has the margin term
        (:func:`regbayes.algorithms.mt_ilsvm.initial_features`, ``mt_init``).
    anneal_iterations : int, default=0
        T: the first T outer iterations temper the model's part of the phase objective by
        ``beta_t = anneal_start^(1 - t/T)`` (deterministic annealing; the entropy of
        ``q(Z)`` and the margin keep their weight), then the exact objective is used and
        ``tol`` is watched (:mod:`regbayes.algorithms.mt_ilsvm`). The tempered iterations
        are run in full and counted in ``n_iter_`` on top of ``n_iter``.
    anneal_start : float in (0, 1], default=0.01
        ``beta_0`` of that schedule.
    random_state : None, int or RandomState
        Seeds the initial ``psi`` (Algorithm 2, line 3) and the dual solvers' row orders.
    progress : bool, default=False
        Progress bar over outer iterations.
    class_weight : None, "balanced" or dict, default=None
        Weights of each task's hinge losses by class, ``C_mn = C w(y_mn)`` (eq. 28 with a
        per-row box ``0 <= omega_mn <= C_mn``): None gives every row weight 1; "balanced"
        gives class c of task m the weight ``N_m / (2 N_mc)``, as scikit-learn's
        ``compute_class_weight``; a dict maps each class (0 and 1 of an indicator matrix,
        else the labels in ``classes_``) to its weight. Macro-averaged F1 on labels with
        few positives rewards "balanced".
    checkpoint : str or path-like, default=None
        A file where the fit writes a checkpoint, atomically, every ``checkpoint_every``
        seconds (0: every iteration); a fit interrupted and started again with the same
        arguments and data continues from it to the fitted attributes of an uninterrupted
        fit (:meth:`regbayes.models.base.RegBayesEstimator._host_checkpoint`).
    checkpoint_every : float, default=60.0
    shared_variance : float, default=0.0
        ``s0``: the tasks' weights get a shared component, ``eta_m = v_m + u`` with
        ``v_m ~ N(0, I)`` and ``u ~ N(0, s0 I)`` (Evgeniou and Pontil 2004's regularised
        multi-task learning as a prior; :mod:`regbayes.core.multitask_duals`), so tasks
        with few rows borrow the others' weights; the tasks' duals are then solved as one
        problem. 0 is the paper's prior: independent tasks that share only ``Z``.

    Attributes
    ----------
    classes_ : (2,) the labels (task-index and single-task forms)
    n_tasks_ : int
    tasks_ : (M,) the task ids (task-index form)
    components_ : (K, D) ``psi^T = E[Z]^T`` on the scaled inputs
    coef_ : (M, P) ``E[eta_m]`` over ``[psi^T x, x (include_inputs), 1 (fit_intercept)]``
    n_active_features_ : int, columns of ``psi`` with mean activation above 0.01
    elbo_, objective_ : per outer iteration
    n_iter_, converged_, noise_variance_, loading_variance_, feature_mean_, feature_scale_
    trace_ : dict of the per-iteration info (duality gap, inner sweeps, ...) and timings
    """

    _parameter_constraints: dict = {**_MultiTaskLatentBase._parameter_constraints,
                                    "class_weight": [None, dict, StrOptions({"balanced"})]}

    def __init__(self, truncation=50, alpha=1.0, C=1.0, n_iter=20, n_inner=10, tol=1e-4, inner_tol=1e-3,
                 noise_variance=None, loading_variance=1.0, estimate_variances=False, include_inputs=False,
                 fit_intercept=True, joint=True, init="paper", anneal_iterations=0, anneal_start=0.01, random_state=None,
                 progress=False, class_weight=None, checkpoint=None, checkpoint_every=60.0, shared_variance=0.0):
        super().__init__(truncation=truncation, alpha=alpha, C=C, n_iter=n_iter, n_inner=n_inner, tol=tol, inner_tol=inner_tol,
                         noise_variance=noise_variance, loading_variance=loading_variance, estimate_variances=estimate_variances,
                         include_inputs=include_inputs, fit_intercept=fit_intercept, joint=joint, init=init,
                         anneal_iterations=anneal_iterations, anneal_start=anneal_start, random_state=random_state,
                         progress=progress, checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                         shared_variance=shared_variance)
        self.class_weight = class_weight

    def fit(self, X, y, tasks=None):
        """Fit on a label-indicator matrix ``y`` (N, M) of 0/1, or on labels ``y`` (N,) with
        ``tasks`` (N,) (one task per row; two classes overall, both in every task)."""
        self._validate_params()
        X = self._check_X(X, reset=True)
        y = _check_y(y)
        if y.shape[:1] != X.shape[:1]:
            raise ValueError(f"y has {y.shape[0] if y.ndim else 0} rows but X has {X.shape[0]}")
        _check_finite_target(y)
        if y.ndim == 2:
            if tasks is not None:
                raise ValueError("pass either a label-indicator matrix y (N, M) or labels y (N,) with tasks, not both")
            rows, targets = self._indicator_tasks(y)
        elif y.ndim == 1:
            codes = self._encode_labels(y)
            if len(self.classes_) != 2:
                raise ValueError(f"Only binary classification is supported: y has {len(self.classes_)} classes; pass a "
                                 "label-indicator matrix for several labels per row, or tasks=... with two classes overall")
            signs = 2.0 * codes - 1.0
            rows = self._task_rows(tasks, X.shape[0])
            if tasks is not None:
                for m, r in enumerate(rows):
                    if len(np.unique(signs[r])) < 2:
                        raise ValueError(f"task {self.tasks_[m]!r} has one class ({self.classes_[int(signs[r][0] > 0)]!r}); "
                                         "every task needs both classes")
            targets = [signs[r] for r in rows]
        else:
            raise ValueError(f"y must be 1-D labels or a 2-D label-indicator matrix, got {y.ndim} dimensions")
        self.n_tasks_ = len(rows)
        return self._fit_tasks(X, rows, targets, self._row_weights(targets))

    def _row_weights(self, targets):
        """Per task, each row's class weight (``class_weight``); None when unweighted."""
        if self.class_weight is None:
            return None
        names = (0, 1) if self._mode == "indicator" else tuple(self.classes_)
        weights = []
        for target in targets:
            positive = target > 0
            if self.class_weight == "balanced":
                table = {False: len(target) / (2.0 * np.sum(~positive)), True: len(target) / (2.0 * np.sum(positive))}
            else:
                unknown = set(self.class_weight) - set(names)
                if unknown:
                    raise ValueError(f"class_weight has keys that are not classes: {sorted(map(repr, unknown))}; the classes "
                                     f"are {list(names)}")
                table = {False: float(self.class_weight.get(names[0], 1.0)), True: float(self.class_weight.get(names[1], 1.0))}
                if not all(np.isfinite(v) and v > 0 for v in table.values()):
                    raise ValueError(f"class_weight values must be positive and finite, got {self.class_weight!r}")
            weights.append(np.where(positive, table[True], table[False]))
        return weights

    def _indicator_tasks(self, Y):
        if Y.dtype.kind not in "biuf" or not np.all((Y == 0) | (Y == 1)):
            bad = Y[~((Y == 0) | (Y == 1))].ravel()[0] if Y.dtype.kind in "biuf" else Y.dtype
            raise ValueError(f"a 2-D y must be a label-indicator matrix of 0 and 1, got {bad!r}")
        for m in range(Y.shape[1]):
            if np.all(Y[:, m] == Y[0, m]):
                raise ValueError(f"task {m} (column {m} of y) has one class ({int(Y[0, m])}); every task needs both classes")
        self._mode = "indicator"
        n = Y.shape[0]
        return [np.arange(n)] * Y.shape[1], [2.0 * Y[:, m].astype(np.float64) - 1.0 for m in range(Y.shape[1])]

    def decision_function(self, X, tasks=None):
        """``f_m(x)``: (N, M) for a model fitted on an indicator matrix, else (N,) (each row's
        own task with ``tasks``)."""
        values = self._all_decisions(X)
        if self._mode == "indicator":
            if tasks is not None:
                raise ValueError("this model was fitted on a label-indicator matrix: tasks must be None")
            return values
        if self._mode == "single":
            return values[:, 0]
        return values[np.arange(values.shape[0]), self._task_codes(tasks, values.shape[0])]

    def predict(self, X, tasks=None):
        """The indicator matrix (indicator form) or labels (``sign f``)."""
        values = self.decision_function(X, tasks)
        if self._mode == "indicator":
            return (values > 0).astype(np.int64)
        return self.classes_[(values > 0).astype(np.int64)]

    def score(self, X, y, tasks=None, sample_weight=None):
        """Accuracy (subset accuracy for an indicator matrix)."""
        return accuracy_score(y, self.predict(X, tasks), sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.classifier_tags.multi_label = True
        return tags


class MultiTaskInfiniteLatentSVR(RegressorMixin, TransformerMixin, _MultiTaskLatentBase):
    """MT-iLSVM for regression: epsilon-insensitive tasks sharing IBP latent features.

    The risk is ``C sum_{m,n} max(0, |f_m(x_n) - y_mn| - epsilon)``, derived as Appendix B
    derives MedLDA regression: with Lemma 11's conjugate
    ``g2*(beta; y, eps) = beta y + eps |beta| + I(|beta| <= C)``, Theorem 6 gives
    ``q(eta_m) = N(mu_m, I)``, ``mu_m = sum_n beta_mn [psi^T x_n; ...]``, where
    ``beta_m = omega_m - omega*_m`` maximises ``sum_n (beta_mn y_mn - eps |beta_mn|) - ||mu_m||^2 / 2``
    over ``|beta_mn| <= C``; the ``Z`` update's margin term is
    ``sum_{m,n} beta_mn mu_mk x_nd`` (:mod:`regbayes.algorithms.mt_ilsvm`). Per-task means are
    removed and added back and targets are scaled by ``target_scale_`` (module docstring).
    Parameters as :class:`MultiTaskInfiniteLatentSVC`, with ``epsilon`` (default 0.1), the
    half-width of the insensitive tube in units of ``target_scale_``, and
    ``fit_intercept=False`` by default (the task means are the intercepts).

    Attributes: as the classifier's, with ``task_means_`` (M,), ``target_scale_``.
    """

    _parameter_constraints: dict = {**_MultiTaskLatentBase._parameter_constraints,
                                    "epsilon": [Interval(Real, 0, None, closed="left")]}
    _loss = "epsilon_insensitive"

    def __init__(self, truncation=50, alpha=1.0, C=1.0, epsilon=0.1, n_iter=20, n_inner=10, tol=1e-4, inner_tol=1e-3,
                 noise_variance=None, loading_variance=1.0, estimate_variances=False, include_inputs=False,
                 fit_intercept=False, joint=True, init="paper", anneal_iterations=0, anneal_start=0.01, random_state=None,
                 progress=False, checkpoint=None, checkpoint_every=60.0, shared_variance=0.0):
        super().__init__(truncation=truncation, alpha=alpha, C=C, n_iter=n_iter, n_inner=n_inner, tol=tol, inner_tol=inner_tol,
                         noise_variance=noise_variance, loading_variance=loading_variance, estimate_variances=estimate_variances,
                         include_inputs=include_inputs, fit_intercept=fit_intercept, joint=joint, init=init,
                         anneal_iterations=anneal_iterations, anneal_start=anneal_start, random_state=random_state,
                         progress=progress, checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                         shared_variance=shared_variance)
        self.epsilon = epsilon

    def fit(self, X, y, tasks=None):
        """Fit on targets ``y`` (N,), with ``tasks`` (N,) the task of each row (None: one task)."""
        self._validate_params()
        X = self._check_X(X, reset=True)
        y = _check_y(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"y must be 1-D with one target per row of X ({X.shape[0]}), got shape {y.shape}")
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"y must hold real targets, got dtype {y.dtype}") from exc
        _check_finite_target(y)
        rows = self._task_rows(tasks, X.shape[0])
        self.n_tasks_ = len(rows)
        self.task_means_ = np.array([y[r].mean() for r in rows])
        centred = np.concatenate([y[r] - mu for r, mu in zip(rows, self.task_means_)])
        scale = float(np.std(centred))
        self.target_scale_ = scale if scale > 0 else 1.0
        targets = [(y[r] - mu) / self.target_scale_ for r, mu in zip(rows, self.task_means_)]
        return self._fit_tasks(X, rows, targets)

    def predict(self, X, tasks=None):
        """``task_mean + target_scale * f_m(x)`` for each row's task."""
        values = self._all_decisions(X)
        codes = np.zeros(values.shape[0], dtype=np.int64) if self._mode == "single" else self._task_codes(tasks, values.shape[0])
        return self.task_means_[codes] + self.target_scale_ * values[np.arange(values.shape[0]), codes]

    def score(self, X, y, tasks=None, sample_weight=None):
        """R^2 of ``predict(X, tasks)``."""
        return r2_score(y, self.predict(X, tasks), sample_weight=sample_weight)
