"""Hostile input to fused fine-tuning's resume: a save that is not this run's, or not a save at all."""

from __future__ import annotations

import pytest
import torch

from pipeline.classify import fused_training


@pytest.mark.parametrize(
    "content",
    [b"", b"not a torch file", b"PK\x03\x04 truncated zip"],
    ids=["empty", "text", "truncated"],
)
def test_an_unreadable_save_is_set_aside_and_the_run_starts_afresh(tmp_path, content, caplog):
    path = tmp_path / ".resume" / "fused.pt"
    path.parent.mkdir()
    path.write_bytes(content)
    assert fused_training.Resume(path, 5).load({"members": []}) is None
    assert "cannot be read" in caplog.text and "starting afresh" in caplog.text


def test_another_runs_save_is_not_resumed(tmp_path, caplog):
    path = tmp_path / "fused.pt"
    torch.save({"identity": {"members": [{"seed": 9}]}, "step": 3}, path)
    assert fused_training.Resume(path, 5).load({"members": [{"seed": 0}]}) is None
    assert "not this run's save" in caplog.text
    torch.save([1, 2, 3], path)  # a torch file, not a save
    assert fused_training.Resume(path, 5).load({"members": []}) is None
