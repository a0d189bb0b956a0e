"""Stage ``plan``: for every published row, the jobs a config runs for it, against what its paper ran.

``python -m pipeline plan --configfile CONFIG [--format md|json] [--gpu h100] [--mfu 0.4]``
resolves the config (its schema's defaults filled in, as the workflow does) and prints one record
per row of the papers' tables (``published.yaml``). How each row was made, and what its paper
states about that training, live in ``paper_settings.yaml`` (with the quotes and sections); what
a training example costs in ``workloads.yaml``. A record holds:

- ``paper``, ``table``, ``row``, ``status`` (``planned``, ``quoted``: a number the paper quotes
  from elsewhere, ``not planned``: the config has no run for it, or no run can make it (its data
  or models cannot be had), with the ``reason``, or
  ``not mapped``: the row is not related to runs yet);
- ``label``: the run whose rows the tables print beside it, and ``targets``, the Snakemake output
  paths that make it;
- ``settings`` (ours) and ``paper_settings`` (the paper's, with its ``section``), on the same
  keys: backbone, objective or recipe, input, max_length, batch_size, lr, warmup, epochs, updates
  (optimizer steps), tokens, and for pre-training the n-gram preset and the masking rule;
  ``downstream``: the same for the GLUE / CLUE fine-tuning of a pre-trained row;
- ``deviations``: ``{key, ours, paper, why}`` for every key where they differ (``why`` from
  ``paper_settings.yaml``'s ``reasons``, or null where no reason is recorded);
- ``gpu_hours``: the training of the row's own run (pre-training or Siamese fine-tuning; the
  GLUE / CLUE grid is not counted yet), at ``--mfu`` of ``--gpu``'s dense bf16 peak
  (:mod:`pipeline.report.cost`; the assumption line says so).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from functools import cache
from pathlib import Path

import yaml

from pipeline import experiments
from pipeline.arguments import MFU
from pipeline.errors import InputError
from pipeline.experiments import MISAD_OBJECTIVES, PAIR_OBJECTIVES
from pipeline.report import cost
from pipeline.workflow_config import ConfigError, check, check_unique_keys, coerce

HERE = Path(__file__).parent
SCHEMA = HERE.parents[1] / "workflow" / "schemas" / "config.schema.yaml"
NGRAM_OBJECTIVES = ("burt", "misad")  # the objectives that read an n-gram vocabulary (docs/method.md §2)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--configfile", required=True, type=Path, help="a workflow config (workflow/config/*.yaml)")
    parser.add_argument("--format", choices=("md", "json"), default="md")
    parser.add_argument("--gpu", choices=tuple(cost.GPUS), default="h100", help="GPU of the estimate")
    parser.add_argument("--mfu", type=MFU, default=cost.DEFAULT_MFU, help="model FLOPs utilisation assumed")
    parser.add_argument("--out", type=Path, help="write here instead of standard output")


@cache
def _yaml(name: str) -> dict:
    return yaml.safe_load((HERE / name).read_text(encoding="utf-8"))


def resolve_config(path: Path) -> dict:
    """The config as the workflow sees it: checked against the schema, its defaults filled in."""
    from snakemake.utils import validate

    if not path.is_file():
        raise InputError(path, "config file not found")
    try:
        check_unique_keys([path])
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
        schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
        coerce(config, schema)
        check(config, schema)
        validate(config, str(SCHEMA), set_default=True)
        experiments.runs(config["pretrain"])
    except (ConfigError, ValueError) as exc:
        raise InputError(path, " ".join(str(exc).split())) from None
    return config


def hub_repo(spec: str) -> str:
    """``hub:google-bert/bert-base-uncased@REV`` -> ``google-bert/bert-base-uncased``; anything else as given."""
    return spec.removeprefix("hub:").split("@", 1)[0] if isinstance(spec, str) else str(spec)


def architecture(repo: str) -> cost.Architecture | None:
    return cost.ARCHITECTURES.get(repo.rsplit("/", 1)[-1])


class Planner:
    """The records of one resolved config."""

    def __init__(self, config: dict, gpu: str, mfu: float):
        self.config, self.gpu, self.mfu = config, gpu, mfu
        self.results = f"results/{config['run']}"
        self.backbones = {hub_repo(spec): name for name, spec in config["models"]["backbones"].items()}
        self.runs = experiments.runs(config["pretrain"])
        self.paper = _yaml("paper_settings.yaml")
        self.work = _yaml("workloads.yaml")

    # ------------------------------------------------------------------ pre-training
    def pretrain_settings(self, run: experiments.PretrainRun) -> dict:
        s, config = run.settings, self.config
        examples = config["sample"]["size"] - config["pretrain"]["heldout"]  # held out: never trained on
        settings = {
            "backbone": hub_repo(config["models"]["backbones"][run.backbone]),
            "objective": run.objective,
            "input": s["input"],
            "max_length": s["max_length"],
            "batch_size": s["batch_size"] * s["grad_accum"] * config["pretrain"]["gpus"],
            "lr": s["lr"],
            "warmup": s["warmup"],
            "epochs": s["epochs"],
            "examples": examples,
        }
        per_sentence = self.work["tokens_per_example"][f"wiki_sentence_{config['pretrain']['language']}"]
        # an NSP / SOP example is two sentences laid out as one pair
        tokens = examples * per_sentence * s["epochs"] * (2 if run.objective in PAIR_OBJECTIVES else 1)
        settings["tokens"] = round(tokens)
        if s["max_steps"]:
            settings["updates"] = s["max_steps"]
        elif s["input"] == "packed":  # blocks of max_length tokens
            settings["updates"] = math.ceil(tokens / (s["max_length"] * settings["batch_size"]))
        else:
            # NSP / SOP too: their pair sample (sample --with-next) pairs every sampled sentence with its
            # next one, so they get as many examples as the others (ULR-BERT §7.1, "with the same additional
            # updates") less the sampled sentences that end their document (about 1 in its sentence count)
            settings["updates"] = math.ceil(examples * s["epochs"] / settings["batch_size"])
        if run.objective in NGRAM_OBJECTIVES:
            settings["ngram_preset"] = experiments.ngram_preset(config["ngrams"], run.objective)
        if run.objective == "burt":
            settings["masking"] = config["pretrain"]["ngram_pool"]
        return settings

    def pretrain_hours(self, run: experiments.PretrainRun, settings: dict) -> float | None:
        arch = architecture(settings["backbone"])
        if arch is None:
            return None
        tokens, forward = float(settings["tokens"]), 0.0
        if run.objective in MISAD_OBJECTIVES:
            tokens *= 1 + self.work["misad"]["extra_train_passes"]
            if self.config["pretrain"]["misad_choice"] == "mlm-score" and run.objective == "misad":
                forward = settings["tokens"] * self.work["misad"]["scored_candidates"]
        padding = self.work["padding_share"][settings["input"]]
        work = cost.Workload(arch, tokens, settings["max_length"], padding_share=padding, forward_tokens=forward)
        return cost.gpu_hours(work.flops, self.gpu, self.mfu)

    def missing(self, repo: str) -> str:
        """Why a row's model is not run: the config has no backbone for it, and what paper_settings.yaml
        says about that checkpoint (a commit nobody could pin, for example)."""
        why = self.paper.get("unconfigured", {}).get(repo)
        return f"models.backbones has no {repo}" + (f": {why}" if why else "")

    def find_pretrain(self, objective: str, repo: str, experiment: str) -> tuple[experiments.PretrainRun | None, str]:
        name = self.backbones.get(repo)
        if name is None:
            return None, self.missing(repo)
        candidates = [r for r in self.runs.values() if r.backbone == name and r.objective == objective]
        if not candidates:
            return None, f"pretrain has no {objective} run from {name}"
        paper = self.paper["experiments"][experiment]["settings"]
        return min(candidates, key=lambda r: len(self.deviations(self.pretrain_settings(r), paper))), ""

    # ------------------------------------------------------------------ comparison
    def deviations(self, ours: dict, paper: dict, prefix: str = "") -> list[dict]:
        reasons = self.paper.get("reasons", {})
        found = []
        for key, value in paper.items():
            if key not in ours:
                continue
            mine = ours[key]
            same = (
                sorted(mine) == sorted(value)
                if isinstance(mine, list) and isinstance(value, list)
                else mine == value or (isinstance(value, list) and mine in value)
            )
            if not same:
                name = prefix + key
                found.append({"key": name, "ours": mine, "paper": value, "why": reasons.get(name)})
        return found

    # ------------------------------------------------------------------ records
    def records(self) -> list[dict]:
        published = _yaml("published.yaml")
        mapped = self.paper["rows"]
        out = []
        for source_id, source in published["sources"].items():
            paper = published["papers"][source["paper"]]["short"]
            for row in source["rows"]:
                record = {"paper": paper, "table": source["table"], "row": row["name"], "source": source_id}
                if source_id not in mapped:
                    out.append(
                        {**record, "status": "not mapped", "reason": "this table's rows are not related to runs yet"}
                    )
                    continue
                spec = mapped[source_id]
                if "not_reproducible" in spec:  # the table's data or models cannot be had: why
                    out.append({**record, "status": "not planned", "reason": spec["not_reproducible"]})
                    continue
                out.append({**record, **self.record(spec, spec["made_by"][row["name"]], row, source)})
        return out

    def record(self, source: dict, made_by, row: dict | None = None, published: dict | None = None) -> dict:
        if made_by == "bilstm":  # the row's own pooling, at its sentence dimension (two directions)
            dim = row["values"][published["columns"].index("dim")]
            made_by = {"bilstm": row["pooling"], "size": dim // 2}
        if made_by == "quoted":
            return {"status": "quoted", "reason": "a number the paper quotes from elsewhere, or an external system"}
        if "checkpoint" in made_by:
            name = self.backbones.get(made_by["checkpoint"])
            if name is None:
                return {"status": "not planned", "reason": self.missing(made_by["checkpoint"])}
            return {
                "status": "planned",
                "label": name,
                "settings": {"backbone": made_by["checkpoint"]},
                "deviations": [],
                "gpu_hours": 0.0,
                **self.downstream(source, name),
            }
        if "pretrain" in made_by:
            experiment = made_by.get("experiment", source["experiment"])
            run, reason = self.find_pretrain(made_by["pretrain"], made_by["backbone"], experiment)
            if run is None:
                return {"status": "not planned", "reason": reason}
            settings = self.pretrain_settings(run)
            target = f"{self.results}/models/{run.label}"
            record = self.planned(run.label, target, settings, experiment, self.pretrain_hours(run, settings))
            down = self.downstream(source, run.label)
            record["targets"] += down.pop("targets", [])
            return {**record, **down}
        if "finetune" in made_by:
            return self.finetune_record(made_by, made_by.get("experiment", source["experiment"]))
        if "bilstm" in made_by:
            return self.bilstm_record(made_by["bilstm"], made_by["size"], source["experiment"])
        raise ValueError(f"paper_settings.yaml: unknown row spec {made_by!r}")

    def planned(self, label: str, target: str, settings: dict, experiment: str, gpu_hours) -> dict:
        """The record of a run the config makes: its settings beside its paper's, and the deviations."""
        paper = self.paper["experiments"][experiment]
        return {
            "status": "planned",
            "label": label,
            "targets": [target],
            "settings": settings,
            "paper_settings": {**paper["settings"], "section": f"{paper['paper']} {paper['section']}"},
            "deviations": self.deviations(settings, paper["settings"]),
            "gpu_hours": gpu_hours,
        }

    def bilstm_record(self, pooling: str, size: int, experiment: str) -> dict:
        """A BiLSTM encoder of paper 004 (the bilstm stage: one model per pooling x units per direction)."""
        section = self.config["bilstm"]
        label = f"bilstm-{pooling}-{2 * size}"  # workflow/rules/functions/bilstm.smk names them so
        if pooling not in section["poolings"] or size not in section["sizes"]:
            return {"status": "not planned", "reason": f"bilstm has no {pooling} pooling at {size} units"}
        vectors = Path(section["vectors"]).name.removesuffix(".zip").removesuffix(".txt")
        settings = {"batch_size": section["batch_size"], "lr": section["lr"], "hidden": size, "vectors": vectors}
        # GPU-hours: not in the cost model (a BiLSTM over 300-d vectors takes hours on one GPU)
        return self.planned(label, f"{self.results}/bilstm/{label}", settings, experiment, None)

    def downstream(self, source: dict, label: str) -> dict:
        benchmark = source.get("downstream")
        if not benchmark:
            return {}
        section = self.config["classify"]
        if label not in section[benchmark]["models"]:
            return {"downstream": {"status": "not planned", "reason": f"classify.{benchmark}.models has no {label}"}}
        ours = {"batch_size": section["batch_sizes"][benchmark]}
        for key in ("lr", "epochs", "max_length"):  # over the benchmark's tasks: a task may set its own
            values = [section[key].get(task, section[key][benchmark]) for task in section[benchmark]["tasks"]]
            flat = sorted({v for value in values for v in (value if isinstance(value, list) else [value])})
            ours[key] = flat[0] if len(flat) == 1 else flat
        paper = self.paper["experiments"][benchmark]
        return {
            "targets": [f"{self.results}/metrics/{benchmark}/{label}.json"],
            "downstream": {
                "benchmark": benchmark,
                "gpu_hours": self.classify_hours(benchmark, label),
                "settings": ours,
                "paper_settings": {**paper["settings"], "section": f"{paper['paper']} {paper['section']}"},
                "deviations": self.deviations(ours, paper["settings"], f"{benchmark}."),
            },
        }

    def repo_of(self, label: str) -> str:
        """The hub repository a model label starts from (a backbone, or a pre-training run's backbone)."""
        name = self.runs[label].backbone if label in self.runs else label
        return hub_repo(self.config["models"]["backbones"].get(name, name))

    def classify_hours(self, benchmark: str, label: str) -> float | None:
        """Every job of the dev-selected grid (pipeline/classify/hyperparameters.py): seeds x batch sizes x
        lr x epochs x lengths per task, each example padded to the length (an upper bound: classify pads
        each batch to its longest example)."""
        arch = architecture(self.repo_of(label))
        if arch is None:
            return None
        section, sizes = self.config["classify"], self.work["train_examples"][benchmark]

        def listed(key, task):
            value = section[key].get(task, section[key][benchmark])
            return value if isinstance(value, list) else [value]

        flops = 0.0
        for task in section[benchmark]["tasks"]:
            runs = section["seeds"] * len(section["batch_sizes"][benchmark]) * len(listed("lr", task))
            for epochs in listed("epochs", task):
                for length in listed("max_length", task):
                    tokens = sizes[task] * epochs * length
                    flops += runs * tokens * arch.training_flops_per_token(length)
        return cost.gpu_hours(flops, self.gpu, self.mfu)

    def finetune_record(self, made_by: dict, experiment: str) -> dict:
        section = self.config["finetune"]
        start = made_by["start"]
        if "checkpoint" in start:
            name = self.backbones.get(start["checkpoint"])
            reason = self.missing(start["checkpoint"])
        else:
            run, reason = self.find_pretrain(start["pretrain"], start["backbone"], start["experiment"])
            name = run.label if run else None
        if name is None:
            return {"status": "not planned", "reason": reason}
        recipe, variant = made_by["finetune"], made_by.get("variant", {})
        defaults = {key: section[key] for key in ("objectives", "pooling", "concatenation", "negatives")}
        key, value = next(iter(variant.items()), (None, None))
        if key is None or defaults[key] == value:  # the run every start x its recipes makes (the ablation's reference)
            label = f"{name}+{recipe}"
            planned = (name in section["start"] and recipe in experiments.finetune_recipes(section, name)) or (
                recipe == "twin" and name in section["ablation"]["start"]
            )
            reason = f"finetune has no {recipe} run from {name}"
        else:  # an ablation run (workflow/rules/functions/finetune.smk names them so)
            label = f"{name}+{recipe}." + (f"k{value}" if key == "negatives" else str(value))
            planned = name in section["ablation"]["start"] and value in section["ablation"][key]
            reason = f"finetune.ablation has no {key} {value} from {name}"
        if not planned:
            return {"status": "not planned", "reason": reason}
        nli_batches = self.work["train_examples"]["nli"] // section["batch_size"]
        twin_tasks = (variant.get("objectives") or section["objectives"]).count("+") + 1 if recipe == "twin" else 1
        epochs = section["epochs"][recipe]
        updates = section["max_steps"] or math.ceil(epochs * nli_batches * (2 if twin_tasks > 1 else 1))
        settings = {
            "recipe": recipe,
            "batch_size": section["batch_size"],
            "lr": section["lr"],
            "warmup": section["warmup"],
            "epochs": epochs if not section["max_steps"] else None,
            "updates": updates,
            **defaults,
            **variant,
        }
        arch = architecture(start.get("checkpoint") or start["backbone"])
        tokens = updates * section["batch_size"] * 2 * self.work["tokens_per_example"]["nli_sentence"]
        hours = (
            cost.gpu_hours(cost.Workload(arch, tokens, section["max_length"]).flops, self.gpu, self.mfu)
            if arch
            else None
        )
        return self.planned(label, f"{self.results}/finetune/{label}", settings, experiment, hours)


def budget(records: list[dict]) -> dict:
    """GPU-hours by rule over the planned jobs, each job counted once however many rows it serves."""
    jobs: dict[tuple[str, str], float] = {}
    for r in records:
        if r["status"] != "planned":
            continue
        if r.get("gpu_hours") and "settings" in r and ("objective" in r["settings"] or "recipe" in r["settings"]):
            jobs[("pretrain" if "objective" in r["settings"] else "finetune", r["label"])] = r["gpu_hours"]
        down = r.get("downstream", {})
        if down.get("gpu_hours"):
            jobs[(f"classify {down['benchmark']}", r["label"])] = down["gpu_hours"]
    by_rule: dict[str, float] = {}
    for (rule, _), hours in jobs.items():
        by_rule[rule] = by_rule.get(rule, 0.0) + hours
    largest = sorted(jobs.items(), key=lambda item: -item[1])[:5]
    return {
        "total": sum(jobs.values()),
        "by_rule": by_rule,
        "largest": [{"rule": rule, "label": label, "gpu_hours": hours} for (rule, label), hours in largest],
    }


def markdown(records: list[dict], assumption: str) -> str:
    lines = [
        f"GPU-hours: {assumption}",
        "",
        "| paper | table | row | status | run | deviations | GPU-hours |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in records:
        deviations = "; ".join(f"{d['key']}: {d['ours']} vs {d['paper']}" for d in r.get("deviations", []))
        hours = r.get("gpu_hours")
        lines.append(
            f"| {r['paper']} | {r['table']} | {r['row']} | {r['status']} | {r.get('label', r.get('reason', ''))} | "
            f"{deviations} | {'' if hours is None else f'{hours:,.2f}'} |"
        )
    total = budget(records)
    lines += ["", f"GPU budget of the planned rows: {total['total']:,.1f} GPU-hours"]
    lines += [f"- {rule}: {hours:,.1f}" for rule, hours in sorted(total["by_rule"].items())]
    lines += [f"- largest: {j['rule']} {j['label']} {j['gpu_hours']:,.1f}" for j in total["largest"]]
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> None:
    config = resolve_config(args.configfile)
    planner = Planner(config, args.gpu, args.mfu)
    records = planner.records()
    assumption = cost.assumptions(args.gpu, args.mfu)
    if args.format == "json":
        document = {
            "config": str(args.configfile),
            "assumption": assumption,
            "rows": records,
            "budget": budget(records),
        }
        text = json.dumps(document, indent=2) + "\n"
    else:
        text = markdown(records, assumption)
    if args.out:
        from pipeline.atomic import AtomicFiles

        with AtomicFiles() as files:
            files.temp(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
