"""Word similarity: readers, hand-computed Spearman, out-of-vocabulary pairs skipped and counted."""

from __future__ import annotations

import pytest

from pipeline.errors import InputError
from pipeline.tasks import wordsim
from pipeline.tasks.data_root import DataRoot


def test_demo_sets_are_named_as_in_the_tables(demo_data):
    sets = wordsim.load(DataRoot(demo_data))
    assert sorted(sets) == ["MEN", "SimLex-999", "WS-353-ALL", "WS-353-REL", "WS-353-SIM"]
    assert sets["SimLex-999"][0][0] == "old" and sets["SimLex-999"][2][0] == 1.58


def test_hand_computed_with_an_unknown_word(table_encoder):
    # cosines: (x, y1) 1.0, (x, y2) 0.7071, (x, y3) 0.0; "nope" has the zero vector (no known word)
    table = {"x": [1, 0], "y1": [2, 0], "y2": [1, 1], "y3": [0, 5], "nope": [0, 0]}
    sets = {"S": (["x", "x", "x", "x"], ["y1", "y2", "y3", "nope"], [9.0, 5.0, 6.0, 1.0])}
    result = wordsim.evaluate(table_encoder(table), sets)
    # ranks of cosine (3, 2, 1) vs gold (3, 1, 2): rho = 1 - 6 * (0 + 1 + 1) / (3 * 8) = 0.5
    assert result["scores"]["S"] == pytest.approx(50.0)
    assert result["n"]["S"] == 3 and result["oov"]["S"] == 1


def test_each_word_is_encoded_once_on_its_own(table_encoder):
    table = {"a": [1, 0, 0], "b": [1, 1, 0], "c": [0, 1, 1]}
    encoder = table_encoder(table)
    wordsim.evaluate(encoder, {"S": (["a", "a", "b"], ["b", "c", "c"], [1.0, 2.0, 3.0])})
    assert encoder.calls == [["a", "b", "c"]]


def test_bad_line_is_named(tmp_path):
    folder = tmp_path / wordsim.FOLDER
    folder.mkdir(parents=True)
    (folder / "EN-X.txt").write_text("a\tb\t1\nc\td\n")
    with pytest.raises(InputError, match=r"EN-X.txt \(line 2\)"):
        wordsim.load(DataRoot(tmp_path))


def test_a_file_that_is_not_a_set_is_skipped_with_a_warning_naming_it(tmp_path, caplog):
    """Issue 57: a .tsv beside the .txt sets is not read; one line says which file and what is expected."""
    folder = tmp_path / wordsim.FOLDER
    folder.mkdir(parents=True)
    (folder / "EN-X.txt").write_text("a\tb\t1\nc\td\t2\n")
    (folder / "EN-Y.tsv").write_text("a\tb\t1\n")
    (folder / "LICENSE").write_text("the release's licence\n")
    with caplog.at_level("WARNING", logger="pipeline.tasks.wordsim"):
        sets = wordsim.load(DataRoot(tmp_path))
    assert list(sets) == ["EN-X"]
    assert [r.getMessage() for r in caplog.records] == [
        f"{folder / 'EN-Y.tsv'}: skipped, not read: a word-similarity set is a .txt file of 'word1 word2 score' lines"
    ]


def test_real_sets(data_root):
    sets = wordsim.load(DataRoot(data_root))
    sizes = {name: len(pairs[0]) for name, pairs in sets.items()}
    assert sizes["SimLex-999"] == 999 and sizes["MEN"] == 3000
    assert (sizes["WS-353-ALL"], sizes["WS-353-SIM"], sizes["WS-353-REL"]) == (353, 203, 252)
    assert len(sets) == 13
