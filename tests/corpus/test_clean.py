"""Sentence splitting, the cleaning rules, and entity spans carried into sentences."""

from collections import Counter

import pytest
from testdata import EN_SAMPLE, read_dir

from pipeline.corpus import cleaning, sentences
from pipeline.corpus.clean import SentenceCleaner
from pipeline.corpus.extract import extract


def test_english_sentences_respect_lines_and_abbreviations():
    text = "Dr. Smith went to Washington, D.C. on Jan. 5. He said ok.\nHeading\nLast one here."
    spans = sentences.split(text, "en")
    assert [text[s:e] for s, e in spans] == [
        "Dr. Smith went to Washington, D.C. on Jan. 5.",
        "He said ok.",
        "Heading",
        "Last one here.",
    ]


def test_chinese_sentences_keep_closing_quotes():
    text = "他说：「你好！」然后走了。真的吗？是的；没错……好\n下一行"
    assert [text[s:e] for s, e in sentences.split(text, "zh")] == [
        "他说：「你好！」",
        "然后走了。",
        "真的吗？",
        "是的；",
        "没错……",
        "好",
        "下一行",
    ]


@pytest.mark.parametrize(
    "raw, clean",
    [
        ('Anarchism (from Greek ἀναρχία) is "old"; isn\'t it?', "Anarchism from Greek is old isn't it"),
        ("It cost 1,650.5 dollars, or 3.5 m.", "It cost 1,650.5 dollars or 3.5 m"),
        ("anti-statism - a view -- 'quoted' Hébert", "anti-statism a view quoted Hébert"),
    ],
)
def test_english_rules(raw, clean):
    assert cleaning.Cleaner(cleaning.RULE_SETS["en"]).clean(raw, [])[0] == clean


def test_chinese_rules_drop_punctuation_latin_and_spaces():
    text, _ = cleaning.Cleaner(cleaning.RULE_SETS["zh"]).clean("数学（mathematics）是 1 门「学科」。", [])
    assert text == "数学是1门学科"


def test_spans_follow_cleaning_and_erased_spans_are_none():
    cleaner = cleaning.Cleaner(cleaning.RULE_SETS["en"])
    raw = "The (French) Revolution, in ἀναρχία, ended."
    text, spans = cleaner.clean(raw, [(5, 11), (4, 24), (29, 36)])
    assert text == "The French Revolution in ended"
    assert [text[s:e] for s, e in spans[:2]] == ["French", "French Revolution"]
    assert spans[2] is None


def test_sentence_cleaner_maps_entities_and_counts_losses():
    text = "Paris is in France. It is big, said ἀναρχία.\nShort one."
    doc = {
        "doc_id": 7,
        "text": text,
        "entities": [
            {"start": 0, "end": 5, "target": "Paris"},
            {"start": 12, "end": 18, "target": "France"},
            {"start": 15, "end": 23, "target": "Across"},  # crosses the sentence boundary
            {"start": 36, "end": 43, "target": "Anarchy"},  # erased by cleaning
        ],
    }
    counts = Counter()
    rows = SentenceCleaner("en", cleaning.RULE_SETS["en"], min_tokens=3).doc_sentences(doc, counts)
    assert [r["text"] for r in rows] == ["Paris is in France", "It is big said"]
    assert [r["sent_id"] for r in rows] == [0, 1]
    assert [(rows[0]["text"][e["start"] : e["end"]], e["target"]) for e in rows[0]["entities"]] == [
        ("Paris", "Paris"),
        ("France", "France"),
    ]
    assert counts["entities_crossing_sentences"] == 1
    assert counts["entities_erased_by_cleaning"] == 1
    assert counts["sentences_too_short"] == 1


def test_clean_cli_on_english_sample(cli, data_root, tmp_path):
    extract(data_root / EN_SAMPLE, "en", tmp_path / "docs", shards=2)
    assert cli("clean", "--input", tmp_path / "docs", "--lang", "en", "--out", tmp_path / "sentences") == 0
    table = read_dir(tmp_path / "sentences")
    assert table.num_rows > 15_000
    rows = table.to_pylist()
    assert len({r["doc_id"] for r in rows}) >= 100
    for row in rows:
        assert row["text"] == row["text"].strip() and len(row["text"].split()) >= 3
        for e in row["entities"]:
            assert row["text"][e["start"] : e["end"]].strip()
    ids = [(r["doc_id"], r["sent_id"]) for r in rows]
    assert len(ids) == len(set(ids))


def test_rules_file_and_bad_rules_file(cli, capsys, small_dump, tmp_path):
    extract(small_dump, "en", tmp_path / "docs")
    rules = tmp_path / "rules.yaml"
    rules.write_text("- ['[^A-Za-z ]', '']\n- ['\\s+', ' ']\n")
    assert cli("clean", "--input", tmp_path / "docs", "--lang", "en", "--out", tmp_path / "s", "--rules", rules) == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text("- ['[unclosed', '']\n")
    assert cli("clean", "--input", tmp_path / "docs", "--lang", "en", "--out", tmp_path / "t", "--rules", bad) == 2
    assert str(bad) in capsys.readouterr().err
