"""The dual problems of RegBayes' max-margin posteriors with a Gaussian prior (paper 002).

With the prior ``eta ~ N(0, I)`` and expectation constraints on the discriminant,
Theorem 6 gives the posterior ``q(eta) = N(mu, I)`` whose mean ``mu`` is a weighted sum of
the constraint features, the weights solving a finite-dimensional dual. The conjugates
of Lemmas 9-11 (:mod:`regbayes.core.conjugates`) turn the three losses into the three
duals solved here, each to a stated relative duality gap:

* :func:`binary_svm_dual`: hinge loss, Lemma 9, eq. 28 (Appendix D.1);
* :func:`crammer_singer_dual`: multi-class hinge, Lemmas 10 and 12, eq. 34 (Appendix D.2);
* :func:`svr_dual`: epsilon-insensitive loss, Lemma 11 (Appendix C.4).

All three return a :class:`DualSolution`; ``coef`` is ``mu``, the weights of the linear
discriminant (no bias term: the paper's discriminants have none; append a constant
column to ``features`` for one). ``C`` may be a scalar or one value per row; a row with
``C_n = 0`` drops out of the problem (its dual variables are 0), which the multi-task
models use for unobserved labels. ``initial_dual`` warm-starts the solver (the iLSVM and
MT-iLSVM algorithms solve these duals once per outer iteration on slowly changing
features); it is first projected onto the feasible set. At ``max_iter`` passes the
solution is returned with ``converged=False``; nothing is raised.

Solver: blocks of 10 passes of dual coordinate descent (:mod:`regbayes.core.dual_kernels`,
numba; rows in a random order drawn from ``seed``), each followed by an active-set finish
(:mod:`regbayes.core.polish`: Gap Safe screening, then Newton steps on the face of the
variables that are off their bounds), which is kept only if it raises the dual
objective. Coordinate descent alone identifies the bounds quickly but converges slowly
on the rows on the margin (Gauss–Seidel on a system of rank at most ``dim(mu)``); the
finish solves that face exactly, so the solve ends once the face is right. The relative gap
``(primal - dual) / max(|primal|, |dual|)`` is checked after every pass and every finish
(``n_iter`` counts both), and once before the first pass (a warm start at the optimum
returns after 0 passes).
"""
from __future__ import annotations

import threading
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from threadpoolctl import ThreadpoolController

from ..validation import check_int, check_real
from . import dual_kernels, polish

__all__ = ["DualSolution", "binary_svm_dual", "crammer_singer_dual", "svr_dual", "warm_up_crammer_singer"]


class DualSolution(NamedTuple):
    """Solution of a dual problem of :mod:`regbayes.core.duals`.

    dual: the dual variables (shape depends on the problem)
    coef: ``mu``, the posterior mean of the weights, ``q(eta) = N(mu, I)``
    primal_objective, dual_objective: the objectives at ``coef`` and ``dual``
    gap: ``primal_objective - dual_objective`` (>= 0 up to rounding, weak duality)
    n_iter: passes of coordinate descent plus active-set finishes
    converged: whether ``gap <= tol * max(|primal|, |dual|)`` was reached within ``max_iter``
    """

    dual: np.ndarray
    coef: np.ndarray
    primal_objective: float
    dual_objective: float
    gap: float
    n_iter: int
    converged: bool


def _features(features) -> np.ndarray:
    if sp.issparse(features):
        features = features.toarray()
    if np.iscomplexobj(features):
        raise TypeError("features must be real numbers, got complex values")
    try:
        X = np.asarray(features, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"features must be a numeric (N, K) array, got {type(features).__name__}") from exc
    if X.ndim != 2:
        raise ValueError(f"features must be a 2-D (N, K) array, got shape {X.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"features must have at least one row and one column, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        row, col = np.argwhere(~np.isfinite(X))[0]
        raise ValueError(f"features contains NaN or infinity (first at row {row}, column {col})")
    return np.ascontiguousarray(X)


def _float_array(value, name: str, shape: tuple, *, kind: str, shape_rule: str, copy: bool = False,
                 first_bad: bool = False) -> np.ndarray:
    """``value`` as a C-contiguous float64 array of ``shape`` with finite entries (a copy with
    ``copy``); a TypeError ("``name`` must be ``kind``") when it is not numeric, a ValueError
    ("``name`` must ``shape_rule``") for another shape, and one naming NaN or infinity (with
    the first such row with ``first_bad``)."""
    if np.iscomplexobj(value):
        raise TypeError(f"{name} must be {kind} (real numbers), got complex values")
    try:
        out = np.array(value, dtype=np.float64) if copy else np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be {kind}, got {type(value).__name__}") from exc
    if out.shape != shape:
        raise ValueError(f"{name} must {shape_rule}, got {out.shape}")
    finite = np.isfinite(out)
    if not np.all(finite):
        where = f" (first at row {np.argwhere(~finite)[0][0]})" if first_bad else ""
        raise ValueError(f"{name} contains NaN or infinity{where}")
    return np.ascontiguousarray(out)


def _targets(y, n: int) -> np.ndarray:
    return _float_array(y, "y", (n,), kind="a numeric array", shape_rule=f"have shape ({n},) to match features", first_bad=True)


def _row_costs(C, n: int) -> np.ndarray:
    """``C`` (a scalar >= 0 or an (n,) array of them) as an (n,) float64 array."""
    if np.ndim(C) == 0:
        return np.full(n, check_real("C", C.item() if isinstance(C, np.ndarray) else C, low=0.0))
    C = _float_array(C, "C", (n,), kind="a number or an array of numbers",
                     shape_rule=f"be a scalar or have shape ({n},) (one value per row)")
    if np.any(C < 0):
        raise ValueError(f"C must be >= 0, got {C.min()} (at row {int(np.argmin(C))})")
    return C


def _options(tol, max_iter, seed):
    tol = check_real("tol", tol, low=0.0)
    return tol, check_int("max_iter", max_iter, minimum=1), check_int("seed", seed, minimum=0) % 2**64


def _initial(initial_dual, shape, name="initial_dual") -> np.ndarray:
    """A float64 copy of ``initial_dual`` (zeros when None): never the caller's array."""
    if initial_dual is None:
        return np.zeros(shape)
    # a copy: the kernels write in place
    return _float_array(initial_dual, name, shape, kind="a numeric array", shape_rule=f"have shape {shape}", copy=True)


_CONTROLLER = []


def _blas_controller() -> ThreadpoolController:
    """One threadpoolctl controller for the process (building one inspects the loaded
    libraries: half a millisecond; limiting through it, microseconds)."""
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def _stream(seed: int, chunk: int) -> np.uint64:
    """The kernel's seed for the ``chunk``-th block of passes (distinct streams per block)."""
    return np.uint64((seed * 6364136223846793005 + chunk * 1442695040888963407 + 1) % 2**64)


def _finish_budget(X, n_blocks: int = 1) -> float:
    """Floating-point work allowed to one active-set finish: 100 passes of coordinate
    descent (``2 N K n_blocks`` each), or 3e8 (a fraction of a second) if that is more."""
    return max(200.0 * X.size * n_blocks, 3e8)


#: Relative gaps at least this loose are left to coordinate descent for a first chunk of
#: ``LOOSE_FIRST_PASSES`` passes: it usually reaches them in a few dozen, while an
#: active-set finish can cost up to a hundred. A problem where it stalls then gets the
#: usual alternation.
FINISH_BELOW_TOL = 1e-3
LOOSE_FIRST_PASSES = 100


def _drive(run, finish, dual, max_iter: int, seed: int, tol: float, cd_passes: int = 10) -> DualSolution:
    """Alternate ``cd_passes`` passes of coordinate descent with the active-set finish of
    :mod:`regbayes.core.polish`, kept only if it raises the dual objective; the gap is
    checked after every pass and every finish (``n_iter`` counts both). A warm start gets
    no earlier finish: it usually meets the tolerance within its first passes, and a
    finish costs tens of passes. For ``tol >= FINISH_BELOW_TOL`` the first chunk is
    ``LOOSE_FIRST_PASSES`` passes long.

    ``run(dual, passes, seed) -> (mu, primal, dual_value, passes_done, converged)`` runs
    the kernel in place on ``dual`` (``passes = 0`` evaluates the objectives only);
    ``finish(dual, mu)`` returns a feasible dual."""
    mu, primal, value, _, converged = run(dual, 0, np.uint64(0))
    n_iter, chunk = 0, 0
    while not converged and n_iter < max_iter:
        passes = LOOSE_FIRST_PASSES if chunk == 0 and tol >= FINISH_BELOW_TOL else cd_passes
        mu, primal, value, done, converged = run(dual, min(passes, max_iter - n_iter), _stream(seed, chunk))
        n_iter, chunk = n_iter + done, chunk + 1
        if converged or n_iter >= max_iter:
            break
        with _blas_controller().limit(limits=1, user_api="blas"):  # small dense algebra: one thread is fastest
            candidate = finish(dual, mu, primal - value)
        result = run(candidate, 0, np.uint64(0))
        n_iter += 1
        if result[2] > value:
            dual[...] = candidate
            mu, primal, value, _, converged = result
    return DualSolution(dual=dual, coef=mu, primal_objective=float(primal), dual_objective=float(value),
                        gap=float(primal - value), n_iter=int(n_iter), converged=bool(converged))


def binary_svm_dual(features, y, C, *, tol=1e-8, max_iter=1000, initial_dual=None, seed=0) -> DualSolution:
    """Solve the binary max-margin dual of paper 002, eq. 28 (Lemma 9, Appendix D.1)::

        max_w  sum_n w_n - 1/2 ||mu||^2,   0 <= w_n <= C_n,   mu = sum_n y_n w_n x_n,

    the dual of the bias-free linear SVM

        min_mu  1/2 ||mu||^2 + sum_n C_n max(0, 1 - y_n mu.x_n).

    Eq. 28 has one ``C`` for all rows; a per-row ``C_n`` is the same derivation with
    ``g0`` scaled row by row, and ``C_n = 0`` removes row ``n``. Solved by dual coordinate
    descent (Hsieh et al. 2008) with the active-set finish of the module docstring, until
    the relative duality gap is at most ``tol``. The same problem as scikit-learn's
    ``LinearSVC(loss="hinge", fit_intercept=False)``.

    Parameters
    ----------
    features : (N, K) array (a sparse matrix is densified); ``x_n`` are its rows.
    y : (N,) array of +1/-1.
    C : float >= 0 or (N,) array of them.
    tol : relative duality gap to stop at, ``gap <= tol * max(|primal|, |dual|)``.
    max_iter : most passes over the rows (coordinate descent passes plus finishes).
    initial_dual : (N,) warm start for ``w``, clipped to ``[0, C_n]``.
    seed : integer seed of the row order.

    Returns
    -------
    DualSolution with ``dual`` = ``w`` (N,) and ``coef`` = ``mu`` (K,), the mean of
    ``q(eta) = N(mu, I)``.
    """
    X = _features(features)
    n = X.shape[0]
    y = _targets(y, n)
    if not np.all((y == 1.0) | (y == -1.0)):
        bad = y[(y != 1.0) & (y != -1.0)][0]
        raise ValueError(f"y must hold only +1 and -1 (binary labels), got {bad!r}")
    C = _row_costs(C, n)
    tol, max_iter, seed = _options(tol, max_iter, seed)
    w = np.clip(_initial(initial_dual, (n,)), 0.0, C)
    return _drive(lambda dual, passes, stream: dual_kernels.binary_svm_cd(X, y, C, dual, tol, passes, stream),
                  lambda dual, mu, gap: polish.binary_polish(X, y, C, dual, mu, gap, _finish_budget(X)), w, max_iter, seed, tol)


def svr_dual(features, y, C, epsilon, *, tol=1e-8, max_iter=1000, initial_dual=None, seed=0) -> DualSolution:
    """Solve the epsilon-insensitive regression dual given by Lemma 11 (Appendix C.4)::

        max_beta  sum_n (beta_n y_n - eps |beta_n|) - 1/2 ||mu||^2,
                  |beta_n| <= C_n,   mu = sum_n beta_n x_n,

    from Theorem 6 with ``g(Eq) = sum_n g2(mu.x_n; y_n, eps)``: the dual term is
    ``-g2*(-beta_n; y_n, eps)`` and ``log Z = 1/2 ||mu||^2`` for the N(0, I) prior. In the
    split form ``beta_n = omega_n - omega*_n`` with ``omega, omega* in [0, C_n]`` (at most
    one non-zero at the optimum). The primal is the bias-free linear SVR

        min_mu  1/2 ||mu||^2 + sum_n C_n max(0, |mu.x_n - y_n| - eps),

    which is what scikit-learn's ``LinearSVR(loss="epsilon_insensitive",
    fit_intercept=False)`` solves: LinearSVR is the bias-free form of SVR. Solved by dual
    coordinate descent on ``beta`` (Ho & Lin 2012; each coordinate exactly, by soft
    thresholding and clipping), rows in a random order drawn from ``seed``, until the
    relative duality gap is at most ``tol``.

    Parameters
    ----------
    features : (N, K) array (a sparse matrix is densified).
    y : (N,) real targets.
    C : float >= 0 or (N,) array of them; ``C_n = 0`` removes row ``n``.
    epsilon : float >= 0, the half-width of the insensitive tube.
    tol, max_iter, seed : as in :func:`binary_svm_dual`.
    initial_dual : (N,) warm start for ``beta``, clipped to ``[-C_n, C_n]``.

    Returns
    -------
    DualSolution with ``dual`` = ``beta = omega - omega*`` (N,) and ``coef`` = ``mu`` (K,).
    """
    X = _features(features)
    n = X.shape[0]
    y = _targets(y, n)
    C = _row_costs(C, n)
    epsilon = check_real("epsilon", epsilon, low=0.0)
    tol, max_iter, seed = _options(tol, max_iter, seed)
    beta = np.clip(_initial(initial_dual, (n,)), -C, C)
    return _drive(lambda dual, passes, stream: dual_kernels.svr_cd(X, y, C, epsilon, dual, tol, passes, stream),
                  lambda dual, mu, gap: polish.svr_polish(X, y, C, epsilon, dual, mu, gap, _finish_budget(X)), beta,
                  max_iter, seed, tol)


def _class_labels(y, n: int, n_classes) -> tuple[np.ndarray, int]:
    y_arr = np.asarray(y)
    if y_arr.shape != (n,):
        raise ValueError(f"y must have shape ({n},) to match features, got {y_arr.shape}")
    if y_arr.dtype.kind == "f":
        if not np.all(np.isfinite(y_arr)):
            raise ValueError(f"y contains NaN or infinity (first at row {np.argwhere(~np.isfinite(y_arr))[0][0]}); "
                             "it must hold integer class labels 0..L-1")
        if np.any(y_arr != np.round(y_arr)):
            raise ValueError("y must hold integer class labels 0..L-1")
    elif y_arr.dtype.kind not in "iub":
        raise TypeError(f"y must hold integer class labels 0..L-1, got dtype {y_arr.dtype}")
    labels = y_arr.astype(np.int64)
    if labels.min() < 0:
        raise ValueError(f"y must hold class labels 0..L-1, got {labels.min()}")
    if n_classes is None:
        n_classes = int(labels.max()) + 1
    else:
        n_classes = check_int("n_classes", n_classes, minimum=1)
        if labels.max() >= n_classes:
            raise ValueError(f"y holds label {labels.max()}, outside 0..n_classes-1 = 0..{n_classes - 1}")
    return np.ascontiguousarray(labels), n_classes


def _cost_matrix(cost, labels: np.ndarray, n_classes: int) -> np.ndarray:
    n = labels.shape[0]
    if cost is None:
        out = np.ones((n, n_classes))
        out[np.arange(n), labels] = 0.0
        return out
    cost = _float_array(cost, "cost", (n, n_classes), kind="a numeric (N, L) array",
                        shape_rule=f"have shape ({n}, {n_classes}) (rows, classes)")
    if np.any(cost < 0):
        raise ValueError("cost must be >= 0 (the non-negative cost l_n(y) of section 4.2)")
    return cost


def _project_rows(start: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Each row of ``start`` projected onto ``{omega >= 0, sum omega = C_n}`` (one compiled
    loop over the rows)."""
    n, L = start.shape
    out = np.empty(n * L)
    dual_kernels.project_segments(np.ascontiguousarray(start).reshape(-1), np.arange(0, n * L + 1, L), C, out)
    return out.reshape(n, L)


#: ``screen=True`` (:func:`crammer_singer_dual`): a column whose largest absolute entry is
#: below this fraction of the largest entry of the features is left out of a first solve.
SCREEN_FRACTION = 1e-2


def crammer_singer_dual(features, y, C, *, n_classes=None, cost=None, tol=1e-8, max_iter=1000, initial_dual=None,
                        seed=0, screen=False) -> DualSolution:
    """Solve the multi-class (Crammer–Singer) dual of iLSVM, eq. 34 with Lemma 12's cost::

        max_omega  sum_n sum_y omega_n^y l_n(y) - 1/2 ||mu||^2,
                   omega_n^y >= 0,  sum_y omega_n^y = C_n,
        mu = sum_n sum_y omega_n^y (g(y_n, x_n) - g(y, x_n)),

    with ``g(y, x)`` the vector stacking L blocks, block ``y`` equal to ``x`` (eq. 9); so
    ``mu`` is the (L, K) matrix whose row ``k`` is ``sum_n (C_n 1[k = y_n] - omega_n^k) x_n``.
    Its primal is

        min_mu  1/2 ||mu||^2 + sum_n C_n max_y (l_n(y) - mu_{y_n}.x_n + mu_y.x_n).

    Correction of a misprint: eq. 34 as printed maximises ``sum_n sum_y omega_n^y``
    without the cost, which equals the constant ``N C`` on the feasible set (so the
    printed dual would be solved by ``mu = 0``); the cost term ``omega_n^y l_n(y)`` is the
    one of Lemma 12 (and of its proof in Appendix C.5), which is what the primal above
    needs. The default cost is the 0/1 cost ``l_n(y) = 1[y != y_n]``, which makes this the
    problem of scikit-learn's ``LinearSVC(multi_class="crammer_singer", fit_intercept=False)``.

    Solved by the sequential dual method (Keerthi et al. 2008): each row's sub-problem
    exactly (a projection onto the scaled simplex, by sorting), with the active-set
    finish of the module docstring, until the relative duality gap is at most ``tol``.

    Parameters
    ----------
    features : (N, K) array (a sparse matrix is densified).
    y : (N,) integer classes in ``0..L-1``.
    C : float >= 0 or (N,) array of them; ``C_n = 0`` removes row ``n``.
    n_classes : L (default ``max(y) + 1``); classes absent from ``y`` still get a row of ``coef``.
    cost : (N, L) array of non-negative costs ``l_n(y)`` (default 0/1).
    tol, max_iter, seed : as in :func:`binary_svm_dual`.
    initial_dual : (N, L) warm start for ``omega``, each row projected onto the simplex.
    screen : bool, default False
        Solve first without the columns whose largest absolute entry is below
        :data:`SCREEN_FRACTION` of the largest entry (near-zero columns, such as switched-off
        latent features, barely move ``mu`` but cost each pass as much as the others), then
        warm-start the full problem from that solution (feasible for it: the constraints
        do not involve the columns), which returns it after one evaluation when it meets
        ``tol`` there and continues otherwise. The result meets ``tol`` on the full problem
        either way; ``n_iter`` counts the passes of both solves.

    Returns
    -------
    DualSolution with ``dual`` = ``omega`` (N, L) and ``coef`` = ``mu`` (L, K): the posterior
    mean of ``eta`` reshaped to one row per class, so that ``f(y, x) = coef[y] @ x``.
    """
    X = _features(features)
    n = X.shape[0]
    labels, n_classes = _class_labels(y, n, n_classes)
    cost = _cost_matrix(cost, labels, n_classes)
    C = _row_costs(C, n)
    tol, max_iter, seed = _options(tol, max_iter, seed)
    if screen:
        size = np.max(np.abs(X), axis=0)
        keep = size >= SCREEN_FRACTION * size.max()
        if not keep.all():
            first = crammer_singer_dual(X[:, keep], labels, C, n_classes=n_classes, cost=cost, tol=tol, max_iter=max_iter,
                                        initial_dual=initial_dual, seed=seed)
            full = crammer_singer_dual(X, labels, C, n_classes=n_classes, cost=cost, tol=tol,
                                       max_iter=max(1, max_iter - first.n_iter), initial_dual=first.dual, seed=seed)
            return full._replace(n_iter=first.n_iter + full.n_iter)
    omega = _initial(initial_dual, (n, n_classes))
    if initial_dual is None:
        omega[np.arange(n), labels] = C  # feasible start: mu = 0
    else:
        omega = _project_rows(omega, C)
    return _drive(
        lambda dual, passes, stream: dual_kernels.crammer_singer_cd(X, labels, C, cost, dual, tol, passes, stream),
        lambda dual, mu, gap: polish.crammer_singer_polish(X, labels, C, cost, dual, mu, gap,
                                                           _finish_budget(X, n_classes)), omega,
        max_iter, seed, tol)


_WARM_UP: list[threading.Thread] = []


def warm_up_crammer_singer() -> None:
    """Compile (or load from numba's disk cache) the kernels of :func:`crammer_singer_dual`
    and of its active-set finish in a background thread, once per process. A first fit
    that starts this before XLA compiles its own programs (XLA's compiler releases the
    GIL) waits for the two compilations side by side instead of one after the other; a
    dual solved before the thread ends waits for numba's compiler lock, nothing more."""
    if not _WARM_UP:
        _WARM_UP.append(threading.Thread(target=_warm_up, name="regbayes-compile", daemon=True))
        _WARM_UP[0].start()


def _warm_up() -> None:
    try:
        _solve_a_small_problem()
    except Exception:  # noqa: BLE001 - a failed warm-up only means compiling later, in the fit
        pass


def _solve_a_small_problem() -> np.ndarray:
    """A warm-started solve and an active-set finish on five rows, with the argument types
    of real solves (so that each kernel is compiled once); returns the finish's dual."""
    X = np.array([[1.0, 0.2], [0.1, 1.0], [0.9, 0.8], [-1.0, 0.5], [0.3, -0.7]])
    labels, n_classes = _class_labels(np.array([0, 1, 1, 0, 2]), 5, None)
    C, cost = _row_costs(1.0, 5), _cost_matrix(None, labels, n_classes)
    solution = crammer_singer_dual(X, labels, 1.0, tol=1e-8, max_iter=20, initial_dual=np.full((5, 3), 1.0 / 3))
    return polish.crammer_singer_polish(X, labels, C, cost, solution.dual.copy(), solution.coef,
                                        max(solution.gap, 1e-3), _finish_budget(X, n_classes))
