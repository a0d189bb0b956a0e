"""MediaWiki markup to plain text, keeping every internal link's surface as an entity span.

The papers (BURT §3.1, ULR §4.1) pre-process Wikipedia into plain text and use the link
surfaces as high-quality n-grams and as the "Named Entities" masking baseline (docs/method.md §1).
mwparserfromhell builds a full syntax tree and runs at about a third of wikiextractor's speed
(see BENCHMARKS.md), and wikiextractor does not report link offsets, so this module is a
small single-pass-per-construct converter in the spirit of wikiextractor's: it drops
whatever does not render as prose and tracks offsets while it writes the text.

Three passes, because each construct has a natural scope:

A. whole page: comments, dropped elements (``<ref>``, ``<math>``, ``<gallery>``, ...),
   templates ``{{...}}`` and tables ``{|...|}`` (both nested), and links to files,
   categories and other languages (nested, since image captions hold links);
B. lines: headings and paragraphs become boundaries (one output line each); list items,
   table remnants and the trailing sections (References, External links, ...) are dropped,
   following wikiextractor's defaults;
C. each paragraph: links become their text (an entity span for links to articles),
   external links their label, bold/italic quotes and HTML tags vanish, entities decode.
"""

from __future__ import annotations

import bisect
import html
import re
import time
from dataclasses import dataclass, field

# Elements whose content never renders as prose.
_DROPPED_ELEMENTS = (
    "ref|references|gallery|math|chem|ce|timeline|score|syntaxhighlight|source|graph|mapframe|"
    "maplink|imagemap|templatedata|templatestyles|hiero|inputbox|categorytree|poem|section"
)
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
# Opening, self-closing and closing tags of the dropped elements, found in one scan; pairing
# them with a sorted list of closers keeps pass A linear in the page (a regex with a lazy
# ``.*?</ref>`` rescans to the end of the page for every unclosed ``<ref>``).
_DROPPED_TAG = re.compile(rf"<(/?)({_DROPPED_ELEMENTS})\b([^<>]*)>", re.IGNORECASE)
_TEMPLATE_TOKEN = re.compile(r"\{\{|\}\}")
_TABLE_TOKEN = re.compile(r"^[ \t:]*\{\||^[ \t]*\|\}", re.MULTILINE)
_LINK_TOKEN = re.compile(r"\[\[|\]\]")
_LANGUAGE_CODE = re.compile(r"^[a-z]{2,3}(?:-[a-z0-9]+)*$")
_WHITESPACE = re.compile(r"\s+")
# A character of an external link's URL: MediaWiki's EXT_LINK_URL_CLASS (no brackets, angle
# brackets, double quotes, controls or spaces), so a URL never runs into the next "[".
_URL_CHAR = r'[^\][<>"\x00-\x20\x7f\s\ufffd]'
_SPACE_BEFORE = frozenset(".,;:!?)]}%")

# Namespaces whose links never render inline (MediaWiki ids -2 Media, 6 File, 14 Category),
# with the aliases the English and Chinese wikis accept besides the names in <siteinfo>.
DROPPED_NAMESPACE_IDS = frozenset({-2, 6, 14})
DROPPED_NAMESPACE_ALIASES = frozenset(
    {"file", "image", "media", "category", "文件", "檔案", "档案", "图像", "圖像", "媒体", "媒體", "分类", "分類"}
)


@dataclass(frozen=True)
class MarkupRules:
    """Per-wiki settings of the converter.

    ``dropped_namespaces``: lower-case prefixes whose links are removed with their text.
    ``other_namespaces``: prefixes whose links keep their text but are not entities (Talk,
    Wikipedia, interwiki prefixes such as ``wikt``). ``link_trail``: letters glued to a
    link's text by MediaWiki (``[[river]]s`` renders "rivers"): ``[a-z]+`` on English wikis,
    none on Chinese ones. ``dropped_sections``: lower-case headings whose whole section is
    skipped. ``keep_lists``: keep list items as paragraphs (wikiextractor drops them).
    """

    dropped_namespaces: frozenset = DROPPED_NAMESPACE_ALIASES
    other_namespaces: frozenset = frozenset(
        {
            "talk",
            "user",
            "wikipedia",
            "wp",
            "help",
            "template",
            "portal",
            "draft",
            "module",
            "special",
            "wikt",
            "wiktionary",
            "w",
            "s",
            "q",
            "n",
            "b",
            "v",
            "commons",
            "meta",
            "wikisource",
            "wikiquote",
        }
    )
    link_trail: str | None = "[a-z]+"
    dropped_sections: frozenset = frozenset()
    keep_lists: bool = False
    _inline: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        trail = f"(?P<trail>{self.link_trail})?" if self.link_trail else ""
        pattern = (
            rf"\[\[(?P<link>[^\[\]]*)\]\]{trail}"
            # only the opening "[URL" of an external link: _ExternalLinks finds where it closes
            rf"|\[(?P<url>(?:https?:|ftp:|mailto:|//){_URL_CHAR}*)"
            r"|(?P<quotes>'{2,})"
            r"|(?P<tag></?(?P<tagname>[A-Za-z][A-Za-z0-9]*)\b[^<>]*>)"
            r"|(?P<entity>&(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#[xX][0-9A-Fa-f]+);)"
            r"|(?P<magic>__[A-Z]+__)"
        )
        object.__setattr__(self, "_inline", re.compile(pattern))

    def with_namespaces(self, names: dict[int, str]) -> MarkupRules:
        """Add the namespace names a dump declares in its ``<siteinfo>``."""
        dropped = {name.lower() for key, name in names.items() if key in DROPPED_NAMESPACE_IDS and name}
        other = {name.lower() for key, name in names.items() if key not in DROPPED_NAMESPACE_IDS and key and name}
        return MarkupRules(
            dropped_namespaces=self.dropped_namespaces | dropped,
            other_namespaces=self.other_namespaces | other,
            link_trail=self.link_trail,
            dropped_sections=self.dropped_sections,
            keep_lists=self.keep_lists,
        )


class PageTimeout(Exception):
    """The page took longer than its time budget; the extract stage skips and counts it."""


class _Budget:
    """A per-page time budget, checked every few hundred lines and paragraphs."""

    def __init__(self, seconds: float | None) -> None:
        self.deadline = time.monotonic() + seconds if seconds else None
        self.seconds = seconds

    def check(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise PageTimeout(f"conversion took over its budget of {self.seconds:g} s")


@dataclass
class PlainText:
    """A converted page: its text, entity spans ``(start, end, target)`` and counts."""

    text: str
    entities: list[tuple[int, int, str]]
    templates: int


def _balanced_ranges(text: str, token: re.Pattern) -> list[tuple[int, int]]:
    """Outermost balanced ``open ... close`` ranges; unmatched openers stay as literal text.

    ``token`` matches openers (ending in ``{{``, ``{|`` or ``[[``) and closers.
    """
    stack: list[int] = []
    ranges: list[tuple[int, int]] = []
    for match in token.finditer(text):
        if text[match.end() - 2 : match.end()] in ("{{", "{|", "[["):
            stack.append(match.start())
        elif stack:
            ranges.append((stack.pop(), match.end()))
    ranges.sort()
    outermost: list[tuple[int, int]] = []
    for start, end in ranges:
        if outermost and start < outermost[-1][1]:
            continue
        outermost.append((start, end))
    return outermost


def _cut(text: str, ranges: list[tuple[int, int]]) -> str:
    if not ranges:
        return text
    pieces, last = [], 0
    for start, end in ranges:
        pieces.append(text[last:start])
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def _dropped_ranges(text: str) -> list[tuple[int, int]]:
    """Ranges of the dropped elements: ``<ref .../>``, and ``<ref ...>`` up to the first
    ``</ref>`` after it; an opener with no closer stays as literal text (MediaWiki's
    behaviour, and the pattern's this replaces). O(n log n) in the page, whatever it holds."""
    tags = list(_DROPPED_TAG.finditer(text))
    closers: dict[str, list[int]] = {}
    for index, tag in enumerate(tags):
        if tag.group(1) and not tag.group(3).strip():
            closers.setdefault(tag.group(2).lower(), []).append(index)
    ranges: list[tuple[int, int]] = []
    done = 0  # end of the last dropped range
    for index, tag in enumerate(tags):
        if tag.start() < done or tag.group(1):
            continue
        if tag.group(3).endswith("/"):
            ranges.append((tag.start(), tag.end()))
            done = tag.end()
            continue
        candidates = closers.get(tag.group(2).lower(), [])
        found = bisect.bisect_right(candidates, index)
        if found < len(candidates):
            closer = tags[candidates[found]]
            ranges.append((tag.start(), closer.end()))
            done = closer.end()
    return ranges


def _link_kind(content: str, rules: MarkupRules) -> str:
    """What a ``[[content]]`` link renders as: ``drop`` (files, categories, other
    languages), ``text`` (its text, but not an entity: a leading colon or another
    namespace) or ``entity`` (a link to an article)."""
    head = content.split("|", 1)[0].lstrip()
    if head.startswith(":"):
        return "text"
    if ":" not in head:
        return "entity"
    namespace = head.split(":", 1)[0].strip().lower()
    if namespace in rules.dropped_namespaces:
        return "drop"
    if namespace in rules.other_namespaces:
        return "text"
    # an unknown short prefix is an interlanguage link; anything else is an article
    # title with a colon in it ("Star Wars: Episode IV")
    return "drop" if _LANGUAGE_CODE.match(namespace) else "entity"


def _drop_non_prose(markup: str, rules: MarkupRules) -> tuple[str, int]:
    """Pass A: remove what never renders as prose. Returns the text and the template count."""
    text = _COMMENT.sub("", markup)
    text = _cut(text, _dropped_ranges(text))
    templates = _balanced_ranges(text, _TEMPLATE_TOKEN)
    template_count = len(templates)
    text = _cut(text, templates)
    text = _cut(text, _balanced_ranges(text, _TABLE_TOKEN))
    dropped_links = []
    for start, end in _balanced_ranges(text, _LINK_TOKEN):
        if _link_kind(text[start + 2 : end - 2], rules) == "drop":
            dropped_links.append((start, end))
    return _cut(text, dropped_links), template_count


class _Builder:
    """Appends text with whitespace collapsed, so that offsets stay exact as it goes."""

    def __init__(self) -> None:
        self.chunks: list[str] = []
        self.length = 0
        self.last = " "  # no leading space at the start of a paragraph

    def add(self, piece: str) -> None:
        piece = _WHITESPACE.sub(" ", piece)
        if self.last == " ":
            piece = piece.lstrip(" ")
        elif piece[:1] in _SPACE_BEFORE and self.chunks and self.chunks[-1].endswith(" "):
            # "word {{citation needed}}." leaves "word ." once the template is gone.
            self.chunks[-1] = self.chunks[-1][:-1]
            self.length -= 1
        if piece:
            self.chunks.append(piece)
            self.length += len(piece)
            self.last = piece[-1]

    def text(self) -> str:
        return "".join(self.chunks).rstrip(" ")


def _link_target(target: str) -> str:
    target = target.split("#", 1)[0].replace("_", " ").strip().lstrip(":").strip()
    target = _WHITESPACE.sub(" ", html.unescape(target))
    return target[:1].upper() + target[1:]


class _ExternalLinks:
    """Where an external link that opens at ``[URL`` closes, in one paragraph.

    MediaWiki's rule: the label runs to the first ``]`` and cannot span lines; without such a
    ``]`` the ``[`` is plain text. The next ``]`` and the next line break are found once and
    kept until passed, so a paragraph of many unclosed links costs one scan, not one per link.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.bracket = self.newline = -1  # positions found so far; len(text) when there is none

    def _next(self, char: str, cached: int, start: int) -> int:
        if cached >= start:
            return cached
        found = self.text.find(char, start)
        return len(self.text) if found < 0 else found

    def close(self, start: int) -> int:
        """The position of the ``]`` closing a link whose URL ends at ``start``; -1 if none."""
        self.bracket = self._next("]", self.bracket, start)
        self.newline = self._next("\n", self.newline, start)
        return self.bracket if self.bracket < min(self.newline, len(self.text)) else -1


def _without_disambiguation(title: str) -> str:
    """The pipe trick's text: ``Pipe (trick)`` → ``Pipe``, dropping a trailing ``(...)`` from
    the first ``(`` on (without a regex, whose ``\\s*\\(.*\\)`` is quadratic in a run of ``(``)."""
    stripped = title.rstrip()
    opening = stripped.find("(")
    if stripped.endswith(")") and 0 <= opening < len(stripped) - 1:
        return stripped[:opening].rstrip()
    return title


def _inline(paragraph: str, rules: MarkupRules, out: _Builder, entities: list | None) -> None:
    """Pass C: write one paragraph's prose into ``out``; record link spans into ``entities``."""
    position = 0  # the paragraph is written up to here
    search = 0  # the next construct is searched from here
    external = _ExternalLinks(paragraph)
    while (match := rules._inline.search(paragraph, search)) is not None:
        end = match.end()
        label = None
        if match.group("url") is not None:
            close = external.close(end)
            if close < 0:  # never closed on its line: the "[" is text, the rest is searched again
                search = match.start() + 1
                continue
            label, end = paragraph[end:close], close + 1
        if match.start() > position:
            out.add(paragraph[position : match.start()])
        position = search = end
        kind = match.lastgroup
        if match.group("link") is not None:
            content = match.group("link")
            target, pipe, label = content.partition("|")
            if not pipe:
                label = target.lstrip(":")
            elif not label.strip():  # the pipe trick: [[Pipe (trick)|]] renders "Pipe"
                label = _without_disambiguation(target.split(":")[-1])
            trail = (match.group("trail") or "") if rules.link_trail else ""
            label_text = (_plain(label, rules) + trail).strip()
            if not label_text:
                continue
            out.add(label_text)
            end = out.length
            start = end - len(label_text)
            if entities is not None and _link_kind(content, rules) == "entity":
                target_title = _link_target(target)
                if target_title:
                    entities.append((start, end, target_title))
        elif label is not None:
            if label.strip():
                out.add(_plain(label, rules))
        elif kind == "tag":
            if match.group("tagname").lower() in ("br", "p", "div", "li", "hr"):
                out.add(" ")
        elif kind == "entity":
            out.add(html.unescape(match.group("entity")).replace("\xa0", " "))
        # quotes and magic words vanish
    if position < len(paragraph):
        out.add(paragraph[position:])


def _plain(markup: str, rules: MarkupRules) -> str:
    out = _Builder()
    _inline(markup, rules, out, None)
    return out.text()


def _heading(line: str) -> tuple[int, str] | None:
    """``(level, title)`` of a stripped line ``== Title ==``, or None: MediaWiki's
    ``^(={1,6})(.+)\\1\\s*$``, the level being the most ``=`` that both ends have (at most 6)
    with text between them. Counted, not matched: the pattern ``\\s*(.+?)\\s*`` backtracked
    cubically in a line of spaces."""
    level = min(len(line) - len(line.lstrip("=")), len(line) - len(line.rstrip("=")), 6, (len(line) - 1) // 2)
    if level < 1:
        return None
    return level, line[level : len(line) - level].strip()


def to_plain_text(markup: str, rules: MarkupRules, seconds: float | None = None) -> PlainText:
    """Convert one article's wikitext; see the module docstring for what is kept.

    With ``seconds``, raise :class:`PageTimeout` once the conversion has taken longer (every
    pass is linear in the page, so this guards against what no test has found yet)."""
    budget = _Budget(seconds)
    text, templates = _drop_non_prose(markup, rules)
    paragraphs: list[str] = []
    current: list[str] = []
    skip_level = 0  # inside a dropped section of this heading level

    def flush() -> None:
        if current:
            paragraphs.append("\n".join(current))  # a line break ends an external link's label
            current.clear()

    for number, line in enumerate(text.split("\n")):
        if number % 256 == 255:
            budget.check()
        stripped = line.strip()
        if not stripped:
            flush()
            continue
        first = stripped[0]
        heading = _heading(stripped) if first == "=" else None
        if heading:
            flush()
            level, markup_title = heading
            if skip_level and level > skip_level:
                continue
            title = _plain(markup_title, rules)
            skip_level = level if title.lower() in rules.dropped_sections else 0
            if not skip_level and title:
                paragraphs.append(markup_title)
            continue
        if skip_level:
            continue
        if first in "*#;:":
            flush()
            if rules.keep_lists:
                paragraphs.append(stripped.lstrip("*#;: "))
            continue
        if first in "|!" or stripped.startswith(("{|", "----")):
            flush()
            continue
        current.append(stripped)
    flush()

    out = _Builder()
    entities: list[tuple[int, int, str]] = []
    for number, paragraph in enumerate(paragraphs):
        if number % 64 == 63:
            budget.check()
        before = out.length
        _inline(paragraph, rules, out, entities)
        if out.length > before:
            if out.chunks[-1].endswith(" "):
                out.chunks[-1] = out.chunks[-1][:-1]
                out.length -= 1
            out.chunks.append("\n")
            out.length += 1
            out.last = " "
    result = "".join(out.chunks).rstrip("\n")
    entities = [(s, min(e, len(result)), t) for s, e, t in entities if s < len(result)]
    return PlainText(result, entities, templates)
