"""Input and output files of the per-shard corpus stages.

``convert`` and ``clean`` map each input Parquet file to one output file of the same name
in ``--out``; ``--input`` takes files or directories (every ``*.parquet`` inside, sorted).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import contracts, provenance
from pipeline.atomic import AtomicFiles, json_text
from pipeline.errors import InputError
from pipeline.progress import Progress


def input_files(paths: list[Path], unique_names: bool = True) -> list[Path]:
    """Files named, and every ``*.parquet`` in directories named; with ``unique_names`` (stages that
    map each input to an output of the same name) two inputs may not share a file name."""
    files: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(path.glob("*.parquet"))
            if not found:
                raise InputError(path, "directory holds no .parquet files")
            files.extend(found)
        elif path.exists():
            files.append(path)
        else:
            raise InputError(path, "input not found")
    if not unique_names:
        return files
    names = [f.name for f in files]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise InputError(paths[0], f"several inputs share the output name(s) {duplicates}")
    return files


def map_files(
    inputs: list[Path],
    out_dir: Path,
    stage: str,
    params: dict,
    in_schema: pa.Schema,
    out_schema: pa.Schema,
    process,
    logger: logging.Logger,
) -> dict[str, dict]:
    """Run ``process(rows, counts) -> rows`` over every input file, batch by batch.

    Each input ``X.parquet`` becomes ``out_dir/X.parquet`` plus ``out_dir/X.stats.json``
    (the counts, seconds and provenance), both written atomically. Returns the stats by
    output name.
    """
    files = input_files(inputs)
    all_stats = {}
    for path in files:
        started = time.monotonic()
        counts: Counter = Counter()
        record = provenance.make(stage, params, inputs=[provenance.file_fingerprint(path)])
        target = out_dir / path.name
        contracts.check_schema(path, in_schema)
        meter = Progress(logger, "rows", total=pq.ParquetFile(path).metadata.num_rows)
        with AtomicFiles() as outputs:
            with contracts.open_writer(outputs.temp(target), out_schema, record) as writer:
                for rows in contracts.iter_rows(path, in_schema):
                    counts["rows_in"] += len(rows)
                    produced = process(rows, counts)
                    counts["rows_out"] += len(produced)
                    if produced:
                        writer.write_table(pa.Table.from_pylist(produced, schema=writer.schema))
                    meter.update(len(rows), position=counts["rows_in"])
            stats = {
                **dict(sorted(counts.items())),
                "seconds": round(time.monotonic() - started, 3),
                "provenance": record,
            }
            outputs.temp(target.with_suffix(".stats.json")).write_text(json_text(stats))
        meter.done()
        logger.info("%s → %s: %s", path, target, ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items())))
        all_stats[target.name] = stats
    return all_stats
