"""The layer rule of the source tree, read from the imports of ``src/regbayes``.

Layers, lowest first (a module imports from its own layer or below only)::

    base modules (precision, rng, validation, schedules, archive, compilation_cache)
      -> potentials, datasets -> samplers, core -> algorithms -> inference
      -> models, persistence -> experiments, plotting, diagnostics -> cli

Also: no estimator module imports another estimator module, no private name (a name or
module starting with ``_``) is imported across packages, and no module is over 500 lines.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "regbayes"
MAX_LINES = 500

LAYERS = {
    "precision": 0, "rng": 0, "validation": 0, "schedules": 0, "archive": 0, "compilation_cache": 0,
    "potentials": 1, "datasets": 1,
    "samplers": 2, "core": 2,
    "algorithms": 3,
    "inference": 4,
    "models": 5, "persistence": 5,
    "experiments": 6, "plotting": 6, "diagnostics": 6,
    "cli": 7, "cli_fit": 7, "__main__": 7,
}


def _modules(src=SRC):
    for path in sorted(src.rglob("*.py")):
        parts = path.relative_to(src.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield path, ".".join(parts)


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _package_of(module: str, path: Path) -> str:
    return module if _is_package(path) else module.rpartition(".")[0]


def _layer(module: str):
    parts = module.split(".")
    if len(parts) < 2:
        return None  # the package's public face (regbayes/__init__) sits above everything
    return LAYERS[parts[1]]


def _imports(path: Path, module: str, src: Path):
    """(imported module, imported name or None, line) for every regbayes import in ``path``."""
    tree = ast.parse(path.read_text())
    package = _package_of(module, path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "regbayes":
                    yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "regbayes":
                continue
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                if (src.parent / candidate.replace(".", "/")).with_suffix(".py").exists() or (
                    src.parent / candidate.replace(".", "/") / "__init__.py"
                ).exists():
                    yield candidate, None, node.lineno  # a module imported by name
                else:
                    yield target, alias.name, node.lineno


def _estimator_modules(src: Path):
    """The modules that define the estimators exported by ``regbayes.models``."""
    init = src / "models" / "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(init.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            found.add(f"regbayes.models.{node.module}")
    return found


MODULES = list(_modules())


def _violations(src=SRC):
    estimators = _estimator_modules(src)
    found = []
    for path, module in _modules(src):
        own_layer = _layer(module)
        own_package = _package_of(module, path)
        for target, name, line in _imports(path, module, src):
            where = f"{path.relative_to(src.parent)}:{line}"
            target_layer = _layer(target)
            if own_layer is not None and target_layer is not None and target_layer > own_layer:
                found.append(f"{where}: layer {own_layer} ({module}) imports {target} (layer {target_layer})")
            if module in estimators and target in estimators and target != module:
                found.append(f"{where}: estimator module {module} imports estimator module {target}")
            target_package = target if (src.parent / target.replace(".", "/") / "__init__.py").exists() \
                else target.rpartition(".")[0]
            if target_package != own_package:
                private_module = any(part.startswith("_") and part != "__init__" for part in target.split(".")[1:])
                if private_module or (name is not None and name.startswith("_")):
                    found.append(f"{where}: private name {target}{'.' + name if name else ''} crosses packages")
    return found


def test_layers_estimators_and_private_names():
    violations = _violations()
    assert not violations, "\n".join(violations)


@pytest.mark.parametrize("path", [p for p, _ in MODULES], ids=lambda p: str(p.relative_to(SRC)))
def test_module_is_short_enough_to_read(path):
    n = len(path.read_text().splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(SRC.parent)} has {n} lines (at most {MAX_LINES})"


def test_the_rule_sees_a_violation(tmp_path):
    """The checker itself: a samplers module importing a model, a private name across
    packages and an estimator importing another are reported."""
    fake = tmp_path / "regbayes"
    (fake / "samplers").mkdir(parents=True)
    (fake / "models").mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "models" / "__init__.py").write_text("from .a import A\nfrom .c import C\n")
    (fake / "models" / "a.py").write_text("from .b import _helper\nA = 1\n")
    (fake / "models" / "b.py").write_text("_helper = 1\n")
    (fake / "models" / "c.py").write_text("from .a import A\nC = A\n")
    (fake / "samplers" / "__init__.py").write_text("")
    (fake / "samplers" / "k.py").write_text("from ..models import a\nfrom ..models.b import _helper\n")
    violations = _violations(fake)
    assert any("layer 2 (regbayes.samplers.k) imports regbayes.models.a" in v for v in violations)
    assert any("private name regbayes.models.b._helper crosses packages" in v for v in violations)
    assert any("estimator module regbayes.models.c imports estimator module regbayes.models.a" in v for v in violations)
    assert not any(v.startswith("regbayes/models/a.py") for v in violations)  # _helper within its package: allowed
