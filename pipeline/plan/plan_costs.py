"""The GPU-hours of the plan's jobs (pipeline/plan/plan.py): pre-training, BiLSTM and GLUE / CLUE grids,
each job the larger of its FLOPs time and its steps × a per-step floor (:mod:`pipeline.budget.cost`,
``workloads.yaml``), with the FLOPs time of the same work beside it (:class:`cost.JobCost`).

What a fine-tuning example encodes is counted as classify encodes it (docs/method.md §4): a
multiple-choice example is one sequence per candidate (ChID, C3), and a reading-comprehension
example one feature per window of its passage (CMRC 2018, doc stride 128), each a training example
of its own (workloads.yaml ``sequences_per_example``). Each sequence is as long as classify pads it:
the padded tokens per sequence measured on the data root's files (``classify_tokens.yaml``,
python -m pipeline measure-tokens: each batch padded to its longest sequence, a fused stack's to its longest
batch), or, for a task, batch or length not measured there, the task's max_length (an upper bound)."""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path

from pipeline import experiments, fused_groups
from pipeline.backbone_family import family_kind, shares_layers, size_of
from pipeline.budget import acceptance_file, cost
from pipeline.budget.classify_tokens import TOKENS
from pipeline.budget.cost import architecture
from pipeline.budget.memory import largest_fused_members
from pipeline.experiments import MISAD_OBJECTIVES
from pipeline.fused_groups import stack_sizes
from pipeline.training_settings import BILSTM_CLASSIFIER_HIDDEN, BILSTM_LR_DECAY, BILSTM_OPTIMISER


def _listed(value) -> list:
    return value if isinstance(value, list) else [value]


# The layers of the shapes bench/gpu_step.py times (its ``SHAPES``), to read a per-layer floor from a step.
MEASURED_LAYERS = {"bert-base": 12, "bert-large": 24}


def measured_floors(work: dict) -> dict | None:
    """What bench/gpu_step.py measured on a GPU (workloads.yaml ``step_floor_measured``; issue 41 §3), as the
    plan uses it: ``per_layer_ms``, an eager solo step at the smallest batch timed over its layers (the
    mean of BERT-base's and BERT-large's: at batch 8 x 128 a step is launch-bound), and
    ``fused_ratio``, per member-step fused over solo at that batch (the mean over both shapes), with the
    ``card``. None where nothing was measured, or no eager solo step was (out of memory, skipped)."""
    found = work.get("step_floor_measured") or {}
    table = found.get("ms_per_member_step") or {}
    per_layer, ratios = [], {}
    for name, layers in MEASURED_LAYERS.items():
        eager = (table.get(name) or {}).get("eager") or {}
        timed = {int(b): cells for b, cells in eager.items() if isinstance((cells or {}).get(1), int | float)}
        if not timed:
            continue
        cells = timed[min(timed)]
        per_layer.append(cells[1] / layers)
        for k, value in cells.items():
            if int(k) > 1 and isinstance(value, int | float):
                ratios.setdefault(int(k), []).append(value / cells[1])
    if not per_layer:
        return None
    return {
        "card": found.get("card", "a GPU"),
        "per_layer_ms": sum(per_layer) / len(per_layer),
        "fused_ratio": {1: 1.0, **{k: sum(v) / len(v) for k, v in sorted(ratios.items())}},
    }


class PlanCosts:
    """The cost methods of :class:`pipeline.plan.plan.Planner` (its ``config``, ``work``, ``gpu``, ``mfu``)."""

    def per_layer_ms(self) -> float:
        """The per-step floor per Transformer layer: the GPU acceptance run's (pipeline/budget/acceptance.yaml,
        the pipeline's own classify step) where it has run, else bench/gpu_step.py's measurement where it has
        run on a GPU (:func:`measured_floors`), else the documented estimate (workloads.yaml step_floor)."""
        accepted = acceptance_file.measured()
        if accepted:
            return accepted["step_floor_per_layer_ms"]
        measured = measured_floors(self.work)
        return measured["per_layer_ms"] if measured else self.work["step_floor"]["per_layer_ms"]

    def floor_source(self) -> str:
        """Where :meth:`per_layer_ms` comes from, for the plan's assumption line."""
        if acceptance_file.measured():
            return acceptance_file.source()
        measured = measured_floors(self.work)
        if measured:
            return f"measured on {measured['card']} by bench/gpu_step.py (workloads.yaml step_floor_measured)"
        return (
            "workloads.yaml step_floor: an estimate from transformers' documented benchmarks, not yet measured "
            "on a GPU (`python -m pipeline gpu-acceptance` measures it on a GPU and the plan then reads it)"
        )

    def floor(self, arch: cost.Architecture) -> float:
        """Seconds one eager training step of ``arch`` takes at least (:meth:`per_layer_ms`)."""
        return arch.step_floor_seconds(self.per_layer_ms())

    def pretrain_cost(self, run: experiments.PretrainRun, settings: dict) -> cost.JobCost | None:
        arch = architecture(settings["backbone"])
        if arch is None:
            return None
        tokens, forward, passes = float(settings["tokens"]), 0.0, 1.0
        if run.objective in MISAD_OBJECTIVES:
            tokens *= 1 + self.work["misad"]["extra_train_passes"]
            passes += self.work["misad"]["extra_train_passes"]
            if self.config["pretrain"]["misad_choice"] == "mlm-score" and run.objective == "misad":
                forward = settings["tokens"] * self.work["misad"]["scored_candidates"]
                passes += 1 / 3  # one gradient-free forward of the candidates per step
        padding = self.work["padding_share"][settings["input"]]
        work = cost.Workload(arch, tokens, settings["max_length"], padding_share=padding, forward_tokens=forward)
        mfu = self.objective_mfu(run, settings)
        return cost.job_cost(work.flops, settings["updates"], passes * self.floor(arch), self.gpu, mfu)

    def pretrain_job(self, run: experiments.PretrainRun, settings: dict) -> cost.JobCost | None:
        """A pre-training run's job: its own training and, for an ELECTRA discriminator, its generator's beside it
        (:meth:`generator_cost`); None where its backbone's architecture is not known."""
        job = self.pretrain_cost(run, settings)
        generator = self.generator_cost(run, settings)
        return job + generator if job is not None and generator is not None else job

    def finetune_updates(self, recipe: str, objectives: str) -> int:
        """Optimizer steps of a Siamese fine-tuning: ``finetune.max_steps``, else its recipe's epochs over the NLI
        batches, twice as many for a twin run of several tasks (its PPDB steps beside them)."""
        section = self.config["finetune"]
        nli_batches = self.work["train_examples"]["nli"] // section["batch_size"]
        twin_tasks = objectives.count("+") + 1 if recipe == "twin" else 1
        epochs = section["epochs"][recipe]
        return section["max_steps"] or math.ceil(epochs * nli_batches * (2 if twin_tasks > 1 else 1))

    def finetune_cost(self, repo: str, recipe: str, updates: int) -> cost.JobCost | None:
        """A Siamese fine-tuning of ``repo``'s architecture: both NLI sentences of every pair of every step; None
        where the architecture is not known."""
        section = self.config["finetune"]
        arch = architecture(repo)
        if arch is None:
            return None
        tokens = updates * section["batch_size"] * 2 * self.work["tokens_per_example"]["nli_sentence"]
        # a pair step encodes both sentences in one pass (recipes.pair_softmax_loss); nli-mnrl's anchors apart
        floor = (2 if recipe == "nli-mnrl" else 1) * self.floor(arch)
        flops = cost.Workload(arch, tokens, section["max_length"]).flops  # at the solo sentence MFU where measured
        return cost.job_cost(flops, updates, floor, self.gpu, acceptance_file.finetune_mfu(False, 1, self.mfu))

    def finetune_runs(self) -> dict[str, tuple[str, str, str]]:
        """label -> (start, recipe, twin objectives) of every Siamese fine-tuning the workflow runs: every start x
        its recipes, then the ablation's variants (workflow/rules/functions/finetune.smk names them so)."""
        section = self.config.get("finetune") or {}
        if not section:
            return {}
        keys = ("objectives", "concatenation", "pooling", "negatives")
        found = {}
        for start in section["start"]:
            for recipe in experiments.finetune_recipes(section, start):
                found[f"{start}+{recipe}"] = (start, recipe, section["objectives"])
        ablation = section.get("ablation") or {}
        for start in ablation.get("start", []):
            found.setdefault(f"{start}+twin", (start, "twin", section["objectives"]))
            for key in keys:
                for value in ablation.get(key, []):
                    if value != section[key]:
                        label = f"{start}+twin." + (f"k{value}" if key == "negatives" else str(value))
                        found[label] = (start, "twin", value if key == "objectives" else section["objectives"])
        return found

    def objective_mfu(self, run: experiments.PretrainRun, settings: dict) -> float:
        """The MFU a pre-training job runs at: what the GPU acceptance run measured for its objective on its
        family (acceptance.yaml ``mfu``: ``electra+misad``, ``albert-xxlarge+misad``, ``misad.released``, ``mlm``
        ...), the objective's on BERT-base where its family was not measured, at its size and input
        (:func:`acceptance_file.pretrain_mfu`), else ``--mfu``."""
        repo = settings["backbone"].lower()
        family = "albert-xxlarge" if "albert-xxlarge" in repo else family_kind(repo) or ""
        keys = [f"{family}+{run.objective}", f"{run.objective}.{run.settings.get('misad_loss')}", run.objective]
        return acceptance_file.pretrain_mfu(keys, size_of(repo), settings["input"], self.mfu)

    def bilstm_models(self) -> list[tuple[str, int]]:
        """(pooling, units per direction) of every BiLSTM the config trains: poolings x sizes, then ``extra``
        (workflow/rules/functions/bilstm.smk BILSTM_MODELS)."""
        section = self.config.get("bilstm") or {}
        grid = [(pooling, size) for pooling in section.get("poolings", []) for size in section.get("sizes", [])]
        return grid + [
            (m["pooling"], m["size"]) for m in section.get("extra", []) if (m["pooling"], m["size"]) not in grid
        ]

    def bilstm_settings(self, size: int) -> dict:
        """A BiLSTM encoder's settings at ``size`` units per direction: the bilstm stage's fixed schedule
        (paper 004 §3.1, pipeline/training_settings.py); the config sets lr, batch and epochs."""
        section = self.config["bilstm"]
        return {
            "batch_size": section["batch_size"],
            "lr": section["lr"],
            "lr_decay": BILSTM_LR_DECAY,
            "hidden": size,
            "classifier_hidden": BILSTM_CLASSIFIER_HIDDEN,
            "vectors": Path(section["vectors"]).name.removesuffix(".zip").removesuffix(".txt"),
            "optimizer": BILSTM_OPTIMISER,
            "epochs": section["epochs"],
        }

    def bilstm_cost(self, settings: dict) -> cost.JobCost:
        """At most ``epochs`` passes over the SNLI training pairs (the schedule stops earlier once the rate
        falls under 1e-5): both sentences through a BiLSTM of ``hidden`` units per direction over 300-d
        vectors, 2 x 4 gates x (300 + hidden) x hidden multiply-adds per word and direction, three times for
        training; at least steps x the BiLSTM floor at that size (cost.bilstm_step_seconds)."""
        data, section = self.work["bilstm"], self.config["bilstm"]
        pairs = min(data["train_pairs"], section["max_train_pairs"] or data["train_pairs"])
        words = pairs * 2 * data["words_per_sentence"] * settings["epochs"]
        hidden = settings["hidden"]
        flops = words * 3 * 2 * (2 * 4 * (300 + hidden) * hidden)  # training x directions x one direction's gates
        steps = pairs // settings["batch_size"] * settings["epochs"]
        step = self.work["bilstm_step"]
        floor = cost.bilstm_step_seconds(
            hidden, settings["batch_size"], step["time_steps"], step["launch_us"] / 1e6, self.gpu
        )
        return cost.job_cost(flops, steps, floor, self.gpu, self.mfu)

    def fused_ratio(self, members: int) -> float:
        """The operators a fused step of ``members`` runs dispatches over a solo step's: ``members`` x the
        per-member ratio that bench/fused_ops.py measures (workloads.yaml ``fused_operator_ratio``:
        operators per member-step, fused over solo, a stack of one included), or, once bench/gpu_step.py has
        timed them on a GPU, the measured time per member-step over solo (:func:`measured_floors`). A
        ``members`` not measured is interpolated linearly in the fused step's operators between the measured
        counts around it; past the largest, scaled by ``members`` from it (no further saving assumed); nothing
        measured: ``members`` (no saving). A stack of one is a fused step (docs/stages/classify.md, "Fused
        seeds"): a GPU's timings time K = 1 solo, so there it costs the fewest members timed (same operators)."""
        measured, accepted, timed = measured_floors(self.work), acceptance_file.measured(), None
        if accepted and len(accepted["fused_ratio"]) > 1:  # the pipeline's own fused stage, timed on a GPU
            timed = {int(k): float(v) for k, v in accepted["fused_ratio"].items()}
        elif measured and len(measured["fused_ratio"]) > 1:  # timed on a GPU: bench/gpu_step.py
            timed = measured["fused_ratio"]
        table = timed or {int(k): float(v) for k, v in (self.work.get("fused_operator_ratio") or {}).items()}
        step = {k: k * v for k, v in table.items()}  # a fused step's operators over a solo step's
        if timed and members == 1:  # a stack of one: the fused step of the fewest members timed
            return step[min(k for k in step if k > 1)]
        if members in step:
            return step[members]
        below = max((k for k in step if k < members), default=None)
        above = min((k for k in step if k > members), default=None)
        if below is None:
            return float(members)
        if above is None:
            return step[below] * members / below
        share = (members - below) / (above - below)
        return step[below] + share * (step[above] - step[below])

    def fused_group(self, benchmark: str, label: str) -> list[str]:
        """The models whose grid runs train in the same jobs as ``label``'s: with ``classify.fuse`` above 1 and
        ``classify.fuse_checkpoints``, every model of the benchmark that starts from its backbone, as the
        workflow groups them (:func:`pipeline.fused_groups.checkpoint_groups`), else ``label`` alone."""
        section = self.config["classify"]
        if int(section.get("fuse") or 1) <= 1 or not section.get("fuse_checkpoints"):
            return [label]
        separate = (self.config.get("evaluate") or {}).get("models") or {}
        groups = fused_groups.checkpoint_groups(section[benchmark]["models"], self.backbone_names(), separate)
        return next((labels for labels in groups.values() if label in labels), [label])

    def stack_limit(self, label: str, batch: int, length: int, task: str = "") -> int:
        """The most runs one fused job stacks at ``batch`` examples of ``task`` x ``length``: the workflow's
        ``--fuse K`` (:func:`pipeline.fused_groups.fused_runs`: ``classify.fuse``, capped by the
        runs of ``label``'s architecture that fit one GPU, a multiple-choice example one sequence per
        candidate)."""
        name = self.runs[label].backbone if label in self.runs else label
        spec = self.config["models"]["backbones"].get(name, name)
        return fused_groups.fused_runs(spec, int(self.config["classify"].get("fuse") or 1), batch, length, task)

    def fused_stacks(self) -> list[dict]:
        """For every backbone the GLUE / CLUE grids fine-tune (issue 41 §2): the runs of one grid setting that
        step together (every model's seeds with ``classify.fuse_checkpoints``, else one model's) and, per
        batch x length (a multiple-choice task's own, its candidates in the batch), the most runs one GPU
        holds as one stacked model (:func:`memory.largest_fused_members`) and the stacks the plan costs
        (:meth:`stack_limit`, :func:`stack_sizes`)."""
        section = self.config.get("classify") or {}
        if int(section.get("fuse") or 1) <= 1:
            return []
        separate = (self.config.get("evaluate") or {}).get("models") or {}
        found = []
        for benchmark in ("glue", "clue"):
            by_backbone: dict[str, list[str]] = {}
            for label in (section.get(benchmark) or {}).get("models") or []:
                backbone = fused_groups.backbone_of(label, self.backbone_names(), separate)
                by_backbone.setdefault(backbone or label, []).append(label)
            for backbone, models in by_backbone.items():
                repo = self.repo_of(models[0])
                arch = architecture(repo)
                if arch is None:
                    continue
                shared = shares_layers(repo)
                runs = section["seeds"] * len(self.fused_group(benchmark, models[0]))
                fits, stacks = {}, {}
                for task in section[benchmark]["tasks"]:
                    candidates = fused_groups.sequences_per_example(task)
                    for length in _listed(section["max_length"].get(task, section["max_length"][benchmark])):
                        for batch in section["batch_sizes"][benchmark]:
                            shape = f"{batch}x{length}" + (
                                f" ({task}, {candidates} candidates)" if candidates > 1 else ""
                            )
                            fits[shape] = largest_fused_members(arch, batch * candidates, length, shared_layers=shared)
                            stacks[shape] = stack_sizes(runs, self.stack_limit(models[0], batch, length, task))
                found.append(
                    {
                        "benchmark": benchmark,
                        "backbone": repo.rsplit("/", 1)[-1],
                        "models": models,
                        "runs_per_setting": runs,
                        "fits_one_gpu": fits,
                        "stacks": stacks,
                    }
                )
        return found

    def tuned_tasks(self) -> list[tuple[str, str]]:
        """(benchmark, task) of every GLUE / CLUE task the config fine-tunes (a benchmark with models)."""
        section = self.config.get("classify") or {}
        return [
            (benchmark, task)
            for benchmark in ("glue", "clue")
            if (section.get(benchmark) or {}).get("models")
            for task in section[benchmark]["tasks"]
        ]

    def task_lengths(self, benchmark: str, task: str) -> list[int]:
        """The max_length values of ``task``'s grid (its own, else its benchmark's)."""
        lengths = self.config["classify"]["max_length"]
        return _listed(lengths.get(task, lengths[benchmark]))

    def token_record(self, benchmark: str, task: str) -> dict:
        """``task``'s measurement in classify_tokens.yaml ({} where the file has none)."""
        return ((self.tokens.get("measured") or {}).get(benchmark) or {}).get(task) or {}

    def token_figure(self, benchmark: str, task: str, length: int) -> dict:
        """``task``'s measured figures at ``length`` (sequences, real, padded, grouped; {} where not measured)."""
        return (self.token_record(benchmark, task).get("lengths") or {}).get(length) or {}

    def padded_sequence(self, benchmark: str, task: str, batch: int, length: int, orders: int) -> float | None:
        """Padded tokens per sequence of a run of ``task`` at ``batch`` x ``length`` whose batches are padded with
        those of ``orders`` data orders (a fused stack, :meth:`stack_orders`), measured on the data
        (``classify_tokens.yaml``: padded over sequences per example), in random order or, with
        ``classify.group_by_length``, grouped by length (its ``grouped`` figures; a file without them gives the
        random order's, more); None where it was not measured."""
        figure = self.token_figure(benchmark, task, length)
        per_orders = (figure.get("padded") or {}).get(batch)
        if self.config["classify"].get("group_by_length"):
            per_orders = (figure.get("grouped") or {}).get(batch) or per_orders
        if not per_orders:
            return None
        return per_orders[min(orders, len(per_orders)) - 1] / figure["sequences"]

    def sequence_flops(self, arch, benchmark: str, task: str, batch: int, length: int, orders: int) -> float:
        """Training FLOPs of one sequence of ``task`` at ``batch`` x ``length``: its padded tokens
        (:meth:`padded_sequence`, else ``length``, an upper bound) at the FLOPs per token of that length."""
        padded = self.padded_sequence(benchmark, task, batch, length, orders) or length
        return padded * arch.training_flops_per_token(padded)

    def stack_orders(self, members: int) -> int:
        """The data orders in a stack of ``members`` runs: a stack is a stretch of the model-major order of a
        setting's runs (pipeline/fused_groups.py), and runs of one seed draw one order whatever their model
        (classify's sampler is seeded by the seed), so min(members, seeds)."""
        return max(1, min(members, int(self.config["classify"]["seeds"])))

    def token_sources(self) -> list[dict]:
        """For every task the config fine-tunes: where the plan's tokens per sequence come from, ``measured``
        (the file, its split, whether it is a substitute for the benchmark's release, the tokenizer) or
        ``upper bound`` (the task's max_length) with why; a measured task some of whose grid points were not
        measured is an upper bound at those (``unmeasured``)."""
        missing = self.tokens.get("missing") or {}
        shapes = self.work.get("sequences_per_example") or {}
        found = []
        for benchmark, task in self.tuned_tasks():
            record = self.token_record(benchmark, task)
            source = {"benchmark": benchmark, "task": task}
            if not record:
                looked = (missing.get(benchmark) or {}).get(task)
                why = f"no file of it in the data root ({looked})" if looked else f"not measured in {TOKENS.name}"
                found.append({**source, "source": "upper bound", "why": why})
                continue
            grid = [
                (batch, length)
                for length in self.task_lengths(benchmark, task)
                for batch in self.config["classify"]["batch_sizes"][benchmark]
                if self.padded_sequence(benchmark, task, batch, length, 1) is None
            ]
            entry = {
                **source,
                "source": "measured",
                "file": record["file"],
                "split": record["split"],
                "substitute": record["substitute"],
                "tokenizer": record["tokenizer"],
            }
            release = (shapes.get(benchmark) or {}).get(task, {}).get("candidates")
            measured_rows = next(iter(record["lengths"].values()))["sequences"]
            if release and round(measured_rows) != release:
                entry["note"] = (
                    f"{measured_rows:g} candidates per example in this file, {release} in the release: "
                    "counted per sequence, times the release's"
                )
            if grid:
                entry["unmeasured"] = [f"{b}x{n}" for b, n in grid]
            found.append(entry)
        return found

    def classify_cost(self, benchmark: str, label: str) -> cost.JobCost | None:
        """Every job of the dev-selected grid (pipeline/classify/hyperparameters.py): seeds x batch sizes x
        lr x epochs x lengths per task, each sequence as long as classify pads it, measured on the data
        (:meth:`padded_sequence`; the attention term at that mean length), or the length where it was not
        measured (an upper bound: :meth:`token_sources`), each job at least its steps x the per-step floor. A
        multiple-choice example is ``candidates`` sequences in one step's batch; a reading-comprehension
        example ``windows`` training features. With ``classify.fuse`` K, a setting's runs (its seeds; with
        ``classify.fuse_checkpoints``, the seeds of every model of ``label``'s backbone) train in stacks of
        at most K (:meth:`stack_limit`) and balanced size (:func:`pipeline.fused_groups.stack_sizes`), each
        costed by :func:`cost.fused_job_cost`, a stack of one too (the fused path), a job whose K is 1 as solo
        runs; ``label`` is charged its share of its group's jobs (each learning rate is a setting of its own)."""
        arch = architecture(self.repo_of(label))
        if arch is None:
            return None
        section, sizes = self.config["classify"], self.work["train_examples"][benchmark]
        shapes = (self.work.get("sequences_per_example") or {}).get(benchmark) or {}
        fuse = int(section.get("fuse") or 1)
        group = self.fused_group(benchmark, label)

        def listed(key, task):
            return _listed(section[key].get(task, section[key][benchmark]))

        total, floor = cost.JobCost(), self.floor(arch)
        for task in section[benchmark]["tasks"]:
            shape = shapes.get(task) or {}
            sequences = shape.get("candidates", 1)  # sequences per training example
            mfu = partial(acceptance_file.finetune_mfu, sequences > 1, default=self.mfu)  # measured, else --mfu
            settings_per_point, runs = len(listed("lr", task)), section["seeds"] * len(group)
            for batch in section["batch_sizes"][benchmark]:
                for epochs in listed("epochs", task):
                    for length in listed("max_length", task):
                        features = sizes[task] * self.windows(benchmark, task, length)  # as classify encodes them
                        steps = math.ceil(features / batch) * epochs
                        point = (arch, benchmark, task, batch, length)
                        most = self.stack_limit(label, batch, length, task) if fuse > 1 else 1
                        if most <= 1:  # the job does not fuse (--fuse 1): its runs train solo
                            flops = features * sequences * epochs * self.sequence_flops(*point, 1)
                            job = cost.job_cost(flops, steps, floor, self.gpu, mfu(1))
                            total += settings_per_point * runs * job
                            continue
                        for members in stack_sizes(runs, most):
                            ratio = self.fused_ratio(members)
                            flops = (
                                features * sequences * epochs * self.sequence_flops(*point, self.stack_orders(members))
                            )
                            job = cost.fused_job_cost([flops] * members, steps, floor, ratio, self.gpu, mfu(members))
                            total += settings_per_point * job
        return total * (1 / len(group))  # the group's jobs, shared by its models

    def windows(self, benchmark: str, task: str, length: int) -> float:
        """Training features per example of a reading-comprehension task (its passage cut into windows of
        ``length`` at doc stride 128, pipeline/classify/encoding.py): counted by the tokenizer on the data
        (``classify_tokens.yaml``, its ``sequences``) where measured at ``length``, else workloads.yaml's
        ``windows``; 1 for a task of one sequence per example."""
        shape = ((self.work.get("sequences_per_example") or {}).get(benchmark) or {}).get(task) or {}
        if "windows" not in shape:
            return 1.0
        measured = self.token_figure(benchmark, task, length)
        return float(measured["sequences"]) if measured else float(shape["windows"])

    def unread_jobs(self, records: list[dict]) -> list[dict]:
        """Jobs the config runs that no published row reads, so that the budget counts every configured model:
        pre-training runs (every experiment's backbones x objectives: a user's own experiment too), Siamese
        fine-tunings (finetune.start x its recipes, and the ablation's variants), BiLSTM
        encoders (bilstm.poolings x sizes, and extra) and GLUE / CLUE grids (classify.BENCHMARK.models). A job
        whose architecture is not known (a tiny or packaged model) has no cost, as in the rows."""
        planned = {r["label"] for r in records if r["status"] == "planned"}
        graded = {
            (r["downstream"]["benchmark"], r["label"])
            for r in records
            if r["status"] == "planned" and "benchmark" in r.get("downstream", {})
        }
        jobs = []

        def add(rule: str, label: str, job: cost.JobCost | None) -> None:
            if job is not None:
                jobs.append({"rule": rule, "label": label, "gpu_hours": job.hours, "flops_hours": job.flops_hours})

        for label, run in self.runs.items():
            if label not in planned:
                job = self.pretrain_job(run, self.pretrain_settings(run))
                if job is not None:  # the schedule reads its floor time (pipeline/plan/schedule.py plan_jobs)
                    self.costs[label] = job
                add("pretrain", label, job)
        for label, (start, recipe, objectives) in self.finetune_runs().items():
            if label not in planned:
                job = self.finetune_cost(self.repo_of(start), recipe, self.finetune_updates(recipe, objectives))
                if job is not None:
                    self.costs[label] = job
                add("finetune", label, job)
        for pooling, size in self.bilstm_models():
            label = f"bilstm-{pooling}-{2 * size}"  # workflow/rules/functions/bilstm.smk names them so
            if label not in planned:
                add("bilstm", label, self.bilstm_cost(self.bilstm_settings(size)))
        classify = self.config.get("classify") or {}
        for benchmark in ("glue", "clue"):
            for label in (classify.get(benchmark) or {}).get("models", []):
                if (benchmark, label) in graded or label not in self.runs and label not in self.backbone_names():
                    continue
                add(f"classify {benchmark}", label, self.classify_cost(benchmark, label))
        return jobs

    def backbone_names(self) -> set:
        return set(self.config["models"]["backbones"])
