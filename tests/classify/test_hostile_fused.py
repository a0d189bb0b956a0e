"""Hostile input to fused fine-tuning's resume: a save that is not this run's, or not a save at all, or one
edited so that it no longer holds what the run holds (issue 47 §2). Each is set aside with one line in the
log naming the file and what is wrong, and the run ends as an unbroken run does."""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

import pytest
import torch
from test_fused_training import Killed, kill_at_step
from transformers import AutoTokenizer

from pipeline.classify import classify, encoding, fused_training, tasks
from pipeline.classify.fused_training import Member


@pytest.mark.parametrize(
    "content",
    [b"", b"not a torch file", b"PK\x03\x04 truncated zip"],
    ids=["empty", "text", "truncated"],
)
def test_an_unreadable_save_is_set_aside_and_the_run_starts_afresh(tmp_path, content, caplog):
    path = tmp_path / ".resume" / "fused.pt"
    path.parent.mkdir()
    path.write_bytes(content)
    assert fused_training.Resume(path, 5).load({"members": []}, {}, 10) is None
    assert "cannot be read" in caplog.text and "starting afresh" in caplog.text


def test_another_runs_save_is_not_resumed(tmp_path, caplog):
    path = tmp_path / "fused.pt"
    torch.save({"identity": {"members": [{"seed": 9}]}, "step": 3}, path)
    assert fused_training.Resume(path, 5).load({"members": [{"seed": 0}]}, {}, 10) is None
    assert "not this run's save (its members differ)" in caplog.text
    torch.save([1, 2, 3], path)  # a torch file, not a save
    assert fused_training.Resume(path, 5).load({"members": []}, {}, 10) is None


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
    member = {"seed": 0, "lr": 1e-3, "model_path": "m"}
    outcome = {**member, "steps": 2, "train_loss": 0.5, "train_seconds": 1.0, "train_examples_per_second": 8.0}
    outcome["sets"] = {}
    outcome["processed_tokens"] = {"padded": 32, "real": 20, "per_epoch": [{"padded": 32, "real": 20}]}
    resume.keep({"members": [member], "inputs": ["a"]}, [outcome])
    assert resume.finished({"members": [member], "inputs": ["b"]}) is None
    assert "not this run's save (its inputs differ)" in caplog.text
    assert resume.finished({"members": [member], "inputs": ["a"]}) == [outcome]
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
    assert resume.load({"members": []}, {"step": 0}, 10) is None
    assert not (tmp_path / "PLANTED").exists()
    assert "cannot be read" in caplog.text
    expected = {"step": 0, "params": {"w": torch.zeros(2)}, "optimiser": {"step": 0}}
    # a save of plain tensors, as the run writes it (with its digest, issue 55 §2), is resumed
    resume.save({"identity": {"members": []}, **expected, "step": 3, "optimiser": {"step": 3}})
    assert resume.load({"members": []}, expected, 10)["step"] == 3


# --- edited saves: each is set aside with one line, and the run ends as the unbroken run ---

STEPS, EVERY = 8, 3


def _config(task):
    args = argparse.Namespace(
        batch_size=8,
        lr=None,
        epochs=None,
        max_steps=STEPS,
        max_length=64,
        warmup_ratio=None,
        weight_decay=None,
        eval_batch_size=32,
        bf16=False,
        dropout=0.1,
        group_by_length=False,
    )
    return classify.settings_from(args, task)


def _train(task, root, model, config, rows):
    """SST-2's first ``rows`` train examples (0: all), encoded as classify encodes them."""
    tokenizer = AutoTokenizer.from_pretrained(model)
    splits, _ = classify.load_splits(task, root, 0.0, rows, allow_substitutes=True)
    return tokenizer, (splits["train"], encoding.encode(task, tokenizer, splits["train"], config.max_length))


def _weights(trainers) -> list[dict]:
    return [{name: p.detach().clone() for name, p in t.model.named_parameters()} for t in trainers]


@pytest.fixture(scope="module")
def saves(tiny_en, demo_root, tmp_path_factory):
    """The unbroken run on all of SST-2's train rows (its weights and losses), and two saves at step 3 of the
    run killed at step 5: on all rows, and on the first 16 (``--max-train-examples 16``)."""
    task = tasks.TASKS["sst2"]
    config = _config(task)
    members = [Member(0, 1e-3, str(tiny_en)), Member(1, 2e-3, str(tiny_en))]
    folder = tmp_path_factory.mktemp("saves")
    found = {}
    with tempfile.TemporaryDirectory() as scratch, pytest.MonkeyPatch.context() as patch:
        tokenizer, train = _train(task, demo_root, str(tiny_en), config, 0)
        trainers, _, losses, _ = fused_training.train_members(task, members, tokenizer, train, config, scratch)
        found["unbroken"] = (_weights(trainers), losses)
        kill_at_step(patch, 5)
        for name, rows in (("all", 0), ("first-16", 16)):
            tokenizer, train = _train(task, demo_root, str(tiny_en), config, rows)
            resume = fused_training.Resume(folder / name / "fused.pt", EVERY)
            with pytest.raises(Killed):
                fused_training.train_members(task, members, tokenizer, train, config, scratch, resume=resume)
            found[name] = resume.path
    return task, config, members, found


def _edit(change):
    def edited(path):
        state = torch.load(path, weights_only=True)
        change(state)
        torch.save(state, path)

    return edited


def _first(state):
    return next(iter(state["params"]))


def _one_element(state):
    state["params"][_first(state)] = torch.tensor([0.5])  # copy_ would broadcast it into every weight


def _one_member_only(state):
    state["params"][_first(state)] = state["params"][_first(state)][:1]


def _float64(state):
    state["params"][_first(state)] = state["params"][_first(state)].double()


def _set_step(step):
    def change(state):
        state["step"] = step

    return change


def _without_moment(state):
    del state["optimiser"]["exp_avg_sq"][_first(state)]


def _optimiser_at(state):
    state["optimiser"]["step"] = 1


@pytest.mark.parametrize(
    "save, change, said",
    [
        (
            "all",
            _edit(_one_element),
            "params['bert.embeddings.word_embeddings.weight'] is float32 [1], the run's is float32 [2, ",
        ),
        ("all", _edit(_one_member_only), "the run's is float32 [2, "),
        ("all", _edit(_float64), "is float64 [2, "),
        ("all", _edit(lambda state: state.pop("params")), "the save lacks 'params'"),
        ("all", _edit(_set_step(-1)), f"its step -1 is outside the run's 0..{STEPS}"),
        ("all", _edit(_set_step(STEPS + 1)), f"its step {STEPS + 1} is outside the run's 0..{STEPS}"),
        ("all", _edit(_set_step(2.5)), "step is not a whole number"),
        ("all", _edit(_without_moment), "optimiser['exp_avg_sq'] lacks"),
        ("all", _edit(_optimiser_at), "its optimiser is at step 1, its weights at 3"),
        ("all", _edit(lambda state: state.pop("rng")), "the save lacks 'rng'"),
        ("first-16", None, "is not this run's save (its train differ)"),
    ],
    ids=[
        "one-element-tensor",
        "wrong-shape",
        "wrong-dtype",
        "no-params",
        "step-minus-one",
        "step-past-the-end",
        "step-not-whole",
        "moment-missing",
        "optimiser-step-differs",
        "no-random-state",
        "other-training-data",
    ],
)
def test_an_edited_or_other_datas_save_is_set_aside_and_the_run_ends_as_the_unbroken_run(
    saves, demo_root, tmp_path, caplog, save, change, said
):
    """A save edited by hand (or made with --max-train-examples 16 and read by a run on all 32 rows) is never
    resumed: one line names the file and what is wrong, and the run trains from its start to the weights and
    losses of the run never killed, to the bit."""
    task, config, members, found = saves
    path = tmp_path / ".resume" / "fused.pt"
    path.parent.mkdir()
    shutil.copy(found[save], path)
    if change:
        change(path)
    tokenizer, train = _train(task, demo_root, members[0].model_path, config, 0)
    caplog.set_level("INFO")
    with tempfile.TemporaryDirectory() as scratch:
        resume = fused_training.Resume(path, EVERY)
        trainers, _, losses, _ = fused_training.train_members(
            task, members, tokenizer, train, config, scratch, resume=resume
        )
    lines = [record.getMessage() for record in caplog.records if str(path) in record.getMessage()]
    assert len(lines) == 1 and said in lines[0] and lines[0].endswith("starting afresh"), lines
    assert "resuming" not in caplog.text
    weights, unbroken_losses = found["unbroken"]
    assert losses == unbroken_losses
    for got, want in zip(_weights(trainers), weights):
        assert all(torch.equal(got[name], want[name]) for name in want)


# --- kept outcomes of a finished group: the job's files are the unbroken job's, every seed in them ---


def _job(model, root, out, rows=0):
    args = ("--model", model, "--task", "sst2", "--data", root, "--out", out, "--seeds", 4, "--seed-dirs")
    args += ("--max-steps", 6, "--batch-size", 8, "--lr", "1e-3", "--fuse", 2, "--resume-every", EVERY)
    return (*args, "--report-to", "none", "--max-train-examples", rows)


def _files(folder: Path) -> dict:
    """Every file a job wrote, by path, with metrics.json's provenance (times, code version) left out."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            if path.name == "metrics.json":
                text = json.dumps({**json.loads(text), "provenance": None})
            found[str(path.relative_to(folder))] = text
    return found


@pytest.fixture(scope="module")
def kept(tiny_en, demo_root, tmp_path_factory):
    """The unbroken jobs (4 seeds in 2 stacks of 2) on 16 and on all 32 train rows, and the job on 16 rows
    killed in its second stack: the first stack's outcomes kept, the second's state at step 3."""
    from pipeline.cli import main

    folder = tmp_path_factory.mktemp("kept")
    for rows in (16, 0):
        assert main(["classify", *map(str, _job(tiny_en, demo_root, folder / f"unbroken-{rows}", rows))]) == 0
    schedule, calls = fused_training.linear_warmup, {"n": 0}

    def dies_in_the_second_stack(step, warmup, total):
        calls["n"] += 1
        if calls["n"] == 6 + 5:
            raise Killed
        return schedule(step, warmup, total)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fused_training, "linear_warmup", dies_in_the_second_stack)
        with pytest.raises(Killed):
            main(["classify", *map(str, _job(tiny_en, demo_root, folder / "killed", 16))])
    assert sorted(p.name for p in (folder / "killed" / ".resume").iterdir()) == [
        "fused-seeds0-1.done.json",
        "fused-seeds0-1.done.json.digest",  # each save's digest beside it (issue 55 §2)
        "fused-seeds2-3.pt",
        "fused-seeds2-3.pt.digest",
    ]
    return folder


def _outcomes(change):
    def edited(path):
        state = json.loads(path.read_text(encoding="utf-8"))
        change(state["outcomes"])
        path.write_text(json.dumps(state), encoding="utf-8")

    return edited


def _seed_in_place(outcomes):
    outcomes[1]["seed"] = 7


def _a_prediction_short(outcomes):
    outcomes[0]["sets"]["dev"]["predictions"].pop()


def _no_metrics(outcomes):
    outcomes[0]["sets"]["dev"]["metrics"] = None


def _tokens_not_counted(outcomes):  # kept by a version that did not count them, or edited
    outcomes[0]["processed_tokens"]["per_epoch"][0]["padded"] = -1


@pytest.mark.parametrize(
    "rows, change, said",
    [
        (16, _outcomes(lambda outcomes: outcomes.pop()), "it holds 1 outcome(s) for 2 member(s)"),
        (16, _outcomes(_seed_in_place), "the outcome of seed 1 of"),
        (16, _outcomes(_a_prediction_short), "lacks 16 dev predictions"),
        (16, _outcomes(_no_metrics), "lacks its dev metrics"),
        (16, _outcomes(_tokens_not_counted), "lacks its processed tokens"),
        (0, None, "is not this run's save (its train differ)"),
    ],
    ids=[
        "member-missing",
        "other-seed-in-place",
        "prediction-missing",
        "metrics-missing",
        "tokens-missing",
        "other-training-data",
    ],
)
def test_edited_or_other_datas_kept_outcomes_are_set_aside_and_the_job_writes_the_unbroken_jobs_files(
    cli, tiny_en, demo_root, kept, tmp_path, caplog, rows, change, said
):
    """Kept outcomes of a finished stack that lack a member (or a prediction, or metrics), or that were kept by
    a job on other training data (--max-train-examples 16, read by a job on all rows), are set aside with one
    line naming the file: the stack trains again, and the job writes every seed's files as the unbroken job."""
    out = tmp_path / "job"
    shutil.copytree(kept / "killed", out)
    done = out / ".resume" / "fused-seeds0-1.done.json"
    if change:
        change(done)
    caplog.set_level("INFO")
    assert cli(*("classify", *_job(tiny_en, demo_root, out, rows))) == 0
    lines = [record.getMessage() for record in caplog.records if str(done) in record.getMessage()]
    assert len(lines) == 1 and said in lines[0], lines
    assert "finished in an earlier try" not in caplog.text
    assert not (out / ".resume").exists()
    assert _files(out) == _files(kept / f"unbroken-{rows}")


@pytest.mark.parametrize("fuse", [(), ("--fuse", 1)], ids=["no-fuse", "fuse-1"])
def test_resume_every_without_fusing_is_refused(cli, tiny_en, demo_root, tmp_path, capsys, fuse):
    """--resume-every saves fused stacks only: without --fuse K above 1 it would be recorded and do nothing
    (issue 47 §5), so it is refused in one line before anything is read or written."""
    from hostile import assert_clean_failure

    out = tmp_path / "out"
    args = ("--model", tiny_en, "--task", "sst2", "--data", demo_root, "--seeds", 2, "--max-steps", 2)
    status = cli("classify", *args, *fuse, "--resume-every", 2, "--out", out)
    assert_clean_failure(status, capsys.readouterr().err, "--resume-every", out, "--fuse")


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
