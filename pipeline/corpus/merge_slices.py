"""Stage ``merge-slices``: the docs shards of N slice extractions → the dump part's docs shards.

Each ``extract --slice K/N`` job writes its documents into the part's ``--shards`` files by
``doc_id`` (:mod:`pipeline.corpus.sharding`). Shard ``s`` of the part is shard ``s`` of slice
0, then of slice 1, ...: the dump's order. Rows are regrouped with extraction's own rule
(a row group every ``--batch-docs`` documents or ``--batch-chars`` characters) and the files
carry extraction's provenance without the slice, so the shards are byte for byte those of one
``extract`` job over the whole dump, whatever N. The stats JSON sums the slices' counts.

The workflow runs one job per shard (``--shard K``: that shard only) and one for the stats
(``--stats-only``), so that merging is as parallel as the shards are.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline import contracts
from pipeline.arguments import BATCH, CHARACTERS, SHARD, SHARDS
from pipeline.atomic import AtomicFiles, json_text
from pipeline.corpus.extract import MAX_FAILURES_LISTED
from pipeline.corpus.sharding import shard_name
from pipeline.errors import InputError
from pipeline.output_guard import refuse_read_files

log = logging.getLogger("pipeline.merge_slices")

SUMMED = (
    "pages_seen",
    "articles_kept",
    "empty_articles",
    "redirects_skipped",
    "other_namespaces_skipped",
    "templates_dropped",
    "pages_failed",
    "pages_timed_out",
    "pages_too_large",
    "entities",
    "chars_out",
    "bytes_in",
    "bytes_uncompressed",
    "seconds",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--slices",
        required=True,
        nargs="+",
        type=Path,
        help="the slices' output directories, in slice order (each with extract-stats.json)",
    )
    parser.add_argument("--out", required=True, type=Path, help="directory for the merged shard-NNN.parquet files")
    parser.add_argument("--shards", type=SHARDS, default=1, help="number of shard files (as given to extract)")
    parser.add_argument("--stats", type=Path, help="stats JSON (default OUT/extract-stats.json)")
    parser.add_argument("--shard", type=SHARD, help="write only this shard (no stats)")
    parser.add_argument("--stats-only", action="store_true", help="write only the stats JSON")
    parser.add_argument("--batch-docs", type=BATCH, default=500, help="as given to extract")
    parser.add_argument("--batch-chars", type=CHARACTERS, default=4_000_000, help="as given to extract")


def _slice_stats(directory: Path) -> dict:
    path = directory / "extract-stats.json"
    try:
        stats = json.loads(path.read_text())
    except FileNotFoundError as exc:
        raise InputError(path, "slice stats not found (did the slice's extract job finish?)") from exc
    except json.JSONDecodeError as exc:
        raise InputError(path, f"not JSON: {exc.msg}", f"line {exc.lineno}") from exc
    if "slice" not in stats:
        raise InputError(path, "not the stats of an extract --slice job")
    return stats


def _whole_dump_record(record: dict) -> dict:
    """The slice's provenance as one extraction over the whole dump records it."""
    params = {k: v for k, v in record["params"].items() if k != "slice"}
    return {**record, "params": params}


def _check_unique_ids(ids: list[tuple[Path, np.ndarray]]) -> None:
    """Refuse a doc_id found twice among ``(file, doc_ids)``, naming the file of its second copy.

    A page id goes to one shard whatever the slice, so one shard's files see every copy."""
    if not ids:
        return
    ordered = np.sort(np.concatenate([found for _, found in ids]))
    again = ordered[1:][ordered[1:] == ordered[:-1]]
    if not len(again):
        return
    page_id, copies = int(again[0]), 0
    for path, found in ids:
        copies += int(np.count_nonzero(found == page_id))
        if copies > 1:
            raise InputError(path, f"page id {page_id} appears twice in the dump (in two slices or twice in one)")


def _regroup(paths: list[Path], writer, batch_docs: int, batch_chars: int) -> None:
    """Copy the rows of ``paths`` in order into row groups cut where extraction cuts them.

    :class:`~pipeline.corpus.extract.ShardBuffer` flushes after the row that brings its count to
    ``batch_docs`` or its size (text plus 100 per link) to ``batch_chars``; the same cuts here,
    computed on Arrow columns, make the same row groups and so the same bytes.
    """
    pending: list[pa.RecordBatch] = []
    rows = chars = 0
    ids: list[tuple[Path, np.ndarray]] = []  # 8 bytes a document: a page id in two slices is refused
    for path in paths:
        contracts.check_schema(path, contracts.DOCS)
        for batch in pq.ParquetFile(path).iter_batches(batch_size=65536):
            ids.append((path, batch.column("doc_id").to_numpy(zero_copy_only=False)))
            sizes = pc.utf8_length(batch.column("text")).to_numpy(zero_copy_only=False) + 100 * pc.list_value_length(
                batch.column("entities")
            ).to_numpy(zero_copy_only=False)
            start = 0
            for i, size in enumerate(sizes.tolist()):
                rows += 1
                chars += size
                if rows >= batch_docs or chars >= batch_chars:
                    pending.append(batch.slice(start, i + 1 - start))
                    writer.write_table(pa.Table.from_batches(pending).combine_chunks())
                    pending, rows, chars, start = [], 0, 0, i + 1
            if start < len(batch):
                pending.append(batch.slice(start))
    if rows:
        writer.write_table(pa.Table.from_batches(pending).combine_chunks())
    _check_unique_ids(ids)


def merge(
    slices: list[Path],
    out: Path,
    shards: int,
    stats_path: Path | None = None,
    batch_docs: int = 500,
    batch_chars: int = 4_000_000,
    only: int | None = None,
    stats_only: bool = False,
) -> dict:
    stats_path = stats_path or out / "extract-stats.json"
    all_stats = [_slice_stats(Path(d)) for d in slices]
    records = [_whole_dump_record(s["provenance"]) for s in all_stats]
    expected = [f"{k}/{len(slices)}" for k in range(len(slices))]
    found = [s["slice"]["slice"] for s in all_stats]
    if found != expected:
        raise InputError(slices[0], f"slices {found} given, expected {expected} in this order")
    record = {k: v for k, v in records[0].items() if k != "inputs"}
    if any({k: v for k, v in r.items() if k != "inputs"} != record for r in records):
        raise InputError(slices[0], "the slices were extracted with different parameters or code")
    record["inputs"] = [inp["path"] for inp in records[0]["inputs"]]
    if record["params"]["shards"] != shards:
        raise InputError(slices[0], f"the slices have {record['params']['shards']} shards, --shards is {shards}")
    if only is not None and not 0 <= only < shards:
        raise ValueError(f"--shard must lie in 0..{shards - 1}, got {only}")
    wanted = [] if stats_only else [only] if only is not None else list(range(shards))
    # an --out that is one of the slices' folders would write its shards and stats over their own
    names = [f"{shard_name(k)}.parquet" for k in wanted]
    read = [Path(d) / name for d in slices for name in ["extract-stats.json", *names]]
    outputs = [out / name for name in names] + ([stats_path] if only is None else [])
    refuse_read_files(outputs, read, "merge-slices")
    with AtomicFiles() as files:
        for k in wanted:
            name = f"{shard_name(k)}.parquet"
            with contracts.open_writer(files.temp(out / name), contracts.DOCS, record) as writer:
                _regroup([Path(directory) / name for directory in slices], writer, batch_docs, batch_chars)
        if only is not None:
            log.info("%d slice(s) → %s", len(slices), out / f"{shard_name(only)}.parquet")
            return {}
        stats = {key: sum(s.get(key, 0) for s in all_stats) for key in SUMMED}
        stats["seconds"] = round(stats["seconds"], 3)
        stats["failed_pages"] = [f for s in all_stats for f in s["failed_pages"]][:MAX_FAILURES_LISTED]
        stats["bytes_out"] = sum(s["bytes_out"] for s in all_stats)
        stats["slices"] = [{**s["slice"], "input": s["provenance"]["inputs"][0]} for s in all_stats]
        stats["provenance"] = record
        files.temp(stats_path).write_text(json_text(stats))
    log.info("%d slice(s) → %d shard(s): %d articles", len(slices), shards, stats["articles_kept"])
    return stats


def run(args: argparse.Namespace) -> None:
    merge(
        args.slices, args.out, args.shards, args.stats, args.batch_docs, args.batch_chars, args.shard, args.stats_only
    )
