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
- ``settings`` (ours) and ``paper_settings`` (what the paper states, with its ``section``): backbone,
  objective or recipe, input, max_length, batch_size, lr, warmup, epochs, updates (optimizer steps),
  tokens, the optimiser; ``downstream``: the same for the GLUE / CLUE fine-tuning of a pre-trained row;
- ``deviations``: ``{key, ours, paper, why}`` for every key of ``paper_settings`` where ours differs,
  and for every one a run does not record (``ours`` null, ``why`` "not compared: ..."): no key of a
  paper is skipped. ``why`` comes from ``paper_settings.yaml``'s ``reasons`` (by
  ``EXPERIMENT.KEY``, then ``KEY``). Rows a paper scored on a test server carry an ``evaluation``
  deviation (ours: dev, the setting selected on the same dev). The project's own rules are deviations
  too: the n-gram presets' short-document rules (``ngrams.top_k``, ``ngrams.threshold``, with the
  ``switch`` that restores the papers' rule) and the NSP / SOP pair head export discards (``glue_pooler``);
- ``choices``: the project's interpretations where a paper is silent or its text and its released
  code differ (the n-gram preset, the masking rule, MiSAD's loss and its choice of w, the span lengths
  and unit, the pooler GLUE / CLUE start from, ELECTRA's masked-LM term; on every row fine-tuned on GLUE /
  CLUE, a released checkpoint's included, the dropout and batch order it fine-tunes at), each with its
  reason and the alternative (:mod:`pipeline.plan.plan_choices`); ``released``: where the authors' released code ran another
  value than the paper states, the launch script of the row's own objective with its values (or that
  none was released), with the source: the configs keep the paper's;
- ``gpu_hours``: the training of the row's own run (pre-training, Siamese fine-tuning or a BiLSTM),
  and ``downstream.gpu_hours`` its GLUE / CLUE grid: each job the larger of its FLOPs time at
  ``--mfu`` of ``--gpu``'s dense bf16 peak and its steps × a per-step floor
  (:mod:`pipeline.budget.cost`, ``workloads.yaml``; the assumption line says so), with ``flops_hours``,
  the FLOPs time of the same work, beside it; the ``budget`` sums both over every configured job
  (``flops_total``), also those no published row reads (``not_in_rows``: :meth:`PlanCosts.unread_jobs`). A
  GLUE / CLUE sequence is as long as classify pads it (measured: ``classify_tokens.yaml``), or max_length
  where not: ``budget.classify_tokens`` says which, and why.

Beside the records, ``not_reproduced``: the tables of the papers no run can make (BURT Table XI's human
judgement), each with its reason (paper_settings.yaml ``not_reproduced``).
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
from pipeline.budget import acceptance_file, cost
from pipeline.budget.classify_tokens import TOKENS, read_tokens
from pipeline.budget.workloads_file import read_workloads
from pipeline.errors import InputError
from pipeline.experiments import MISAD_OBJECTIVES, PAIR_OBJECTIVES
from pipeline.models.spec import hub_repo
from pipeline.objective_registry import NGRAM_OBJECTIVES, SPAN_OBJECTIVES  # reads_ngrams, draws_spans
from pipeline.output_guard import refuse_inputs
from pipeline.plan.plan_choices import PlanChoices
from pipeline.plan.plan_costs import PlanCosts
from pipeline.plan.plan_departures import PlanDepartures
from pipeline.plan.plan_models import PlanModels, elsewhere, models_markdown
from pipeline.plan.plan_output import budget, markdown, non_finite, optimizer_name
from pipeline.plan.schedule import add_gpus_argument, gpu_counts, schedule_text, schedules
from pipeline.training_settings import PRETRAIN_DROPOUT, RECIPE_OPTIMISERS
from pipeline.workflow_config import resolve_config

HERE = Path(__file__).parent
# The files the plan reads: the papers' stated settings (its own), the budget's measured workloads, and the
# published rows of the tables stage, which the plan relates to runs (read as data, never imported).
FILES = {
    "paper_settings.yaml": HERE / "paper_settings.yaml",
    "workloads.yaml": cost.WORKLOADS,
    "classify_tokens.yaml": TOKENS,
    "published.yaml": HERE.parent / "report" / "published.yaml",
}
NOT_RECORDED = "not compared: the run records no such setting"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--configfile", required=True, type=Path, help="a workflow config (workflow/config/*.yaml)")
    parser.add_argument("--format", choices=("md", "json"), default="md")
    parser.add_argument("--gpu", choices=tuple(cost.GPUS), default="h100", help="GPU of the estimate")
    parser.add_argument("--mfu", type=MFU, default=cost.DEFAULT_MFU, help="model FLOPs utilisation assumed")
    add_gpus_argument(parser)
    parser.add_argument("--out", type=Path, help="write here instead of standard output")


@cache
def _yaml(name: str) -> dict:
    if name == "workloads.yaml":  # its measured floors checked, read as a small file (issue 47 §4, §5)
        return read_workloads(FILES[name])
    if name == "classify_tokens.yaml":  # measured by measure-tokens, checked (budget/classify_tokens.py)
        return read_tokens(FILES[name])
    return yaml.safe_load(FILES[name].read_text(encoding="utf-8"))


class Planner(PlanCosts, PlanChoices, PlanModels, PlanDepartures):
    """The records of one resolved config."""

    def __init__(self, config: dict, gpu: str, mfu: float):
        self.config, self.gpu, self.mfu = config, gpu, mfu
        self.results = f"results/{config['run']}"
        self.backbones = {hub_repo(spec): name for name, spec in config["models"]["backbones"].items()}
        self.lock = config["models"].get("lock")
        self.runs = experiments.runs(config["pretrain"])
        self.paper = _yaml("paper_settings.yaml")
        self.work = _yaml("workloads.yaml")
        self.tokens = _yaml("classify_tokens.yaml")
        self.costs: dict[str, cost.JobCost] = {}  # each planned run's own training, by label (for the schedule)

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
        settings["optimizer"] = optimizer_name("AdamW", config["pretrain"].get("weight_decay", 0.0))
        settings["dropout"] = PRETRAIN_DROPOUT  # every run's, the workflow passes no --dropout (pretrain.py)
        per_sentence = self.work["tokens_per_example"][f"wiki_sentence_{config['pretrain']['language']}"]
        if s["input"] == "packed":
            # packing strips each sentence's [CLS] / [SEP] and gives each block of max_length its own:
            # blocks of max_length - 2 content tokens (docs/method.md §3, BURT §5.2)
            content = examples * (per_sentence - 2) * s["epochs"]
            blocks = math.ceil(content / (s["max_length"] - 2))
            settings["tokens"] = blocks * s["max_length"]
        else:
            # an NSP / SOP example is two sentences laid out as one pair
            tokens = examples * per_sentence * s["epochs"] * (2 if run.objective in PAIR_OBJECTIVES else 1)
            settings["tokens"] = round(tokens)
        if s["max_steps"]:
            settings["updates"] = s["max_steps"]
        elif s["input"] == "packed":
            settings["updates"] = math.ceil(blocks / settings["batch_size"])
        else:
            # NSP / SOP too: their pair sample (sample --with-next) pairs every sampled sentence with its
            # next one, so they get as many examples as the others (ULR-BERT §7.1, "with the same additional
            # updates") less the sampled sentences that end their document (about 1 in its sentence count)
            settings["updates"] = math.ceil(examples * s["epochs"] / settings["batch_size"])
        if run.objective in NGRAM_OBJECTIVES:
            settings["ngram_preset"] = self.preset_text(run.objective)
        if run.objective == "burt":
            settings["masking"] = config["pretrain"]["ngram_pool"]
        if run.objective in MISAD_OBJECTIVES:
            settings["misad_loss"] = self.pretrain_choice(run, "misad_loss")
            settings["misad_choice"] = self.misad_choice(run)
        if run.backbone in config["models"].get("generators", {}):  # an ELECTRA discriminator (models.generators)
            settings["mlm_term"] = "the generator's MLM + 50 × replaced-token detection (ELECTRA §2)" + (
                "; w scored by the generator's MLM head"
                if run.objective == "misad" and self.pretrain_choice(run, "misad_choice") == "mlm-score"
                else ""
            )
        if run.objective in SPAN_OBJECTIVES:
            settings["span_max_words"] = self.pretrain_choice(run, "span_max_words")
            settings["span_unit"] = f"whole words, 1-{settings['span_max_words']} (SpanBERT's unit)"
        return settings

    def pretrain_choice(self, run: experiments.PretrainRun, key: str):
        """A setting of the run's experiment (or the pretrain section's); "not set" where neither has it."""
        value = run.settings.get(key, self.config["pretrain"].get(key))
        return "not set" if value is None else value

    def missing(self, repo: str) -> str:
        """Why a row's model is not run: the config has no backbone for it, and what paper_settings.yaml
        says about that checkpoint (a commit nobody could pin, for example)."""
        why = self.paper.get("unconfigured", {}).get(repo)
        others = elsewhere(repo, self.config["run"])
        if others and not why:
            why = f"another paper config's row: {', '.join(others)} plans it"
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
    def deviations(self, ours: dict, paper: dict, prefix: str = "", experiment: str = "") -> list[dict]:
        """Every key of ``paper`` where ``ours`` differs, and every one ``ours`` does not record (never
        skipped: ``ours`` null, ``why`` "not compared: ...")."""
        reasons = self.paper.get("reasons", {})

        def why(name: str):
            return reasons.get(f"{experiment}.{name}", reasons.get(name))

        found = []
        for key, value in paper.items():
            if key not in ours:
                name = prefix + key
                found.append({"key": name, "ours": None, "paper": value, "why": why(name) or NOT_RECORDED})
                continue
            mine = ours[key]
            same = (
                sorted(mine) == sorted(value)
                if isinstance(mine, list) and isinstance(value, list)
                else mine == value or (isinstance(value, list) and mine in value)
            )
            if not same:
                name = prefix + key
                found.append({"key": name, "ours": mine, "paper": value, "why": why(name)})
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
                made = self.record(spec, spec["made_by"][row["name"]], row, source)
                if made["status"] == "not planned" and spec.get("model_note"):
                    made["reason"] = f"{made['reason']}; {spec['model_note']}"
                if made["status"] == "planned":
                    made["deviations"] = made["deviations"] + self.source_deviations(spec)
                out.append({**record, **made})
        return out

    def source_deviations(self, spec: dict) -> list[dict]:
        """What differs for every planned row of a table: where it is scored (a paper's test server against
        our dev), and its data (paper_settings.yaml rows: ``scored_on``, ``data``)."""
        found = []
        if spec.get("scored_on"):
            found.append(
                {
                    "key": "evaluation",
                    "ours": "dev, setting selected on the same dev",
                    "paper": spec["scored_on"],
                    "why": self.paper["reasons"]["evaluation"],
                }
            )
        if spec.get("data"):
            found.append({"key": "data", **spec["data"]})
        found += [dict(entry) for entry in spec.get("deviations", [])]  # the table's columns (twin Tables 2-4)
        if spec.get("semeval5a"):  # its SemEval column, as evaluate.semeval5a runs it (twin §4.2)
            found.append({"key": "semeval5a.protocol", "ours": self.semeval_protocol(), **self.paper["semeval5a"]})
        return found

    def semeval_protocol(self) -> str:
        s = self.config["evaluate"]["semeval5a"]
        if not s["finetune"]:
            return "every encoder frozen: a logistic regression on [u; v; |u−v|; u∗v]"
        length = f"{s['max_steps']} steps" if s.get("max_steps") else f"{s['epochs']:g} epoch(s)"
        return (
            f"transformer rows fine-tuned: {length}, batch {s['batch_size']}, lr {s['lr']:g}, twin §3.3's Adam, "
            "softmax head on [u; v; |u−v|]; fixed encoders frozen (logistic regression)"
        )

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
            record = {
                "status": "planned",
                "label": name,
                "settings": {"backbone": made_by["checkpoint"]},
                "deviations": [],
                "gpu_hours": 0.0,
                "flops_hours": 0.0,
                **self.downstream(source, name),
            }
            if record.get("downstream", {}).get("benchmark"):  # fine-tuned at classify.dropout, as every row
                record["choices"] = self.fine_tuning_dropout(record["settings"])
            return record
        if "pretrain" in made_by:
            experiment = made_by.get("experiment", source["experiment"])
            run, reason = self.find_pretrain(made_by["pretrain"], made_by["backbone"], experiment)
            if run is None:
                return {"status": "not planned", "reason": reason}
            settings = self.pretrain_settings(run)
            target = f"{self.results}/models/{run.label}"
            job = self.pretrain_job(run, settings)
            record = self.planned(run.label, target, settings, experiment, job, run.objective)
            record["deviations"] += self.ngram_deviations(run.objective)
            passes = 1 + (self.work["misad"]["extra_train_passes"] if run.objective in MISAD_OBJECTIVES else 0)
            record["memory"] = self.memory(settings["backbone"], settings["batch_size"], settings["max_length"], passes)
            down = self.downstream(source, run.label)
            record["targets"] += down.pop("targets", [])
            if "downstream" in down and down["downstream"].get("status") != "not planned":
                glue_pooler = self.glue_pooler(run)
                record["settings"]["glue_pooler"] = glue_pooler
                record["choices"] = self.choices(record["settings"])
                record["deviations"] += self.export_deviations(run.objective, glue_pooler)
            return {**record, **down}
        if "finetune" in made_by:
            return self.finetune_record(made_by, made_by.get("experiment", source["experiment"]))
        if "bilstm" in made_by:
            return self.bilstm_record(made_by["bilstm"], made_by["size"], source["experiment"])
        raise ValueError(f"paper_settings.yaml: unknown row spec {made_by!r}")

    def planned(
        self, label: str, target: str, settings: dict, experiment: str, job: cost.JobCost | None, objective=None
    ) -> dict:
        """The record of a run the config makes: its settings beside its paper's, the deviations, our
        choices and the released code's other values (by ``objective`` for a pre-training run)."""
        paper = self.paper["experiments"][experiment]
        if job is not None:
            self.costs[label] = job
        return {
            "status": "planned",
            "label": label,
            "targets": [target],
            "settings": settings,
            "paper_settings": {**paper["settings"], "section": f"{paper['paper']} {paper['section']}"},
            "deviations": self.deviations(settings, paper["settings"], experiment=experiment),
            "choices": self.choices(settings),
            "released": self.released(experiment, settings, objective),
            "gpu_hours": None if job is None else job.hours,
            "flops_hours": None if job is None else job.flops_hours,
        }

    def bilstm_record(self, pooling: str, size: int, experiment: str) -> dict:
        """A BiLSTM encoder of paper 004 (the bilstm stage: one model per pooling x units per direction)."""
        label = f"bilstm-{pooling}-{2 * size}"  # workflow/rules/functions/bilstm.smk names them so
        if (pooling, size) not in self.bilstm_models():
            return {"status": "not planned", "reason": f"bilstm has no {pooling} pooling at {size} units"}
        settings = self.bilstm_settings(size)
        return self.planned(label, f"{self.results}/bilstm/{label}", settings, experiment, self.bilstm_cost(settings))

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
        experiment = source.get("downstream_experiment", benchmark)  # the paper whose table header it is
        paper = self.paper["experiments"][experiment]
        job = self.classify_cost(benchmark, label)
        return {
            "targets": [f"{self.results}/metrics/{benchmark}/{label}.json"],
            "downstream": {
                "benchmark": benchmark,
                "gpu_hours": None if job is None else job.hours,
                "flops_hours": None if job is None else job.flops_hours,
                "settings": ours,
                "paper_settings": {**paper["settings"], "section": f"{paper['paper']} {paper['section']}"},
                "deviations": self.deviations(ours, paper["settings"], f"{benchmark}.", experiment),
            },
        }

    def repo_of(self, label: str) -> str:
        """The hub repository a model label starts from (a backbone, or a pre-training run's backbone)."""
        name = self.runs[label].backbone if label in self.runs else label
        return hub_repo(self.config["models"]["backbones"].get(name, name))

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
        epochs = section["epochs"][recipe]
        updates = self.finetune_updates(recipe, variant.get("objectives") or section["objectives"])
        optimiser = RECIPE_OPTIMISERS[recipe]  # the recipe's own (pipeline/training_settings.py)
        settings = {
            "recipe": recipe,
            "batch_size": section["batch_size"],
            "lr": section["lr"],
            "warmup": section["warmup"],
            "epochs": epochs if not section["max_steps"] else None,
            "updates": updates,
            "optimizer": optimizer_name(optimiser.name, optimiser.weight_decay),
            "adam_betas": list(optimiser.betas),
            "adam_eps": optimiser.eps,
            **defaults,
            **variant,
        }
        job = self.finetune_cost(start.get("checkpoint") or start["backbone"], recipe, updates)
        record = self.planned(label, f"{self.results}/finetune/{label}", settings, experiment, job)
        # a Siamese step keeps both sentences' passes; the twin step a PPDB pass beside them
        passes = 3 if recipe == "twin" else 2
        record["memory"] = self.memory(
            start.get("checkpoint") or start["backbone"], section["batch_size"], section["max_length"], passes
        )
        return record


def read_files(configfile, config: dict) -> list[Path]:
    """Every file the plan reads (issue 55 §1: what a stage reads is an input too): the config, the plan's own
    files, the models' lock where the config names one, and the GPU acceptance's measured file."""
    lock = config["models"].get("lock")
    return [Path(configfile), *FILES.values(), acceptance_file.ACCEPTANCE, *([Path(lock)] if lock else [])]


def run(args: argparse.Namespace) -> None:
    counts = gpu_counts(args.gpus)  # before any work: a list of thousands is refused at once
    config = resolve_config(args.configfile)
    if args.out:  # never over the config it plans, nor any file the plan reads: its own, the lock, the measured
        refuse_inputs(args.out, files=read_files(args.configfile, config))
    planner = Planner(config, args.gpu, args.mfu)
    records = planner.records()
    assumption = cost.assumptions(args.gpu, args.mfu, round(planner.per_layer_ms(), 3), planner.floor_source())
    if acceptance_file.measured():  # the GPU acceptance run's numbers replace the stated ones (issue 48 §1)
        assumption += (
            "; pre-training at the MFU measured for its objective, scaled to its size and input by MLM's there where"
            " measured, fused stacks at the measured time per"
            f" member-step, memory scaled where measured more than 15% off ({acceptance_file.source()})"
        )
    assumption += "; " + acceptance_file.finetune_source(args.mfu)
    commits = planner.commits()
    total = budget(records, unread := planner.unread_jobs(records))
    total["fused_stacks"] = planner.fused_stacks()
    total["classify_tokens"] = planner.token_sources()
    document = {
        "config": str(args.configfile),
        "assumption": assumption,
        "rows": records,
        "not_reproduced": planner.unreproduced_tables(_yaml("published.yaml")["papers"]),
        "budget": total,
        "commits": commits,
    }
    if counts:  # the wall-clock on N GPUs (issue 48 §2: a user of one 8-GPU node wants it before the GPU-hours)
        document["schedule"] = schedules(planner, records, unread, counts)
    where = non_finite(document)
    if where:  # JSON has no infinity or NaN, and a table of them says nothing (issue 39 §6)
        raise InputError(args.configfile, f"the estimate is not a finite number at {where} (--mfu {args.mfu:g})")
    if args.format == "json":
        text = json.dumps(document, indent=2, allow_nan=False) + "\n"
    else:
        text = markdown(records + document["not_reproduced"], assumption, total) + models_markdown(commits, records)
        if counts:  # a user of one node reads the wall-clock first (issue 48 §2)
            text = schedule_text(document["schedule"]) + "\n\n" + text
    if args.out:
        from pipeline.atomic import AtomicFiles

        with AtomicFiles() as files:
            files.temp(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
