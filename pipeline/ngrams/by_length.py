"""Documents cut to their first words, and what a vocabulary marks on them (docs/method.md §2, "Short documents").

BURT §5.1 keeps "the top 3000 n-grams for each document"; a document with fewer candidates than
that keeps every one, and greedy marking then tiles it with the longest windows. The measure
(bench/ngram_presets.py, tests/ngrams/test_short_documents.py) runs a vocabulary on the real
samples' articles cut to their first K words (Chinese: 1.5 K characters) at whole sentences, and
whole; on whole articles, the English function-word edges of each article-length class.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from pipeline.ngrams import meaningfulness

# words; None: the whole article. 2,400: between the cap's reach and the sample's median article (2,978
# words), where a K that rises back to 3000 sooner than 0.6 per word does would be seen
BUCKETS = (150, 300, 600, 1200, 2400, None)
ARTICLE_CLASSES = (600, 1200, 2400, 4000)  # words: the classes of whole articles (each upper bound included)
CHARACTERS_PER_WORD = 1.5  # a Chinese bucket holds 1.5 times as many characters as the English one words


def units(lang: str, bucket: int | None) -> int | None:
    """The bucket's size in the language's tokens (words in English, characters in Chinese)."""
    if bucket is None:
        return None
    return round(bucket * CHARACTERS_PER_WORD) if lang == "zh" else bucket


def sentence_units(sentences: pa.Table, lang: str) -> pl.DataFrame:
    """``doc_id`` and the tokens of each sentence (``units``): words in English, characters but spaces in Chinese."""
    text = pl.from_arrow(sentences.select(["doc_id", "text"]))
    if lang == "zh":
        count = pl.col("text").str.replace_all(r"\s", "").str.len_chars()
    else:
        count = pl.col("text").str.split(" ").list.eval(pl.element().filter(pl.element() != "")).list.len()
    return text.select("doc_id", count.cast(pl.Int64).alias("units"))


def first_units(sentences: pa.Table, lang: str, size: int | None) -> pa.Table:
    """Each document of at least ``size`` tokens cut to its longest run of whole first sentences with at
    most ``size`` tokens (its first sentence whatever its length); ``None``: every document whole.

    Rows keep their columns (entities included), so the cut text is a sentences file for the stage.
    """
    if size is None:
        return sentences
    frame = sentence_units(sentences, lang).with_columns(
        pl.col("units").cum_sum().over("doc_id").alias("through"), pl.col("units").sum().over("doc_id").alias("total")
    )
    keep = (frame["total"] >= size) & ((frame["through"] <= size) | (frame["through"] == frame["units"]))
    return sentences.filter(pa.array(keep.to_numpy()))


def pmi_spans(marked: pl.DataFrame) -> pl.DataFrame:
    """The marked PMI (or corpus) spans, one row each: ``n``."""
    spans = marked.select(pl.col("spans").explode()).unnest("spans")
    return spans.filter(pl.col("source").is_not_null() & (pl.col("source") != "entity"))


def largest_order_share(marked: pl.DataFrame, max_n: int) -> float | None:
    """Share of the marked PMI spans that are of the largest order N (the windows of a vocabulary that keeps all)."""
    n = pmi_spans(marked)["n"].to_numpy()
    return float(np.mean(n == max_n)) if len(n) else None


def function_word_edges_by_article(ngrams: Path, sentences: pa.Table) -> list[dict]:
    """English whole articles by length class (``ARTICLE_CLASSES``): per class, the articles, their
    top-2000 PMI n-grams and the share of those with a function word at an edge (stats.json's
    ``function_word_edge_share``, pooled the same way, by class).

    The pooled share of whole articles mixes every length: an article with fewer candidates than K
    keeps all of them, function-word windows included, so the classes say where a difference lies.
    """
    words = sentence_units(sentences, "en").group_by("doc_id").agg(pl.col("units").sum().alias("words"))
    kept = pl.read_parquet(ngrams, columns=["doc_id", "ngram", "rank", "source"]).filter(
        (pl.col("source") != "entity") & (pl.col("rank") <= meaningfulness.TOP)
    )
    edged = meaningfulness.function_word_edged(kept["ngram"].to_arrow())
    top = (
        kept.select("doc_id", pl.Series("edged", edged))
        .group_by("doc_id")
        .agg(pl.len().alias("top"), pl.col("edged").sum())
    )
    frame = words.join(top, on="doc_id", how="left").fill_null(0)
    bounds = [0, *ARTICLE_CLASSES, None]
    rows = []
    for low, high in itertools.pairwise(bounds):
        part = frame.filter((pl.col("words") > low) & (pl.lit(high is None) | (pl.col("words") <= (high or 0))))
        total = int(part["top"].sum())
        rows.append(
            {
                "low": low,
                "high": high,
                "documents": part.height,
                "top": total,
                "share": int(part["edged"].sum()) / total if total else None,
            }
        )
    return rows
