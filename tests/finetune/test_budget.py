"""Fine-tuning budgets in the papers' unit: ``--epochs`` passes over the NLI data, the last step kept.

ALBURT §3 trains the twin structure "for 2 epochs", SBERT one; with a fixed step count instead,
Table 4's NLI-only row would see twice the NLI data of NLI+PI+PTC (NLI takes every second batch).
"""

from __future__ import annotations

import json

import pytest
from finetune_builders import NLI_TRAIN, PPDB
from hostile import assert_clean_failure
from testdata import DEMO_DATA

from pipeline.finetune.recipes import steps_per_epoch
from pipeline.tasks import nli

NLI_PAIRS = len(NLI_TRAIN.read_text().splitlines())  # 60 labelled pairs in the demo fixture


def columns(*tasks: str, size: int = 100) -> dict:
    return {task: {"sentence1": ["a"] * size, "sentence2": ["b"] * size, "label": [0] * size} for task in tasks}


def test_an_epoch_is_one_pass_over_the_nli_batches():
    assert steps_per_epoch("sbert-nli", columns("nli"), 8) == 12
    assert steps_per_epoch("nli-mnrl", columns("nli"), 8) == 12
    assert steps_per_epoch("twin", columns("nli"), 8) == 12
    # NLI every second batch: the pass over NLI takes twice the steps, whatever PPDB tasks join
    assert steps_per_epoch("twin", columns("nli", "pi"), 8) == 24
    assert steps_per_epoch("twin", columns("nli", "pi", "ptc"), 8) == 24


def finetune(cli, tiny_model, out, *options):
    argv = ["finetune", "--model", tiny_model, "--nli", NLI_TRAIN, "--batch-size", 8, "--lr", "1e-3"]
    return cli(*argv, "--max-length", 64, "--out", out, *options)


@pytest.mark.parametrize("objectives", ["nli", "nli+pi+ptc"])
def test_twin_ablation_rows_see_the_same_nli_data(cli, tiny_model, tmp_path, objectives):
    out = tmp_path / objectives
    options = ("--recipe", "twin", "--objectives", objectives, "--ppdb", PPDB, "--epochs", 1)
    assert finetune(cli, tiny_model, out, *options) == 0
    config = json.loads((out / "finetune_config.json").read_text())
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    nli_batches = len(nli.read_sources([str(NLI_TRAIN)])) // 8
    assert nli_batches == NLI_PAIRS // 8 == 7
    assert sum(entry["task"] == "nli" for entry in log if "task" in entry) == nli_batches
    assert config["max_steps"] == nli_batches * (1 if objectives == "nli" else 2)
    assert config["data"]["steps_per_epoch"] == config["max_steps"]


def test_fractional_epochs_round_up(cli, tiny_model, tmp_path):
    out = tmp_path / "half"
    assert finetune(cli, tiny_model, out, "--recipe", "sbert-nli", "--epochs", 0.5) == 0
    assert json.loads((out / "finetune_config.json").read_text())["max_steps"] == 4  # ceil(7 / 2)


def test_without_selection_the_last_step_is_kept(cli, tiny_model, tmp_path):
    """Evaluations are logged, but no checkpoint is selected: the papers train a fixed schedule."""
    out = tmp_path / "last"
    evaluation = ("--eval-data", DEMO_DATA, "--eval-steps", 2, "--eval-tasks", "stsb-dev")
    assert finetune(cli, tiny_model, out, "--recipe", "sbert-nli", "--max-steps", 4, *evaluation) == 0
    config = json.loads((out / "finetune_config.json").read_text())
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert [entry["step"] for entry in log if "eval" in entry] == [2, 4]
    assert config["select_best"] is False
    assert config["best_checkpoint_step"] is None


@pytest.mark.parametrize(
    "options, named",
    [
        (("--max-steps", 4, "--epochs", 1), "--epochs"),
        (("--max-steps", 4, "--select-best"), "--select-best"),
        (("--epochs", 0), "--epochs"),
    ],
)
def test_budget_options_are_checked_before_any_work(cli, capsys, tiny_model, tmp_path, options, named):
    out = tmp_path / "refused"
    status = cli("finetune", "--model", tiny_model, "--recipe", "sbert-nli", "--nli", NLI_TRAIN, "--out", out, *options)
    assert_clean_failure(status, capsys.readouterr().err, named, out)
