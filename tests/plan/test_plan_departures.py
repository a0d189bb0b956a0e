"""Every departure from the papers and the released code called a departure, and the rows the plan was
missing (issue 46 §3, §4): the short-document n-gram rules, NSP's released input, ULR-ELECTRA's
masked-LM term, the pooler GLUE starts from, BiLSTM-Max at 1,024, and the tables no run can make."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
import yaml

from pipeline.objective_registry import NGRAM_OBJECTIVES
from pipeline.plan.plan import Planner
from pipeline.plan.plan_output import markdown
from pipeline.workflow_config import resolve_config

REPO = Path(__file__).resolve().parents[2]
# the short-document rule of each paper config's presets, and the config switch that undoes it
RULES = {
    "paper-en": ("ngrams.top_k", "K = min(3000, ⌈0.6 × the document's words⌉)", "ngrams.mode: reference", "reference"),
    "paper-zh": (
        "ngrams.threshold",
        "threshold 3 × log T / log 3000 on a document of T < 3000 characters",
        "ngrams.mode: paper",
        "paper",
    ),
}


def config(name: str) -> dict:
    return resolve_config(REPO / f"workflow/config/{name}.yaml")


@cache
def plan(name: str) -> tuple[dict, ...]:
    return tuple(Planner(config(name), "h100", 0.4).records())


def rows(name: str) -> dict:
    return {(r["source"], r["row"]): r for r in plan(name) if r["status"] == "planned"}


@pytest.mark.parametrize("name", ["paper-en", "paper-zh"])
def test_the_short_document_rules_are_deviations_with_the_switch_that_restores_the_papers(name):
    """K = min(3000, ⌈0.6 × words⌉) (en) and the scaled zh threshold are this project's rules: each is a
    deviation from "the top 3000 n-grams for each document" / one threshold and from pmi.py, never a
    reading of the text, and ngrams.mode restores the papers' rule (the deviation then goes)."""
    key, ours, switch, mode = RULES[name]
    pretrained = [r for r in rows(name).values() if "objective" in r["settings"]]
    reading = [r for r in pretrained if r["settings"]["objective"] in NGRAM_OBJECTIVES]
    assert reading
    for record in pretrained:
        found = [d for d in record["deviations"] if d["key"].startswith("ngrams.")]
        if record["settings"]["objective"] not in NGRAM_OBJECTIVES:
            assert not found, record["row"]
            continue
        (rule,) = found
        assert (rule["key"], rule["ours"], rule["switch"].split(" (")[0]) == (key, ours, switch), rule
        assert "pmi.py" in rule["paper"] and rule["why"].startswith("no text"), rule
        assert "top 3000 n-grams for each document" in rule["paper"] or "chosen threshold" in rule["paper"]
    text = markdown(list(plan(name)), "test")
    assert f"(the papers' rule: {switch}" in text
    assert f"- {key}: no text" in text[text.index("Our rules where the papers or the released code") :]
    # the switch: the preset without its short-document knobs, and no deviation left
    switched = config(name)
    switched["ngrams"]["mode"] = mode
    for record in Planner(switched, "h100", 0.4).records():
        assert not [d for d in record.get("deviations", []) if d["key"].startswith("ngrams.")], record["row"]
        assert "short documents" not in record.get("settings", {}).get("ngram_preset", ""), record["row"]


def test_the_ngram_preset_choice_no_longer_reads_the_cap_into_the_text():
    why = yaml.safe_load((REPO / "pipeline/plan/paper_settings.yaml").read_text())["choices"]["ngram_preset"]["why"]
    assert "BURT §5.1's reason for K" not in why and "this project's" in why


def test_nsp_shows_the_input_the_released_code_builds():
    """sh_nsp.sh's --block_size 128 reaches transformers 3.3.1's TextDatasetForNextSentencePrediction, which
    takes a pair's 3 special tokens off twice (122 content tokens); the collator's 512 only pads."""
    nsp = rows("paper-en")[("ulr_t5", "NSP-BERT")]
    released = {e["key"]: e for e in nsp["released"]}
    assert released["max_length"]["released"] == 128 and "122" in released["input"]["released"]
    source = released["input"]["source"]
    assert "TextDatasetForNextSentencePrediction" in source and "3.3.1" in source and "only" in source


def test_ulr_electra_shows_its_masked_lm_term_as_a_choice():
    found = rows("paper-en")
    for key in (("ulr_t2", "ULR-ELECTRA_BASE"), ("ulr_t2", "ULR-ELECTRA_LARGE"), ("ulr_t8", "ULR-ELECTRA")):
        (choice,) = [c for c in found[key]["choices"] if c["key"] == "mlm_term"]
        assert choice["ours"].startswith("the generator's MLM + 50 × replaced-token detection"), choice
        assert choice["ours"].endswith("w scored by the generator's MLM head"), choice
        assert "no MLM head" in choice["why"] and "ElectraCombineModel" in choice["why"]
        assert "BertForMaskedLM" in choice["alternative"]
    # a BERT or ALBERT row has a masked-LM head of its own: no such choice
    for key in (("ulr_t8", "ULR-BERT"), ("ulr_t8", "ULR-ALBERT")):
        assert "mlm_term" not in found[key]["settings"], key


def test_the_glue_pooler_knows_the_architecture_and_lists_the_discarded_pair_head():
    found = rows("paper-en")
    (electra,) = [c for c in found[("ulr_t8", "ULR-ELECTRA")]["choices"] if c["key"] == "glue_pooler"]
    assert (
        electra["ours"].startswith("none: ELECTRA has no pooler")
        and "ElectraForSequenceClassification" in (electra["why"])
    )
    (bert,) = [c for c in found[("ulr_t8", "ULR-BERT")]["choices"] if c["key"] == "glue_pooler"]
    assert bert["ours"].startswith("MiSAD's trained pooler")
    for row in ("NSP-BERT", "SOP-BERT"):
        record = found[("ulr_t5", row)]
        (pooler,) = [d for d in record["deviations"] if d["key"] == "glue_pooler"]
        assert pooler["ours"] == record["settings"]["glue_pooler"] and "not exported" in pooler["ours"]
        assert "run_nsp.py" in pooler["paper"] and "discards the trained pair head" in pooler["why"]
    mlm = found[("ulr_t5", "MLM-BERT")]
    assert not [d for d in mlm["deviations"] if d["key"] == "glue_pooler"]
    text = markdown(list(plan("paper-en")), "test")
    assert "- glue_pooler: export keeps the encoder" in text


def test_bilstm_max_at_1024_is_planned_for_the_parameter_comparison():
    """BF §3.4 compares the 600-d BF encoders with a 1024-d BiLSTM-Max: planned at 512 units a direction,
    and no other pooling trained at that size (bilstm.extra, beside the poolings x sizes grid)."""
    (record,) = [r for r in plan("paper-en") if r.get("label") == "bilstm-max-1024"]
    assert (record["source"], record["row"], record["settings"]["hidden"]) == ("bf_t2", "BiLSTM-Max", 512)
    assert record["targets"] == ["results/paper-en/bilstm/bilstm-max-1024"] and record["gpu_hours"] > 0
    planner = Planner(config("paper-en"), "h100", 0.4)
    trained = {f"bilstm-{p}-{2 * s}" for p, s in planner.bilstm_models()}
    assert {label for label in trained if label.endswith("-1024")} == {"bilstm-max-1024"}
    bf_rows = [r for r in plan("paper-en") if r["source"] == "bf_t2" and r["row"] == "BiLSTM-Max"]
    assert [r["status"] for r in bf_rows] == ["planned"] * 3


def test_the_tables_no_run_can_make_are_listed_with_their_reasons(cli, capsys):
    assert cli("plan", "--configfile", REPO / "workflow/config/paper-en.yaml", "--format", "json") == 0
    tables = {(t["paper"], t["table"]): t for t in json.loads(capsys.readouterr().out)["not_reproduced"]}
    assert set(tables) == {("BURT", "Table XI")}  # BURT Table VII and ALBURT Table 5: evaluate analogy_examples
    assert tables[("BURT", "Table XI")]["reason"].startswith("human judgement of generation")
    assert all(t["status"] == "not reproduced" for t in tables.values())
    assert cli("plan", "--configfile", REPO / "workflow/config/paper-zh.yaml") == 0
    text = capsys.readouterr().out
    assert "| BURT | Table XI | (every row) | not reproduced | human judgement of generation" in text


def test_the_workflow_makes_the_bilstm_the_plan_plans():
    """The plan's target for BiLSTM-Max 1024 is a job of paper-en's workflow (bilstm.smk BILSTM_MODELS reads
    bilstm.extra as the plan does), with its own pooling and units."""
    from test_workflow_config import snakemake

    (record,) = [r for r in plan("paper-en") if r.get("label") == "bilstm-max-1024"]
    result = snakemake(*record["targets"], "--configfile", "workflow/config/paper-en.yaml")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "--pooling max --hidden 512" in result.stdout and "wildcards: label=bilstm-max-1024" in result.stdout
