"""How far the project's entity rule departs from the released pmi.py on linked text (docs/method.md §2, "Entities").

The released ``pmi.py`` (Liyianan/ULR, ulr_code/scripts/src/pmi.py) reads text in which a link is
bracketed: it skips every n-gram holding a token with ``[`` or ``]``, unigrams included, so an
entity's edge words are out of the unigram counts and no n-gram that holds a whole entity is
counted. The project reads the link's span instead and forbids only the n-grams that cut an entity
(``pmi.without_cuts``). The two agree on text without links, which the exact test checks
(tests/ngrams/test_reference_pmi.py); this module puts the sample's own links in brackets, so that
reference mode with ``--no-entities`` is pmi.py on them, and compares the outputs.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pyarrow as pa


def bracketed(sentences: pa.Table) -> pa.Table:
    """The sentences with each link's text (its entity span, less surrounding whitespace) in ``[ ]``,
    and no ``entities`` column: the released code's view of the links."""
    texts = sentences.column("text").to_pylist()
    links = sentences.column("entities").to_pylist()
    out = []
    for text, spans in zip(texts, links):
        marks = []
        for span in spans or []:
            start, end = span["start"], span["end"]
            while start < end and text[start].isspace():
                start += 1
            while end > start and text[end - 1].isspace():
                end -= 1
            if start < end:
                marks += [(start, 0, "["), (end, 1, "]")]
        # right to left, so that earlier offsets stay valid; at one offset a "]" goes before a "["
        for at, _, mark in sorted(marks, key=lambda m: (m[0], -m[1]), reverse=True):
            text = text[:at] + mark + text[at:]
        out.append(text)
    table = sentences.drop_columns(["entities"])
    return table.set_column(table.schema.get_field_index("text"), "text", pa.array(out, pa.string()))


def _line(text: str, spans: list[dict]) -> str:
    """A marked sentence as ``ngram_match`` prints it, brackets removed: PMI spans in ``( )``."""
    words, out, i = text.split(), [], 0
    for span in sorted((s for s in spans if s["source"] == "pmi"), key=lambda s: s["start"]):
        out += words[i : span["start"]] + ["(" + " ".join(words[span["start"] : span["end"]]) + ")"]
        i = span["end"]
    return " ".join(out + words[i:]).replace("[", "").replace("]", "")


def departure(ours: Path, released: Path) -> dict:
    """Shares of the kept PMI n-grams and of the marked lines that differ between two ``ngrams`` outputs of
    the same sentences: ``ours`` (the span rule) and ``released`` (the bracket rule, on ``bracketed`` text)."""
    key = ["doc_id", "ngram"]
    kept = {
        name: pl.read_parquet(path / "ngrams.parquet", columns=[*key, "source"]).filter(pl.col("source") == "pmi")
        for name, path in (("ours", ours), ("released", released))
    }
    only_ours = kept["ours"].join(kept["released"], on=key, how="anti").height
    only_released = kept["released"].join(kept["ours"], on=key, how="anti").height
    lines = {}
    for name, path in (("ours", ours), ("released", released)):
        marked = pl.read_parquet(path / "marked.parquet", columns=["text", "spans"])
        lines[name] = [
            " ".join(_line(t, s).split()) for t, s in zip(marked["text"].to_list(), marked["spans"].to_list())
        ]
    differ = sum(a != b for a, b in zip(lines["ours"], lines["released"]))
    return {
        "kept_ours": kept["ours"].height,
        "kept_released": kept["released"].height,
        "kept_only_ours": only_ours / kept["ours"].height if kept["ours"].height else None,
        "kept_only_released": only_released / kept["released"].height if kept["released"].height else None,
        "lines": len(lines["ours"]),
        "lines_differ": differ / len(lines["ours"]) if lines["ours"] else None,
    }
