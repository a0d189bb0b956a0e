"""Stream the pages of a MediaWiki ``pages-articles`` XML dump, never holding it whole.

Reads ``.xml``, ``.xml.bz2`` (multistream dumps are concatenated bz2 streams, which
:mod:`bz2` reads in order) and ``.xml.gz``, recognised by their magic bytes rather than
their names. The bytes are decoded as strict UTF-8 before expat sees them, so a bad byte is
reported as such, with its offset, instead of as a generic XML error. Every failure is an
:class:`~pipeline.errors.InputError` naming the file and the last page read.
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import hashlib
import xml.etree.ElementTree as ET
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pipeline.corpus.multistream import SliceReader, StreamSlice
from pipeline.errors import InputError

CHUNK = 1 << 20


@dataclass
class Page:
    page_id: int
    title: str
    ns: int
    redirect: bool
    text: str


@dataclass
class DumpProgress:
    """Bytes of the file (compressed, as on disk) read so far, and its SHA-256."""

    compressed_bytes: int = 0
    uncompressed_bytes: int = 0
    total_bytes: int = 0
    sha256: str = ""


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


class _CountingReader:
    """Wraps the raw file to count and hash the bytes that the decompressor pulls."""

    def __init__(self, raw, progress: DumpProgress):
        self.raw = raw
        self.progress = progress
        self.digest = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.progress.compressed_bytes += len(data)
        self.digest.update(data)
        return data

    def readable(self) -> bool:
        return True

    # gzip asks for these
    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.raw.close()


def _open(path: Path, progress: DumpProgress, streams: StreamSlice | None = None):
    if streams is not None:  # a slice of a multistream dump: bz2 streams only
        counted = _CountingReader(SliceReader(path, streams), progress)
        return bz2.BZ2File(counted), counted
    raw = path.open("rb")
    magic = raw.read(3)
    raw.seek(0)
    counted = _CountingReader(raw, progress)
    if magic == b"BZh":
        return bz2.BZ2File(counted), counted
    if magic[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=counted), counted
    return counted, counted


def siteinfo_namespaces(element: ET.Element) -> dict[int, str]:
    names = {}
    for child in element.iter():
        if _local(child.tag) == "namespace":
            names[int(child.get("key"))] = child.text or ""
    return names


def read_pages(
    path, progress: DumpProgress | None = None, on_siteinfo=None, streams: StreamSlice | None = None
) -> Iterator[Page]:
    """Yield every ``<page>`` of the dump at ``path`` in order.

    ``on_siteinfo`` is called with the ``{key: name}`` namespaces of ``<siteinfo>`` before
    the first page. ``progress`` is updated as bytes are read. With ``streams`` (a slice of a
    multistream dump, :mod:`pipeline.corpus.multistream`) only that slice's pages are read;
    a slice may hold none.
    """
    path = Path(path)
    progress = progress if progress is not None else DumpProgress()
    if not path.exists():
        raise InputError(path, "dump file not found")
    if path.is_dir():
        raise InputError(path, "is a directory, expected a MediaWiki XML dump file")
    progress.total_bytes = path.stat().st_size
    if progress.total_bytes == 0:
        raise InputError(path, "empty dump (0 bytes)")
    if streams is not None:
        progress.total_bytes = streams.compressed_bytes

    stream, counted = _open(path, progress, streams)
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    parser = ET.XMLPullParser(events=("start", "end"))
    root = None
    last = "before the first page"
    pages = 0
    decoded_until = 0  # uncompressed byte offset, for error messages

    def where() -> str:
        return f"after {last}" if pages else last

    def note_complete_pages(text: str = "") -> None:
        """Before reporting an error: the pages parsed so far, for the message's sake."""
        nonlocal last, pages
        try:
            parser.feed(text)
            for event, element in parser.read_events():
                if event == "end" and _local(element.tag) == "page":
                    page = _page(element, path, where)
                    last = f"page {page.title!r} (id {page.page_id})"
                    pages += 1
        except ET.ParseError:
            pass

    def events() -> Iterator[tuple[str, ET.Element]]:
        nonlocal decoded_until
        while True:
            try:
                data = stream.read(CHUNK)
            except EOFError as exc:
                raise InputError(path, f"truncated compressed stream: {exc}", where()) from exc
            except (OSError, gzip.BadGzipFile, zlib.error) as exc:
                raise InputError(path, f"corrupt compressed stream: {exc}", where()) from exc
            try:
                text = decoder.decode(data, final=not data)
            except UnicodeDecodeError as exc:
                # parse the valid prefix first, so that the message names the page before
                note_complete_pages(data[: exc.start].decode("utf-8", errors="ignore"))
                raise InputError(
                    path, f"invalid UTF-8 at uncompressed byte {decoded_until + exc.start:,}", where()
                ) from exc
            decoded_until += len(data)
            progress.uncompressed_bytes = decoded_until
            try:
                if data:
                    parser.feed(text)
                else:
                    parser.close()
                # expat errors surface here, after the events parsed before them
                yield from parser.read_events()
            except ET.ParseError as exc:
                line, column = exc.position
                raise InputError(path, f"malformed XML at line {line}, column {column}: {exc.msg}", where()) from exc
            if not data:
                return

    try:
        for event, element in events():
            tag = _local(element.tag)
            if event == "start":
                if root is None:
                    root = element
                    if tag != "mediawiki":
                        raise InputError(path, f"root element is <{tag}>, expected <mediawiki>", where())
                continue
            if tag == "siteinfo":
                if on_siteinfo is not None:
                    on_siteinfo(siteinfo_namespaces(element))
                root.clear()
            elif tag == "page":
                page = _page(element, path, where)
                last = f"page {page.title!r} (id {page.page_id})"
                pages += 1
                root.clear()  # cleared pages would otherwise pile up under the root
                yield page
    finally:
        counted.close()
    progress.sha256 = counted.digest.hexdigest()
    if pages == 0 and streams is None:
        raise InputError(path, "the dump contains no <page> elements")


def _page(element: ET.Element, path: Path, where) -> Page:
    fields: dict[str, str | None] = {}
    redirect = False
    text = ""
    for child in element:
        tag = _local(child.tag)
        if tag in ("title", "ns", "id"):
            fields[tag] = child.text
        elif tag == "redirect":
            redirect = True
        elif tag == "revision":
            for part in child:
                if _local(part.tag) == "text":
                    text = part.text or ""
    try:
        return Page(int(fields["id"]), fields.get("title") or "", int(fields.get("ns") or 0), redirect, text)
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(path, f"<page> without a valid <id> (title {fields.get('title')!r})", where()) from exc
