"""Sentence segmentation that works offline (sentences are the unit of pre-training, docs/method.md §1).

English: Bling Fire's sentence breaker (a compiled model shipped inside the PyPI package,
so nothing is downloaded; pysbd gives similar splits at ~25× the cost, NLTK Punkt needs a
data download). Chinese: a sentence ends at 。！？；… or !?; (full- or half-width), plus any
closing quotes and brackets that follow. Both run per line: a line of the docs text is a
paragraph or a heading, and no sentence crosses it.
"""

from __future__ import annotations

import re

import blingfire

_ZH_END = re.compile(r"(?:[。！？；!?;]|…+|\.{3,})+[」』”’〕）)》〉\"']*")


def _english(line: str) -> list[tuple[int, int]]:
    _, offsets = blingfire.text_to_sentences_and_offsets(line)
    return [(start, end) for start, end in offsets if end > start]


def _chinese(line: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for match in _ZH_END.finditer(line):
        spans.append((start, match.end()))
        start = match.end()
    if start < len(line):
        spans.append((start, len(line)))
    return spans


_SPLITTERS = {"en": _english, "zh": _chinese}


def split(text: str, lang: str) -> list[tuple[int, int]]:
    """Sentence spans ``[start, end)`` of ``text``, stripped of surrounding whitespace."""
    splitter = _SPLITTERS[lang]
    spans = []
    offset = 0
    for line in text.split("\n"):
        if line.strip():
            for start, end in splitter(line):
                while start < end and line[start].isspace():
                    start += 1
                while end > start and line[end - 1].isspace():
                    end -= 1
                if end > start:
                    spans.append((offset + start, offset + end))
        offset += len(line) + 1
    return spans
