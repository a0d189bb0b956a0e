"""ULR-ALBERT against the released run_mse_albert.py, and the fine-tuning dropout on every fine-tuned row
(issue "Paper fidelity V" §4): the plan names where the authors' ALBERT code departs from ULR-BERT's text
(§4's dropout 0.1; §3.2's pooler, which its GLUE never read) and the dropout a released checkpoint's GLUE /
CLUE grid fine-tunes at."""

from __future__ import annotations

import argparse
from functools import cache
from pathlib import Path

import pytest

from pipeline.backbone_family import family_kind
from pipeline.plan.plan import Planner
from pipeline.plan.plan_output import markdown
from pipeline.pretrain.pretrain import add_arguments
from pipeline.training_settings import PRETRAIN_DROPOUT
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


def ulr_albert_rows() -> list[dict]:
    return [r for r in plan("paper-en") if r["status"] == "planned" and r["row"].startswith("ULR-ALBERT")]


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


def test_every_ulr_albert_row_shows_the_released_scripts_dropout_0_against_the_texts_0_1():
    """ULR-BERT §4: "dropout rate is 0.1"; sh_albert.sh's run_mse_albert.py passes albert-base-v2's config on
    unchanged (hidden_dropout_prob, attention_probs_dropout_prob 0). Ours follows the text (no deviation)."""
    rows = ulr_albert_rows()
    assert {r["row"] for r in rows} == {"ULR-ALBERT_BASE", "ULR-ALBERT_XXLARGE", "ULR-ALBERT"}
    text = markdown(list(plan("paper-en")), "test")
    for record in rows:
        (dropout,) = [e for e in record["released"] if e["key"] == "dropout"]
        assert (dropout["ours"], dropout["paper"], dropout["released"]) == (0.1, 0.1, 0)
        assert dropout["source"].startswith("sh_albert.sh (run_mse_albert.py)")
        assert "hidden_dropout_prob" in dropout["source"]
        assert "dropout" not in {d["key"] for d in record["deviations"]}
        assert "dropout: paper 0.1, released code 0" in row_line(text, record)
    # the xxlarge row is shown ALBERT's script (run_mse_albert.py loads ALBERT whatever its size), saying so
    (xxlarge,) = [r for r in rows if r["row"] == "ULR-ALBERT_XXLARGE"]
    shown = {e["key"]: e for e in xxlarge["released"]}
    assert shown["batch_size"]["released"] == 80
    assert "no released script launches albert/albert-xxlarge-v2" in shown["batch_size"]["source"]


def test_bert_rows_show_no_released_dropout():
    """The BERT scripts' configs ship 0.1, as §4 states: nothing to show."""
    rows = [
        r
        for r in plan("paper-en")
        if r["status"] == "planned"
        and r["settings"].get("objective")
        and family_kind(r["settings"]["backbone"]) == "bert"
    ]
    assert rows
    for record in rows:
        assert "dropout" not in {e["key"] for e in record["released"]}, record["row"]
        assert record["settings"]["dropout"] == 0.1


def test_the_ulr_albert_glue_row_says_the_released_pooler_went_unread():
    """run_mse_albert.py sets a BertPooler as AlbertForMaskedLM's albert.pooler and saves albert.pooler.dense.*;
    transformers 3.3.1's AlbertForSequenceClassification reads albert.pooler.* (an nn.Linear), so the authors'
    GLUE started from a random pooler: the alternative must not say "as ours". ULR-BERT's still does."""
    (record,) = [r for r in ulr_albert_rows() if r.get("downstream", {}).get("benchmark")]
    (pooler,) = [c for c in record["choices"] if c["key"] == "glue_pooler"]
    assert pooler["ours"].startswith("MiSAD's trained pooler")
    alternative = " ".join(pooler["alternative"].split())
    assert "run_mse_albert.py" in alternative and "albert.pooler.dense.weight" in alternative
    assert "albert.pooler.weight" in alternative and "random pooler" in alternative
    assert "as ours" not in alternative
    line = row_line(markdown(list(plan("paper-en")), "test"), record)
    assert "albert.pooler.dense.weight" in line and "dropout: paper 0.1, released code 0" in line
    bert = [
        r
        for r in plan("paper-en")
        if r["status"] == "planned" and r["row"] == "ULR-BERT" and r.get("downstream", {}).get("benchmark")
    ]
    assert bert
    for record in bert:
        (pooler,) = [c for c in record["choices"] if c["key"] == "glue_pooler"]
        assert "bert.pooler.dense" in pooler["alternative"] and "as ours" in pooler["alternative"]


def test_the_plans_pretraining_dropout_is_the_one_pretrain_runs_at():
    """The plan shows PRETRAIN_DROPOUT as every pre-training run's: pretrain's --dropout default, which no
    pretrain rule passes."""
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert parser.get_default("dropout") == PRETRAIN_DROPOUT == 0.1
    for rules in ("workflow/rules/pretrain.smk", "workflow/rules/functions/pretrain.smk"):
        assert "dropout" not in (REPO / rules).read_text()
