"""The token unit of n-gram statistics: whitespace words (English), characters (Chinese).

docs/method.md §2: n-grams are counted over whitespace words in English and characters in Chinese,
never across a sentence boundary. In Chinese, whitespace (left around Latin runs by some
cleaning rule sets) is a boundary too, so a character n-gram never spans it.

Span offsets in the ``marked`` contract are token indices: word indices in English and
character (string) indices in Chinese. :func:`char_spans` maps tokens back to string
offsets for both, which is what sub-word alignment (pre-training) needs.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\S+")


def char_spans(text: str, lang: str) -> list[tuple[int, int]]:
    """``[start, end)`` string offsets of each token of ``text``, in order."""
    if lang == "zh":
        return [(i, i + 1) for i, char in enumerate(text) if not char.isspace()]
    return [match.span() for match in _WORD.finditer(text)]


def tokens(text: str, lang: str, lowercase: bool = False) -> list[str]:
    """The tokens of ``text`` (English words lower-cased when the model's tokenizer is uncased)."""
    if lowercase:
        text = text.lower()
    if lang == "zh":
        return [char for char in text if not char.isspace()]
    return text.split()


def runs(text: str, lang: str, lowercase: bool = False) -> list[tuple[int, list[str]]]:
    """Maximal stretches of tokens that an n-gram may span, each with its first token offset.

    English: the whole sentence (offsets are word indices). Chinese: each whitespace-free run
    (offsets are string indices, so a run starts where it starts in ``text``).
    """
    if lowercase:
        text = text.lower()
    if lang == "zh":
        return [(match.start(), list(match.group())) for match in _WORD.finditer(text)]
    return [(0, text.split())]
