"""Stream the pages of a MediaWiki ``pages-articles`` XML dump, never holding it whole.

Reads ``.xml``, ``.xml.bz2`` (multistream dumps are concatenated bz2 streams, which
:mod:`bz2` reads in order) and ``.xml.gz``, recognised by their magic bytes rather than
their names. The bytes are decoded as strict UTF-8 before expat sees them, so a bad byte is
reported as such, with its offset, instead of as a generic XML error. Every failure is an
:class:`~pipeline.errors.InputError` naming the file and the last page read.

Memory stays flat whatever the (decompressed) dump holds (docs/stages/corpus.md, "Limits"):
expat's events are handled as they come and only a page's title, ids and text are kept. A
page whose text passes ``max_page_bytes`` stops being stored and comes out with
``too_large`` set (the caller skips and counts it); text outside pages is never stored, and
more than ``max_page_bytes`` of it in a row, an XML token (a tag, a comment) longer than
that, elements nested deeper than :data:`MAX_DEPTH`, an entity declaration, a repeated page
id, or bytes that do not start an XML document stop the read with an error.
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import hashlib
import re
import zlib
from array import array
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from xml.parsers import expat

from pipeline.corpus.multistream import SliceReader, StreamSlice
from pipeline.errors import InputError

CHUNK = 1 << 20
MAX_PAGE_BYTES = 4 << 20  # 4 MiB: twice MediaWiki's own $wgMaxArticleSize (2048 KiB of wikitext)
MAX_DEPTH = 64  # a dump nests 5 levels deep (mediawiki/page/revision/contributor/username)
MAX_FIELD = 1024  # characters kept of a page's <title>, <ns> or <id> (a title has at most 255 bytes)
MAX_PAGE_ID = 2**63 - 1  # doc_id is a signed 64-bit integer (the docs contract)
_NUMBER = re.compile(r"-?[0-9]+")


@dataclass
class Page:
    page_id: int
    title: str
    ns: int
    redirect: bool
    text: str
    too_large: int = 0  # the bytes of text of a page over the limit (its text is then ""); 0 otherwise


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

    def __init__(self, raw, progress: DumpProgress, head: bytes = b""):
        self.raw = raw
        self.progress = progress
        self.digest = hashlib.sha256()
        self.head = head  # bytes already read to sniff the format (no seek: the dump may be a pipe)

    def read(self, size: int = -1) -> bytes:
        data, self.head = self.head, b""
        if size < 0 or len(data) < size:
            data += self.raw.read(size if size < 0 else size - len(data))
        elif len(data) > size:
            data, self.head = data[:size], data[size:]
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
    counted = _CountingReader(raw, progress, magic)
    if magic == b"BZh":
        return bz2.BZ2File(counted), counted
    if magic[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=counted), counted
    return counted, counted


def _check_xml_start(path: Path, data: bytes, compressed: bool) -> bool:
    """Refuse data that cannot begin an XML document (``/dev/zero``, a binary file); True once
    the first byte that is not white space has been seen."""
    body = data.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")
    if body and not body.startswith(b"<"):
        shown = " ".join(f"{byte:02x}" for byte in body[:8])
        what = "its decompressed data begins" if compressed else "it begins"
        raise InputError(path, f"not a MediaWiki XML dump: {what} with the bytes {shown}, not with '<'")
    return bool(body)


def _page_number(text: str | None, field: str, path: Path, where: str) -> int:
    text = (text or "").strip()
    if not _NUMBER.fullmatch(text):
        raise InputError(path, f"<{field}> is not a number: {text[:40]!r}", where)
    return int(text)


class _SeenIds:
    """Page ids read so far, to refuse a repeated one: 8 bytes per page while they increase
    (as MediaWiki writes them), a set for those that come out of order."""

    def __init__(self) -> None:
        self.ascending = array("q")
        self.others: set[int] = set()

    def add(self, page_id: int) -> bool:
        """Record ``page_id``; False if it was seen before."""
        if not self.ascending or page_id > self.ascending[-1]:
            self.ascending.append(page_id)
            return True
        at = bisect_left(self.ascending, page_id)
        if (at < len(self.ascending) and self.ascending[at] == page_id) or page_id in self.others:
            return False
        self.others.add(page_id)
        return True


class _PageBuilder:
    """What one ``<page>`` holds so far."""

    def __init__(self) -> None:
        self.fields: dict[str, str | None] = {"title": None, "ns": None, "id": None}
        self.text: list[str] = []
        self.redirect = False
        self.size = 0  # bytes of character data in the page (UTF-8)
        self.too_large = False

    def add(self, target: str | None, data: str, limit: int) -> None:
        """Count ``data`` against the page's ``limit``; keep it in the text or field ``target`` (if any)."""
        self.size += len(data) if data.isascii() else len(data.encode("utf-8"))
        if self.size > limit and not self.too_large:  # stop storing its text; the page is skipped
            self.too_large = True
            self.text = []
        if target == "text":
            if not self.too_large:
                self.text.append(data)
        elif target is not None and len(self.fields[target]) < MAX_FIELD:
            self.fields[target] = (self.fields[target] + data)[:MAX_FIELD]

    def describe(self) -> str:
        title, number = self.fields["title"] or "", (self.fields["id"] or "").strip()
        return f"page {title[:200]!r}" + (f" (id {number})" if number.isdigit() and len(number) < 30 else "")


class _Handler:
    """expat's callbacks: pages into ``done``, the namespaces of ``<siteinfo>``, and the limits."""

    def __init__(self, path: Path, max_page_bytes: int, on_siteinfo, where) -> None:
        self.path, self.limit, self.on_siteinfo, self.where = path, max_page_bytes, on_siteinfo, where
        self.outside_limit = max(max_page_bytes, CHUNK)  # the header (<siteinfo>) may hold 1 MiB whatever the limit
        self.parser = expat.ParserCreate(namespace_separator="}")
        self.parser.buffer_text = True
        self.parser.buffer_size = 1 << 16
        self.parser.StartElementHandler = self.start
        self.parser.EndElementHandler = self.end
        self.parser.CharacterDataHandler = self.characters
        self.parser.EntityDeclHandler = self.entity_declaration
        self.parser.CommentHandler = self.parser.ProcessingInstructionHandler = self.other
        self.stack: list[str] = []
        self.page: _PageBuilder | None = None
        self.target: str | None = None  # where character data goes: "text", a page field or "namespace"
        self.namespaces: dict[int, str] = {}
        self.namespace: tuple[str, str] | None = None  # key and name of the <namespace> being read
        self.outside_from = 0  # byte where the stretch outside pages began
        self.last_event = 0  # byte of the last event expat reported
        self.done: list[Page] = []

    def position(self) -> int:
        index = self.parser.CurrentByteIndex
        self.last_event = max(self.last_event, index)
        return self.last_event

    def check_outside(self) -> None:
        if self.position() - self.outside_from > self.outside_limit:
            raise InputError(
                self.path,
                f"more than {self.outside_limit:,} bytes outside any <page> (whitespace or markup between "
                "pages): not a page dump, or raise --max-page-bytes",
                self.where(),
            )

    def start(self, name: str, attributes: dict) -> None:
        tag = _local(name)
        if not self.stack and tag != "mediawiki":
            raise InputError(self.path, f"root element is <{tag}>, expected <mediawiki>", self.where())
        if len(self.stack) >= MAX_DEPTH:
            raise InputError(
                self.path, f"elements nested more than {MAX_DEPTH} deep: not a MediaWiki dump", self.where()
            )
        self.stack.append(tag)
        depth = len(self.stack)
        self.target = None
        if self.page is not None:
            self.position()
            if depth == 3 and tag in self.page.fields:
                self.target = tag
                self.page.fields[tag] = ""
            elif depth == 3 and tag == "redirect":
                self.page.redirect = True
            elif depth == 4 and tag == "text" and self.stack[2] == "revision":
                self.target = "text"
                self.page.text = []  # the last revision's text is the page's
            return
        self.check_outside()
        if depth == 2 and tag == "page":
            self.page = _PageBuilder()
        elif tag == "namespace" and self.stack[1:2] == ["siteinfo"]:
            self.target = "namespace"
            self.namespace = (attributes.get("key", ""), "")

    def end(self, name: str) -> None:
        tag = self.stack.pop()
        self.target = None
        self.position()
        if self.page is not None:
            if len(self.stack) == 1:  # </page>
                self.done.append(self.finish(self.page))
                self.page = None
                self.outside_from = self.position()
        elif tag == "namespace" and self.namespace is not None:
            key, text = self.namespace
            self.namespace = None
            if not _NUMBER.fullmatch(key.strip()) or len(key) > 20:
                raise InputError(self.path, f"<siteinfo> has a namespace key that is not a number: {key[:40]!r}")
            self.namespaces[int(key)] = text
        elif tag == "siteinfo" and len(self.stack) == 1 and self.on_siteinfo is not None:
            self.on_siteinfo(self.namespaces)

    def characters(self, data: str) -> None:
        if self.page is not None:
            self.position()
            self.page.add(self.target, data, self.limit)
            return
        self.check_outside()
        if self.target == "namespace" and self.namespace is not None:
            key, text = self.namespace
            self.namespace = (key, (text + data)[:MAX_FIELD])

    def entity_declaration(self, *_) -> None:
        raise InputError(self.path, "the dump declares XML entities (a MediaWiki dump has no DTD)", self.where())

    def other(self, *_) -> None:
        self.position()

    def finish(self, page: _PageBuilder) -> Page:
        where = page.describe()
        if page.fields["id"] is None:
            raise InputError(self.path, "<page> without an <id>", where)
        page_id = _page_number(page.fields["id"], "id", self.path, where)
        if not 0 <= page_id <= MAX_PAGE_ID:
            shown = str(page_id) if len(str(page_id)) <= 30 else f"{str(page_id)[:30]}... ({len(str(page_id))} digits)"
            raise InputError(self.path, f"page id {shown} is out of range (0 to 2^63-1, a 64-bit doc_id)", where)
        ns = 0 if page.fields["ns"] is None else _page_number(page.fields["ns"], "ns", self.path, where)
        text = "" if page.too_large else "".join(page.text)
        return Page(page_id, page.fields["title"] or "", ns, page.redirect, text, page.size if page.too_large else 0)


def read_pages(
    path,
    progress: DumpProgress | None = None,
    on_siteinfo=None,
    streams: StreamSlice | None = None,
    max_page_bytes: int = MAX_PAGE_BYTES,
) -> Iterator[Page]:
    """Yield every ``<page>`` of the dump at ``path`` in order.

    ``on_siteinfo`` is called with the ``{key: name}`` namespaces of ``<siteinfo>`` before
    the first page. ``progress`` is updated as bytes are read. With ``streams`` (a slice of a
    multistream dump, :mod:`pipeline.corpus.multistream`) only that slice's pages are read;
    a slice may hold none. A page with more than ``max_page_bytes`` of text comes with
    ``too_large`` set and no text; see the module docstring for what stops the read.
    """
    path = Path(path)
    progress = progress if progress is not None else DumpProgress()
    if not path.exists():
        raise InputError(path, "dump file not found")
    if path.is_dir():
        raise InputError(path, "is a directory, expected a MediaWiki XML dump file")
    progress.total_bytes = path.stat().st_size
    if progress.total_bytes == 0 and path.is_file():
        raise InputError(path, "empty dump (0 bytes)")
    if streams is not None:
        progress.total_bytes = streams.compressed_bytes

    stream, counted = _open(path, progress, streams)
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    last = "before the first page"
    pages = 0
    decoded_until = 0  # uncompressed byte offset, for error messages
    started = False  # the first byte that is not white space has been checked
    seen = _SeenIds()

    def where() -> str:
        return f"after {last}" if pages else last

    handler = _Handler(path, max_page_bytes, on_siteinfo, where)
    # a token (tag, comment) is read whole by expat: one longer than this stops the read
    max_gap = max(max_page_bytes, CHUNK) + CHUNK

    def completed() -> Iterator[Page]:
        nonlocal last, pages
        done, handler.done = handler.done, []
        for page in done:
            if not seen.add(page.page_id):
                raise InputError(path, f"page id {page.page_id} appears twice in the dump", f"page {page.title!r}")
            last = f"page {page.title!r} (id {page.page_id})"
            pages += 1
            yield page

    def note_complete_pages(text: str = "") -> None:
        """Before reporting an error: the pages parsed so far, for the message's sake."""
        try:
            handler.parser.Parse(text, False)
        except (expat.ExpatError, InputError):
            pass
        for _ in completed():
            pass

    try:
        while True:
            try:
                data = stream.read(CHUNK)
            except EOFError as exc:
                raise InputError(path, f"truncated compressed stream: {exc}", where()) from exc
            except (OSError, gzip.BadGzipFile, zlib.error) as exc:
                raise InputError(path, f"corrupt compressed stream: {exc}", where()) from exc
            if decoded_until == 0 and not data:
                raise InputError(path, "empty dump (no data)")
            if not started:
                started = _check_xml_start(path, data, stream is not counted)
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
                handler.parser.Parse(text, not data)
            except expat.ExpatError as exc:
                for _ in completed():  # the pages before the error name its place
                    pass
                message = expat.ErrorString(exc.code)
                raise InputError(
                    path, f"malformed XML at line {exc.lineno}, column {exc.offset}: {message}", where()
                ) from exc
            except InputError:
                for _ in completed():
                    pass
                raise
            yield from completed()
            if decoded_until - handler.last_event > max_gap:
                raise InputError(
                    path,
                    f"more than {max_gap - CHUNK:,} bytes without an XML element or text "
                    "(a tag, comment or declaration that does not end)",
                    where(),
                )
            if not data:
                break
    finally:
        counted.close()
    progress.sha256 = counted.digest.hexdigest()
    if pages == 0 and streams is None:
        raise InputError(path, "the dump contains no <page> elements")
