"""``M2DPM``: max-margin DP-means (paper 001, Algorithm 1, eqs. 31, 32 and 35).

The small-variance limit of the Gibbs infinite SVM is the deterministic problem (eq. 35)

    L_sv(z, mu, eta) = sum_k ||eta_k||^2 / (2 nu^2) + 2c sum_i hinge_i(eta_{z_i})
                       + s sum_i D_phi(x_i, mu_{z_i}) + lambda K,

minimised by a k-means-like loop (Algorithm 1) that never increases it (Theorem 1):

1. z-step, sequentially over the points (in a random order): ``z_i <- argmin_k Q_i(k)``
   with ``Q_i(k) = s D_phi(x_i, mu_k) + 2c hinge_i(eta_k)`` for an existing component
   (eq. 31) and ``Q_i(new) = lambda + min_eta [2c hinge_i(eta) + ||eta||^2 / (2 nu^2)]``
   (eq. 32) for a new one, which opens at ``mu = x_i`` with the one-example classifier.
   A component emptied during the pass is closed (rejoining it would cost lambda again);
   ties keep the current component. Each move lowers eq. 35 by at least the difference of
   the two costs. The loop starts from one component holding all points (its mean and
   exact classifier).
2. mu-step: ``mu_k <- mean of the points of component k`` (minimises the divergence
   term for every Bregman divergence).
3. eta-step: ``eta_k <- argmin ||eta||^2 / (2 nu^2) + 2c sum_{i in k} hinge_i(eta)``.

The eta-step is solved exactly (to a certified relative duality gap of 1e-9) by an
interior-point method (:mod:`._m2dpm_kernels`; 1e-7, then 1e-5, where its Newton
system turns singular to machine precision near the optimum). Algorithm 1 writes it as one update of the Gaussian
``eta_k <- lambda_k`` (eq. 18) with ``omega_i = c |zeta_i|``: that update minimises the
quadratic bound ``(omega_i + c zeta_i)^2 / (2 omega_i) >= 2c (zeta_i)_+``, which touches
the hinge at the current margins, so repeating it is a majorise-minimise (iteratively
reweighted least-squares) scheme aimed at the same minimiser. The interior-point solver
never forms ``omega``, so the division by ``omega_i = c |zeta_i| = 0`` of points exactly
on the margin cannot occur, and the objective decreases at least as much as with one
reweighted update. As a last
safeguard, a component keeps its previous classifier if the solver's answer is not
better on the component's current points, so eq. 35 never increases.

Multi-class (paper 001's Appendix C is not available; derivation). With M >= 3 classes a
component's classifier is W_k = (w_k1, ..., w_kM), its prior N(0, nu^2 I) on every row,
and the hinge is Crammer-Singer's, ``hinge_i(W) = max(0, max_{m != y_i} l + (w_m -
w_{y_i})^T x_i)`` (paper 000, eq. 16). The SVA derivation of eqs. 22-32 goes through
unchanged with ``(zeta_i)_+`` replaced by this hinge, so eqs. 31, 32 and 35 keep their
form. The one-example problem of eq. 32, ``min_W ||W||^2/(2 nu^2) + 2c hinge(W; x, y)``,
has a closed form: the hinge depends on W only through the scores ``w_m^T x``, so
``w_m = a_m x``; the problem is symmetric in the M - 1 wrong classes, so (convexity) an
optimum has ``a_m = -b`` for ``m != y``. For a fixed score gap ``gamma = a_y + b``,
``||W||^2 = ||x||^2 (a_y^2 + (M-1) b^2)`` is smallest at ``a_y = (M-1) gamma / M``,
``b = gamma / M``, where it is ``||x||^2 (M-1) gamma^2 / M``. Minimising
``||x||^2 (M-1) gamma^2 / (2 M nu^2) + 2c (l - ||x||^2 gamma)_+`` over gamma gives

    gamma* = min(2 c nu^2 M / (M - 1), l / ||x||^2),

and ``Q_i(new) = lambda + ||x||^2 (M-1) gamma*^2 / (2 M nu^2) + 2c (l - ||x||^2 gamma*)_+``.
For two classes the binary form is used, ``eta* = min(2 c nu^2, l / ||x||^2) y x``
(paper 001 after eq. 32, Crammer et al. 2006, with margin l).

Intercept. With ``fit_intercept=True`` each component's discriminant is
``f_k(x) = eta_k^T (x - xbar) + b_k`` with xbar the training mean (a fixed shift of the
classifier's features, which leaves eq. 35 and its monotone decrease intact), and
``b_k ~ N(0, nu^2 R^2)`` with ``R = max_i ||x_i - xbar||``: b_k is the weight of a constant
feature of value R, so the intercept is penalised on the data's own scale rather than
pinned near zero (``b_k^2 / (2 nu^2 R^2)`` joins the prior term of eq. 35). Everything
above then holds with x~ = (x - xbar, R) in place of x. With ``fit_intercept=False`` the
features are used as they are, as in the paper.

New data. A test point's label is unknown, so the hinge term of eq. 31 cannot be
evaluated; it is assigned to the component whose mean is closest in the Bregman
divergence, ``k(x) = argmin_k D_phi(x, mu_k)`` (the data term of eq. 31; a test point
cannot open a component) and predicted by that component's classifier.

Classifiers of the cells (``refit_cells=True``). The z-step sees the labels (the hinge
term of eq. 31), new points do not: when ``2c hinge`` outweighs ``s D_phi`` a component
can gather points by label, and the cell ``{x : argmin_k D_phi(x, mu_k) = k}`` that new
points are routed to is not the set of points its classifier was fitted on (on paper
001's Setting I with s = 1, one large cluster is often cut into a +1 and a -1 component
whose means nearly coincide). With ``refit_cells=True`` each component's classifier is,
after Algorithm 1, the exact eta-step on the training points of its cell,
``argmin ||eta||^2 / (2 nu^2) + 2c sum_{i : k(x_i) = k} hinge_i(eta)``, so it is fitted on
the population it predicts; ``labels_``, ``cluster_centers_`` and ``objective_`` stay
Algorithm 1's, and a component whose cell holds no training point keeps its classifier.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..potentials.bregman import DIVERGENCES, check_divergence_domain, divergence_to, pairwise_divergence
from ..algorithms.m2dpm_kernels import assignment_pass, svm_primal_qp
from ..validation import check_bool, check_choice, check_finite_features, check_int, check_positive

GAP_TOL = 1e-9  # relative duality gap at which the eta-step stops
# Looser gaps tried in turn when the interior point's Newton system turns singular to
# machine precision near the optimum (it stops earlier, before the barrier weights blow up).
FALLBACK_GAP_TOLS = (1e-7, 1e-5)


class MixtureOfSVMsMixin:
    """Shared pieces of the mixtures of linear SVMs (M2DPM, DPMeansSVC): classifier
    features with the intercept, the Crammer-Singer / binary hinge, the exact per-component
    classifier (eta-step) and prediction by the nearest component mean."""

    def _check_shared_params(self):
        """Checks of the parameters both mixtures have."""
        check_positive("cluster_penalty", self.cluster_penalty)
        check_positive("C", self.C)
        check_positive("margin", self.margin)
        check_positive("prior_scale", self.prior_scale)
        check_positive("tol", self.tol)
        check_int("max_iter", self.max_iter, 1)
        check_choice("divergence", self.divergence, DIVERGENCES)
        check_bool("fit_intercept", self.fit_intercept)

    def _encode(self, X, y):
        """Validate ``(X, y)``; set ``classes_``; return X, the labels in the solver's coding
        (+1/-1 float for two classes, 0..M-1 otherwise) and set the feature shift."""
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False)
        check_finite_features(X)
        check_classification_targets(y)
        self._check_params()
        check_divergence_domain(self.divergence, X)
        encoder = LabelEncoder().fit(y)
        self.classes_ = encoder.classes_
        if len(self.classes_) < 2:
            raise ValueError(f"y has only one class ({self.classes_[0]!r}); a classifier needs at least two")
        self._n_classes = len(self.classes_)
        codes = encoder.transform(y).astype(np.int64)
        yk = np.where(codes == 1, 1.0, -1.0) if self._n_classes == 2 else codes
        self._x_mean = X.mean(axis=0)
        radius = float(np.sqrt(np.max(np.sum((X - self._x_mean) ** 2, axis=1))))
        self._r_scale = radius if radius > 0 else 1.0
        return X, yk

    def _features(self, X):
        """Classifier features x~: ``(x - xbar, R)`` with an intercept, x otherwise."""
        if not self.fit_intercept:
            return np.ascontiguousarray(X, dtype=np.float64)
        Xc = X - self._x_mean
        return np.ascontiguousarray(np.hstack([Xc, np.full((X.shape[0], 1), self._r_scale)]))

    def _hinge_matrix(self, Xt, W, y):
        """``H[i, k]`` = hinge of point i under component k's classifier (n, K)."""
        l = float(self.margin)
        if self._n_classes == 2:
            return np.maximum(0.0, l - y[:, None] * (Xt @ W.T))
        S = np.einsum("ip,kmp->ikm", Xt, W)
        n = Xt.shape[0]
        s_true = S[np.arange(n), :, y]  # (n, K)
        S = S + l
        S[np.arange(n), :, y] = -np.inf
        return np.maximum(0.0, S.max(axis=2) - s_true)

    def _qp_rows(self, Xt, y):
        """Rows ``(A, c)`` of the eta-step QP (see :func:`._m2dpm_kernels.svm_primal_qp`)."""
        l = float(self.margin)
        n = Xt.shape[0]
        if self._n_classes == 2:
            return y[:, None] * Xt, np.full(n, l)
        M, p = self._n_classes, Xt.shape[1]
        others = np.array([[m for m in range(M) if m != c] for c in range(M)])[y]  # (n, M-1)
        A = np.zeros((n, M - 1, M, p))
        rows = np.arange(n)[:, None]
        cols = np.arange(M - 1)[None, :]
        A[rows, cols, y[:, None], :] = Xt[:, None, :]
        A[rows, cols, others, :] = -Xt[:, None, :]
        return A.reshape(n * (M - 1), M * p), np.full(n * (M - 1), l)

    def _solve_eta(self, Xt, y, W_old):
        """Exact eta-step for one component; keeps ``W_old`` unless the solution is better."""
        U = 2.0 * float(self.C) * float(self.prior_scale) ** 2
        A, c = self._qp_rows(Xt, y)
        for tol in (GAP_TOL, *FALLBACK_GAP_TOLS):
            try:
                w, primal, _, _ = svm_primal_qp(A, c, Xt.shape[0], U, tol)
                break
            except np.linalg.LinAlgError:
                continue
        else:  # no tolerance worked: keep the previous classifier (eq. 35 cannot increase)
            if W_old is None:
                raise np.linalg.LinAlgError("the eta-step's interior point failed at every tolerance")
            return W_old
        W = w.reshape(self._n_classes, Xt.shape[1]) if self._n_classes > 2 else w
        if W_old is not None:
            old = 0.5 * float(np.sum(W_old**2)) + U * float(self._hinge_matrix(Xt, W_old[None], y).sum())
            if old <= primal:
                return W_old
        return W

    def _store_fit(self, z, mu, W, objective, n_iter, n_features):
        """The fitted attributes both mixtures share: assignments, components, eq. 35
        per iteration, and the per-component classifiers."""
        self.labels_ = z
        self.n_components_ = int(mu.shape[0])
        self.cluster_centers_ = mu
        self.component_sizes_ = np.bincount(z, minlength=self.n_components_)
        self.objective_ = objective
        self.n_iter_ = n_iter
        self._store_classifiers(W, n_features)

    def _store_classifiers(self, W, n_features):
        """``coef_`` and ``intercept_`` in the original coordinates from the weights on x~."""
        self._W = W
        d = n_features
        if self.fit_intercept:
            coef = W[..., :d]
            self.coef_ = coef
            self.intercept_ = W[..., d] * self._r_scale - coef @ self._x_mean
        else:
            self.coef_ = W.copy()
            self.intercept_ = np.zeros(W.shape[:-1])

    # ------------------------------------------------------------------ prediction
    def _check_X(self, X):
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        check_finite_features(X)
        check_divergence_domain(self.divergence, X)
        return X

    def predict_component(self, X):
        """Component of each row: ``argmin_k D_phi(x, mu_k)`` (the data term of eq. 31).

        With ``divergence="kl"`` a row can be at infinite divergence from every mean (a
        positive count where every mean is zero); it then goes to component 0."""
        X = self._check_X(X)
        return self._component(X)

    def _component(self, X):
        D = pairwise_divergence(self.divergence, X, self.cluster_centers_)
        return np.argmin(D, axis=1)

    def decision_function(self, X):
        """Discriminant of each row's component: (n,) for two classes (positive means
        ``classes_[1]``), (n, n_classes) otherwise."""
        X = self._check_X(X)
        k = self._component(X)
        coef, intercept = self.coef_[k], self.intercept_[k]
        if self.coef_.ndim == 2:
            return np.einsum("ij,ij->i", coef, X) + intercept
        return np.einsum("imj,ij->im", coef, X) + intercept

    def predict(self, X):
        """Label by the classifier of each row's component."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]


class M2DPM(MixtureOfSVMsMixin, ClassifierMixin, BaseEstimator):
    """Max-margin DP-means: a DP mixture of linear SVMs fitted by small-variance asymptotics.

    Clusters the data and learns one linear max-margin classifier per cluster at once,
    with the number of clusters learned from the data (paper 001, Algorithm 1).

    Parameters
    ----------
    cluster_penalty : float, default=10.0
        lambda of eq. 35, the cost of opening a component.
    s : float, default=1.0
        Weight of the Bregman divergence (the clustering term) against the hinge loss.
    C : float, default=1.0
        c, the scale of the hinge loss (eq. 35 has ``2c sum_i hinge_i``).
    margin : float, default=1.0
        l, the margin (cost of a wrong prediction).
    prior_scale : float, default=1.0
        nu, the standard deviation of the Gaussian prior on each component's classifier.
    divergence : {"euclidean", "kl"}, default="euclidean"
        Bregman divergence of the likelihood: ``"euclidean"`` = ``||x - mu||^2 / 2``
        (Gaussian), ``"kl"`` = generalized KL (Poisson; nonnegative features only).
    max_iter : int, default=100
        Maximum iterations of Algorithm 1.
    tol : float, default=1e-3
        Stop when the relative change of eq. 35 is below ``tol`` (the paper's 1e-3).
    fit_intercept : bool, default=True
        Give each component an intercept (see the module docstring for its prior).
    n_init : int, default=1
        Runs of Algorithm 1, each with its own random visiting orders of the z-step (the
        start, one component, is the same); the run with the lowest eq. 35 is kept (as
        ``n_init`` of scikit-learn's KMeans keeps the lowest inertia).
    refit_cells : bool, default=False
        After Algorithm 1, re-solve each component's classifier on the training points
        whose nearest mean is its own (the cell new points are routed to; see the module
        docstring). Off by default (Algorithm 1 as the paper gives it). On 20 pilot data
        sets of paper 001's Setting I (not those of the table) with the table's
        cross-validation grid, the mean test accuracy over all 24 grid points rose by 0.56
        points, and by 0.35 (standard error 0.31) for the cross-validated choice.
    random_state : None, int or numpy Generator
        Seeds the visiting orders of the z-step (of all runs).
    progress : bool, default=False
        Show a progress bar over iterations.

    Attributes
    ----------
    classes_ : (n_classes,) array
    labels_ : (n_samples,) int, the component of every training point (0 .. K-1)
    n_components_ : int, K
    cluster_centers_ : (K, n_features) component means mu_k
    coef_ : (K, n_features) for two classes, (K, n_classes, n_features) otherwise
    intercept_ : (K,) or (K, n_classes); ``f_k(x) = coef_[k] @ x + intercept_[k]``
    component_sizes_ : (K,) int
    objective_ : list of float, eq. 35 after initialisation and after every iteration
        (of the run kept)
    n_iter_ : int, iterations of the run kept
    init_objectives_ : (n_init,) array, the final eq. 35 of every run
    """

    def __init__(
        self,
        cluster_penalty=10.0,
        s=1.0,
        C=1.0,
        margin=1.0,
        prior_scale=1.0,
        divergence="euclidean",
        max_iter=100,
        tol=1e-3,
        fit_intercept=True,
        n_init=1,
        refit_cells=False,
        random_state=None,
        progress=False,
    ):
        self.cluster_penalty = cluster_penalty
        self.s = s
        self.C = C
        self.margin = margin
        self.prior_scale = prior_scale
        self.divergence = divergence
        self.max_iter = max_iter
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.n_init = n_init
        self.refit_cells = refit_cells
        self.random_state = random_state
        self.progress = progress

    # ------------------------------------------------------------------ checks
    def _check_params(self):
        self._check_shared_params()
        check_positive("s", self.s)
        check_int("n_init", self.n_init, 1)
        check_bool("refit_cells", self.refit_cells)

    # ------------------------------------------------------------------ model pieces
    def _one_example(self, Xt, y):
        """Closed-form one-example classifiers of eq. 32: ``(scale, L*)`` per point (see docstring)."""
        c, l, nu2 = float(self.C), float(self.margin), float(self.prior_scale) ** 2
        sq = np.einsum("ij,ij->i", Xt, Xt)
        with np.errstate(divide="ignore"):
            cap = np.where(sq > 0, l / np.where(sq > 0, sq, 1.0), np.inf)
        if self._n_classes == 2:
            t = np.minimum(2.0 * c * nu2, cap)
            t = np.where(sq > 0, t, 0.0)
            cost = t**2 * sq / (2.0 * nu2) + 2.0 * c * np.maximum(0.0, l - t * sq)
            return t, cost
        M = self._n_classes
        gamma = np.minimum(2.0 * c * nu2 * M / (M - 1), cap)
        gamma = np.where(sq > 0, gamma, 0.0)
        cost = sq * (M - 1) * gamma**2 / (2.0 * M * nu2) + 2.0 * c * np.maximum(0.0, l - gamma * sq)
        return gamma, cost

    def _one_example_weights(self, Xt, y, scale):
        """The classifier of a component opened at each given point (rows of Xt)."""
        if self._n_classes == 2:
            return (scale * y)[:, None] * Xt
        M = self._n_classes
        coeff = np.full((len(y), M), -1.0 / M)
        coeff[np.arange(len(y)), y] = (M - 1) / M
        return (coeff * scale[:, None])[:, :, None] * Xt[:, None, :]

    def _objective(self, X, Xt, y, z, mu, W):
        """Eq. 35 (with the intercept's prior inside ``||W_k||^2``)."""
        nu2 = float(self.prior_scale) ** 2
        K = mu.shape[0]
        prior = float(np.sum(W**2)) / (2.0 * nu2)
        hinge = 0.0
        data = 0.0
        for k in range(K):
            members = z == k
            hinge += float(self._hinge_matrix(Xt[members], W[k][None], y[members]).sum())
            data += float(divergence_to(self.divergence, X[members], mu[k]).sum())
        return prior + 2.0 * float(self.C) * hinge + float(self.s) * data + float(self.cluster_penalty) * K

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Run Algorithm 1 ``n_init`` times (each until eq. 35 changes by less than ``tol``)
        and keep the run with the lowest eq. 35."""
        X, yk = self._encode(X, y)
        rng = np.random.default_rng(self.random_state)
        Xt = self._features(X)
        scale_star, cost_star = self._one_example(Xt, yk)
        # The start (one component, its exact classifier) is the same for every run.
        W0 = self._solve_eta(Xt, yk, None)
        bar = None
        if self.progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=int(self.max_iter) * int(self.n_init), desc="M2DPM", leave=False)
        best, objectives = None, []
        for _ in range(int(self.n_init)):
            run = self._fit_once(X, Xt, yk, scale_star, cost_star, W0, rng, bar)
            objectives.append(run[3][-1])
            if best is None or run[3][-1] < best[3][-1]:  # ties keep the earlier run
                best = run
        if bar is not None:
            bar.close()
        z, mu, W, objective, n_iter = best
        if self.refit_cells:
            W = self._cell_classifiers(X, Xt, yk, mu, W)
        self._store_fit(z, mu, W, objective, n_iter, X.shape[1])
        self.init_objectives_ = np.asarray(objectives)
        return self

    def _cell_classifiers(self, X, Xt, yk, mu, W):
        """Exact eta-step of every component on its nearest-mean cell of the training
        points (``refit_cells``); a component with an empty cell keeps ``W[k]``."""
        cells = np.argmin(pairwise_divergence(self.divergence, X, mu), axis=1)
        W = W.copy()
        for k in range(mu.shape[0]):
            members = np.flatnonzero(cells == k)
            if len(members):
                W[k] = self._solve_eta(Xt[members], yk[members], None)
        return W

    def _fit_once(self, X, Xt, yk, scale_star, cost_star, W0, rng, bar):
        """One run of Algorithm 1 from a single component; the z-step visits the points in
        orders drawn from ``rng``. Returns ``(z, mu, W, objective history, iterations)``."""
        n = X.shape[0]
        q_new = float(self.cluster_penalty) + cost_star
        code = DIVERGENCES.index(self.divergence)
        binary = self._n_classes == 2
        # Initialisation: one component holding every point, its mean and exact classifier.
        z = np.zeros(n, dtype=np.int64)
        mu = X.mean(axis=0, keepdims=True)
        W = W0[None].copy()
        previous_solutions = {np.arange(n).tobytes(): W0.copy()}
        objective = [self._objective(X, Xt, yk, z, mu, W)]
        n_iter = 0
        for _ in range(int(self.max_iter)):
            n_iter += 1
            K0 = mu.shape[0]
            # z-step (eqs. 31-32), sequential.
            Q0 = float(self.s) * pairwise_divergence(self.divergence, X, mu) + 2.0 * float(self.C) * self._hinge_matrix(Xt, W, yk)
            counts = np.bincount(z, minlength=K0).astype(np.int64)
            order = rng.permutation(n).astype(np.int64)
            z_new, seeds = assignment_pass(
                order, z, counts, Q0, q_new, X, code, float(self.s), Xt, yk,
                0 if binary else self._n_classes, scale_star, float(self.C), float(self.margin),
            )
            if len(seeds):
                mu = np.vstack([mu, X[seeds]])
                W = np.concatenate([W, self._one_example_weights(Xt[seeds], yk[seeds], scale_star[seeds])])
            used = np.unique(z_new)
            relabel = np.full(mu.shape[0], -1, dtype=np.int64)
            relabel[used] = np.arange(len(used))
            z = relabel[z_new]
            W = W[used]
            # mu-step.
            mu = np.zeros((len(used), X.shape[1]))
            np.add.at(mu, z, X)
            mu /= np.bincount(z, minlength=len(used))[:, None]
            # eta-step, exact per component.
            # The eta-step depends on a component's members only: unchanged members keep
            # their (already exact) classifier.
            solved = {}
            for k in range(len(used)):
                members = np.flatnonzero(z == k)
                key = members.tobytes()
                if key in previous_solutions:
                    W[k] = previous_solutions[key]
                else:
                    W[k] = self._solve_eta(Xt[members], yk[members], W[k])
                solved[key] = W[k].copy()
            previous_solutions = solved
            objective.append(self._objective(X, Xt, yk, z, mu, W))
            if bar is not None:
                bar.update(1)
                bar.set_postfix(K=len(used), objective=f"{objective[-1]:.4g}")
            previous = objective[-2]
            if abs(previous - objective[-1]) <= float(self.tol) * max(abs(previous), 1e-300):
                break
        return z, mu, W, objective, n_iter
