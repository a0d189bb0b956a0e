"""Slices of a Wikimedia multistream dump: read only some of its bz2 streams.

``pages-articles-multistream.xml.bz2`` is a series of independent bz2 streams: the first holds
the ``<mediawiki>`` header and ``<siteinfo>``, each following one holds 100 pages, and the last
one the closing tag. ``multistream-index.txt.bz2`` lists every page as
``offset:page_id:title``, where ``offset`` is the byte position of its stream in the dump.

Slice ``K/N`` is the K-th (from 0) of N runs of consecutive page streams, as equal in stream
count as N allows. Its reader decompresses the header stream, then only the bytes of its own
streams (one seek), then a closing ``</mediawiki>``: a well-formed document holding exactly the
slice's pages, so that the union over K of the slices' pages is the dump's, in dump order.
"""

from __future__ import annotations

import bz2
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import InputError

_FOOTER = bz2.compress(b"\n</mediawiki>\n")


def parse_slice(text: str) -> tuple[int, int]:
    """``"K/N"`` → ``(K, N)`` with ``0 <= K < N``."""
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError as exc:
        raise ValueError(f"--slice must be K/N (e.g. 0/4), got {text!r}") from exc
    if n < 1 or not 0 <= k < n:
        raise ValueError(f"--slice K/N needs 0 <= K < N, got {text!r}")
    return k, n


def stream_offsets(index: Path) -> list[int]:
    """The distinct stream offsets of a multistream index (bz2 or plain text), ascending."""
    index = Path(index)
    if not index.exists():
        raise InputError(index, "multistream index not found")
    with index.open("rb") as raw:
        compressed = raw.read(3) == b"BZh"
    offsets: set[int] = set()
    try:
        with bz2.open(index, "rt", encoding="utf-8") if compressed else index.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                offset, _, rest = line.partition(":")
                if not offset.isdigit() or ":" not in rest:
                    raise InputError(
                        index, f"expected offset:page_id:title, got {line.strip()[:60]!r}", f"line {number}"
                    )
                offsets.add(int(offset))
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise InputError(index, f"unreadable multistream index: {exc}") from exc
    if not offsets:
        raise InputError(index, "the multistream index lists no pages")
    return sorted(offsets)


@dataclass(frozen=True)
class StreamSlice:
    """Byte ranges of one slice: the header ``[0, header_end)`` and the streams ``[start, end)``."""

    header_end: int
    start: int
    end: int
    last: bool  # the final slice reads to the end of the file, closing tag included

    @property
    def compressed_bytes(self) -> int:
        return self.header_end + self.end - self.start


def stream_slice(dump: Path, index: Path, k: int, n: int) -> StreamSlice:
    offsets = stream_offsets(index)
    size = Path(dump).stat().st_size
    if offsets[-1] >= size:
        raise InputError(index, f"offset {offsets[-1]:,} lies past the end of the dump ({size:,} bytes)")
    first, stop = k * len(offsets) // n, (k + 1) * len(offsets) // n
    start = offsets[first] if first < len(offsets) else size
    end = offsets[stop] if stop < len(offsets) else size
    return StreamSlice(header_end=offsets[0], start=start, end=end, last=stop >= len(offsets))


class SliceReader:
    """File-like compressed bytes of a slice: header stream, the slice's streams, a closing stream."""

    def __init__(self, path: Path, part: StreamSlice):
        self.raw = Path(path).open("rb")  # noqa: SIM115 -- closed by close(), as the dump reader closes it
        self.segments = [(0, part.header_end)]
        if part.end > part.start:
            self.segments.append((part.start, part.end))
        self.tail = b"" if part.last and part.end > part.start else _FOOTER
        self.position = None

    def read(self, size: int = -1) -> bytes:
        while self.segments:
            start, end = self.segments[0]
            if self.position is None:
                self.raw.seek(start)
                self.position = start
            want = end - self.position if size < 0 else min(size, end - self.position)
            data = self.raw.read(want)
            self.position += len(data)
            if self.position >= end or not data:
                self.segments.pop(0)
                self.position = None
            if data:
                return data
        data, self.tail = (self.tail, b"") if size < 0 else (self.tail[:size], self.tail[size:])
        return data

    def close(self) -> None:
        self.raw.close()
