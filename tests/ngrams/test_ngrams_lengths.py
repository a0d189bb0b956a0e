"""The ngrams defaults give n-grams of the lengths ULR-BERT §4 describes, and stats.json reports them.

ULR-BERT §4: "more than 50% of the top 2000 n-grams contain 2 ∼ 3 words, and only less than 3%
n-grams are longer than 4" (each document's top 2000), measured on 105 real English articles.
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
