"""Hostile model directories and outputs (docs/behaviour.md): a stage replaces only an output of its own,
and a checkpoint that is incomplete or corrupt stops with one line, exit 2, nothing written, nothing lost."""

from __future__ import annotations

import errno
import json
import pickle
import shutil
import struct
from pathlib import Path

import pytest
from hostile import MARKER_FILE, Payload, assert_clean_failure, file_size_limit, hidden_leftovers

from pipeline.errors import InputError
from pipeline.models.bilstm import saved
from pipeline.models.directory import AtomicDir, check_output_dir, replace_dir

TINY = ["--lang", "en", "--vocab-size", 120, "--hidden", 8, "--layers", 1, "--heads", 1, "--max-length", 16]


def _tiny_model(cli, good, out) -> int:
    return cli("tiny-model", "--sentences", good.sentences, *TINY, "--out", out)


def _user_folder(path: Path) -> dict[str, str]:
    path.mkdir(parents=True)
    files = {"notes.txt": "my notes\n", "config.json": '{"mine": true}\n'}
    for name, text in files.items():
        (path / name).write_text(text)
    return files


# ------------------------------------------------------------------ --out: only our own outputs are replaced
def test_tiny_model_refuses_a_folder_of_user_files(cli, good, tmp_path, capsys):
    notes = tmp_path / "notes"
    files = _user_folder(notes)
    status = _tiny_model(cli, good, notes)
    assert_clean_failure(status, capsys.readouterr().err, notes, tmp_path / "absent", "did not write")
    assert {p.name: p.read_text() for p in notes.iterdir()} == files  # nothing lost
    assert hidden_leftovers(tmp_path) == []


def test_tiny_model_refuses_an_existing_regular_file(cli, good, tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("precious\n")
    status = _tiny_model(cli, good, afile)
    assert_clean_failure(status, capsys.readouterr().err, afile, tmp_path / "absent", "is a file")
    assert afile.read_text() == "precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]  # no .afile.old-PID, no model beside it


@pytest.mark.parametrize("out", ["..", "."])
def test_tiny_model_refuses_dot_names(cli, good, tmp_path, monkeypatch, capsys, out):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    status = _tiny_model(cli, good, out)
    assert_clean_failure(status, capsys.readouterr().err, out, tmp_path / "absent", "folder name")
    assert hidden_leftovers(work) == [] and hidden_leftovers(tmp_path) == []


def test_tiny_model_writes_into_an_empty_folder_and_replaces_its_own_output(cli, good, tmp_path):
    out = tmp_path / "m"
    out.mkdir()
    assert _tiny_model(cli, good, out) == 0
    first = (out / "model.safetensors").read_bytes()
    assert _tiny_model(cli, good, out) == 0  # a rerun replaces the model directory it wrote
    assert (out / "model.safetensors").read_bytes() == first
    assert hidden_leftovers(tmp_path) == []


def _folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _plant(folder: Path, stranger: str) -> dict[str, bytes]:
    """A user's file at ``stranger`` inside ``folder``; what the folder holds then."""
    (folder / stranger).parent.mkdir(parents=True, exist_ok=True)
    (folder / stranger).write_text("mine\n")
    return _folder_bytes(folder)


def _refused(status: int, err: str, out: Path, fragment: str) -> None:
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2 and "Traceback" not in err and len(errors) == 1, err
    assert errors[0].startswith(f"error: {out}: ") and fragment in errors[0], errors[0]


@pytest.mark.parametrize("stranger", [".notes", "notes.txt", ".git/HEAD", "1_Pooling/.notes"])
def test_a_rerun_refuses_an_earlier_model_holding_a_file_it_did_not_write(cli, good, tmp_path, capsys, stranger):
    """Issue 39 §1: an earlier output of ours was replaced whole, a user's file in it (hidden or not) lost."""
    out = tmp_path / "m"
    assert _tiny_model(cli, good, out) == 0
    before = _plant(out, stranger)
    status = _tiny_model(cli, good, out)
    shown = stranger if stranger.startswith("1_Pooling") else stranger.split("/")[0]
    _refused(status, capsys.readouterr().err, out, f"did not write ({shown})")
    assert _folder_bytes(out) == before and hidden_leftovers(tmp_path) == []


def test_a_rerun_refuses_an_earlier_model_with_no_record_of_its_files(cli, good, tmp_path, capsys):
    """A model folder of ours without the list of what it was written with (an older version's) cannot tell
    a user's file from its own: refused, where the user's ``notes.txt`` was lost."""
    from pipeline.models.directory import FILES_RECORD

    out = tmp_path / "m"
    assert _tiny_model(cli, good, out) == 0
    (out / FILES_RECORD).unlink(missing_ok=True)
    before = _plant(out, "notes.txt")
    status = _tiny_model(cli, good, out)
    _refused(status, capsys.readouterr().err, out, "holds no list of the files")
    assert _folder_bytes(out) == before and hidden_leftovers(tmp_path) == []


def test_export_refuses_an_earlier_export_holding_a_hidden_file(cli, good, tmp_path, capsys):
    out = tmp_path / "export"
    assert cli("export", "--model", good.model, "--repo-id", "user/tiny", "--out", out) == 0
    before = _plant(out, ".notes")
    status = cli("export", "--model", good.model, "--repo-id", "user/tiny", "--out", out)
    _refused(status, capsys.readouterr().err, out, "did not write (.notes)")
    assert _folder_bytes(out) == before and hidden_leftovers(tmp_path) == []


def test_export_refuses_a_repo_id_that_climbs_out_of_export(cli, good, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    status = cli("export", "--model", good.model, "--repo-id", "user/..")
    assert_clean_failure(status, capsys.readouterr().err, "--repo-id", tmp_path / "export", "repository id")
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no model copy, no export/ folder


def test_export_refuses_a_folder_of_user_files(cli, good, tmp_path, capsys):
    mine = tmp_path / "mine"
    files = _user_folder(mine)
    status = cli("export", "--model", good.model, "--repo-id", "user/tiny", "--out", mine)
    assert_clean_failure(status, capsys.readouterr().err, mine, tmp_path / "absent", "did not write")
    assert {p.name: p.read_text() for p in mine.iterdir()} == files
    assert hidden_leftovers(tmp_path) == []


def test_export_replaces_its_own_earlier_export(cli, good, tmp_path):
    out = tmp_path / "export"
    for _ in range(2):
        assert cli("export", "--model", good.model, "--repo-id", "user/tiny", "--out", out) == 0
    assert "user/tiny" in (out / "README.md").read_text()
    assert hidden_leftovers(tmp_path) == []


def test_replace_dir_refuses_what_is_not_ours_and_replaces_a_resume_checkpoint(tmp_path):
    foreign = tmp_path / "foreign"
    _user_folder(foreign)
    source = tmp_path / ".new"
    source.mkdir()
    with pytest.raises(InputError, match="did not write"):
        replace_dir(source, foreign)
    assert (foreign / "notes.txt").exists() and source.exists()
    checkpoint = tmp_path / "checkpoint"  # pretrain's resume checkpoint (pipeline/pretrain/checkpoint.py)
    checkpoint.mkdir()
    (checkpoint / "state.pt").write_bytes(b"old")
    (checkpoint / "settings.json").write_text("{}")
    (source / "state.pt").write_bytes(b"new")
    (source / "settings.json").write_text("{}")
    replace_dir(source, checkpoint)
    assert (checkpoint / "state.pt").read_bytes() == b"new" and not source.exists()
    assert hidden_leftovers(tmp_path) == []


def test_a_failure_while_completing_leaves_no_temporary(tmp_path, monkeypatch):
    from pipeline.models import directory

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")  # no file name, as a write() reports it

    monkeypatch.setattr(directory, "complete_model_dir", full_disk)
    target = tmp_path / "model"
    with pytest.raises(InputError) as caught, AtomicDir(target) as tmp:
        (tmp / "config.json").write_text("{}")
    assert caught.value.path == str(target) and "no space left" in caught.value.message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "failure",
    [
        RuntimeError("Error while serializing: I/O error: No space left on device (os error 28)"),  # safetensors
        Exception("No space left on device (os error 28)"),  # tokenizers
        RuntimeError("[enforce fail at inline_container.cc:664] . PytorchStreamWriter failed writing file data/0"),
    ],
    ids=["safetensors", "tokenizers", "torch"],
)
def test_a_full_disk_reported_only_in_a_message_names_the_model_directory(tmp_path, failure):
    target = tmp_path / "model"
    with pytest.raises(InputError) as caught, AtomicDir(target):
        raise failure
    assert caught.value.path == str(target), caught.value
    assert "cannot write the output" in caught.value.message
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_on_a_file_inside_names_that_file_under_its_real_name(tmp_path):
    target = tmp_path / "model"
    with pytest.raises(InputError) as caught, AtomicDir(target) as tmp:
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp / "model.safetensors"))
    assert caught.value.path == str(target / "model.safetensors")


def test_bilstm_save_refuses_a_folder_of_user_files(tmp_path):
    mine = tmp_path / "mine"
    files = _user_folder(mine)
    with pytest.raises(InputError, match="did not write"):
        saved.save(mine, None, [], {}, [])
    assert {p.name: p.read_text() for p in mine.iterdir()} == files
    assert saved.check_output(tmp_path / "new") == tmp_path / "new"


def test_check_output_dir_accepts_new_and_empty_folders(tmp_path):
    (tmp_path / "empty").mkdir()
    assert check_output_dir(tmp_path / "empty") == tmp_path / "empty"
    assert check_output_dir(tmp_path / "new" / "model") == tmp_path / "new" / "model"


# ------------------------------------------------------------------ tokenizers that did not load completely
def _model_copy(good, tmp_path: Path, name: str = "model") -> Path:
    copy = tmp_path / name
    shutil.copytree(good.model, copy)
    return copy


def _tokenize(cli, good, model, out, *extra) -> int:
    return cli("tokenize", "--marked", good.marked, "--model", model, "--lang", "en", *extra, "--out", out)


def test_tokenize_refuses_a_model_without_its_tokenizer_json(cli, good, tmp_path, capsys):
    model = _model_copy(good, tmp_path)
    (model / "tokenizer.json").unlink()
    out = tmp_path / "out"
    status = _tokenize(cli, good, model, out / "t.parquet")
    assert_clean_failure(status, capsys.readouterr().err, model, out, "tokenizer")


def test_evaluate_refuses_a_model_without_its_tokenizer_json(cli, good, tmp_path, capsys):
    model = _model_copy(good, tmp_path)
    (model / "tokenizer.json").unlink()
    out = tmp_path / "out"
    status = cli("evaluate", "sts", "--model", model, "--data", good.data, "--out", out / "m.json")
    assert_clean_failure(status, capsys.readouterr().err, model, out, "[UNK]")


@pytest.mark.parametrize(
    "spoil",
    [
        lambda text: text[: len(text) // 2],  # truncated
        lambda text: "{}",  # JSON, but no tokenizer
        lambda text: text.replace('"vocab"', '"vocabulary"', 1),  # the vocabulary under another key
    ],
    ids=["truncated", "empty object", "no vocab"],
)
def test_tokenize_refuses_a_corrupt_tokenizer_json(cli, good, tmp_path, capsys, spoil):
    model = _model_copy(good, tmp_path)
    (model / "tokenizer.json").write_text(spoil((model / "tokenizer.json").read_text()))
    out = tmp_path / "out"
    status = _tokenize(cli, good, model, out / "t.parquet")
    assert_clean_failure(status, capsys.readouterr().err, model, out, "tokenizer")


def test_a_tokenizer_that_maps_its_vocabulary_to_unk_is_refused(good):
    from tokenizers import Regex, normalizers
    from transformers import AutoTokenizer

    from pipeline.models.tokenizer_check import check_tokenizer

    tokenizer = AutoTokenizer.from_pretrained(good.model)
    check_tokenizer(tokenizer, good.model)  # the good one passes
    # a normaliser that does not fit the vocabulary: every word becomes a string it lacks
    tokenizer.backend_tokenizer.normalizer = normalizers.Replace(Regex(r"\w"), "\u2603")
    with pytest.raises(InputError, match="round-trip"):
        check_tokenizer(tokenizer, good.model)


@pytest.mark.parametrize("length", [-1, 0, 1, 2])
def test_tokenize_refuses_a_max_length_without_room_for_a_token(cli, good, tmp_path, capsys, length):
    out = tmp_path / "out"
    status = _tokenize(cli, good, good.model, out / "t.parquet", f"--max-length={length}")
    assert_clean_failure(status, capsys.readouterr().err, "--max-length", out, "[3, ")


@pytest.mark.parametrize(
    "flag, value, fragment",
    [("--max-length", 2, "[3, "), ("--heads", 0, "[1, "), ("--vocab-size", -1, "[1, "), ("--heads", 3, "multiple")],
)
def test_tiny_model_refuses_sizes_outside_their_domain(cli, good, tmp_path, capsys, flag, value, fragment):
    out = tmp_path / "m"
    status = cli("tiny-model", "--sentences", good.sentences, *TINY, f"{flag}={value}", "--out", out)
    named = "--hidden" if fragment == "multiple" else flag
    assert_clean_failure(status, capsys.readouterr().err, named, out, fragment)
    assert list(tmp_path.iterdir()) == []


def test_tokenize_at_the_shortest_max_length_keeps_every_row_within_it(cli, good, tmp_path):
    import pyarrow.parquet as pq

    out = tmp_path / "t.parquet"
    assert _tokenize(cli, good, good.model, out, "--max-length", 3) == 0
    rows = pq.read_table(out).column("input_ids").to_pylist()
    stats = json.loads(out.with_suffix(".stats.json").read_text())
    assert rows and all(len(ids) <= 3 for ids in rows)
    assert stats["sentences_out"] == len(rows)


def test_tokenize_refuses_an_output_that_is_a_folder(cli, good, tmp_path, capsys):
    out = tmp_path / "t.parquet"
    out.mkdir()
    status = _tokenize(cli, good, good.model, out)
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err and f"error: {out}" in err
    assert list(out.iterdir()) == [] and hidden_leftovers(tmp_path) == []


# ------------------------------------------------------------------ weights and config
def _truncate(model: Path) -> None:
    weights = model / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])


def _huge_header(model: Path) -> None:
    weights = model / "model.safetensors"
    weights.write_bytes(struct.pack("<Q", 2**60) + weights.read_bytes()[8:])


def _config_of_another_size(model: Path) -> None:
    config = json.loads((model / "config.json").read_text())
    config.update(hidden_size=config["hidden_size"] * 2, intermediate_size=config["intermediate_size"] * 2)
    (model / "config.json").write_text(json.dumps(config))


def _more_layers(model: Path) -> None:
    config = json.loads((model / "config.json").read_text())
    config["num_hidden_layers"] += 3
    (model / "config.json").write_text(json.dumps(config))


SPOILED_WEIGHTS = {
    "truncated safetensors": (_truncate, "model.safetensors", "truncated"),
    "safetensors header length 2^60": (_huge_header, "model.safetensors", "header claims"),
    "config of another size": (_config_of_another_size, "config.json", "does not match"),
    "config with more layers": (_more_layers, "config.json", "layers"),
}


@pytest.mark.parametrize("kind", list(SPOILED_WEIGHTS))
@pytest.mark.parametrize("spec", ["{}", "input-embeddings:{}"], ids=["transformer", "input-embeddings"])
def test_evaluate_refuses_spoiled_weights(cli, good, tmp_path, capsys, kind, spec):
    spoil, named, fragment = SPOILED_WEIGHTS[kind]
    model = _model_copy(good, tmp_path)
    spoil(model)
    out = tmp_path / "out"
    status = cli("evaluate", "sts", "--model", spec.format(model), "--data", good.data, "--out", out / "m.json")
    assert_clean_failure(status, capsys.readouterr().err, model / named, out, fragment)


def test_evaluate_refuses_a_pickled_pytorch_model_bin_without_running_it(cli, good, tmp_path, capsys):
    model = _model_copy(good, tmp_path)
    (model / "model.safetensors").unlink()
    marker = tmp_path / MARKER_FILE
    (model / "pytorch_model.bin").write_bytes(pickle.dumps(Payload(marker)))
    out = tmp_path / "out"
    status = cli("evaluate", "sts", "--model", model, "--data", good.data, "--out", out / "m.json")
    assert_clean_failure(status, capsys.readouterr().err, model / "pytorch_model.bin", out, "pickle")
    assert not marker.exists(), "the pickle ran"


def test_pretrain_refuses_a_truncated_starting_checkpoint(good, tmp_path):
    from pipeline.models.loading import load_masked_lm

    model = _model_copy(good, tmp_path)
    _truncate(model)
    with pytest.raises(InputError, match="truncated"):
        load_masked_lm(str(model))


# ------------------------------------------------------------------ word vectors with a lying header
def _lying_vectors(path: Path, binary: bool) -> Path:
    body = b"the " + bytes(1200) if binary else b"the 0.1 0.2 0.3\n"
    path.write_bytes(b"100000000000 300\n" + body)
    return path


def test_evaluate_refuses_a_word2vec_header_claiming_10_to_the_11_vectors(cli, good, tmp_path, capsys):
    vectors = _lying_vectors(tmp_path / "huge.bin", binary=True)
    out = tmp_path / "out"
    status = cli("evaluate", "wordsim", "--model", f"word2vec:{vectors}", "--data", good.data, "--out", out / "m.json")
    assert_clean_failure(status, capsys.readouterr().err, vectors, out, "header claims")


@pytest.mark.parametrize("name, binary", [("huge.bin", True), ("huge.txt", False)])
def test_word_vectors_refuse_a_header_claiming_more_than_the_file_holds(tmp_path, name, binary):
    from pipeline.models import word_vectors

    vectors = _lying_vectors(tmp_path / name, binary)
    with pytest.raises(InputError, match="header claims") as caught:
        word_vectors.load(vectors)
    assert caught.value.where == "line 1"


def test_a_bilstm_directory_with_truncated_weights_is_one_line(good, tmp_path):
    from safetensors.torch import save_file
    from torch import zeros

    directory = tmp_path / "bilstm"
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps({"format": saved.FORMAT, "pooling": "max", "hidden": 2}))
    (directory / "vocab.txt").write_text("a\nb\n")
    save_file({"embedding.weight": zeros(2, 3)}, str(directory / "model.safetensors"))
    weights = directory / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-8])
    with pytest.raises(InputError, match="truncated"):
        saved.load_encoder(directory)


# ------------------------------------------------------------------ a full disk at every step of saving a model


# config.json (667 bytes), model.safetensors (about 12 KB; written by safetensors' Rust code, whose error
# carries the errno only in its text), the same file again with the pooler while completing ("complete")
@pytest.mark.parametrize("limit", [250, 1_000, 5_000, "complete"])
def test_tiny_model_on_a_full_disk_names_its_output(cli, good, tmp_path, capsys, limit):
    if limit == "complete":  # a few bytes short of the completed weights: the pooler's rewrite fails
        assert _tiny_model(cli, good, tmp_path / "reference") == 0
        limit = (tmp_path / "reference" / "model.safetensors").stat().st_size - 50
    out = tmp_path / "m"
    with file_size_limit(limit):
        status = _tiny_model(cli, good, out)
    assert_clean_failure(status, capsys.readouterr().err, out, out, "file too large")
    assert hidden_leftovers(tmp_path) == []


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_word_vectors_holding_nan_or_inf_are_refused(cli, good, tmp_path, capsys, value):
    import numpy as np
    from gensim.models import KeyedVectors

    from pipeline.models import word_vectors

    text = tmp_path / "v.txt"
    text.write_text(f"2 3\nking 0.1 0.2 0.3\nqueen 0.1 {value} 0.3\n")
    with pytest.raises(InputError, match="'queen'"):
        word_vectors.load(text)
    keyed = KeyedVectors(vector_size=3)
    keyed.add_vectors(["king", "queen"], np.array([[0.1, 0.2, 0.3], [0.1, float(value), 0.3]], dtype=np.float32))
    binary = tmp_path / "v.bin"
    keyed.save_word2vec_format(str(binary), binary=True)
    out = tmp_path / "out"
    status = cli("evaluate", "wordsim", "--model", f"word2vec:{binary}", "--data", good.data, "--out", out / "m.json")
    assert_clean_failure(status, capsys.readouterr().err, binary, out, "NaN or infinite")


def _record_listing(out: Path, files) -> None:
    from pipeline.models.directory import FILES_RECORD

    (out / FILES_RECORD).write_text(json.dumps({"files": files}), encoding="utf-8")


PLANTED_RECORDS = {
    # issue 47 §1: a record the folder carries named a user's thesis.txt, and the rerun deleted it
    "a record naming the user's file with no hash": lambda record: {**record, "thesis.txt": {}},
    "a record naming the user's file with another hash": lambda record: {
        **record,
        "thesis.txt": {"sha256": "0" * 64, "size": 15},
    },
    "a record of an earlier version (bare names)": lambda record: [*record, "thesis.txt"],
}


@pytest.mark.parametrize("case", list(PLANTED_RECORDS))
def test_a_record_that_names_a_user_s_file_proves_nothing(cli, good, tmp_path, capsys, case):
    """A list of names in the folder is no proof: only a file whose bytes match the hash the record holds
    is the stage's own; the rest is kept, and named."""
    from pipeline.models.directory import FILES_RECORD

    out = tmp_path / "m"
    assert _tiny_model(cli, good, out) == 0
    (out / "thesis.txt").write_text("a year of work\n")
    record = json.loads((out / FILES_RECORD).read_text(encoding="utf-8"))["files"]
    _record_listing(out, PLANTED_RECORDS[case](record))
    before = _folder_bytes(out)
    status = _tiny_model(cli, good, out)
    shown = "" if "bare names" in case else "thesis.txt"  # bare names prove none of the files: all are named
    _refused(status, capsys.readouterr().err, out, f"did not write ({shown}")
    assert _folder_bytes(out) == before and hidden_leftovers(tmp_path) == []


def test_a_file_of_ours_changed_since_is_kept(cli, good, tmp_path, capsys):
    """The user edited the model's config.json: it is no longer what the stage wrote, so it is not replaced."""
    out = tmp_path / "m"
    assert _tiny_model(cli, good, out) == 0
    (out / "config.json").write_text((out / "config.json").read_text().replace("{", '{"my_note": "tuned",', 1))
    before = _folder_bytes(out)
    status = _tiny_model(cli, good, out)
    _refused(status, capsys.readouterr().err, out, "did not write (config.json), or not with these bytes")
    assert _folder_bytes(out) == before and hidden_leftovers(tmp_path) == []
