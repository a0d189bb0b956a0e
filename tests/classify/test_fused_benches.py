"""bench/gpu_step.py runs its every code path on CPU (--dry-run) and refuses a real run without CUDA."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

BENCH = Path(__file__).resolve().parents[2] / "bench" / "gpu_step.py"


def gpu_step():
    spec = importlib.util.spec_from_file_location("gpu_step", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_dry_run_times_solo_and_fused_steps_and_writes_nothing(capsys):
    workloads = gpu_step().WORKLOADS.read_bytes()
    assert gpu_step().main(["--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "step_floor_measured:" in out and "dry run on CPU" in out
    cells = [line for line in out.splitlines() if line.startswith("tiny batch 2 K=")]
    assert [line.split(":")[0] for line in cells] == ["tiny batch 2 K=1 eager", "tiny batch 2 K=2 eager"]
    assert all(float(line.split(": ")[1]) > 0 for line in cells)  # a time, not a failure
    assert gpu_step().WORKLOADS.read_bytes() == workloads


@pytest.mark.skipif(torch.cuda.is_available(), reason="the refusal is for machines without CUDA")
def test_without_cuda_a_real_run_refuses_in_one_line(capsys):
    assert gpu_step().main(["--write-workloads"]) == 2
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("error: ") and "CUDA" in out[0]


def test_the_plan_reads_the_floors_bench_gpu_step_writes():
    """Once bench/gpu_step.py has run on a GPU (issue 41 §3), the plan's per-step floor and fused ratio are
    the measured ones, and its assumption line names the card; a table with no eager solo step is ignored."""
    import yaml

    from pipeline.plan.plan_costs import measured_floors

    rows = [  # (model, batch, K, mode, ms per member-step), as measure() returns them
        ("bert-base", 8, 1, "eager", 24.0),
        ("bert-base", 8, 4, "eager", 7.2),
        ("bert-base", 16, 1, "eager", 26.0),
        ("bert-large", 8, 1, "eager", 50.4),
        ("bert-large", 8, 4, "eager", 16.8),
        ("bert-large", 8, 8, "eager", "out of memory"),
        ("bert-base", 8, 1, "compiled", 9.0),
    ]
    block = yaml.safe_load(gpu_step().yaml_block(rows, "NVIDIA H100 80GB HBM3"))
    found = measured_floors(block)
    assert found["card"] == "NVIDIA H100 80GB HBM3"
    assert found["per_layer_ms"] == pytest.approx((24.0 / 12 + 50.4 / 24) / 2)  # eager solo, smallest batch
    assert found["fused_ratio"] == pytest.approx({1: 1.0, 4: (7.2 / 24.0 + 16.8 / 50.4) / 2})
    assert measured_floors({}) is None
    failed = [("bert-base", 8, 1, "eager", "out of memory"), ("bert-base", 8, 2, "eager", 5.0)]
    assert measured_floors(yaml.safe_load(gpu_step().yaml_block(failed, "x"))) is None
