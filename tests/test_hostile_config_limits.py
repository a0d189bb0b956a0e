"""Bounds that hold at every size (docs/behaviour.md): counts past any machine's reach, names longer than a
file name, presets that no objective reads, a model FLOPs utilisation that makes GPU-hours infinite, and a
setting recorded for an objective it does nothing for. Each is one line, exit 2, before any work."""

from __future__ import annotations

import pytest
from test_hostile_config_bounds import assert_one_line, demo_with, plan
from test_workflow_config import SCHEMA

from pipeline.objective_registry import NGRAM_OBJECTIVES


def integers_without_a_bound(node, where: str = "") -> list[str]:
    found = []
    if isinstance(node, dict):
        integer = node.get("type") == "integer" or "integer" in (node.get("type") or [])
        if integer and "maximum" not in node and "exclusiveMaximum" not in node:
            found.append(where)
        for key, value in node.items():
            found += integers_without_a_bound(value, f"{where}/{key}")
    elif isinstance(node, list):
        for k, value in enumerate(node):
            found += integers_without_a_bound(value, f"{where}/{k}")
    return found


def test_every_count_of_the_schema_has_a_bound():
    assert integers_without_a_bound(SCHEMA) == []


# (the demo's line to replace, its replacement, what the error names)
CASES = [
    ("  max_steps: 30", "  max_steps: " + str(10**400), "pretrain.max_steps"),
    ("  batch_size: 16", "  batch_size: " + str(10**18), "pretrain.batch_size"),
    ("run: demo", "run: " + "r" * 300, "run: 300 characters, longer than 64"),
    ("    tiny: tiny  #", "    " + "b" * 300 + ": tiny", "models.backbones"),
    ("  presets: {burt: burt}", "  presets: {mlm: burt}", "ngrams.presets"),
    ("  presets: {burt: burt}", "  presets: {brut: burt}", "ngrams.presets"),
]


@pytest.mark.parametrize("old, new, key", CASES, ids=[f"{key}: {new.strip()[:40]}" for _, new, key in CASES])
def test_a_value_past_its_bound_is_one_line_from_plan(tmp_path, old, new, key):
    config = tmp_path / "config.yaml"
    config.write_text(demo_with(old, new), encoding="utf-8")
    assert_one_line(plan(config), str(config), key)


def test_the_presets_keys_are_the_objectives_that_read_ngrams():
    ngrams = SCHEMA["properties"]["ngrams"]["properties"]["presets"]
    assert ngrams["propertyNames"]["enum"] == list(NGRAM_OBJECTIVES)


@pytest.mark.parametrize("mfu", ["1e-320", "0.0009"])
def test_plan_mfu_that_makes_gpu_hours_infinite_is_refused(tmp_path, cli, capsys, mfu):
    status = cli("plan", "--configfile", "workflow/config/demo.yaml", "--mfu", mfu)
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2 and "Traceback" not in err and len(errors) == 1, err
    assert "argument --mfu" in errors[0] and mfu in errors[0], errors[0]


@pytest.mark.parametrize("objective", ["mlm", "sop"])
def test_misad_loss_released_on_an_objective_without_misad_is_refused(tmp_path, monkeypatch, cli, capsys, objective):
    """Refused before any file is opened (the required files do not exist: a later refusal would name them)."""
    monkeypatch.chdir(tmp_path)
    status = cli(
        "pretrain",
        "--data",
        "x.parquet",
        "--model",
        "m",
        "--objective",
        objective,
        "--out",
        "o",
        "--misad-loss",
        "released",
    )
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2 and "Traceback" not in err and len(errors) == 1, err
    assert errors[0] == f"error: --misad-loss: released is MiSAD's loss (ULR-BERT §3.2); {objective} has none"
    assert list(tmp_path.iterdir()) == []
