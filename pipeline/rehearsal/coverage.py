"""Job kinds: what a dress rehearsal must have run for a paper config (docs/stages/rehearsal.md).

A paper config schedules thousands of jobs, most of them the same code on another shard, seed or
grid point. A **job kind** is what can fail differently: the rule, the backbone family and shape (BERT,
ALBERT, ELECTRA, RoBERTa, XLNet, the released SBERT, base, large or xxlarge; the Chinese BERTs), what the job trains or reads (the objective and its
experiment suffix, the fine-tuning recipe, the BiLSTM pooling) and the task family (a GLUE / CLUE
task's benchmark and head, an evaluation's task group). Shards, slices, seeds, grid points, sizes
and the twin ablation's grid values are not part of a kind. Besides the kinds, every single value
of the config's structure (each objective, experiment suffix, recipe, start, pooling, task family,
download group) is a **feature** that must occur at least once.

Both come from Snakemake's own job listing: ``snakemake -n -p`` (what a config schedules) or the
log of a run (what it executed), each job a ``rule NAME:`` block with its ``wildcards:`` line.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from pipeline.backbone_family import family_kind, size_of

# Wildcards that only say which piece of the data or which grid point a job is: not part of a kind.
SIZE_WILDCARDS = frozenset({"lang", "part", "shard", "slice", "setting"})
# Evaluation task groups (docs/method.md §5): the code path an evaluate job takes.
EVALUATE_GROUPS = {
    "analogy": "analogy",
    "analogy_examples": "analogy",
    "sts": "similarity",
    "wordsim": "similarity",
    "scws": "similarity",
    "semeval5a": "semeval5a",  # its own rules where the encoder rows fine-tune on it (finetune_semeval)
    "geogranno": "phrase",
    "ppdb": "phrase",
    "faq": "retrieval",
}
_JOB = re.compile(r"^(?:local)?rule (\S+):$", re.MULTILINE)
_WILDCARDS = re.compile(r"^\s+wildcards: (.*)$", re.MULTILINE)
_COMMAND = re.compile(r"^Shell command: (.*)$", re.MULTILINE)
_OUTPUT = re.compile(r"^\s+output: (.*)$", re.MULTILINE)
# An evaluate_<lang> job scores its model on several tasks: one kind per task, each named by the folder
# of its metrics JSON (results/<run>/metrics/<task>/<model>.<pooling>.json).
_METRICS_TASK = re.compile(r"/metrics/([^/]+)/[^/]+\.json$")
# A classify_fused_* job fine-tunes several models at once (classify.fuse_checkpoints): each model's runs,
# results/<run>/classify/<label>/<task>/<setting>/seed<S>/..., are a classify job's.
_CLASSIFY_RUN = re.compile(r"/classify/([^/]+)/([^/]+)/[^/]+/seed\d+/metrics\.json$")
FUSED_CLASSIFY = "classify_fused_"
_JOBID = re.compile(r"^\s+jobid: (\d+)$", re.MULTILINE)
_FINISHED = re.compile(r"^Finished jobid: (\d+)", re.MULTILINE)
# The options that say what form a download's source takes (pipeline/download.py): one file, parts joined,
# or a published checksum list. How it is checked (a digest, or none yet) is the source's, which the
# rehearsal's mirror replaces: the paper configs leave some unpinned (GloVe, SNLI's train CSV), and
# their download stops at once, naming the missing checksum.
SOURCE_FORMS = ("--url", "--part", "--checksums-url")


@dataclass(frozen=True)
class Job:
    rule: str
    wildcards: dict
    command: str = ""  # the shell command, where the listing prints it (snakemake -p)
    jobid: str = ""
    outputs: tuple = ()


def jobs(listing: str) -> list[Job]:
    """Every job of a Snakemake listing (dry run or run log), in order."""
    starts = [m.start() for m in _JOB.finditer(listing)] + [len(listing)]
    found = []
    for start, end in itertools.pairwise(starts):
        block = listing[start:end]
        rule = _JOB.match(block).group(1)
        line = _WILDCARDS.search(block)
        wildcards = dict(item.split("=", 1) for item in line.group(1).split(", ")) if line else {}
        command = _COMMAND.search(block)
        jobid = _JOBID.search(block)
        output = _OUTPUT.search(block)
        found.append(
            Job(
                rule,
                wildcards,
                command.group(1) if command else "",
                jobid.group(1) if jobid else "",
                tuple(output.group(1).split(", ")) if output else (),
            )
        )
    return found


def finished_jobs(log: str) -> list[Job]:
    """The jobs of a run's log that finished (``Finished jobid: N``): a failed job is not executed."""
    done = set(_FINISHED.findall(log))
    return [job for job in jobs(log) if job.jobid in done]


def backbone_family(name: str, spec: str = "") -> str:
    """A backbone's family and size, from its name and spec: the family of the tiny hub's stand-ins
    (:func:`pipeline.backbone_family.family_kind`, BERT where none is named: a tiny or local model),
    the Chinese BERTs as ``bert-zh``, and ``-large`` / ``-xxlarge`` for the larger shapes."""
    text = f"{name} {spec}"
    kind = family_kind(text) or "bert"
    if kind == "chinese":
        return "bert-zh"
    size = size_of(text)
    return kind if size == "base" else f"{kind}-{size}"


class KindReader:
    """The kinds and features of jobs, for one config (its backbones, recipes and task registry)."""

    def __init__(self, config: dict):
        self.backbones = dict(config.get("models", {}).get("backbones", {}))
        self.recipes = set(config.get("finetune", {}).get("recipes", []))
        for listed in config.get("finetune", {}).get("start_recipes", {}).values():
            self.recipes.update(listed)
        from pipeline.classify.tasks import TASKS

        self.tasks = TASKS

    def split_label(self, label: str) -> tuple[str, str]:
        """(backbone family, what the model is) of a model label: ``bert-base-uncased+burt.packed+twin.k7``
        → ("bert", "+burt.packed+twin"); a BiLSTM label ``bilstm-max-4096`` → ("bilstm", "max")."""
        if label.startswith("bilstm-"):
            return "bilstm", re.sub(r"-\d+$", "", label.removeprefix("bilstm-"))
        for name in sorted(self.backbones, key=len, reverse=True):
            if label == name or label.startswith((f"{name}+", f"{name}.")):
                rest = label[len(name) :]
                kept = []
                for part in rest.split("+"):
                    head = part.split(".", 1)[0]
                    if head in self.recipes:  # what follows a recipe is the twin ablation's grid value
                        kept.append(head)  # (twin.k7, twin.nli+pi): not a kind
                        break
                    kept.append(part)
                return backbone_family(name, self.backbones[name]), "+".join(kept)
        return "other", label

    def task_family(self, rule: str, task: str) -> str:
        if rule == "classify" and task in self.tasks:
            spec = self.tasks[task]
            return f"{spec.benchmark}-{spec.head}"
        if rule.startswith("evaluate"):
            return EVALUATE_GROUPS.get(task, task)
        return task

    def kind(self, job: Job) -> tuple:
        family, what, task = "", "", ""
        wildcards = job.wildcards
        label = wildcards.get("label") or wildcards.get("backbone")
        if job.rule == "download_model":
            label = wildcards["model"].rsplit("/", 1)[-1].split("@")[0]
            family = backbone_family(wildcards["model"].rpartition("/models/")[2])  # ORG/NAME@COMMIT
        elif job.rule == "training_curves":
            label = wildcards["model"]
        if label and not family:
            family, what = self.split_label(label)
        if "task" in wildcards:
            task = self.task_family(job.rule, wildcards["task"])
        elif "benchmark" in wildcards:
            task = wildcards["benchmark"]
        elif job.rule == "download":
            task = download_form(job.command)
        elif "preset" in wildcards or "sample" in wildcards:
            what = wildcards.get("preset") or wildcards.get("sample")
        return (job.rule, family, what, task)

    def kinds(self, job: Job) -> set[tuple]:
        """The job's kind, or one per task where the job scores its model on several (evaluate_<lang>), or the
        classify kind of each model a fused classify job fine-tunes (its outputs name them)."""
        if job.rule.startswith(FUSED_CLASSIFY):
            runs = {match.groups() for match in map(_CLASSIFY_RUN.search, job.outputs) if match}
            runs = runs or {(job.wildcards.get("label", ""), job.wildcards.get("task", ""))}
            return {self.kind(Job("classify", {**job.wildcards, "label": label, "task": task})) for label, task in runs}
        tasks = [m.group(1) for m in map(_METRICS_TASK.search, job.outputs) if m] if "task" not in job.wildcards else []
        if not job.rule.startswith("evaluate") or not tasks:
            return {self.kind(job)}
        return {self.kind(Job(job.rule, {**job.wildcards, "task": task})) for task in tasks}

    def features(self, job: Job) -> set[tuple[str, str]]:
        """Each single value the job stands for: its rule, pooling, task families, and each piece of its label."""
        found = {("pooling", job.wildcards["pooling"])} if "pooling" in job.wildcards else set()
        if job.rule.startswith(FUSED_CLASSIFY):  # several models in one job: a code path of its own
            found.add(("rule", FUSED_CLASSIFY.rstrip("_")))
        for rule, family, what, task in self.kinds(job):
            found.add(("rule", rule))
            if family:
                found.add(("backbone family", family))
            for piece in filter(None, re.split(r"[+]", what)):
                found.add(("model part", piece))
            if task:
                found.add(("task family", task))
        return found


def download_form(command: str) -> str:
    """A download's kind: the form of its source (URL or parts, checksum list or digest), from its command."""
    words = command.split()
    return " ".join(form for form in SOURCE_FORMS if form in words) or "download"


@dataclass
class Coverage:
    scheduled_kinds: set
    executed_kinds: set
    scheduled_features: set
    executed_features: set

    @property
    def missing_kinds(self) -> list:
        return sorted(self.scheduled_kinds - self.executed_kinds)

    @property
    def missing_features(self) -> list:
        return sorted(self.scheduled_features - self.executed_features)

    @property
    def complete(self) -> bool:
        return not self.missing_kinds and not self.missing_features

    def summary(self) -> dict:
        return {
            "kinds_scheduled": len(self.scheduled_kinds),
            "kinds_executed": len(self.executed_kinds & self.scheduled_kinds),
            "features_scheduled": len(self.scheduled_features),
            "features_executed": len(self.executed_features & self.scheduled_features),
            "missing_kinds": [list(k) for k in self.missing_kinds],
            "missing_features": [list(f) for f in self.missing_features],
        }


def coverage(
    paper_listing: str, paper_config: dict, rehearsal_listing: str, rehearsal_config: dict, executed: bool = False
) -> Coverage:
    """The kinds and features the paper config schedules against those the rehearsal schedules (a dry
    run's listing) or, with ``executed``, ran to the end (a run's log)."""
    paper, rehearsal = KindReader(paper_config), KindReader(rehearsal_config)
    paper_jobs = jobs(paper_listing)
    rehearsal_jobs = finished_jobs(rehearsal_listing) if executed else jobs(rehearsal_listing)
    return Coverage(
        set().union(*(paper.kinds(j) for j in paper_jobs)),
        set().union(*(rehearsal.kinds(j) for j in rehearsal_jobs)),
        set().union(*(paper.features(j) for j in paper_jobs)),
        set().union(*(rehearsal.features(j) for j in rehearsal_jobs)),
    )
