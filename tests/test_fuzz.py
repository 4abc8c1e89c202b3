"""Fuzzed inputs (hypothesis) for every estimator: bad inputs get a clear error, awkward but
valid inputs a finite result of the right shape, and no input is changed.

* ``test_fit_refuses_bad_input`` / ``test_methods_refuse_bad_input``: NaN and infinity,
  empty, one class, mismatched lengths, wrong dimensions, strings, objects and complex
  numbers, negative and non-integer counts for the topic models. Each must raise a
  ValueError or TypeError from validation (before any sampling, so each example is cheap)
  whose message names the problem (:data:`MESSAGES`).
* ``test_awkward_valid_input``: huge and tiny scales, constant columns, duplicated rows,
  non-contiguous and read-only arrays, every scipy.sparse format, integer and float32
  dtypes. A fit runs on each; the results must be finite and shaped right, or the error
  must name the scale. The data keep one shape so that no new program is compiled.
* ``test_parallel_model_selection``: ``GridSearchCV(n_jobs=2)`` and
  ``cross_val_score(n_jobs=2)`` with every estimator (process-based workers).

``derandomize=True`` keeps the examples the same on every run.
"""
from __future__ import annotations

import os
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from regbayes import (M2DPM, BayesianSVC, DPMeansSVC, DPMNLClassifier, IBPFeatures, InfiniteLatentSVC, InfiniteSVC, MedLDA,
                      MedLDARegressor, MultiTaskInfiniteLatentSVC, MultiTaskInfiniteLatentSVR, PassiveAggressiveMedLDA)
from regbayes.inference import DivergenceError

N, D = 20, 3
FIT_EXAMPLES = 600  # bad inputs to fit, per estimator
METHOD_EXAMPLES = 400  # bad inputs to predict / transform / ..., per estimator
AWKWARD_EXAMPLES = 8  # valid inputs that run a fit, per estimator

_rng = np.random.default_rng(0)
BASE_X = _rng.normal(size=(N, D))
BASE_LABELS = np.tile([0, 1], N // 2)
BASE_X[BASE_LABELS == 1, 0] += 1.0
BASE_COUNTS = np.rint(np.abs(BASE_X) * 3) + np.eye(N, D)  # every document has a word
BASE_RESPONSE = BASE_X[:, 1].copy()
BASE_INDICATOR = np.stack([BASE_LABELS, np.tile([0, 0, 1, 1], N // 4)], axis=1)

# kind of data: "dense" features, word "counts"; kind of target: class "labels", real
# "response", label-"indicator" matrix, None (unsupervised)
ESTIMATORS = {
    "BayesianSVC": (lambda: BayesianSVC(n_draws=50, n_warmup=50), "dense", "labels"),
    "InfiniteSVC": (lambda: InfiniteSVC(n_iter=4, n_warmup=2), "dense", "labels"),
    "DPMNLClassifier": (lambda: DPMNLClassifier(n_iter=4, n_warmup=2), "dense", "labels"),
    "M2DPM": (lambda: M2DPM(max_iter=3, random_state=0), "dense", "labels"),
    "DPMeansSVC": (lambda: DPMeansSVC(max_iter=5, random_state=0), "dense", "labels"),
    "MedLDA": (lambda: MedLDA(n_topics=2, sampler="gibbs", n_iter=3, n_draws=1, n_transform_sweeps=2), "counts", "labels"),
    "MedLDARegressor": (lambda: MedLDARegressor(n_topics=2, n_iter=3, n_transform_sweeps=2), "counts", "response"),
    "PassiveAggressiveMedLDA": (lambda: PassiveAggressiveMedLDA(n_topics=2, n_draws=1, n_transform_sweeps=2), "counts", "labels"),
    "MultiTaskInfiniteLatentSVC": (lambda: MultiTaskInfiniteLatentSVC(truncation=4, n_iter=3, include_inputs=True, random_state=0),
                                   "dense", "indicator"),
    "MultiTaskInfiniteLatentSVR": (lambda: MultiTaskInfiniteLatentSVR(truncation=4, n_iter=3, include_inputs=True, random_state=0),
                                   "dense", "response"),
    "IBPFeatures": (lambda: IBPFeatures(truncation=5, n_iter=3, random_state=0), "dense", None),
    "InfiniteLatentSVC": (lambda: InfiniteLatentSVC(truncation=5, n_iter=3, random_state=0), "dense", "labels"),
}
NAMES = list(ESTIMATORS)
METHODS = ("predict", "predict_proba", "decision_function", "transform", "score")

#: what the message of each class of bad input must say (a regular expression, case ignored)
MESSAGES = {
    "nan": r"nan|infinit",
    "no_rows": r"0 sample|empty|no document",
    "no_columns": r"0 feature|no columns|empty vocabulary",
    "one_class": r"class",
    "length": r"inconsistent numbers of samples|rows|documents|one target per row",
    "ndim": r"2d array|dim|dimension|single string",
    "strings": r"string|convert|dtype|numeric",
    "complex": r"complex",
    "negative": r"negative",
    "fractional": r"integer",
    "y_nan": r"nan|infinit",
    "y_strings": r"real|dtype|label|0 and 1|unknown",
    "features": r"features|words|columns",
    "texts": r"texts|string|count matrix",
    "scale": r"scale|large|small|standardi",
}


def base_X(kind):
    return BASE_COUNTS.copy() if kind == "counts" else BASE_X.copy()


def base_y(target):
    return {"labels": BASE_LABELS, "response": BASE_RESPONSE, "indicator": BASE_INDICATOR, None: None}[target]


def accepts_sparse(est):
    return est.__sklearn_tags__().input_tags.sparse


def _fit(est, X, y):
    return est.fit(X) if y is None else est.fit(X, y)


# ---------------------------------------------------------------- strategies
SPARSE_FORMATS = ("csr", "csc", "coo", "lil", "dok", "bsr", "dia")


@st.composite
def containers(draw, A, sparse=True):
    """``A`` as a dense array (C or F order, maybe read-only), a list, or (``sparse``) a sparse
    matrix or array."""
    how = draw(st.sampled_from(("array", "fortran", "readonly", "list", "sparse") if sparse else
                               ("array", "fortran", "readonly", "list")))
    if how == "fortran":
        return np.asfortranarray(A)
    if how == "readonly":
        A = A.copy()
        A.flags.writeable = False
        return A
    if how == "list" and A.dtype != object and A.size:
        return A.tolist()
    if how == "sparse" and A.ndim == 2 and A.dtype.kind in "fiu":
        fmt = draw(st.sampled_from(SPARSE_FORMATS))
        cls = sp.csr_array if draw(st.booleans()) else sp.csr_matrix
        return cls(A).asformat(fmt)
    return A


def _cells(draw, n, d):
    return draw(st.integers(0, n - 1)), draw(st.integers(0, d - 1))


@st.composite
def bad_X(draw, kind, sparse, n=N, d=D):
    """``(problem, X)``: a bad input matrix of the estimator's kind."""
    problems = ["nan", "no_rows", "no_columns", "ndim", "strings", "complex"]
    if kind == "counts":
        problems += ["negative", "fractional"]
    problem = draw(st.sampled_from(problems))
    X = base_X(kind)
    if problem == "nan":
        i, j = _cells(draw, n, d)
        X[i, j] = draw(st.sampled_from((np.nan, np.inf, -np.inf)))
        if draw(st.booleans()):
            X = X.astype(np.float32)
        return problem, draw(containers(X, sparse))
    if problem == "no_rows":
        return problem, draw(containers(X[:0], sparse))
    if problem == "no_columns":
        return problem, draw(containers(X[:, :0], sparse))
    if problem == "ndim":
        shape = draw(st.sampled_from(("1d", "3d", "scalar")))
        return problem, {"1d": X[:, 0], "3d": X[None], "scalar": X[0, 0]}[shape]
    if problem == "strings":
        word = draw(st.text(alphabet="abcxyz ", min_size=1, max_size=5).filter(lambda s: s.strip()))
        i, j = _cells(draw, n, d)
        if draw(st.booleans()):
            A = X.astype(object)
            A[i, j] = word
        else:
            A = X.astype(str)
            A = A.astype(f"<U{max(len(word), A.dtype.itemsize // 4)}")
            A[i, j] = word
        return problem, draw(containers(A, sparse))
    if problem == "complex":
        A = X.astype(complex)
        i, j = _cells(draw, n, d)
        A[i, j] += 1j * draw(st.floats(0.5, 3))
        return problem, A
    i, j = _cells(draw, n, d)
    if problem == "negative":
        X[i, j] = -draw(st.integers(1, 5))
    else:
        X[i, j] += draw(st.sampled_from((0.5, 0.25, 1e-3)))
    return problem, draw(containers(X, sparse))


@st.composite
def bad_fit_inputs(draw, kind, target, sparse):
    """``(problem, X, y)`` with exactly one problem, in X or in y."""
    y = base_y(target)
    problems = ["X"]
    if target is not None:
        problems += ["length", "y_nan", "y_strings"]
    if target in ("labels", "indicator"):
        problems.append("one_class")
    where = draw(st.sampled_from(problems))
    if where == "X":
        problem, X = draw(bad_X(kind, sparse))
        return problem, X, y
    X = draw(containers(base_X(kind), sparse))
    y = y.copy()
    if where == "length":
        k = draw(st.integers(1, 5))
        return "length", X, (y[:-k] if draw(st.booleans()) else np.concatenate([y, y[:k]]))
    if where == "y_nan":
        y = y.astype(float)
        y[draw(st.integers(0, N - 1))] = draw(st.sampled_from((np.nan, np.inf)))
        return "y_nan", X, y
    if where == "y_strings":
        if target == "labels":  # labels may be strings; a mix of strings and numbers may not
            y = y.astype(object)
            y[draw(st.integers(0, N - 1))] = draw(st.text(alphabet="abc", min_size=1, max_size=3))
        else:
            y = y.astype(str).astype("<U8")
            y[(draw(st.integers(0, N - 1)),) + ((0,) if y.ndim == 2 else ())] = "yes"
        return "y_strings", X, y
    # one class: every label (or a whole indicator column) the same
    if target == "indicator":
        y[:, draw(st.integers(0, y.shape[1] - 1))] = draw(st.integers(0, 1))
    else:
        y[:] = y[0]
    return "one_class", X, y


# ---------------------------------------------------------------- checks
def _snapshot(value):
    """A deep copy of an input, to check that a call did not change it."""
    if sp.issparse(value):
        return value.copy()
    if isinstance(value, list):
        return [list(r) if isinstance(r, list) else r for r in value]
    return np.array(value, copy=True)


def _assert_unchanged(before, after):
    if sp.issparse(before):
        assert type(before) is type(after) and before.format == after.format
        np.testing.assert_array_equal(before.toarray(), after.toarray())
        return
    if isinstance(before, list):
        assert before == after
        return
    if before.dtype.kind in "fc":
        np.testing.assert_array_equal(before, after)
    else:
        assert before.shape == np.shape(after) and np.all(before == np.asarray(after))


def _assert_clear_error(exc_info, problem):
    message = str(exc_info.value)
    assert re.search(MESSAGES[problem], message, re.IGNORECASE), f"{problem}: unclear message {message!r}"


CACHE_OPTIONS = {"jax_compilation_cache_dir": None, "jax_persistent_cache_min_compile_time_secs": 0,
                 "jax_persistent_cache_min_entry_size_bytes": 0}


@pytest.fixture(scope="module", autouse=True)
def compilation_cache(tmp_path_factory):
    """JAX's persistent compilation cache for this module, in a temporary folder, and for the
    worker processes of ``test_parallel_model_selection`` (through the environment): the
    workers load the programs compiled here for the base data's shapes instead of compiling
    them again. The run's shared cache (``tests/conftest.py``) serves where it is on."""
    import jax

    if os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        yield
        return
    options = dict(CACHE_OPTIONS, jax_compilation_cache_dir=str(tmp_path_factory.mktemp("jax-cache")))
    saved = {name: getattr(jax.config, name) for name in options}
    with pytest.MonkeyPatch.context() as env:
        for name, value in options.items():
            jax.config.update(name, value)
            env.setenv(name.upper(), str(value))
        yield
    for name, value in saved.items():
        jax.config.update(name, value)


@pytest.fixture(scope="module")
def fitted():
    """Every estimator fitted once on the base data (compiles the programs the tests reuse)."""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (make, kind, target) in ESTIMATORS.items():
            out[name] = _fit(make(), base_X(kind), base_y(target))
    return out


def _settings(n):
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


# ---------------------------------------------------------------- bad input to fit
@pytest.mark.parametrize("name", NAMES)
def test_fit_refuses_bad_input(name):
    make, kind, target = ESTIMATORS[name]
    est = make()
    count = {"n": 0}

    @_settings(FIT_EXAMPLES)
    @given(case=bad_fit_inputs(kind, target, accepts_sparse(est)))
    def run(case):
        problem, X, y = case
        X0, y0 = _snapshot(X), (None if y is None else _snapshot(y))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises((ValueError, TypeError)) as info:
                _fit(est, X, y)
        _assert_clear_error(info, problem)
        _assert_unchanged(X0, X)
        if y is not None:
            _assert_unchanged(y0, y)
        count["n"] += 1

    run()
    assert count["n"] >= FIT_EXAMPLES * 0.9


# ---------------------------------------------------------------- bad input to the fitted estimator's methods
@st.composite
def bad_method_inputs(draw, kind, sparse):
    if draw(st.integers(0, 4)) == 0:  # a different number of features (words)
        X = base_X(kind)
        d = draw(st.sampled_from((1, 2, 4, 7)))
        X = np.hstack([X, X])[:, :d] if d > D else X[:, :d]
        return "features", draw(containers(X, sparse))
    problem, X = draw(bad_X(kind, sparse))
    return problem, X


@pytest.mark.parametrize("name", NAMES)
def test_methods_refuse_bad_input(name, fitted):
    est = fitted[name]
    _, kind, target = ESTIMATORS[name]
    methods = [m for m in METHODS if hasattr(est, m)]
    count = {"n": 0}

    @_settings(METHOD_EXAMPLES)
    @given(case=bad_method_inputs(kind, accepts_sparse(est)), method=st.sampled_from(methods))
    def run(case, method):
        problem, X = case
        X0 = _snapshot(X)
        args = (X, base_y(target)) if method == "score" else (X,)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises((ValueError, TypeError)) as info:
                getattr(est, method)(*args)
        if method != "score" or problem != "no_rows":  # score: the labels' length may be named first
            _assert_clear_error(info, "length" if method == "score" and problem == "no_rows" else problem)
        _assert_unchanged(X0, X)
        count["n"] += 1

    run()
    assert count["n"] >= METHOD_EXAMPLES * 0.9


# ---------------------------------------------------------------- awkward but valid input
@st.composite
def awkward_inputs(draw, kind, sparse):
    """``(what, X)`` valid data of the base shape, awkwardly made (sparse where accepted)."""
    whats = ("scale", "constant", "duplicates", "strided", "readonly", "dtype") + (("sparse",) if sparse else ())
    what = draw(st.sampled_from(whats))
    X = base_X(kind)
    if what == "scale":
        if kind == "counts":  # counts scale up only (a fraction of a word is not a count)
            X = X * draw(st.sampled_from((10, 1000)))
        else:
            X = X * 10.0 ** draw(st.sampled_from((-300, -100, -30, -12, -6, 6, 12, 30, 100, 300)))
    elif what == "constant":
        j = draw(st.integers(0, D - 1))
        X[:, j] = draw(st.sampled_from((0.0, 1.0, 7.0)))
        if kind == "counts":
            X[:, (j + 1) % D] += 1  # no empty document
    elif what == "duplicates":
        i, k = draw(st.integers(0, N - 1)), draw(st.integers(0, N - 1))
        X[i] = X[k]
    elif what == "strided":
        big = np.zeros((2 * N, 2 * D))
        big[::2, ::2] = X
        X = big[::2, ::2] if draw(st.booleans()) else np.asfortranarray(X)
    elif what == "readonly":
        X.flags.writeable = False
    elif what == "sparse":
        fmt = draw(st.sampled_from(SPARSE_FORMATS))
        cls = sp.csr_array if draw(st.booleans()) else sp.csr_matrix
        X = cls(X).asformat(fmt)
    else:
        dtype = draw(st.sampled_from((np.float32, np.int64, np.int32) if kind == "counts" else (np.float32,)))
        X = X.astype(dtype)
    return what, X


def _check_output(value, n_rows):
    value = np.asarray(value)
    assert value.shape[:1] == (n_rows,)
    if value.dtype.kind in "fc":
        assert np.all(np.isfinite(value))


@pytest.mark.parametrize("name", NAMES)
def test_awkward_valid_input(name, fitted):
    make, kind, target = ESTIMATORS[name]
    y = base_y(target)
    est = make()
    seen = []

    @_settings(AWKWARD_EXAMPLES)
    @given(case=awkward_inputs(kind, accepts_sparse(est)))
    def run(case):
        what, X = case
        X0 = _snapshot(X)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                _fit(est, X, y)
            except (ValueError, DivergenceError) as exc:  # a scale the model cannot fit must be named
                assert what == "scale", f"{what}: {exc!r}"
                assert re.search(MESSAGES["scale"], str(exc), re.IGNORECASE), f"unclear message {exc!r}"
                _assert_unchanged(X0, X)
                seen.append(what)
                return
            for method in METHODS:
                if hasattr(est, method):
                    args = (X, y) if method == "score" else (X,)
                    out = getattr(est, method)(*args)
                    if method != "score":
                        _check_output(out, N)
                    else:
                        assert np.isfinite(out)
        _assert_unchanged(X0, X)
        seen.append(what)

    run()
    assert len(seen) >= 1


# ---------------------------------------------------------------- texts for the topic models
TOPIC_NAMES = [name for name, (_, kind, _) in ESTIMATORS.items() if kind == "counts"]
TEXTS = [f"apple banana {'cherry ' * (i % 3)}date{i % 4} elder" for i in range(N)]


@st.composite
def bad_texts(draw):
    problem = draw(st.sampled_from(("single", "empty", "mixed", "length")))
    if problem == "single":
        return "ndim", " ".join(TEXTS), BASE_LABELS
    if problem == "empty":
        return "no_columns", [draw(st.sampled_from(("", " ", "the a and")))] * N, BASE_LABELS
    if problem == "mixed":
        texts = list(TEXTS)
        texts[draw(st.integers(1, N - 1))] = draw(st.sampled_from((3, None, 2.5, ["a", "b"])))
        return "strings", texts, BASE_LABELS
    return "length", TEXTS, BASE_LABELS[: -draw(st.integers(1, 4))]


@pytest.mark.parametrize("name", TOPIC_NAMES)
def test_topic_models_refuse_bad_texts(name):
    make, _, target = ESTIMATORS[name]
    est = make()

    @_settings(60)
    @given(case=bad_texts())
    def run(case):
        problem, texts, y = case
        if target == "response":
            y = BASE_RESPONSE[: len(y)]
        before = list(texts) if isinstance(texts, list) else texts
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises((ValueError, TypeError)) as info:
                est.fit(texts, y)
        _assert_clear_error(info, problem)
        assert texts == before

    run()


# ---------------------------------------------------------------- parallel model selection
GRIDS = {
    "BayesianSVC": {"C": [0.5, 1.0]},
    "InfiniteSVC": {"C": [0.5, 1.0]},
    "DPMNLClassifier": {"alpha": [0.5, 1.0]},
    "M2DPM": {"C": [0.5, 1.0]},
    "DPMeansSVC": {"C": [0.5, 1.0]},
    "MedLDA": {"C": [0.5, 1.0]},
    "MedLDARegressor": {"C": [0.5, 1.0]},
    "PassiveAggressiveMedLDA": {"C": [0.5, 1.0]},
    "MultiTaskInfiniteLatentSVC": {"C": [0.5, 1.0]},
    "MultiTaskInfiniteLatentSVR": {"C": [0.5, 1.0]},
    "IBPFeatures": {"ibpfeatures__alpha": [0.5, 1.0]},  # in a pipeline with a classifier (the IBP+SVM baseline)
    "InfiniteLatentSVC": {"C": [0.5, 1.0]},
}


def test_parallel_model_selection(fitted):
    """Every estimator in GridSearchCV(n_jobs=2): the workers are processes, so the
    estimators travel pickled (cloned, unfitted) and JAX runs in each worker; the scores
    come back from the workers. (``cross_val_score(n_jobs=2)`` runs the same path.)

    The data are the base data twice, so that each of the two folds trains on the base data
    (the shapes ``fitted`` compiled; the workers find the programs in the compilation cache).
    ``refit=False``: a refit on both copies would compile new shapes here."""
    cv = KFold(2)
    for name, (make, kind, target) in ESTIMATORS.items():
        X, y = base_X(kind), (BASE_LABELS if target is None else base_y(target))
        X, y = np.concatenate([X, X]), np.concatenate([y, y])
        est = make() if target is not None else make_pipeline(make(), LinearSVC())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search = GridSearchCV(est, GRIDS[name], cv=cv, n_jobs=2, refit=False, error_score="raise").fit(X, y)
        assert search.best_params_ and np.isfinite(search.best_score_), name
        scores = search.cv_results_["mean_test_score"]
        assert scores.shape == (2,) and np.all(np.isfinite(scores)), name


# ---------------------------------------------------------------- public functions that take data
@st.composite
def bad_dual_inputs(draw):
    """``(problem, features, y, C)`` for the duals of :mod:`regbayes.core`, one problem each."""
    X, y, C = BASE_X.copy(), np.where(BASE_LABELS > 0, 1.0, -1.0), 1.0
    problem = draw(st.sampled_from(("nan", "no_rows", "ndim", "strings", "complex", "length", "y_nan", "C")))
    if problem in ("nan", "no_rows", "ndim", "strings", "complex"):
        problem, X = draw(bad_X("dense", True).filter(lambda case: case[0] == problem))
    elif problem == "length":
        y = y[: -draw(st.integers(1, 5))]
    elif problem == "y_nan":
        y[draw(st.integers(0, N - 1))] = draw(st.sampled_from((np.nan, np.inf)))
    else:
        C = draw(st.sampled_from((-1.0, np.nan, np.inf, np.ones(3), "1")))
    return problem, X, y, C


DUAL_MESSAGES = dict(MESSAGES, length=r"shape|match", no_rows=r"row|empty", ndim=r"2-d|dim", C=r"\bC\b",
                     strings=r"numeric|string|convert", complex=r"complex")


def test_duals_refuse_bad_input():
    from regbayes.core import binary_svm_dual, crammer_singer_dual, svr_dual

    duals = {"binary": lambda X, y, C: binary_svm_dual(X, y, C),
             "svr": lambda X, y, C: svr_dual(X, y, C, 0.1),
             "crammer_singer": lambda X, y, C: crammer_singer_dual(X, (np.asarray(y) + 1) / 2, C)}

    @_settings(300)
    @given(case=bad_dual_inputs(), which=st.sampled_from(sorted(duals)))
    def run(case, which):
        problem, X, y, C = case
        before = [_snapshot(v) for v in (X, y, C)]
        with pytest.raises((ValueError, TypeError)) as info:
            duals[which](X, y, C)
        assert re.search(DUAL_MESSAGES[problem], str(info.value), re.IGNORECASE), f"{problem}: {info.value!r}"
        for old, new in zip(before, (X, y, C)):
            _assert_unchanged(old, new)

    run()


@st.composite
def bad_draws(draw):
    A = np.random.default_rng(draw(st.integers(0, 3))).normal(size=(2, 20, 2))
    problem = draw(st.sampled_from(("nan", "empty", "ndim", "strings", "complex", "few")))
    if problem == "nan":
        A[draw(st.integers(0, 1)), draw(st.integers(0, 19)), 0] = draw(st.sampled_from((np.nan, np.inf, -np.inf)))
    elif problem == "empty":
        A = A[:, :0] if draw(st.booleans()) else np.zeros((0,))
    elif problem == "ndim":
        A = A[0, :, 0] if draw(st.booleans()) else A[0, 0, 0]
    elif problem == "strings":
        A = A.astype(object)
        A[0, 0, 0] = draw(st.sampled_from(("a", "x1", "")))
    elif problem == "complex":
        A = A + 1j
    else:
        A = A[:, : draw(st.integers(1, 3))]
    return problem, A


def test_diagnostics_refuse_bad_draws():
    from regbayes.diagnostics import compare_to_reference, effective_sample_size

    messages = dict(MESSAGES, empty=r"empty|draws", few=r"at least 4", ndim=r"shaped|shape")
    reference = np.random.default_rng(9).normal(size=(2, 20, 2))

    @_settings(200)
    @given(case=bad_draws(), which=st.sampled_from(("ess", "compare", "reference")))
    def run(case, which):
        problem, A = case
        before = _snapshot(A)
        call = {"ess": lambda: effective_sample_size(A, warn=False), "compare": lambda: compare_to_reference(A, reference),
                "reference": lambda: compare_to_reference(reference, A)}[which]
        with pytest.raises((ValueError, TypeError)) as info:
            call()
        assert re.search(messages[problem], str(info.value), re.IGNORECASE), f"{problem}: {info.value!r}"
        _assert_unchanged(before, A)

    run()
