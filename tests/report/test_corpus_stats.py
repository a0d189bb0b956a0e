"""The corpus-stats report page: counts of every stage per language and the kept n-gram lengths."""

from __future__ import annotations

import json

import polars as pl
import pytest
from testdata import DEMO_DATA

from pipeline.cli import main


@pytest.fixture(scope="module")
def demo_stages(tmp_path_factory):
    """extract → clean → ngrams on the embedded English demo dump (real stage outputs, seconds)."""
    root = tmp_path_factory.mktemp("stages")
    docs, sentences, ngrams = root / "corpus/en/docs/demo", root / "corpus/en/sentences/demo", root / "ngrams/en/demo"
    dump = DEMO_DATA / "wiki" / "en" / "enwiki-demo-pages-articles.xml"
    assert (
        main(
            [
                "extract",
                "--dump",
                str(dump),
                "--lang",
                "en",
                "--shards",
                "1",
                "--out",
                str(docs),
                "--stats",
                str(docs / "extract-stats.json"),
            ]
        )
        == 0
    )
    assert main(["clean", "--input", str(docs / "shard-000.parquet"), "--lang", "en", "--out", str(sentences)]) == 0
    assert (
        main(
            [
                "ngrams",
                "--sentences",
                str(sentences / "shard-000.parquet"),
                "--lang",
                "en",
                "--out",
                str(ngrams / "shard-000"),
                # the demo's 15 short documents repeat almost no n-gram: every n-gram a candidate, so that
                # the PMI lengths have rows (the ulr preset's other knobs as they are)
                "--min-count",
                "1",
            ]
        )
        == 0
    )
    return root


def test_counts_per_stage_and_ngram_lengths(demo_stages, tmp_path):
    stats = [
        demo_stages / "corpus/en/docs/demo/extract-stats.json",
        demo_stages / "corpus/en/sentences/demo/shard-000.stats.json",
        demo_stages / "ngrams/en/demo/shard-000/stats.json",
    ]
    parquet = demo_stages / "ngrams/en/demo/shard-000/ngrams.parquet"
    assert main(["corpus-stats", "--stats", *map(str, stats), "--ngrams", str(parquet), "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "corpus_stats.json").read_text())
    extract = json.loads(stats[0].read_text())
    assert summary["stages"]["extract"]["en"]["articles_kept"] == extract["articles_kept"] > 0
    assert summary["stages"]["extract"]["en"]["redirects_skipped"] == extract["redirects_skipped"]
    assert summary["stages"]["clean"]["en"]["sentences_kept"] == json.loads(stats[1].read_text())["sentences_kept"]
    kept = pl.read_parquet(parquet)
    for source in ("pmi", "entity"):
        by_n = kept.filter(pl.col("source") == source).group_by("n").len().sort("n")
        assert summary["ngram_lengths"][f"en ulr {source}"] == [{"n": n, "count": c} for n, c in by_n.iter_rows()]
    assert min(row["n"] for row in summary["ngram_lengths"]["en ulr pmi"]) >= 2  # PMI scores orders 2..N only
    assert summary["stages"]["ngrams (ulr)"]["en"]["documents"] > 0  # each preset counted apart (default: ulr)
    assert isinstance(summary["stages"]["extract"]["en"]["pages_seen"], int)
    page = (tmp_path / "corpus_stats.html").read_text()
    assert "<h2>extract</h2>" in page and "<h2>Kept n-grams by length</h2>" in page and "articles_kept" in page
    assert (tmp_path / "ngram_lengths.png").read_bytes()[:4] == b"\x89PNG"


def test_a_file_that_is_no_stats_file_is_refused(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text('{"pages": 3}')
    assert main(["corpus-stats", "--stats", str(bad), "--out", str(tmp_path / "out")]) == 2
    assert "provenance.stage" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_whole_corpus_figures_of_the_sample_are_not_summed_over_shards(tmp_path):
    from pipeline.report.corpus_stats import read_stats

    paths = []
    for shard, kept in (("shard-000", 140), ("shard-001", 141)):
        path = tmp_path / "sample" / "en" / "demo" / f"{shard}.stats.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            json.dumps(
                {
                    "sentences_in": kept,
                    "sentences_out": kept,
                    "corpus_sentences": 281,
                    "sample_size": 281,
                    "provenance": {"stage": "sample", "params": {}},
                }
            )
        )
        paths.append(path)
    assert read_stats(paths)["sample"]["en"] == {
        "sentences_in": 281,
        "sentences_out": 281,
        "corpus_sentences": 281,
        "sample_size": 281,
    }
