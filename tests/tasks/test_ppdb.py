"""PPDB phrase similarity: the reader on real rows, the multi-word filter, hand-computed Spearman, bad input."""

from __future__ import annotations

import json

import pytest

from pipeline.tasks import ppdb
from pipeline.tasks.data_root import DataRoot


def test_real_rows_and_the_multi_word_filter(data_root):
    sets = ppdb.load(DataRoot(data_root))
    (left, right, scores), dropped = sets["ppdb-sample"]
    # the file's first line: "4.0 [NP] this video the movie 3.0,4.0,4.0,4.0,5.0"
    assert (left[0], right[0], scores[0]) == ("this video", "the movie", 4.0)
    assert "editor" not in left[:3]  # line 3, "editor" / "head", is a single-word pair: dropped
    assert len(left) == 13184 and dropped == 26456 - 13184
    assert all(ppdb.is_multi_word(a, b) for a, b in zip(left, right))
    (wiki_left, _, _), wiki_dropped = sets["wiki-sample"]
    assert len(wiki_left) == 4177 and wiki_dropped == 13954 - 4177


def test_filter_keeps_a_pair_with_one_multi_word_side():
    assert ppdb.is_multi_word("city", "the town") and ppdb.is_multi_word("the capital", "capital")
    assert not ppdb.is_multi_word("river", "stream")


def test_hand_computed_spearman(table_encoder):
    # cosines: (a, b1) 1.0, (a, b2) 0.7071, (a, b3) 0.0; gold 5, 2, 3 -> ranks (3, 2, 1) vs (3, 1, 2): rho = 0.5
    table = {"a x": [1, 0], "b1 y": [3, 0], "b2 y": [1, 1], "b3 y": [0, 2]}
    pairs = (["a x", "a x", "a x"], ["b1 y", "b2 y", "b3 y"], [5.0, 2.0, 3.0])
    result = ppdb.evaluate(table_encoder(table), {"ppdb-sample": (pairs, 4)})
    assert result["scores"]["ppdb-sample"] == pytest.approx(50.0)
    assert result["n"] == {"ppdb-sample": 3} and result["single_word_pairs"] == {"ppdb-sample": 4}


def test_demo_fixture(demo_data):
    sets = ppdb.load(DataRoot(demo_data))
    assert set(sets) == {"ppdb-sample", "wiki-sample"}
    assert sets["ppdb-sample"][1] == 2  # river / stream and king / queen


@pytest.mark.parametrize(
    "line, message",
    [
        (b"4.0\t[NP]\tthe city\tthe town\n", "expected 5 TAB-separated fields"),
        (b"4.0\t[NP]\tthe caf\xe9 bar\tthe pub\t4.0,4.0,4.0,4.0,4.0\n", "not UTF-8"),
        (b"high\t[NP]\tthe city\tthe town\t4.0\n", "mean score is not a number"),
        (b"7.0\t[NP]\tthe city\tthe town\t4.0\n", "outside the 1-5 scale"),
    ],
)
def test_bad_input_names_file_and_line(cli, tiny_model, demo_data, tmp_path, capsys, line, message):
    root = tmp_path / "root"
    folder = root / ppdb.FOLDER
    folder.mkdir(parents=True)
    good = (demo_data / ppdb.FILES["ppdb-sample"]).read_bytes().splitlines(keepends=True)
    (folder / "ppdb-sample.tsv").write_bytes(b"".join(good[:2]) + line + b"".join(good[2:]))
    (folder / "wiki-sample.tsv").write_bytes((demo_data / ppdb.FILES["wiki-sample"]).read_bytes())
    out = tmp_path / "m.json"
    assert cli("evaluate", "ppdb", "--model", tiny_model, "--data", root, "--out", out) == 2
    err = [
        line for line in capsys.readouterr().err.splitlines() if "ppdb-sample.tsv" in line
    ]  # (model-loading bars aside)
    assert len(err) == 1 and "ppdb-sample.tsv (line 3)" in err[0] and message in err[0]
    assert not out.exists()


def test_cli_on_the_demo(cli, tiny_model, demo_data, tmp_path):
    assert cli("evaluate", "ppdb", "--model", tiny_model, "--data", demo_data, "--out", tmp_path / "p.json") == 0
    metrics = json.loads((tmp_path / "p.json").read_text())
    assert metrics["task"] == "ppdb" and metrics["headline"] == "ppdb-sample"
    assert metrics["n"] == {"ppdb-sample": 11, "wiki-sample": 5}
    assert -100 <= metrics["scores"]["ppdb-sample"] <= 100
