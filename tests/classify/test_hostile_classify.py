"""Hostile zip archives for ``classify-unpack`` and for ``finetune --nli ARCHIVE.zip:SPLIT``
(docs/behaviour.md): a member with a bad CRC, corrupt compressed data, text that is not UTF-8 or a
name that is not UTF-8 stops the stage with one line naming the archive and the member, exit 2,
nothing written (for finetune: before any training)."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest
from hostile import assert_clean_failure, hidden_leftovers

from pipeline.tasks import nli

MEMBER = "snli_1.0/snli_1.0_train.jsonl"
PAIRS = "".join(
    json.dumps({"sentence1": f"A man plays guitar number {i}.", "sentence2": "A man plays.", "gold_label": label})
    + "\n"
    for i, label in enumerate(["entailment", "neutral", "contradiction"] * 20)
)


def archive(path: Path, data: bytes, name: str = MEMBER, compression=zipfile.ZIP_STORED) -> Path:
    with zipfile.ZipFile(path, "w", compression=compression) as bundle:
        bundle.writestr(name, data)
    return path


def bad_crc(path: Path) -> Path:
    """A stored member whose bytes no longer match the CRC-32 in its header."""
    archive(path, PAIRS.encode())
    raw = bytearray(path.read_bytes())
    at = raw.index(b"guitar number 7")
    raw[at] ^= 0x20  # "Guitar": still text, still JSON; only the checksum tells
    path.write_bytes(bytes(raw))
    return path


def corrupt_deflate(path: Path) -> Path:
    """A deflated member whose compressed stream is garbage in the middle."""
    archive(path, PAIRS.encode() * 5, compression=zipfile.ZIP_DEFLATED)
    raw = bytearray(path.read_bytes())
    start = raw.index(MEMBER.encode()) + len(MEMBER) + 10
    raw[start : start + 40] = bytes(range(200, 240))
    path.write_bytes(bytes(raw))
    return path


def not_utf8(path: Path) -> Path:
    return archive(path, PAIRS.encode() + b'{"sentence1": "caf\xe9", "sentence2": "x", "gold_label": "neutral"}\n')


def name_not_utf8(path: Path) -> Path:
    """A member name flagged as UTF-8 (bit 11) whose bytes are not."""
    name = "snli_1.0/snli_1.0_é_train.jsonl"
    archive(path, PAIRS.encode(), name=name)
    path.write_bytes(path.read_bytes().replace(name.encode(), name.encode().replace("é".encode(), b"\xff\xfe")))
    return path


# kind: (builder, the member the error names, a fragment of the message)
KINDS = {
    "bad CRC": (bad_crc, MEMBER, "CRC"),
    "corrupt deflate data": (corrupt_deflate, MEMBER, "corrupt"),
    "name not UTF-8": (name_not_utf8, "snli_1.0/snli_1.0_\\xff\\xfe_train.jsonl", "not UTF-8"),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_classify_unpack_names_the_archive_and_the_member(cli, capsys, tmp_path, kind):
    build, member, fragment = KINDS[kind]
    bundle = build(tmp_path / "glue.zip")
    out = tmp_path / "data" / "train.jsonl"
    status = cli("classify-unpack", "--archive", bundle, "--member", MEMBER, "--out", out)
    assert_clean_failure(status, capsys.readouterr().err, f"{bundle}:{member}", out, fragment)
    assert not (tmp_path / "data").exists() or hidden_leftovers(tmp_path / "data") == []


def test_classify_unpack_still_copies_a_sound_member(cli, tmp_path):
    bundle = archive(tmp_path / "glue.zip", PAIRS.encode(), compression=zipfile.ZIP_DEFLATED)
    out = tmp_path / "data" / "train.jsonl"
    assert cli("classify-unpack", "--archive", bundle, "--member", MEMBER, "--out", out) == 0
    assert out.read_text(encoding="utf-8") == PAIRS
    assert hidden_leftovers(out.parent) == []


NLI_KINDS = {**KINDS, "text not UTF-8": (not_utf8, MEMBER, "invalid UTF-8")}


@pytest.mark.parametrize("kind", list(NLI_KINDS))
def test_finetune_nli_archive_names_the_archive_and_the_member(cli, capsys, tmp_path, tiny_model, kind):
    build, member, fragment = NLI_KINDS[kind]
    bundle = build(tmp_path / "snli_1.0.zip")
    out = tmp_path / "model"
    argv = ["finetune", "--model", tiny_model, "--recipe", "sbert-nli", "--nli", f"{bundle}:train"]
    status = cli(*argv, "--max-steps", 1, "--out", out)
    err = capsys.readouterr().err
    assert_clean_failure(status, err, f"{bundle}:{member}", out, fragment)
    assert not (tmp_path / ".model.work").exists()  # stopped before training began
    if kind == "text not UTF-8":
        assert "(line 61)" in err


def test_nli_archive_reader_reads_a_sound_archive(tmp_path):
    bundle = archive(tmp_path / "snli_1.0.zip", PAIRS.encode(), compression=zipfile.ZIP_DEFLATED)
    pairs = nli.read_source(f"{bundle}:train")
    assert len(pairs) == 60 and pairs.labels[:3] == [0, 1, 2]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [("[" * 100_000 + "]" * 100_000, "nested too deeply"), (b'{"task": "\xff"}', "invalid UTF-8"), ("[1]", "object")],
    ids=["nested 100k deep", "not UTF-8", "not an object"],
)
def test_classify_summary_of_bad_run_metrics_is_one_line(cli, capsys, tmp_path, text, fragment):
    run = tmp_path / "run"
    run.mkdir()
    metrics = run / "metrics.json"
    metrics.write_bytes(text if isinstance(text, bytes) else text.encode())
    out = tmp_path / "summary.json"
    status = cli("classify-summary", "--runs", run, "--benchmark", "glue", "--name", "tiny", "--out", out)
    assert_clean_failure(status, capsys.readouterr().err, metrics, out, fragment)


# ------------------------------------------------------------------ --out is an input (issue 47 §1)
def _model_folder(root, model):
    return model, "is the model"


def _inside_the_model(root, model):
    return model / "results", "lies inside the model"


def _inside_the_data_root(root, model):
    return root / "glue" / "SST-2", "lies inside the data root"


def _data_linked_from_elsewhere(root, model):
    outside = root.parent / "outside" / "SST-2"
    shutil.move(root / "glue" / "SST-2", outside)
    (root / "glue" / "SST-2").symlink_to(outside, target_is_directory=True)
    return outside, "an input of this classification"


@pytest.mark.parametrize("make", [_model_folder, _inside_the_model, _inside_the_data_root, _data_linked_from_elsewhere])
def test_an_out_that_is_an_input_is_refused_before_anything_is_written(cli, capsys, tiny_en, demo_root, tmp_path, make):
    """``classify --out`` into the model's folder or the data root wrote its metrics and predictions there."""
    root, model = tmp_path / "data", tmp_path / "model"
    shutil.copytree(demo_root / "glue", root / "glue")
    shutil.copytree(tiny_en, model)
    (root.parent / "outside").mkdir()
    out, fragment = make(root, model)
    before = {p: p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file() and not p.is_symlink()}
    args = ("--model", model, "--task", "sst2", "--data", root, "--seeds", 1, "--max-steps", 1, "--out", out)
    status = cli("classify", *args)
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error: ")]
    assert status == 2 and len(errors) == 1 and errors[0].startswith(f"error: {out}: "), errors
    assert fragment in errors[0], errors[0]
    assert {p: p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file() and not p.is_symlink()} == before
