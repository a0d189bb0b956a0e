"""Issue 55 §1 and §2, resume saves of fused fine-tuning (pipeline/classify/fused_resume.py):

- the save's temporary was a fixed name (``.resume/fused-seeds0-1.pt.tmp``): a link planted there made
  ``torch.save`` write through it into a user's file; a ``.resume`` that is a link to a user's folder lost
  the file there of a save's name. Both are refused in one line, exit 2, nothing touched;
- a save whose weights were changed (all +0.5, all zeros), whose step says finished over an early step's
  weights, or whose kept outcomes were edited, was resumed silently: each is set aside with one log line
  (its digest records other bytes), and the run ends as the unbroken run."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
import test_hostile_fused
import torch
from test_hostile_fused import EVERY, STEPS, _edit, _files, _job, _outcomes, _train, _weights

from pipeline.classify import fused_training

DIGEST = ".digest"
# the saves of test_hostile_fused.py's killed runs, and its unbroken runs to compare with, made here again
saves = test_hostile_fused.saves
kept = test_hostile_fused.kept


def _classify(cli, tiny_en, demo_root, out) -> int:
    """A fused job of 2 seeds that saves its state every 2 steps under out/.resume/fused-seeds0-1.pt."""
    args = ("--model", tiny_en, "--task", "sst2", "--data", demo_root, "--out", out, "--seeds", 2)
    return cli("classify", *args, "--max-steps", 4, "--batch-size", 8, "--fuse", 2, "--resume-every", 2)


def _refused(status: int, err: str, named: Path, fragment: str) -> None:
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2 and "Traceback" not in err and len(errors) == 1, err
    assert errors[0].startswith(f"error: {named}: ") and fragment in errors[0], errors[0]


def test_a_link_at_the_save_s_temporary_never_has_a_user_s_file_written(cli, tiny_en, demo_root, tmp_path, capsys):
    thesis = tmp_path / "thesis.txt"
    thesis.write_text("a year of work\n")
    out = tmp_path / "job"
    (out / ".resume").mkdir(parents=True)
    link = out / ".resume" / "fused-seeds0-1.pt.tmp"
    link.symlink_to(thesis)
    status = _classify(cli, tiny_en, demo_root, out)
    _refused(status, capsys.readouterr().err, link, "is a link in the run's resume folder")
    assert thesis.read_text() == "a year of work\n"
    assert sorted(p.name for p in out.rglob("*")) == [".resume", link.name]


def test_a_resume_folder_that_is_a_link_to_a_user_s_folder_loses_nothing(cli, tiny_en, demo_root, tmp_path, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    files = {"fused-seeds0-1.pt": "my own file of that name\n", "notes.txt": "notes\n"}
    for name, text in files.items():
        (mine / name).write_text(text)
    out = tmp_path / "job"
    out.mkdir()
    (out / ".resume").symlink_to(mine)
    status = _classify(cli, tiny_en, demo_root, out)
    _refused(status, capsys.readouterr().err, out / ".resume", "is a link: a run keeps its resume saves only")
    assert {p.name: p.read_text() for p in mine.iterdir()} == files
    assert [p.name for p in out.iterdir()] == [".resume"]


def test_a_resume_folder_that_is_a_file_is_refused(cli, tiny_en, demo_root, tmp_path, capsys):
    out = tmp_path / "job"
    out.mkdir()
    (out / ".resume").write_text("mine\n")
    status = _classify(cli, tiny_en, demo_root, out)
    _refused(status, capsys.readouterr().err, out / ".resume", "is not a folder")
    assert (out / ".resume").read_text() == "mine\n"


def _all_params(change):
    def edited(state):
        for name, value in state["params"].items():
            state["params"][name] = change(value)

    return edited


def _finished_over_early_weights(state):
    state["step"] = state["optimiser"]["step"] = STEPS  # a step of 8 over step 3's weights and moments


@pytest.mark.parametrize(
    "change, digest, said",
    [
        (_edit(_all_params(lambda value: value + 0.5)), True, "its bytes are not those its digest"),
        (_edit(_all_params(torch.zeros_like)), True, "its bytes are not those its digest"),
        (_edit(_finished_over_early_weights), True, "its bytes are not those its digest"),
        (None, False, "it has no digest"),
    ],
    ids=["weights-plus-half", "weights-zeroed", "finished-step-over-early-weights", "no-digest"],
)
def test_a_save_changed_since_it_was_written_is_set_aside(saves, demo_root, tmp_path, caplog, change, digest, said):
    """The weights and step of a save pass every check of their kind and range: only its digest tells that
    they are not what the run saved. One line names the file, and the run ends as the unbroken run."""
    path, trainers, losses = _resume_from(saves, demo_root, tmp_path, caplog, change, digest)
    lines = [record.getMessage() for record in caplog.records if str(path) in record.getMessage()]
    assert len(lines) == 1 and said in lines[0] and lines[0].endswith("starting afresh"), lines
    assert "resuming" not in caplog.text
    _assert_unbroken(saves, trainers, losses)


def _resume_from(saves, demo_root, tmp_path, caplog, change=None, digest=True):
    """Train the saved group from a copy of its killed run's save (with its digest, unless not; ``change``
    applied to the copy): ``(the copy's path, the members' trainers, their losses)``."""
    task, config, members, found = saves
    path = tmp_path / ".resume" / "fused.pt"
    path.parent.mkdir()
    shutil.copy(found["all"], path)
    if digest:
        shutil.copy(found["all"].with_name(found["all"].name + DIGEST), path.with_name(path.name + DIGEST))
    if change:
        change(path)
    tokenizer, train = _train(task, demo_root, members[0].model_path, config, 0)
    caplog.set_level("INFO")
    with tempfile.TemporaryDirectory() as scratch:
        resume = fused_training.Resume(path, EVERY)
        trainers, _, losses, _ = fused_training.train_members(
            task, members, tokenizer, train, config, scratch, resume=resume
        )
    return path, trainers, losses


def _assert_unbroken(saves, trainers, losses) -> None:
    """The members ended with the losses and weights of the run never killed, to the bit."""
    weights, unbroken_losses = saves[3]["unbroken"]
    assert losses == unbroken_losses
    for got, want in zip(_weights(trainers), weights):
        assert all(torch.equal(got[name], want[name]) for name in want)


def test_an_unchanged_save_with_its_digest_is_resumed(saves, demo_root, tmp_path, caplog):
    """The control: the same save, untouched, is resumed at its step and ends as the unbroken run."""
    path, trainers, losses = _resume_from(saves, demo_root, tmp_path, caplog)
    assert f"at step 3 from {path}" in caplog.text
    _assert_unbroken(saves, trainers, losses)


def _better_metrics(outcomes):
    outcomes[0]["sets"]["dev"]["metrics"] = {key: 1.0 for key in outcomes[0]["sets"]["dev"]["metrics"]}


def _flipped_predictions(outcomes):
    predictions = outcomes[1]["sets"]["dev"]["predictions"]
    flipped = {"0": "1", "1": "0", 0: 1, 1: 0}  # SST-2's labels, as predictions keep them
    outcomes[1]["sets"]["dev"]["predictions"] = [flipped.get(p, p) for p in predictions]


@pytest.mark.parametrize(
    "change", [_outcomes(_better_metrics), _outcomes(_flipped_predictions)], ids=["metrics", "predictions"]
)
def test_kept_outcomes_edited_since_are_set_aside(cli, tiny_en, demo_root, kept, tmp_path, caplog, change):
    """Kept outcomes whose metrics or predictions were edited (every one still of its kind and count) are set
    aside with one line naming the file: the stack trains again, and the job's files are the unbroken job's."""
    out = tmp_path / "job"
    shutil.copytree(kept / "killed", out)
    done = out / ".resume" / "fused-seeds0-1.done.json"
    before = json.loads(done.read_text(encoding="utf-8"))
    change(done)
    assert json.loads(done.read_text(encoding="utf-8")) != before
    caplog.set_level("INFO")
    assert cli(*("classify", *_job(tiny_en, demo_root, out, 16))) == 0
    lines = [record.getMessage() for record in caplog.records if str(done) in record.getMessage()]
    assert len(lines) == 1 and "its bytes are not those its digest" in lines[0], lines
    assert "finished in an earlier try" not in caplog.text
    assert not (out / ".resume").exists()
    assert _files(out) == _files(kept / "unbroken-16")
