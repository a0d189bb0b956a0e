"""Hostile arguments and evaluation data for ``evaluate`` (docs/behaviour.md): a value outside its domain,
a score that is NaN or infinite, an ``--out`` that is a folder: one line naming the flag or file, exit 2,
nothing written and no hidden temporary left."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest
from hostile import assert_clean_failure, file_size_limit, hidden_leftovers, unwritable_folder


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


# ------------------------------------------------------------------ grouped evaluation: one set of files (issue 39 §2)
PAIR = ["faq", "geogranno"]  # the lexical baseline scores both in well under a second


def _pair(cli, good, outs: list[Path]) -> int:
    return cli("evaluate", *PAIR, "--model", "bm25", "--data", good.data, "--out", *outs)


def _error_line(status: int, err: str, out: Path, fragment: str) -> str:
    """Exit 2, no traceback, one ``error:`` line naming ``out`` (never a hidden temporary) and ``fragment``."""
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2 and "Traceback" not in err and len(errors) == 1, err
    assert errors[0].startswith(f"error: {out}: ") and fragment in errors[0].lower(), errors[0]
    assert ".tmp-" not in err and ".old-" not in err, err
    return errors[0]


@pytest.mark.parametrize("failure", ["read-only folder", "full disk"])
def test_a_failure_at_the_second_output_leaves_the_first_as_it_was(cli, good, tmp_path, capsys, failure):
    first = tmp_path / "kept" / "faq.json"
    first.parent.mkdir()
    first.write_text("earlier\n")
    if failure == "read-only folder":
        second = unwritable_folder(tmp_path) / "geogranno.json"
        status = _pair(cli, good, [first, second])
        fragment = "not writable"
    else:
        sizes = tmp_path / "sizes"
        assert _pair(cli, good, [sizes / "faq.json", sizes / "geogranno.json"]) == 0
        small, large = ((sizes / name).stat().st_size for name in ("faq.json", "geogranno.json"))
        assert small < large
        second = tmp_path / "full" / "geogranno.json"
        with file_size_limit((small + large) // 2):  # the first file fits, the second does not
            status = _pair(cli, good, [first, second])
        fragment = "file too large"
    _error_line(status, capsys.readouterr().err, second, fragment)
    assert first.read_text() == "earlier\n" and not second.exists()
    assert hidden_leftovers(first.parent) == [] and hidden_leftovers(second.parent) == []


def test_a_rename_that_fails_puts_the_earlier_outputs_back(cli, good, tmp_path, capsys, monkeypatch):
    outs = [tmp_path / "faq.json", tmp_path / "geogranno.json"]
    for out in outs:
        out.write_text(f"earlier {out.name}\n")
    rename = os.replace

    def failing(source, target, *args, **kwargs):
        if Path(target) == outs[1]:
            raise OSError(errno.EIO, "Input/output error")
        return rename(source, target, *args, **kwargs)

    monkeypatch.setattr(os, "replace", failing)
    status = _pair(cli, good, outs)
    _error_line(status, capsys.readouterr().err, outs[1], "input/output error")
    assert [out.read_text() for out in outs] == ["earlier faq.json\n", "earlier geogranno.json\n"]
    assert hidden_leftovers(tmp_path) == []


def _dot_dot(tmp_path: Path) -> Path:
    return tmp_path / "x" / ".." / "x" / "a.json"


def _link_to_the_first(tmp_path: Path) -> Path:
    (tmp_path / "x" / "b.json").symlink_to("a.json")
    return tmp_path / "x" / "b.json"


def _through_a_linked_folder(tmp_path: Path) -> Path:
    (tmp_path / "y").symlink_to(tmp_path / "x")
    return tmp_path / "y" / "a.json"


def _hard_link(tmp_path: Path) -> Path:
    os.link(tmp_path / "x" / "a.json", tmp_path / "x" / "b.json")
    return tmp_path / "x" / "b.json"


ALIASES = {
    "x/../x/a.json": _dot_dot,
    "a link to the first output": _link_to_the_first,
    "the first output through a linked folder": _through_a_linked_folder,
    "a hard link to the first output": _hard_link,
}


@pytest.mark.parametrize("alias", list(ALIASES))
def test_two_outputs_that_are_one_file_are_refused(cli, good, tmp_path, capsys, alias):
    """One task's metrics would overwrite the other's, exit 0: compared by the file they reach, not by spelling."""
    first = tmp_path / "x" / "a.json"
    first.parent.mkdir()
    first.write_text("earlier\n")
    second = ALIASES[alias](tmp_path)
    status = _pair(cli, good, [first, second])
    _error_line(status, capsys.readouterr().err, second, f"is the same file as {first} (the output of faq)")
    assert first.read_text() == "earlier\n" and hidden_leftovers(tmp_path / "x") == []


# ------------------------------------------------------------------ an output that is an input (issue 39 §1)
SIMLEX = "word_similarity/eval-word-vectors/EN-SIMLEX-999.txt"


def _simlex(good, tmp_path, data, model):
    return data / SIMLEX, "lies inside the data root"


def _new_file_in_the_data_root(good, tmp_path, data, model):
    return data / "results" / "wordsim.json", "lies inside the data root"


def _model_config(good, tmp_path, data, model):
    return model / "config.json", "lies inside the model"


def _word2vec_vectors(good, tmp_path, data, model):
    return tmp_path / "vectors.bin", "is the model"


def _data_linked_from_elsewhere(good, tmp_path, data, model):
    outside = tmp_path / "outside" / "simlex.txt"
    outside.parent.mkdir()
    shutil.move(data / SIMLEX, outside)
    (data / SIMLEX).symlink_to(outside)
    return outside, "an input of this evaluation"


INPUTS = {
    "the SimLex file": (_simlex, "word2vec"),
    "a new file in the data root": (_new_file_in_the_data_root, "word2vec"),
    "the model's config.json": (_model_config, "transformer"),
    "the word2vec vectors": (_word2vec_vectors, "word2vec"),
    "a data file the data root links to": (_data_linked_from_elsewhere, "word2vec"),
}


@pytest.mark.parametrize("case", list(INPUTS))
def test_an_output_that_is_an_input_of_the_call_is_refused(cli, good, tmp_path, capsys, case):
    make, kind = INPUTS[case]
    data, model = tmp_path / "data", tmp_path / "model"
    shutil.copytree(good.data, data)
    shutil.copytree(good.model, model)
    shutil.copy(good.vectors, tmp_path / "vectors.bin")
    out, fragment = make(good, tmp_path, data, model)
    before = out.read_bytes() if out.exists() else None
    spec = str(model) if kind == "transformer" else f"word2vec:{tmp_path / 'vectors.bin'}"
    status = _evaluate(cli, good, "wordsim", out, data=data, model=spec)
    _error_line(status, capsys.readouterr().err, out, fragment)
    assert (out.read_bytes() if out.exists() else None) == before
    assert not out.parent.exists() or list(out.parent.glob(f".{out.name}.*")) == []  # no temporary left
