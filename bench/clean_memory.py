"""Peak memory of ``clean`` by shard size: is it bounded whatever the shard holds?

The "Scaling" rehearsal (BENCHMARKS.md) sampled 1.37 GB for one ``clean`` job on a 12.6M-word
shard against 184 MB on a 0.4M-word one; a paper-en shard holds about 35M words (2,266M words in
64 shards). Here the English sample's documents (106 articles, 0.4M words) are extracted once and
written ``k`` times with fresh document ids into one docs shard per size, in row groups of the size
``extract`` writes; then ``python -m pipeline clean`` runs on each in a subprocess, peak RSS and CPU
from ``os.wait4``. ``--tree DIR`` runs the stage from another source tree, for a before/after
comparison::

    python bench/clean_memory.py --write-md
    git archive OLD pipeline | tar -x -C /tmp/old && python bench/clean_memory.py --tree /tmp/old

The shards are built once into ``--work`` (git-ignored ``bench/work`` by default) and reused.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import REPO, add_data_root, machine, markdown_table, measure, write_section

SAMPLE = "wiki/en/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
ROW_GROUP_DOCS = 53  # about what extract's --batch-chars cut gives on these long articles


def sample_docs(data_root: Path, work: Path) -> Path:
    """The English sample's docs shard, extracted once."""
    out = work / "docs-1"
    if not (out / "shard-000.parquet").exists():
        measure(
            [sys.executable, "-m", "pipeline", "extract", "--dump", str(data_root / SAMPLE), "--lang", "en"]
            + ["--out", str(out)],
            work / "extract.log",
        )
    return out / "shard-000.parquet"


def replicated(docs: Path, copies: int, work: Path) -> tuple[Path, int]:
    """A docs shard holding ``copies`` copies of ``docs`` with fresh ids, and its word count."""
    folder = work / f"docs-x{copies}"
    target = folder / "shard-000.parquet"
    table = pq.read_table(docs)
    words = sum(len(text.split()) for text in table.column("text").to_pylist()) * copies
    if target.exists():
        return folder, words
    folder.mkdir(parents=True, exist_ok=True)
    schema = pq.ParquetFile(docs).schema_arrow
    tmp = target.with_name(".shard-000.parquet.tmp")
    with pq.ParquetWriter(str(tmp), schema, compression="zstd") as writer:
        for copy in range(copies):
            ids = pc.add(table.column("doc_id"), copy * 100_000_000).cast(pa.int64())
            writer.write_table(pa.Table.from_arrays([ids, *table.columns[1:]], schema=schema), ROW_GROUP_DOCS)
    os.replace(tmp, target)
    return folder, words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_root(parser)
    parser.add_argument("--copies", type=int, nargs="+", default=[8, 32, 64], help="sample copies per shard")
    parser.add_argument("--tree", type=Path, default=REPO, help="source tree to run the stage from (default: this one)")
    parser.add_argument("--work", type=Path, default=REPO / "bench" / "work" / "clean-memory")
    parser.add_argument("--write-md", action="store_true", help="write BENCHMARKS.md's section")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    docs = sample_docs(args.data, args.work)
    rows = []
    for copies in args.copies:
        folder, words = replicated(docs, copies, args.work)
        out = args.work / f"clean-x{copies}"
        run = measure(
            [sys.executable, "-m", "pipeline", "clean", "--input", str(folder.resolve()), "--lang", "en"]
            + ["--out", str(out.resolve())],
            args.work / f"clean-x{copies}.log",
            cwd=args.tree,
        )
        rows.append([f"{words / 1e6:.1f}M", f"{run.cpu:.1f}", f"{run.peak_rss_mb:.0f}"])
        print(f"{words:,} words: {run.cpu:.1f} CPU s, peak RSS {run.peak_rss_mb:.0f} MB", flush=True)
    table = markdown_table(["words in the shard", "CPU s", "peak RSS MB"], rows)
    print(table)
    if args.write_md:
        write_section(
            "clean: memory by shard size", f"## clean: memory by shard size\n\n{machine(sys.executable)}\n\n{table}\n"
        )


if __name__ == "__main__":
    main()
