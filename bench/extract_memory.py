"""Peak memory of ``extract`` on bz2 bombs: does it stay flat as the expanded dump grows?

Two kinds of bomb, each a few KB of bz2 (docs/stages/corpus.md, "Limits"):

- **whitespace**: a valid page, then N bytes of spaces between it and the next page. The stage
  stores no text outside pages and stops with an error once more than ``--max-page-bytes``
  (4 MiB by default) of it come in a row, so it should end early, in flat memory, at any N.
- **page**: one page whose ``<text>`` is N bytes of one letter, between two valid pages. The
  stage stops storing the page's text past ``--max-page-bytes`` and skips it (counted as
  ``pages_too_large``), so it parses all N bytes in flat memory and keeps the other two pages.

Each bomb runs ``python -m pipeline extract`` in a subprocess; peak RSS and CPU come from
``os.wait4`` on it (the rusage that ``getrusage(RUSAGE_CHILDREN)`` accumulates, but for that one
child). ``--tree DIR`` runs the stage from another source tree, for a before/after comparison::

    python bench/extract_memory.py                                # 0.1, 0.5, 2 GB of whitespace; a 1 GB page
    git archive OLD pipeline | tar -x -C /tmp/old && python bench/extract_memory.py --tree /tmp/old \\
        --whitespace-gb 0.1 0.5 --page-gb 0.1                      # the code before the limits

The bombs are built once into ``--work`` (git-ignored ``bench/work`` by default) and reused.
"""

from __future__ import annotations

import argparse
import bz2
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # testdata: the dump builders
from harness import REPO, machine, markdown_table
from testdata import HEADER, page_xml

GB = 10**9
BLOCK = 1 << 24


def build_bomb(path: Path, kind: str, size: int) -> Path:
    """A bz2 dump holding ``size`` bytes of spaces between two pages, or one page of ``size`` letters."""
    if path.exists():
        return path
    compressor = bz2.BZ2Compressor(9)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as out:
        out.write(compressor.compress((HEADER + page_xml(1, "Before", "A page before the bomb.")).encode()))
        if kind == "page":
            out.write(compressor.compress(b"<page><title>Bomb</title><ns>0</ns><id>2</id><revision><text>"))
        block = (b"y" if kind == "page" else b" ") * BLOCK
        for start in range(0, size, BLOCK):
            out.write(compressor.compress(block[: min(BLOCK, size - start)]))
        if kind == "page":
            out.write(compressor.compress(b"</text></revision></page>"))
        out.write(compressor.compress((page_xml(3, "After", "A page after the bomb.") + "</mediawiki>\n").encode()))
        out.write(compressor.flush())
    tmp.replace(path)
    return path


def run_extract(python: str, tree: Path, dump: Path, out: Path, extra: list[str]) -> dict:
    """One ``extract`` in a subprocess: exit status, wall and CPU seconds, peak RSS, what it said."""
    shutil.rmtree(out, ignore_errors=True)
    command = [python, "-m", "pipeline", "extract", "--dump", str(dump), "--lang", "en", "--out", str(out), *extra]
    log = out.with_name(out.name + ".log")
    with log.open("wb") as sink:
        started = time.perf_counter()
        proc = subprocess.Popen(command, cwd=tree, stdout=sink, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
    lines = log.read_text(errors="replace").splitlines()
    errors = [line for line in lines if line.startswith(("error:", "MemoryError", "Traceback"))]
    stats_path = out / "extract-stats.json"
    if stats_path.exists():
        stats = json.loads(stats_path.read_text())
        outcome = f"kept {stats['articles_kept']}, too large {stats.get('pages_too_large', '-')}"
    else:
        outcome = (errors[-1] if errors else (lines[-1] if lines else "")).replace(str(dump), "DUMP")[:110]
    return {
        "status": os.waitstatus_to_exitcode(status),
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,  # KiB on Linux
        "outcome": outcome,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--whitespace-gb", type=float, nargs="*", default=[0.1, 0.5, 2.0], help="sizes of spaces")
    parser.add_argument("--page-gb", type=float, nargs="*", default=[1.0], help="sizes of the one-page bomb")
    parser.add_argument("--tree", type=Path, default=REPO, help="source tree to run the stage from (default: this one)")
    parser.add_argument("--work", type=Path, default=REPO / "bench" / "work", help="scratch folder")
    parser.add_argument("--extract-args", default="", help="more arguments for extract, e.g. '--max-page-bytes N'")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    python = sys.executable
    print(f"machine: {machine(python)}; tree: {args.tree}", flush=True)
    head = ["bomb", "bz2 KB", "expanded GB", "exit", "peak RSS MB", "wall s", "CPU s", "outcome"]
    rows = []
    for kind, sizes in (("whitespace", args.whitespace_gb), ("page", args.page_gb)):
        for size_gb in sizes:
            size = int(size_gb * GB)
            dump = build_bomb(args.work / f"bomb-{kind}-{size}.xml.bz2", kind, size)
            result = run_extract(
                python, args.tree.resolve(), dump, args.work / f"bomb-out-{kind}", args.extract_args.split()
            )
            label = f"{size_gb:g} GB of spaces between pages" if kind == "whitespace" else f"one page of {size_gb:g} GB"
            rows.append(
                [
                    label,
                    f"{dump.stat().st_size / 1000:.1f}",
                    f"{size / GB:g}",
                    str(result["status"]),
                    f"{result['peak_rss_mb']:.0f}",
                    f"{result['wall']:.1f}",
                    f"{result['cpu']:.1f}",
                    result["outcome"],
                ]
            )
            print(" | ".join(rows[-1]), flush=True)
    print()
    print(markdown_table(head, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
