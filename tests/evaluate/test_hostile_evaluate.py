"""Hostile arguments and evaluation data for ``evaluate`` (docs/behaviour.md): a value outside its domain,
a score that is NaN or infinite, an ``--out`` that is a folder: one line naming the flag or file, exit 2,
nothing written and no hidden temporary left."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hostile import assert_clean_failure, hidden_leftovers


def _evaluate(cli, good, task: str, out: Path, *extra, data: Path | None = None, model: str | None = None) -> int:
    model = model or f"word2vec:{good.vectors}"
    return cli("evaluate", task, "--model", model, "--data", data or good.data, "--out", out, *extra)


@pytest.mark.parametrize(
    "flag, value, fragment",
    [
        ("--batch-size", 0, "in [1, 65536]"),
        ("--batch-size", -5, "in [1, 65536]"),
        ("--max-length", 0, "in [3, 8192]"),
        ("--max-length", -1, "in [3, 8192]"),
        ("--max-length", 2, "in [3, 8192]"),
        ("--seed", -1, "in [0, 4294967295]"),
        ("--kfold", 1, "in [2, 100]"),
    ],
)
@pytest.mark.parametrize("model", ["transformer", "word2vec"])
def test_an_argument_outside_its_domain(cli, good, tmp_path, capsys, flag, value, fragment, model):
    out = tmp_path / "out"
    spec = str(good.model) if model == "transformer" else None
    status = _evaluate(cli, good, "sts", out / "m.json", f"{flag}={value}", model=spec)
    assert_clean_failure(status, capsys.readouterr().err, flag, out, fragment)


def test_a_caller_that_builds_its_own_arguments_is_checked_too(good, tmp_path):
    """``run`` called without argparse (as the tests and scripts do) refuses the same values."""
    import argparse

    from pipeline.errors import InputError
    from pipeline.evaluate.evaluate import check_arguments

    base = {"task": "sts", "batch_size": 64, "max_length": 128, "seed": 0, "out": tmp_path / "m.json"}
    check_arguments(argparse.Namespace(**base))
    for key, value in [("batch_size", 0), ("max_length", 2), ("seed", -1), ("out", tmp_path)]:
        with pytest.raises(InputError):
            check_arguments(argparse.Namespace(**{**base, key: value}))


def test_an_out_that_is_an_existing_folder_is_left_alone(cli, good, tmp_path, capsys):
    out = tmp_path / "dir.json"
    out.mkdir()
    (out / "mine.txt").write_text("kept\n")
    status = _evaluate(cli, good, "faq", out, model="bm25")
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err, err
    assert [line for line in err.splitlines() if line.startswith("error: ")] == [
        f"error: {out}: is a folder, expected a file name: nothing was written or removed"
    ]
    assert (out / "mine.txt").read_text() == "kept\n" and hidden_leftovers(tmp_path) == []


def test_a_transformer_longer_max_length_than_its_positions_is_cut_not_a_traceback(cli, good, tmp_path):
    """The tiny model has 32 positions; --max-length 512 would index past them on a long sentence."""
    data = tmp_path / "data"
    shutil.copytree(good.data, data)
    sick = data / "sick" / "SICK.txt"
    lines = sick.read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    long_row = lines[1].split("\t")
    long_row[header.index("sentence_A")] = " ".join(["paris"] * 200)
    long_row[header.index("SemEval_set")] = "TEST"
    sick.write_text("\n".join([*lines, "\t".join(long_row)]) + "\n", encoding="utf-8")
    out = tmp_path / "m.json"
    assert _evaluate(cli, good, "sts", out, "--max-length", 512, data=data, model=str(good.model)) == 0


# ------------------------------------------------------------------ scores that are not finite numbers
def _replace_field(path: Path, line: int, field: int, value: str, sep: str = "\t") -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    fields = lines[line - 1].split(sep)
    fields[field] = value
    lines[line - 1] = sep.join(fields)
    path.write_text("\n".join(lines), encoding="utf-8")


def _sick_test_row(path: Path, value: str) -> int:
    lines = path.read_text(encoding="utf-8").split("\n")
    header = lines[0].split("\t")
    for number, line in enumerate(lines[1:], 2):
        fields = line.split("\t")
        if len(fields) == len(header) and fields[header.index("SemEval_set")] == "TEST":
            _replace_field(path, number, header.index("relatedness_score"), value)
            return number
    raise AssertionError("no TEST row")


def _wordsim(path: Path, value: str) -> int:
    text = path.read_text(encoding="utf-8").rstrip("\n")
    path.write_text(f"{text}\nking\tqueen\t{value}\n", encoding="utf-8")
    return len(text.split("\n")) + 1


def _field(line: int, field: int):
    def spoil(path: Path, value: str) -> int:
        _replace_field(path, line, field, value)
        return line

    return spoil


BAD_SCORES = {  # case -> (task, file under the data root, how to put the value in, returning the line)
    "SimLex-999": ("wordsim", "word_similarity/eval-word-vectors/EN-SIMLEX-999.txt", _wordsim),
    "STS12 gold": ("sts", "sts/STS12/STS.gs.MSRvid.txt", _field(1, 0)),
    "STS-B": ("sts", "sts/STSBenchmark/sts-test.csv", _field(2, 4)),
    "SICK-R": ("sts", "sick/SICK.txt", _sick_test_row),
    "PPDB": ("ppdb", "ppdb/ppdb2.0_human_labels/ppdb-sample.tsv", _field(1, 0)),
    "SCWS": ("scws", "scws/ratings.txt", _field(2, 7)),
}


@pytest.mark.parametrize("value", ["nan", "inf", "-Infinity"])
@pytest.mark.parametrize("case", list(BAD_SCORES))
def test_a_score_that_is_not_a_finite_number(cli, good, tmp_path, capsys, case, value):
    task, relative, spoil = BAD_SCORES[case]
    data = tmp_path / "data"
    shutil.copytree(good.data, data)
    line = spoil(data / relative, value)
    out = tmp_path / "out"
    status = _evaluate(cli, good, task, out / "m.json", data=data)
    assert_clean_failure(status, capsys.readouterr().err, data / relative, out, f"(line {line})")
