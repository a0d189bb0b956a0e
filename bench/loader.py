"""Benchmark of the pre-training input pipeline: can a few CPU workers keep one GPU busy?

For every objective, one process does what a data-loader worker does in ``pretrain``: it takes the
epoch's batches (length-grouped single sentences, or packed 512-token blocks for BURT's format),
reads their examples and collates them, masking included (MiSAD's choice of w by MLM score runs on
the GPU and is not counted here; its candidates are). It prints

- tokens/s one worker produces, counting every position of every input as the encoder gets it (S;
  MiSAD's w and R, packed into one row per example; both sentences of a pair), padding included,
  since the GPU processes those;
- ``padding_share``: pad positions over all positions;
- the workers one H100 needs to feed BERT-base at 40% MFU: the GPU's training tokens/s for the
  input's sequence length (FLOPs per token 6N + 12·L·H·T, :mod:`pipeline.budget.cost`) over one
  worker's tokens/s, rounded up.

Data: the real English sample (reference PMI sentences marked with their articles' reference
n-grams and capitalised runs as entities, as in ``bench/pretrain.py``), tokenised with
all-MiniLM-L6-v2's tokenizer, which is bert-base-uncased's WordPiece vocabulary. Goals (the
issue): at most 4 workers per GPU for every objective; padding_share at most 10% for sentence
objectives and 2% packed.

Usage (repo root): ``python bench/loader.py [--data ../shared/data] [--batches 40] [--write-md]``
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

import testdata
from pretrain import marked_sentences  # bench/pretrain.py: the marked real sample

from pipeline.budget.cost import ARCHITECTURES, assumptions, tokens_per_second
from pipeline.cli import main as cli
from pipeline.models.loading import load_tokenizer
from pipeline.models.runtime import World
from pipeline.pretrain.batching import epoch_batches, example_lengths, padding_counts
from pipeline.pretrain.objectives import make_data
from pipeline.pretrain.packing import PackedDataset
from pipeline.pretrain.token_dataset import TokenDataset, build_arrow_cache

# (objective, input): ULR-BERT's objectives on single sentences, BURT's also packed (§5.2)
RUNS = [
    ("mlm", "sentences"),
    ("wwm", "sentences"),
    ("burt", "sentences"),
    ("spanbert", "sentences"),
    ("entity", "sentences"),
    ("misad", "sentences"),
    ("misad-span", "sentences"),
    ("misad-entity", "sentences"),
    ("nsp", "sentences"),
    ("sop", "sentences"),
    ("mlm", "packed"),
    ("spanbert", "packed"),
    ("burt", "packed"),
]
BATCH = {"sentences": 64, "packed": 16}  # ULR-BERT §4, BURT §5.2
LENGTH = {"sentences": 128, "packed": 512}
MAX_WORKERS = 4
MAX_PADDING = {"sentences": 0.10, "packed": 0.02}


def measure(objective, input_kind, dataset, tokenizer, batches: int) -> dict:
    examples_source = PackedDataset(dataset, tokenizer, LENGTH["packed"]) if input_kind == "packed" else dataset
    examples, collator = make_data(objective, examples_source, tokenizer, 0, LENGTH[input_kind], "random")
    lengths = None if input_kind == "packed" else example_lengths(examples, examples_source)
    plan = epoch_batches(len(examples), 0, 0, BATCH[input_kind], World(), lengths)[:batches]
    produced = padded = 0
    started = time.perf_counter()
    for indices in plan:
        batch = collator([examples[i] for i in indices])
        for pad, total in padding_counts(batch).values():
            produced += total
            padded += pad
    seconds = time.perf_counter() - started
    rate = produced / seconds
    gpu = tokens_per_second(ARCHITECTURES["bert-base-uncased"], LENGTH[input_kind])
    return {
        "objective": objective,
        "input": input_kind,
        "tokens_per_s": rate,
        "padding_share": padded / produced,
        "gpu_tokens_per_s": gpu,
        "workers": math.ceil(gpu / rate),
    }


def markdown(rows: list[dict], info: dict) -> str:
    lines = [
        (
            f"Real English sample: {info['sentences']:,} sentences, {info['batches']} batches per objective, one "
            f"process, torch threads {info['threads']}. GPU side: {assumptions()}."
        ),
        "",
        "| objective | input | batch × length | tokens/s per worker | padding share | H100 tokens/s needed | workers |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['objective']} | {r['input']} | {BATCH[r['input']]} × {LENGTH[r['input']]} | "
            f"{r['tokens_per_s']:,.0f} | {100 * r['padding_share']:.1f}% | {r['gpu_tokens_per_s']:,.0f} | {r['workers']} |"
        )
    worst = max(r["workers"] for r in rows)
    pads = {kind: max((r["padding_share"] for r in rows if r["input"] == kind), default=0) for kind in LENGTH}
    lines += [
        "",
        (
            f"Goals: at most {MAX_WORKERS} workers per GPU (worst here: {worst}); padding at most 10% for sentences "
            f"(worst {100 * pads['sentences']:.1f}%) and 2% packed (worst {100 * pads['packed']:.2f}%)."
        ),
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--batches", type=int, default=40, help="batches timed per objective")
    parser.add_argument("--write-md", action="store_true", help="print the Markdown table for BENCHMARKS.md")
    args = parser.parse_args()
    torch.set_num_threads(1)  # one worker process: one core
    model_path = str(testdata.minilm_path())
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        marked = marked_sentences(args.data, work / "marked.parquet")
        tokens = work / "tokens.parquet"
        argv = ["tokenize", "--marked", str(marked), "--model", model_path, "--lang", "en"]
        assert cli([*argv, "--max-length", "128", "--out", str(tokens)]) == 0
        dataset = TokenDataset(build_arrow_cache(tokens, work / "tokens.arrow"))
        tokenizer = load_tokenizer(model_path)
        rows = [measure(objective, kind, dataset, tokenizer, args.batches) for objective, kind in RUNS]
    info = {"sentences": len(dataset), "batches": args.batches, "threads": torch.get_num_threads()}
    for r in rows:
        print(
            f"{r['objective']:>13} {r['input']:>9}: {r['tokens_per_s']:>10,.0f} tokens/s per worker, "
            f"padding {100 * r['padding_share']:5.1f}%, H100 needs {r['gpu_tokens_per_s']:,.0f} tokens/s: "
            f"{r['workers']} worker(s)"
        )
    if args.write_md:
        print()
        print(markdown(rows, info))


if __name__ == "__main__":
    main()
