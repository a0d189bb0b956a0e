"""The papers' regex cleaning: "remove punctuation marks and characters in other languages
based on regular expressions" (ULR §4.1, BURT §4.1), made explicit per language.

A rule set is an ordered list of ``(pattern, replacement)`` substitutions applied to each
sentence; spans are carried through every substitution with :class:`~pipeline.corpus.spans.Edits`.
Built-in sets (choose with ``--rules NAME``, or pass a YAML/JSON file holding such a list):

``en`` (default for English)
  1. every character that is not a Latin letter (ASCII and Latin-1/Extended-A/B, so
     accented names survive), an ASCII digit, whitespace or one of ``' . , -`` → space;
  2. ``.`` and ``,`` not between two digits (keeps 3.5 and 1,650) → space;
  3. ``'`` and ``-`` not inside a word (keeps don't, anti-statism) → space;
  4. runs of whitespace → one space, ends stripped.
``en-keep-punct``: only step 4, for experiments that need the raw sentence.
``zh`` (default for Chinese)
  1. every character that is not a CJK ideograph (Unified, Extension A, Compatibility) or
     an ASCII digit → removed (Latin words, punctuation and spaces go; Chinese has no spaces);
``zh-keep-latin``: like ``zh``, but ASCII letters are kept too.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from pipeline.corpus.spans import Edits
from pipeline.errors import InputError

_LATIN = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f"
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"

RULE_SETS: dict[str, list[tuple[str, str]]] = {
    "en": [
        (rf"[^{_LATIN}0-9\s'.,\-]+", " "),
        (r"(?<![0-9])[.,]|[.,](?![0-9])", " "),
        (rf"(?<![{_LATIN}0-9])['\-]+|['\-]+(?![{_LATIN}0-9])", " "),
        (r"\s+", " "),
    ],
    "en-keep-punct": [(r"\s+", " ")],
    "zh": [(rf"[^{_CJK}0-9]+", "")],
    "zh-keep-latin": [(rf"[^{_CJK}0-9A-Za-z]+", "")],
}
DEFAULT_RULES = {"en": "en", "zh": "zh"}


class Cleaner:
    """Apply a rule set to sentences, carrying spans along."""

    def __init__(self, rules: list[tuple[str, str]]):
        self.rules = [(re.compile(pattern), replacement) for pattern, replacement in rules]
        self.source = rules

    def clean(self, text: str, spans: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int] | None]]:
        """The cleaned text, and each span mapped into it (``None`` where cleaning erased it)."""
        mapped: list[tuple[int, int] | None] = list(spans)
        for pattern, replacement in self.rules:
            edits = Edits()
            for match in pattern.finditer(text):
                if match.group(0) != replacement:
                    edits.replace(match.start(), match.end(), replacement)
            if not len(edits):
                continue
            mapped = [edits.map_span(*span) if span else None for span in mapped]
            text = edits.apply(text)
        stripped = text.strip()
        lead = len(text) - len(text.lstrip())
        result: list[tuple[int, int] | None] = []
        for span in mapped:
            if span is None:
                result.append(None)
                continue
            start, end = span[0] - lead, span[1] - lead
            start, end = max(start, 0), min(end, len(stripped))
            while start < end and stripped[start].isspace():
                start += 1
            while end > start and stripped[end - 1].isspace():
                end -= 1
            result.append((start, end) if start < end else None)
        return stripped, result


def load_rules(name_or_path: str) -> list[tuple[str, str]]:
    """A built-in rule set by name, or a YAML/JSON file holding ``[[pattern, replacement], ...]``."""
    if name_or_path in RULE_SETS:
        return RULE_SETS[name_or_path]
    path = Path(name_or_path)
    if not path.exists():
        raise InputError(path, f"no such cleaning rule set or file; built-in sets: {', '.join(RULE_SETS)}")
    try:
        data = yaml.safe_load(path.read_text()) if path.suffix in (".yaml", ".yml") else json.loads(path.read_text())
        rules = [(str(pattern), str(replacement)) for pattern, replacement in data]
        for pattern, _ in rules:
            re.compile(pattern)
    except (ValueError, TypeError, re.error, yaml.YAMLError) as exc:
        raise InputError(path, f"not a list of [pattern, replacement] pairs with valid regexes: {exc}") from exc
    return rules
