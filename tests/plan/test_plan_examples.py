"""BURT Table VII and ALBURT Table 5 in the plan: the printed analogy questions' candidate scores, made by
the ``analogy_examples`` evaluation of the models the plan trains (no longer "not reproduced")."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pipeline.plan.plan import Planner
from pipeline.workflow_config import resolve_config

REPO = Path(__file__).resolve().parents[2]


@cache
def plan(name: str) -> tuple[dict, ...]:
    return tuple(Planner(resolve_config(REPO / f"workflow/config/{name}.yaml"), "h100", 0.4).records())


def rows(name: str, source: str) -> dict[str, dict]:
    return {r["row"]: r for r in plan(name) if r["source"] == source}


def test_burt_table_vii_is_planned_for_burt_base_and_quotes_glove_and_use():
    table = rows("paper-en", "burt_t7")
    assert {name: r["status"] for name, r in table.items()} == {
        "GloVe": "quoted",
        "USE": "quoted",
        "BURT-base": "planned",
    }
    assert table["BURT-base"]["label"] == "bert-base-uncased+burt.packed"
    assert table["BURT-base"]["table"] == "Table VII" and table["BURT-base"]["paper"] == "BURT"


def test_alburt_table_5_is_planned_on_the_papers_xxlarge_models():
    table = rows("paper-en", "alburt_t5")
    assert table["GloVe"]["status"] == "quoted"
    assert table["SALBERT"]["label"] == "albert-xxlarge-v2+sbert-nli"
    assert table["ALBURT"]["label"] == "albert-xxlarge-v2+twin"
    # paper-zh configures no ALBERT-xxlarge: the rows say why
    zh = rows("paper-zh", "alburt_t5")
    assert zh["ALBURT"]["status"] == "not planned" and "ALBERT-xxlarge" in zh["ALBURT"]["reason"]


def test_paper_en_evaluates_the_examples_for_the_rows_the_plan_plans():
    """Every English model gets an analogy_examples metrics file: those of the planned rows are jobs of
    paper-en's workflow (an evaluate_en job, beside the analogy)."""
    from test_workflow_config import snakemake

    labels = [rows("paper-en", "burt_t7")["BURT-base"]["label"], rows("paper-en", "alburt_t5")["ALBURT"]["label"]]
    targets = [f"results/paper-en/metrics/analogy_examples/{label}.mean.json" for label in labels]
    result = snakemake(*targets, "--configfile", "workflow/config/paper-en.yaml")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.count("python -m pipeline evaluate analogy analogy_examples") >= 2
