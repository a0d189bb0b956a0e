"""Benchmark of the pre-training objectives: step time per objective relative to plain MLM.

One process, one model and one batch size for every objective: the packaged all-MiniLM-L6-v2
(with its new MLM head) continues pre-training on real English Wikipedia sentences (the
reference PMI sample, marked with each article's top-3000 reference n-grams and capitalised
runs as entity spans, tokenised by the ``tokenize`` stage at max length 128). For each
objective the script times full optimizer steps exactly as ``pretrain`` runs them (collate,
MiSAD's choice of w, forward, backward, AdamW) and, separately, the collator alone on the
same batches. Objectives run interleaved, ``--rounds`` times, and the median step counts, so
that load from other processes on a shared machine spreads over all of them.

Targets (the issue): BURT masking at most 1.05x the MLM step, MiSAD at most 2.5x, and the
collator at most 5% of the step. Where CUDA is available it also reports tokens/s and model
FLOPs utilisation (MFU) of a BERT-base-size model in bf16.

Usage (repo root): ``python bench/pretrain.py [--data ../shared/data] [--batch-size 32] [--steps 3]
[--rounds 2] [--write-md]``
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as pipeline/__init__.py sets it, before torch loads

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))  # testdata: minilm_path
sys.path.insert(0, str(REPO / "bench"))

import testdata
from harness import write_section

from pipeline import contracts
from pipeline.budget.cost import ARCHITECTURES, GPUS
from pipeline.cli import main as cli
from pipeline.models import runtime
from pipeline.models.loading import load_masked_lm, load_tokenizer
from pipeline.pretrain.objectives import PretrainingModel, make_data
from pipeline.pretrain.pretrain import epoch_batches, forward_backward, optimizer_for, optimizer_step, prepare
from pipeline.pretrain.token_dataset import TokenDataset, build_arrow_cache

SECTION = "pretrain: latest run"  # the BENCHMARKS.md section --write-md replaces
PUNCT = re.compile(r"[().,?;'!:]+")
# (objective, MiSAD's choice of w, MiSAD's cap on scored candidates)
RUNS = [
    ("mlm", "random", 0),
    ("burt", "random", 0),
    ("wwm", "random", 0),
    ("spanbert", "random", 0),
    ("entity", "random", 0),
    ("misad", "random", 0),
    ("misad", "mlm-score", 0),
    ("misad", "mlm-score", 4),
    ("nsp", "random", 0),
    ("sop", "random", 0),
]


def marked_sentences(data_root: Path, out: Path) -> Path:
    sentences = pq.read_table(data_root / "reference_pmi" / "sentences.parquet").to_pylist()
    by_doc: dict[int, set] = {}
    for row in pq.read_table(
        data_root / "reference_pmi" / "topk_reference.parquet", columns=["doc_id", "ngram"]
    ).to_pylist():
        by_doc.setdefault(row["doc_id"], set()).add(tuple(row["ngram"].split()))
    rows = []
    for s in sentences:
        words = s["text"].split()
        keys = [PUNCT.sub("", w) for w in words]
        spans, i = [], 0
        while i < len(words):
            n = next(
                (
                    n
                    for n in range(6, 1, -1)
                    if i + n <= len(words) and tuple(keys[i : i + n]) in by_doc.get(s["doc_id"], ())
                ),
                1,
            )
            if n > 1:
                spans.append({"start": i, "end": i + n, "n": n, "pmi": 0.0, "source": "pmi"})
            i += n
        i = 1
        while i < len(words):
            j = i
            while j < len(words) and words[j][:1].isupper():
                j += 1
            if j > i:
                spans.append({"start": i, "end": j, "n": j - i, "pmi": None, "source": "entity"})
            i = j + 1
        rows.append({"doc_id": s["doc_id"], "sent_id": s["sent_id"], "text": s["text"], "spans": spans})
    contracts.write_table(out, pa.Table.from_pylist(rows, schema=contracts.MARKED), contracts.MARKED)
    return out


class Objective:
    """One objective's model, optimizer and data, stepping through fixed batches."""

    def __init__(self, objective, choice, cap, base_state, model_path, dataset, tokenizer, batch_size, device):
        self.name = objective if objective != "misad" else f"misad ({choice}{f', <= {cap} candidates' if cap else ''})"
        mlm, _ = load_masked_lm(model_path, 0.1)
        mlm.load_state_dict(base_state)
        torch.manual_seed(0)
        self.module = PretrainingModel(mlm, objective).to(device)
        self.optimizer = optimizer_for(self.module, 5e-5, 0.01)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda _: 1.0)
        self.examples, self.collator = make_data(objective, dataset, tokenizer, 0, 128, choice, cap)
        self.batches = epoch_batches(len(self.examples), 0, 0, batch_size, runtime.World())
        self.tokenizer, self.device, self.cursor = tokenizer, device, 0
        self.step_times, self.collate_times, self.tokens = [], [], []

    def step(self, timed: bool) -> None:
        indices = self.batches[self.cursor]
        self.cursor += 1
        started = time.perf_counter()
        examples = [self.examples[i] for i in indices]
        batch = self.collator(examples)
        collated = time.perf_counter()
        batch = prepare(batch, self.module, self.collator, self.tokenizer, self.device)
        forward_backward(self.module, batch, 1, self.device)
        optimizer_step(self.module, self.optimizer, self.scheduler, 1.0)
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        done = time.perf_counter()
        if timed:
            self.step_times.append(done - started)
            self.collate_times.append(collated - started)
            self.tokens.append(
                int(
                    sum(
                        batch[k].sum() for k in ("attention_mask", "w_attention_mask", "r_attention_mask") if k in batch
                    )
                )
            )


def cpu_table(args, work: Path) -> tuple[list[dict], dict]:
    model_path = str(testdata.minilm_path())
    marked = marked_sentences(args.data / "", work / "marked.parquet")
    tokens = work / "tokens.parquet"
    assert (
        cli(
            [
                "tokenize",
                "--marked",
                str(marked),
                "--model",
                model_path,
                "--lang",
                "en",
                "--max-length",
                "128",
                "--out",
                str(tokens),
            ]
        )
        == 0
    )
    dataset = TokenDataset(build_arrow_cache(tokens, work / "tokens.arrow"))
    tokenizer = load_tokenizer(model_path)
    device = runtime.pick_device()
    torch.manual_seed(0)
    base, _ = load_masked_lm(model_path, 0.1)
    base_state = copy.deepcopy(base.state_dict())
    runs = [Objective(*run, base_state, model_path, dataset, tokenizer, args.batch_size, device) for run in RUNS]
    for run in runs:
        run.step(timed=False)  # warm-up: first-call allocations, thread pools
    for _ in range(args.rounds):
        for run in runs:
            for _ in range(args.steps):
                run.step(timed=True)
    mlm_step = statistics.median(runs[0].step_times)
    rows = []
    for run in runs:
        step = statistics.median(run.step_times)
        collate = statistics.median(run.collate_times)
        rows.append(
            {
                "objective": run.name,
                "step_s": step,
                "ratio": step / mlm_step,
                "collate_ms": collate * 1e3,
                "collate_share": collate / step,
                "tokens_per_s": sum(run.tokens) / sum(run.step_times),
            }
        )
    info = {"sentences": len(dataset), "device": device.type, "threads": torch.get_num_threads()}
    return rows, info


def gpu_mfu(batch_size: int, length: int = 128, steps: int = 10) -> dict | None:
    if not torch.cuda.is_available():
        return None
    from transformers import BertConfig, BertForMaskedLM

    device = runtime.pick_device()
    config = BertConfig()  # BERT-base: 12 layers, 768 hidden, vocabulary 30,522
    module = PretrainingModel(BertForMaskedLM(config), "mlm").to(device)
    optimizer = optimizer_for(module, 5e-5, 0.01)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda _: 1.0)
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(1000, config.vocab_size, (batch_size, length), generator=generator)
    labels = torch.where(torch.rand(batch_size, length, generator=generator) < 0.15, ids, -100)
    batch = {
        "input_ids": ids.to(device),
        "attention_mask": torch.ones_like(ids).to(device),
        "labels": labels.to(device),
    }
    for _ in range(3):
        forward_backward(module, batch, 1, device)
        optimizer_step(module, optimizer, scheduler, 1.0)
    torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(steps):
        forward_backward(module, batch, 1, device)
        optimizer_step(module, optimizer, scheduler, 1.0)
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - started) / steps
    # training FLOPs per token, 6N + 12·L·H·T: the cost model's (pipeline.budget.cost.py)
    flops_per_token = ARCHITECTURES["bert-base-uncased"].training_flops_per_token(length)
    tokens_per_s = batch_size * length / seconds
    name = torch.cuda.get_device_name()
    peak = next((gpu.peak_tflops for key, gpu in GPUS.items() if key in name.lower()), None)
    return {
        "gpu": name,
        "tokens_per_s": tokens_per_s,
        "step_s": seconds,
        "mfu": flops_per_token * tokens_per_s / (peak * 1e12) if peak else None,
        "batch": batch_size,
    }


def markdown(rows, info, gpu, args) -> str:
    machine = platform.processor() or platform.machine()
    lines = [
        f"## {SECTION}",
        "",
        (
            f"Run {time.strftime('%Y-%m-%d')} on `nproc` {os.cpu_count()}, {machine}, Python "
            f"{platform.python_version()}, torch {torch.__version__} ({info['threads']} threads)."
        ),
        "",
        (
            f"Command (from the repo root): `python bench/pretrain.py --batch-size {args.batch_size} "
            f"--steps {args.steps} --rounds {args.rounds} --write-md`"
        ),
        "",
        (
            f"Model: the packaged all-MiniLM-L6-v2 (6 layers, 384 hidden) with a new MLM head; data: "
            f"{info['sentences']:,} real Wikipedia sentences (max length 128); batch {args.batch_size}; median of "
            f"{args.steps * args.rounds} steps per objective, objectives interleaved; {info['device']}."
        ),
        "",
        "| objective | step s | step / MLM step | collator ms | collator share of step | tokens/s |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['objective']} | {r['step_s']:.3f} | {r['ratio']:.2f} | {r['collate_ms']:.1f} | "
            f"{100 * r['collate_share']:.1f}% | {r['tokens_per_s']:,.0f} |"
        )
    by = {r["objective"]: r for r in rows}
    lines += [
        "",
        f"- BURT / MLM step: {by['burt']['ratio']:.2f} (target <= 1.05)",
        (
            f"- MiSAD / MLM step: {by['misad (random)']['ratio']:.2f} with w at random, "
            f"{by['misad (mlm-score)']['ratio']:.2f} with w by MLM-head score over all candidates, "
            f"{by['misad (mlm-score, <= 4 candidates)']['ratio']:.2f} scoring at most 4 (target <= 2.5)"
        ),
        f"- largest collator share: {100 * max(r['collate_share'] for r in rows):.1f}% (target <= 5%)",
        f"- 1-minute load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs",
    ]
    if gpu:
        mfu = f"{100 * gpu['mfu']:.1f}%" if gpu["mfu"] is not None else "n/a (unknown peak)"
        lines.append(
            f"- GPU ({gpu['gpu']}), BERT-base MLM in bf16, batch {gpu['batch']} x 128: "
            f"{gpu['tokens_per_s']:,.0f} tokens/s, MFU {mfu}"
        )
    else:
        lines.append("- GPU: none available in this run, so no tokens/s or MFU for BERT-base in bf16")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps", type=int, default=3, help="timed steps per objective and round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--gpu-batch", type=int, default=64)
    parser.add_argument("--write-md", action="store_true")
    args = parser.parse_args()
    np.random.seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        rows, info = cpu_table(args, Path(tmp))
    gpu = gpu_mfu(args.gpu_batch)
    text = markdown(rows, info, gpu, args)
    print(text)
    if args.write_md:  # its own section: the "pretrain" section keeps the earlier runs and what they showed
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
