"""Live training curves (pipeline/tracking.py): the step log mirrored to TensorBoard, or to nothing."""

from __future__ import annotations

import argparse

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from pipeline import tracking
from pipeline.errors import InputError


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    tracking.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_step_records_become_tensorboard_scalars(tmp_path, monkeypatch):
    monkeypatch.delenv(tracking.ENV, raising=False)
    args = parsed("--tracking-dir", str(tmp_path / "tb"))
    with tracking.Tracker(args, "tiny+mlm") as tracker:
        for step in (1, 2, 3):
            record = {"step": step, "loss": 2.0 / step, "lr": 1e-4, "heldout": {"accuracy": 0.1 * step}, "note": "x"}
            tracker.log(record, step)
        tracker.log({"loss": float("nan"), "padding_share": None}, 4)  # nothing finite: nothing logged
    events = EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    assert set(events.Tags()["scalars"]) == {"loss", "lr", "heldout/accuracy"}
    assert [(e.step, round(e.value, 4)) for e in events.Scalars("loss")] == [(1, 2.0), (2, 1.0), (3, 0.6667)]
    assert [round(e.value, 4) for e in events.Scalars("heldout/accuracy")] == [0.1, 0.2, 0.3]


def test_none_and_the_environment_variable(tmp_path, monkeypatch):
    monkeypatch.setenv(tracking.ENV, "none")
    args = parsed("--tracking-dir", str(tmp_path / "tb"))  # the flag says tensorboard, the variable wins
    with tracking.Tracker(args, "run") as tracker:
        tracker.log({"loss": 1.0}, 1)
    assert not (tmp_path / "tb").exists()
    assert tracking.trainer_report_to(args) == []
    monkeypatch.setenv(tracking.ENV, "comet")
    with pytest.raises(InputError, match="unknown tracker 'comet'"):
        tracking.backend("tensorboard")


def test_trainer_stages_write_tensorboard_through_their_callback(tmp_path, monkeypatch):
    """finetune and classify: wandb / mlflow go to the Trainer's report_to, TensorBoard to a callback that
    names the scalars as the Trainer's own does (train/loss, eval/<metric>)."""
    from transformers import TrainerControl, TrainerState

    monkeypatch.delenv(tracking.ENV, raising=False)
    args = parsed("--tracking-dir", str(tmp_path / "tb"))
    assert tracking.trainer_report_to(args) == []
    assert tracking.trainer_callbacks(parsed()) == []  # no folder given: nothing written
    [curves] = tracking.trainer_callbacks(args)
    state = TrainerState()
    for step in (1, 2):
        state.global_step = step
        curves.on_log(args, state, TrainerControl(), logs={"loss": 1.0 / step, "eval_spearman": 0.5, "note": "x"})
    curves.on_train_end(args, state, TrainerControl())
    events = EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    assert set(events.Tags()["scalars"]) == {"train/loss", "eval/spearman"}
    assert [(e.step, e.value) for e in events.Scalars("train/loss")] == [(1, 1.0), (2, 0.5)]
    monkeypatch.setenv(tracking.ENV, "wandb")
    assert tracking.trainer_report_to(args) == ["wandb"] and tracking.trainer_callbacks(args) == []
