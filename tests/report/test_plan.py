"""The plan (pipeline/report/plan.py): every published row of the paper configs, against its paper."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
import yaml

from pipeline.report.plan import Planner, resolve_config

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = yaml.safe_load((REPO / "pipeline/report/published.yaml").read_text())
PAPER_CONFIGS = ["paper-en", "paper-zh"]


@cache
def plan(name: str) -> tuple[dict, ...]:
    return tuple(Planner(resolve_config(REPO / f"workflow/config/{name}.yaml"), "h100", 0.4).records())


@pytest.mark.parametrize("name", PAPER_CONFIGS)
def test_every_published_row_has_a_record(name):
    records = plan(name)
    expected = [(sid, row["name"]) for sid, source in PUBLISHED["sources"].items() for row in source["rows"]]
    assert [(r["source"], r["row"]) for r in records] == expected
    for record in records:
        assert record["status"] in ("planned", "quoted", "not planned", "not mapped"), record
        assert record["status"] == "planned" or record["reason"], record


@pytest.mark.parametrize("name", PAPER_CONFIGS)
def test_settings_equal_the_papers_or_the_deviation_says_why(name):
    for record in plan(name):
        if record["status"] != "planned":
            continue
        blocks = [record, record.get("downstream", {})]
        for block in blocks:
            paper = block.get("paper_settings", {})
            listed = {d["key"].split(".")[-1] for d in block.get("deviations", [])}
            for key, value in paper.items():
                if key == "section" or key not in block["settings"]:
                    continue
                ours = block["settings"][key]
                assert key in listed or ours == value or (isinstance(value, list) and ours in value), (
                    f"{record['row']} ({record['table']}): {key} {ours} vs the paper's {value}"
                )
            for deviation in block.get("deviations", []):
                assert deviation["why"], f"{record['row']} ({record['table']}): {deviation} has no reason"


@pytest.mark.parametrize("name", PAPER_CONFIGS)
def test_compared_objectives_get_equal_updates(name):
    """A table compares its pre-trained rows at the same number of updates (ULR-BERT §7.1)."""
    by_table: dict[str, set] = {}
    for record in plan(name):
        settings = record.get("settings", {})
        if record["status"] == "planned" and "objective" in settings and settings["updates"] is not None:
            by_table.setdefault(record["source"], set()).add(settings["updates"])
    assert by_table, "no planned pre-training rows"
    for source, updates in by_table.items():
        assert len(updates) == 1, f"{source}: updates {sorted(updates)}"


def test_paper_en_plans_each_papers_pretraining_its_way():
    records = {(r["source"], r["row"]): r for r in plan("paper-en")}
    ulr = records[("ulr_t5", "ULR-BERT")]
    burt = records[("burt_t6", "BURT-base")]
    assert ulr["label"] == "bert-base-uncased+misad" and burt["label"] == "bert-base-uncased+burt.packed"
    assert (ulr["settings"]["input"], ulr["settings"]["max_length"], ulr["settings"]["batch_size"]) == (
        "sentences",
        128,
        64,
    )
    assert (burt["settings"]["input"], burt["settings"]["max_length"], burt["settings"]["batch_size"]) == (
        "packed",
        512,
        16,
    )
    assert burt["settings"]["ngram_preset"] == "burt" and ulr["settings"]["ngram_preset"] == "ulr"
    # the MLM baseline of each paper is that paper's run
    assert records[("ulr_t5", "MLM-BERT")]["label"] == "bert-base-uncased+mlm"
    assert records[("burt_t6", "MLM [BERT-base]")]["label"] == "bert-base-uncased+mlm.packed"
    # Table 7's rows are MiSAD variants (ULR-BERT §7.2), not other MLM objectives
    assert records[("ulr_t7", "Random Spans")]["label"] == "bert-base-uncased+misad-span"
    assert records[("ulr_t7", "Named Entities")]["label"] == "bert-base-uncased+misad-entity"
    # 10M sentences less the 10,000 held out, of 28.6 tokens, an epoch at batch 64; GPU-hours at 40% of an H100
    assert ulr["settings"]["updates"] == 156_094 and ulr["settings"]["tokens"] == 285_714_000
    assert [d["key"] for d in ulr["deviations"]] == ["examples"]
    # NSP / SOP pair every sampled sentence with its next one (sample --with-next): the same updates
    for row in ("NSP-BERT", "SOP-BERT"):
        pair = records[("ulr_t5", row)]
        assert pair["settings"]["updates"] == 156_094 and pair["deviations"] == ulr["deviations"], pair
    # (5.6% of the processed tokens padding under length-grouped batching)
    hours = 285_714_000 / (1 - 0.056) * 664_409_088 / (989.4e12 * 0.4) / 3600
    assert records[("ulr_t5", "MLM-BERT")]["gpu_hours"] == pytest.approx(hours)


@pytest.mark.parametrize("name", PAPER_CONFIGS)
def test_no_row_uses_a_model_other_than_its_papers(name):
    settings = yaml.safe_load((REPO / "pipeline/report/paper_settings.yaml").read_text())["rows"]
    for record in plan(name):
        if record["status"] != "planned" or "objective" not in record["settings"]:
            continue
        named = settings[record["source"]]["made_by"][record["row"]]
        assert record["settings"]["backbone"] == named["backbone"], record
        assert record["settings"]["objective"] == named["pretrain"], record


def test_cli_prints_json_and_markdown(cli, tmp_path, capsys):
    assert cli("plan", "--configfile", REPO / "workflow/config/paper-en.yaml", "--format", "json") == 0
    data = json.loads(capsys.readouterr().out)
    assert "6N + 12·L·H·T" in data["assumption"] and len(data["rows"]) == sum(
        len(source["rows"]) for source in PUBLISHED["sources"].values()
    )
    out = tmp_path / "plan.md"
    assert cli("plan", "--configfile", REPO / "workflow/config/paper-zh.yaml", "--out", out) == 0
    assert "| BURT | Table V | BURT | planned | bert-base-chinese+burt |" in out.read_text()


def test_a_bad_config_is_one_line(cli, tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("run: x\npretrain: {batch_size: 0}\n")
    assert cli("plan", "--configfile", bad) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(bad) in err and "Traceback" not in err


def test_glue_grid_hours_by_hand():
    """paper-en's GLUE for one model: 8 tasks x 4 batch sizes x 5 seeds x 3 epochs, every example at 128."""
    record = next(r for r in plan("paper-en") if r["source"] == "ulr_t5" and r["row"] == "BERT")
    examples = 8551 + 67349 + 3668 + 5749 + 363846 + 392702 + 104743 + 2490
    hours = 5 * 4 * examples * 3 * 128 * 664_409_088 / (989.4e12 * 0.4) / 3600
    assert record["downstream"]["gpu_hours"] == pytest.approx(hours)


def test_budget_counts_each_job_once():
    from pipeline.report.plan import budget

    records = list(plan("paper-en"))
    total = budget(records)
    glue = {r["label"]: r["downstream"]["gpu_hours"] for r in records if r.get("downstream", {}).get("gpu_hours")}
    config = yaml.safe_load((REPO / "workflow/config/paper-en.yaml").read_text())
    # every classify.glue.models entry of paper-en once, however many tables print it
    assert sorted(glue) == sorted(config["classify"]["glue"]["models"])
    assert total["by_rule"]["classify glue"] == pytest.approx(sum(glue.values()))
    # BERT-large's grid costs about 3x BERT-base's (its FLOPs per token)
    assert 2.5 < glue["bert-large-uncased"] / glue["bert-base-uncased"] < 3.5
    assert total["total"] == pytest.approx(sum(total["by_rule"].values()))


def test_bilstm_rows_are_the_rows_pooling_at_their_dimension():
    """Paper 004's Table 2 names a pooling and the sentence dimension (two directions) per row."""
    rows = {r["name"]: r for r in PUBLISHED["sources"]["bf_t2"]["rows"]}
    planned = [r for r in plan("paper-en") if r["source"] == "bf_t2" and r["status"] == "planned"]
    assert {r["label"] for r in planned} == {
        f"bilstm-{p}-{d}" for p in ("max", "bf-attention", "bf-combined") for d in (600, 4096)
    } | {"bilstm-bf-balanced-600"}
    for record in planned:
        assert record["label"].startswith(f"bilstm-{rows[record['row']]['pooling']}-")
        assert record["settings"]["hidden"] * 2 == int(record["label"].rsplit("-", 1)[1])
        assert record["deviations"] == [] and record["targets"] == [f"results/paper-en/bilstm/{record['label']}"]
