"""Per-document PMI n-grams in plain Python: the specification of the fast implementation.

This is the algorithm of the authors' released code (``ulr_code/scripts/src/pmi.py`` in
Liyianan/ULR: ``compute_pmi`` and ``ngram_match``), written from docs/method.md §2 with a dict per
n-gram order as that code has, and extended with the paper's formula. It is deliberately
simple and slow; ``pipeline.ngrams.pmi`` must give exactly the same result, and the tests
and ``bench/pmi.py`` hold it to that (the benchmark's baseline is this module).

Scores, for an n-gram ``w = x_1 .. x_n`` (n >= 2) counted in one document:

* ``reference``: ``log c(w) - log c(x_1) - ... - log c(x_n)`` (natural logs, subtracted left
  to right, as the released code does; no totals, no 1/|w|; ``normalise`` divides by n — the
  code's commented-out ``/= n`` line).
* ``paper`` (BURT §3.1 / ULR-BERT §3.1, docs/method.md §2): ``(1/|w|) (log P(w) - sum_k log P(x_k))``
  with ``P(w) = c_n(w) / T_n`` and ``P(x) = c_1(x) / T_1``, ``T_n`` the number of n-gram
  positions of order n in the document.

**Ties.** ``paper`` is computed from the exact ratio of counts ``r = c(w) / (c(x_1) ... c(x_n))``
(integers, one correctly rounded division, then one log) as ``(log r - log T_n + n log T_1) / n``.
Subtracting the logs one by one, as the released code does, two n-grams whose scores are equal
on paper (the same unigram counts in another order, or ratios such as 3/6 and 1/2) can differ
in the last bit, and the tie is then broken by rounding noise; with the ratio, n-grams of one
order with equal scores on paper have equal floats in a document, and the tie rule below
decides. ``reference`` keeps the released code's left-to-right subtraction: it is the released
code's behaviour, noise included, that its reference outputs record.

The top ``k`` n-grams of orders 2..N are kept; ties in score go to the shorter n-gram, then
to the one that occurs first in the document (the released code's stable sort over a dict
filled in that order).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from pipeline.ngrams.token_batch import REFERENCE_STRIP

"""Characters the released code deletes before splitting a sentence into words."""


def reference_tokens(sentence: str) -> list[str]:
    return REFERENCE_STRIP.sub("", sentence).split()


def has_bracket(ngram: str) -> bool:
    return "[" in ngram or "]" in ngram


def cuts(start: int, end: int, entities: Iterable[tuple[int, int]]) -> bool:
    """Whether the n-gram ``[start, end)`` starts or ends strictly inside one of the entity spans."""
    return any(a < start < b or a < end < b for a, b in entities)


def count_ngrams(
    sentences: list[list[str]], max_n: int, skip_brackets: bool, entities: list[list[tuple[int, int]]] | None = None
) -> list[dict[str, int]]:
    """``vocab[n - 1][ngram] = count``, filled in order of first occurrence, never across sentences.

    ``entities``: per sentence, the word spans ``(start, end)`` of its links; an occurrence of an
    n-gram (n >= 2) that cuts one is not counted (the released code's bracket rule).
    """
    vocab: list[dict[str, int]] = []
    for n in range(1, max_n + 1):
        counts: dict[str, int] = {}
        for s, words in enumerate(sentences):
            for i in range(len(words) - n + 1):
                ngram = " ".join(words[i : i + n])
                if skip_brackets and has_bracket(ngram):
                    continue
                if n >= 2 and entities and cuts(i, i + n, entities[s]):
                    continue
                counts[ngram] = counts.get(ngram, 0) + 1
        vocab.append(counts)
    return vocab


def score_ngrams(vocab: list[dict[str, int]], mode: str, normalise: bool = False) -> list[dict[str, float]]:
    """Scores of every n-gram of order >= 2, as ``[{ngram: score} for n in 2..N]``."""
    if mode == "reference":
        # np.log and left-to-right subtraction, as the released code does, so the floats (and
        # its tie-breaking at the top-K cut, reference outputs included) are the same bit for bit.
        log_unigram = {word: np.log(count) for word, count in vocab[0].items()}
        scored = []
        for n, counts in enumerate(vocab[1:], start=2):
            scores = {}
            for ngram, count in counts.items():
                score = np.log(count)
                for word in ngram.split():
                    score -= log_unigram[word]
                scores[ngram] = score / n if normalise else score
            scored.append(scores)
        return scored
    if mode != "paper":
        raise ValueError(f"unknown mode {mode!r}")
    unigrams = vocab[0]
    log_total_1 = np.log(sum(unigrams.values())) if unigrams else 0.0
    scored = []
    for n, counts in enumerate(vocab[1:], start=2):
        log_total = np.log(sum(counts.values())) if counts else 0.0
        scores = {}
        for ngram, count in counts.items():
            # exact integers, one correctly rounded division (Python's int / int), one log
            ratio = count / math.prod(unigrams[word] for word in ngram.split())
            scores[ngram] = (np.log(ratio) - log_total + n * log_total_1) / n
        scored.append(scores)
    return scored


def top_k(vocab, scored, k: int, min_count: int = 1, threshold: float = -math.inf) -> list[tuple[str, int, int, float]]:
    """The kept n-grams, best first: ``(ngram, n, count, score)``."""
    candidates = [
        (ngram, n, vocab[n - 1][ngram], score)
        for n, scores in enumerate(scored, start=2)
        for ngram, score in scores.items()
        if vocab[n - 1][ngram] >= min_count and score >= threshold
    ]
    candidates.sort(key=lambda item: item[3], reverse=True)  # stable: shorter, then earlier, first
    return candidates[:k]


def mark(words: list[str], kept: set[str], max_n: int, entities=()) -> list[tuple[int, int]]:
    """Greedy left-to-right matching, longest n-gram first: ``[(start, end)]`` word offsets (never
    an occurrence that cuts one of the sentence's ``entities``)."""
    spans = []
    i = 0
    while i < len(words):
        for n in range(max_n, 1, -1):
            if i + n <= len(words) and " ".join(words[i : i + n]) in kept and not cuts(i, i + n, entities):
                spans.append((i, i + n))
                i += n
                break
        else:
            i += 1
    return spans


def render(words: list[str], spans: Iterable[tuple[int, int]]) -> str:
    """A marked sentence as ``ngram_match`` prints it: matched n-grams wrapped in ``( )``."""
    out, i = [], 0
    for start, end in spans:
        out.extend(words[i:start])
        out.append("(" + " ".join(words[start:end]) + ")")
        i = end
    out.extend(words[i:])
    return " ".join(out)


def process_document(
    sentences: list[str],
    mode: str = "reference",
    max_n: int = 6,
    k: int = 3000,
    normalise: bool = False,
    lowercase: bool = False,
    min_count: int = 1,
    threshold: float = -math.inf,
    entities: list[list[tuple[int, int]]] | None = None,
):
    """One document: ``(kept n-grams best first, per-sentence words, per-sentence spans)``.

    ``entities``: per sentence, the token spans of its links (none may be cut)."""
    if mode == "reference":
        words = [reference_tokens(s) for s in sentences]
    else:
        words = [(s.lower() if lowercase else s).split() for s in sentences]
    vocab = count_ngrams(words, max_n, skip_brackets=mode == "reference", entities=entities)
    kept = top_k(vocab, score_ngrams(vocab, mode, normalise), k, min_count, threshold)
    kept_set = {ngram for ngram, *_ in kept}
    entities = entities or [[] for _ in words]
    return kept, words, [mark(w, kept_set, max_n, e) for w, e in zip(words, entities)]
