"""classify.group_by_length in the plan: its choice on every row fine-tuned on a grid, and the grid's tokens
scaled by the padding bench/classify_group_by_length.py measured (workloads.yaml length_grouped_padding)."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import pytest

from pipeline.plan.plan import Planner
from pipeline.workflow_config import resolve_config

REPO = Path(__file__).resolve().parents[2]


def planner(group_by_length: bool) -> Planner:
    config = copy.deepcopy(resolve_config(REPO / "workflow/config/paper-en.yaml"))
    config["classify"]["group_by_length"] = group_by_length
    return Planner(config, "h100", 0.4)


def test_the_paper_configs_keep_random_order_and_say_why():
    for name in ("paper-en", "paper-zh"):
        config = resolve_config(REPO / f"workflow/config/{name}.yaml")
        assert config["classify"]["group_by_length"] is False  # the schema's default: the papers' order
    rows = Planner(resolve_config(REPO / "workflow/config/paper-en.yaml"), "h100", 0.4).records()
    grid = [r for r in rows if r.get("settings", {}).get("glue_pooler")]
    assert grid and all(r["settings"]["glue_group_by_length"] is False for r in grid)
    choice = next(c for c in grid[0]["choices"] if c["key"] == "glue_group_by_length")
    assert "run_glue" in choice["why"] and "rte 0.55" in choice["why"]
    assert choice["alternative"].startswith("classify.group_by_length: true")


def test_grouping_scales_only_the_measured_tasks_tokens():
    off, on = planner(False), planner(True)
    assert off.length_grouping("rte", 32) == 1.0
    assert on.length_grouping("rte", 32) == pytest.approx(0.546)
    assert on.length_grouping("rte", 24) == pytest.approx(0.540)  # the nearest batch measured (16 before 32)
    assert on.length_grouping("mnli", 32) == 1.0  # not measured: no saving claimed
    # BERT-large's GLUE grid is FLOPs-bound: grouping takes the measured share off its four measured tasks
    label = "bert-large-uncased"
    assert on.classify_cost("glue", label).flops_hours < off.classify_cost("glue", label).flops_hours
    base = copy.deepcopy(off.config)
    base["classify"]["glue"]["tasks"] = ["stsb"]  # a task not measured costs the same either way
    alone_off, alone_on = Planner(base, "h100", 0.4), Planner(copy.deepcopy(base), "h100", 0.4)
    alone_on.config["classify"]["group_by_length"] = True
    assert math.isclose(alone_on.classify_cost("glue", label).hours, alone_off.classify_cost("glue", label).hours)
