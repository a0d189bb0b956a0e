"""The languages the pipeline knows, and what differs between them.

English works on whitespace words, Chinese on characters (docs/method.md §2); the per-stage rules
(markup, sentence splitting, cleaning) look their language up here.
"""

from __future__ import annotations

from pipeline.errors import InputError

SUPPORTED = ("en", "zh")

# Sections at the end of an article that hold citations and link lists, not prose.
TRAILING_SECTIONS = {
    "en": (
        "references",
        "external links",
        "see also",
        "further reading",
        "notes",
        "sources",
        "bibliography",
        "citations",
        "footnotes",
        "notes and references",
    ),
    "zh": (
        "参考文献",
        "參考文獻",
        "参考资料",
        "參考資料",
        "外部链接",
        "外部連結",
        "外部連接",
        "参见",
        "參見",
        "注释",
        "註釋",
        "脚注",
        "腳註",
        "延伸阅读",
        "延伸閱讀",
        "相关条目",
        "相關條目",
    ),
}

# MediaWiki's $linkTrail: letters after "]]" that join the link text. Chinese wikis have none.
LINK_TRAIL = {"en": "[a-z]+", "zh": None}


def check(lang: str, source: str = "--lang") -> str:
    if lang not in SUPPORTED:
        raise InputError(source, f"unknown language {lang!r}; supported: {', '.join(SUPPORTED)}")
    return lang


def han_share(text: str) -> float:
    """Share of Han characters among the letters of ``text`` (0.0 when it has none)."""
    letters = [char for char in text if char.isalpha()]
    if not letters:
        return 0.0
    return sum("\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff" for char in letters) / len(letters)


def script_mismatch(lang: str, text: str) -> str | None:
    """Why ``text`` (a sample of a corpus) does not look like ``lang``; None when it does.

    A Chinese dump run as English (or the reverse) would be split, cleaned and counted by
    the wrong rules without any error, so the corpus stages warn."""
    share = han_share(text)
    if lang == "en" and share > 0.5:
        return f"{share:.0%} of the letters are Chinese characters, but --lang is en"
    if lang == "zh" and share < 0.1 and sum(char.isalpha() for char in text) >= 200:
        return f"only {share:.0%} of the letters are Chinese characters, but --lang is zh"
    return None
