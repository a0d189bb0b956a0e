"""Hostile inputs to ``plan``: an estimate that is not a finite number is refused in one line, never
written as JSON's non-standard Infinity / NaN nor printed as a table of them (issue 39 §6)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from hostile import assert_clean_failure

from pipeline.plan import plan

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "workflow/config/paper-en.yaml"


@pytest.fixture
def overflowing(monkeypatch):
    """workloads.yaml with a GLUE training set so large that its FLOPs overflow to infinity."""
    original = plan._yaml

    def patched(name: str) -> dict:
        data = original(name)
        if name != "workloads.yaml":
            return data
        data = copy.deepcopy(data)
        data["train_examples"]["glue"]["cola"] = 1e308
        return data

    monkeypatch.setattr(plan, "_yaml", patched)


@pytest.mark.parametrize("form", ["json", "md"])
def test_a_non_finite_estimate_is_refused(cli, tmp_path, capsys, overflowing, form):
    out = tmp_path / f"plan.{form}"
    status = cli("plan", "--configfile", CONFIG, "--format", form, "--out", out)
    assert_clean_failure(status, capsys.readouterr().err, CONFIG, out, "not a finite number")


def test_a_bilstm_beside_the_grid_with_an_unknown_pooling_is_refused(cli, tmp_path, capsys):
    """bilstm.extra (paper 004 §3.4's 1024-d BiLSTM-Max) names a pooling the stage has, or the config is refused."""
    config = tmp_path / "extra.yaml"
    config.write_text(CONFIG.read_text().replace("extra: [{pooling: max,", "extra: [{pooling: mean,"))
    out = tmp_path / "plan.md"
    status = cli("plan", "--configfile", config, "--out", out)
    assert_clean_failure(status, capsys.readouterr().err, config, out, "bilstm")


@pytest.mark.parametrize(
    "counts, fragment",
    [
        ([str(n) for n in range(1, 3001)], "3000 GPU counts; give at most 16"),  # issue 55 §3: ran past 5 minutes
        ([str(n) for n in range(1, 18)], "17 GPU counts; give at most 16"),
    ],
)
def test_thousands_of_gpu_counts_are_refused_at_once(cli, tmp_path, capsys, monkeypatch, counts, fragment):
    def planned(*args):
        raise AssertionError("the config was planned before the counts were refused")

    monkeypatch.setattr(plan, "resolve_config", planned)
    out = tmp_path / "plan.md"
    status = cli("plan", "--configfile", CONFIG, "--gpus", *counts, "--out", out)
    assert_clean_failure(status, capsys.readouterr().err, "--gpus", out, fragment)


def test_one_count_given_many_times_is_scheduled_once(cli, capsys):
    assert cli("plan", "--configfile", CONFIG, "--gpus", *["8"] * 2000, "--format", "json") == 0
    import json

    schedule = json.loads(capsys.readouterr().out)["schedule"]
    assert [s["gpus"] for s in schedule] == [8]
