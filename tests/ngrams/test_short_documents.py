"""The presets on short documents (docs/method.md §2, "Short documents"; BENCHMARKS "N-gram presets").

The released pmi.py keeps the top 3000 n-grams of each document with no threshold, so a document with
fewer candidates keeps every one and greedy marking tiles it with 6-word windows. The presets keep
their meaning at every length: on the real samples' articles cut to their first 150, 300, 600,
1,200 and 2,400 words (Chinese: 1.5 times as many characters) and whole, at most 60% of the words
inside a marked PMI span and at most 10% of the spans of the largest order, and from 300 words on at
least 15% inside one; on whole articles no span cuts an entity, and the English articles the released
code does not tile keep its function-word edges. Reference mode stays the released code.
"""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pmi_python import count_ngrams, reference_tokens, score_ngrams, top_k
from testdata import EN_SAMPLE, ZH_SAMPLE

from pipeline import ngram_presets
from pipeline.ngrams import by_length, released_rule

# A short English article (about 230 words, in the clean stage's layout: lower-cased, one sentence a row)
ENGLISH_ARTICLE = [
    "the river thames is a river that flows through southern england including london",
    "at 215 miles it is the longest river entirely in england and the second longest in the united kingdom",
    "the river rises at thames head in gloucestershire and flows into the north sea near tilbury",
    "the thames drains the whole of greater london and its tidal section reaches up to teddington lock",
    "its lower reaches form the thames estuary where the water is salty and the tide rises and falls twice a day",
    "the river has given its name to several places and to the thames barrier that protects london from floods",
    "over its long history the river has been a route for trade and a source of water for the city",
    "many bridges cross the river in london including tower bridge and london bridge",
    "the thames path is a national trail that follows the river from its source to the barrier",
    "rowing races such as the boat race between oxford and cambridge are held on the river each spring",
    "the water quality of the river was very poor in the nineteenth century when sewage flowed into it",
    "since then the river has been cleaned and many fish and birds have returned to its banks",
    "the river thames remains one of the best known rivers in the world",
]
# its links: (sentence, first word, words)
ENGLISH_LINKS = [(0, 9, 2), (1, 17, 2), (2, 4, 2), (2, 12, 2), (7, 8, 2), (7, 11, 2), (9, 5, 2)]
# A short Chinese article (about 470 characters, simplified, one sentence a row)
CHINESE_ARTICLE = [
    "长江是中国第一长河，也是亚洲最长的河流，全长约六千三百公里。",
    "长江发源于青藏高原的唐古拉山脉，向东流经青海、西藏、四川、云南、重庆、湖北、湖南、江西、安徽、江苏和上海。",
    "长江在上海注入东海，流域面积约一百八十万平方公里，约占中国陆地面积的五分之一。",
    "长江流域是中国经济最发达的地区之一，长江沿岸有许多重要的城市，例如重庆、武汉、南京和上海。",
    "长江三峡是长江上游最著名的峡谷，由瞿塘峡、巫峡和西陵峡组成，风景十分壮丽。",
    "三峡大坝建在西陵峡中段的湖北宜昌，是世界上最大的水力发电工程之一。",
    "三峡大坝于一九九四年开工，二零零六年大坝全线建成，二零一二年电站全部投入运行。",
    "长江中下游平原地势低平，湖泊众多，洞庭湖和鄱阳湖是长江中游最大的两个湖泊。",
    "长江中下游平原气候温暖湿润，是中国重要的粮食产区，盛产稻米和淡水鱼，被称为鱼米之乡。",
    "长江的航运十分发达，货物运输量居世界内河首位，被称为黄金水道。",
    "长江流域的文化历史悠久，是中华文明的重要发源地之一，长江流域出土了大量新石器时代的遗址。",
    "近年来，中国政府加强了长江流域的生态保护，长江的水质逐步改善，长江江豚等珍稀动物的数量开始回升。",
    "长江与黄河一起被称为中国的母亲河，长江流域和黄河流域共同孕育了中华文明。",
]
CHINESE_LINKS = [(0, 3, 2), (1, 5, 4), (5, 0, 4), (7, 17, 3), (7, 21, 3), (12, 3, 2)]


def sentences_file(path, article, links, lang, doc_id=1):
    """A sentences file of one article, with its links as character spans (the clean stage's layout)."""
    entities = []
    for s, text in enumerate(article):
        spans = []
        for sentence, first, length in links:
            if sentence != s:
                continue
            if lang == "zh":
                start, end = first, first + length
            else:
                words = text.split(" ")
                start = len(" ".join(words[:first])) + (1 if first else 0)
                end = start + len(" ".join(words[first : first + length]))
            spans.append({"start": start, "end": end, "target": text[start:end]})
        entities.append(spans)
    table = pa.table(
        {
            "doc_id": pa.array([doc_id] * len(article), pa.int64()),
            "sent_id": pa.array(range(len(article)), pa.int32()),
            "text": pa.array(article, pa.string()),
            "entities": pa.array(
                entities, pa.list_(pa.struct([("start", pa.int32()), ("end", pa.int32()), ("target", pa.string())]))
            ),
        }
    )
    pq.write_table(table, path)
    return path


def run(cli, sentences, out, lang, *options):
    assert cli("ngrams", "--sentences", sentences, "--lang", lang, *options, "--out", out) == 0
    stats = json.loads((out / "stats.json").read_text())
    marked = pl.read_parquet(out / "marked.parquet")
    return {
        "coverage": stats["meaningfulness"]["pmi_token_coverage"] or 0.0,
        "largest": by_length.largest_order_share(marked, stats["provenance"]["params"]["max_n"]) or 0.0,
        "cuts": stats["meaningfulness"]["entity_cut_share"],
        "fw": stats["meaningfulness"]["function_word_edge_share"],
        "kept": stats["kept_ngrams"],
        "tokens": stats["tokens"],
        "params": stats["provenance"]["params"],
    }


def test_a_short_english_article_is_tiled_by_the_released_code_and_not_by_the_presets(tmp_path, cli):
    sentences = sentences_file(tmp_path / "en.parquet", ENGLISH_ARTICLE, ENGLISH_LINKS, "en")
    released = run(cli, sentences, tmp_path / "reference", "en", "--mode", "reference")
    assert released["coverage"] > 0.9 and released["largest"] > 0.5  # 6-word windows: the fault
    for preset in ("ulr", "burt"):
        ours = run(cli, sentences, tmp_path / preset, "en", "--preset", preset)
        assert ours["params"]["top_k_per_token"] == 0.6
        assert ours["kept"] == math.ceil(0.6 * ours["tokens"])  # the cap binds: fewer candidates than 3000
        assert 0.15 <= ours["coverage"] <= 0.6 and ours["largest"] <= 0.1
        assert ours["cuts"] == 0.0


def test_the_cap_keeps_the_released_ranking(tmp_path, cli):
    """With the cap the kept n-grams are the released code's top min(3000, ceil(0.6 T)) of each document
    (tests/pmi_python.py, the plain-Python specification), two documents of different lengths in one file."""
    first = sentences_file(tmp_path / "a.parquet", ENGLISH_ARTICLE, [], "en", doc_id=1)
    second = sentences_file(tmp_path / "b.parquet", ENGLISH_ARTICLE[:4], [], "en", doc_id=2)
    both = tmp_path / "both.parquet"
    pq.write_table(pa.concat_tables([pq.read_table(first), pq.read_table(second)]), both)
    run(cli, both, tmp_path / "out", "en", "--preset", "burt", "--no-entities")
    got = pl.read_parquet(tmp_path / "out" / "ngrams.parquet")
    for doc_id, article in ((1, ENGLISH_ARTICLE), (2, ENGLISH_ARTICLE[:4])):
        words = [reference_tokens(sentence) for sentence in article]
        vocab = count_ngrams(words, 6, skip_brackets=True)
        k = min(3000, math.ceil(0.6 * sum(map(len, words))))
        expected = [ngram for ngram, *_ in top_k(vocab, score_ngrams(vocab, "reference"), k)]
        assert got.filter(pl.col("doc_id") == doc_id).sort("rank")["ngram"].to_list() == expected


def test_a_ramp_raises_k_linearly_from_the_cap(tmp_path, cli):
    """--top-k-ramp-tokens W0 --top-k-full-tokens W1: K is the cap up to W0 tokens, then rises linearly
    to --top-k at W1, on the released ranking (tests/pmi_python.py), two documents of different lengths."""
    first = sentences_file(tmp_path / "a.parquet", ENGLISH_ARTICLE, [], "en", doc_id=1)
    second = sentences_file(tmp_path / "b.parquet", ENGLISH_ARTICLE[:4], [], "en", doc_id=2)
    both = tmp_path / "both.parquet"
    pq.write_table(pa.concat_tables([pq.read_table(first), pq.read_table(second)]), both)
    ramp = ["--top-k-ramp-tokens", "100", "--top-k-full-tokens", "400", "--top-k", "500"]
    got = run(cli, both, tmp_path / "out", "en", "--mode", "reference", "--top-k-per-token", "0.6", *ramp)
    assert (got["params"]["top_k_ramp_tokens"], got["params"]["top_k_full_tokens"]) == (100, 400)
    kept = pl.read_parquet(tmp_path / "out" / "ngrams.parquet")
    for doc_id, article in ((1, ENGLISH_ARTICLE), (2, ENGLISH_ARTICLE[:4])):
        words = [reference_tokens(sentence) for sentence in article]
        size = sum(map(len, words))
        k = math.ceil(0.6 * size) if size <= 100 else math.ceil(60 + (500 - 60) * (size - 100) / 300)
        assert (doc_id == 1) == (size > 100)  # one document on the ramp, one under it
        vocab = count_ngrams(words, 6, skip_brackets=True)
        expected = [ngram for ngram, *_ in top_k(vocab, score_ngrams(vocab, "reference"), k)]
        assert kept.filter(pl.col("doc_id") == doc_id).sort("rank")["ngram"].to_list() == expected


def test_a_short_chinese_article_keeps_a_burt_vocabulary(tmp_path, cli):
    """A fixed threshold 3 is out of reach on a short document (a paper-mode score is at most
    (1 - 1/n) log T); scaled by log T / log 3000 it marks what BURT's masking needs."""
    sentences = sentences_file(tmp_path / "zh.parquet", CHINESE_ARTICLE, CHINESE_LINKS, "zh")
    fixed = run(cli, sentences, tmp_path / "fixed", "zh", "--preset", "burt_recurring")  # the former burt
    ours = run(cli, sentences, tmp_path / "burt", "zh", "--preset", "burt")
    assert ours["params"]["threshold_tokens"] == 3000 and ours["params"]["threshold"] == 3.0
    assert fixed["coverage"] < 0.15 <= ours["coverage"] <= 0.6
    assert ours["largest"] <= 0.1 and ours["cuts"] == 0.0


def test_reference_mode_and_explicit_modes_keep_k_for_every_document():
    """``--mode reference`` is the released pmi.py: no short-document knob unless one is given."""
    given = dict.fromkeys(ngram_presets.KNOBS)
    assert ngram_presets.knobs("ulr", "en", given)["top_k_per_token"] == 0.6
    assert ngram_presets.knobs("ulr", "en", {**given, "mode": "reference"})["top_k_per_token"] is None
    assert (
        ngram_presets.knobs("ulr", "en", {**given, "mode": "reference", "top_k_per_token": 0.5})["top_k_per_token"]
        == 0.5
    )
    assert ngram_presets.knobs("burt", "zh", given)["threshold_tokens"] == 3000
    assert ngram_presets.knobs("burt", "zh", {**given, "mode": "corpus"})["threshold_tokens"] is None
    assert ngram_presets.knobs("ulr", "zh", given)["threshold_tokens"] is None
    ramp = {**given, "top_k_ramp_tokens": 1200, "top_k_full_tokens": 3000}
    assert ngram_presets.knobs("burt", "en", given)["top_k_full_tokens"] is None  # no preset ramps
    assert ngram_presets.knobs("burt", "en", ramp)["top_k_full_tokens"] == 3000
    assert ngram_presets.knobs("burt", "en", {**ramp, "mode": "reference"})["top_k_per_token"] is None


def test_the_plan_text_says_what_departs_from_the_released_code():
    chosen = ngram_presets.knobs("burt", "en", dict.fromkeys(ngram_presets.KNOBS))
    text = ngram_presets.describe("burt", "en", chosen, lowercase=True)
    assert text.startswith("burt (reference mode, the released pmi.py; N 6, K 3000")
    assert "K at most 0.6 per word" in text and "case-sensitive" in text and "69.7% of the marked lines" in text
    assert "case-sensitive" not in ngram_presets.describe("burt", "en", chosen, lowercase=False)
    zh = ngram_presets.describe(
        "burt", "zh", ngram_presets.knobs("burt", "zh", dict.fromkeys(ngram_presets.KNOBS)), False
    )
    assert "log T / log 3000" in zh and "pmi.py skips" not in zh


def test_bracketed_puts_each_link_in_brackets():
    table = pa.table(
        {
            "doc_id": pa.array([1], pa.int64()),
            "sent_id": pa.array([0], pa.int32()),
            "text": ["the river thames flows into the north sea"],
            "entities": [[{"start": 4, "end": 17, "target": "x"}, {"start": 32, "end": 41, "target": "y"}]],
        }
    )
    out = released_rule.bracketed(table)
    assert out.column("text").to_pylist() == ["the [river thames] flows into the [north sea]"]
    assert "entities" not in out.column_names


# --- the real samples -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def samples(data_root, tmp_path_factory):
    from pipeline.cli import main

    work = tmp_path_factory.mktemp("short-samples")
    steps = [
        ["extract", "--dump", data_root / EN_SAMPLE, "--lang", "en", "--out", work / "en-docs"],
        ["clean", "--input", work / "en-docs/shard-000.parquet", "--lang", "en", "--out", work / "en"],
        ["extract", "--dump", data_root / ZH_SAMPLE, "--lang", "zh", "--out", work / "zh-docs"],
        ["convert", "--input", work / "zh-docs", "--out", work / "zh-simplified"],
        ["clean", "--input", work / "zh-simplified/shard-000.parquet", "--lang", "zh", "--out", work / "zh"],
    ]
    for argv in steps:
        assert main([str(a) for a in argv]) == 0
    return work


@pytest.mark.parametrize("lang, preset", [("en", "burt"), ("zh", "ulr"), ("zh", "burt")])
def test_presets_keep_their_meaning_at_every_length(samples, cli, lang, preset):
    table = pq.read_table(samples / lang / "shard-000.parquet")
    lowercase = ["--lowercase"] if lang == "en" else []
    for bucket in by_length.BUCKETS:
        path = samples / f"{lang}-{bucket}.parquet"
        pq.write_table(by_length.first_units(table, lang, by_length.units(lang, bucket)), path)
        got = run(cli, path, samples / f"{lang}-{preset}-{bucket}", lang, "--preset", preset, *lowercase)
        assert got["coverage"] <= 0.6 and got["largest"] <= 0.1, (bucket, got)
        if bucket is None or bucket >= 300:
            assert got["coverage"] >= 0.15, (bucket, got)
        assert got["cuts"] == 0.0
        if bucket is None and lang == "en":  # whole articles: no more function-word edges than the released code
            released = run(cli, path, samples / "en-reference", "en", "--mode", "reference", *lowercase)
            assert got["fw"] <= released["fw"] + 0.05


def test_whole_articles_the_released_code_does_not_tile_keep_its_function_word_edges(samples, cli):
    """The pooled whole-article figure counts the released code's windows on short articles (its top
    2000 is a third to a half function-word edged under 2,400 words); the presets' top 2000 is the
    released code's over 4,000 words and within 5 points over 2,400 (BENCHMARKS "N-gram presets")."""
    english = samples / "en/shard-000.parquet"
    table = pq.read_table(english)
    options = ["--lang", "en", "--lowercase"]
    assert cli("ngrams", "--sentences", english, *options, "--mode", "reference", "--out", samples / "fw-ref") == 0
    assert cli("ngrams", "--sentences", english, *options, "--preset", "burt", "--out", samples / "fw-burt") == 0
    released = by_length.function_word_edges_by_article(samples / "fw-ref/ngrams.parquet", table)
    ours = by_length.function_word_edges_by_article(samples / "fw-burt/ngrams.parquet", table)
    assert [c["documents"] for c in released] == [c["documents"] for c in ours]
    assert sum(c["documents"] for c in ours) == 105
    for old, new in zip(released, ours, strict=True):
        if old["high"] is None:  # over 4,000 words K >= 2000: the same top 2000
            assert (new["top"], new["share"]) == (old["top"], old["share"])
        elif old["low"] >= 2400:
            assert abs(new["share"] - old["share"]) <= 0.05, (old, new)
        else:  # the released code's windows
            assert old["share"] >= 0.3 and new["share"] < old["share"] - 0.1, (old, new)


def test_released_code_tiles_the_real_short_articles(samples, cli):
    """What the short-document rule is for: the released code on the English articles' first 300 words."""
    path = samples / "en-cut-300.parquet"
    pq.write_table(by_length.first_units(pq.read_table(samples / "en/shard-000.parquet"), "en", 300), path)
    got = run(cli, path, samples / "en-reference-300", "en", "--mode", "reference", "--lowercase")
    assert got["coverage"] > 0.95 and got["largest"] > 0.5


def test_first_units_cuts_at_whole_sentences(samples):
    table = pq.read_table(samples / "en/shard-000.parquet")
    cut = pl.from_arrow(by_length.first_units(table, "en", 150).select(["doc_id", "sent_id", "text"]))
    words = (
        cut.with_columns(pl.col("text").str.split(" ").list.len().alias("w"))
        .group_by("doc_id")
        .agg(pl.col("w").sum(), pl.col("sent_id").max(), pl.len())
    )
    assert (words["sent_id"] + 1 == words["len"]).all()  # each article's first sentences, in order
    assert (words["w"] <= 150).mean() > 0.95  # only an article whose first sentence is longer goes past
    assert words.height == 95


def test_the_released_rule_departure_is_the_plans(samples, cli):
    """The figure in the plan's preset text (ngram_presets.RELEASED_RULE_DEPARTURE), re-measured."""
    english = samples / "en/shard-000.parquet"
    bracketed = samples / "en-bracketed.parquet"
    pq.write_table(released_rule.bracketed(pq.read_table(english)), bracketed)
    options = ["--lang", "en", "--lowercase", "--mode", "reference"]
    assert cli("ngrams", "--sentences", english, *options, "--out", samples / "rule-ours") == 0
    assert cli("ngrams", "--sentences", bracketed, *options, "--no-entities", "--out", samples / "rule-released") == 0
    found = released_rule.departure(samples / "rule-ours", samples / "rule-released")
    assert found["kept_only_ours"] == pytest.approx(ngram_presets.RELEASED_RULE_DEPARTURE["kept"], abs=0.001)
    assert found["lines_differ"] == pytest.approx(ngram_presets.RELEASED_RULE_DEPARTURE["lines"], abs=0.001)
    assert np.isclose(found["lines"], 18_558)
