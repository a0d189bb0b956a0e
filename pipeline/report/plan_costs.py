"""The GPU-hours of the plan's jobs (pipeline/report/plan.py): pre-training, BiLSTM and GLUE / CLUE grids,
each job the larger of its FLOPs time and its steps × a per-step floor (:mod:`pipeline.report.cost`,
``workloads.yaml``)."""

from __future__ import annotations

import math

from pipeline import experiments
from pipeline.experiments import MISAD_OBJECTIVES
from pipeline.report import cost


def architecture(repo: str) -> cost.Architecture | None:
    return cost.ARCHITECTURES.get(repo.rsplit("/", 1)[-1])


class PlanCosts:
    """The cost methods of :class:`pipeline.report.plan.Planner` (its ``config``, ``work``, ``gpu``, ``mfu``)."""

    def floor(self, arch: cost.Architecture) -> float:
        """Seconds one eager training step of ``arch`` takes at least (workloads.yaml step_floor)."""
        return arch.step_floor_seconds(self.work["step_floor"]["per_layer_ms"])

    def pretrain_hours(self, run: experiments.PretrainRun, settings: dict) -> float | None:
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
        return cost.job_hours(work.flops, settings["updates"], passes * self.floor(arch), self.gpu, self.mfu)

    def bilstm_hours(self, settings: dict) -> float:
        """At most ``epochs`` passes over the SNLI training pairs (the schedule stops earlier once the rate
        falls under 1e-5): both sentences through a BiLSTM of ``hidden`` units per direction over 300-d
        vectors, 2 x 4 gates x (300 + hidden) x hidden multiply-adds per word and direction, three times for
        training; at least steps x the BiLSTM floor."""
        data, section = self.work["bilstm"], self.config["bilstm"]
        pairs = min(data["train_pairs"], section["max_train_pairs"] or data["train_pairs"])
        words = pairs * 2 * data["words_per_sentence"] * settings["epochs"]
        hidden = settings["hidden"]
        flops = words * 3 * 2 * (2 * 4 * (300 + hidden) * hidden)  # training x directions x one direction's gates
        steps = pairs // settings["batch_size"] * settings["epochs"]
        floor = self.work["step_floor"]["bilstm_ms"] / 1000
        return cost.job_hours(flops, steps, floor, self.gpu, self.mfu)

    def classify_hours(self, benchmark: str, label: str) -> float | None:
        """Every job of the dev-selected grid (pipeline/classify/hyperparameters.py): seeds x batch sizes x
        lr x epochs x lengths per task, each example padded to the length (an upper bound: classify pads
        each batch to its longest example), each job at least its steps x the per-step floor."""
        arch = architecture(self.repo_of(label))
        if arch is None:
            return None
        section, sizes = self.config["classify"], self.work["train_examples"][benchmark]

        def listed(key, task):
            value = section[key].get(task, section[key][benchmark])
            return value if isinstance(value, list) else [value]

        hours, floor = 0.0, self.floor(arch)
        for task in section[benchmark]["tasks"]:
            runs = section["seeds"] * len(listed("lr", task))
            for batch in section["batch_sizes"][benchmark]:
                for epochs in listed("epochs", task):
                    steps = math.ceil(sizes[task] / batch) * epochs
                    for length in listed("max_length", task):
                        flops = sizes[task] * epochs * length * arch.training_flops_per_token(length)
                        hours += runs * cost.job_hours(flops, steps, floor, self.gpu, self.mfu)
        return hours
