"""finetune --resume on a planted or damaged checkpoint: one line naming the file, exit 2,
nothing executed, no model written (docs/behaviour.md)."""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from finetune_builders import resume_arguments
from hostile import Payload, assert_clean_failure


def _payload_in(name):
    def change(checkpoint):
        torch.save({"state": Payload(checkpoint.parents[1] / "payload-ran")}, checkpoint / name)
        return checkpoint / name

    return change


def _truncated(name):
    def change(checkpoint):
        data = (checkpoint / name).read_bytes()
        (checkpoint / name).write_bytes(data[: len(data) // 2])
        return checkpoint / name

    return change


def _foreign_module(checkpoint):
    modules = json.loads((checkpoint / "modules.json").read_text())
    modules[-1]["type"] = "pickle.Unpickler"
    (checkpoint / "modules.json").write_text(json.dumps(modules))
    return checkpoint / "modules.json"


def _state_not_json(checkpoint):
    (checkpoint / "trainer_state.json").write_text("{")
    return checkpoint / "trainer_state.json"


KINDS = {
    "a pickle payload in optimizer.pt": (_payload_in("optimizer.pt"), "could run code"),
    "a pickle payload in rng_state.pth": (_payload_in("rng_state.pth"), "could run code"),
    "a pickle payload in heads.pt": (_payload_in("heads.pt"), "could run code"),
    "a truncated optimizer.pt": (_truncated("optimizer.pt"), "corrupt checkpoint"),
    "a truncated model.safetensors": (_truncated("model.safetensors"), "corrupt checkpoint"),
    "modules.json naming a foreign class": (_foreign_module, "pickle.Unpickler"),
    "trainer_state.json not JSON": (_state_not_json, "corrupt checkpoint state"),
}


@pytest.mark.parametrize("kind", KINDS)
def test_a_planted_or_damaged_checkpoint_is_refused_and_runs_nothing(
    halted_work, tiny_model, tmp_path, cli, capsys, kind
):
    change, fragment = KINDS[kind]
    work = tmp_path / ".m2.work"
    shutil.copytree(halted_work, work)
    checkpoint = work / "checkpoint-2"
    assert checkpoint.is_dir(), sorted(p.name for p in work.iterdir())
    named = change(checkpoint)
    status = cli(*resume_arguments(tiny_model, tmp_path / "m2"))
    assert_clean_failure(status, capsys.readouterr().err, named, tmp_path / "m2", fragment)
    assert not (tmp_path / "payload-ran").exists() and not (tmp_path / "m2").exists()


def test_an_intact_checkpoint_passes_the_check_and_resumes(halted_work, tiny_model, tmp_path, cli):
    shutil.copytree(halted_work, tmp_path / ".m2.work")
    assert cli(*resume_arguments(tiny_model, tmp_path / "m2")) == 0
    assert [json.loads(line)["step"] for line in (tmp_path / "m2" / "train_log.jsonl").read_text().splitlines()] == [
        1,
        2,
        3,
        4,
    ]
