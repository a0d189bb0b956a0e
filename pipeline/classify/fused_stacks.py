"""Which runs of a classify job share a stacked model (docs/stages/classify.md, "Fused seeds"; issue 46 §1).

A stack (pipeline/classify/fused_training.py) runs every member through one template module built from one
member's config: whatever is not a parameter -- dropout, the activation, LayerNorm's epsilon, the classifier's
dropout -- is the template's. So a stack is keyed on the whole config of the member's head at the run's dropout
(:func:`stack_config`; names, ``architectures`` and the stored dtype aside): models whose configs differ train
in stacks of their own, and the log says so and in what they differ.

Which path a run trains through is the job's, never its group's (:func:`job_refusal`, issue 54 §4): with fusing
on (``--fuse K``, K above 1) every run trains through the fused path, a group of one included (a one-run job, a
balanced split's last run, the one run of its config), so a run draws its own key's dropout masks and its own
seeded sampler's batches whichever runs share its job; with fusing off (K = 1, or live curves in wandb or mlflow)
every run trains solo (``training.run_seed``, torch's own masks). Only an architecture the stacked forward does
not run (:data:`FUSED_ARCHITECTURES`, each tested exact against its solo runs) trains solo in a fusing job: that
is the model's own, whatever shares its job.

The workflow groups a job's models at DAG level by their backbone (pipeline/fused_groups.py), which sees
no config; the split by config happens here, at run time, and is in the job's log. With the paper configs'
one ``classify.dropout`` the models of one backbone share their config (paper-en's ALBERT pair included), so
the plan's stack counts hold.
"""

from __future__ import annotations

import json
import logging
from typing import NamedTuple

from pipeline import tracking
from pipeline.classify import training
from pipeline.fused_groups import stack_sizes

log = logging.getLogger("pipeline.classify")

# the architectures the stacked forward runs, each tested exact against its solo runs
# (tests/classify/test_fused_architectures.py): BERT's, ALBERT's and ELECTRA's encoders take the precomputed
# 4-D additive mask; the multiple-choice path reads the encoder's pooler, which ELECTRA has not
FUSED_ARCHITECTURES = ("albert", "bert", "electra")
CHOICE_ARCHITECTURES = ("albert", "bert")
# what a stack's key leaves out: names, the head's class, the dtype weights are stored in, and label names
UNKEYED_CONFIG = (
    "_name_or_path",
    "architectures",
    "torch_dtype",
    "dtype",
    "transformers_version",
    "id2label",
    "label2id",
)


def stack_config(task, path: str, dropout: float | None) -> dict:
    """What a member runs as (the config of its head at the run's dropout), names and dtype aside: the stack's
    template module is built from one member's config, so only members of one config share a stack."""
    config = training.model_config(task, path, dropout).to_dict()
    return {key: value for key, value in config.items() if key not in UNKEYED_CONFIG}


def architecture_refusal(task, model_type: str) -> str | None:
    """Why the fused path cannot run ``model_type`` on ``task``'s head, or None when it can."""
    supported = CHOICE_ARCHITECTURES if task.head == "choice" else FUSED_ARCHITECTURES
    if model_type in supported:
        return None
    path = "multiple-choice path" if task.head == "choice" else "path"
    return f"the fused {path} runs {', '.join(supported)}, not {model_type}"


def config_difference(a: dict, b: dict) -> str:
    """The config fields in which two members differ, named."""
    fields = sorted(key for key in a.keys() | b.keys() if a.get(key) != b.get(key))
    return ", ".join(fields[:6]) + (f" and {len(fields) - 6} more" if len(fields) > 6 else "")


def job_refusal(fuse: int, tracker_args=None) -> str | None:
    """Why a job trains every run solo (``training.run_seed``), or None where it fuses: the one place that
    decides. Fusing is the job's (``--fuse`` K above 1, and live curves that can follow several runs), never a
    group's: with it on, a group of one trains through the fused path as a stack of one, so that a run's numbers
    do not depend on which runs share its job (docs/stages/classify.md, "Fused seeds")."""
    if fuse <= 1:
        return f"--fuse {fuse}"
    return live_curves_refusal(tracker_args)


def live_curves_refusal(tracker_args=None) -> str | None:
    """Why live curves keep a job's runs apart (wandb and mlflow follow one run per process; TensorBoard takes
    one folder per seed), or None."""
    if tracker_args is not None:
        chosen = tracking.backend(tracker_args.report_to)
        if chosen in ("wandb", "mlflow"):
            return f"live curves in {chosen} follow one run at a time"
    return None


def unfusable(task, members: list, settings: training.Settings, tracker_args=None) -> str | None:
    """Why ``members`` cannot train as one stacked model, or None when they can (one member included): live
    curves that follow one run, an architecture the fused path cannot run, or models whose configs differ."""
    refusal = live_curves_refusal(tracker_args)
    if refusal:
        return refusal
    configs = {
        path: stack_config(task, path, settings.dropout) for path in dict.fromkeys(m.model_path for m in members)
    }
    for config in configs.values():
        refusal = architecture_refusal(task, config.get("model_type"))
        if refusal:
            return refusal
    first, *others = configs.values()
    for other in others:
        if other != first:
            return f"the models' configs differ ({config_difference(first, other)})"
    return None


class JobGroups(NamedTuple):
    """A job's runs (model index, seed) by the path they train through."""

    stacks: list[list[tuple[int, int]]]  # each trains as one stacked model (fused_training.run_members), of 1..K
    solo: list[tuple[int, int]]  # each trains on its own (training.run_seed): fusing off, or an architecture not fused


def run_stacks(
    task, runs: list[tuple[int, int]], paths: list[str], settings: training.Settings, fuse: int, tracker_args=None
) -> JobGroups:
    """The runs (model index, seed), model-major, by the path they train through (docs/stages/classify.md,
    "Fused seeds"). Where the job fuses (:func:`job_refusal`), the runs of models of one config
    (:func:`stack_config`) in ``ceil(N / fuse)`` stacked models of balanced size, each a stretch of their
    model-major order, a stack of one included; solo the runs of an architecture the fused path cannot run.
    Where it does not, every run solo. The log says how the runs split, and why."""
    what = "the seeds" if len(paths) == 1 else f"the runs of {len(paths)} models"
    reason = job_refusal(fuse, tracker_args)
    if reason:
        if fuse > 1:  # --fuse 1 is the default: nothing to explain
            log.warning("--fuse %d: %s train one by one (%s)", fuse, what, reason)
        return JobGroups([], list(runs))
    configs = [stack_config(task, path, settings.dropout) for path in paths]
    keyed: dict[str, list[int]] = {}  # models of one config, in the order of the first of each
    for model, config in enumerate(configs):
        refusal = architecture_refusal(task, config.get("model_type"))
        if refusal:
            log.warning("--fuse %d: the runs of %s train one by one (%s)", fuse, paths[model], refusal)
            continue
        keyed.setdefault(json.dumps(config, sort_keys=True, default=str), []).append(model)
    if len(keyed) > 1:
        first = configs[next(iter(keyed.values()))[0]]
        log.info(
            "--fuse %d: the models train in %d stacks keyed on their configs: %s",
            fuse,
            len(keyed),
            "; ".join(
                " + ".join(paths[m] for m in models)
                + (
                    ""
                    if configs[models[0]] == first
                    else f" (differs in {config_difference(first, configs[models[0]])})"
                )
                for models in keyed.values()
            ),
        )
    stacks = []
    for models in keyed.values():
        stacked = [run for run in runs if run[0] in models]
        start, sizes = 0, stack_sizes(len(stacked), fuse)
        for size in sizes:
            stacks.append(stacked[start : start + size])
            start += size
        seeds = sorted({seed for _, seed in stacked})
        if len(models) == 1 and len(paths) == 1:
            log.info("--fuse %d: seeds %s train as %d stacked model(s)", fuse, seeds, len(sizes))
        else:
            log.info(
                "--fuse %d: %d models x seeds %s train as %d stacked model(s) of %s runs",
                fuse,
                len(models),
                seeds,
                len(sizes),
                ", ".join(str(size) for size in sizes),
            )
    fused = {model for models in keyed.values() for model in models}
    return JobGroups(stacks, [run for run in runs if run[0] not in fused])
