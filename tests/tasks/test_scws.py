"""SCWS: the ratings.txt reader on a fixture in the official format, the absent-data message, bad input."""

from __future__ import annotations

import json

import pytest

from pipeline.errors import InputError
from pipeline.tasks import scws
from pipeline.tasks.data_root import DataRoot

LINE = (
    "1\tBrazil\tn\tnut\tn\tthe <b> Brazil </b> team won .\ta brazil <b> nut </b> .\t3.50"
    "\t3.0\t4.0\t2.0\t5.0\t3.0\t4.0\t3.0\t4.0\t3.0\t4.0\n"
)


def test_fixture_in_the_official_format(demo_data):
    left, right, scores = scws.load(DataRoot(demo_data))["SCWS"]
    assert (left[0], right[0], scores[0]) == ("Brazil", "nut", 3.5)
    assert len(left) == 8 and (left[1], right[1], scores[1]) == ("king", "queen", 7.9)


def test_real_scws_when_present(data_root):
    if not (data_root / scws.RATINGS).is_file():
        pytest.skip(f"SCWS is not in the data root ({data_root / scws.RATINGS}): it is not redistributed")
    left, _, scores = scws.load(DataRoot(data_root))["SCWS"]
    assert len(left) == 2003 and all(0 <= s <= 10 for s in scores)


def test_absent_data_says_where_to_get_it(tmp_path):
    with pytest.raises(InputError, match=r"SCWS is absent: .*SCWS.zip.*scws/ratings.txt"):
        scws.load(DataRoot(tmp_path))


def test_hand_computed_spearman(table_encoder, tmp_path):
    # cosines (king, queen) 1.0, (king, nut) 0.0, (river, nut) 0.7071; ratings 9, 1, 5 -> rho = 1
    table = {"king": [1, 0], "queen": [2, 0], "nut": [0, 1], "river": [1, 1]}
    sets = {"SCWS": (["king", "king", "river"], ["queen", "nut", "nut"], [9.0, 1.0, 5.0])}
    result = scws.evaluate(table_encoder(table), sets)
    assert result["scores"]["SCWS"] == pytest.approx(100.0) and result["n"]["SCWS"] == 3


@pytest.mark.parametrize(
    "bad, message",
    [
        (LINE.replace("\t3.50", ""), "expected 18 TAB-separated fields"),
        (LINE.replace("3.50", "11.5"), "mean rating 11.5 is outside the 0-10 scale"),
        (LINE.replace("3.50", "n/a"), "mean rating is not a number"),
    ],
)
def test_bad_line_is_named(tmp_path, bad, message):
    path = tmp_path / scws.RATINGS
    path.parent.mkdir()
    path.write_text(LINE + bad + LINE)
    with pytest.raises(InputError, match=rf"ratings.txt \(line 2\): {message}"):
        scws.load(DataRoot(tmp_path))


def test_non_utf8_is_named_by_the_cli(cli, tiny_model, tmp_path, capsys):
    root = tmp_path / "root"  # the output lies outside it: evaluate refuses one inside the data root
    path = root / scws.RATINGS
    path.parent.mkdir(parents=True)
    path.write_bytes(LINE.encode() + LINE.replace("Brazil", "Br\xe9sil").encode("latin-1"))
    assert cli("evaluate", "scws", "--model", tiny_model, "--data", root, "--out", tmp_path / "s.json") == 2
    err = [line for line in capsys.readouterr().err.splitlines() if "ratings.txt" in line]  # (model-loading bars aside)
    assert len(err) == 1 and "ratings.txt (line 2): not UTF-8" in err[0]
    assert not (tmp_path / "s.json").exists()


def test_cli_on_the_demo(cli, tiny_model, demo_data, tmp_path):
    assert cli("evaluate", "scws", "--model", tiny_model, "--data", demo_data, "--out", tmp_path / "s.json") == 0
    metrics = json.loads((tmp_path / "s.json").read_text())
    assert metrics["n"] == {"SCWS": 8} and -100 <= metrics["scores"]["SCWS"] <= 100
