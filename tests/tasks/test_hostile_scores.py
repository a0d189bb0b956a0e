"""Every reader of gold scores refuses NaN and infinities (docs/behaviour.md): ``float()`` parses them,
and a NaN turns a whole correlation into null while an infinity outranks every real score."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.errors import InputError
from pipeline.tasks import ppdb, scws, sts, transfer_data, wordsim
from pipeline.tasks.numbered_lines import finite_number

SICK_HEADER = "pair_ID\tsentence_A\tsentence_B\tentailment_label\trelatedness_score\tSemEval_set"
NOT_FINITE = ["nan", "NaN", "inf", "-inf", "Infinity"]


def _sick(path: Path, score: str) -> Path:
    rows = [SICK_HEADER] + [
        f"{i}\ta man sings\ta man plays\tNEUTRAL\t{score if i == 3 else '3.0'}\t{split}"
        for i, split in enumerate(["TRAIN", "TRIAL", "TEST", "TEST"], 1)
    ]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


READERS = {  # reader -> (write a file with ``score`` on line 2, read it)
    "wordsim": (
        lambda path, score: path.write_text(f"old\tnew\t1.5\nking\tqueen\t{score}\n"),
        wordsim.read_pairs,
    ),
    "sts semeval": (
        lambda path, score: (
            path.with_suffix(".input").write_text("a man\ta woman\nthe cat\tthe dog\n"),
            path.write_text(f"4.0\n{score}\n"),
        ),
        lambda path: sts.read_semeval(path.with_suffix(".input"), path),
    ),
    "sts-b": (
        lambda path, score: path.write_text(
            "g\tf\ty\t0\t1.0\ta man\ta woman\n" + f"g\tf\ty\t1\t{score}\tthe cat\tthe dog\n"
        ),
        sts.read_stsb,
    ),
    "sick-r": (lambda path, score: _sick(path, score), sts.read_sick),
    "transfer sick-r": (lambda path, score: _sick(path, score), lambda path: transfer_data.read_sick(path, score=True)),
    "ppdb": (
        lambda path, score: path.write_text(
            "4.0\t[NP]\tthe city\tthe town\t4,4,4,4,4\n" + f"{score}\t[NP]\tthe dog\tthe cat\t1,1,1,1,1\n"
        ),
        lambda path: ppdb.read_pairs(path),
    ),
    "scws": (
        lambda path, score: path.write_text(
            "1\tking\tn\tqueen\tn\tc1\tc2\t7.0"
            + "\t7.0" * 10
            + "\n"
            + f"2\tcat\tn\tdog\tn\tc1\tc2\t{score}"
            + "\t7.0" * 10
            + "\n"
        ),
        scws.read_ratings,
    ),
}


@pytest.mark.parametrize("value", NOT_FINITE)
@pytest.mark.parametrize("reader", list(READERS))
def test_a_score_that_is_not_finite_is_refused_with_its_line(tmp_path, reader, value):
    write, read = READERS[reader]
    path = tmp_path / "scores.txt"
    write(path, value)
    with pytest.raises(InputError) as caught:
        read(path)
    assert caught.value.path == str(path)
    sick = reader in ("sick-r", "transfer sick-r")
    assert caught.value.where == (f"line {4}" if sick else "line 2"), caught.value
    assert "finite" in caught.value.message


@pytest.mark.parametrize("reader", list(READERS))
def test_the_same_files_with_finite_scores_read(tmp_path, reader):
    write, read = READERS[reader]
    path = tmp_path / "scores.txt"
    write(path, "2.5")
    assert read(path)


def test_finite_number():
    assert finite_number("f", 1, " 2.5 ", "score") == 2.5
    for text in ("x", None, "", *NOT_FINITE):
        with pytest.raises(InputError, match="line 7"):
            finite_number("f", 7, text, "score")
