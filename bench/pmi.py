"""Benchmark the ``ngrams`` stage against the plain-Python PMI algorithm, in one run.

What it measures: the whole stage (count + PMI + top-K + marking, reading sentences and
writing results), per core, on the reference sentences (``reference_pmi/sentences.parquet``:
106 real English Wikipedia articles) replicated with fresh doc_ids to ``--words`` words.

* ours: ``python -m pipeline ngrams --mode reference`` (one process, pinned to one core, Arrow
  and Polars limited to one thread), writing ngrams.parquet and marked.parquet;
* baseline: ``tests/pmi_python.py``, the released code's algorithm in plain Python
  (a dict per n-gram order, as ``compute_pmi`` / ``ngram_match`` have it), one document at a
  time, writing the marked lines as the released script does, also pinned to one core.

Both outputs are compared (every marked line equal) before any number is reported.

    ratio = (our words per CPU-second) / (baseline's words per CPU-second)

Peak RSS of ours is measured at full size and at a quarter of it: with documents processed in
batches it must not grow with the corpus. Scaling: the corpus split into one shard per core,
one process per shard, all at once; efficiency = (words/s of all shards together) / (cores ×
single-process words/s). The projection for full English Wikipedia (2,266M words, docs/method.md §1)
on a 32-core node uses the measured per-core rate and efficiency.

    python bench/pmi.py                  # print the table and the ratio
    python bench/pmi.py --write-md       # also update the "## ngrams" section of BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(
    0, str(Path(__file__).resolve().parents[1] / "tests")
)  # test-only helpers (pmi_python, multistream_writer)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness import REPO, Run, machine, markdown_table, measure, write_section

REFERENCE = Path("reference_pmi/sentences.parquet")
WIKIPEDIA_WORDS = 2_266e6
ONE_THREAD = {"OMP_NUM_THREADS": "1", "POLARS_MAX_THREADS": "1"}  # Arrow reads OMP_NUM_THREADS


def build_corpus(data_root: Path, words: int, work: Path, shards: int = 1) -> list[Path]:
    """The reference sentences replicated to about ``words`` words, split into ``shards`` files by document."""
    table = pq.read_table(data_root / REFERENCE, columns=["doc_id", "sent_id", "text"])
    per_copy = sum(len(t.split()) for t in table.column("text").to_pylist())
    copies = max(1, round(words / per_copy))
    paths = [work / f"sentences-{copies}x-{k}of{shards}.parquet" for k in range(shards)]
    if all(p.exists() for p in paths):
        return paths
    stride = int(pa.compute.max(table.column("doc_id")).as_py()) + 1
    writers = [
        pq.ParquetWriter(p, pa.schema([("doc_id", pa.int64()), ("sent_id", pa.int32()), ("text", pa.string())]))
        for p in paths
    ]
    for copy in range(copies):
        doc = table.column("doc_id").to_numpy() + copy * stride
        part = pa.table(
            {
                "doc_id": doc,
                "sent_id": table.column("sent_id").cast(pa.int32()),
                "text": table.column("text").cast(pa.string()),
            }
        )
        writers[copy % shards].write_table(part)
    for writer in writers:
        writer.close()
    return paths


def corpus_words(path: Path) -> tuple[int, int]:
    table = pq.read_table(path, columns=["doc_id", "text"])
    words = sum(len(t.split()) for t in table.column("text").to_pylist())
    return words, len(np.unique(table.column("doc_id").to_numpy()))


def baseline_worker(sentences: Path, out: Path) -> None:
    """The plain-Python algorithm over every document, writing marked lines."""
    import pmi_python

    table = pq.read_table(sentences, columns=["doc_id", "text"])
    doc = table.column("doc_id").to_numpy()
    texts = table.column("text").to_pylist()
    bounds = np.flatnonzero(np.diff(doc)) + 1
    with out.open("w", encoding="utf-8") as sink:
        for lo, hi in zip(np.concatenate([[0], bounds]), np.concatenate([bounds, [len(doc)]])):
            _, words, spans = pmi_python.process_document(texts[lo:hi], mode="reference")
            for w, s in zip(words, spans):
                sink.write(pmi_python.render(w, s) + "\n")


def ours_lines(marked: Path) -> list[str]:
    import pmi_python

    table = pq.read_table(marked, columns=["text", "spans"])
    return [
        pmi_python.render(text.split(), [(s["start"], s["end"]) for s in spans])
        for text, spans in zip(table.column("text").to_pylist(), table.column("spans").to_pylist())
    ]


def pinned(cmd: list[str], core: int) -> list[str]:
    return ["taskset", "-c", str(core), *cmd]


def run_ours(python: str, sentences: Path, out: Path, core: int = 0) -> Run:
    out.mkdir(parents=True, exist_ok=True)
    cmd = [python, "-m", "pipeline", "ngrams", "--sentences", str(sentences), "--out", str(out), "--mode", "reference"]
    return measure(pinned(cmd, core), out / "log.txt", env=ONE_THREAD)


def run_parallel(python: str, shards: list[Path], work: Path) -> float:
    """Wall seconds for one process per shard, each pinned to its own core, all at once."""
    import subprocess

    started = time.perf_counter()
    procs = []
    for core, shard in enumerate(shards):
        out = work / f"out-parallel-{core}"
        out.mkdir(parents=True, exist_ok=True)
        cmd = pinned(
            [python, "-m", "pipeline", "ngrams", "--sentences", str(shard), "--out", str(out), "--mode", "reference"],
            core,
        )
        procs.append(
            subprocess.Popen(
                cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **ONE_THREAD}
            )
        )
    if any(p.wait() for p in procs):
        raise SystemExit("error: a parallel shard run failed")
    return time.perf_counter() - started


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-root", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--words", type=int, default=8_000_000, help="corpus size (words)")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--work", type=Path, default=REPO / "bench" / "work" / "pmi")
    parser.add_argument("--write-md", action="store_true")
    parser.add_argument("--worker", choices=["baseline"], help=argparse.SUPPRESS)
    parser.add_argument("--input", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--output", type=Path, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.worker:
        sys.path.insert(0, str(REPO))
        baseline_worker(args.input, args.output)
        return 0
    args.work.mkdir(parents=True, exist_ok=True)
    cores = len(os.sched_getaffinity(0))
    (full,) = build_corpus(args.data_root, args.words, args.work)
    (quarter,) = build_corpus(args.data_root, args.words // 4, args.work)
    shards = build_corpus(args.data_root, args.words, args.work, shards=cores)
    words, docs = corpus_words(full)
    quarter_words, _ = corpus_words(quarter)
    print(f"corpus: {words:,} words, {docs:,} documents ({full.name}); quarter: {quarter_words:,} words", flush=True)

    ours = run_ours(args.python, full, args.work / "out-ours")
    print(f"ours: {ours}", flush=True)
    ours_quarter = run_ours(args.python, quarter, args.work / "out-quarter")
    baseline_out = args.work / "baseline-marked.txt"
    baseline = measure(
        pinned(
            [
                args.python,
                str(Path(__file__).resolve()),
                "--worker",
                "baseline",
                "--input",
                str(full),
                "--output",
                str(baseline_out),
            ],
            0,
        ),
        args.work / "baseline-log.txt",
    )
    print(f"baseline: {baseline}", flush=True)
    expected = baseline_out.read_text(encoding="utf-8").split("\n")[:-1]
    got = ours_lines(args.work / "out-ours" / "marked.parquet")
    if got != expected:
        raise SystemExit(f"error: outputs differ ({len(got)} vs {len(expected)} lines)")
    parallel_wall = run_parallel(args.python, shards, args.work) if cores > 1 else ours.wall

    rate = words / ours.cpu
    base_rate = words / baseline.cpu
    ratio = rate / base_rate
    efficiency = (words / parallel_wall) / (cores * words / ours.wall)
    projection_h = WIKIPEDIA_WORDS / (rate * 32 * efficiency) / 3600
    rows = [
        [
            "ours (1 core)",
            f"{words:,}",
            f"{ours.wall:.1f}",
            f"{ours.cpu:.1f}",
            f"{rate:,.0f}",
            f"{docs / ours.cpu:,.1f}",
            f"{ours.peak_rss_mb:.0f}",
        ],
        [
            "ours, quarter size",
            f"{quarter_words:,}",
            f"{ours_quarter.wall:.1f}",
            f"{ours_quarter.cpu:.1f}",
            f"{quarter_words / ours_quarter.cpu:,.0f}",
            "",
            f"{ours_quarter.peak_rss_mb:.0f}",
        ],
        [
            "plain-Python baseline (1 core)",
            f"{words:,}",
            f"{baseline.wall:.1f}",
            f"{baseline.cpu:.1f}",
            f"{base_rate:,.0f}",
            f"{docs / baseline.cpu:,.1f}",
            f"{baseline.peak_rss_mb:.0f}",
        ],
        [
            f"ours, {cores} shards on {cores} cores",
            f"{words:,}",
            f"{parallel_wall:.1f}",
            "",
            f"{words / parallel_wall:,.0f} (wall)",
            "",
            "",
        ],
    ]
    table = markdown_table(
        ["run", "words", "wall s", "CPU s", "words per CPU-s", "docs per CPU-s", "peak RSS MB"], rows
    )
    summary = [
        f"- ratio (ours / baseline, words per CPU-second): **{ratio:.1f}x** (goal: at least 25x)",
        (
            f"- peak RSS, ours at {words:,} vs {quarter_words:,} words: {ours.peak_rss_mb:.0f} / "
            f"{ours_quarter.peak_rss_mb:.0f} MB (goal: at most 1.5 GiB per worker, flat)"
        ),
        f"- scaling over {cores} cores: efficiency {efficiency:.2f}",
        (
            f"- projection, full English Wikipedia ({WIKIPEDIA_WORDS / 1e6:,.0f}M words) on a 32-core node: "
            f"{projection_h:.2f} h ({rate:,.0f} words per core-second x 32 x {efficiency:.2f})"
        ),
        "- outputs checked: every marked line of ours equals the baseline's",
    ]
    print(table)
    print("\n".join(summary))
    if args.write_md:
        section = "\n".join(
            [
                "## ngrams",
                "",
                f"Run {datetime.date.today()} on {machine(args.python)}.",
                "",
                "Command (from the repo root): `python bench/pmi.py --write-md`",
                "",
                (
                    f"Input: `{REFERENCE}` replicated with fresh doc_ids to {words:,} words in {docs:,} documents; "
                    "`--mode reference` (the algorithm the baseline implements); count + PMI + top-3000 + marking, "
                    "reading Parquet and writing the outputs; every process pinned to one core (`taskset`) with one "
                    "Arrow / Polars thread."
                ),
                "",
                table,
                "",
                *summary,
                "",
            ]
        )
        write_section("ngrams", section)
        print(json.dumps({"ratio": ratio, "efficiency": efficiency, "projection_h": projection_h}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
