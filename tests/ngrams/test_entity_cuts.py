"""No counted n-gram cuts an entity span, in every mode (the released code's bracket rule, docs/method.md §2),
and the ``meaningfulness`` measures of stats.json on small fixtures whose answers are known."""

from __future__ import annotations

import json

import numpy as np
import pmi_python
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from test_ngrams_stage import run_stage, sentences_file

from pipeline.ngrams import meaningfulness, pmi
from pipeline.words import char_spans

# "political philosophy" is a link in every sentence; without the rule "philosophy that" (which cuts
# it) is counted three times and marked
TEXTS = [
    "anarchism is a political philosophy that advocates self-governed societies",
    "a political philosophy that rejects rulers",
    "every political philosophy that matters",
]


def link(text: str, surface: str) -> tuple[int, int, str]:
    start = text.index(surface)
    return start, start + len(surface), surface


def word_spans(text: str, links) -> list[tuple[int, int]]:
    """The word spans of character spans, as the stage computes them."""
    spans = char_spans(text, "en")
    return [
        (sum(e <= a for _, e in spans), sum(s < b for s, _ in spans)) for a, b, _ in links
    ]  # words ending before the link starts, words starting before it ends


def test_cut_points_mark_the_inner_boundaries():
    cut = pmi.cut_points(8, np.array([1, 5]), np.array([3, 1]))
    assert np.flatnonzero(cut).tolist() == [2, 3]  # inside tokens 1..3; a one-token entity has no inside


@pytest.mark.parametrize("mode", ["paper", "reference"])
def test_no_ngram_cuts_an_entity_and_the_stage_equals_the_specification(cli, tmp_path, mode):
    entities = {(1, i): [link(t, "political philosophy")] for i, t in enumerate(TEXTS)}
    entities[(1, 0)].append(link(TEXTS[0], "self-governed societies"))
    path = sentences_file(tmp_path / "s.parquet", {1: TEXTS}, entities)
    ngrams, marked, out = run_stage(cli, tmp_path, path, "--mode", mode)
    pmi_rows = ngrams.filter(pl.col("source") == "pmi")
    assert "philosophy that" not in pmi_rows["ngram"].to_list()
    assert "a political philosophy" in pmi_rows["ngram"].to_list()  # holds the whole entity: kept
    assert "political philosophy" in pmi_rows["ngram"].to_list()
    spans = [word_spans(t, entities[(1, i)]) for i, t in enumerate(TEXTS)]
    kept, _words, expected = pmi_python.process_document(TEXTS, mode=mode, entities=spans)
    got = pmi_rows.sort("rank")
    assert got["ngram"].to_list() == [g for g, *_ in kept]
    assert got["count"].to_list() == [c for _, _, c, _ in kept]
    assert got["pmi"].to_list() == [float(s) for *_, s in kept]
    marked_pmi = [[(s["start"], s["end"]) for s in row if s["source"] == "pmi"] for row in marked["spans"]]
    assert marked_pmi == expected
    stats = json.loads((out / "stats.json").read_text())
    assert stats["meaningfulness"]["entity_cut_share"] == 0.0


def test_without_the_entities_the_same_text_is_cut(cli, tmp_path):
    entities = {(1, i): [link(t, "political philosophy")] for i, t in enumerate(TEXTS)}
    path = sentences_file(tmp_path / "s.parquet", {1: TEXTS}, entities)
    ngrams, *_ = run_stage(cli, tmp_path, path, "--no-entities")
    assert "philosophy that" in ngrams["ngram"].to_list()  # the rule above is what removes it


def test_reference_mode_finds_the_entity_behind_stripped_punctuation(cli, tmp_path):
    """Reference mode deletes a word made only of [().,?;'!:]: the entity's words move left with it."""
    texts = ["( see ) the political philosophy that lasts", "the political philosophy that lasts"]
    entities = {(1, i): [link(t, "political philosophy")] for i, t in enumerate(texts)}
    path = sentences_file(tmp_path / "s.parquet", {1: texts}, entities)
    ngrams, marked, _ = run_stage(cli, tmp_path, path, "--mode", "reference")
    assert "philosophy that" not in ngrams["ngram"].to_list()
    assert "see the" in ngrams["ngram"].to_list() and marked["text"][0] == "see the political philosophy that lasts"


def test_the_chinese_sample_keeps_its_entities_whole(cli, data_root, tmp_path):
    """The issue's example: 许慎 and 说文解字 are links; no marked PMI span may end inside either."""
    from testdata import ZH_SAMPLE

    assert cli("extract", "--dump", data_root / ZH_SAMPLE, "--lang", "zh", "--out", tmp_path / "docs") == 0
    assert cli("convert", "--input", tmp_path / "docs", "--out", tmp_path / "simplified") == 0
    assert cli("clean", "--input", tmp_path / "simplified/shard-000.parquet", "--lang", "zh", "--out", tmp_path) == 0
    for preset in ("burt", "burt_windows", "ulr"):
        out = tmp_path / preset
        assert cli("ngrams", "--sentences", tmp_path / "shard-000.parquet", "--lang", "zh", "--preset", preset,
                   "--out", out) == 0  # fmt: skip
        stats = json.loads((out / "stats.json").read_text())
        assert stats["meaningfulness"]["entity_cut_share"] == 0.0 and stats["pmi_spans_checked"] > 1000
        marked = pl.read_parquet(out / "marked.parquet")
        for row in marked["spans"].to_list():
            entities = [(s["start"], s["end"]) for s in row if s["source"] == "entity"]
            for s in row:
                if s["source"] == "pmi":
                    assert not pmi_python.cuts(s["start"], s["end"], entities)
        assert "许慎说文解" not in pl.read_parquet(out / "ngrams.parquet")["ngram"].to_list()


def test_cutting_measure():
    # keys are sentence * 100 + offset; sentence 0: entity [2, 5); sentence 1: [0, 3) and [1, 2), overlapping
    entity_start = np.array([2, 100, 101])
    entity_end = np.array([5, 103, 102])
    spans = [(0, 2), (0, 5), (1, 3), (3, 4), (5, 7), (2, 5), (103, 105), (102, 104), (100, 101)]
    start, end = np.array(spans).T
    assert meaningfulness.cutting(start, end, entity_start, entity_end).tolist() == [
        False,  # ends where the entity starts
        False,  # holds it whole
        True,  # ends inside
        True,  # inside it
        False,  # after it
        False,  # is it
        False,  # the next sentence, after its entities
        True,  # starts inside [100, 103)
        True,  # ends inside [100, 103), though it holds [101, 102) whole
    ]
    assert not meaningfulness.cutting(start, end, np.zeros(0), np.zeros(0)).any()


def test_function_word_edges_and_summary():
    edged = meaningfulness.function_word_edged(pa.array(["to the", "New York", "for an idea", "city of", "x"]))
    assert edged.tolist() == [True, False, True, True, False]
    from collections import Counter

    counts = Counter()
    counts.update({"kept_ngrams": 4, "top2000_2grams": 2, "top2000_3grams": 1, "top2000_5grams": 1})
    counts.update({"pmi_spans": 2, "tokens_in_pmi_spans": 5})
    meaningfulness.count_batch(
        counts,
        kept_n=np.array([2, 2, 3, 5]),
        kept_count=np.array([1, 3, 1, 2]),
        kept_rank=np.array([1, 2, 3, 4]),
        kept_text=pa.array(["of the", "new york", "in the city", "big red fire truck engine"]),
        span_n=np.array([2, 3]),
        span_cuts=np.array([True, False]),
    )
    summary = meaningfulness.summary(counts, 5, "en")
    assert summary["once_seen_share"] == 0.5
    assert summary["entity_cut_share"] == 0.5
    assert summary["function_word_edge_share"] == 0.5  # "of the", "in the city"
    assert summary["lengths"]["top2000_2_3"] == 0.75 and summary["lengths"]["top2000_over_4"] == 0.25
    assert summary["lengths"]["mean_kept"] == 3.0 and summary["lengths"]["mean_marked_span"] == 2.5
    assert meaningfulness.summary(counts, 5, "zh")["function_word_edge_share"] is None


@pytest.fixture(scope="module")
def english_sample(data_root, tmp_path_factory):
    """Four real articles of the English dump sample after extract → clean, with their links."""
    from testdata import EN_SAMPLE

    from pipeline.cli import main

    work = tmp_path_factory.mktemp("en-sample")
    assert main(["extract", "--dump", str(data_root / EN_SAMPLE), "--lang", "en", "--out", str(work / "docs")]) == 0
    assert main(["clean", "--input", str(work / "docs/shard-000.parquet"), "--lang", "en", "--out", str(work)]) == 0
    table = pq.read_table(work / "shard-000.parquet")
    docs = pa.array(pl.from_arrow(table.column("doc_id")).unique(maintain_order=True)[3:7].to_list())
    picked = table.filter(pc.is_in(table.column("doc_id"), value_set=docs))
    path = work / "picked.parquet"
    pq.write_table(picked, path)  # the contract's schema (string, not large_string)
    return path, pl.from_arrow(picked)


@pytest.mark.parametrize("mode", ["paper", "reference"])
def test_real_articles_with_links_equal_the_specification(cli, tmp_path, english_sample, mode):
    path, picked = english_sample
    ngrams, marked, _ = run_stage(cli, tmp_path, path, "--mode", mode, "--top-k", "400", "--batch-chars", "30000")
    assert picked["entities"].list.len().sum() > 100
    for (doc_id,), rows in picked.group_by(["doc_id"], maintain_order=True):
        texts = rows["text"].to_list()
        links = [[(e["start"], e["end"], e["target"]) for e in row] for row in rows["entities"].to_list()]
        spans = [word_spans(t, found) for t, found in zip(texts, links)]
        if mode == "reference":  # the words reference mode deletes (only [().,?;'!:]) shift the spans left
            spans = [reference_spans(t, s) for t, s in zip(texts, spans)]
        kept, _words, expected = pmi_python.process_document(texts, mode=mode, k=400, entities=spans)
        got = ngrams.filter((pl.col("doc_id") == doc_id) & (pl.col("source") == "pmi")).sort("rank")
        assert got["ngram"].to_list() == [g for g, *_ in kept]
        assert got["pmi"].to_list() == [float(s) for *_, s in kept]
        doc_marked = marked.filter(pl.col("doc_id") == doc_id).sort("sent_id")
        assert [[(s["start"], s["end"]) for s in row if s["source"] != "entity"] for row in doc_marked["spans"]] == (
            expected
        )


def reference_spans(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    words = text.split()
    kept = [0]
    for word in words:
        kept.append(kept[-1] + bool(pmi_python.reference_tokens(word)))
    return [(kept[a], kept[b]) for a, b in spans]


def test_batches_do_not_change_the_result_with_links(cli, tmp_path, english_sample):
    path, _ = english_sample
    one = run_stage(cli, tmp_path, path, "--preset", "burt", name="one")
    many = run_stage(cli, tmp_path, path, "--preset", "burt", "--batch-chars", "2000", name="many")
    assert one[0].equals(many[0]) and one[1].equals(many[1])
