"""finetune --resume on a checkpoint it cannot honour: a file that is a link, a FIFO, a device or too
large; a set without the optimizer, schedule, random state or heads (the trainer would silently go
on without them, and end with other weights); a trainer state whose step is not its folder's or
lies outside the run. Each is one line naming the file (or the checkpoint), exit 2, nothing
written (docs/behaviour.md, "A resume continues the run it resumes, or is refused")."""

from __future__ import annotations

import json
import os
import shutil

import pytest
import torch
from finetune_builders import resume_arguments
from hostile import assert_clean_failure


def _link_to(target):
    def change(checkpoint, name):
        where = target(checkpoint) if callable(target) else target
        (checkpoint / name).unlink()
        (checkpoint / name).symlink_to(where)
        return checkpoint / name

    return change


def _outside_copy(checkpoint):
    """A regular file outside the checkpoint (another run's optimizer state, say)."""
    copy = checkpoint.parents[1] / "elsewhere.pt"
    shutil.copy(checkpoint / "optimizer.pt", copy)
    return copy


def _fifo(checkpoint, name):
    (checkpoint / name).unlink()
    os.mkfifo(checkpoint / name)
    return checkpoint / name


def _sparse_gigabyte(checkpoint, name):
    os.truncate(checkpoint / name, 1 << 30)  # a hole: no disk used, larger than the tiny model's bound
    return checkpoint / name


def _without(*names):
    def change(checkpoint, _):
        for name in names:
            (checkpoint / name).unlink()
        return checkpoint

    return change


def _state(**changes):
    def change(checkpoint, _):
        path = checkpoint / "trainer_state.json"
        state = json.loads(path.read_text())
        state.update(changes)
        path.write_text(json.dumps(state))
        return path

    return change


def _renamed_to_step(step):
    """A folder ``checkpoint-STEP`` whose state says STEP: consistent, but beyond the run's 4 steps."""

    def change(checkpoint, _):
        _state(global_step=step)(checkpoint, None)
        moved = checkpoint.with_name(f"checkpoint-{step}")
        checkpoint.rename(moved)
        return moved / "trainer_state.json"

    return change


def _folder_link(checkpoint, _):
    elsewhere = checkpoint.parents[1] / "elsewhere-checkpoint"
    checkpoint.rename(elsewhere)
    checkpoint.symlink_to(elsewhere, target_is_directory=True)
    return checkpoint


def _heads_without(task):
    def change(checkpoint, name):
        heads = torch.load(checkpoint / name, weights_only=True)
        torch.save({key: value for key, value in heads.items() if key != task}, checkpoint / name)
        return checkpoint / name

    return change


def _rewrite_weights(checkpoint, name, edit):
    from safetensors.torch import load_file, save_file

    weights = load_file(checkpoint / name)
    edit(weights)
    save_file(weights, checkpoint / name, metadata={"format": "pt"})
    return checkpoint / name


def _smaller_embeddings(checkpoint, name):
    def edit(weights):
        key = next(k for k in weights if k.endswith("word_embeddings.weight"))
        weights[key] = weights[key][:-10].clone()

    return _rewrite_weights(checkpoint, name, edit)


def _lacking_a_weight(checkpoint, name):
    return _rewrite_weights(checkpoint, name, lambda weights: weights.pop(max(weights)))


def _saved(value):
    def change(checkpoint, name):
        torch.save(value, checkpoint / name)
        return checkpoint

    return change


def _module_folder(folder):
    def change(checkpoint, _):
        path = checkpoint / "modules.json"
        modules = json.loads(path.read_text())
        modules[-1]["path"] = folder
        path.write_text(json.dumps(modules))
        return path

    return change


KINDS = {  # kind -> (change, the file changed, what the line says)
    "optimizer.pt a link to /dev/urandom": (_link_to("/dev/urandom"), "optimizer.pt", "is a link to /dev/urandom"),
    "optimizer.pt a link out of the checkpoint": (_link_to(_outside_copy), "optimizer.pt", "is a link"),
    "model.safetensors a link to /dev/zero": (_link_to("/dev/zero"), "model.safetensors", "is a link"),
    "rng_state.pth a FIFO": (_fifo, "rng_state.pth", "is a FIFO"),
    "scheduler.pt a sparse 1 GiB file": (_sparse_gigabyte, "scheduler.pt", "more than a checkpoint of this model"),
    "no optimizer.pt and scheduler.pt": (
        _without("optimizer.pt", "scheduler.pt"),
        None,
        "incomplete checkpoint: no optimizer.pt, scheduler.pt",
    ),
    "no rng_state.pth": (_without("rng_state.pth"), None, "incomplete checkpoint: no rng_state.pth"),
    "no heads.pt": (_without("heads.pt"), None, "incomplete checkpoint: no heads.pt"),
    "global_step 10^9": (_state(global_step=10**9), None, "is not the step of its folder"),
    "checkpoint-1000000000 with its state": (_renamed_to_step(10**9), None, "outside this run's planned 1-4 steps"),
    "max_steps of another run": (_state(max_steps=10**9), None, "max_steps 1000000000 is not this run's 4"),
    "best checkpoint outside the work folder": (
        _state(best_model_checkpoint="/etc"),
        None,
        "is not a checkpoint of this work folder",
    ),
    "the checkpoint a link to a folder elsewhere": (_folder_link, None, "the checkpoint is a link"),
    "trainer_state.json with a key the trainer lacks": (_state(payload=1), None, "'payload' is not a field"),
    "trainer_state.json with a log_history that is not a list": (_state(log_history=5), None, "log_history 5"),
    "trainer_state.json with a NaN epoch": (_state(epoch=float("nan")), None, "epoch nan"),
    "heads.pt without a task's head": (_heads_without("pi"), "heads.pt", "does not hold this run's task heads"),
    "model.safetensors of another model's shape": (_smaller_embeddings, "model.safetensors", "shapes differ"),
    "model.safetensors lacking a weight": (_lacking_a_weight, "model.safetensors", "lacks"),
    "rng_state.pth without the numpy state": (_saved({"python": None}), "rng_state.pth", "cannot resume from"),
    "optimizer.pt of another optimizer": (
        _saved({"state": {}, "param_groups": []}),
        "optimizer.pt",
        "cannot resume from",
    ),
    "modules.json naming a folder outside the checkpoint": (_module_folder("../../.."), None, "outside the checkpoint"),
}


@pytest.mark.parametrize("kind", KINDS)
def test_a_checkpoint_the_resume_cannot_honour_is_refused(halted_work, tiny_model, tmp_path, cli, capsys, kind):
    change, name, fragment = KINDS[kind]
    work = tmp_path / ".m2.work"
    shutil.copytree(halted_work, work)
    checkpoint = work / "checkpoint-2"
    assert checkpoint.is_dir(), sorted(p.name for p in work.iterdir())
    named = change(checkpoint, name)
    status = cli(*resume_arguments(tiny_model, tmp_path / "m2"))
    assert_clean_failure(status, capsys.readouterr().err, named, tmp_path / "m2", fragment)
    assert not (tmp_path / "m2").exists()


def _log_not_json(work):
    log = work / "train_log.jsonl"
    log.write_text(log.read_text() + "{not json\n")
    return log


def _log_link_out(work):
    """The step log a link to a file outside the work folder: rewriting it would overwrite that file."""
    outside = work.parent / "someone-elses.txt"
    outside.write_text("keep me\n")
    (work / "train_log.jsonl").unlink()
    (work / "train_log.jsonl").symlink_to(outside)
    return work / "train_log.jsonl"


LOG_KINDS = {
    "train_log.jsonl with a line that is not JSON": (_log_not_json, "not a step-log line"),
    "train_log.jsonl a link out of the work folder": (_log_link_out, "is a link"),
}


@pytest.mark.parametrize("kind", LOG_KINDS)
def test_a_step_log_the_resume_cannot_keep_is_refused(halted_work, tiny_model, tmp_path, cli, capsys, kind):
    change, fragment = LOG_KINDS[kind]
    work = tmp_path / ".m2.work"
    shutil.copytree(halted_work, work)
    named = change(work)
    status = cli(*resume_arguments(tiny_model, tmp_path / "m2"))
    assert_clean_failure(status, capsys.readouterr().err, named, tmp_path / "m2", fragment)
    if (tmp_path / "someone-elses.txt").exists():
        assert (tmp_path / "someone-elses.txt").read_text() == "keep me\n"
