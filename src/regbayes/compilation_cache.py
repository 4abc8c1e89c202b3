"""JAX's persistent compilation cache for regbayes's programs, turned on by request.

XLA compiles each of the library's JAX programs (a sampler's block of steps, a mean-field
phase, an eta-step) the first time a process runs it for a shape, and every new Python
session compiles them again; numba's kernels are already kept on disk (``cache=True``).
With JAX's persistent compilation cache a later process loads the compiled program
instead of compiling it: the first fit of a new session then waits for little more than
the fit itself (BENCHMARKS.md, "Cold start").

regbayes never turns the cache on at import: JAX's configuration belongs to the user's
program (DESIGN.md). :func:`enable_compilation_cache` turns it on for this process and,
through the environment, for the processes it starts (Dask workers, scikit-learn's
``n_jobs`` workers); the ``regbayes`` command line calls it before any command runs,
unless ``REGBAYES_COMPILATION_CACHE=0``.

Where. ``REGBAYES_COMPILATION_CACHE`` (a folder), else ``$XDG_CACHE_HOME/regbayes/jax``
(``~/.cache/regbayes/jax``), in a subfolder named after the host CPU. XLA compiles CPU
programs for the host's instruction set while JAX's cache key names the platform only
("cpu"), so machines that share a home folder keep separate caches. The cache keeps at
most :data:`MAX_BYTES`, dropping the least recently used programs first.

A cache the user configured (``JAX_COMPILATION_CACHE_DIR`` or
``jax.config.update("jax_compilation_cache_dir", ...)``) is kept as it is, and one turned
off (``JAX_ENABLE_COMPILATION_CACHE=false``) stays off.

No paper equation is implemented here.
"""
from __future__ import annotations

import hashlib
import os
import platform
import sys
from pathlib import Path

__all__ = ["ENV_VAR", "MAX_BYTES", "MIN_COMPILE_SECONDS", "default_cache_dir", "enable_compilation_cache", "host_fingerprint",
           "turned_off"]

#: The environment variable that names the folder, or turns the command line's cache off ("0").
ENV_VAR = "REGBAYES_COMPILATION_CACHE"
#: Programs that compile faster than this are not written (reading one costs a file access).
MIN_COMPILE_SECONDS = 0.2
#: The cache's size bound in bytes (JAX's least-recently-used eviction).
MAX_BYTES = 1 << 30
_OFF = ("0", "false", "off", "no")


def turned_off() -> bool:
    """True when ``REGBAYES_COMPILATION_CACHE`` turns the command line's cache off."""
    return os.environ.get(ENV_VAR, "").strip().lower() in _OFF


def host_fingerprint() -> str:
    """``<machine>-<cpu>-<hash of the CPU features>``: LLVM's name and feature string of the
    host CPU (what XLA's CPU compiler targets), read through numba's llvmlite."""
    import llvmlite.binding as llvm

    digest = hashlib.sha256(llvm.get_host_cpu_features().flatten().encode()).hexdigest()[:12]
    return f"{platform.machine() or 'unknown'}-{llvm.get_host_cpu_name()}-{digest}"


def default_cache_dir() -> Path:
    """The folder :func:`enable_compilation_cache` uses when given none (module docstring)."""
    base = os.environ.get(ENV_VAR, "")
    if base and not turned_off():
        root = Path(base).expanduser()
    else:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "regbayes" / "jax"
    return root / host_fingerprint()


def _user_setting():
    """``(folder, enabled)`` as the user configured JAX, from its environment variables or,
    when JAX is imported, its configuration."""
    folder = os.environ.get("JAX_COMPILATION_CACHE_DIR") or None
    enabled = os.environ.get("JAX_ENABLE_COMPILATION_CACHE", "true").lower() not in _OFF
    if "jax" in sys.modules:
        import jax

        folder = jax.config.jax_compilation_cache_dir or folder
        enabled = enabled and bool(jax.config.jax_enable_compilation_cache)
    return folder, enabled


def enable_compilation_cache(path=None) -> Path | None:
    """Turn on JAX's persistent compilation cache in ``path`` (default
    :func:`default_cache_dir`) for this process and the processes it starts.

    Call it before the first fit: a program compiled earlier in the process stays
    uncached. The folder is made if missing.

    Parameters
    ----------
    path : path, optional
        The cache folder. Without it, a cache the user configured for JAX is kept.

    Returns
    -------
    Path or None
        The folder in use; None when the user turned JAX's cache off
        (``JAX_ENABLE_COMPILATION_CACHE=false``).
    """
    folder, enabled = _user_setting()
    if not enabled:
        return None
    if path is None and folder is not None:
        return Path(folder)
    folder = Path(path if path is not None else default_cache_dir()).expanduser()
    folder.mkdir(parents=True, exist_ok=True)
    settings = {"jax_compilation_cache_dir": str(folder),
                "jax_persistent_cache_min_compile_time_secs": MIN_COMPILE_SECONDS,
                "jax_compilation_cache_max_size": MAX_BYTES}
    # JAX reads these at import: here, and in the processes started later
    os.environ.update({name.upper(): str(value) for name, value in settings.items()})
    if "jax" in sys.modules:  # already imported: its configuration, and a cache it may have set up unused
        import jax
        from jax.experimental.compilation_cache import compilation_cache

        for name, value in settings.items():
            jax.config.update(name, value)
        compilation_cache.reset_cache()
    return folder
