"""When a config's GPU jobs would finish on N GPUs (``python -m pipeline plan --gpus N``; issue 48 §2).

The plan's budget says how many GPU-hours a config takes; a user with one 8-GPU node wants the wall-clock
first. This module turns the plan's own jobs into a DAG and places it on N GPUs:

- **Jobs** are the budget's (:func:`pipeline.plan.plan_output.planned_jobs`), each at its GPU-hours on one
  GPU, so that on one GPU the run finishes in exactly the budget's total. A GLUE / CLUE grid is split as the
  workflow runs it (workflow/rules/classify.smk): one job per model, task and setting (batch size, lr,
  epochs, length), or per group of fused models (``classify.fuse_checkpoints``: one job fine-tunes every
  model of a backbone), each costed by the plan's own ``classify_cost`` of that setting alone.
- **Dependencies** are the workflow's, read from the config as the plan reads it: a Siamese fine-tuning
  needs the pre-training it starts from (``finetune.start``), a classify job every pre-trained model it
  fine-tunes. BiLSTMs and the released backbones need no GPU job. The CPU stages before pre-training
  (corpus, n-grams, tokenize) and the jobs the plan does not cost (evaluate, summaries, tables: minutes
  each) are not placed: the figure is the GPU part of the run.
- **Several GPUs per job** (DDP, ``torchrun``): the pretrain and finetune rules run a job on their
  section's ``gpus`` (workflow/schemas/config.schema.yaml); classify and bilstm jobs take one GPU. A job
  split over ``g`` GPUs at the same global batch runs every step on every GPU, so it takes
  ``max(FLOPs time / g, steps × floor) / efficiency(g)`` (a floor-bound job gains nothing, and loses the
  efficiency): :data:`DDP_SPEEDUP`, NVIDIA's measured data-parallel scaling of BERT pre-training.
- **Placement** is list scheduling (Graham 1969, "Bounds on multiprocessing timing anomalies"): whenever
  GPUs are free, the ready jobs start in order of their bottom level (the job's time plus the longest
  chain after it: critical-path-first, HLFET in Adam, Chandy and Dickson 1974; for independent jobs it is
  longest-processing-time-first), every job that fits the free GPUs starting (as Snakemake starts any
  job whose resources are free). No schedule beats ``max(critical path, GPU-hours / N)``, which is
  printed beside it.
"""

from __future__ import annotations

import argparse
import copy
import heapq
from dataclasses import dataclass, field
from graphlib import CycleError, TopologicalSorter

from pipeline.budget import cost
from pipeline.errors import InputError
from pipeline.plan.plan_output import planned_jobs

# Speed-up of BERT pre-training over data-parallel GPUs at a fixed per-GPU batch, measured by NVIDIA
# (DeepLearningExamples, LanguageModeling/BERT README, "Training performance results", DGX-1 8 x V100 32G,
# mixed precision, batch 14 per GPU, "Multi-gpu weak scaling"): 3.87 on 4 GPUs, 7.65 on 8. Widths in between
# are interpolated in efficiency (speed-up / GPUs); past 8, 8's efficiency is kept (one node, NVLink). The
# all-reduce of a BERT-base or -large gradient costs on an H100 node what it cost there, at most: so the
# efficiency is an assumption carried over, stated on the plan's line.
DDP_SPEEDUP = {1: 1.0, 4: 3.87, 8: 7.65}
DDP_SOURCE = "NVIDIA DeepLearningExamples BERT, DGX-1 8 x V100: 3.87 x on 4 GPUs, 7.65 x on 8"
WIDE_RULES = ("pretrain", "finetune")  # the rules whose config section's ``gpus`` runs a job under torchrun


def add_gpus_argument(parser: argparse.ArgumentParser) -> None:
    """``plan --gpus N [N ...]``: the wall-clock on each of these GPU counts."""

    def count(text: str) -> int:
        value = int(text)
        if not 1 <= value <= 4096:
            raise argparse.ArgumentTypeError(f"a GPU count from 1 to 4096, got {text}")
        return value

    parser.add_argument(
        "--gpus",
        type=count,
        nargs="+",
        metavar="N",
        help="also say when the run would finish on N GPUs (one or more counts): the critical path, the jobs "
        "packed onto the GPUs (pipeline/plan/schedule.py)",
    )


MAX_GPU_COUNTS = 16  # --gpus: distinct counts a plan schedules; each is a whole list scheduling of the DAG


def gpu_counts(given: list[int] | None) -> list[int]:
    """``--gpus`` as scheduled: each count once, in the order given; more than :data:`MAX_GPU_COUNTS` distinct
    counts is refused (each is a full schedule of the DAG: thousands would run for many minutes)."""
    counts = list(dict.fromkeys(given or []))
    if len(counts) > MAX_GPU_COUNTS:
        raise InputError("--gpus", f"{len(counts)} GPU counts; give at most {MAX_GPU_COUNTS}")
    return counts


def ddp_efficiency(gpus: int) -> float:
    """Speed-up over ``gpus`` of one job's data-parallel run, divided by ``gpus`` (:data:`DDP_SPEEDUP`)."""
    if gpus < 1:
        raise ValueError(f"a job runs on at least one GPU, got {gpus}")
    measured = sorted(DDP_SPEEDUP)
    if gpus in DDP_SPEEDUP:
        return DDP_SPEEDUP[gpus] / gpus
    above = min((g for g in measured if g > gpus), default=None)
    below = max(g for g in measured if g < gpus)
    if above is None:
        return DDP_SPEEDUP[below] / below
    low, high = DDP_SPEEDUP[below] / below, DDP_SPEEDUP[above] / above
    return low + (gpus - below) / (above - below) * (high - low)


@dataclass(frozen=True)
class Job:
    """One GPU job: ``hours`` on one GPU, of which ``flops_hours`` its FLOPs time and ``floor_hours`` its steps
    × per-step floor (:class:`pipeline.budget.cost.JobCost`), the jobs it ``needs`` and the ``rule`` whose
    ``gpus`` sets its width (one GPU where it is not in :data:`WIDE_RULES`)."""

    name: str
    hours: float
    flops_hours: float = 0.0
    floor_hours: float = 0.0
    needs: tuple[str, ...] = ()
    rule: str = ""

    def duration(self, gpus: int = 1) -> float:
        """Hours on ``gpus`` GPUs at the same global batch: every process runs every step (at least the floor)
        on ``1 / gpus`` of the FLOPs, at :func:`ddp_efficiency`. A job that records no split (neither FLOPs
        nor floor time) is taken as FLOPs-bound."""
        if gpus <= 1:
            return self.hours
        flops, floor = (self.flops_hours, self.floor_hours) if self.flops_hours or self.floor_hours else (self.hours, 0)
        return max(flops / gpus, floor) / ddp_efficiency(gpus)


@dataclass
class Schedule:
    """Where each job ran: ``placements`` {name: (start, end, GPU indices)}, and when the last one ended."""

    gpus: int
    widths: dict[str, int]
    finish: float = 0.0
    placements: dict[str, tuple[float, float, tuple[int, ...]]] = field(default_factory=dict)


def _order(jobs: dict[str, Job]) -> list[str]:
    """The jobs in an order that puts every job after those it needs (graphlib); a cycle or an unknown
    need is refused by name."""
    for job in jobs.values():
        unknown = [n for n in job.needs if n not in jobs]
        if unknown:
            raise ValueError(f"job {job.name!r} needs {', '.join(unknown)}, which is not a job")
    try:
        return list(TopologicalSorter({name: job.needs for name, job in jobs.items()}).static_order())
    except CycleError as error:
        raise ValueError(f"the jobs' dependencies have a cycle: {' -> '.join(error.args[1])}") from None


def width(job: Job, widths: dict[str, int], gpus: int) -> int:
    """The GPUs ``job`` takes: its rule's width, at most the ``gpus`` there are."""
    return max(1, min(widths.get(job.rule, 1), gpus)) if job.rule in WIDE_RULES else 1


def critical_path(jobs: dict[str, Job], widths: dict[str, int] | None = None, gpus: int = 1) -> tuple[float, list]:
    """The longest chain of dependent jobs, each at its duration on its width: (hours, job names in order)."""
    widths = widths or {}
    longest: dict[str, tuple[float, str | None]] = {}
    for name in _order(jobs):
        job = jobs[name]
        before = max(((longest[n][0], n) for n in job.needs), default=(0.0, None))
        longest[name] = (before[0] + job.duration(width(job, widths, gpus)), before[1])
    if not longest:
        return 0.0, []
    name = max(longest, key=lambda n: (longest[n][0], n))
    hours, path = longest[name][0], []
    while name is not None:
        path.append(name)
        name = longest[name][1]
    return hours, path[::-1]


def list_schedule(jobs: dict[str, Job], gpus: int, widths: dict[str, int] | None = None) -> Schedule:
    """The jobs placed on ``gpus`` GPUs by critical-path-first list scheduling (the module's docstring)."""
    if gpus < 1:
        raise ValueError(f"--gpus must be at least 1, got {gpus}")
    widths = widths or {}
    order = _order(jobs)
    take = {name: width(jobs[name], widths, gpus) for name in jobs}
    hours = {name: jobs[name].duration(take[name]) for name in jobs}
    after: dict[str, list[str]] = {name: [] for name in jobs}
    for job in jobs.values():
        for need in job.needs:
            after[need].append(job.name)
    rank: dict[str, float] = {}  # bottom level: the job and the longest chain it starts
    for name in reversed(order):
        rank[name] = hours[name] + max((rank[n] for n in after[name]), default=0.0)
    waiting = {name: len(set(jobs[name].needs)) for name in jobs}
    ready = [name for name in order if not waiting[name]]
    free = list(range(gpus))
    running: list[tuple[float, str]] = []
    schedule, now = Schedule(gpus, dict(widths)), 0.0
    while ready or running:
        ready.sort(key=lambda n: (-rank[n], -hours[n], n))
        held = []
        for name in ready:
            if take[name] > len(free):
                held.append(name)
                continue
            on, free = tuple(free[: take[name]]), free[take[name] :]
            schedule.placements[name] = (now, now + hours[name], on)
            heapq.heappush(running, (now + hours[name], name))
        ready = held
        now = running[0][0]
        while running and running[0][0] == now:  # every job ending now frees its GPUs at once
            _, name = heapq.heappop(running)
            free = sorted(free + list(schedule.placements[name][2]))
            for later in after[name]:
                waiting[later] -= 1
                if not waiting[later]:
                    ready.append(later)
    schedule.finish = max((end for _, end, _ in schedule.placements.values()), default=0.0)
    return schedule


# ---------------------------------------------------------------------------- the plan's jobs


def _listed(value) -> list:
    return value if isinstance(value, list) else [value]


def _one_setting(planner, benchmark: str, task: str, batch: int, lr, epochs, length: int):
    """The planner, its config's grid narrowed to one task and setting: its ``classify_cost`` is then one
    job's (the plan's own cost of it, however that counts tokens)."""
    section = dict(planner.config["classify"])
    section[benchmark] = {**section[benchmark], "tasks": [task]}
    section["batch_sizes"] = {**section["batch_sizes"], benchmark: [batch]}
    for key, value in (("lr", lr), ("epochs", epochs), ("max_length", length)):
        section[key] = {**section[key], task: value}
    narrowed = copy.copy(planner)
    narrowed.config = {**planner.config, "classify": section}
    return narrowed


def classify_settings(planner, benchmark: str, label: str) -> dict[str, cost.JobCost]:
    """{"task setting": cost} of every job of ``label``'s grid (its share of a fused group's job), each the
    plan's ``classify_cost`` of that setting alone."""
    section = planner.config["classify"]
    found = {}
    for task in section[benchmark]["tasks"]:
        per_task = {key: _listed(section[key].get(task, section[key][benchmark])) for key in ("lr", "epochs")}
        lengths = _listed(section["max_length"].get(task, section["max_length"][benchmark]))
        for batch in section["batch_sizes"][benchmark]:
            for lr in per_task["lr"]:
                for epochs in per_task["epochs"]:
                    for length in lengths:
                        narrowed = _one_setting(planner, benchmark, task, batch, lr, epochs, length)
                        job = narrowed.classify_cost(benchmark, label)
                        if job is not None:
                            found[f"{task} batch{batch}-lr{lr:g}-epochs{epochs:g}-len{length}"] = job
    return found


def _start(label: str, starts: set[str]) -> str | None:
    """The model a fine-tuned ``label`` starts from: the longest ``START+`` prefix of it that is a backbone or
    a pre-training run (a recipe's variant may hold a "+": ``twin.nli+pi``)."""
    found = [s for s in starts if label.startswith(f"{s}+")]
    return max(found, key=len) if found else None


def plan_jobs(planner, jobs: dict[tuple[str, str], tuple[float, float]]) -> dict[str, Job]:
    """The DAG of the budget's ``jobs`` ({(rule, label): (GPU-hours, FLOPs hours)}), named
    ``RULE LABEL`` (a classify job ``classify BENCHMARK LABEL TASK SETTING``, a fused group's named by its
    first model with the count of the others)."""
    dag: dict[str, Job] = {}
    pretrained = {label for rule, label in jobs if rule == "pretrain"}
    tuned = {label for rule, label in jobs if rule == "finetune"}

    def needs_of(labels) -> tuple[str, ...]:
        return tuple(
            [f"pretrain {m}" for m in labels if m in pretrained] + [f"finetune {m}" for m in labels if m in tuned]
        )

    starts = set(planner.backbone_names()) | set(planner.runs)
    for (rule, label), (hours, flops) in jobs.items():
        if rule.startswith("classify "):
            continue
        spent = planner.costs.get(label)
        floor = spent.floor_hours if spent is not None else (hours if hours > flops else 0.0)
        needs = needs_of([_start(label, starts)]) if rule == "finetune" else ()
        dag[f"{rule} {label}"] = Job(f"{rule} {label}", hours, flops, floor, needs, rule)
    for (rule, label), (hours, _) in jobs.items():
        if not rule.startswith("classify "):
            continue
        benchmark = rule.split(" ", 1)[1]
        settings = classify_settings(planner, benchmark, label)
        # scaled to the budget's own total of the grid, so that one GPU finishes in exactly the budget's hours
        scale = hours / sum(c.hours for c in settings.values()) if settings else 0.0
        group = [m for m in planner.fused_group(benchmark, label) if (rule, m) in jobs]
        head = group[0] if label in group else label
        shown = head + (f" (+{len(group) - 1} fused)" if len(group) > 1 else "")
        for setting, share in settings.items():
            name = f"{rule} {shown} {setting}"
            known = dag.get(name)
            before = cost.JobCost(known.hours, known.flops_hours, known.floor_hours) if known else cost.JobCost()
            total = before + share * scale
            dag[name] = Job(name, total.hours, total.flops_hours, total.floor_hours, needs_of(group or [label]))
    return dag


def wall_clock(dag: dict[str, Job], gpus: int, config_widths: dict[str, int]) -> dict:
    """The run on ``gpus`` GPUs: at the config's widths (``pretrain.gpus``, ``finetune.gpus``), and at the
    widths among 1, 2, 4, ... up to ``gpus`` that finish first, with the critical path and the lower bound
    of each."""

    def one(widths: dict[str, int]) -> dict:
        placed = list_schedule(dag, gpus, widths)
        path_hours, path = critical_path(dag, widths, gpus)
        used = {name: width(job, widths, gpus) for name, job in dag.items()}
        gpu_hours = sum(used[n] * job.duration(used[n]) for n, job in dag.items())
        return {
            "widths": {rule: width(Job("", 0, rule=rule), widths, gpus) for rule in WIDE_RULES},
            "finish_hours": placed.finish,
            "critical_path": {"hours": path_hours, "jobs": path},
            "lower_bound_hours": max(path_hours, gpu_hours / gpus),
            "gpu_hours": gpu_hours,
            "placements": [
                {"job": name, "start": start, "end": end, "gpus": list(on)}
                for name, (start, end, on) in sorted(placed.placements.items(), key=lambda item: item[1][:2])
            ],
        }

    ours = one(config_widths)
    choices = [2**k for k in range(gpus.bit_length()) if 2**k <= gpus]
    best = min(
        (one({"pretrain": p, "finetune": f}) for p in choices for f in choices),
        key=lambda found: (round(found["finish_hours"], 9), sum(found["widths"].values())),
    )
    result = {"gpus": gpus, "total_gpu_hours": sum(job.hours for job in dag.values()), "jobs": len(dag), **ours}
    if best["finish_hours"] < ours["finish_hours"] - 1e-9:
        result["faster"] = {key: best[key] for key in ("widths", "finish_hours", "critical_path", "lower_bound_hours")}
    return result


def schedules(planner, records: list[dict], extra: list[dict], gpu_counts: list[int]) -> list[dict]:
    """:func:`wall_clock` of the plan's jobs (the budget's: ``records`` and the ``extra`` jobs no row reads) for
    each of ``gpu_counts``, each with its :func:`summary` line."""
    dag = plan_jobs(planner, planned_jobs(records, extra))
    config_widths = {rule: int((planner.config.get(rule) or {}).get("gpus") or 1) for rule in WIDE_RULES}
    found = [wall_clock(dag, n, config_widths) for n in gpu_counts]
    for s in found:
        s["summary"] = summary(s)
    return found


def summary(s: dict) -> str:
    """One schedule in a line: "on N GPUs: finishes in X h (critical path Y h: A → B → C)", its lower bound
    and widths, and a faster choice of widths where there is one."""
    path = " → ".join(s["critical_path"]["jobs"])
    widths = ", ".join(f"{rule}.gpus {w}" for rule, w in s["widths"].items())
    line = (
        f"on {s['gpus']} GPU{'s' if s['gpus'] > 1 else ''}: finishes in {s['finish_hours']:,.1f} h "
        f"(critical path {s['critical_path']['hours']:,.1f} h: {path}); lower bound "
        f"{s['lower_bound_hours']:,.1f} h = max(critical path, {s['gpu_hours']:,.1f} GPU-hours / {s['gpus']}); "
        f"{s['jobs']} jobs at {widths}"
    )
    faster = s.get("faster")
    if faster:
        wider = ", ".join(f"{rule}.gpus {w}" for rule, w in faster["widths"].items())
        line += (
            f"; with {wider} (each job's batch split over its GPUs, the same global batch): "
            f"{faster['finish_hours']:,.1f} h (critical path {faster['critical_path']['hours']:,.1f} h)"
        )
    return line


def schedule_text(found: list[dict]) -> str:
    """The plan's lines on wall-clock: per GPU count, when the run finishes and its critical path."""
    lines = [
        (
            "Wall-clock of the GPU jobs (pipeline/plan/schedule.py: the budget's jobs and the workflow's "
            "dependencies, critical-path-first list scheduling; several GPUs per pretrain / finetune job at "
            f"{DDP_SOURCE}; the CPU corpus stages and the uncosted evaluate jobs not counted):"
        )
    ]
    lines += [f"- {s['summary']}" for s in found]
    return "\n".join(lines)
