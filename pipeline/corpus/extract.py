"""Stage ``extract``: one MediaWiki dump part → docs Parquet shards + a stats JSON.

Keeps namespace-0 articles, skips redirects and other namespaces, converts the markup with
:mod:`pipeline.corpus.wikitext` and writes the documents into ``--shards`` files by
``doc_id`` (see :mod:`pipeline.corpus.sharding`). Memory stays flat: pages stream in, and
each shard's rows are flushed as a Parquet row group every ``--batch-docs`` documents or
when its buffered text passes ``--batch-chars`` (long articles with hundreds of links cost
far more memory than their count suggests; see BENCHMARKS.md). A page with more than
``--max-page-bytes`` of text is skipped and counted, like one over ``--page-seconds``; what else
a dump may not do (text between pages, repeated page ids, ...) is in docs/stages/corpus.md, "Limits".

With ``--index`` and ``--slice K/N`` it reads only the K-th of N runs of streams of a
multistream dump (:mod:`pipeline.corpus.multistream`): N such jobs run in parallel, and
``merge-slices`` (:mod:`pipeline.corpus.merge_slices`) puts their shards together into the
very files one job over the whole dump writes.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import pyarrow as pa

from pipeline import contracts, languages, provenance
from pipeline.arguments import BATCH, CHARACTERS, NON_NEGATIVE, SHARDS
from pipeline.atomic import AtomicFiles, json_text
from pipeline.corpus.dump_reader import MAX_PAGE_BYTES, DumpProgress, read_pages
from pipeline.corpus.multistream import parse_slice, stream_slice
from pipeline.corpus.sharding import shard_name, shard_of
from pipeline.corpus.wikitext import MarkupRules, PageTimeout, to_plain_text
from pipeline.errors import InputError
from pipeline.output_guard import refuse_read_files
from pipeline.progress import Progress

log = logging.getLogger("pipeline.extract")

MAX_FAILURES_LISTED = 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dump", required=True, type=Path, help="pages-articles dump (.xml, .xml.bz2, .xml.gz)")
    parser.add_argument("--lang", required=True, help="wiki language: " + ", ".join(languages.SUPPORTED))
    parser.add_argument("--out", required=True, type=Path, help="directory for shard-NNN.parquet files")
    parser.add_argument("--shards", type=SHARDS, default=1, help="number of shard files (default 1)")
    parser.add_argument("--stats", type=Path, help="stats JSON (default OUT/extract-stats.json)")
    parser.add_argument("--keep-lists", action="store_true", help="keep list items as paragraphs")
    parser.add_argument("--index", type=Path, help="multistream index (offset:page_id:title), with --slice")
    parser.add_argument(
        "--slice", type=_slice_argument, help="K/N: only the K-th (from 0) of N equal runs of the dump's streams"
    )
    parser.add_argument("--batch-docs", type=BATCH, default=500, help="at most this many documents per row group")
    parser.add_argument(
        "--batch-chars",
        type=CHARACTERS,
        default=4_000_000,
        help="flush a shard's rows once their text and links reach this many characters",
    )
    parser.add_argument(
        "--page-seconds",
        type=NON_NEGATIVE,
        default=30.0,
        help="skip (and count) a page whose conversion takes longer (default 30; 0 = no limit)",
    )
    parser.add_argument(
        "--max-page-bytes",
        type=_positive,
        default=MAX_PAGE_BYTES,
        help=f"skip (and count) a page with more text; more than this (at least 1 MiB) outside pages "
        f"is an error (default {MAX_PAGE_BYTES:,}: 4 MiB, twice MediaWiki's own limit)",
    )


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive number of bytes, got {text!r}")
    return value


def _slice_argument(text: str) -> str:
    try:
        parse_slice(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return text


def markup_rules(lang: str, keep_lists: bool = False) -> MarkupRules:
    return MarkupRules(
        link_trail=languages.LINK_TRAIL[lang],
        dropped_sections=frozenset(languages.TRAILING_SECTIONS[lang]),
        keep_lists=keep_lists,
    )


class ShardBuffer:
    """One shard's rows, written as a Parquet row group by :meth:`flush`."""

    def __init__(self, writer):
        self.writer = writer
        self.rows: dict[str, list] = {name: [] for name in contracts.DOCS.names}
        self.chars = 0  # buffered size: text plus a link's share (a dict of three fields)

    def add(self, doc_id: int, title: str, text: str, entities: list) -> None:
        self.rows["doc_id"].append(doc_id)
        self.rows["title"].append(title)
        self.rows["text"].append(text)
        self.rows["entities"].append([{"start": s, "end": e, "target": t} for s, e, t in entities])
        self.chars += len(text) + 100 * len(entities)

    def __len__(self) -> int:
        return len(self.rows["doc_id"])

    def flush(self) -> None:
        if len(self):
            self.writer.write_table(pa.Table.from_pydict(self.rows, schema=self.writer.schema))
            for column in self.rows.values():
                column.clear()
            self.chars = 0


def extract(
    dump: Path,
    lang: str,
    out: Path,
    shards: int = 1,
    stats_path: Path | None = None,
    keep_lists: bool = False,
    batch_docs: int = 500,
    batch_chars: int = 4_000_000,
    page_seconds: float = 30.0,
    index: Path | None = None,
    part: str | None = None,
    max_page_bytes: int = MAX_PAGE_BYTES,
) -> dict:
    languages.check(lang)
    if shards < 1:
        raise InputError(out, f"--shards must be at least 1, got {shards}")
    if (index is None) != (part is None):
        raise InputError(dump, "--index and --slice go together")
    stats_path = stats_path or out / "extract-stats.json"
    # a shard or --stats that is the dump or its index (--out beside the dump is fine: other names)
    outputs = [out / f"{shard_name(k)}.parquet" for k in range(shards)] + [stats_path]
    refuse_read_files(outputs, [dump, *([index] if index is not None else [])], "extract")
    params = {
        "lang": lang,
        "shards": shards,
        "keep_lists": keep_lists,
        "page_seconds": page_seconds,
        "max_page_bytes": max_page_bytes,
    }
    streams = None
    if part is not None:
        k, n = parse_slice(part)
        streams = stream_slice(dump, index, k, n)
        params["slice"] = f"{k}/{n}"
    rules = markup_rules(lang, keep_lists)
    counts = {
        "pages_seen": 0,
        "articles_kept": 0,
        "empty_articles": 0,
        "redirects_skipped": 0,
        "other_namespaces_skipped": 0,
        "templates_dropped": 0,
        "pages_failed": 0,
        "pages_timed_out": 0,
        "pages_too_large": 0,
        "entities": 0,
        "chars_out": 0,
    }
    failures: list[dict] = []
    script_sample: list[str] = []  # the start of the first articles, to check the script against --lang
    dump_progress = DumpProgress()
    meter = Progress(log, "pages", total=None)
    started = time.monotonic()

    def set_namespaces(names: dict[int, str]) -> None:
        nonlocal rules
        rules = rules.with_namespaces(names)

    with AtomicFiles() as files:
        # The provenance records the dump's checksum, known only at the end, so the shards
        # carry the parameters and code version; the stats JSON adds the checksum.
        record = provenance.make("extract", params, inputs=[provenance.portable_path(dump)])
        buffers = [
            ShardBuffer(contracts.open_writer(files.temp(out / f"{shard_name(k)}.parquet"), contracts.DOCS, record))
            for k in range(shards)
        ]
        try:
            pages = read_pages(dump, dump_progress, set_namespaces, streams, max_page_bytes)
            for page in pages:
                counts["pages_seen"] += 1
                meter.total = dump_progress.total_bytes
                meter.update(position=dump_progress.compressed_bytes)
                if page.ns != 0:
                    counts["other_namespaces_skipped"] += 1
                    continue
                if page.redirect:
                    counts["redirects_skipped"] += 1
                    continue
                if page.too_large:  # skipped and counted, as a page over its time budget
                    counts["pages_too_large"] += 1
                    error = f"{page.too_large:,} bytes of text, over --max-page-bytes {max_page_bytes:,}"
                    log.warning("%s: page %r (id %d) skipped: %s", dump, page.title, page.page_id, error)
                    if len(failures) < MAX_FAILURES_LISTED:
                        failures.append({"id": page.page_id, "title": page.title, "error": error})
                    continue
                try:
                    plain = to_plain_text(page.text, rules, page_seconds or None)
                except PageTimeout as exc:  # skipped and counted, as a page that breaks the converter
                    counts["pages_timed_out"] += 1
                    log.warning("%s: page %r (id %d) skipped: %s", dump, page.title, page.page_id, exc)
                    if len(failures) < MAX_FAILURES_LISTED:
                        failures.append({"id": page.page_id, "title": page.title, "error": str(exc)})
                    continue
                except Exception as exc:  # noqa: BLE001 -- a page that breaks the converter is skipped, not fatal
                    counts["pages_failed"] += 1
                    log.warning("%s: page %r (id %d) failed to parse: %r", dump, page.title, page.page_id, exc)
                    if len(failures) < MAX_FAILURES_LISTED:
                        failures.append({"id": page.page_id, "title": page.title, "error": repr(exc)})
                    continue
                counts["articles_kept"] += 1
                if len(script_sample) < 200:
                    script_sample.append(plain.text[:1000])
                counts["empty_articles"] += not plain.text
                counts["templates_dropped"] += plain.templates
                counts["entities"] += len(plain.entities)
                counts["chars_out"] += len(plain.text)
                buffer = buffers[shard_of(page.page_id, shards)]
                buffer.add(page.page_id, page.title, plain.text, plain.entities)
                if len(buffer) >= batch_docs or buffer.chars >= batch_chars:
                    buffer.flush()
            for buffer in buffers:
                buffer.flush()
        finally:
            for buffer in buffers:
                buffer.writer.close()
        meter.done()
        mismatch = languages.script_mismatch(lang, "".join(script_sample))
        if mismatch:
            log.warning("%s: %s (is this the right language?)", dump, mismatch)
        stats = {
            "script_warning": mismatch,
            **counts,
            "failed_pages": failures,
            "bytes_in": dump_progress.total_bytes,
            "bytes_uncompressed": dump_progress.uncompressed_bytes,
            "bytes_out": sum(files.temp(out / f"{shard_name(k)}.parquet").stat().st_size for k in range(shards)),
            "seconds": round(time.monotonic() - started, 3),
            "provenance": {
                **record,
                "inputs": [
                    {
                        "path": provenance.portable_path(dump),
                        "bytes": dump_progress.total_bytes,
                        "sha256": dump_progress.sha256,
                    }
                ],
            },
        }
        if streams is not None:  # the bytes read (header and the slice's streams), not the whole file
            stats["slice"] = {
                "slice": params["slice"],
                "header_end": streams.header_end,
                "start": streams.start,
                "end": streams.end,
                "index": provenance.file_fingerprint(index),
            }
        files.temp(stats_path).write_text(json_text(stats))
    log.info(
        "%s: %d pages, %d articles kept in %d shard(s), %d redirects, %d other namespaces, %d failed",
        dump,
        counts["pages_seen"],
        counts["articles_kept"],
        shards,
        counts["redirects_skipped"],
        counts["other_namespaces_skipped"],
        counts["pages_failed"],
    )
    return stats


def run(args: argparse.Namespace) -> None:
    if (args.index is None) != (args.slice is None):
        print("error: extract: --index and --slice go together", file=sys.stderr)
        raise SystemExit(2)
    extract(
        args.dump,
        args.lang,
        args.out,
        args.shards,
        args.stats,
        args.keep_lists,
        args.batch_docs,
        args.batch_chars,
        args.page_seconds,
        args.index,
        args.slice,
        args.max_page_bytes,
    )
