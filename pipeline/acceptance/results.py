"""The acceptance run's results, written to the output folder as each row finishes (docs/stages/acceptance.md).

The GPU host hands back one folder, at most 8 files and two folders deep, and loses the rest when the lease ends:
so every row rewrites ``acceptance.md`` (the table) and ``acceptance.json`` (every row, the card, the date) in
place, atomically, and appends to ``acceptance.log``; a run cut off at its limit keeps what it measured. The
plan's file, ``acceptance.yaml``, is written beside them at the end (and into pipeline/budget/ by a CUDA run with
no failed row).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from pipeline.atomic import AtomicFiles

TABLE, ROWS, LOG = "acceptance.md", "acceptance.json", "acceptance.log"


class Results:
    def __init__(self, out: Path, header: dict):
        self.out, self.header, self.rows = out, dict(header), []
        self.started = time.monotonic()
        out.mkdir(parents=True, exist_ok=True)
        (out / LOG).write_text("", encoding="utf-8")

    def log(self, line: str) -> None:
        print(line, flush=True)
        with open(self.out / LOG, "a", encoding="utf-8") as log:
            log.write(line + "\n")

    def row(self, group: str, name: str, ok: bool | None, result: str, measure: str = "") -> None:
        verdict = "ok" if ok else "n/a" if ok is None else "FAIL"
        self.rows.append({"group": group, "row": name, "verdict": verdict, "result": result, "measure": measure})
        self.log(f"{verdict:4} {group:10} {name:30} {result}  {measure}")
        self.write()

    def failed(self) -> list[dict]:
        return [r for r in self.rows if r["verdict"] == "FAIL"]

    def write(self, extra: dict | None = None) -> None:
        seconds = round(time.monotonic() - self.started)
        record = {**self.header, **(extra or {}), "seconds": seconds, "rows": self.rows}
        with AtomicFiles() as files:
            files.temp(self.out / ROWS).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
            files.temp(self.out / TABLE).write_text(markdown(self.header, self.rows, seconds), encoding="utf-8")


def markdown(header: dict, rows: list[dict], seconds: int) -> str:
    lines = [
        f"# GPU acceptance on {header.get('card', '?')}, {header.get('date', '?')} ({seconds} s so far)",
        "",
        "| group | row | verdict | result | measure |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        cells = [r["group"], r["row"], r["verdict"], r["result"], r["measure"]]
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def table(rows: list[dict]) -> str:
    """The rows as a plain-text table, for the terminal."""
    widths = [max((len(r[key]) for r in rows), default=0) for key in ("group", "row", "verdict")]
    lines = []
    for r in rows:
        cells = [r["group"].ljust(widths[0]), r["row"].ljust(widths[1]), r["verdict"].ljust(widths[2])]
        lines.append(" | ".join([*cells, r["result"] + (f"; {r['measure']}" if r["measure"] else "")]))
    return "\n".join(lines)
