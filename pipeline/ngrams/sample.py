"""Stage ``sample``: a seeded uniform random sample of M marked sentences over all shards.

BURT §4.1 / docs/method.md §1 pre-train on 10M sentences drawn at random from the English Wikipedia.
The sample is exact (every M-subset of the corpus equally likely) and shard-parallel:

1. the number of sentences each shard contributes is one draw from the multivariate
   hypergeometric distribution over the shards' sizes (read from the Parquet footers only),
   seeded by ``--seed``; every job computes the same allocation;
2. each shard then draws its share of row numbers without replacement from a generator
   seeded by (seed, shard position) and streams its rows, keeping those.

Nothing holds more than one record batch of a shard in memory. The shards are taken in
sorted path order, so the sample depends on the set of inputs, not on how they are listed.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import contracts, provenance
from pipeline.atomic import AtomicFiles, json_text
from pipeline.errors import InputError
from pipeline.progress import Progress

log = logging.getLogger("pipeline.sample")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--marked", required=True, nargs="+", type=Path, help="every marked Parquet file of the corpus")
    parser.add_argument("--size", required=True, type=int, help="sentences in the whole sample (M)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", type=Path, help="draw only this input's share (one job per shard)")
    parser.add_argument("--out", required=True, type=Path, help="output Parquet file (marked contract)")


def allocation(sizes: list[int], size: int, seed: int) -> np.ndarray:
    """Sentences drawn from each shard: a multivariate hypergeometric draw (all of them if
    the corpus has at most ``size``)."""
    sizes_array = np.asarray(sizes, dtype=np.int64)
    if size >= sizes_array.sum():
        return sizes_array
    return np.random.default_rng(seed).multivariate_hypergeometric(sizes_array, size)


def rows_to_keep(n_rows: int, n_keep: int, seed: int, position: int) -> np.ndarray:
    """Sorted row numbers of a shard's share."""
    rng = np.random.default_rng([seed, position])
    return np.sort(rng.choice(n_rows, size=n_keep, replace=False))


def _sizes(paths: list[Path]) -> list[int]:
    sizes = []
    for path in paths:
        contracts.check_schema(path, contracts.MARKED)
        sizes.append(pq.ParquetFile(path).metadata.num_rows)
    return sizes


def run(args: argparse.Namespace) -> None:
    if args.size < 1:
        raise InputError(args.out, f"--size must be at least 1, got {args.size}")
    paths = sorted(set(args.marked), key=str)
    sizes = _sizes(paths)
    shares = allocation(sizes, args.size, args.seed)
    if shares.sum() < args.size:
        log.warning("the corpus has only %s sentences, fewer than --size %s: taking them all", shares.sum(), args.size)
    chosen = paths if args.only is None else [args.only]
    if args.only is not None and args.only not in paths:
        raise InputError(args.only, "--only must be one of the --marked files")
    params = {"size": args.size, "seed": args.seed, "shards": [str(p) for p in paths],
              "only": str(args.only) if args.only else None}
    record = provenance.make("sample", params, inputs=[provenance.file_fingerprint(p) for p in chosen],
                             seed=args.seed)
    started = time.monotonic()
    meter = Progress(log, "sentences", total=sum(sizes[paths.index(p)] for p in chosen))
    kept_total = 0
    seen = 0
    with AtomicFiles() as outputs, contracts.open_writer(outputs.temp(args.out), contracts.MARKED, record) as writer:
        for path in chosen:
            position = paths.index(path)
            keep = rows_to_keep(sizes[position], int(shares[position]), args.seed, position)
            offset = 0
            for batch in pq.ParquetFile(path).iter_batches(batch_size=65_536, columns=contracts.MARKED.names):
                lo, hi = np.searchsorted(keep, [offset, offset + len(batch)])
                if hi > lo:
                    table = pa.Table.from_batches([batch]).take(pa.array(keep[lo:hi] - offset))
                    writer.write_table(table.cast(writer.schema))
                offset += len(batch)
                meter.update(len(batch), position=seen + offset)
            seen += offset
            kept_total += len(keep)
        stats = {"sentences_in": seen, "sentences_out": kept_total, "corpus_sentences": int(sum(sizes)),
                 "sample_size": int(shares.sum()), "seconds": round(time.monotonic() - started, 3),
                 "provenance": record}
        outputs.temp(args.out.with_suffix(".stats.json")).write_text(json_text(stats))
    meter.done()
    log.info("%s: %s of %s sentences", args.out, kept_total, seen)
