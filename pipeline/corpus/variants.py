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

_BLOCK = re.compile(r"-\{(.*?)\}-", re.DOTALL)
_FLAGS = re.compile(r"^\s*([A-Za-z;\s-]{1,10}?)\s*\|(.*)$", re.DOTALL)
_VARIANT = re.compile(r"^\s*(zh(?:-[a-z]{2,4})?)\s*:(.*)$", re.DOTALL)
_SILENT_FLAGS = set("HTD-")


def _render(content: str, preference: tuple[str, ...]) -> tuple[str, bool]:
    """The rendered text of one block's content, and whether it is protected from conversion."""
    flags = ""
    flagged = _FLAGS.match(content)
    if flagged and set(flagged.group(1).replace(";", "").replace(" ", "")) <= set("AHTDRN-"):
        flags, content = flagged.group(1), flagged.group(2)
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
    for match in _BLOCK.finditer(text):
        rendered, keep = _render(match.group(1), preference)
        edits.replace(match.start(), match.end(), rendered)
        start = match.start() + shift
        if keep and rendered:
            protected.append((start, start + len(rendered)))
        shift += len(rendered) - (match.end() - match.start())
    return edits, protected
