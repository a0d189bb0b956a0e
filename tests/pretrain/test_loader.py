"""The pre-training loader (pipeline/pretrain/loader.py): worker processes change nothing but speed."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from pipeline.cli import build_parser
from pipeline.pretrain.loader import epoch_loader
from pipeline.pretrain.pretrain import train


def run(tokens, model, out, objective, workers):
    argv = ["pretrain", "--data", tokens, "--model", model, "--objective", objective, "--out", out]
    argv += ["--epochs", 2, "--batch-size", 32, "--lr", 1e-3, "--num-workers", workers, "--misad-choice", "random"]
    argv = [str(a) for a in argv]
    train(build_parser(argv).parse_args(argv))
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    return [{k: v for k, v in entry.items() if k not in ("tokens_per_s", "step_seconds")} for entry in log], load_file(
        out / "model.safetensors"
    )


# the objectives whose batches hold per-epoch draws: masks (all), span lengths (spanbert), MiSAD's w and
# R, NSP's negatives; two epochs, so that a worker must see the collator's second epoch too
@pytest.mark.parametrize("objective", ["burt", "spanbert", "misad", "nsp"])
def test_zero_and_two_workers_train_on_the_same_batches(objective, tokens_en, tiny_en, tmp_path):
    log0, weights0 = run(tokens_en, tiny_en, tmp_path / "w0", objective, 0)
    log2, weights2 = run(tokens_en, tiny_en, tmp_path / "w2", objective, 2)
    assert len({entry["epoch"] for entry in log0}) == 2
    # the same losses, mask rates, token and padding counts at every step: the same batches
    assert log0 == log2
    assert all(torch.equal(weights0[k], weights2[k]) for k in weights0)


def test_the_loader_pins_memory_only_for_a_gpu_and_prefetches_in_workers():
    examples = [{"x": i} for i in range(8)]
    batches = [[0, 1], [2, 3], [4, 5], [6, 7]]

    def collate(rows):
        return {"x": torch.tensor([row["x"] for row in rows])}

    cpu = epoch_loader(examples, batches, collate, 0, torch.device("cpu"), torch.Generator())
    assert not cpu.pin_memory and cpu.num_workers == 0
    workers = epoch_loader(examples, batches, collate, 2, torch.device("cuda", 0), torch.Generator())
    assert workers.pin_memory and workers.prefetch_factor == 4 and workers.num_workers == 2
    got = [batch["x"].tolist() for batch in epoch_loader(examples, batches, collate, 2, torch.device("cpu"), None)]
    assert got == batches  # in the batch sampler's order, whatever worker made each
