"""ULR-ALBERT against the released run_mse_albert.py, and the fine-tuning dropout on every fine-tuned row
(issue "Paper fidelity V" §4): the plan names where the authors' ALBERT code departs from ULR-BERT's text
(§4's dropout 0.1; §3.2's pooler, which its GLUE never read) and the dropout a released checkpoint's GLUE /
CLUE grid fine-tunes at."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from pipeline.plan.plan import Planner
from pipeline.plan.plan_output import markdown
from pipeline.workflow_config import resolve_config

REPO = Path(__file__).resolve().parents[2]


@cache
def plan(name: str) -> tuple[dict, ...]:
    return tuple(Planner(resolve_config(REPO / f"workflow/config/{name}.yaml"), "h100", 0.4).records())


def row_line(text: str, source: dict) -> str:
    """The Markdown table line of one record."""
    (line,) = [
        line
        for line in text.splitlines()
        if line.startswith(f"| {source['paper']} | {source['table']} | {source['row']} | ")
    ]
    return line


@pytest.mark.parametrize("name", ["paper-en", "paper-zh"])
def test_a_released_checkpoints_fine_tuned_row_names_the_dropout_it_fine_tunes_at(name):
    """A released checkpoint's GLUE / CLUE grid runs at classify.dropout too (its config's own, ALBERT v2's 0,
    is overridden): its row says so, as a pre-trained model's does."""
    rows = [
        r
        for r in plan(name)
        if r["status"] == "planned"
        and r.get("downstream", {}).get("benchmark")
        and "objective" not in r["settings"]
        and "recipe" not in r["settings"]
    ]
    assert rows and {r["row"] for r in rows} >= ({"BERT", "ALBERT"} if name == "paper-en" else {"BERT"})
    text = markdown(list(plan(name)), "test")
    for record in rows:
        (dropout,) = [c for c in record["choices"] if c["key"] == "glue_dropout"]
        assert dropout["ours"] == record["settings"]["glue_dropout"] == 0.1
        assert "§5.1.2" in dropout["why"] and "released ALBERT v2: 0" in dropout["why"]
        assert "glue_dropout: 0.1" in row_line(text, record)
    # a row fine-tuned on no grid says nothing of it
    for record in plan(name):
        if record["status"] == "planned" and not record.get("downstream", {}).get("benchmark"):
            assert "glue_dropout" not in record.get("settings", {}), record["row"]
