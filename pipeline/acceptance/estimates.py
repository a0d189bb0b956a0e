"""What the acceptance run expects of a job before it runs: FLOPs, memory and time, counted as the plan counts
them (pipeline/budget/cost.py, pipeline/budget/memory.py), so that the run checks the plan's own model."""

from __future__ import annotations

import json
from pathlib import Path

PAPER_FUSE = 16  # classify.fuse in paper-en.yaml and paper-zh.yaml


def architecture_of(model: Path):
    """The budget's :class:`~pipeline.budget.cost.Architecture` of a model folder, from its ``config.json``:
    on CUDA the released checkpoint's shape (tiny-model --architecture), on CPU the tiny one's, so that the
    estimates run in both forms; and whether it shares its layers (ALBERT)."""
    from pipeline.budget.cost import Architecture

    config = json.loads((model / "config.json").read_text(encoding="utf-8"))
    embedding = config.get("embedding_size")
    embedding = embedding if embedding and embedding != config["hidden_size"] else None
    arch = Architecture(
        config["num_hidden_layers"], config["hidden_size"], config["intermediate_size"], config["vocab_size"], embedding
    )
    return arch, config.get("model_type") == "albert"


def peak_tflops() -> float | None:
    """The dense bf16 peak of the card, from the budget's table (pipeline/budget/cost.py GPUS); None if unknown."""
    import torch

    from pipeline.budget import cost

    name = torch.cuda.get_device_name(0).lower()
    return next((gpu.peak_tflops for key, gpu in cost.GPUS.items() if key in name), None)


def misad_extra_passes() -> float:
    from pipeline.budget import cost

    return cost.workloads()["misad"]["extra_train_passes"]


def flops_per_token(model: Path, objective: str, length: int = 128) -> float:
    """FLOPs per processed token as the plan counts a pre-training job's (pipeline/plan/plan_costs.py
    pretrain_cost, plan_models.py generator_cost), at its ``length`` (sentences: 128; packed blocks: 512): the training passes, MiSAD's w and R and
    its scored candidates (the default --misad-choice mlm-score, the plain ``misad`` objective), an ELECTRA
    generator's (``generator/``)."""
    from pipeline.budget import cost

    work = cost.workloads()
    arch, _ = architecture_of(model)
    flops = arch.training_flops_per_token(length)
    if objective.startswith("misad"):
        flops *= 1 + work["misad"]["extra_train_passes"]
        if objective == "misad":
            flops += work["misad"]["scored_candidates"] * arch.forward_flops_per_token(length)
    if (model / "generator" / "config.json").exists():
        flops += architecture_of(model / "generator")[0].training_flops_per_token(length)
    return flops


def pretrain_estimate(model: Path, objective: str, batch: int, length: int) -> float | None:
    """pipeline/budget/memory.py's estimate of the job, as the plan calls it (MiSAD's extra passes; an ELECTRA
    discriminator's generator beside it), without a measured correction, at the longest padded batch the job ran."""
    if length <= 0:
        return None
    from pipeline.budget import cost, memory

    passes = 1 + (cost.workloads()["misad"]["extra_train_passes"] if objective.startswith("misad") else 0)
    arch, shared = architecture_of(model)
    found = memory.training_memory(arch, batch, length, passes, shared_layers=shared, corrected=False)
    total = found.total_gb * memory.GB
    if (model / "generator" / "config.json").exists():  # ELECTRA trains its generator in the same step
        generator, _ = architecture_of(model / "generator")
        total += memory.training_memory(generator, batch, length, 1, corrected=False).total_gb * memory.GB
    return total


def fused_estimate(model: Path, batch: int, members: int) -> float:
    """K members' memory as pipeline/budget/memory.py counts a fused stack (``member_bytes``), uncorrected."""
    from pipeline.budget import memory

    arch, shared = architecture_of(model)
    return members * memory.member_bytes(arch, batch, 128, shared_layers=shared, corrected=False)


def largest_k(model: Path, batch: int, length: int = 128) -> int:
    """The largest stack the plan allows (pipeline/fused_groups.py ``fused_runs``: the paper configs'
    ``classify.fuse`` 16 capped by pipeline/budget/memory.py, measured factor included) at ``batch`` sequences
    (a multiple-choice batch: examples x candidates) of ``length``: BERT-large at batch 32 x 128 tokens, 6."""
    from pipeline.budget import memory

    arch, shared = architecture_of(model)
    return min(PAPER_FUSE, memory.largest_fused_members(arch, batch, length, shared_layers=shared))


def finetune_mfu(model: Path, padded: dict, seconds: dict, sequences: int, peak_tflops: float) -> float | None:
    """The MFU a classify run reached: each seed's training FLOPs as the plan counts them (its processed tokens,
    padding included, at the FLOPs per token of their mean padded length: pipeline/plan/plan_costs.py
    ``sequence_flops``) over its training seconds (a fused member's: the stack's over K), over the card's peak,
    averaged over the seeds; ``sequences``: the rows the run's steps took, to find the mean padded length.
    None where a seed's tokens or seconds are missing."""
    if not padded or set(padded) != set(seconds) or not sequences or not all(seconds.values()):
        return None
    arch, _ = architecture_of(model)
    found = []
    for seed, tokens in padded.items():
        length = tokens / sequences
        found.append(tokens * arch.training_flops_per_token(length) / seconds[seed] / (peak_tflops * 1e12))
    return sum(found) / len(found)
