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
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from pipeline import contracts, provenance
from pipeline.arguments import POSITIVE, SEED
from pipeline.atomic import AtomicFiles, json_text
from pipeline.errors import InputError
from pipeline.progress import Progress

log = logging.getLogger("pipeline.sample")

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--marked", required=True, nargs="+", type=Path, help="every marked Parquet file of the corpus")
    parser.add_argument("--size", required=True, type=POSITIVE, help="sentences in the whole sample (M)")
    parser.add_argument("--seed", type=SEED, default=0)
    parser.add_argument("--only", type=Path, help="draw only this input's share (one job per shard)")
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


def run(args: argparse.Namespace) -> None:
    if args.size < 1:
        raise InputError(args.out, f"--size must be at least 1, got {args.size}")
    paths = sorted(set(args.marked), key=str)
    if args.only is not None and args.only not in paths:
        raise InputError(args.only, "--only must be one of the --marked files")
    sizes = _check(paths)
    chosen = paths if args.only is None else [args.only]
    params = {
        "size": args.size,
        "seed": args.seed,
        "shards": [provenance.portable_path(p) for p in paths],
        "only": provenance.portable_path(args.only) if args.only else None,
    }
    record = provenance.make("sample", params, inputs=[provenance.file_fingerprint(p) for p in chosen], seed=args.seed)
    started = time.monotonic()
    cut = threshold(paths, args.size, args.seed)
    if cut is None:
        log.warning("the corpus has only %s sentences, at most --size %s: taking them all", sum(sizes), args.size)
    meter = Progress(log, "sentences", total=sum(sizes[paths.index(p)] for p in chosen))
    kept_total = 0
    seen = 0
    with AtomicFiles() as outputs, contracts.open_writer(outputs.temp(args.out), contracts.MARKED, record) as writer:
        for path in chosen:
            for batch in contracts.iter_batches(path, contracts.MARKED.names):
                if cut is None:
                    keep = np.arange(len(batch))
                else:
                    hashes = sentence_hash(batch.column(0).to_numpy(), batch.column(1).to_numpy(), args.seed)
                    keep = np.flatnonzero(hashes <= np.uint64(cut))
                if len(keep):
                    table = pa.Table.from_batches([batch]).take(pa.array(keep))
                    writer.write_table(table.cast(writer.schema))
                kept_total += len(keep)
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
        outputs.temp(args.out.with_suffix(".stats.json")).write_text(json_text(stats))
    meter.done()
    log.info("%s: %s of %s sentences", args.out, kept_total, seen)
