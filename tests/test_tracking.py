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


def test_trainer_stages_hand_tensorboard_its_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(tracking.ENV, raising=False)
    monkeypatch.delenv("TENSORBOARD_LOGGING_DIR", raising=False)
    args = parsed("--tracking-dir", str(tmp_path / "tb"))
    assert tracking.trainer_report_to(args) == ["tensorboard"]
    import os

    assert os.environ["TENSORBOARD_LOGGING_DIR"] == str(tmp_path / "tb")
    assert tracking.trainer_report_to(parsed()) == []  # no folder given: nothing written
