"""Stage ``sample``: a seeded uniform random sample of M marked sentences over all shards.

BURT §4.1 (docs/method.md §1) pre-trains on 10M sentences drawn at random from the English
Wikipedia. The sample is the M sentences with the smallest seeded hash of ``(doc_id,
sent_id)`` (a bottom-M sample): a function of the seed and the corpus content alone, so it
is the same set whatever the number of shards or the order of the inputs, and exact and
uniform (every M-subset of the corpus is equally likely under a random hash).

Each shard job reads the ``doc_id`` and ``sent_id`` columns of every shard, keeps the M
smallest hashes in a buffer that is cut back to M whenever it doubles (memory about 16 bytes
per sampled sentence), and so knows the threshold, the M-th smallest hash; it then streams
its own rows and keeps those hashed at or below it. Hash ties at the threshold (probability
about M / 2^64) would keep both sentences.

``--with-next`` (the NSP / SOP sample, ULR-BERT §7.1, docs/method.md §3) also writes, for each
sampled sentence, the next sentence of its document (same ``doc_id``, ``sent_id`` + 1) where the
input holds it, and marks the rows (contract ``marked pairs``, column ``sampled``: false for a
row present only as a next sentence). NSP and SOP then get one pair per sampled sentence that
is not the last of its document, about as many examples as the single-sentence objectives get
from the same sample, instead of only the pairs whose both sentences were drawn (M² / N of
them, 10x fewer at the papers' 10M of about 100M sentences); ULR-BERT compares them "with the
same additional updates". A document lies in one shard (``doc_id mod shards``), so each shard
job finds the next sentences in its own shard: a first pass collects the keys of its sampled
sentences (12 bytes each), the second writes the sampled rows and their successors.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from pipeline import contracts, provenance
from pipeline.arguments import SAMPLE, SEED
from pipeline.atomic import AtomicFiles, json_text
from pipeline.errors import InputError
from pipeline.output_guard import refuse_read_files
from pipeline.progress import Progress

log = logging.getLogger("pipeline.sample")

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--marked", required=True, nargs="+", type=Path, help="every marked Parquet file of the corpus")
    parser.add_argument("--size", required=True, type=SAMPLE, help="sentences in the whole sample (M)")
    parser.add_argument("--seed", type=SEED, default=0)
    parser.add_argument("--only", type=Path, help="draw only this input's share (one job per shard)")
    parser.add_argument(
        "--with-next",
        action="store_true",
        help="also write each sampled sentence's next sentence, flagged (marked pairs contract; for NSP / SOP)",
    )
    parser.add_argument("--out", required=True, type=Path, help="output Parquet file (marked contract)")


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: a bijection of uint64 that scatters every input bit."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def sentence_hash(doc_ids, sent_ids, seed: int) -> np.ndarray:
    """The seeded uint64 hash of each ``(doc_id, sent_id)``; the sample keeps the M smallest."""
    with np.errstate(over="ignore"):
        key = np.uint64(seed & 0xFFFFFFFFFFFFFFFF) * _GOLDEN
        doc = _mix(np.asarray(doc_ids).astype(np.int64).view(np.uint64) ^ key)
        return _mix(
            doc + _GOLDEN + np.asarray(sent_ids).astype(np.int64).view(np.uint64) * np.uint64(0xD6E8FEB86659FD93)
        )


def threshold(paths: list[Path], size: int, seed: int) -> int | None:
    """The ``size``-th smallest hash over every sentence of ``paths``; None if there are fewer."""
    kept = np.zeros(0, dtype=np.uint64)
    pending: list[np.ndarray] = []
    pending_rows = 0
    total = 0
    for path in paths:
        for batch in contracts.iter_batches(path, ["doc_id", "sent_id"]):
            hashes = sentence_hash(batch.column(0).to_numpy(), batch.column(1).to_numpy(), seed)
            pending.append(hashes)
            pending_rows += len(hashes)
            total += len(hashes)
            if pending_rows >= max(size, 65_536):
                kept = _smallest(np.concatenate([kept, *pending]), size)
                pending, pending_rows = [], 0
    kept = _smallest(np.concatenate([kept, *pending]), size)
    return int(kept.max()) if total > size else None


def _smallest(values: np.ndarray, size: int) -> np.ndarray:
    return values if len(values) <= size else np.partition(values, size - 1)[:size]


def _check(paths: list[Path]) -> list[int]:
    sizes = []
    for path in paths:
        contracts.check_schema(path, contracts.MARKED)
        sizes.append(contracts.num_rows(path))
    return sizes


_KEY = np.dtype([("doc_id", "<i8"), ("sent_id", "<i4")])


def _keys(doc_ids, sent_ids) -> np.ndarray:
    keys = np.empty(len(doc_ids), dtype=_KEY)
    keys["doc_id"], keys["sent_id"] = doc_ids, sent_ids
    return keys


def _sampled_rows(batch: pa.RecordBatch, cut: int | None, seed: int) -> np.ndarray:
    """Positions in ``batch`` of the sampled sentences (every one where ``cut`` is None)."""
    if cut is None:
        return np.arange(len(batch))
    hashes = sentence_hash(batch.column(0).to_numpy(), batch.column(1).to_numpy(), seed)
    return np.flatnonzero(hashes <= np.uint64(cut))


def sampled_keys(paths: list[Path], cut: int | None, seed: int) -> np.ndarray:
    """The sorted ``(doc_id, sent_id)`` keys of the sampled sentences of ``paths``."""
    found = [np.zeros(0, dtype=_KEY)]
    for path in paths:
        for batch in contracts.iter_batches(path, ["doc_id", "sent_id"]):
            keep = _sampled_rows(batch, cut, seed)
            found.append(_keys(batch.column(0).to_numpy()[keep], batch.column(1).to_numpy()[keep]))
    return np.sort(np.concatenate(found))


def follows_sampled(batch: pa.RecordBatch, keys: np.ndarray) -> np.ndarray:
    """Per row of ``batch``: is the previous sentence of its document (``sent_id`` - 1) in ``keys``."""
    doc_ids, sent_ids = batch.column(0).to_numpy(), batch.column(1).to_numpy()
    previous = _keys(doc_ids, sent_ids.astype(np.int64) - 1)
    at = np.minimum(np.searchsorted(keys, previous), max(len(keys) - 1, 0))
    return (sent_ids > 0) & (keys[at] == previous) if len(keys) else np.zeros(len(batch), dtype=bool)


def run(args: argparse.Namespace) -> None:
    if args.size < 1:
        raise InputError(args.out, f"--size must be at least 1, got {args.size}")
    paths = sorted(set(args.marked), key=str)
    if args.only is not None and args.only not in paths:
        raise InputError(args.only, "--only must be one of the --marked files")
    # the sample and its stats never over a marked file: --marked names every shard, not only --only's
    refuse_read_files([args.out, args.out.with_suffix(".stats.json")], paths, "sample")
    sizes = _check(paths)
    chosen = paths if args.only is None else [args.only]
    params = {
        "size": args.size,
        "seed": args.seed,
        "shards": [provenance.portable_path(p) for p in paths],
        "only": provenance.portable_path(args.only) if args.only else None,
        "with_next": args.with_next,
    }
    record = provenance.make("sample", params, inputs=[provenance.file_fingerprint(p) for p in chosen], seed=args.seed)
    started = time.monotonic()
    cut = threshold(paths, args.size, args.seed)
    if cut is None:
        log.warning("the corpus has only %s sentences, at most --size %s: taking them all", sum(sizes), args.size)
    keys = sampled_keys(chosen, cut, args.seed) if args.with_next else None
    schema = contracts.MARKED_PAIRS if args.with_next else contracts.MARKED
    meter = Progress(log, "sentences", total=sum(sizes[paths.index(p)] for p in chosen))
    kept_total = seen = next_only = with_next = 0
    with AtomicFiles() as outputs, contracts.open_writer(outputs.temp(args.out), schema, record) as writer:
        for path in chosen:
            for batch in contracts.iter_batches(path, contracts.MARKED.names):
                keep = _sampled_rows(batch, cut, args.seed)
                kept_total += len(keep)
                columns = {name: batch.column(name) for name in contracts.MARKED.names}
                if keys is not None:  # the sampled rows and the rows that follow one, flagged
                    sampled = np.zeros(len(batch), dtype=bool)
                    sampled[keep] = True
                    follows = follows_sampled(batch, keys)
                    with_next += int(follows.sum())
                    next_only += int((follows & ~sampled).sum())
                    keep = np.flatnonzero(sampled | follows)
                    columns["sampled"] = pa.array(sampled)
                if len(keep):
                    table = pa.Table.from_pydict(columns).take(pa.array(keep))
                    writer.write_table(table.cast(writer.schema))
                seen += len(batch)
                meter.update(len(batch), position=seen)
        stats = {
            "sentences_in": seen,
            "sentences_out": kept_total,
            "corpus_sentences": int(sum(sizes)),
            "sample_size": min(args.size, int(sum(sizes))),
            "seconds": round(time.monotonic() - started, 3),
            "provenance": record,
        }
        if keys is not None:
            # sentences_out counts the sampled rows only; a sampled sentence whose next one is not
            # in the input (the last of its document) gets no NSP / SOP pair
            stats.update(
                next_only_rows=next_only, sampled_with_next=with_next, sampled_without_next=kept_total - with_next
            )
        outputs.temp(args.out.with_suffix(".stats.json")).write_text(json_text(stats))
    meter.done()
    log.info("%s: %s of %s sentences", args.out, kept_total, seen)
    if keys is not None:
        log.info(
            "%s: %s next sentences not sampled themselves; %s sampled sentences have none",
            args.out,
            next_only,
            kept_total - with_next,
        )
