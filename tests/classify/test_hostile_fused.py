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


@pytest.mark.parametrize(
    "extra, named",
    [
        (["--model", "second", "--out", "o2", "--out", "o3"], "--out"),
        (["--model", "second"], "--out"),
        (["--out", "o2"], "--out"),
        (["--model", "second", "--out", "o2", "--name", "only-one"], "--name"),
    ],
    ids=["three-outs", "one-out", "two-outs-one-model", "one-name"],
)
def test_a_job_whose_counts_of_models_and_outs_differ_stops_before_anything(tmp_path, capsys, extra, named):
    from hostile import assert_clean_failure

    from pipeline.cli import main

    out = tmp_path / "o"
    args = ["classify", "--model", "first", "--task", "sst2", "--data", str(tmp_path), "--out", str(out), *extra]
    status = main(args)
    assert_clean_failure(status, capsys.readouterr().err, named, out, "per --model")


def test_two_models_with_different_tokenizers_are_refused(cli, tiny_en, demo_root, tmp_path, capsys):
    """The data is encoded once: a model whose vocabulary differs from the first's is named, exit 2."""
    from classify_builders import demo_texts, tiny_model
    from hostile import assert_clean_failure

    other = tiny_model(tmp_path / "other-vocab", demo_texts(), vocab_size=300)
    out = tmp_path / "out"
    args = ("--task", "sst2", "--data", demo_root, "--seeds", 1, "--max-steps", 2, "--fuse", 2)
    status = cli("classify", *args, "--model", tiny_en, "--out", out / "a", "--model", other, "--out", out / "b")
    assert_clean_failure(status, capsys.readouterr().err, other, out, "different tokenizers")


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04 truncated zip"], ids=["empty", "truncated"])
def test_unreadable_kept_outcomes_are_set_aside_and_the_group_trains_again(tmp_path, content, caplog):
    resume = fused_training.Resume(tmp_path / ".resume" / "fused-seeds0-4.pt", 5)
    resume.done_path.parent.mkdir()
    resume.done_path.write_bytes(content)
    assert resume.finished({"members": []}) is None
    assert "cannot be read" in caplog.text and "starting afresh" in caplog.text


def test_another_runs_kept_outcomes_are_not_used(tmp_path, caplog):
    """Outcomes kept for other members, settings, checkpoints or data are not this group's."""
    resume = fused_training.Resume(tmp_path / ".resume" / "fused-seeds0-4.pt", 5)
    resume.keep({"members": [{"seed": 0}], "inputs": ["a"]}, [{"seed": 0}])
    assert resume.finished({"members": [{"seed": 0}], "inputs": ["b"]}) is None
    assert "not this run's save" in caplog.text
    assert resume.finished({"members": [{"seed": 0}], "inputs": ["a"]}) == [{"seed": 0}]
    resume.drop()
    assert not resume.path.parent.exists()


class _Planted:
    """An object whose unpickling would run code: a resume save must never be unpickled into it."""

    def __reduce__(self):
        return (exec, ("import pathlib; pathlib.Path('PLANTED').write_text('ran')",))


def test_a_resume_save_is_read_as_tensors_only_and_a_planted_object_never_runs(tmp_path, monkeypatch, caplog):
    """Nothing in a job's folder is unpickled (docs/behaviour.md): a save holding anything but tensors and
    plain containers is set aside, and the group trains afresh."""
    monkeypatch.chdir(tmp_path)
    resume = fused_training.Resume(tmp_path / ".resume" / "fused-seeds0-4.pt", 5)
    resume.path.parent.mkdir()
    torch.save({"identity": {"members": []}, "step": 3, "planted": _Planted()}, resume.path)
    assert resume.load({"members": []}) is None
    assert not (tmp_path / "PLANTED").exists()
    assert "cannot be read" in caplog.text
    torch.save({"identity": {"members": []}, "step": 3, "params": {"w": torch.ones(2)}}, resume.path)
    assert resume.load({"members": []})["step"] == 3


@pytest.mark.parametrize("value", [1.0, -0.1, "a lot"], ids=["one", "negative", "text"])
def test_a_fine_tuning_dropout_outside_its_interval_is_one_line(value):
    """classify.dropout is a rate in [0, 1): anything else is the config's one problem, one line naming the key."""
    from test_workflow_config import SCHEMA

    from pipeline.workflow_config import ConfigError, check, coerce

    config = {"run": "r", "data_root": "d", "corpus": {"languages": ["en"], "en": {"dumps": {"p": {"path": "x"}}}}}
    with pytest.raises(ConfigError) as refused:
        check(coerce({**config, "classify": {"dropout": value}}, SCHEMA), SCHEMA)
    problems = str(refused.value).splitlines()[1:]  # under "invalid config:", one line per problem
    assert len(problems) == 1 and problems[0].strip().startswith("classify.dropout: "), problems
