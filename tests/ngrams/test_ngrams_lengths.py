"""The ngrams presets give n-grams of the lengths their papers describe, and stats.json reports them.

ULR-BERT §4 (the default, ``ulr``): "more than 50% of the top 2000 n-grams contain 2 ∼ 3 words, and
only less than 3% n-grams are longer than 4" (each document's top 2000), measured on 105 real
English articles. BURT §5.1 (``burt``): 3–4 tokens 40–60% of the top 2000, at most 0.5% longer
than 7, a vocabulary (distinct kept n-grams) of average length 4.6 ± 0.5 words (English) and
4.5 ± 0.5 characters (Chinese); docs/method.md §2, BENCHMARKS.md "N-gram presets".
"""

from __future__ import annotations

import json

import polars as pl
import pytest


def run(cli, data_root, out, *options):
    assert (
        cli(
            "ngrams",
            "--sentences",
            data_root / "reference_pmi" / "sentences.parquet",
            "--lang",
            "en",
            "--lowercase",
            "--out",
            out,
            *options,
        )
        == 0
    )
    return json.loads((out / "stats.json").read_text())


def test_default_ngram_lengths_match_the_paper(cli, data_root, tmp_path):
    stats = run(cli, data_root, tmp_path / "default")
    assert stats["provenance"]["params"]["min_count"] == 3
    top = stats["length_distribution"]["top2000"]
    assert top["2"] + top["3"] > 0.5 and top["5"] + top["6"] < 0.03
    # the distribution in stats.json is that of the output's top-2000 rows
    rows = pl.read_parquet(tmp_path / "default" / "ngrams.parquet").filter(
        (pl.col("source") == "pmi") & (pl.col("rank") <= 2000)
    )
    assert top["2"] == pytest.approx((rows["n"] == 2).mean(), abs=1e-4)
    assert sum(stats[f"kept_{n}grams"] for n in range(2, 7)) == stats["kept_ngrams"]


def test_every_ngram_kept_is_selectable_and_unlike_the_paper(cli, data_root, tmp_path):
    top = run(cli, data_root, tmp_path / "all", "--min-count", "1")["length_distribution"]["top2000"]
    assert top["2"] + top["3"] < 0.5 and top["6"] > top["2"]  # the longest one-off strings rank highest


def burt_lengths(out) -> tuple[dict, float]:
    """The top-2000 length shares (stats.json) and the mean length of the distinct kept PMI n-grams."""
    stats = json.loads((out / "stats.json").read_text())
    assert stats["provenance"]["params"]["preset"] == "burt"
    vocabulary = pl.read_parquet(out / "ngrams.parquet").filter(pl.col("source") == "pmi").unique("ngram")
    return stats["length_distribution"]["top2000"], vocabulary["n"].cast(pl.Float64).mean()


def test_burt_preset_gives_the_lengths_burt_describes(cli, data_root, tmp_path):
    """BURT §5.1: "nearly 50% of the top 2000 n-grams contain 3 ∼ 4 words ... only less than 0.5%
    n-grams are longer than 7 ... vocabularies of n-grams with average lengths of 4.6" (English)."""
    stats = run(cli, data_root, tmp_path / "burt", "--preset", "burt")
    assert stats["provenance"]["params"]["min_count"] == 1 and stats["provenance"]["params"]["max_n"] == 5
    top, mean = burt_lengths(tmp_path / "burt")
    assert 0.4 <= top["3"] + top["4"] <= 0.6
    assert sum(share for n, share in top.items() if int(n) > 7) <= 0.005
    assert 4.1 <= mean <= 5.1


def test_an_explicit_option_overrides_the_preset(cli, data_root, tmp_path):
    params = run(cli, data_root, tmp_path / "burt6", "--preset", "burt", "--max-n", "6")["provenance"]["params"]
    assert (params["preset"], params["max_n"], params["min_count"]) == ("burt", 6, 1)


def test_burt_preset_on_the_chinese_sample(cli, data_root, tmp_path):
    """BURT §5.1: Chinese vocabulary of average length 4.5 characters, 3 ∼ 4 characters nearly 50%."""
    from testdata import ZH_SAMPLE

    if not (data_root / ZH_SAMPLE).exists():
        pytest.skip(f"the Chinese sample {ZH_SAMPLE} is not in the data root")
    assert cli("extract", "--dump", data_root / ZH_SAMPLE, "--lang", "zh", "--out", tmp_path / "docs") == 0
    assert cli("convert", "--input", tmp_path / "docs", "--out", tmp_path / "simplified") == 0
    sentences = tmp_path / "sentences"
    assert (
        cli("clean", "--input", tmp_path / "simplified" / "shard-000.parquet", "--lang", "zh", "--out", sentences) == 0
    )
    out = tmp_path / "burt"
    assert (
        cli("ngrams", "--sentences", sentences / "shard-000.parquet", "--lang", "zh", "--preset", "burt", "--out", out)
        == 0
    )
    top, mean = burt_lengths(out)
    assert 0.4 <= top["3"] + top["4"] <= 0.6
    assert sum(share for n, share in top.items() if int(n) > 7) <= 0.005
    assert 4.0 <= mean <= 5.0
