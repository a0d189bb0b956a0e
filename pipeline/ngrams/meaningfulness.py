"""Whether a kept n-gram vocabulary is made of meaningful units (docs/method.md §2, "Meaningfulness").

BURT §3.1 prunes the per-document PMI n-grams "to filter out meaningless n-grams", and the papers
judge their vocabularies by their lengths only (BURT §5.1, ULR-BERT §4). The ``ngrams`` stage
also reports, in ``stats.json`` under ``meaningfulness``, what a reader checks by eye:

* ``once_seen_share``: kept PMI n-grams that occur once in their document (recurrence alone is not
  the papers' bar: the released code keeps mostly once-seen n-grams too);
* ``entity_cut_share``: marked PMI spans that cut a link's entity span (start or end strictly
  inside it), which the released code's bracket rule never allows;
* ``function_word_edge_share`` (English): n-grams of each document's top 2000 that begin or end
  with one of ``FUNCTION_WORDS`` ("to the", "for an");
* ``pmi_token_coverage`` and ``kept_per_document``: the share of the tokens inside a marked PMI span and
  the kept n-grams per document, what n-gram masking has to draw from (BURT §3.2 masks n-grams up to
  the budget, 15% of the tokens: a vocabulary that covers less leaves the rest to entities and tokens);
* the lengths beside the papers' figures: the shares of 2–3, 3–4, more than 4 and more than 7
  tokens in each document's top 2000, the mean length of the kept n-grams and of the marked spans.

The counts are summed over batches (a ``Counter``) and turned into shares at the end, so the
figures do not depend on how the documents were batched.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

TOP = 2000  # ULR-BERT §4 and BURT §5.1 describe each document's top 2000
# 20 of the most frequent English function words (articles, prepositions, conjunctions, the copula)
FUNCTION_WORDS = (
    "the", "of", "and", "to", "a", "in", "is", "for", "on", "as",
    "by", "with", "that", "an", "at", "from", "or", "was", "it", "be",
)  # fmt: skip
# The papers' length figures, for the report: ULR-BERT §4 and BURT §5.1 (en, zh average lengths)
PAPER_LENGTHS = {
    "ulr": {"top2000_2_3": "> 0.5", "top2000_over_4": "< 0.03"},
    "burt": {"top2000_3_4": "about 0.5", "top2000_over_7": "< 0.005", "mean_length": {"en": 4.6, "zh": 4.5}},
}


def cutting(span_key_start, span_key_end, entity_key_start, entity_key_end) -> np.ndarray:
    """Per span, whether its start or end lies strictly inside an entity span.

    Keys are positions comparable across sentences (``sentence * scale + offset``), so an entity
    of another sentence never contains a span boundary. Entities may overlap: a boundary ``b`` is
    inside one when the furthest end among the entities starting before ``b`` is beyond it.
    """
    span_key_start, span_key_end = np.asarray(span_key_start), np.asarray(span_key_end)
    if len(entity_key_start) == 0:
        return np.zeros(len(span_key_start), dtype=bool)
    order = np.argsort(entity_key_start, kind="stable")
    starts = np.asarray(entity_key_start)[order]
    furthest = np.maximum.accumulate(np.asarray(entity_key_end)[order])

    def inside(boundary):
        before = np.searchsorted(starts, boundary, side="left")  # entities with start < boundary
        reach = np.where(before > 0, furthest[np.maximum(before - 1, 0)], boundary)
        return reach > boundary

    return inside(span_key_start) | inside(span_key_end)


def function_word_edged(ngrams: pa.Array) -> np.ndarray:
    """Per English n-gram (words joined by spaces), whether its first or last word is a function word."""
    if len(ngrams) == 0:
        return np.zeros(0, dtype=bool)
    lower = pc.utf8_lower(ngrams)
    first = pc.replace_substring_regex(lower, " .*$", "")
    last = pc.replace_substring_regex(lower, "^.* ", "")
    known = pa.array(FUNCTION_WORDS)
    edged = pc.or_(pc.is_in(first, value_set=known), pc.is_in(last, value_set=known))
    return edged.to_numpy(zero_copy_only=False)


def count_batch(
    counts: Counter,
    kept_n: np.ndarray,
    kept_count: np.ndarray,
    kept_rank: np.ndarray,
    kept_text: pa.Array | None,
    span_n: np.ndarray,
    span_cuts: np.ndarray | None,
) -> None:
    """Add one batch's counts: the kept PMI n-grams (length, count in the document, rank, text for
    English, else None) and the marked PMI spans (length, and whether each cuts an entity; None
    where the batch has no entity spans to cut)."""
    top = kept_rank <= TOP
    counts["kept_once_seen"] += int((kept_count == 1).sum())
    counts["kept_tokens"] += int(kept_n.sum())
    counts[f"top{TOP}_ngrams"] += int(top.sum())
    if kept_text is not None:
        counts[f"top{TOP}_function_word_edged"] += int(function_word_edged(kept_text.filter(pa.array(top))).sum())
    if span_cuts is not None:
        counts["pmi_spans_checked"] += len(span_n)
        counts["pmi_spans_cutting_entities"] += int(np.asarray(span_cuts).sum())


def summary(counts: Counter, max_n: int, lang: str) -> dict:
    """The ``meaningfulness`` entry of ``stats.json`` (shares rounded to 4 places; None: not defined)."""

    def share(part, whole):
        return round(part / whole, 4) if whole else None

    top = counts[f"top{TOP}_ngrams"]
    top_n = {n: counts[f"top{TOP}_{n}grams"] for n in range(2, max_n + 1)}
    return {
        "once_seen_share": share(counts["kept_once_seen"], counts["kept_ngrams"]),
        "entity_cut_share": share(counts["pmi_spans_cutting_entities"], counts["pmi_spans_checked"]),
        "function_word_edge_share": share(counts[f"top{TOP}_function_word_edged"], top) if lang == "en" else None,
        "function_words": list(FUNCTION_WORDS) if lang == "en" else None,
        "pmi_token_coverage": share(counts["tokens_in_pmi_spans"], counts["tokens"]),
        "kept_per_document": share(counts["kept_ngrams"], counts["documents"]),
        "lengths": {
            f"top{TOP}_2_3": share(top_n.get(2, 0) + top_n.get(3, 0), top),
            f"top{TOP}_3_4": share(top_n.get(3, 0) + top_n.get(4, 0), top),
            f"top{TOP}_over_4": share(sum(v for n, v in top_n.items() if n > 4), top),
            f"top{TOP}_over_7": share(sum(v for n, v in top_n.items() if n > 7), top),
            "mean_kept": share(counts["kept_tokens"], counts["kept_ngrams"]),
            "mean_marked_span": share(counts["tokens_in_pmi_spans"], counts["pmi_spans"]),
        },
        "paper_lengths": PAPER_LENGTHS,
    }
