"""A measured-floor file the plan must not take on trust (issue 47 §5; pipeline/budget/workloads_file.py):
``bench/gpu_step.py`` writes ``step_floor_measured`` into workloads.yaml, and a NaN or 1e-300 ms there
removed the step floor silently (paper-en: 134.8 instead of 168.1 GPU-hours), ``true`` was read as 1 ms,
1e300 ms gave 2.65e301 GPU-hours and the card's name went into the Markdown raw. Each is now one line
naming the file and the place in it, exit 2, nothing written."""

from __future__ import annotations

import pytest
import yaml
from hostile import assert_clean_failure
from testdata import REPO

from pipeline.budget import cost, workloads_file
from pipeline.plan import plan

PAPER_EN = REPO / "workflow" / "config" / "paper-en.yaml"


def measured(cell="40.0", card="'NVIDIA H200'") -> str:
    """A step_floor_measured block as bench/gpu_step.py writes it, ``cell`` the solo eager step at batch 8."""
    return (
        "\nstep_floor_measured:\n"
        f"  card: {card}\n"
        "  ms_per_member_step:\n"
        "    bert-base:\n"
        "      eager:\n"
        f"        8: {{1: {cell}, 2: 21.5, 4: 'out of memory'}}\n"
        "    bert-large:\n"
        "      eager:\n"
        "        8: {1: 80.5, 2: 'skipped: time'}\n"
    )


@pytest.fixture
def workloads(tmp_path, monkeypatch):
    """Point the plan at a copy of workloads.yaml with a measured block appended (``write(block)``)."""
    path = tmp_path / "workloads.yaml"

    def write(block: str):
        path.write_text(cost.WORKLOADS.read_text(encoding="utf-8") + block, encoding="utf-8")
        monkeypatch.setattr(cost, "WORKLOADS", path)
        monkeypatch.setitem(plan.FILES, "workloads.yaml", path)
        for cached in (cost.workloads, plan._yaml):
            cached.cache_clear()
        return path

    yield write
    for cached in (cost.workloads, plan._yaml):
        cached.cache_clear()


@pytest.mark.parametrize(
    "block, place, fragment",
    [
        (measured(".nan"), "bert-base.eager.8.1", "not a finite number of milliseconds"),
        (measured("1.0e-300"), "bert-base.eager.8.1", "1e-300 ms is outside [0.01, 100000] ms"),
        (measured("true"), "bert-base.eager.8.1", "true is a boolean, not a number"),
        (measured("1.0e+300"), "bert-base.eager.8.1", "1e+300 ms is outside"),
        (measured("-.inf"), "bert-base.eager.8.1", "not a finite number"),
        (measured("'fast'"), "bert-base.eager.8.1", "neither a number of milliseconds nor a reason"),
        (measured(card="'**H100** <img src=x onerror=alert(1)>'"), "step_floor_measured.card", "not plain text"),
        (measured(card="'[H100](https://example.org)'"), "step_floor_measured.card", "not plain text"),
        (measured(card="'NVIDIA H100\\n# Budget'"), "step_floor_measured.card", "not plain text"),
    ],
    ids=["nan", "1e-300", "true", "1e300", "-inf", "text", "card html", "card link", "card newline"],
)
def test_a_bad_measured_floor_is_one_line(workloads, cli, capsys, tmp_path, block, place, fragment):
    path = workloads(block)
    out = tmp_path / "plan.md"
    status = cli("plan", "--configfile", PAPER_EN, "--out", out)
    err = capsys.readouterr().err
    assert_clean_failure(status, err, path, out, fragment)
    assert f"{path} (" in err and place in err and "rerun bench/gpu_step.py" in err


def test_a_good_measured_floor_is_used_and_named(workloads, cli, capsys, tmp_path):
    workloads(measured())
    out = tmp_path / "plan.md"
    assert cli("plan", "--configfile", PAPER_EN, "--out", out) == 0, capsys.readouterr().err
    assert "measured on NVIDIA H200 by bench/gpu_step.py" in out.read_text(encoding="utf-8")


def test_what_bench_gpu_step_writes_is_what_the_plan_reads():
    pytest.importorskip("torch")
    from bench.gpu_step import yaml_block

    rows = [
        ("bert-base", 8, 1, "eager", 41.25),
        ("bert-base", 8, 2, "eager", "out of memory"),
        ("bert-large", 16, 1, "compiled", "failed: BackendCompilerFailed"),
        ("bert-large", 8, 1, "eager", "skipped: time"),
    ]
    data = yaml.safe_load(yaml_block(rows, "NVIDIA H100 80GB HBM3"))
    assert workloads_file.check(data, "workloads.yaml") is data
