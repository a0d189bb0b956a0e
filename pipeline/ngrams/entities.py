"""Entity spans (the surfaces of internal links) as n-gram candidates.

BURT §3.1 and ULR-BERT §4.1 use the entities of Wikipedia's links as high-quality n-grams
next to the PMI ones, and the "Named Entities" baseline masks only them (docs/method.md §1, §3). The
clean stage keeps each link's character span in its sentence; here they become token spans
(words in English, characters in Chinese), get the document PMI of their n-gram where it has
one (2 <= n <= N, inside one run), and are counted per document for the ``ngrams`` table.

Entity spans are kept where the links are, whatever they overlap: the marked output lists
them beside the greedy PMI spans with ``source = "entity"``, and each masking strategy picks
the sources it uses (BURT masking keeps the longest of overlapping spans).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from pipeline.ngrams.document_batches import DocumentBatch
from pipeline.ngrams.pmi import Order
from pipeline.ngrams.token_batch import REFERENCE_STRIP, TokenBatch
from pipeline.words import char_spans

MAX_N = 127  # the contract stores n as int8


@dataclass
class EntitySpans:
    sentence: np.ndarray  # batch-local sentence index
    start: np.ndarray  # token offset in the sentence (contract units)
    end: np.ndarray
    n: np.ndarray  # tokens in the span
    position: np.ndarray  # batch token index of the first token
    pmi: np.ndarray  # document PMI of the n-gram, NaN where it has none
    dropped: int  # spans with no token, or longer than MAX_N tokens


def locate(docs: DocumentBatch, tokens: TokenBatch, lang: str, reference: bool = False) -> EntitySpans:
    """Token spans of the batch's entities (character spans in the sentences' text).

    ``reference``: in the words of reference mode, where a word made only of the punctuation the
    released code strips is gone (the spans then still say where the link's brackets were).
    """
    entities = docs.entities
    offsets = entities.offsets.to_numpy()
    sentence = np.repeat(np.arange(len(entities)), np.diff(offsets))
    flat = entities.flatten()
    char_start = flat.field("start").to_numpy(zero_copy_only=False).astype(np.int64)
    char_end = flat.field("end").to_numpy(zero_copy_only=False).astype(np.int64)
    if lang == "zh":
        start, end = _trim_characters(docs.texts, sentence, char_start, char_end)
    else:
        start, end = _to_words(docs.texts, sentence, char_start, char_end, reference)
    n = _tokens_in(tokens, sentence, start, end, lang)
    ok = (n > 0) & (n <= MAX_N)
    sentence, start, end, n = sentence[ok], start[ok], end[ok], n[ok]
    # the token index where each span starts: tokens are ordered by (sentence, offset)
    sentence_start = np.searchsorted(tokens.sentence, np.arange(tokens.n_sentences + 1))
    position = np.empty(len(start), dtype=np.int64)
    for i, (s, a) in enumerate(zip(sentence.tolist(), start.tolist())):
        lo, hi = sentence_start[s], sentence_start[s + 1]
        position[i] = lo + np.searchsorted(tokens.offset[lo:hi], a)
    return EntitySpans(sentence, start, end, n, position, np.full(len(start), np.nan), int((~ok).sum()))


def _to_words(texts: pa.Array, sentence, char_start, char_end, reference: bool = False):
    """Word spans ``[a, b)`` covering each character span (in reference mode's words if ``reference``)."""
    start = np.zeros(len(sentence), dtype=np.int64)
    end = np.zeros(len(sentence), dtype=np.int64)
    cache: dict[int, tuple[list[int], list[int], list[int]]] = {}
    for i, s in enumerate(sentence.tolist()):
        if s not in cache:
            text = texts[s].as_py()
            spans = char_spans(text, "en")
            # words before each word index that survive reference mode's stripping
            kept = [0]
            for a, b in spans:
                kept.append(kept[-1] + (not reference or REFERENCE_STRIP.fullmatch(text[a:b]) is None))
            cache[s] = ([a for a, _ in spans], [b for _, b in spans], kept)
        word_starts, word_ends, kept = cache[s]
        start[i] = kept[bisect_right(word_ends, char_start[i])]  # first word ending after the span starts
        end[i] = kept[bisect_left(word_starts, char_end[i])]  # words starting before the span ends
    return start, end


def _trim_characters(texts: pa.Array, sentence, char_start, char_end):
    """Character spans without leading or trailing whitespace."""
    start, end = char_start.copy(), char_end.copy()
    for i, s in enumerate(sentence.tolist()):
        text = texts[s].as_py()
        while start[i] < end[i] and text[start[i]].isspace():
            start[i] += 1
        while end[i] > start[i] and text[end[i] - 1].isspace():
            end[i] -= 1
    return start, end


def _tokens_in(tokens: TokenBatch, sentence, start, end, lang) -> np.ndarray:
    if lang != "zh":
        return np.maximum(end - start, 0)
    scale = int(tokens.offset.max(initial=0)) + 2
    key = tokens.sentence * scale + tokens.offset  # increasing: tokens are in (sentence, offset) order
    return np.searchsorted(key, sentence * scale + end) - np.searchsorted(key, sentence * scale + start)


def score(spans: EntitySpans, orders: list[Order], order_scores: list[np.ndarray]) -> None:
    """Fill in the document PMI of each entity that is a counted n-gram (2 <= n <= N)."""
    for order, scores in zip(orders[1:], order_scores):
        at = np.flatnonzero(spans.n == order.n)
        group = order.group_at(spans.position[at])
        have = group >= 0
        spans.pmi[at[have]] = scores[group[have]]


def ngram_rows(spans: EntitySpans, tokens: TokenBatch, doc_ids: np.ndarray):
    """One row per distinct entity n-gram of each document, most frequent first (a polars frame)."""
    import polars as pl  # only here: importing it costs a run without entities 0.4 s

    frame = pl.DataFrame(
        {
            "doc": tokens.doc[spans.position],
            "ngram": tokens.ngram_text(spans.position, spans.n),
            "n": spans.n,
            "pmi": spans.pmi,
            "position": spans.position,
        }
    ).with_columns(pl.col("pmi").fill_nan(None))
    rows = (
        frame.group_by("doc", "ngram")
        .agg(pl.len().alias("count"), pl.col("n").first(), pl.col("pmi").first(), pl.col("position").min())
        .sort(["doc", "count", "position"], descending=[False, True, False])
    )
    return rows.with_columns(
        pl.Series("doc_id", doc_ids[rows["doc"].to_numpy()], dtype=pl.Int64),
        (pl.int_range(pl.len()).over("doc") + 1).alias("rank"),
    )
