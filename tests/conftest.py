"""Shared by every test module: ``tests/support`` (reference samplers and data that
several test files use) is importable by name."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "support"))
