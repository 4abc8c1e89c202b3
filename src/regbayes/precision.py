"""Float64 inside a block only, never by flipping JAX's global config on import."""
from __future__ import annotations

import contextlib

import jax


def enable_x64():
    """Context manager that enables 64-bit JAX types inside the ``with`` block."""
    if hasattr(jax, "enable_x64"):  # JAX >= 0.6: a config State usable as a context
        return jax.enable_x64(True)
    from jax.experimental import enable_x64 as _legacy  # older JAX

    return _legacy()


@contextlib.contextmanager
def maybe_x64(flag: bool):
    if flag:
        with enable_x64():
            yield
    else:
        yield
