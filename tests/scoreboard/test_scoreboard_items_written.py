"""The per-item outcomes the evaluations write for the scoreboard's tests (pipeline/scoreboard/
scoreboard_items.py): each file's items recompute its own score, so that a test over them tests the number
in the table."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from pipeline.scoreboard import scoreboard_items
from pipeline.tasks.data_root import DataRoot


def unit_angle_table(left, right, gold):
    """Vectors whose cosine is gold / 5 (tests/tasks/test_sts.py's construction)."""
    table = {}
    for l_text, r_text, score in zip(left, right, gold):
        angle = math.acos(score / 5)
        table[l_text], table[r_text] = [1.0, 0.0], [math.cos(angle), math.sin(angle)]
    return table


def test_sts_writes_each_pair_and_the_items_give_its_scores(table_encoder, tmp_path):
    from pipeline.tasks import sts

    left, right, gold = ["p", "q", "r", "s"], ["p2", "q2", "r2", "s2"], [1.0, 3.0, 2.0, 4.5]
    result = sts.evaluate(table_encoder(unit_angle_table(left, right, gold)), {"STS12": {"x": (left, right, gold)}})
    items = result["items"]["STS12"]["x"]
    assert items["gold"] == gold and items["predicted"] == pytest.approx([g / 5 for g in gold])
    assert items["ids"] == [0, 1, 2, 3]  # pairs built in code: their positions
    assert 100 * stats.spearmanr(items["predicted"], items["gold"]).statistic == pytest.approx(
        result["scores"]["STS12"]
    )


def test_ppdb_and_word_sets_write_the_pairs_they_scored(table_encoder):
    from pipeline.tasks import ppdb, wordsim

    left, right, gold = ["a b", "c d", "e f"], ["a2", "c2", "e2"], [1.0, 4.0, 2.5]
    result = ppdb.evaluate(
        table_encoder(unit_angle_table(left, right, gold)), {"ppdb-sample": ((left, right, gold), 0)}
    )
    assert result["items"]["ppdb-sample"]["gold"] == gold
    words = {"cat": [1.0, 0.0], "dog": [0.6, 0.8], "car": [0.0, 1.0], "zzz": [0.0, 0.0]}
    result = wordsim.evaluate(
        table_encoder(words), {"MEN": (["cat", "cat", "zzz"], ["dog", "car", "dog"], [9.0, 2.0, 5.0])}
    )
    # zzz unknown: its pair is not scored, and the ids say which rows were
    assert result["items"]["MEN"] == {"gold": [9.0, 2.0], "predicted": pytest.approx([0.6, 0.0]), "ids": [0, 1]}


def test_analogy_writes_each_questions_word_pairs():
    from pipeline.tasks.analogy import question_pairs

    rows = [["athens", "greece", "berlin", "germany", "x"], ["Berlin", "Germany", "athens", "greece", "y"]]
    assert question_pairs(rows) == [[0, 1], [1, 0]]


def test_semeval_and_transfer_write_each_test_items_outcome():
    from pipeline.tasks import semeval5a, transfer
    from pipeline.tasks.transfer_classifier import Result

    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 3))
    y = (x[:, 0] > 0).astype(np.int64)
    result = semeval5a.fit_and_score(x[:40], y[:40], x[40:], y[40:])
    hits = np.frombuffer(result["correct"].encode(), dtype=np.uint8) - ord("0")
    assert len(hits) == 20 and 100 * hits.mean() == pytest.approx(result["accuracy"])

    from pipeline.tasks.transfer_data import Split

    test_split = Split(["a", "b", "c"], y=[0, 1, 1], rows=[0, 2, 3])
    found = transfer.test_hits(Result(devacc=0.0, acc=0.0, C=1.0, predictions=np.array([0, 0, 1])), test_split)
    assert found == {"correct": "101", "ids": [0, 2, 3]}


def test_snli_metrics_give_each_test_pairs_outcome(tmp_path):
    """A metrics file's test_correct is read by the McNemar test; a malformed one leaves the column untested."""
    path = tmp_path / "snli.json"
    row = {"label": "m", "source": {"metrics_file": str(path)}}
    path.write_text(json.dumps({"test_correct": "0110"}))
    kind, correct = scoreboard_items.item_outcomes("bilstm_snli", "test", row)
    assert kind == "correct" and correct.tolist() == [0, 1, 1, 0]
    path.write_text(json.dumps({"test_correct": "01x0"}))
    assert scoreboard_items.item_outcomes("bilstm_snli", "test", row) is None


# ------------------------------------------------------------------------------- item ids, file by file
def test_sts_ids_are_each_pairs_line_in_its_file_blank_gold_lines_skipped(hash_encoder, demo_data):
    """The demo's STS15 and STS16 gold files leave a pair unscored (a blank line): the ids skip its line, and
    every id is the line its gold score was read from (SICK: SICK.txt's line, header 0)."""
    from pipeline.tasks import sts

    items = sts.evaluate(hash_encoder, sts.load(DataRoot(demo_data)))["items"]
    for year in sts.YEARS:
        for subset, scored in items[year].items():
            prefix = "STS2016" if year == "STS16" else "STS"
            lines = (demo_data / f"sts/{year}/{prefix}.gs.{subset}.txt").read_text().splitlines()
            assert [float(lines[i]) for i in scored["ids"]] == scored["gold"]
            assert len(scored["ids"]) == len({line for line in scored["ids"]})
    for year in ("STS15", "STS16"):
        (scored,) = items[year].values()
        assert len(scored["ids"]) < max(scored["ids"]) + 1  # a line was skipped, and its id with it
    stsb = (demo_data / "sts/STSBenchmark/sts-test.csv").read_text().splitlines()
    assert [float(stsb[i].split("\t")[4]) for i in items["STS-B"]["test"]["ids"]] == items["STS-B"]["test"]["gold"]
    sick = [line.split("\t") for line in (demo_data / "sick/SICK.txt").read_text().splitlines()]
    sick_ids = items["SICK-R"]["test"]["ids"]
    assert all(sick[i][-1] == "TEST" for i in sick_ids) and 0 not in sick_ids
    assert [float(sick[i][4]) for i in sick_ids] == items["SICK-R"]["test"]["gold"]


def test_ppdb_and_word_set_ids_record_the_rows_kept(hash_encoder, demo_data, tmp_path, table_encoder):
    """PPDB drops single-word pairs and the word sets drop pairs with an unknown word: the ids are the lines
    of the pairs scored, so the rows kept are on record."""
    from pipeline.tasks import ppdb, wordsim

    result = ppdb.evaluate(hash_encoder, ppdb.load(DataRoot(demo_data)))
    lines = (demo_data / ppdb.FILES["ppdb-sample"]).read_text().splitlines()
    ids = result["items"]["ppdb-sample"]["ids"]
    assert (
        len(ids) == result["n"]["ppdb-sample"] and len(lines) - len(ids) == result["single_word_pairs"]["ppdb-sample"]
    )
    assert all(ppdb.is_multi_word(*lines[i].split("\t")[2:4]) for i in ids)

    folder = tmp_path / wordsim.FOLDER
    folder.mkdir(parents=True)
    (folder / "EN-MEN-TR-3k.txt").write_text("# word1 word2 score\ncat dog 9\nzzz dog 5\n\ncat car 2\ncat dog 9\n")
    words = {"cat": [1.0, 0.0], "dog": [0.6, 0.8], "car": [0.0, 1.0], "zzz": [0.0, 0.0]}
    result = wordsim.evaluate(table_encoder(words), wordsim.load(DataRoot(tmp_path)))
    # line 2 (zzz) dropped; the same pair twice (lines 1 and 5) is two items
    assert result["items"]["MEN"]["ids"] == [1, 4, 5] and result["items"]["MEN"]["gold"] == [9.0, 2.0, 9.0]


def test_analogy_ids_are_each_questions_line(hash_encoder, demo_data):
    """Each question's id is its line (a blank line is no question)."""
    from pipeline.tasks import analogy

    categories = analogy.load(DataRoot(demo_data))
    result = analogy.evaluate(hash_encoder, categories)["categories"]
    for category in categories:
        path = demo_data / analogy.FOLDER / category.kind / category.level / f"{category.name}.txt"
        lines = path.read_text().splitlines()
        ids = result[category.key]["ids"]
        assert len(ids) == len(result[category.key]["correct"]) == len(set(ids))
        assert [lines[i].split("\t")[0].strip() for i in ids] == [row[0] for row in category.rows]


def test_analogy_writes_each_questions_word_pairs_across_levels(hash_encoder, demo_data):
    """Every question carries the ids of its two word pairs, the same at every level (the phrase "employed by
    the man" : "hired by the woman" is man : woman), named in ``word_pairs``; the scoreboard reads them."""
    from pipeline.tasks import analogy

    result = analogy.evaluate(hash_encoder, analogy.load(DataRoot(demo_data)))
    categories, names = result["categories"], result["word_pairs"]
    for level in ("phrase", "sentence"):
        for name in ("male-female", "capital-common", "do-doing", "good-better", "positive-negative"):
            word = categories[f"word/{name}"]["word_pair_ids"]
            assert categories[f"{level}/{name}"]["word_pair_ids"] == word
    assert [names[i] for i in categories["phrase/male-female"]["word_pair_ids"][0]] == [
        ["man", "woman"],
        ["king", "queen"],
    ]
    assert categories["phrase/male-female"]["word_pairs_by_line"] == 0
    # "be politically not acceptable" does not hold "unacceptable": that pair is placed by its line
    assert categories["phrase/positive-negative"]["word_pairs_by_line"] == 2
    groups = scoreboard_items._analogy_groups("avg", result, [])
    assert all(group.word_pairs is not None for group in groups)
    assert set(np.concatenate([g.word_pairs.ravel() for g in groups])) <= set(range(len(names)))


def test_semeval_transfer_and_retrieval_write_ids(hash_encoder, demo_data):
    """SemEval 5(a): each test instance's number; transfer: each test item's line (TREC); GEOGRANNO: each
    question's position in its split (``all``: train's then dev's); FAQ: each query's first positive pair."""
    from pipeline.tasks import faq, geogranno, semeval5a, transfer_data

    result = semeval5a.evaluate(hash_encoder, semeval5a.load(DataRoot(demo_data)))
    assert result["ids"] == list(range(result["n"]["test"])) and len(result["correct"]) == result["n"]["test"]

    trec = transfer_data.read_trec(demo_data / "senteval/TREC/TREC_10.label")
    assert trec.ids() == list(range(len(trec)))
    sick = transfer_data.read_sick(demo_data / "sick/SICK.txt", score=True)
    lines = (demo_data / "sick/SICK.txt").read_text().splitlines()
    assert all(lines[i].endswith("\tTEST") for i in sick["test"].ids())

    splits = geogranno.load(DataRoot(demo_data))
    out = geogranno.evaluate(hash_encoder, splits)["splits"]
    assert out["train"]["ids"] == list(range(len(splits["train"])))
    assert out["all"]["ids"] == list(range(len(splits["train"]) + len(splits["dev"])))
    assert all(len(s["ids"]) == len(s["ranks"]) for s in out.values())

    pairs = [("q1", "f1", "0"), ("q2", "f1", "1"), ("q1", "f2", "1"), ("q2", "f2", "1")]
    assert faq.query_ids(pairs, ["q1", "q2"]) == [2, 1]
    datasets = faq.evaluate(hash_encoder, faq.load(DataRoot(demo_data)))["datasets"]
    assert all(len(d["ids"]) == len(set(d["ids"])) == len(d["ranks"]) for d in datasets.values())


def test_snli_pairs_keep_their_lines_through_the_gold_filter_and_a_sample(demo_data, tmp_path):
    """A pair without a gold label ("-") is dropped and its line with it; a sample keeps each pair's line,
    and a second file's pairs are numbered on from the first's."""
    from pipeline.bilstm import nli_data

    path = demo_data / "nli/snli_1.0_demo_train.jsonl"
    pairs = nli_data.read(path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [lines[i]["gold_label"] for i in pairs.ids()] == [nli_data.LABELS[label] for label in pairs.labels]
    assert len(pairs.ids()) == len(lines) - 1  # the demo's one "-" pair
    sample = pairs.subset([3, 1])
    assert sample.ids() == [pairs.ids()[3], pairs.ids()[1]]
    both = nli_data.read_all([path, path])
    assert len(set(both.ids())) == 2 * len(pairs) and both.ids()[: len(pairs)] == pairs.ids()
