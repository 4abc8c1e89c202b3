"""Every registered experiment runs end to end with tiny settings and writes
``<name>.png``, ``<name>.json`` and ``results.md``; helpers are checked without fitting."""
from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from regbayes.experiments import EXPERIMENTS, describe, get_experiment
from regbayes.experiments import _common


def _check_outputs(result, out_dir, name):
    png, js, md = out_dir / f"{name}.png", out_dir / f"{name}.json", out_dir / "results.md"
    assert png.read_bytes().startswith(b"\x89PNG")
    assert png.stat().st_size > 5000
    numbers = json.loads(js.read_text())  # strict JSON (no NaN)
    assert numbers["experiment"] == name
    text = md.read_text()
    assert text.startswith("# ") and "|---" in text
    assert result["png"] == str(png) and result["json"] == str(js) and result["markdown"] == str(md)
    assert result["seconds"] > 0
    return numbers


def test_registry_lists_every_figure():
    assert {"fig4", "fig5", "fig6", "fig7", "demo"} <= set(EXPERIMENTS)
    for name, module in EXPERIMENTS.items():
        assert callable(module.run) and module.NAME == name
    assert set(describe()) == set(EXPERIMENTS)
    with pytest.raises(KeyError, match="unknown experiment 'nope'.*fig4"):
        get_experiment("nope")


# fig4 runs end to end through the CLI in tests/test_cli.py.


def test_fig5_tiny(tmp_path):
    result = EXPERIMENTS["fig5"].run(
        tmp_path, n=3000, iterations=200, budget=0.3, samplers=("gibbs",), datasets=("higgs-like",)
    )  # the minibatch samplers run the same code path in fig6 / fig7
    numbers = _check_outputs(result, tmp_path, "fig5")
    runs = numbers["datasets"]["higgs-like"]["samplers"]
    assert set(runs) == {"gibbs"}
    assert numbers["datasets"]["higgs-like"]["n_test"] == 300
    for r in runs.values():
        assert r["error"] is None
        assert len(r["times"]) == len(r["accuracy"]) > 3
        assert np.all(np.diff(r["times"]) >= 0)
        assert 0.5 < r["final_accuracy"] <= 1.0
    assert "budget" in runs["gibbs"]["note"]
    # the stand-in is named as one, in the table's text and the JSON
    assert "higgs-like (an offline stand-in for the paper's HIGGS)" in (tmp_path / "results.md").read_text()
    assert numbers["settings"]["data"][0]["stand_in"] is True and numbers["settings"]["paper_settings"] is False
    with pytest.raises(ValueError, match="unknown sampler"):
        EXPERIMENTS["fig5"].run(tmp_path, samplers=("hmc",), datasets=())


def test_fig6_tiny(tmp_path):
    result = EXPERIMENTS["fig6"].run(
        tmp_path, n=2000, iterations=100, batch_sizes=(1, 10, 10**6), samplers=("ssgld",), datasets=("higgs-like",)
    )
    numbers = _check_outputs(result, tmp_path, "fig6")
    runs = numbers["datasets"]["higgs-like"]["runs"]
    assert set(runs) == {"ssgld/batch=1", "ssgld/batch=10"}  # larger than the training set: skipped
    assert "| ssgld | 10 |" in result["table"]


def test_fig7_tiny(tmp_path):
    result = EXPERIMENTS["fig7"].run(tmp_path, iterations=100, datasets=("breast-cancer",))
    numbers = _check_outputs(result, tmp_path, "fig7")
    runs = numbers["datasets"]["breast-cancer"]["runs"]
    assert set(runs) == {"adagrad", "polynomial"}
    assert all(r["final_accuracy"] > 0.8 for r in runs.values())
    assert "breast-cancer (an offline stand-in for the paper's Realsim)" in (tmp_path / "results.md").read_text()


def test_demo_tiny(tmp_path):
    result = EXPERIMENTS["demo"].run(tmp_path, n_draws=60, n_warmup=40, thin=1)
    numbers = _check_outputs(result, tmp_path, "demo")
    per = numbers["samplers"]
    assert set(per) == {"gibbs", "ssgld", "ssgnht"}
    assert per["gibbs"]["rel_error_vs_gibbs"] == 0.0
    for info in per.values():
        assert 0.8 < info["test_accuracy"] <= 1.0
        assert info["max_rhat"] is not None  # two chains
        assert len(info["coef_mean"]) == 30
    assert "min ESS" in result["table"]


# ----------------------------------------------------------------- helpers (no fitting)
def _fake_model(coef, intercept, wall, n_chains=1):
    return SimpleNamespace(
        coef_samples_=np.asarray(coef, dtype=float),
        intercept_samples_=np.asarray(intercept, dtype=float),
        n_chains=n_chains,
        classes_=np.array([0, 1]),
        trace_={"wall_time": np.asarray(wall, dtype=float)},
    )


def test_running_accuracy_uses_the_running_mean_of_the_second_half():
    # Draws point the wrong way for the first 50, then the right way: the running mean
    # over the second half of the draws so far flips to 100 % accuracy.
    X = np.array([[1.0], [-1.0], [2.0], [-3.0]])
    y = np.array([1, 0, 1, 0])
    coef = np.concatenate([-np.ones((50, 1)), np.ones((150, 1))])
    wall = np.linspace(0.01, 2.0, 200)
    model = _fake_model(coef, np.zeros(200), wall)
    times, acc, ks = _common.running_accuracy(model, X, y, n_checkpoints=30)
    assert ks[0] == 1 and ks[-1] == 200
    np.testing.assert_allclose(times, wall[ks - 1])
    assert acc[0] == 0.0 and acc[-1] == 1.0
    # plain cumulative mean of k draws: sum (k - 100) changes sign at k = 100 (a zero
    # discriminant predicts class 0 everywhere: accuracy 0.5)
    _, acc0, ks0 = _common.running_accuracy(model, X, y, n_checkpoints=200, burn_fraction=0.0)
    np.testing.assert_array_equal(acc0, np.where(ks0 < 100, 0.0, np.where(ks0 == 100, 0.5, 1.0)))
    # second half: draws [k // 2, k) hold k - 50 ones and 50 - k // 2 minus-ones
    expected = np.sign((ks - 50).clip(0) - (50 - ks // 2).clip(0))
    np.testing.assert_array_equal(acc, np.select([expected < 0, expected == 0], [0.0, 0.5], 1.0))


def test_running_accuracy_pools_chains():
    X = np.array([[1.0], [-1.0]])
    y = np.array([1, 0])
    # chain 0 says +2, chain 1 says -1 at every draw: pooled mean +0.5 -> correct
    coef = np.concatenate([2 * np.ones((10, 1)), -np.ones((10, 1))])
    model = _fake_model(coef, np.zeros(20), np.arange(1, 11) / 10, n_chains=2)
    times, acc, ks = _common.running_accuracy(model, X, y)
    assert ks[-1] == 10 and np.all(acc == 1.0)


def test_fit_model_retries_a_divergence_with_a_smaller_step():
    from regbayes.inference import DivergenceError

    calls = []

    class Flaky:
        def __init__(self, step_size=None, **kw):
            self.step_size = step_size
            calls.append(step_size)

        def fit(self, X, y):
            if self.step_size is None or self.step_size > 0.01:
                raise DivergenceError("sampler 'x' diverged", algorithm="x", iteration=3, step_size=0.15)
            self.trace_ = {"compile_seconds": 0.0, "sampling_seconds": 0.0}
            return self

    fit = _common.fit_model(Flaky, None, None, shrink=10.0)
    assert fit.model is not None and calls == [None, pytest.approx(0.015), pytest.approx(0.0015)]
    assert fit.note == "diverged at step size 0.15; rerun with step_size=0.0015"
    fit = _common.fit_model(Flaky, None, None, retries=0)
    assert fit.model is None and "diverged" in fit.error


def test_tables_and_json_are_clean(tmp_path):
    table = _common.markdown_table(["a", "b"], [[1, float("nan")], ["x", 0.123456]])
    assert table.splitlines()[2] == "| 1 | - |" and "0.123" in table
    assert _common.fmt(1.5e-7) == "1.5e-07"
    from regbayes.plotting import new_figure

    fig = new_figure(2, 2)
    fig.add_subplot(1, 1, 1).plot([0, 1])
    paths = _common.write_outputs(tmp_path / "sub", "x", fig, {"v": np.float32(np.nan), "a": np.arange(3)}, "# t\n")
    assert json.loads(open(paths["json"]).read()) == {"v": None, "a": [0, 1, 2]}


def test_run_lengths_are_read_from_the_trace():
    # n_warmup = 7, thin = 3, 4 draws: kept steps 9, 12, 15, 18
    model = SimpleNamespace(trace_={"iteration": 7 + 3 * np.arange(1, 5) - 1}, thin=None)
    assert _common.run_lengths(model) == (7, 3, 4)
    assert _common.total_iterations(model) == 19
