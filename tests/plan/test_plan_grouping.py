"""classify.group_by_length in the plan: its choice on every row fine-tuned on a grid, and the grid costed at
the tokens of batches grouped by length, measured on each task's data (classify_tokens.yaml ``grouped``,
python -m pipeline measure-tokens)."""

from __future__ import annotations

import copy
import math
from pathlib import Path

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
    saving = Planner(resolve_config(REPO / "workflow/config/paper-en.yaml"), "h100", 0.4).grouping_saving(32)
    assert "run_glue" in choice["why"] and f"one run: {saving};" in choice["why"]
    shown = dict(part.split(" ") for part in saving.split("; "))
    assert set(shown) == {"cola", "sst2", "mnli", "qnli", "rte", "mrpc", "stsb"}  # QQP: no file, no figure
    assert all(0.2 < float(ratio) < 0.9 for ratio in shown.values())
    assert choice["alternative"].startswith("classify.group_by_length: true")


def test_grouping_costs_the_grouped_batches_of_each_measured_task():
    """With group_by_length on, a measured task's sequence is as long as its grouped batches pad it (one run,
    and a stack of several orders); QQP, with no file, keeps its upper bound either way."""
    off, on = planner(False), planner(True)
    for task in ("rte", "mnli", "stsb"):
        figure = on.tokens["measured"]["glue"][task]["lengths"][128]
        for orders in (1, 5):
            assert on.padded_sequence("glue", task, 32, 128, orders) == figure["grouped"][32][orders - 1]
            assert off.padded_sequence("glue", task, 32, 128, orders) == figure["padded"][32][orders - 1]
            assert figure["grouped"][32][orders - 1] < figure["padded"][32][orders - 1]
    assert on.padded_sequence("glue", "qqp", 32, 128, 1) is None
    # BERT-large's GLUE grid is FLOPs-bound: grouping takes the measured share off its tasks' FLOPs
    label = "bert-large-uncased"
    assert on.classify_cost("glue", label).flops_hours < off.classify_cost("glue", label).flops_hours
    base = copy.deepcopy(off.config)
    base["classify"]["glue"]["tasks"] = ["qqp"]  # a task not measured costs the same either way
    alone_off, alone_on = Planner(base, "h100", 0.4), Planner(copy.deepcopy(base), "h100", 0.4)
    alone_on.config["classify"]["group_by_length"] = True
    assert math.isclose(alone_on.classify_cost("glue", label).hours, alone_off.classify_cost("glue", label).hours)
