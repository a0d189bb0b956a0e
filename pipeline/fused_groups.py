"""Which fine-tuning runs of a GLUE / CLUE grid train together as one stacked model (issue 41 §2;
docs/stages/classify.md, "Fused seeds"), for the workflow, the classify stage and the plan alike.

A grid setting (batch size, learning rate, epochs, length) of one task trains every seed of a model;
with ``classify.fuse_checkpoints`` it trains every seed of every configured model that starts from one
backbone (the backbone itself and its ``backbone+objective`` runs: one architecture, one tokenizer).
Those N runs step together in ``ceil(N / K)`` stacked models of balanced size, K the most the job may
stack (``classify.fuse``, capped by what fits the GPU: pipeline/report/memory.py)."""

from __future__ import annotations

import math
from collections.abc import Iterable


def checkpoint_groups(models: Iterable[str], backbones: Iterable[str]) -> list[list[str]]:
    """The models of one benchmark's list grouped by the backbone they start from, in the list's order:
    a backbone and every ``backbone+objective`` label of it form one group; any other model (an
    ``evaluate.models`` entry) is a group of its own."""
    known = set(backbones)
    groups: dict[str, list[str]] = {}
    for label in models:
        start = label.split("+", 1)[0]
        groups.setdefault(start if start in known else label, []).append(label)
    return list(groups.values())


def stack_sizes(members: int, most: int) -> list[int]:
    """``members`` runs in the fewest stacked models of at most ``most`` each, their sizes as equal as
    they can be (larger first): 50 runs at most 16 a stack are 13, 13, 12, 12, not 16, 16, 16, 2."""
    if members < 1:
        return []
    if most < 1:
        raise ValueError(f"a stack holds at least one run, got {most}")
    stacks = math.ceil(members / most)
    size, larger = divmod(members, stacks)
    return [size + 1] * larger + [size] * (stacks - larger)
