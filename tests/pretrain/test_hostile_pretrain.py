"""pretrain on hostile input: planted or damaged resume checkpoints, token rows the collators
cannot trust, arguments outside their domain (docs/behaviour.md: one line, exit 2, nothing
written, nothing executed)."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from hostile import Payload, assert_clean_failure

from pipeline import contracts


def common(tokens, model):
    return ["--data", tokens, "--model", model, "--objective", "mlm", "--max-steps", 4, "--batch-size", 8]


@pytest.fixture(scope="module")
def kept_checkpoint(tokens_en, tiny_en, tmp_path_factory):
    """A real checkpoint of a 4-step run (``--keep-checkpoint``), to plant copies of."""
    from pipeline.cli import main

    out = tmp_path_factory.mktemp("kept") / "m"
    args = ["pretrain", *common(tokens_en, tiny_en), "--save-every", 2, "--keep-checkpoint", "--out", out]
    assert main([str(a) for a in args]) == 0
    return out / "checkpoint"


def plant(kept, tmp_path, change):
    """Copy the kept checkpoint to where ``--out tmp_path/m2`` resumes from, then spoil it."""
    planted = tmp_path / ".m2.work" / "checkpoint"
    shutil.copytree(kept, planted)
    change(planted)
    return planted


def _payload_in_state(planted):
    state = torch.load(planted / "state.pt", weights_only=True)
    state["position"] = Payload(planted.parents[1] / "payload-ran")
    torch.save(state, planted / "state.pt")
    return planted / "state.pt"


def _payload_in_rng(planted):
    torch.save({"python": Payload(planted.parents[1] / "payload-ran")}, planted / "rng-0.pt")
    return planted / "rng-0.pt"


def _truncated_state(planted):
    data = (planted / "state.pt").read_bytes()
    (planted / "state.pt").write_bytes(data[: len(data) // 2])
    return planted / "state.pt"


def _settings_not_json(planted):
    (planted / "settings.json").write_text("{not json")
    return planted / "settings.json"


def _position_not_counts(planted):
    state = torch.load(planted / "state.pt", weights_only=True)
    state["position"] = {"step": -5, "epoch": "x", "batches_done": 0}
    torch.save(state, planted / "state.pt")
    return planted / "state.pt"


def _weights_of_another_model(planted):
    state = torch.load(planted / "state.pt", weights_only=True)
    state["model"] = {"encoder.weight": torch.zeros(3)}
    torch.save(state, planted / "state.pt")
    return planted


CHECKPOINT_KINDS = {
    "a pickle payload in state.pt": (_payload_in_state, "could run code"),
    "a pickle payload in rng-0.pt": (_payload_in_rng, "could run code"),
    "a truncated state.pt": (_truncated_state, "corrupt checkpoint"),
    "settings.json not JSON": (_settings_not_json, "not json"),
    "a data position that is not counts": (_position_not_counts, "data position"),
    "weights of another model": (_weights_of_another_model, "does not fit"),
}


@pytest.mark.parametrize("kind", CHECKPOINT_KINDS)
def test_a_planted_or_damaged_checkpoint_is_refused_and_runs_nothing(
    kept_checkpoint, tokens_en, tiny_en, tmp_path, cli, capsys, kind
):
    change, fragment = CHECKPOINT_KINDS[kind]
    named = plant(kept_checkpoint, tmp_path, change)
    status = cli("pretrain", *common(tokens_en, tiny_en), "--save-every", 2, "--resume", "--out", tmp_path / "m2")
    assert_clean_failure(status, capsys.readouterr().err, named, tmp_path / "m2", fragment)
    assert not (tmp_path / "payload-ran").exists()
    assert not (tmp_path / "m2").exists()


def test_a_saved_checkpoint_holds_only_tensors_and_plain_containers(kept_checkpoint):
    for name in ("state.pt", "rng-0.pt"):
        torch.load(kept_checkpoint / name, weights_only=True)  # raises on anything else


def _folder_bytes(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("stranger", [".notes", ".git/config"])
def test_a_rerun_refuses_an_earlier_model_holding_a_hidden_file(
    kept_checkpoint, tokens_en, tiny_en, tmp_path, cli, capsys, stranger
):
    """Issue 39 §1: a rerun over an earlier model swapped the folders and deleted the old one, a user's
    hidden file with it; refused before any work, the folder as it was, no work folder made beside it."""
    out = tmp_path / "m"
    shutil.copytree(kept_checkpoint.parent, out)  # the earlier output of the same settings
    (out / stranger).parent.mkdir(parents=True, exist_ok=True)
    (out / stranger).write_text("mine\n")
    before = _folder_bytes(out)
    status = cli("pretrain", *common(tokens_en, tiny_en), "--out", out)
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error: ")]
    assert status == 2 and len(errors) == 1, errors
    assert errors[0].startswith(f"error: {out}: ") and f"did not write ({stranger.split('/')[0]})" in errors[0]
    assert _folder_bytes(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]  # no .m.work, no temporary


def _rewrite_tokens(good, bad, change):
    table = pq.read_table(good)
    metadata = table.schema.metadata
    rows = table.to_pylist()
    change(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=contracts.TOKENS.with_metadata(metadata)), bad)
    return bad


def _id_outside(rows):
    rows[3]["input_ids"][1] = 10**6


def _negative_id(rows):
    rows[3]["input_ids"][1] = -1


def _all_empty(rows):
    for row in rows:
        row["input_ids"], row["word_ids"], row["ngram_spans"], row["entity_spans"] = [], [], [], []


def _span_past_its_row(rows):
    row = next(r for r in rows if r["ngram_spans"])
    row["ngram_spans"][0] = {**row["ngram_spans"][0], "end": len(row["input_ids"]) + 3}


def _empty_span(rows):
    row = next(r for r in rows if r["entity_spans"] or r["ngram_spans"])
    key = "entity_spans" if row["entity_spans"] else "ngram_spans"
    span = row[key][0]
    row[key][0] = {**span, "end": span["start"]}


def _word_ids_short(rows):
    rows[5]["word_ids"] = rows[5]["word_ids"][:-1]


TOKEN_KINDS = {
    "a token id outside the vocabulary": (_id_outside, "outside the vocabulary"),
    "a negative token id": (_negative_id, "outside the vocabulary"),
    "every input_ids empty": (_all_empty, "no input_ids"),
    "a span past its row": (_span_past_its_row, "span in ngram_spans"),
    "an empty span": (_empty_span, "_spans outside its row or empty"),
    "word_ids shorter than input_ids": (_word_ids_short, "differ in length"),
}


@pytest.mark.parametrize("kind", TOKEN_KINDS)
def test_token_rows_that_do_not_match_their_tokens_are_refused(tokens_en, tiny_en, tmp_path, cli, capsys, kind):
    change, fragment = TOKEN_KINDS[kind]
    bad = _rewrite_tokens(tokens_en, tmp_path / "tokens.parquet", change)
    status = cli("pretrain", *common(bad, tiny_en), "--out", tmp_path / "m")
    assert_clean_failure(status, capsys.readouterr().err, bad, tmp_path / "m", fragment)
    assert not (tmp_path / ".m.work").exists() or not any((tmp_path / ".m.work").glob("checkpoint*"))


ARGUMENT_KINDS = {
    "--max-steps": "-1",
    "--mlm-probability": "1.5",
    "--lr": "nan",
    "--batch-size": "0",
    "--warmup": "1.0",
    "--epochs": "inf",
    "--dropout": "-0.1",
    "--seed": "-3",
}


@pytest.mark.parametrize("flag", ARGUMENT_KINDS)
def test_an_argument_outside_its_domain_stops_before_anything_is_read(tokens_en, tiny_en, tmp_path, cli, capsys, flag):
    args = common(tokens_en, tiny_en)
    if flag in args:
        args[args.index(flag) + 1] = ARGUMENT_KINDS[flag]
    else:
        args += [flag, ARGUMENT_KINDS[flag]]
    status = cli("pretrain", *args, "--out", tmp_path / "m")
    assert_clean_failure(status, capsys.readouterr().err, f"argument {flag}", tmp_path / "m")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("planted", ["link to a user's folder", "user's folder"])
def test_a_save_never_writes_through_or_removes_what_is_at_the_old_temporary_name(tmp_path, planted):
    """The checkpoint's temporary was the fixed ``.checkpoint.tmp`` beside it: a link planted there, pointing at
    a user's folder, stopped every save with a traceback (FileExistsError), and a folder there was removed by
    the save. A save makes a new temporary of its own now (pipeline/leftovers.py's form; rank 0's name shared
    with the other ranks): what is at the old name is left as it is, and the checkpoint is written."""
    from pipeline.models.runtime import World
    from pipeline.pretrain import checkpoint

    user = tmp_path / "thesis"
    user.mkdir()
    (user / "chapter.txt").write_text("three years of work\n")
    work = tmp_path / ".m.work"
    work.mkdir()
    old_name = work / ".checkpoint.tmp"
    if planted == "user's folder":
        shutil.copytree(user, old_name)
    else:
        old_name.symlink_to(user, target_is_directory=True)
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.AdamW(model.parameters())
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    checkpoint.save(work / "checkpoint", World(), model, optimizer, scheduler, {"step": 2}, {"seed": 0})
    assert sorted(p.name for p in user.iterdir()) == ["chapter.txt"]
    assert (old_name / "chapter.txt").read_text() == "three years of work\n"
    assert sorted(p.name for p in (work / "checkpoint").iterdir()) == ["rng-0.pt", "settings.json", "state.pt"]
    assert sorted(p.name for p in work.iterdir()) == [".checkpoint.tmp", "checkpoint"]  # no temporary left
