"""The training step's floor on a GPU (issue 41 §3): BERT-base and BERT-large, solo and fused, eager and compiled.

    python bench/gpu_step.py [--write-workloads]          # on a CUDA GPU, under 8 minutes
    python bench/gpu_step.py --dry-run                    # CPU: a tiny BERT, every code path, nothing written

Times one optimiser step (forward, backward, gradient clipping, AdamW) of BERT-base and BERT-large from
their configs (random weights) at batch 8, 16 and 32 x 128 tokens in bf16 autocast: solo (the model and
``torch.optim.AdamW`` foreach, as the Trainer steps) and fused at K = 2, 4, 8 (pipeline/classify/fused_training.py,
time per member-step; both steps built by bench/bert_stacks.py, as bench/fused_ops.py counts them), each eager
and with ``torch.compile(mode="reduce-overhead")`` (CUDA graphs).
Each cell is the median of ``--steps`` steps after ``--warmup`` steps. A cell that runs out of memory is
recorded as such. ``--write-workloads`` writes the table, with the card's name, into
pipeline/budget/workloads.yaml as ``step_floor_measured`` (the plan reads its floors from there once it
exists; until then the floor is the documented estimate, ``step_floor``).
"""

from __future__ import annotations

import argparse
import datetime
import re
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bert_stacks import FusedStep, SoloStep, bert, random_batch, stacked_batch

REPO = Path(__file__).resolve().parents[1]
WORKLOADS = REPO / "pipeline" / "budget" / "workloads.yaml"
MODELS = {  # layers, hidden, heads, intermediate (Devlin et al. 2019, §3)
    "bert-base": (12, 768, 12, 3072),
    "bert-large": (24, 1024, 16, 4096),
}
DRY = {"tiny": (2, 32, 2, 128)}


def time_step(step, batch, device, warmup: int, steps: int) -> float:
    """Median seconds of ``step(batch)`` over ``steps`` steps after ``warmup``."""

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()

    for _ in range(warmup):
        step(batch)
    sync()
    times = []
    for _ in range(steps):
        started = time.perf_counter()
        step(batch)
        sync()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(shapes: dict, batches, ks, length: int, device, warmup: int, steps: int, compile_modes, deadline) -> list:
    """Rows (model, batch, K, mode, ms per member-step or a reason)."""
    rows = []
    vocab = 30522 if device.type == "cuda" else 1000
    cells = [(c, n, b, k) for c in compile_modes for n in shapes for b in batches for k in [1, *ks]]
    for compiled, name, batch_size, k in cells:  # eager first: compiling is slow, and the budget may end
        shape, mode = shapes[name], "compiled" if compiled else "eager"
        if time.monotonic() > deadline:
            rows.append((name, batch_size, k, mode, "skipped: time"))
            continue
        try:
            torch.manual_seed(0)
            # every parameter decayed (one group); the solo step in bf16 autocast on any device, the fused one
            # on CUDA only (StackedModel's autocast), as this bench has always measured them
            if k == 1:
                step = SoloStep(bert(*shape, vocab).to(device), decay_all=True, autocast=True, compiled=compiled)
                batch = random_batch(vocab, batch_size, length, 0, device=device)
            else:
                models = [bert(*shape, vocab).to(device) for _ in range(k)]
                step = FusedStep(models, decay_all=True, autocast=device.type == "cuda", compiled=compiled)
                batch = stacked_batch(k, vocab, batch_size, length, device=device)
            seconds = time_step(step, batch, device, warmup, steps) / k
            rows.append((name, batch_size, k, mode, round(seconds * 1e3, 3)))
        except torch.OutOfMemoryError:
            rows.append((name, batch_size, k, mode, "out of memory"))
        except RuntimeError as error:  # a compile failure (dynamo errors are RuntimeErrors) is a result
            rows.append((name, batch_size, k, mode, f"failed: {type(error).__name__}"))
        finally:
            step = models = batch = None
            if device.type == "cuda":
                torch.cuda.empty_cache()
        print(f"{name} batch {batch_size} K={k} {mode}: {rows[-1][-1]}", flush=True)
    return rows


def yaml_block(rows: list, card: str) -> str:
    lines = [
        "# Measured step floors (bench/gpu_step.py): ms per member-step, batch x 128 tokens in bf16 autocast,",
        f"# solo (K 1) and fused; eager and torch.compile(mode='reduce-overhead'). Card: {card},",
        f"# {datetime.date.today().isoformat()}, torch {torch.__version__}",
        "step_floor_measured:",
        f"  card: {card!r}",
    ]
    table: dict = {}
    for name, batch, k, mode, value in rows:
        table.setdefault(name, {}).setdefault(mode, {}).setdefault(batch, {})[k] = value
    lines.append("  ms_per_member_step:")
    for name, modes in table.items():
        lines.append(f"    {name}:")
        for mode, batches in modes.items():
            lines.append(f"      {mode}:")
            for batch, cells in batches.items():
                cell = ", ".join(f"{k}: {v!r}" if isinstance(v, str) else f"{k}: {v}" for k, v in cells.items())
                lines.append(f"        {batch}: {{{cell}}}")
    return "\n".join(lines) + "\n"


def write_workloads(block: str) -> None:
    text = WORKLOADS.read_text(encoding="utf-8")
    pattern = re.compile(
        r"# Measured step floors \(bench/gpu_step\.py\).*?\nstep_floor_measured:\n(?:  .*\n)*", re.DOTALL
    )
    text = pattern.sub(lambda _: block, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + block
    WORKLOADS.write_text(text, encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="CPU, a tiny BERT, 2 steps a cell; writes nothing")
    parser.add_argument("--batches", type=int, nargs="+", default=[8, 16, 32])
    parser.add_argument("--ks", type=int, nargs="+", default=[2, 4, 8])
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--no-compile", action="store_true")
    parser.add_argument("--budget-s", type=float, default=450, help="stop starting cells after this (the run < 8 min)")
    parser.add_argument("--write-workloads", action="store_true")
    args = parser.parse_args(argv)
    modes = [False] if args.no_compile else [False, True]
    deadline = time.monotonic() + args.budget_s
    if args.dry_run:
        rows = measure(DRY, [2], [2], 8, torch.device("cpu"), 1, 2, [False], deadline)
        print(yaml_block(rows, "dry run on CPU (not a measurement)"))
        return 0
    if not torch.cuda.is_available():
        print("error: bench/gpu_step.py measures a GPU and torch sees no CUDA device; --dry-run checks it on CPU")
        return 2
    card = torch.cuda.get_device_name(0)
    torch.backends.cuda.matmul.allow_tf32 = True
    rows = measure(
        MODELS, args.batches, args.ks, args.length, torch.device("cuda"), args.warmup, args.steps, modes, deadline
    )
    block = yaml_block(rows, card)
    print(block)
    if args.write_workloads:
        write_workloads(block)
        print(f"wrote step_floor_measured to {WORKLOADS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
