"""Documents cut to their first words, and what a vocabulary marks on them (docs/method.md §2, "Short documents").

BURT §5.1 keeps "the top 3000 n-grams for each document"; a document with fewer candidates than
that keeps every one, and greedy marking then tiles it with the longest windows. The measure
(bench/ngram_presets.py, tests/ngrams/test_short_documents.py) runs a vocabulary on the real
samples' articles cut to their first K words (Chinese: 1.5 K characters) at whole sentences.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

BUCKETS = (150, 300, 600, 1200, None)  # words; None: the whole article
CHARACTERS_PER_WORD = 1.5  # a Chinese bucket holds 1.5 times as many characters as the English one words


def units(lang: str, bucket: int | None) -> int | None:
    """The bucket's size in the language's tokens (words in English, characters in Chinese)."""
    if bucket is None:
        return None
    return round(bucket * CHARACTERS_PER_WORD) if lang == "zh" else bucket


def first_units(sentences: pa.Table, lang: str, size: int | None) -> pa.Table:
    """Each document of at least ``size`` tokens cut to its longest run of whole first sentences with at
    most ``size`` tokens (its first sentence whatever its length); ``None``: every document whole.

    Rows keep their columns (entities included), so the cut text is a sentences file for the stage.
    """
    if size is None:
        return sentences
    text = pl.from_arrow(sentences.select(["doc_id", "text"]))
    if lang == "zh":
        count = pl.col("text").str.replace_all(r"\s", "").str.len_chars()
    else:
        count = pl.col("text").str.split(" ").list.eval(pl.element().filter(pl.element() != "")).list.len()
    frame = text.with_columns(count.cast(pl.Int64).alias("units")).with_columns(
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
