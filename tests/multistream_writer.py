"""Write a multistream dump and its index from an ordinary ``pages-articles`` dump.

The layout of Wikimedia's ``pages-articles-multistream.xml.bz2`` (as its ``recompressxml``
makes it): one bz2 stream for the header (``<mediawiki>`` and ``<siteinfo>``), one per
``pages_per_stream`` pages, one for the closing tag; and the index lines
``offset:page_id:title`` (bz2), ``offset`` being the byte position of the page's stream.

``copies`` > 1 repeats the pages with page ids shifted by a multiple of the largest id, which
makes a large realistic dump out of a small real one (benchmarks, the scaling rehearsal).
"""

from __future__ import annotations

import bz2
import html
import re
from pathlib import Path

from pipeline.atomic import AtomicFiles
from pipeline.errors import InputError

_PAGE = re.compile(r"<page>.*?</page>\s*", re.DOTALL)
_ID = re.compile(r"(<id>)(\d+)(</id>)")
_TITLE = re.compile(r"<title>(.*?)</title>", re.DOTALL)


def _read_xml(path: Path) -> str:
    with path.open("rb") as raw:
        compressed = raw.read(3) == b"BZh"
    return (bz2.open(path, "rt", encoding="utf-8") if compressed else path.open(encoding="utf-8")).read()


def write_multistream(source: Path, dump: Path, index: Path, pages_per_stream: int = 100, copies: int = 1) -> int:
    """Write ``dump`` and ``index``; returns the number of pages written."""
    text = _read_xml(Path(source))
    first = text.find("<page>")
    if first < 0:
        raise InputError(source, "the dump contains no <page> elements")
    last = text.rfind("</page>") + len("</page>")
    header, footer = text[:first], text[last:]
    pages = _PAGE.findall(text, first, last + 1)
    ids = [int(_ID.search(page).group(2)) for page in pages]
    stride = 10 ** len(str(max(ids)))
    written = 0
    with (
        AtomicFiles() as files,
        files.temp(Path(dump)).open("wb") as out,
        bz2.open(files.temp(Path(index)), "wt", encoding="utf-8") as lines,
    ):
        out.write(bz2.compress(header.encode("utf-8"), 9))
        batch: list[str] = []

        def flush() -> None:
            offset = out.tell()
            for page in batch:
                title = html.unescape(_TITLE.search(page).group(1))
                lines.write(f"{offset}:{_ID.search(page).group(2)}:{title}\n")
            out.write(bz2.compress("".join(batch).encode("utf-8"), 9))
            batch.clear()

        for copy in range(copies):
            for page, page_id in zip(pages, ids, strict=True):
                batch.append(
                    _ID.sub(lambda m, new=page_id + copy * stride: f"{m.group(1)}{new}{m.group(3)}", page, count=1)
                    if copy
                    else page
                )
                written += 1
                if len(batch) == pages_per_stream:
                    flush()
        if batch:
            flush()
        out.write(bz2.compress(footer.encode("utf-8"), 9))
    return written
