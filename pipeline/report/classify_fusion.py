"""Which GLUE / CLUE fine-tuning runs of a config train as one stacked model, and how many at once (issue 41 §2,
docs/stages/classify.md "Fused seeds").

With ``classify.fuse_checkpoints`` on, the configured models of one benchmark that start from one backbone
(the backbone itself, and each ``backbone+objective`` pre-trained from it) are one group: one classify job per
group, task and setting fine-tunes every model's seeds (``classify --model A --model B ... --fuse K``). Each
job's K is ``classify.fuse``, capped by the runs of the backbone's architecture that fit one GPU at the
setting's batch and length (:func:`pipeline.report.memory.largest_fused_members`). The workflow
(workflow/rules/functions/classify.smk) reads them here, where the plan can read them too.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from pathlib import Path

import yaml

from pipeline.report.cost import architecture
from pipeline.report.memory import largest_fused_members
from pipeline.report.plan_models import hub_repo

WORKLOADS = Path(__file__).with_name("workloads.yaml")


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


@cache
def sequences_per_example(task: str) -> int:
    """The sequences one training example of ``task`` puts in a step's batch: a multiple-choice example one
    per candidate (workloads.yaml ``sequences_per_example``: ChID 10, C3 4), any other one."""
    benchmarks = yaml.safe_load(WORKLOADS.read_text(encoding="utf-8")).get("sequences_per_example") or {}
    for shapes in benchmarks.values():
        if task in shapes:
            return int(shapes[task].get("candidates", 1))
    return 1


def fused_runs(spec: str | None, fuse: int, batch_size: int, max_length: int, task: str = "") -> int:
    """A job's ``--fuse K``: ``fuse`` (classify.fuse), capped by the runs of the backbone's architecture (its
    config spec, ``hub:ORG/NAME@COMMIT``) that fit one GPU at ``batch_size`` examples of ``task`` (each of a
    multiple-choice task one sequence per candidate) x ``max_length``; ``fuse`` as it is where the
    architecture is not known (a tiny model, a local path). ALBERT stores its one shared layer once."""
    repo = hub_repo(spec) if spec else None
    arch = architecture(repo) if repo else None
    if arch is None or fuse <= 1:
        return fuse
    shared = repo.rsplit("/", 1)[-1].startswith("albert")
    sequences = batch_size * sequences_per_example(task)
    return min(fuse, largest_fused_members(arch, sequences, max_length, shared_layers=shared))
