"""Live curves on hostile ground (pipeline/tracking.py): a tracker whose library is not installed, and a
full disk under the TensorBoard folder. One line, exit 2, nothing built (docs/behaviour.md)."""

from __future__ import annotations

import argparse
import sys
import threading

import pytest
from hostile import assert_clean_failure, file_size_limit

from pipeline import tracking
from pipeline.errors import InputError

# the four training stages, with required arguments naming files that do not exist: the tracker is
# refused before any of them is opened (a stage that got further would name a file, not the tracker)
STAGES = {
    "pretrain": ["--data", "x.parquet", "--model", "m", "--objective", "mlm", "--out", "o"],
    "finetune": ["--model", "m", "--recipe", "twin", "--nli", "n.jsonl", "--out", "o", "--max-steps", "1"],
    "classify": ["--model", "m", "--task", "sst2", "--data", "d", "--out", "o"],
    "bilstm": ["--train", "t.jsonl", "--vectors", "v.bin", "--pooling", "max", "--metrics", "x.json", "--out", "o"],
}
CASES = [(stage, tracker) for stage in STAGES for tracker in ("wandb", "mlflow")]


@pytest.mark.parametrize("stage, tracker", CASES, ids=[f"{s} {t}" for s, t in CASES])
def test_a_tracker_that_is_not_installed_is_refused_before_anything(tmp_path, monkeypatch, cli, capsys, stage, tracker):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(tracking.ENV, tracker)
    monkeypatch.setitem(sys.modules, tracker, None)  # not installed, whatever this machine has
    status = cli(stage, *STAGES[stage])
    assert_clean_failure(status, capsys.readouterr().err, "$ULR_REPORT_TO", tmp_path / "o", f"pip install {tracker}")
    assert list(tmp_path.iterdir()) == []


def test_a_tracker_that_is_not_installed_builds_no_work_folder(tokens_en, tiny_en, tmp_path, monkeypatch, cli, capsys):
    """With real inputs, pretrain stops before its hidden work folder (``.m.work``) exists."""
    monkeypatch.setenv(tracking.ENV, "wandb")
    monkeypatch.setitem(sys.modules, "wandb", None)
    out = tmp_path / "m"
    status = cli(
        "pretrain", "--data", tokens_en, "--model", tiny_en, "--objective", "mlm", "--max-steps", 2, "--out", out
    )
    assert_clean_failure(status, capsys.readouterr().err, "$ULR_REPORT_TO", out, "tracking.report_to")
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_under_the_tensorboard_folder_names_that_folder(tmp_path, monkeypatch):
    """The event file's writes fail (``ulimit -f``, as on a full disk): one error naming the TensorBoard
    folder, raised in the training thread, and no thread's traceback."""
    monkeypatch.delenv(tracking.ENV, raising=False)
    board = tmp_path / "logs" / "tensorboard"
    args = argparse.Namespace(report_to="tensorboard", tracking_dir=board)
    crashed = []
    monkeypatch.setattr(threading, "excepthook", crashed.append)
    with pytest.raises(InputError) as caught, file_size_limit(300), tracking.Tracker(args, "tiny+mlm") as tracker:
        for step in range(1, 200):
            tracker.log({"loss": 1.0 / step, "lr": 1e-4, "heldout": {"accuracy": 0.5}}, step)
    assert caught.value.path == str(board), caught.value
    assert "TensorBoard folder" in str(caught.value) and "ulimit -f" in str(caught.value)
    assert crashed == []


def test_a_full_disk_under_a_trainer_stages_tensorboard_folder_names_that_folder(tmp_path, monkeypatch):
    """finetune and classify write their curves through :func:`tracking.trainer_callbacks`: the same one line."""
    from transformers import TrainerControl, TrainerState

    monkeypatch.delenv(tracking.ENV, raising=False)
    board = tmp_path / "logs" / "tensorboard" / "finetune"
    args = argparse.Namespace(report_to="tensorboard", tracking_dir=board)
    crashed = []
    monkeypatch.setattr(threading, "excepthook", crashed.append)
    [curves] = tracking.trainer_callbacks(args)
    state = TrainerState()
    with pytest.raises(InputError) as caught, file_size_limit(300):
        for step in range(1, 200):
            state.global_step = step
            curves.on_log(args, state, TrainerControl(), logs={"loss": 1.0 / step, "learning_rate": 1e-4})
    assert caught.value.path == str(board), caught.value
    assert crashed == []
