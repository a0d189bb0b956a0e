"""MediaWiki language-variant markup ``-{...}-``, resolved to one variant (BURT §4.1: the
Chinese corpus is converted to Simplified script).

Chinese Wikipedia writes text that differs between regions as
``-{zh-hans:计算机;zh-hant:電腦}-``; MediaWiki renders the reader's variant. We render the
first present variant of a preference list (Simplified first). Flags follow MediaWiki's
syntax: ``-{H|...}-`` / ``-{T|...}-`` / ``-{D|...}-`` / ``-{-|...}-`` add or remove a
conversion rule or set the title and render nothing; ``-{R|...}-`` renders its text raw;
``-{A|...}-`` renders like a plain block. A block without variants, ``-{text}-``, renders
``text`` and is protected from script conversion (that is what it is for).
"""

from __future__ import annotations

import re

from pipeline.corpus.spans import Edits

SIMPLIFIED_FIRST = ("zh-hans", "zh-cn", "zh-sg", "zh-my", "zh", "zh-hant", "zh-tw", "zh-hk", "zh-mo")

_FLAG_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz;-")
_VARIANT = re.compile(r"^\s*(zh(?:-[a-z]{2,4})?)\s*:(.*)$", re.DOTALL)
_SILENT_FLAGS = set("HTD-")


def _flags(content: str) -> tuple[str, str] | None:
    """``(flags, rest)`` of ``FLAGS|rest``: 1 to 10 letters, ``;``, ``-`` or spaces before the
    first ``|``. Split, not matched: the pattern ``^\\s*([A-Za-z;\\s-]{1,10}?)\\s*\\|`` backtracked
    quadratically in a run of spaces."""
    head, bar, rest = content.partition("|")
    if not bar:
        return None
    flags = head.strip() or head[-1:]  # a blank head counts as one space, as the pattern had it
    if not 1 <= len(flags) <= 10 or not all(c in _FLAG_CHARS or c.isspace() for c in flags):
        return None
    return flags, rest


def _blocks(text: str):
    """``(start, end, content)`` of every ``-{...}-``, each closed by the first ``}-`` after it;
    one scan (the lazy ``-\\{(.*?)\\}-`` rescanned to the end for every unclosed ``-{``)."""
    position = 0
    while (start := text.find("-{", position)) >= 0:
        close = text.find("}-", start + 2)
        if close < 0:
            return  # no later block can close either
        yield start, close + 2, text[start + 2 : close]
        position = close + 2


def _render(content: str, preference: tuple[str, ...]) -> tuple[str, bool]:
    """The rendered text of one block's content, and whether it is protected from conversion."""
    flags = ""
    flagged = _flags(content)
    if flagged and set(flagged[0].replace(";", "").replace(" ", "")) <= set("AHTDRN-"):
        flags, content = flagged
    if _SILENT_FLAGS & set(flags):
        return "", False
    if "R" in flags:
        return content, True
    variants: dict[str, str] = {}
    for part in content.split(";"):
        match = _VARIANT.match(part)
        if match:
            variants.setdefault(match.group(1), match.group(2).strip())
    if not variants:
        return content, True
    for code in preference:
        if code in variants:
            return variants[code], False
    return next(iter(variants.values())), False


def resolve(text: str, preference: tuple[str, ...] = SIMPLIFIED_FIRST) -> tuple[Edits, list[tuple[int, int]]]:
    """Edits that render every variant block of ``text``, and the protected ranges of the
    edited text (blocks that must not be converted)."""
    edits = Edits()
    protected: list[tuple[int, int]] = []
    shift = 0
    for block_start, block_end, content in _blocks(text):
        rendered, keep = _render(content, preference)
        edits.replace(block_start, block_end, rendered)
        start = block_start + shift
        if keep and rendered:
            protected.append((start, start + len(rendered)))
        shift += len(rendered) - (block_end - block_start)
    return edits, protected
