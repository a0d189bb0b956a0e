"""``python -m pipeline measure-tokens`` (pipeline/classify/measure_tokens.py) against the inputs issue 55 lists for
the token measurement, then ``bench/classify_tokens.py``: an output that is the training file it reads (§1), a
measurement of part of the tasks or of nothing (§2), and bad arguments or a read-only budget folder (§3). Each
is one line, exit 2, every input and the measured file as they were; a partial measurement merges by task.

The stage writes ``--write`` to ``pipeline.budget.classify_tokens.TOKENS``, moved here to a copy in ``tmp_path``.
The demo data root (workflow/demo/data) holds RTE, SST-2 and MRPC training files of 32 rows: a measurement at
one batch size, one length and one order takes seconds."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hostile import assert_clean_failure, unwritable_folder
from testdata import DEMO_DATA

from pipeline.budget import classify_tokens

SMALL = ("--seeds", "1", "--batch-sizes", "8", "--lengths", "128")
COMMITTED = classify_tokens.TOKENS


def _grid(data: dict) -> list[str]:
    """The measurement arguments of the grid ``data`` was measured at."""
    return [
        "--seeds",
        str(data["seeds"]),
        "--batch-sizes",
        *map(str, data["batch_sizes"]),
        "--lengths",
        *map(str, data["lengths"]),
    ]


@pytest.fixture
def tokens(tmp_path, monkeypatch) -> Path:
    """Where ``--write`` writes: a copy of the committed file in ``tmp_path/budget``."""
    path = tmp_path / "budget" / "classify_tokens.yaml"
    path.parent.mkdir()
    shutil.copy(COMMITTED, path)
    monkeypatch.setattr(classify_tokens, "TOKENS", path)
    return path


def _rte_root(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    shutil.copytree(DEMO_DATA / "glue" / "RTE", root / "glue" / "RTE")
    return root


def _refused(cli, capsys, args, named, fragment, untouched: dict[Path, bytes]) -> str:
    status = cli("measure-tokens", *args)
    err = capsys.readouterr().err
    assert_clean_failure(status, err, named, Path("/nonexistent"), fragment)
    for path, before in untouched.items():
        assert path.read_bytes() == before, f"{path} changed"
    return err


# ---------------------------------------------------------------- §1: the output is a file it reads


def test_write_through_a_link_to_the_training_file_it_reads_is_refused(cli, capsys, tmp_path, tokens):
    """The issue's case: classify_tokens.yaml a link to the RTE train.tsv of the data root measured."""
    root = _rte_root(tmp_path)
    train = root / "glue" / "RTE" / "train.tsv"
    tokens.unlink()
    tokens.symlink_to(train)
    before = train.read_bytes()
    args = ["--data", root, "--tasks", "rte", *SMALL, "--write"]
    _refused(cli, capsys, args, tokens, "lies inside the data root", {train: before})
    assert tokens.is_symlink()


def test_an_out_linked_to_the_file_a_data_root_links_to_is_refused(cli, capsys, tmp_path):
    """The data root's train.tsv a link to a file elsewhere, and --out a link to that file: the data-root check
    cannot see it, the files read can (output_guard.refuse_read_files)."""
    elsewhere = tmp_path / "elsewhere" / "train.tsv"
    elsewhere.parent.mkdir()
    shutil.copy(DEMO_DATA / "glue" / "RTE" / "train.tsv", elsewhere)
    root = tmp_path / "data"
    (root / "glue" / "RTE").mkdir(parents=True)
    (root / "glue" / "RTE" / "train.tsv").symlink_to(elsewhere)
    out = tmp_path / "tokens.yaml"
    out.symlink_to(elsewhere)
    before = elsewhere.read_bytes()
    args = ["--data", root, "--tasks", "rte", *SMALL, "--out", out]
    _refused(cli, capsys, args, out, "an input of measure-tokens", {elsewhere: before})


def test_an_out_that_is_a_users_file_is_not_merged_into(cli, capsys, tmp_path):
    thesis = tmp_path / "thesis.txt"
    thesis.write_text("Chapter 1\n", encoding="utf-8")
    args = ["--data", _rte_root(tmp_path), "--tasks", "rte", *SMALL, "--out", thesis]
    _refused(cli, capsys, args, thesis, "is not a measurement to merge into", {thesis: b"Chapter 1\n"})


# ---------------------------------------------------------------- §2: a partial measurement, or none


@pytest.mark.parametrize("asked", [["rte"], ["rte", "rte", "RTE"]], ids=["one task", "one task given three times"])
def test_a_measurement_of_one_task_replaces_that_task_only(cli, tmp_path, tokens, asked):
    before = classify_tokens.read_tokens(COMMITTED)
    assert cli("measure-tokens", "--data", _rte_root(tmp_path), "--tasks", *asked, *_grid(before), "--write") == 0
    after = classify_tokens.read_tokens(tokens)
    rte = after["measured"]["glue"].pop("rte")
    assert rte["examples"] == 32 and rte["file"] == "glue/RTE/train.tsv"  # the demo's rows, measured now
    assert before["measured"]["glue"].pop("rte")["examples"] > 32
    assert after["measured"] == before["measured"]  # every other task as it was, in the registry's order
    assert list(after["measured"]["glue"]) == list(before["measured"]["glue"])
    assert after["missing"] == before["missing"] and after["seeds"] == before["seeds"]


def test_a_root_that_lacks_most_files_keeps_their_measurements(cli, tmp_path, tokens):
    """Every task asked (the default) of a root with RTE alone: RTE measured, every other entry kept, QQP (no
    measurement anywhere) still listed as missing, no task that has a measurement listed as missing."""
    before = classify_tokens.read_tokens(COMMITTED)
    assert cli("measure-tokens", "--data", _rte_root(tmp_path), *_grid(before), "--write") == 0
    after = classify_tokens.read_tokens(tokens)
    assert sorted(map(sorted, after["measured"].values())) == sorted(map(sorted, before["measured"].values()))
    assert after["measured"]["clue"] == before["measured"]["clue"]
    assert after["missing"] == before["missing"] == {"glue": {"qqp": "glue/QQP/train.tsv"}}


@pytest.mark.parametrize("asked", [[], ["--tasks", "qqp"]], ids=["empty data root", "only tasks it has no file of"])
def test_a_measurement_of_nothing_is_refused(cli, capsys, tmp_path, tokens, asked):
    root = tmp_path / "empty" if not asked else _rte_root(tmp_path)
    root.mkdir(exist_ok=True)
    args = ["--data", root, *asked, *SMALL, "--write"]
    _refused(cli, capsys, args, root, "nothing measured, nothing written", {tokens: COMMITTED.read_bytes()})


def test_a_partial_measurement_at_another_grid_is_refused_before_it_measures(cli, capsys, tmp_path, tokens, caplog):
    """One seed, one batch size, one length for RTE beside the file's 15 other tasks at 5 seeds, 4 batch sizes and
    2 lengths: one file would hold two grids. Refused before the measurement, not after its minutes."""
    args = ["--data", _rte_root(tmp_path), "--tasks", "rte", *SMALL, "--write"]
    with caplog.at_level("INFO", logger="pipeline.classify"):
        err = _refused(cli, capsys, args, tokens, "one file holds one grid", {tokens: COMMITTED.read_bytes()})
    assert "holds 15 tasks (cola, sst2, mnli, ...) measured at seeds 5" in err
    assert "rte: glue/RTE/train.tsv" not in caplog.text


# ---------------------------------------------------------------- §3: arguments and the folder written


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--seeds", "0"], "argument --seeds: must be an integer in [1, 100], got 0"),
        (["--seeds", "-1"], "argument --seeds: must be an integer in [1, 100], got -1"),
        (["--batch-sizes", "0"], "argument --batch-sizes: must be an integer in [1, 65536], got 0"),
        (["--batch-sizes"], "argument --batch-sizes: expected at least one argument"),
        (["--lengths", "0"], "argument --lengths: must be an integer in [3, 8192], got 0"),
        (["--tasks", "nosuchtask"], "argument --tasks: 'nosuchtask': unknown task (known: cola"),
        (["--tasks"], "argument --tasks: expected at least one argument"),
        (["--write", "--out", "x.yaml"], "argument --out: not allowed with argument --write"),
    ],
    ids=[
        "seeds 0",
        "seeds -1",
        "batch-sizes 0",
        "batch-sizes empty",
        "lengths 0",
        "unknown task",
        "no task",
        "two outputs",
    ],
)
def test_a_bad_argument_is_one_line_before_anything_is_read(cli, capsys, tmp_path, monkeypatch, tokens, args, fragment):
    monkeypatch.chdir(tmp_path)
    status = cli("measure-tokens", "--data", tmp_path / "no-root", *args)
    err = capsys.readouterr().err
    assert_clean_failure(status, err, "measure-tokens", tmp_path / "x.yaml", fragment)
    assert tokens.read_bytes() == COMMITTED.read_bytes()


def test_a_read_only_budget_folder_fails_before_the_measurement(cli, capsys, tmp_path, monkeypatch, caplog):
    folder = unwritable_folder(tmp_path)
    target = folder / "classify_tokens.yaml"
    monkeypatch.setattr(classify_tokens, "TOKENS", target)
    with caplog.at_level("INFO", logger="pipeline.classify"):
        status = cli("measure-tokens", "--data", _rte_root(tmp_path), "--tasks", "rte", *SMALL, "--write")
    err = capsys.readouterr().err
    assert_clean_failure(status, err, target, target, "cannot write the output")
    assert "rte: glue/RTE/train.tsv" not in caplog.text  # refused at once, not after minutes of measuring
