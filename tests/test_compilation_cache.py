"""JAX's persistent compilation cache on request (regbayes.compilation_cache) and in the CLI."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import regbayes
from regbayes import cli, compilation_cache as cc

# A fresh process: turns the cache on (in the folder given, or the default one), fits, and
# reports the folder and how many programs JAX read from the persistent cache.
CHILD = """
import json, sys
import jax
hits = []
jax.monitoring.register_event_listener(lambda event, **kw: hits.append(event) if event == "/jax/compilation_cache/cache_hits" else None)
import numpy as np
import regbayes
folder = regbayes.enable_compilation_cache(sys.argv[1] if len(sys.argv) > 1 else None)
rng = np.random.default_rng(0)
X = rng.standard_normal((60, 3)); y = (X[:, 0] > 0).astype(int)
regbayes.BayesianSVC(sampler="ssgld", n_draws=20, n_warmup=50, random_state=0).fit(X, y)
print(json.dumps({"folder": str(folder), "hits": len(hits)}))
"""


def _child_env(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_") and k != cc.ENV_VAR}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")
    env["PYTHONPATH"] = os.pathsep.join([str(Path(regbayes.__file__).parents[1]), env.get("PYTHONPATH", "")])
    return env


def _run_child(env, *args):
    done = subprocess.run([sys.executable, "-c", CHILD, *args], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_second_process_reads_the_programs_the_first_compiled(tmp_path):
    env = _child_env(tmp_path)
    first = _run_child(env)
    folder = Path(first["folder"])
    assert folder == tmp_path / "xdg" / "regbayes" / "jax" / cc.host_fingerprint()
    assert first["hits"] == 0
    assert any(folder.iterdir()), "the first process wrote no program"
    second = _run_child(env)
    assert second["folder"] == first["folder"]
    assert second["hits"] >= 1


def test_an_explicit_folder_and_the_environment_variable(tmp_path):
    env = _child_env(tmp_path)
    out = _run_child(env, str(tmp_path / "mine"))
    assert out["folder"] == str(tmp_path / "mine") and any((tmp_path / "mine").iterdir())
    assert not (tmp_path / "xdg").exists()


def test_default_folder(monkeypatch, tmp_path):
    monkeypatch.delenv(cc.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cc.default_cache_dir() == tmp_path / "regbayes" / "jax" / cc.host_fingerprint()
    monkeypatch.setenv(cc.ENV_VAR, str(tmp_path / "elsewhere"))
    assert cc.default_cache_dir() == tmp_path / "elsewhere" / cc.host_fingerprint()
    monkeypatch.setenv(cc.ENV_VAR, "0")  # "off" is not a folder name
    assert cc.default_cache_dir() == tmp_path / "regbayes" / "jax" / cc.host_fingerprint()


def test_host_fingerprint_names_the_cpu():
    import platform

    import llvmlite.binding as llvm

    fingerprint = cc.host_fingerprint()
    assert fingerprint.startswith(f"{platform.machine()}-{llvm.get_host_cpu_name()}-")
    assert fingerprint == cc.host_fingerprint()


@pytest.mark.parametrize("value, off", [("0", True), ("off", True), ("False", True), ("no", True), ("", False),
                                        ("/tmp/x", False)])
def test_turned_off(monkeypatch, value, off):
    monkeypatch.setenv(cc.ENV_VAR, value)
    assert cc.turned_off() is off


def test_a_cache_the_user_configured_is_kept(monkeypatch, tmp_path):
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path / "users"))
    import jax

    before = jax.config.jax_compilation_cache_dir
    assert regbayes.enable_compilation_cache() == Path(before or tmp_path / "users")
    assert jax.config.jax_compilation_cache_dir == before
    monkeypatch.setenv("JAX_ENABLE_COMPILATION_CACHE", "false")
    assert regbayes.enable_compilation_cache() is None


def test_cli_turns_it_on_unless_told_not_to(monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(cc, "enable_compilation_cache", lambda: calls.append(1))
    monkeypatch.setenv(cc.ENV_VAR, "0")
    cli._compilation_cache()
    assert calls == []
    monkeypatch.delenv(cc.ENV_VAR)
    cli._compilation_cache()
    assert calls == [1]

    def unwritable():
        raise PermissionError("[Errno 13] Permission denied: '/nowhere'")

    monkeypatch.setattr(cc, "enable_compilation_cache", unwritable)
    cli._compilation_cache()
    err = capsys.readouterr().err
    assert "without JAX's compilation cache" in err and "Permission denied" in err and cc.ENV_VAR in err
