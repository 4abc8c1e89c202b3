"""Shared by every test module: ``tests/support`` (reference samplers and data that
several test files use) is importable by name, and XLA compiles without LLVM's
optimisation passes.

The suite compiles thousands of small programs that each run for milliseconds, so most
of its time is compilation; ``--xla_backend_optimization_level=0`` cuts the suite's CPU
time by about a quarter. It changes how fast the machine code runs, not what it computes:
the pinned draws (``tests/inference/test_pinned_draws.py``,
``tests/algorithms/test_kernel_pins.py``) are the same bits at either level. Set
``REGBAYES_TEST_XLA_OPTIMIZE=1`` to test with XLA's default level."""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "support"))

if os.environ.get("REGBAYES_TEST_XLA_OPTIMIZE") != "1" and "jax" not in sys.modules:
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_backend_optimization_level" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_backend_optimization_level=0".strip()
