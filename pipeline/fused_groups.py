"""How the runs of a fused GLUE / CLUE job split into stacked models (issue 41 §2; docs/stages/classify.md,
"Fused seeds"), for the classify stage and the plan alike.

A job's N runs (a setting's seeds; with ``classify.fuse_checkpoints`` the seeds of every model of one
backbone, pipeline/report/classify_fusion.py) step together in ``ceil(N / K)`` stacked models of balanced
size, K the most the job may stack (``--fuse``: ``classify.fuse``, capped by what fits the GPU)."""

from __future__ import annotations

import math


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
