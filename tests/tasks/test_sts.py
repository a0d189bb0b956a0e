"""STS: Spearman on hand-computed cases, the SemEval / STS-B / SICK readers, real-data counts."""

from __future__ import annotations

import pytest

from pipeline.errors import InputError
from pipeline.tasks import sts
from pipeline.tasks.data_root import DataRoot


def test_spearman_hand_computed():
    assert sts.spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(100.0)
    assert sts.spearman([1, 2, 3], [30, 20, 10]) == pytest.approx(-100.0)
    # ranks (1, 2, 3) vs (1, 3, 2): rho = 1 - 6 * 2 / (3 * 8) = 0.5
    assert sts.spearman([0.1, 0.2, 0.3], [1, 3, 2]) == pytest.approx(50.0)
    # ties take average ranks: (1, 2.5, 2.5) vs (1, 2, 3) → Pearson of ranks = 0.8660
    assert sts.spearman([0, 1, 1], [1, 2, 3]) == pytest.approx(86.60254037844386)


def test_semeval_blank_gold_lines_are_skipped(tmp_path):
    inputs = tmp_path / "STS.input.x.txt"
    golds = tmp_path / "STS.gs.x.txt"
    inputs.write_text("a b\tc d\tsrc1\tsrc2\ne f\tg h\ni j\tk l\n")
    golds.write_text("4.5\n\n1\n")
    left, right, scores = sts.read_semeval(inputs, golds)
    assert (left, right, scores) == (["a b", "i j"], ["c d", "k l"], [4.5, 1.0])


def test_semeval_length_mismatch_is_an_input_error(tmp_path):
    (tmp_path / "in.txt").write_text("a\tb\nc\td\n")
    (tmp_path / "gs.txt").write_text("1\n")
    with pytest.raises(InputError, match="1 gold lines for 2 input lines"):
        sts.read_semeval(tmp_path / "in.txt", tmp_path / "gs.txt")


def test_demo_sets_and_hand_computed_score(demo_data, table_encoder):
    sets = sts.load(DataRoot(demo_data))
    assert list(sets) == list(sts.DATASETS)
    assert sorted(sets["STS12"]) == ["MSRvid", "surprise.OnWN"]  # STS.gs.ALL has no input: ignored
    assert len(sets["STS15"]["images"][0]) == 7  # one blank gold of 8
    assert len(sets["STS-B"]["test"][0]) == 9  # the 9-column row is read
    assert len(sets["SICK-R"]["test"][0]) == 5  # TEST rows only, CRLF file
    assert sets["SICK-R"]["test"][2][-1] == 2.1

    # One subset per dataset, two sentences per pair mapped so that cosine = gold / 5 exactly.
    import math

    left, right, gold = ["p", "q", "r"], ["p2", "q2", "r2"], [1.0, 3.0, 2.0]
    table = {}
    for l_text, r_text, score in zip(left, right, gold):
        angle = math.acos(score / 5)
        table[l_text], table[r_text] = [1.0, 0.0], [math.cos(angle), math.sin(angle)]
    one = {"x": (left, right, gold)}
    result = sts.evaluate(table_encoder(table), dict.fromkeys(sts.DATASETS, one))
    assert result["scores"] == dict.fromkeys(sts.DATASETS, pytest.approx(100.0))
    assert result["avg"] == pytest.approx(100.0)
    assert result["n"]["STS12"] == 3


def test_real_data_pair_counts(data_root):
    sets = sts.load(DataRoot(data_root))
    counts = {name: sum(len(p[0]) for p in subsets.values()) for name, subsets in sets.items()}
    # SOURCES.md: scored pairs per year; STS-B test 1,379; SICK TEST 4,906
    assert counts == {
        "STS12": 3108,
        "STS13": 1500,
        "STS14": 3750,
        "STS15": 3000,
        "STS16": 1186,
        "STS-B": 1379,
        "SICK-R": 4906,
    }
    assert sorted(sets["STS13"]) == ["FNWN", "OnWN", "headlines"]
