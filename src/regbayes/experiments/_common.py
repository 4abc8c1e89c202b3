"""Shared pieces of the experiments: data, fitting with timing, running accuracy curves,
and writing the PNG / JSON / markdown outputs."""
from __future__ import annotations

import json
import math
import time
import warnings
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

__all__ = [
    "Fit",
    "fit_model",
    "running_accuracy",
    "posterior_draws",
    "relative_error",
    "load_higgs_like",
    "load_breast_cancer",
    "markdown_table",
    "write_outputs",
    "fmt",
]


class Fit(dict):
    """Result of :func:`fit_model`: ``model`` (or None), ``seconds`` (wall, compile
    included), ``compile_seconds``, ``sampling_seconds``, ``error`` (str or None),
    ``note`` (what was changed to make the run succeed) and ``params`` (final)."""

    __getattr__ = dict.get


def fit_model(make: Callable[..., object], X, y, *, retries: int = 3, shrink: float = 3.0, **params) -> Fit:
    """Fit ``make(**params)`` on ``(X, y)``; on a sampler divergence retry with the step
    size divided by ``shrink`` (at most ``retries`` times) and say so in ``note``.

    Never raises for a divergence or a numerical failure: the last error is returned in
    ``error`` with ``model=None``, so one failing sampler does not stop a whole figure.
    """
    from ..inference import DivergenceError

    note = ""
    params = dict(params)
    for attempt in range(retries + 1):
        model = make(**params)
        start = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                model.fit(X, y)
        except (DivergenceError, FloatingPointError, np.linalg.LinAlgError) as exc:
            elapsed = time.perf_counter() - start
            if attempt == retries:
                return Fit(model=None, seconds=elapsed, compile_seconds=float("nan"),
                           sampling_seconds=float("nan"), error=str(exc).split("\n")[0],
                           note=note, params=params)
            h = params.get("step_size")
            if h is None:
                h = getattr(exc, "step_size", None)
            if h is None or callable(h):
                return Fit(model=None, seconds=elapsed, compile_seconds=float("nan"),
                           sampling_seconds=float("nan"), error=str(exc).split("\n")[0],
                           note=note, params=params)
            params["step_size"] = float(h) / shrink
            first = note.split(";")[0] if note else f"diverged at step size {float(h):.3g}"
            note = f"{first}; rerun with step_size={params['step_size']:.3g}"
            continue
        elapsed = time.perf_counter() - start
        trace = getattr(model, "trace_", {})
        return Fit(model=model, seconds=elapsed,
                   compile_seconds=float(trace.get("compile_seconds", float("nan"))),
                   sampling_seconds=float(trace.get("sampling_seconds", float("nan"))),
                   error=None, note=note, params=params)
    raise AssertionError("unreachable")


def posterior_draws(model):
    """``(coef, intercept)`` reshaped to (chain, draw, d) and (chain, draw)."""
    coef = np.asarray(model.coef_samples_, dtype=np.float64)
    intercept = np.asarray(model.intercept_samples_, dtype=np.float64)
    n_chains = int(getattr(model, "n_chains", 1) or 1)
    n_draws = coef.shape[0] // n_chains
    return coef.reshape(n_chains, n_draws, *coef.shape[1:]), intercept.reshape(n_chains, n_draws, *intercept.shape[1:])


def running_accuracy(model, X_test, y_test, *, n_checkpoints: int = 40, burn_fraction: float = 0.5):
    """Test accuracy of the running posterior-mean classifier along a run.

    At checkpoint ``k`` (draws per chain so far, log-spaced) the classifier is the mean
    of draws ``[floor(burn_fraction * k), k)`` pooled over chains -- the cumulative mean
    with the first ``burn_fraction`` of the run so far discarded as burn-in (0 gives the
    plain cumulative mean). Its time is ``trace_["wall_time"]`` of draw ``k`` (seconds
    since sampling started, compilation excluded; the driver times chunks of the run and
    interpolates within a chunk).

    Returns ``(times, accuracies, draws)`` arrays of the checkpoints.
    """
    coef, intercept = posterior_draws(model)
    n_draws = coef.shape[1]
    ks = np.unique(np.geomspace(1, n_draws, num=min(n_checkpoints, n_draws)).round().astype(int))
    prefix = np.concatenate([np.zeros((1, *coef.shape[2:])), np.cumsum(coef.sum(axis=0), axis=0)])
    prefix_b = np.concatenate([np.zeros((1, *intercept.shape[2:])), np.cumsum(intercept.sum(axis=0), axis=0)])
    starts = np.minimum(np.floor(burn_fraction * ks).astype(int), ks - 1)
    counts = (ks - starts) * coef.shape[0]
    means = (prefix[ks] - prefix[starts]) / counts.reshape(-1, *([1] * (coef.ndim - 2)))
    means_b = (prefix_b[ks] - prefix_b[starts]) / counts.reshape(-1, *([1] * (intercept.ndim - 2)))
    classes = np.asarray(model.classes_)
    X_test = np.asarray(X_test, dtype=np.float64) if not hasattr(X_test, "tocsr") else X_test
    y_test = np.asarray(y_test)
    acc = np.empty(len(ks))
    for i, (w, b) in enumerate(zip(means, means_b)):
        scores = np.asarray(X_test @ w.T) + b
        pred = classes[(scores > 0).astype(int)] if scores.ndim == 1 else classes[np.argmax(scores, axis=1)]
        acc[i] = float(np.mean(pred == y_test))
    times = np.asarray(model.trace_["wall_time"], dtype=np.float64)[ks - 1]
    return times, acc, ks


def relative_error(estimate, reference) -> float:
    """``||estimate - reference|| / ||reference||`` (Frobenius norms)."""
    estimate = np.asarray(estimate, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    denom = float(np.linalg.norm(reference))
    return float(np.linalg.norm(estimate - reference) / denom) if denom > 0 else float("nan")


def load_higgs_like(n: int, seed: int, test_fraction: float = 0.1):
    """HIGGS-shaped synthetic data (28 features), split at random into train and test."""
    from ..datasets import make_higgs_like

    n = int(n)
    if n < 20:
        raise ValueError(f"n must be at least 20, got {n}")
    X, y = make_higgs_like(n, n_features=28, random_state=seed)
    n_test = max(2, int(round(test_fraction * n)))
    perm = np.random.default_rng(seed + 1).permutation(n)
    test, train = perm[:n_test], perm[n_test:]
    return X[train], X[test], y[train], y[test]


def load_breast_cancer(seed: int, test_size: float = 0.3):
    from ..datasets import load_breast_cancer_standardized

    return load_breast_cancer_standardized(test_size=test_size, random_state=seed)


#: The offline stand-ins of paper 000's Figs. 5-7 and the data sets they stand in for.
STAND_INS = {"higgs-like": "HIGGS", "breast-cancer": "Realsim"}
#: Data sets given the paper's Higgs settings (large minibatches; Gibbs and SHMC on a time budget).
HIGGS_NAMES = ("higgs-like", "higgs", "higgs-uci")
#: Other data sets get the Higgs settings from this many training rows on (Realsim: 65,078).
LARGE_ROWS = 100_000
#: Paper 000 Sec. 5.1.2: 10^7 of HIGGS's 1.1 x 10^7 rows train, the rest (1/11) test.
PAPER_HIGGS_TEST_FRACTION = 1.0 / 11.0
#: Paper 000 Sec. 5.1.2: "For SRWM, the variance parameter is set as 0.01".
PAPER_SRWM_VARIANCE = 0.01


#: Rows of the Higgs-like stand-in of Figs. 5-7 (``quick``: :data:`QUICK_ROWS`).
HIGGS_LIKE_ROWS = 10**6
QUICK_ROWS = 20000


def rows_asked(n, quick: bool, data):
    """``n`` of Figs. 5-7: without ``data`` the rows of the Higgs-like stand-in (default
    :data:`HIGGS_LIKE_ROWS`, ``quick`` :data:`QUICK_ROWS`); with ``data`` the rows to read
    from each data set, as given (None: all)."""
    if data is not None:
        return n
    return int(n) if n is not None else (QUICK_ROWS if quick else HIGGS_LIKE_ROWS)


def is_large(name: str, n_train: int) -> bool:
    """Whether a data set gets paper 000's Higgs settings (minibatches of 1000 / 100)
    rather than its Realsim ones (10): HIGGS and its stand-in, and any other set with at
    least :data:`LARGE_ROWS` training rows."""
    return name in HIGGS_NAMES or (name not in STAND_INS and n_train >= LARGE_ROWS)


def higgs_and_cancer(datasets, n, seed: int, *, data=None, quick: bool = False, quick_n: int = QUICK_ROWS,
                     paper_settings: bool = False):
    """Yield ``(key, label, (X_train, X_test, y_train, y_test), record)`` for each data
    set of paper 000's Figs. 5-7, loaded when reached.

    Without ``data``: the stand-ins named in ``datasets``, "higgs-like"
    (:func:`load_higgs_like` with ``n`` rows, labelled with N) and "breast-cancer"
    (:func:`load_breast_cancer`); another name raises ValueError. With ``data`` (a
    registered name, a path, or a list of them: :mod:`.data_option`), those data sets
    instead, in the order given, ``n`` rows read from each (default: all; ``quick``:
    ``quick_n``); a single file is split 90 / 10 at random, HIGGS 10 / 1 with
    ``paper_settings`` (paper 000 Sec. 5.1.2). ``record`` describes the data for the JSON
    (``stand_in`` True for the stand-ins).
    """
    from .data_option import CLASSIFICATION, load_classification, resolve_many

    sources = resolve_many(data, CLASSIFICATION)
    if sources:
        rows = int(n) if n is not None else (quick_n if quick else None)
        for source in sources:
            higgs = source.name in HIGGS_NAMES
            fraction = PAPER_HIGGS_TEST_FRACTION if (paper_settings and higgs) else 0.1
            d = load_classification(source, n_rows=rows, seed=seed, test_fraction=fraction,
                                    dtype=np.float32 if higgs else np.float64)
            label = f"{source.name} ({len(d['y_train']) + len(d['y_test']):,} rows)"
            yield source.name, label, (d["X_train"], d["X_test"], d["y_train"], d["y_test"]), d["record"]
        return
    loaders = {"higgs-like": lambda: load_higgs_like(n, seed), "breast-cancer": lambda: load_breast_cancer(seed)}
    for dataset in datasets:
        if dataset not in loaders:
            raise ValueError(f"unknown data set {dataset!r}; choose from {sorted(loaders)}")
        label = f"higgs-like (N={n:,})" if dataset == "higgs-like" else dataset
        record = {"name": dataset, "kind": "stand-in", "stand_in": True, "stands_in_for": STAND_INS[dataset]}
        yield dataset, label, loaders[dataset](), record


def stand_in_text(records) -> str:
    """One sentence naming the data of a figure, stand-ins as stand-ins."""
    parts = []
    for r in records:
        if r.get("stand_in"):
            parts.append(f"{r['name']} (an offline stand-in for the paper's {r['stands_in_for']})")
        else:
            parts.append(f"{r['name']} ({r['n_train']:,} train / {r['n_test']:,} test rows, {r['split']})")
    return "Data: " + "; ".join(parts) + "."


def paper_sampler_params(sampler: str, X_train, *, C: float = 1.0, prior_scale: float = 1.0) -> dict:
    """BayesianSVC parameters that paper 000 Sec. 5.1.2 fixes for a sampler, beyond the
    minibatch sizes: SSGLD with AdaGrad; SSGNHT with the polynomially decaying step
    ``h_t = h0 (1 + t / b)^(-gamma)``, b = 1 (Sec. 5; h0 and gamma were grid-searched and
    are not printed: the estimator's gamma = 0.33 and default h0); SRWM with proposal
    variance 0.01 in the weights' own coordinates, i.e. a step of
    ``0.1 / T0`` in the sampler's coordinates scaled by ``T0`` (runs without warm-up
    keep ``T0``; :mod:`regbayes.samplers.defaults`). Gibbs and SHMC: none."""
    if sampler == "ssgld":
        return {"schedule": "adagrad"}
    if sampler == "ssgnht":
        return {"schedule": "polynomial"}
    if sampler == "srwm":
        from ..potentials import sigma_ref
        from ..samplers.defaults import start_scale

        scale = start_scale("srwm", sigma_ref(X_train, C, prior_scale, True), prior_scale)
        return {"step_size": float(np.sqrt(PAPER_SRWM_VARIANCE) / scale)}
    return {}


def paper_settings_record(paper_settings: bool, samplers) -> dict | bool:
    """What ``paper_settings`` set in Figs. 5-7 for ``samplers``, for the JSON (False
    when not asked for)."""
    if not paper_settings:
        return False
    per = {"ssgld": {"schedule": "adagrad"}, "ssgnht": {"schedule": "polynomial", "b": 1, "gamma": 0.33},
           "srwm": {"proposal_variance": PAPER_SRWM_VARIANCE}}
    return {**{s: per[s] for s in samplers if s in per}, "higgs_test_fraction": "1/11",
            "C": 1.0, "prior_scale": 1.0, "note": "paper 000 Sec. 5.1 prints neither c nor nu"}


PAPER_SETTINGS_TEXT = (
    "paper 000 Sec. 5.1.2 settings: SSGLD with AdaGrad, SSGNHT with h_t = h0 (1 + t)^(-0.33) (b = 1), "
    "SRWM proposal variance 0.01, HIGGS split 10 / 1; c and nu are not printed there (c = nu = 1)"
)


def fmt(value, digits: int = 3) -> str:
    """Compact number formatting for tables ("-" for None/NaN)."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    value = float(value)
    if not math.isfinite(value):
        return "-"
    if value != 0 and (abs(value) < 10 ** (-digits) or abs(value) >= 10**6):
        return f"{value:.{digits}g}"
    return f"{value:.{digits}f}"


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence]) -> str:
    """A GitHub-style markdown table; cells formatted with :func:`fmt`."""
    cells = [[fmt(c) for c in row] for row in rows]
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(["---"] * len(headers)) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join(lines)


def _jsonable(obj):
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        value = float(obj)
        return value if math.isfinite(value) else None
    return obj


def write_outputs(out_dir, name: str, fig, numbers: dict, markdown: str) -> dict:
    """Write ``<name>.png``, ``<name>.json`` and ``results.md`` into ``out_dir``; return
    the paths (strings) under ``png``, ``json``, ``markdown``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    png, js, md = out / f"{name}.png", out / f"{name}.json", out / "results.md"
    fig.savefig(png)
    js.write_text(json.dumps(_jsonable(numbers), indent=2) + "\n")
    md.write_text(markdown.rstrip() + "\n")
    return {"png": str(png), "json": str(js), "markdown": str(md)}


def finish(out_dir, name: str, title: str, start: float, fig, table: str, text: str, results: dict, *,
           after: str = "") -> dict:
    """The end of every experiment's ``run``: the seconds since ``start``; ``numbers``
    ``{"experiment": name, **results, "seconds": ...}``; ``results.md`` as the title, ``text``,
    the table, ``after`` (paragraphs after the table, each ending in a blank line) and the
    total time; all written by :func:`write_outputs`. Returns ``name``, ``seconds``,
    ``numbers``, ``table`` and the paths."""
    seconds = time.perf_counter() - start
    numbers = {"experiment": name, **results, "seconds": seconds}
    markdown = f"# {title}\n\n{text}\n\n{table}\n\n{after}Total time: {seconds:.1f} s.\n"
    paths = write_outputs(out_dir, name, fig, numbers, markdown)
    return {"name": name, "seconds": seconds, "numbers": numbers, "table": table, **paths}


def accuracy_run(make, X_train, y_train, X_test, y_test, *, n_checkpoints: int = 40, **params) -> dict:
    """Fit with :func:`fit_model` and record the running test accuracy
    (:func:`running_accuracy`). Returns plain numbers for the JSON: ``times``,
    ``accuracy``, ``draws`` (checkpoints), ``final_accuracy``, ``sampling_seconds``,
    ``compile_seconds``, ``fit_seconds``, ``seconds_per_iteration``, ``note``, ``error``."""
    fit = fit_model(make, X_train, y_train, **params)
    out = {
        "params": {k: v for k, v in fit.params.items() if k != "progress" and not callable(v)},
        "fit_seconds": fit.seconds,
        "compile_seconds": fit.compile_seconds,
        "sampling_seconds": fit.sampling_seconds,
        "note": fit.note,
        "error": fit.error,
    }
    if fit.model is None:
        out.update(times=[], accuracy=[], draws=[], final_accuracy=float("nan"), seconds_per_iteration=float("nan"))
        return out
    times, acc, ks = running_accuracy(fit.model, X_test, y_test, n_checkpoints=n_checkpoints)
    n_steps = total_iterations(fit.model)
    out.update(
        times=times,
        accuracy=acc,
        draws=ks,
        final_accuracy=float(acc[-1]),
        seconds_per_iteration=fit.sampling_seconds / max(n_steps, 1),
        n_iterations=n_steps,
    )
    return out


def run_lengths(model):
    """``(n_warmup, thin, n_draws)`` a fitted BayesianSVC actually used, read from
    ``trace_["iteration"]`` (the kernel step of every kept draw), so that estimator
    defaults (``n_warmup=None``, ``thin=None``) are resolved."""
    iteration = np.asarray(model.trace_["iteration"]).astype(int)
    thin = int(iteration[1] - iteration[0]) if len(iteration) > 1 else int(getattr(model, "thin", None) or 1)
    return int(iteration[0] + 1 - thin), thin, len(iteration)


def total_iterations(model) -> int:
    """Kernel steps of a fitted BayesianSVC per chain, warm-up included."""
    return int(np.asarray(model.trace_["iteration"])[-1]) + 1


def budgeted_draws(make, X, y, budget_seconds: float, *, min_draws: int = 5, max_draws: int = 100000,
                   pilot_draws: int = 5, **params):
    """Draws that fit in about ``budget_seconds`` of sampling, from a short pilot run (no
    warm-up, ``pilot_draws`` iterations, timed one by one): the median time of an
    iteration, the first (which carries one-off costs) left out. Returns
    ``(n_draws, seconds_per_iteration)``; on a shared machine the estimate is only as
    steady as the load."""
    pilot = fit_model(make, X, y, **{**params, "n_draws": pilot_draws, "n_warmup": 0, "thin": 1, "progress": False})
    if pilot.model is None or not math.isfinite(pilot.sampling_seconds):
        return min_draws, float("nan")
    wall = np.asarray(pilot.model.trace_["wall_time"], dtype=np.float64)
    steps = np.diff(np.concatenate([[0.0], wall]))
    per_iteration = float(np.median(steps[1:])) if len(steps) > 1 else float(steps[0])
    per_iteration = max(per_iteration, 1e-9)
    return int(np.clip(budget_seconds / per_iteration, min_draws, max_draws)), per_iteration


def topics_asked(k, quick: bool, default: int) -> int:
    """K of a MedLDA experiment: ``k``, else 5 with ``quick``, else ``default``; at least 2."""
    from ..validation import check_int

    k = int(k) if k is not None else (5 if quick else default)
    check_int("k", k, 2)
    return k


def with_progress(items, progress: bool, desc: str):
    """``items``, in a tqdm progress bar named ``desc`` when ``progress``."""
    if not progress:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc)


def stays_from(ok):
    """Index of the first entry after which ``ok`` holds to the end (None if never): where a
    curve enters its band for good."""
    ok = np.asarray(ok, dtype=bool)
    if len(ok) == 0 or not ok[-1]:
        return None
    bad = np.nonzero(~ok)[0]
    return 0 if len(bad) == 0 else int(bad[-1] + 1)


def band_entry_text(documents, seconds) -> str:
    """Where a curve enters its band for good: documents and seconds, or that it never does."""
    return "never (the last snapshot is outside the band)" if documents is None else \
        f"from {documents} documents / {seconds:.2f} s"


def ratio_text(value) -> str:
    """A speed-up ``value`` as ``"3.2x"``, or "not reached"."""
    return "not reached" if value is None else f"{value:.1f}x"
