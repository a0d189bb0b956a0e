"""Which GLUE / CLUE fine-tuning runs train as one stacked model, how many at once, and how a job's runs split
into stacks (issue 41 §2; docs/stages/classify.md "Fused seeds"): the one grouping that the classify stage,
its rules (workflow/rules/functions/classify.smk) and the plan (pipeline/plan/) all read.

- **Which runs**: with ``classify.fuse_checkpoints`` on, the configured models of one benchmark that start from
  one backbone (the backbone itself, and each ``backbone+objective`` pre-trained from it) are one group
  (:func:`checkpoint_groups`): one classify job per group, task and setting fine-tunes every model's seeds
  (``classify --model A --model B ... --fuse K``); otherwise a job's runs are one model's seeds.
- **How many at once**: a job's K (:func:`fused_runs`) is ``classify.fuse``, capped by the runs of the
  backbone's architecture that fit one GPU at the setting's batch and length
  (:func:`pipeline.budget.memory.largest_fused_members`), a multiple-choice example one sequence per
  candidate (:func:`sequences_per_example`).
- **Stacks**: a job's N runs step together in ``ceil(N / K)`` stacked models of balanced size
  (:func:`stack_sizes`). Grouping by backbone sees no config: at run time the classify stage keys its stacks
  on each model's whole config (pipeline/classify/fused_stacks.py), so models of one backbone whose configs
  differ train in stacks of their own, said in the job's log (with the configs' one ``classify.dropout`` the
  paper configs' groups share one config each).

A ground-floor module: it imports the GPU budget model (:mod:`pipeline.budget`), the backbone families and
the model-spec grammar, never a stage package.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from pipeline.backbone_family import shares_layers
from pipeline.budget.cost import architecture, workloads
from pipeline.budget.memory import largest_fused_members
from pipeline.models.spec import hub_repo


def backbone_of(label: str, backbones: Iterable[str], separate: Iterable[str] = ()) -> str | None:
    """The backbone a model label starts from, as the workflow resolves labels (``classify_model``): the
    backbone itself, or the prefix before the first "+" of a pre-trained ``backbone+objective``; None for
    a model of its own (an evaluate.models entry, ``separate``) or a label that names no backbone."""
    backbones = set(backbones)
    if label in backbones:
        return label
    if label in set(separate):
        return None
    prefix = label.split("+", 1)[0]
    return prefix if "+" in label and prefix in backbones else None


def checkpoint_groups(labels: Iterable[str], backbones: Iterable[str], separate: Iterable[str] = ()) -> dict:
    """{backbone: its labels, in the config's order} for the backbones that two or more of ``labels`` start
    from; a model alone with its backbone trains in its own jobs, as without fusion."""
    backbones, separate = list(backbones), list(separate)
    groups: dict[str, list[str]] = {}
    for label in dict.fromkeys(labels):
        backbone = backbone_of(label, backbones, separate)
        if backbone is not None:
            groups.setdefault(backbone, []).append(label)
    return {backbone: members for backbone, members in groups.items() if len(members) > 1}


def sequences_per_example(task: str) -> int:
    """The sequences one training example of ``task`` puts in a step's batch: a multiple-choice example one
    per candidate (workloads.yaml ``sequences_per_example``: ChID 10, C3 4), any other one."""
    for shapes in (workloads().get("sequences_per_example") or {}).values():
        if task in shapes:
            return int(shapes[task].get("candidates", 1))
    return 1


def fused_runs(spec: str | None, fuse: int, batch_size: int, max_length: int, task: str = "") -> int:
    """A job's ``--fuse K``: ``fuse`` (classify.fuse), capped by the runs of the backbone's architecture (its
    config spec, ``hub:ORG/NAME@COMMIT``) that fit one GPU at ``batch_size`` examples of ``task`` (each of a
    multiple-choice task one sequence per candidate) x ``max_length``; ``fuse`` as it is where the
    architecture is not known (a tiny model, a local path)."""
    repo = hub_repo(spec) if spec else None
    arch = architecture(repo) if repo else None
    if arch is None or fuse <= 1:
        return fuse
    sequences = batch_size * sequences_per_example(task)
    return min(fuse, largest_fused_members(arch, sequences, max_length, shared_layers=shares_layers(repo)))


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
