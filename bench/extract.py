"""Benchmark the ``extract`` stage against wikiextractor, in one run on one machine.

What it measures: wall time, CPU time (user + sys) and peak RSS of
``python -m pipeline extract`` (one process) turning a MediaWiki pages-articles dump into
Parquet, and of the baseline, ``python -m wikiextractor.WikiExtractor`` (PyPI
``wikiextractor``) with ``--processes 1``, turning the same dump into its ``<doc>`` text
files. Both read the same bz2-compressed XML and both pay interpreter start-up.

The input is the English sample dump under ``--data-root`` replicated to ``--target-mb``
MB (10**6 bytes) of uncompressed XML: same ``<mediawiki>`` header and ``<siteinfo>``, the
sample's ``<page>`` elements repeated with a fresh page ``<id>`` per copy, bz2-compressed
into ``bench/work/`` (git-ignored, reused when already built at that size).

wikiextractor forks a reducer and a worker even with ``--processes 1`` (three processes in
all), so its wall time alone flatters it; the headline compares throughput per core:

    ratio = (our MB of XML per CPU-second) / (wikiextractor's MB of XML per CPU-second)

CPU time and peak RSS come from ``os.wait4`` on each subprocess: the same rusage that
``getrusage(RUSAGE_CHILDREN)`` accumulates, but for that one child (its reaped helper
processes included), so each run's peak RSS is its own rather than the high-water mark of
every earlier child. Our extractor is also run on a dump a quarter of the size; similar
peak RSS at both sizes shows memory does not grow with the dump. Each timing is repeated
``--repeat`` times and the best (minimum) wall and CPU times are kept.

    python bench/extract.py                 # print the table and the ratio
    python bench/extract.py --write-md      # also update the "## extract" section of BENCHMARKS.md

``--multistream`` measures parallel extraction instead: the sample written as a Wikimedia
multistream dump (100 pages per bz2 stream, with its index) of about ``--target-mb`` MB of
XML, extracted by one job over the whole dump against 2 ``extract --slice K/2`` jobs run at
the same time, then ``merge-slices --shard K``, one per shard at the same time (the workflow's
jobs for ``slices: 2``). The outputs must
be byte-identical; the headline is the wall-clock speed-up (goal: at least 1.8x on 2 cores).

    python bench/extract.py --multistream --write-md   # the "## extract, multistream" section
    python bench/extract.py --unclosed-tags 20000 --repeat 1   # one pathological page, old pattern vs ours
    python bench/extract.py --unclosed-links 140 280 420 560 --old-up-to 280   # pages of unclosed [http:// links
"""

from __future__ import annotations

import argparse
import bz2
import datetime
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pyarrow.parquet as pq  # a dependency of the pipeline itself

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(
    0, str(Path(__file__).resolve().parents[1] / "tests")
)  # test-only helpers (pmi_python, multistream_writer)
from harness import BENCHMARKS_MD, REPO, Run, best_of, machine, markdown_table, measure, write_section

SAMPLE = Path("wiki/en/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
MB = 10**6
PAGE_RE = re.compile(r"[ \t]*<page>.*?</page>[ \t]*\n?", re.DOTALL)
PAGE_ID_RE = re.compile(r"(</ns>\s*<id>)(\d+)(</id>)")


# --------------------------------------------------------------------------- input dump


@dataclass
class Sample:
    header: bytes  # <mediawiki ...> and <siteinfo>, up to the first <page>
    pages: list[tuple[bytes, int, bytes]]  # (text before the page id, page id, text after it)
    footer: bytes  # </mediawiki>


@dataclass
class Dump:
    path: Path
    xml_bytes: int  # uncompressed
    pages: int
    copies: float


def load_sample(path: Path) -> Sample:
    """Unpack the sample (~6 MB) and split it into header, pages and footer."""
    text = bz2.decompress(path.read_bytes()).decode("utf-8")
    matches = list(PAGE_RE.finditer(text))
    if not matches:
        raise SystemExit(f"error: {path}: no <page> elements found")
    header, footer = text[: matches[0].start()], text[matches[-1].end() :]
    if "</siteinfo>" not in header or footer.strip() != "</mediawiki>":
        raise SystemExit(f"error: {path}: unexpected dump layout around the pages")
    pages = []
    for match in matches:
        page = match.group(0)
        id_match = PAGE_ID_RE.search(page)
        if id_match is None:
            raise SystemExit(f"error: {path}: a <page> without <ns> followed by <id>")
        pages.append((page[: id_match.end(1)].encode(), int(id_match.group(2)), page[id_match.start(3) :].encode()))
    return Sample(header.encode(), pages, footer.rstrip().encode() + b"\n")


def build_dump(sample: Sample, sample_path: Path, target_bytes: int, work: Path) -> Dump:
    """Write ``sample``'s pages, repeated with fresh ids, until ``target_bytes`` of XML.

    Streams page by page into a bz2 file; reuses the file when its metadata says it was
    built from the same sample at the same target size.
    """
    path = work / f"enwiki-{target_bytes}.xml.bz2"
    meta_path = path.with_suffix(".json")
    key = {"sample": str(sample_path), "sample_bytes": sample_path.stat().st_size, "target_bytes": target_bytes}
    if path.exists() and meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if meta.get("key") == key:
            return Dump(path, meta["xml_bytes"], meta["pages"], meta["copies"])

    stride = 10 ** len(str(max(page_id for _, page_id, _ in sample.pages)))  # ids of copy k: id + k*stride
    written = pages = copy = 0
    tmp = path.with_name(path.name + ".tmp")
    with bz2.open(tmp, "wb") as out:
        written += out.write(sample.header)
        while written < target_bytes:
            for before, page_id, after in sample.pages:
                written += out.write(before) + out.write(b"%d" % (page_id + copy * stride)) + out.write(after)
                pages += 1
                if written >= target_bytes:
                    break
            copy += 1
        written += out.write(sample.footer)
    tmp.replace(path)
    dump = Dump(path, written, pages, round(pages / len(sample.pages), 2))
    meta_path.write_text(json.dumps({"key": key, "xml_bytes": written, "pages": pages, "copies": dump.copies}))
    return dump


# --------------------------------------------------------------------------- measuring


@dataclass
class Result:
    name: str
    dump: Dump
    wall: float  # best of the repeats
    cpu: float  # best of the repeats
    peak_rss_mb: float  # largest of the repeats
    docs: int
    note: str = ""
    row_groups: int = 0  # ours only: Parquet row groups written (one per --batch-docs documents)

    @property
    def xml_mb(self) -> float:
        return self.dump.xml_bytes / MB

    @property
    def mb_per_s(self) -> float:
        return self.xml_mb / self.wall

    @property
    def mb_per_cpu_s(self) -> float:
        return self.xml_mb / self.cpu


def bench_ours(python: str, dump: Dump, work: Path, repeat: int, name: str) -> Result:
    out = work / "out-ours"

    def once():
        shutil.rmtree(out, ignore_errors=True)
        run = measure(
            [python, "-m", "pipeline", "extract", "--dump", str(dump.path), "--lang", "en", "--out", str(out)],
            work / "ours.log",
        )
        row_groups = sum(pq.ParquetFile(shard).num_row_groups for shard in out.glob("*.parquet"))
        return run, (json.loads((out / "extract-stats.json").read_text()), row_groups)

    wall, cpu, rss, (stats, row_groups) = best_of(repeat, once)
    note = f"{stats['pages_failed']} pages failed" if stats["pages_failed"] else ""
    return Result(name, dump, wall, cpu, rss, stats["articles_kept"], note, row_groups)


def count_wx_docs(out: Path) -> int:
    docs = 0
    for path in out.rglob("*"):
        if path.is_file():
            with path.open("rb") as lines:
                docs += sum(line.startswith(b"<doc ") for line in lines)
    return docs


def bench_wikiextractor(python: str, dump: Dump, work: Path, repeat: int) -> Result:
    out = work / "out-wikiextractor"
    log = work / "wikiextractor.log"

    def once():
        shutil.rmtree(out, ignore_errors=True)
        run = measure(
            [python, "-m", "wikiextractor.WikiExtractor", str(dump.path), "-o", str(out), "--processes", "1", "-q"], log
        )
        return run, count_wx_docs(out)

    wall, cpu, rss, docs = best_of(repeat, once)
    log_lines = len(log.read_text(errors="replace").splitlines())
    note = f"{log_lines} log lines, see {log}" if log_lines else ""
    return Result("wikiextractor --processes 1", dump, wall, cpu, rss, docs, note)


# --------------------------------------------------------------------------- reporting


def table(results: list[Result]) -> str:
    head = ["run", "XML MB", "docs", "wall s", "CPU s", "MB/s wall", "MB per CPU-s", "peak RSS MB"]
    rows = [
        [
            r.name,
            f"{r.xml_mb:.1f}",
            str(r.docs),
            f"{r.wall:.2f}",
            f"{r.cpu:.2f}",
            f"{r.mb_per_s:.2f}",
            f"{r.mb_per_cpu_s:.2f}",
            f"{r.peak_rss_mb:.0f}",
        ]
        for r in results
    ]
    return markdown_table(head, rows)


def machine_info(python: str) -> str:
    try:
        wx_version = metadata.version("wikiextractor")
    except metadata.PackageNotFoundError:
        wx_version = "?"
    return machine(python, f"wikiextractor {wx_version}")


def summary_lines(ours: Result, quarter: Result, wx: Result) -> list[str]:
    return [
        f"ratio (ours / wikiextractor, MB per CPU-second): {ours.mb_per_cpu_s / wx.mb_per_cpu_s:.2f}",
        f"wall-clock ratio (ours / wikiextractor, MB/s): {ours.mb_per_s / wx.mb_per_s:.2f}",
        (
            f"peak RSS, ours at {ours.xml_mb:.1f} MB vs {quarter.xml_mb:.1f} MB of XML: "
            f"{ours.peak_rss_mb:.0f} / {quarter.peak_rss_mb:.0f} MB = {ours.peak_rss_mb / quarter.peak_rss_mb:.2f} "
            f"({ours.docs} documents in {ours.row_groups} Parquet row group(s))"
        ),
    ]


def interpretation(ours: Result, quarter: Result, wx: Result) -> str:
    cpu_ratio = ours.mb_per_cpu_s / wx.mb_per_cpu_s
    wall_ratio = ours.mb_per_s / wx.mb_per_s
    rss_ratio = ours.peak_rss_mb / quarter.peak_rss_mb
    per_core = (
        f"{cpu_ratio:.2f}x wikiextractor's throughput per core"
        if cpu_ratio >= 1
        else f"{1 / cpu_ratio:.2f}x less throughput per core than wikiextractor"
    )
    if rss_ratio < 1.25:
        memory = "i.e. flat: it does not grow with the dump."
    elif ours.row_groups <= 1:
        memory = (
            f"so at this size it still grows with the dump: all {ours.docs} documents were "
            f"buffered into {ours.row_groups} Parquet row group, because the stage flushes only "
            f"every `--batch-docs` documents, so peak RSS follows the output until that many "
            f"documents have been read; the batch size, not the dump, is what bounds it beyond."
        )
    else:
        memory = (
            f"i.e. not flat, although the documents were flushed in {ours.row_groups} row "
            f"groups: memory grows with the dump and needs a look."
        )
    docs = (
        "Both produced the same number of documents"
        if ours.docs == wx.docs
        else f"The document counts differ ({ours.docs} vs {wx.docs}), so the two did not do quite the same work"
    )
    failures = f" Our run reported {ours.note}." if ours.note else ""
    return (
        f"On {ours.xml_mb:.0f} MB of XML our extractor, in one process, delivers {per_core} "
        f"({ours.mb_per_cpu_s:.2f} vs {wx.mb_per_cpu_s:.2f} MB per CPU-second). wikiextractor with "
        f"`--processes 1` still runs a reader, one extraction worker and a reducer (and its default "
        f"template expansion reads the dump twice, once to collect templates), so it spent "
        f"{wx.cpu / wx.wall:.2f} CPU-seconds per wall-second against our {ours.cpu / ours.wall:.2f}; "
        f"by wall clock on this {len(os.sched_getaffinity(0))}-core machine ours runs at "
        f"{wall_ratio:.2f}x wikiextractor's speed ({ours.mb_per_s:.2f} vs {wx.mb_per_s:.2f} MB/s). Our peak RSS is {ours.peak_rss_mb:.0f} MB at {ours.xml_mb:.0f} MB "
        f"and {quarter.peak_rss_mb:.0f} MB at {quarter.xml_mb:.1f} MB (ratio {rss_ratio:.2f}), "
        f"{memory} {docs} (ours: namespace-0 articles that are not redirects; wikiextractor: "
        f"`<doc>` elements).{failures} Both include interpreter start-up and bz2 decompression; ours "
        f"also writes Parquet with character-offset link entities, wikiextractor writes plain text."
    )


def markdown_section(args, results: list[Result], python: str) -> str:
    ours, quarter, wx = results
    command = shlex.join(["python", str(Path(__file__).resolve().relative_to(REPO)), *sys.argv[1:]])
    notes = [f"- {r.name}: {r.note}" for r in results if r.note]
    return "\n".join(
        [
            "## extract",
            "",
            f"Run {datetime.date.today().isoformat()} on {machine_info(python)}.",
            "",
            f"Command (from the repo root): `{command}`",
            "",
            (
                f"Input: the English sample dump replicated {ours.dump.copies}x to {ours.xml_mb:.1f} MB of XML "
                f"({ours.dump.pages} pages, bz2), and a quarter-size dump ({quarter.dump.pages} pages) for "
                f"the memory check. Best of {args.repeat} run(s) for wall and CPU time; peak RSS is the "
                f"largest of the process and its helper processes."
            ),
            "",
            table(results),
            "",
            *[f"- {text}" for text in summary_lines(ours, quarter, wx)],
            *notes,
            "",
            interpretation(ours, quarter, wx),
            "",
        ]
    )


def write_md(section: str) -> None:
    write_section("extract", section)


# --------------------------------------------------------------------------- multistream


def measure_together(cmds: list[list[str]], logs: list[Path]) -> Run:
    """Start every command at once; wall time until the last ends, CPU summed, largest peak RSS."""
    sinks = [log.open("wb") for log in logs]
    started = time.perf_counter()
    procs = [
        subprocess.Popen(cmd, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT)
        for cmd, sink in zip(cmds, sinks, strict=True)
    ]
    cpu, rss, cpus = 0.0, 0.0, []
    for proc, cmd, log in zip(procs, cmds, logs, strict=True):
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"error: {shlex.join(cmd)} failed:\n{log.read_text(errors='replace')[-3000:]}")
        cpus.append(usage.ru_utime + usage.ru_stime)
        cpu += cpus[-1]
        rss = max(rss, usage.ru_maxrss / 1024)
    wall = time.perf_counter() - started
    for sink in sinks:
        sink.close()
    measure_together.largest_cpu = max(cpus)
    return Run(wall, cpu, rss)


def bench_multistream(args, sample_path: Path, python: str) -> str:
    from multistream_writer import write_multistream

    from pipeline.corpus.multistream import stream_offsets

    copies = max(1, round(args.target_mb * MB / len(bz2.decompress(sample_path.read_bytes()))))
    dump = args.work / f"enwiki-multistream-x{copies}.xml.bz2"
    index = args.work / f"enwiki-multistream-x{copies}-index.txt.bz2"
    if not (dump.exists() and index.exists()):
        write_multistream(sample_path, dump, index, copies=copies)
    xml_mb = len(bz2.decompress(dump.read_bytes())) / MB
    streams = len(stream_offsets(index))
    shards = "4"
    extract = [python, "-m", "pipeline", "extract", "--dump", str(dump), "--lang", "en", "--shards", shards]
    one_out, two_out = args.work / "ms-one", args.work / "ms-two"
    results = []
    for _ in range(args.repeat):
        shutil.rmtree(one_out, ignore_errors=True)
        shutil.rmtree(two_out, ignore_errors=True)
        one = measure([*extract, "--out", str(one_out)], args.work / "ms-one.log")
        two = measure_together(
            [
                [*extract, "--index", str(index), "--slice", f"{k}/2", "--out", str(two_out / f"slice-{k}")]
                for k in range(2)
            ],
            [args.work / f"ms-slice-{k}.log" for k in range(2)],
        )
        two_largest = measure_together.largest_cpu
        merge = measure_together(  # one job per shard, as the workflow runs them
            [
                [
                    python,
                    "-m",
                    "pipeline",
                    "merge-slices",
                    "--slices",
                    str(two_out / "slice-0"),
                    str(two_out / "slice-1"),
                    "--shards",
                    shards,
                    "--shard",
                    str(k),
                    "--out",
                    str(two_out / "merged"),
                ]
                for k in range(int(shards))
            ],
            [args.work / f"ms-merge-{k}.log" for k in range(int(shards))],
        )
        bound = one.cpu / (two_largest + measure_together.largest_cpu * math.ceil(int(shards) / 2))
        for shard in sorted(one_out.glob("shard-*.parquet")):
            if shard.read_bytes() != (two_out / "merged" / shard.name).read_bytes():
                raise SystemExit(f"error: {shard.name} differs between 1 job and 2 slices")
        results.append((one, two, merge, bound))
    one = min((r[0] for r in results), key=lambda run: run.wall)
    two, merge, bound = min(((r[1], r[2], r[3]) for r in results), key=lambda r: r[0].wall + r[1].wall)
    sliced_wall = two.wall + merge.wall
    speedup = one.wall / sliced_wall
    head = ["run", "XML MB", "wall s", "CPU s", "MB/s wall", "peak RSS MB (per job)"]
    rows = [
        [
            "1 job over the whole dump",
            f"{xml_mb:.1f}",
            f"{one.wall:.2f}",
            f"{one.cpu:.2f}",
            f"{xml_mb / one.wall:.2f}",
            f"{one.peak_rss_mb:.0f}",
        ],
        [
            "2 slices at once",
            f"{xml_mb:.1f}",
            f"{two.wall:.2f}",
            f"{two.cpu:.2f}",
            f"{xml_mb / two.wall:.2f}",
            f"{two.peak_rss_mb:.0f}",
        ],
        [
            "+ merge-slices (a job per shard, at once)",
            "",
            f"{merge.wall:.2f}",
            f"{merge.cpu:.2f}",
            "",
            f"{merge.peak_rss_mb:.0f}",
        ],
        [
            "2 slices + merge",
            f"{xml_mb:.1f}",
            f"{sliced_wall:.2f}",
            f"{two.cpu + merge.cpu:.2f}",
            f"{xml_mb / sliced_wall:.2f}",
            "",
        ],
    ]
    command = shlex.join(["python", "bench/extract.py", *sys.argv[1:]])
    lines = [
        "## extract, multistream",
        "",
        f"Run {datetime.date.today().isoformat()} on {machine_info(python)}.",
        "",
        f"Command (from the repo root): `{command}`",
        "",
        (
            f"Input: the English sample written as a multistream dump, {copies} copies with fresh page ids "
            f"({xml_mb:.1f} MB of XML, {streams} bz2 streams of 100 pages, with the index); 4 shards. Best of "
            f"{args.repeat} run(s). The merged shards are byte-identical to the single job's (checked every run)."
        ),
        "",
        markdown_table(head, rows),
        "",
        (
            f"- wall-clock speed-up, 2 slices on 2 cores (merge included) vs 1 job: {speedup:.2f}x "
            f"(slices alone {one.wall / two.wall:.2f}x); load average {os.getloadavg()[0]:.1f} on "
            f"{len(os.sched_getaffinity(0))} cores at the end of the run"
        ),
        (
            f"- the same from CPU time, as on 2 free cores: one job's CPU / (the larger slice's CPU + the merge "
            f"jobs' CPU, 2 at a time): {bound:.2f}x"
        ),
        "",
    ]
    print("\n".join(lines))
    return "\n".join(lines)


# --------------------------------------------------------------------------- pathological pages


def bench_unclosed_tags(tags: int, repeat: int) -> list[str]:
    """One page with ``tags`` unclosed ``<ref>``/``<math>`` tags: the converter's pass A against the
    pattern it replaced (a lazy ``.*?</ref>`` that rescans to the end of the page per opener)."""
    import time

    from pipeline.corpus import wikitext

    old = re.compile(rf"<({wikitext._DROPPED_ELEMENTS})\b(?:[^<>]*?/>|[^<>]*>.*?</\1\s*>)", re.DOTALL | re.IGNORECASE)
    page = "Intro [[Paris]] text. " + "<ref>n " * (tags // 2) + "<math>x " * (tags - tags // 2)

    def best(step) -> float:
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            step()
            times.append(time.perf_counter() - started)
        return min(times)

    ours = best(lambda: wikitext._cut(page, wikitext._dropped_ranges(page)))
    whole = best(lambda: wikitext.to_plain_text(page, wikitext.MarkupRules()))
    baseline = best(lambda: old.sub("", page))
    return [
        f"page: {len(page) / 1000:.0f} KB, {tags} unclosed tags",
        f"dropped-element pass: ours {ours:.3f} s, the old pattern {baseline:.2f} s, ratio {baseline / ours:.0f}x",
        f"whole page (to_plain_text): {whole:.2f} s",
    ]


# The external-link alternative of the converter's inline pattern before it was made linear: the
# label ``[^\]]*`` scanned to the end of the paragraph for every unclosed ``[http://``.
OLD_EXTERNAL_LINK = re.compile(r"\[(?P<url>(?:https?:|ftp:|mailto:|//)[^\]\s]*)(?:[ \t]+(?P<label>[^\]]*))?\]")


def bench_unclosed_links(sizes_kb: list[float], repeat: int, old_up_to_kb: float) -> list[str]:
    """Pages of ``[http://x.org `` repeated to each size: the whole converter (ours) against a scan
    with the old external-link pattern alone (the part that was quadratic), up to ``old_up_to_kb``."""
    import time

    from pipeline.corpus import wikitext

    def best(step) -> float:
        times = []
        for _ in range(repeat):
            started = time.process_time()
            step()
            times.append(time.process_time() - started)
        return min(times)

    lines = ["page KB | ours: to_plain_text, CPU s | old external-link pattern alone, CPU s"]
    for kb in sizes_kb:
        page = "[http://x.org " * int(kb * 1000 / 14)
        ours = best(lambda page=page: wikitext.to_plain_text(page, wikitext.MarkupRules()))
        old = (
            f"{best(lambda page=page: sum(1 for _ in OLD_EXTERNAL_LINK.finditer(page))):.2f}"
            if kb <= old_up_to_kb
            else "-"
        )
        lines.append(f"{len(page) / 1000:.0f} | {ours:.3f} | {old}")
    return lines


# --------------------------------------------------------------------------- main


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-root",
        type=Path,
        default=Path("../shared/data"),
        help="folder holding wiki/en/ (relative paths from the repo root; default %(default)s)",
    )
    parser.add_argument("--target-mb", type=float, default=50, help="uncompressed XML to build, MB (default 50)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing, best kept (default 3)")
    parser.add_argument(
        "--work", type=Path, default=REPO / "bench" / "work", help="scratch folder (default bench/work)"
    )
    parser.add_argument("--write-md", action="store_true", help="update the ## extract section of BENCHMARKS.md")
    parser.add_argument(
        "--multistream",
        action="store_true",
        help="time 2 slices of a multistream dump against 1 job instead (## extract, multistream)",
    )
    parser.add_argument(
        "--unclosed-tags",
        type=int,
        metavar="N",
        help="only time one page with N unclosed <ref>/<math> tags against the old pattern",
    )
    parser.add_argument(
        "--unclosed-links",
        type=float,
        nargs="+",
        metavar="KB",
        help="only time pages of unclosed [http:// links of these sizes, ours against the old pattern",
    )
    parser.add_argument(
        "--old-up-to", type=float, default=140, metavar="KB", help="largest page for the old pattern (default 140)"
    )
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.target_mb <= 0:
        parser.error("--repeat must be at least 1 and --target-mb positive")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.unclosed_tags:
        for line in bench_unclosed_tags(args.unclosed_tags, args.repeat):
            print(line)
        return 0
    if args.unclosed_links:
        for line in bench_unclosed_links(args.unclosed_links, args.repeat, args.old_up_to):
            print(line, flush=True)
        return 0
    data_root = args.data_root if args.data_root.is_absolute() else REPO / args.data_root
    sample_path = data_root / SAMPLE
    if not sample_path.is_file():
        raise SystemExit(
            f"error: sample dump not found: {sample_path}\n(pass --data-root, the folder that holds {SAMPLE})"
        )
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    python = sys.executable
    if args.multistream:
        section = bench_multistream(args, sample_path, python)
        if args.write_md:
            write_section("extract, multistream", section)
            print(f"updated {BENCHMARKS_MD.relative_to(REPO)}")
        return 0

    sample = load_sample(sample_path)
    target = int(args.target_mb * MB)
    full = build_dump(sample, sample_path, target, args.work)
    small = build_dump(sample, sample_path, target // 4, args.work)
    del sample
    print(
        f"input: {full.path.name} {full.xml_bytes / MB:.1f} MB XML, {full.pages} pages; "
        f"{small.path.name} {small.xml_bytes / MB:.1f} MB XML, {small.pages} pages",
        flush=True,
    )

    results = []
    for name, step in [
        ("ours (1 process)", lambda: bench_ours(python, full, args.work, args.repeat, "ours (1 process)")),
        ("ours, quarter size", lambda: bench_ours(python, small, args.work, args.repeat, "ours, quarter size")),
        ("wikiextractor", lambda: bench_wikiextractor(python, full, args.work, args.repeat)),
    ]:
        print(f"timing {name} x{args.repeat} ...", flush=True)
        results.append(step())

    print()
    print(table(results))
    for result in results:
        if result.note:
            print(f"note: {result.name}: {result.note}")
    print()
    for text in summary_lines(*results):
        print(text)
    if args.write_md:
        write_md(markdown_section(args, results, python))
        print(f"updated {BENCHMARKS_MD.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
