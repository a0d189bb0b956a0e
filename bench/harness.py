"""What every benchmark under bench/ shares: measured subprocesses, tables, BENCHMARKS.md.

CPU time and peak RSS come from ``os.wait4`` on each subprocess: the same rusage that
``getrusage(RUSAGE_CHILDREN)`` accumulates, but for that one child (its reaped helper
processes included), so each run's peak RSS is its own rather than the high-water mark of
every earlier child.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import re
import shlex
import subprocess
import sys
import time
import types
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS_MD = REPO / "BENCHMARKS.md"
MD_INTRO = (
    "# Benchmarks\n\n"
    "Every script under `bench/` compares our code against a named baseline in one run on the "
    "same machine and prints the ratio of the two, so the numbers below are comparable within a "
    "section but not across machines.\n"
)


@dataclass
class Run:
    wall: float  # seconds
    cpu: float  # user + sys seconds, the process and its reaped children
    peak_rss_mb: float  # largest RSS of the process or any of its reaped children


def measure(cmd: list[str], log: Path, env: dict | None = None, cwd: Path = REPO) -> Run:
    """Run ``cmd`` from ``cwd`` (the repo root by default); exit with its log tail if it fails."""
    with log.open("wb") as sink:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=sink, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise SystemExit(f"error: {shlex.join(cmd)} exited with {proc.returncode}:\n{tail}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)  # ru_maxrss is KiB on Linux


def best_of(repeat: int, once) -> tuple[float, float, float, object]:
    """Call ``once() -> (Run, extra)`` ``repeat`` times: min wall, min CPU, max RSS, last extra."""
    runs, extra = [], None
    for _ in range(repeat):
        run, extra = once()
        runs.append(run)
    return min(r.wall for r in runs), min(r.cpu for r in runs), max(r.peak_rss_mb for r in runs), extra


def markdown_table(head: list[str], rows: list[list[str]]) -> str:
    """A Markdown table, first column left-aligned, the others right-aligned."""
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]

    def line(cells):
        return (
            "| "
            + " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
            + " |"
        )

    rule = "|" + "|".join("-" * (w + 1) + (":" if i else "-") for i, w in enumerate(widths)) + "|"
    return "\n".join([line(head), rule, *(line(row) for row in rows)])


def machine(python: str, extra: str = "") -> str:
    model = "unknown CPU"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for text in cpuinfo.read_text().splitlines():
            if text.startswith("model name"):
                model = text.split(":", 1)[1].strip()
                break
    return (
        f"`nproc` {len(os.sched_getaffinity(0))}, {model}, Python {platform.python_version()} ({python})"
        f"{', ' + extra if extra else ''}, {platform.system()} {platform.release()}"
    )


def write_section(name: str, section: str) -> None:
    """Replace (or append) the ``## name`` section of BENCHMARKS.md."""
    text = BENCHMARKS_MD.read_text() if BENCHMARKS_MD.exists() else MD_INTRO
    match = re.search(rf"^## {re.escape(name)}\n.*?(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    if match:
        text = text[: match.start()] + section + ("\n" if text[match.end() :] else "") + text[match.end() :]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    BENCHMARKS_MD.write_text(text)


def add_data_root(parser) -> None:
    """``--data``: the public data root, ``$ULR_DATA_ROOT`` by default (required where that is unset)."""
    import os

    parser.add_argument(
        "--data",
        type=Path,
        default=os.environ.get("ULR_DATA_ROOT"),
        required="ULR_DATA_ROOT" not in os.environ,
        help="the public data root ($ULR_DATA_ROOT)",
    )


def module_at(revision: str, relative: str, folder: Path) -> types.ModuleType:
    """The module ``relative`` (a path under the repository) as it was at git ``revision``, imported from a
    file of its own in ``folder`` under the name ``<stem>_baseline``: a benchmark's named baseline, run in the
    same process as the code it is compared with."""
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{revision}:{relative}"], check=True, capture_output=True, text=True
    ).stdout
    name = Path(relative).stem + "_baseline"
    path = folder / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module
