"""The training step's floor on a GPU (issue 41 §3): BERT-base and BERT-large, solo and fused, eager and compiled.

    python bench/gpu_step.py [--write-workloads]          # on a CUDA GPU, under 8 minutes
    python bench/gpu_step.py --dry-run                    # CPU: a tiny BERT, every code path, nothing written

Times one optimiser step (forward, backward, gradient clipping, AdamW) of BERT-base and BERT-large from
their configs (random weights) at batch 8, 16 and 32 x 128 tokens in bf16 autocast: solo (the model and
``torch.optim.AdamW`` foreach, as the Trainer steps) and fused at K = 2, 4, 8 (pipeline/classify/fused_training.py,
time per member-step), each eager and with ``torch.compile(mode="reduce-overhead")`` (CUDA graphs).
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

from pipeline.classify.fused_training import StackedAdamW, StackedModel, stack_batches

REPO = Path(__file__).resolve().parents[1]
WORKLOADS = REPO / "pipeline" / "budget" / "workloads.yaml"
MODELS = {  # layers, hidden, heads, intermediate (Devlin et al. 2019, §3)
    "bert-base": (12, 768, 12, 3072),
    "bert-large": (24, 1024, 16, 4096),
}
DRY = {"tiny": (2, 32, 2, 128)}


def bert(shape, vocab: int):
    from transformers import BertConfig, BertForSequenceClassification

    layers, hidden, heads, intermediate = shape
    config = BertConfig(
        vocab_size=vocab,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=intermediate,
        num_labels=2,
    )
    return BertForSequenceClassification(config)


def inputs(vocab: int, batch: int, length: int, seed: int, device) -> dict:
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab, (batch, length), generator=generator)
    return {
        "input_ids": ids.to(device),
        "attention_mask": torch.ones_like(ids).to(device),
        "labels": torch.randint(0, 2, (batch,), generator=generator).to(device),
    }


def solo_step(model, device, compiled: bool):
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-5, weight_decay=0.01, foreach=True)
    model.train()

    def forward_backward(batch):
        with torch.autocast(device.type, torch.bfloat16):
            loss = model(**batch).loss
        loss.backward()
        return loss

    run = torch.compile(forward_backward, mode="reduce-overhead") if compiled else forward_backward

    def step(batch):
        loss = run(batch)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
        optimiser.step()
        optimiser.zero_grad(set_to_none=True)
        return loss

    return step


def fused_step(models, device, compiled: bool):
    stacked = StackedModel(models, "classification")
    optimiser = StackedAdamW(stacked.params, set(stacked.params), 0.01, 1.0)
    lrs = torch.full((len(models),), 3e-5, dtype=torch.float64, device=device)

    def forward_backward(batch):
        losses, _ = stacked.losses(batch, autocast=device.type == "cuda")
        stacked.backward(losses)
        return losses

    run = torch.compile(forward_backward, mode="reduce-overhead") if compiled else forward_backward

    def step(batch):
        losses = run(batch)
        optimiser.clip()
        optimiser.step(lrs)
        return losses

    return step


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
            if k == 1:
                step = solo_step(bert(shape, vocab).to(device), device, compiled)
                batch = inputs(vocab, batch_size, length, 0, device)
            else:
                models = [bert(shape, vocab).to(device) for _ in range(k)]
                step = fused_step(models, device, compiled)
                batch = stack_batches([inputs(vocab, batch_size, length, s, "cpu") for s in range(k)], 0)
                batch = {key: value.to(device) for key, value in batch.items()}
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
