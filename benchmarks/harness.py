"""What every benchmark script shares: the environment a run measured on, timing helpers,
markdown tables, JSON output and progress logging.

The scripts in this folder run as ``python benchmarks/<script>.py``; Python puts the
script's folder on ``sys.path``, so ``import harness`` finds this module.
"""
from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

#: The repository root (the folder above ``benchmarks/``).
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ----------------------------------------------------------------------------- logging
def log(*msg):
    """Progress to stderr, with the wall-clock time (the tables go to stdout)."""
    print(f"[{time.strftime('%H:%M:%S')}]", *msg, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- environment
def cpu_model():
    """The CPU's model name from ``/proc/cpuinfo`` (``platform.processor()`` elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor()


def load_average():
    """``os.getloadavg()``, or None where the platform has none."""
    try:
        return os.getloadavg()
    except (OSError, AttributeError):
        return None


def git_revision():
    """``(short commit, number of modified files under src/)`` of the measured tree, or
    ``(None, None)`` outside a git checkout."""
    try:
        def git(*a):
            return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True, timeout=10).stdout.strip()

        return git("rev-parse", "--short", "HEAD") or None, len(git("status", "--porcelain", "src").splitlines())
    except Exception:  # noqa: BLE001
        return None, None


def package_version(name):
    """``name.__version__`` of an importable module, or None."""
    try:
        return __import__(name).__version__
    except Exception:  # noqa: BLE001
        return None


def environment(packages=("numpy",), *, jax=True):
    """The machine and software a run measured on.

    Date (UTC), Python, CPU model and core count, the versions of ``packages`` (imported
    to read them), JAX's version, backend and devices (``jax=False`` leaves JAX
    unimported), numba's thread count where numba is among ``packages``, the regbayes
    commit with the number of modified files under ``src/``, and the load average at the
    start (:func:`finish_environment` adds the one at the end).
    """
    env = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
    }
    if jax:
        import jax as jax_module
        import jaxlib

        env.update(jax=jax_module.__version__, jaxlib=jaxlib.__version__, backend=jax_module.default_backend(),
                   devices=[str(d) for d in jax_module.devices()])
    for name in packages:
        env[name] = package_version(name)
    if "numba" in packages and env["numba"]:
        import numba

        env["numba_threads"] = numba.get_num_threads()
    env["regbayes_commit"], env["regbayes_src_modified_files"] = git_revision()
    env["load_average_at_start"] = load_average()
    return env


def finish_environment(env):
    """Add the load average at the end of the run to ``env`` (and return it)."""
    env["load_average_at_end"] = load_average()
    return env


def close_run(results, start, report, out=None, drop_keys=()):
    """End a benchmark run: ``results["total_seconds"]`` since ``start`` and the load at the
    end into ``results["environment"]``; print ``report`` and a closing line; write the
    JSON to ``out`` when given."""
    results["total_seconds"] = time.perf_counter() - start
    env = finish_environment(results["environment"])
    print(report)
    print(f"Total {results['total_seconds']:.0f} s; load average {env.get('load_average_at_start')} "
          f"at the start, {env.get('load_average_at_end')} at the end.")
    if out:
        write_json(out, results, drop_keys=drop_keys)


# ----------------------------------------------------------------------------- timing
def timed(fn, *args, **kwargs):
    """``(fn(*args, **kwargs), wall seconds)``."""
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - start


def interleaved(calls, repeats, *, warmup=1, errors=(), on_error=None):
    """Interleaved repeats: call every function of ``calls`` in turn, round after round,
    so that machine load hits all of them alike.

    ``calls`` maps a name to ``fn(round)``. ``warmup`` untimed rounds (which warm the
    compilation caches) come before ``repeats`` timed ones. A function returns its own
    measurement (any value: a number, a tuple), or None to record the wall seconds of the
    call. A function that raises one of ``errors`` is dropped from the later rounds, and
    ``on_error(name, err)`` is called. Returns ``{name: [measurement per timed round]}``.
    """
    samples = {name: [] for name in calls}
    active = dict(calls)
    for r in range(warmup + repeats):
        for name in list(active):
            start = time.perf_counter()
            try:
                value = active[name](r)
            except errors as err:
                del active[name]
                if on_error is not None:
                    on_error(name, err)
                continue
            seconds = time.perf_counter() - start
            if r >= warmup:
                samples[name].append(seconds if value is None else value)
    return samples


def describe(values):
    """Median, min and max of a list of numbers (None for each if it is empty)."""
    if not len(values):
        return {"median": None, "min": None, "max": None}
    return {"median": float(np.median(values)), "min": float(np.min(values)), "max": float(np.max(values))}


# ----------------------------------------------------------------------------- markdown
def _column(col):
    return col if isinstance(col, tuple) else (col, None)


def markdown_header(columns):
    """Header and separator lines of a markdown table.

    ``columns``: header strings, or ``(header, "l" | "r")`` pairs. The first column is
    left-aligned and the others right-aligned unless a pair says otherwise.
    """
    names, seps = [], []
    for i, col in enumerate(columns):
        name, align = _column(col)
        names.append(str(name))
        seps.append("---" if (align or ("l" if i == 0 else "r")) == "l" else "---:")
    return "| " + " | ".join(names) + " |\n|" + "|".join(seps) + "|"


def markdown_row(cells):
    """One markdown table row; cells are formatted with ``str``."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def markdown_table(rows, columns):
    """A markdown table: :func:`markdown_header` of ``columns``, then one line per row
    (a sequence of cells, or a dict keyed by the column headers)."""
    names = [_column(c)[0] for c in columns]
    lines = [markdown_header(columns)]
    for row in rows:
        lines.append(markdown_row([row.get(n, "") for n in names] if isinstance(row, dict) else row))
    return "\n".join(lines)


# ----------------------------------------------------------------------------- JSON
def jsonable(obj, drop_keys=()):
    """``obj`` with NumPy arrays and scalars turned into lists and Python numbers, tuples
    into lists, dict keys into strings, and dict entries named in ``drop_keys`` left out."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v, drop_keys) for k, v in obj.items() if k not in drop_keys}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v, drop_keys) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    return obj


def write_json(path, obj, *, indent=1, drop_keys=()):
    """Write :func:`jsonable` of ``obj`` to ``path`` (other objects as ``float``)."""
    with open(path, "w") as f:
        json.dump(jsonable(obj, drop_keys), f, indent=indent, default=float)
