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
