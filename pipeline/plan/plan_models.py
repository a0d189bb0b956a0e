"""The plan's view of its models (pipeline/plan/plan.py): the commit of each hub backbone (pinned, locked,
or resolved at first download: pipeline/models/hub_lock.py), the paper configs that run a row another
config lacks, the memory per GPU of each training run (pipeline/budget/memory.py) and an ELECTRA
generator's share of its pre-training's cost."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

from pipeline import experiments
from pipeline.backbone_family import shares_layers
from pipeline.budget import cost
from pipeline.budget.cost import architecture
from pipeline.budget.memory import training_memory
from pipeline.models.hub_lock import check_one_commit_per_model, commit_text, hub_spec
from pipeline.models.spec import hub_repo

CONFIGS = Path(__file__).resolve().parents[2] / "workflow" / "config"


class PlanModels:
    """The model methods of :class:`pipeline.plan.plan.Planner` (its ``config``, ``work``, ``lock``, ``gpu``,
    ``mfu``)."""

    def generator_cost(self, run: experiments.PretrainRun, settings: dict) -> cost.JobCost | None:
        """An ELECTRA discriminator's generator (models.generators): a forward and backward pass over every
        token the discriminator reads (ELECTRA §2: the generator's MLM on the same masked input)."""
        spec = self.config["models"].get("generators", {}).get(run.backbone)
        arch = architecture(hub_repo(spec)) if spec else None
        if arch is None:
            return None
        padding = self.work["padding_share"][settings["input"]]
        work = cost.Workload(arch, float(settings["tokens"]), settings["max_length"], padding_share=padding)
        return cost.job_cost(work.flops, 0, 0.0, self.gpu, self.mfu)

    def commits(self) -> dict[str, str]:
        """Each hub backbone and generator, a plain hub id as ``hub:ID`` (the workflow locks it so): its commit,
        pinned, locked, or "resolved at first download"."""
        specs = [*self.config["models"]["backbones"].values(), *self.config["models"].get("generators", {}).values()]
        hub = [spec for spec in map(hub_spec, specs) if spec]
        check_one_commit_per_model(hub, self.lock, "models")
        return {hub_repo(spec): commit_text(spec, self.lock) for spec in hub}

    def memory(self, repo: str, batch: int, length: int, passes: float) -> dict | None:
        """Memory per GPU of a training job at its batch (pipeline/budget/memory.py), and its split."""
        arch = architecture(repo)
        if arch is None:
            return None
        found = training_memory(arch, batch, length, passes, shared_layers=shares_layers(repo))
        return {
            "gb_per_gpu": round(found.total_gb, 1),
            "split": found.parts,
            "gb_per_part": round(found.per_part_gb, 1),
            "text": found.text(batch),
        }


@cache
def config_repos(path: Path) -> frozenset:
    """The hub repositories a config file's backbones name."""
    backbones = (yaml.safe_load(path.read_text(encoding="utf-8")).get("models") or {}).get("backbones") or {}
    return frozenset(hub_repo(spec) for spec in backbones.values())


def other_configs(run: str) -> list[Path]:
    """The paper configs of the repository besides the one whose run is ``run``."""
    return [
        path
        for path in sorted(CONFIGS.glob("paper-*.yaml"))
        if (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("run") != run
    ]


def memory_lines(records: list[dict]) -> list[str]:
    """The memory per GPU of each planned training run (once per run), the largest first."""
    seen = {}
    for r in records:
        if r.get("memory") and r.get("label") not in seen:
            seen[r["label"]] = r["memory"]
    ranked = sorted(seen.items(), key=lambda item: -item[1]["gb_per_gpu"])
    return [f"- {label}: {memory['text']}" for label, memory in ranked]


def elsewhere(repo: str, run: str) -> list[str]:
    """The other paper configs (repository-relative) whose backbones name ``repo``."""
    return [
        path.relative_to(CONFIGS.parents[1]).as_posix() for path in other_configs(run) if repo in config_repos(path)
    ]


def models_markdown(commits: dict[str, str], records: list[dict]) -> str:
    """The plan's Markdown after the budget: each hub model's commit, and the memory of each training run."""
    text = "\nHub commits (models.backbones, models.generators):\n"
    text += "".join(f"- {repo}: {commit}\n" for repo, commit in commits.items())
    text += "\nMemory per GPU of the training runs (pipeline/budget/memory.py):\n"
    return text + "".join(line + "\n" for line in memory_lines(records))
