"""MiSAD and the baselines as the authors ran them, in the plan (issue 38 §3): each objective's released
launch script with its own values, MiSAD's choice of w, the span unit and the pooler GLUE starts from."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from pipeline.experiments import MISAD_OBJECTIVES
from pipeline.plan.plan import Planner
from pipeline.plan.plan_output import markdown
from pipeline.workflow_config import resolve_config

REPO = Path(__file__).resolve().parents[2]


@cache
def plan(name: str) -> tuple[dict, ...]:
    return tuple(Planner(resolve_config(REPO / f"workflow/config/{name}.yaml"), "h100", 0.4).records())


def pretrained(name: str):
    return [r for r in plan(name) if r["status"] == "planned" and "objective" in r.get("settings", {})]


def released(record: dict) -> dict:
    return {e["key"]: e for e in record["released"]}


@pytest.mark.parametrize(
    ("objective", "script", "values"),
    [
        ("mlm", "sh_mlm.sh", {"lr": 3e-6, "batch_size": 72, "warmup": 0}),
        ("misad", "sh_ngram.sh", {"lr": 3e-6, "batch_size": 64, "warmup": 0}),
        ("misad-span", "sh_span.sh", {"lr": 3e-6, "batch_size": 80, "warmup": 0}),
        ("misad-entity", "sh_entity.sh", {"lr": 3e-6, "batch_size": 80, "warmup": 0}),
        ("nsp", "sh_nsp.sh", {"lr": 5e-5, "batch_size": 32, "warmup": 0, "max_length": 128}),
    ],
)
def test_each_ulr_objective_shows_its_own_launch_script(objective, script, values):
    """Read from ulr_code/scripts/sh_*.sh: per-device batch x the GPUs of CUDA_VISIBLE_DEVICES, no warm-up;
    sh_nsp.sh passes no learning rate (the Trainer's 5e-5) and its --block_size 128 builds the pairs (the
    collator's 512 only pads)."""
    rows = [r for r in pretrained("paper-en") if r["source"] == "ulr_t5" or r["source"] == "ulr_t7"]
    (record,) = {r["label"]: r for r in rows if r["settings"]["objective"] == objective}.values()
    shown = released(record)
    assert {key: shown[key]["released"] for key in values} == values
    for key in values:
        assert shown[key]["source"].startswith(script), shown[key]
        assert shown[key]["ours"] == record["settings"][key] and shown[key]["paper"] == record["paper_settings"][key]


def test_sop_says_no_script_launches_it():
    (sop,) = {r["label"]: r for r in pretrained("paper-en") if r["settings"]["objective"] == "sop"}.values()
    (entry,) = sop["released"]
    assert entry["key"] == "launch_script" and "no released script launches SOP" in entry["source"]


@pytest.mark.parametrize("name", ["paper-en", "paper-zh"])
def test_burt_rows_have_no_released_launch_script_and_no_borrowed_rate(name):
    rows = [r for r in pretrained(name) if r["source"] in ("burt_t5", "burt_t6", "burt_t8")]
    assert rows
    for record in rows:
        (entry,) = record["released"]
        assert entry["key"] == "launch_script" and "no released launch script" in entry["source"], record["row"]
        assert "run_ngram.py" in entry["source"] and "run_span.py" in entry["source"]
    text = markdown(list(plan(name)), "test")
    assert (
        "released code: no released launch script" in text
        and "released code 3e-06" not in text.split("| BURT |")[1].splitlines()[0]
    )


@pytest.mark.parametrize("name", ["paper-en", "paper-zh"])
def test_every_misad_row_lists_misad_choice_with_the_released_alternative(name):
    rows = [r for r in pretrained(name) if r["settings"]["objective"] in MISAD_OBJECTIVES]
    if name == "paper-zh":
        assert not rows  # paper-zh trains no MiSAD
        return
    assert rows
    for record in rows:
        (choice,) = [c for c in record["choices"] if c["key"] == "misad_choice"]
        assert "run_mse.py" in choice["alternative"] and "uniform" in choice["alternative"]
        assert "§3.3" in choice["why"]
        expected = "mlm-score" if record["settings"]["objective"] == "misad" else "random"
        assert choice["ours"].startswith(expected), record["row"]


def test_span_rows_show_their_unit_and_the_released_wordpieces():
    rows = [r for r in pretrained("paper-en") if r["settings"]["objective"] in ("spanbert", "misad-span")]
    assert {r["settings"]["objective"] for r in rows} == {"spanbert", "misad-span"}
    for record in rows:
        (unit,) = [c for c in record["choices"] if c["key"] == "span_unit"]
        words = record["settings"]["span_max_words"]
        assert unit["ours"].startswith(f"whole words, 1-{words}")
        released_rule = "run_span.py: 1-10 WordPieces" if record["settings"]["objective"] == "spanbert" else "1-5"
        assert released_rule in unit["alternative"] and "WordPieces" in unit["alternative"]


@pytest.mark.parametrize("name", ["paper-en", "paper-zh"])
def test_the_pooler_glue_starts_from_is_listed_for_every_fine_tuned_pretrained_row(name):
    rows = [r for r in pretrained(name) if r.get("downstream", {}).get("benchmark")]
    assert rows
    for record in rows:
        (pooler,) = [c for c in record["choices"] if c["key"] == "glue_pooler"]
        if "electra" in record["settings"]["backbone"]:  # no pooler in the architecture
            assert pooler["ours"].startswith("none: ELECTRA has no pooler") and "2_Dense" in pooler["why"]
        elif record["settings"]["objective"] in MISAD_OBJECTIVES:
            assert pooler["ours"].startswith("MiSAD's trained pooler") and "equalising" in pooler["why"]
        else:
            assert pooler["ours"].startswith("the starting checkpoint's pre-trained pooler")
        assert pooler["alternative"] and pooler["why"]
    # rows without a GLUE / CLUE grid say nothing about it
    for record in pretrained(name):
        if not record.get("downstream", {}).get("benchmark"):
            assert "glue_pooler" not in record["settings"], record["row"]


@pytest.mark.parametrize("name", ["paper-en", "paper-zh"])
def test_every_fine_tuned_row_names_the_one_dropout_glue_fine_tunes_at(name):
    """Issue 46 §1: the fine-tuning dropout is set for every model a table compares, equal across them, and
    the plan says the value and why (released ALBERT ships 0, an ALBERT pre-trained here 0.1)."""
    rows = [r for r in pretrained(name) if r.get("downstream", {}).get("benchmark")]
    assert rows
    for record in rows:
        (dropout,) = [c for c in record["choices"] if c["key"] == "glue_dropout"]
        assert dropout["ours"] == record["settings"]["glue_dropout"] == 0.1
        assert "§5.1.2" in dropout["why"] and "ALBERT" in dropout["why"]
    text = markdown(list(plan(name)), "test")
    assert "- glue_dropout: ULR-BERT §5.1.2" in text[text.index("Our choices, and why:") :]
