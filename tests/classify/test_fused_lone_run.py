"""A run's numbers do not depend on which runs share its job (issue 54 §4; docs/stages/classify.md, "Fused seeds").

With fusing on (``--fuse K``, K above 1), every group of a job trains through the fused path, a group of one
included: the run draws its own key's dropout masks and its own seeded sampler's batches, as in any stack.
Dropout on (the stage's 0.1) throughout: with it off the fused path and the solo path give one run anyway."""

from __future__ import annotations

import argparse
import json

import pytest
import torch
from test_fused_architectures import with_config
from test_fused_training import Killed, kill_at_step, settings

from pipeline.classify import classify, fused_training, tasks

COMMON = ("--task", "sst2", "--seeds", 1, "--seed-dirs", "--max-steps", 6, "--batch-size", 8, "--lr", "1e-3")
COMMON += ("--eval-batch-size", 32, "--no-test", "--report-to", "none")


def seed_record(folder, seed=0) -> dict:
    return json.loads((folder / f"seed{seed}" / "metrics.json").read_text(encoding="utf-8"))


def test_a_run_alone_in_its_job_is_the_run_it_is_in_a_stack(cli, tiny_en, demo_root, tmp_path):
    """Seed 0 of the tiny model at one setting, --fuse 2: (a) the one run of its job, (b) stacked with seed 1,
    (c) in a job with a model of another config (its activation), which leaves it a group of one. All three
    end with the same training loss (to 1e-6, as a member alone and in a stack of 3 do:
    test_fused_architectures.py) and the same dev metrics. Before, (a) and (c) trained through
    training.run_seed with torch's own masks, another run than (b)'s."""
    relu = with_config(tiny_en, tmp_path / "relu", hidden_act="relu")
    data = ("--data", demo_root, "--fuse", 2)
    assert cli("classify", *COMMON, *data, "--model", tiny_en, "--out", tmp_path / "alone") == 0
    assert cli("classify", *COMMON, *data, "--model", tiny_en, "--out", tmp_path / "pair", "--seeds", 2) == 0
    beside = ("--model", tiny_en, "--out", tmp_path / "beside", "--model", relu, "--out", tmp_path / "relu-out")
    assert cli("classify", *COMMON, *data, *beside) == 0
    assert cli("classify", *COMMON, "--data", demo_root, "--model", tiny_en, "--out", tmp_path / "solo") == 0
    runs = {name: seed_record(tmp_path / name) for name in ("alone", "pair", "beside", "solo")}
    seeds = {name: record["per_seed"]["0"] for name, record in runs.items()}
    print({name: f"{seed['train_loss']:.8f}" for name, seed in seeds.items()})
    for name in ("alone", "beside"):
        assert abs(seeds[name]["train_loss"] - seeds["pair"]["train_loss"]) < 1e-6, name
        assert seeds[name]["dev"] == seeds["pair"]["dev"], name
        # the tokens it processed are the work its stack did: a stack of two pads to its longer member's batch
        assert seeds[name]["processed_tokens"] == seeds["solo"]["processed_tokens"], name
    # the solo path (--fuse 1) draws torch's masks: another run of the same distribution
    assert abs(seeds["solo"]["train_loss"] - seeds["pair"]["train_loss"]) > 1e-4
    # each record says which path the run took: a stack (of one, or of two), or solo (null)
    one = {"model": "tiny-en", "seed": 0}
    assert runs["alone"]["provenance"]["stacks"] == {"0": {"index": 0, "of": 1, "runs": [one]}}
    assert runs["pair"]["provenance"]["stacks"]["0"]["runs"] == [one, {"model": "tiny-en", "seed": 1}]
    assert runs["beside"]["provenance"]["stacks"] == {"0": {"index": 0, "of": 2, "runs": [one]}}
    assert runs["solo"]["provenance"]["stacks"] == {"0": None}


def test_fusing_on_or_off_is_the_jobs_not_its_groups(tiny_en):
    """One run at --fuse 2 is a stack of one; at --fuse 1, or with live curves in wandb or mlflow (one run at
    a time), the job's runs train solo, whatever their number."""
    task = tasks.TASKS["sst2"]
    config = settings(task, dropout=0.1)

    def groups(fuse, report_to="none", runs=((0, 0),)):
        args = argparse.Namespace(fuse=fuse, report_to=report_to, tracking_dir=None)
        return classify.run_groups(task, list(runs), [str(tiny_en)], config, args)

    assert groups(2) == classify.fused_stacks.JobGroups(stacks=[[(0, 0)]], solo=[])
    assert groups(2, runs=((0, 0), (0, 1), (0, 2))).stacks == [[(0, 0), (0, 1)], [(0, 2)]]
    assert groups(1) == classify.fused_stacks.JobGroups(stacks=[], solo=[(0, 0)])
    assert groups(4, "wandb", ((0, 0), (0, 1))) == classify.fused_stacks.JobGroups(stacks=[], solo=[(0, 0), (0, 1)])


def test_a_killed_stack_of_one_resumes_to_the_unbroken_run(cli, tiny_en, demo_root, tmp_path, monkeypatch):
    """--resume-every goes with --fuse K above 1, not with the group's size: a one-run job at --fuse 2 saves
    its stack of one, and killed after step 3 it goes on from its save at step 2 to the unbroken job's files."""
    job = (*COMMON, "--data", demo_root, "--model", tiny_en, "--fuse", 2, "--resume-every", 2)
    assert cli("classify", *job, "--out", tmp_path / "unbroken") == 0
    schedule = fused_training.linear_warmup  # restored for the resumed run
    kill_at_step(monkeypatch, 3)
    with pytest.raises(Killed):
        cli("classify", *job, "--out", tmp_path / "killed")
    save = tmp_path / "killed" / ".resume" / "fused-seeds0-0.pt"
    assert torch.load(save, weights_only=True)["step"] == 2
    steps = []

    def counted(step, warmup, total):
        steps.append(step)
        return schedule(step, warmup, total)

    monkeypatch.setattr(fused_training, "linear_warmup", counted)
    assert cli("classify", *job, "--out", tmp_path / "killed") == 0
    assert steps == [2, 3, 4, 5]  # only the steps after the save
    assert not (tmp_path / "killed" / ".resume").exists()
    unbroken, resumed = seed_record(tmp_path / "unbroken"), seed_record(tmp_path / "killed")
    assert resumed["per_seed"] == unbroken["per_seed"]
    name = "seed0/dev_predictions.seed0.tsv"
    assert (tmp_path / "killed" / name).read_text() == (tmp_path / "unbroken" / name).read_text()
