"""A fused member's provenance names its stack (issue 47 §2): which runs shared it, and its place among the
job's stacks (a stack of one included), or null for a run trained solo. A stacked member's masks come from its
own key, whatever the runs beside it; a solo run (fusing off) draws torch's own masks (training.run_seed): the
record tells the two paths apart (issue 54 §4)."""

from __future__ import annotations

import json


def _stacks(folder):
    return json.loads((folder / "metrics.json").read_text(encoding="utf-8"))["provenance"]["stacks"]


def test_each_seed_records_the_runs_that_shared_its_stack(cli, tiny_en, demo_root, tmp_path):
    """Two models x three seeds at --fuse 2 train in three stacks, the middle one of both models; each seed
    folder names its own stack, as the only stack record of that seed."""
    common = ("--task", "sst2", "--data", demo_root, "--seeds", 3, "--seed-dirs", "--max-steps", 2, "--fuse", 2)
    models = ("--model", tiny_en, "--name", "a", "--out", tmp_path / "a")
    models += ("--model", tiny_en, "--name", "b", "--out", tmp_path / "b")
    assert cli("classify", *common, *models, "--report-to", "none") == 0
    first = {"index": 0, "of": 3, "runs": [{"model": "a", "seed": 0}, {"model": "a", "seed": 1}]}
    middle = {"index": 1, "of": 3, "runs": [{"model": "a", "seed": 2}, {"model": "b", "seed": 0}]}
    last = {"index": 2, "of": 3, "runs": [{"model": "b", "seed": 1}, {"model": "b", "seed": 2}]}
    assert _stacks(tmp_path / "a" / "seed0") == {"0": first}
    assert _stacks(tmp_path / "a" / "seed1") == {"1": first}
    assert _stacks(tmp_path / "a" / "seed2") == {"2": middle}
    assert _stacks(tmp_path / "b" / "seed0") == {"0": middle}
    assert _stacks(tmp_path / "b" / "seed2") == {"2": last}


def test_a_seed_alone_in_a_fusing_job_records_its_stack_of_one(cli, tiny_en, demo_root, tmp_path):
    """Three seeds at --fuse 2: seeds 0 and 1 stacked, seed 2 in a stack of one (the fused path, its own record);
    without --fuse every seed trains solo (null)."""
    common = ("--model", tiny_en, "--task", "sst2", "--data", demo_root, "--seeds", 3, "--max-steps", 2)
    assert cli("classify", *common, "--fuse", 2, "--out", tmp_path / "fused") == 0
    pair = {"index": 0, "of": 2, "runs": [{"model": "tiny-en", "seed": 0}, {"model": "tiny-en", "seed": 1}]}
    one = {"index": 1, "of": 2, "runs": [{"model": "tiny-en", "seed": 2}]}
    assert _stacks(tmp_path / "fused") == {"0": pair, "1": pair, "2": one}
    assert cli("classify", *common, "--out", tmp_path / "solo") == 0
    assert _stacks(tmp_path / "solo") == {"0": None, "1": None, "2": None}
