"""The plan's choices and the released code beside each row (pipeline/plan/plan.py): our interpretations
where a paper is silent or its text and the authors' code differ, and the values the authors' launch
scripts ran (paper_settings.yaml ``choices``, ``released``; docs/stages/report.md "The plan")."""

from __future__ import annotations

from pipeline import experiments
from pipeline.backbone_family import family_kind
from pipeline.experiments import MISAD_OBJECTIVES, PAIR_OBJECTIVES
from pipeline.objective_registry import MISAD_SOURCES

# The pooler values the architecture or the objective decides (paper_settings.yaml choices.glue_pooler.values):
# ELECTRA has none (ElectraForSequenceClassification's head starts fresh); NSP / SOP train a pair head of
# BERT's pooler shape that export discards (pipeline/pretrain/pretrain.py saves the encoder).
ELECTRA_POOLER = "none: ELECTRA has no pooler (its GLUE head starts fresh)"
PAIR_POOLER = "the starting checkpoint's pre-trained pooler (the trained pair head is not exported)"


class PlanChoices:
    """The choice and released-code methods of :class:`pipeline.plan.plan.Planner` (its ``config``,
    ``paper`` and ``pretrain_choice``)."""

    def misad_choice(self, run: experiments.PretrainRun) -> str:
        """How the run picks MiSAD's w among its candidates, as pretrain runs it: the config's choice for the
        PMI n-grams (ULR-BERT §3.3: the MLM head's score), uniform for the §7.2 variants, which the paper gives
        no score (pipeline/pretrain/misad.py choice_for)."""
        if MISAD_SOURCES.get(run.objective, "ngram") != "ngram":
            return "random (the §7.2 variants: no score stated)"
        choice = self.pretrain_choice(run, "misad_choice")
        return "mlm-score (ULR-BERT §3.3)" if choice == "mlm-score" else choice

    def glue_pooler(self, run: experiments.PretrainRun) -> str:
        """The pooler a pre-trained model's GLUE / CLUE fine-tuning starts from (its exported model:
        pipeline/pretrain/pooler.py, pipeline/models/directory.py save_pooler)."""
        pooling = run.settings.get("misad_pooling", self.config["pretrain"].get("misad_pooling"))
        if run.backbone in self.config["models"].get("generators", {}):  # an ELECTRA discriminator
            return ELECTRA_POOLER
        if run.objective in MISAD_OBJECTIVES and pooling == "pooler":
            return "MiSAD's trained pooler (ULR-BERT §3.2)"
        if run.objective in PAIR_OBJECTIVES:  # its head is pooler-shaped, but export keeps the encoder only
            return PAIR_POOLER
        return "the starting checkpoint's pre-trained pooler (the objective trains none)"

    def choices(self, settings: dict) -> list[dict]:
        """Our interpretations among the settings, each with its reason and alternative (paper_settings.yaml
        ``choices``)."""
        known = self.paper.get("choices", {})

        def alternative(entry: dict):
            # one alternative, or one per objective (the released script of each differs), or one per
            # backbone family and objective where the family's script differs (ALBERT's run_mse_albert.py)
            family = family_kind(settings.get("backbone") or "")
            by_family = entry.get("alternative_by_family", {}).get(family, {})
            if settings.get("objective") in by_family:
                return by_family[settings["objective"]]
            value = entry.get("alternative")
            if isinstance(value, dict):
                return value.get(settings.get("objective"), value.get("default"))
            return value

        def entry(key: str) -> dict:
            # a value of ours with its own reason (``values``: ULR-ELECTRA's equation) says that one
            return {**known[key], **known[key].get("values", {}).get(str(settings[key]), {})}

        return [
            {"key": key, "ours": settings[key], "why": entry(key)["why"], "alternative": alternative(entry(key))}
            for key in known
            if key in settings
        ] + (self.fine_tuning_dropout(settings) if "glue_pooler" in settings else [])

    def fine_tuning_dropout(self, settings: dict) -> list[dict]:
        """The dropout every GLUE / CLUE fine-tuning runs at (``classify.dropout``, set on every dropout of the
        model's config: pipeline/models/loading.py set_dropout), for a row fine-tuned on a grid: a pre-trained
        model's (with its ``glue_pooler``) or a released checkpoint's, whose config's own dropout (ALBERT v2's
        0) is overridden as well. The row's settings show it too (``glue_dropout``)."""
        settings["glue_dropout"] = self.config["classify"].get("dropout", 0.1)
        why = (
            "ULR-BERT §5.1.2: 'We use the same sets of hyperparameters for all the evaluated models', and the "
            "papers state no fine-tuning dropout: every model a table compares fine-tunes at classify.dropout, "
            "BERT's 0.1 (its run_glue keeps the config's 0.1), whatever its checkpoint's config ships (released "
            "ALBERT v2: 0; an ALBERT pre-trained here: 0.1)"
        )
        alternative = (
            "each checkpoint's own config (ULR-ALBERT, pre-trained here at 0.1, against released ALBERT at 0; "
            "the released run_mse_albert.py pre-trained ULR-ALBERT at ALBERT's 0 too)"
        )
        return [
            {"key": "glue_dropout", "ours": settings["glue_dropout"], "why": why, "alternative": alternative},
            self.length_grouping_choice(settings),
        ]

    def length_grouping_choice(self, settings: dict) -> dict:
        """Whether GLUE / CLUE batches are grouped by length (``classify.group_by_length``, pipeline/classify/
        batching.py), with the padding it saves on each task's data (classify_tokens.yaml, measured by
        python -m pipeline measure-tokens) and its effect on dev scores on the sample (bench/classify_group_by_length.py,
        BENCHMARKS.md)."""
        grouped = bool(self.config["classify"].get("group_by_length", False))
        settings["glue_group_by_length"] = grouped
        why = (
            "the papers' run_glue drew its batches in random order and padded every example to 128; classify draws "
            "them in random order too, each padded to its longest (the same result, less work). Grouping by "
            f"length processes fewer tokens (grouped over random at batch 32, one run: {self.grouping_saving(32)}; "
            "the plan costs the grouped batches where it is on) but changes which examples share a batch, and the "
            "dev scores with it: all-MiniLM-L6-v2 on the sample, 1 epoch, 3 seeds, MRPC F1 80.2 against 83.5 in "
            "random order, CoLA MCC 0.0 against 6.9, RTE accuracy 50.3 against 54.8 "
            '(BENCHMARKS.md "classify: group_by_length")'
        )
        other = "random order (the papers')" if grouped else "classify.group_by_length: true (Hugging Face's)"
        return {"key": "glue_group_by_length", "ours": grouped, "why": why, "alternative": other}

    def grouping_saving(self, batch: int) -> str:
        """Per task the config fine-tunes and classify_tokens.yaml measured: one run's padded tokens with batches
        grouped by length over those in random order, at ``batch`` and the task's first max_length."""
        shown = []
        for benchmark, task in self.tuned_tasks():
            figure = self.token_figure(benchmark, task, self.task_lengths(benchmark, task)[0])
            random_order = (figure.get("padded") or {}).get(batch)
            grouped = (figure.get("grouped") or {}).get(batch)
            if random_order and grouped:
                shown.append(f"{task} {grouped[0] / random_order[0]:.2f}")
        return "; ".join(shown) or "not measured"

    def released(self, experiment: str, settings: dict, objective: str | None = None) -> list[dict]:
        """Where the authors' released code ran another value than the paper states: both, with the source.
        An experiment's ``released`` holds one entry per key, or ``by_objective``: the launch script of each
        objective with its values (``settings``), or ``no_script`` (why none is released), so that each row
        shows the script its objective was launched with, not one value for all."""
        paper = self.paper["experiments"][experiment]
        entries = dict(paper.get("released", {}))
        by_objective = entries.pop("by_objective", None)
        found = [
            {
                "key": key,
                "ours": settings.get(key),
                "paper": paper["settings"].get(key),
                "released": entry["value"],
                "source": entry["source"],
                "switch": entry.get("switch"),
            }
            for key, entry in entries.items()
        ]
        if by_objective is None or objective is None:
            return found
        scripts = by_objective.get(objective) or by_objective.get("default") or []
        backbone = settings.get("backbone")
        # the script launched from the row's backbone, else one launched from its family (run_mse_albert.py
        # loads ALBERT classes whatever the size), else the objective's first (saying which it launches)
        family = family_kind(backbone or "")
        script = next(
            (x for x in scripts if x.get("backbone") == backbone),
            next(
                (x for x in scripts if family and family_kind(x.get("backbone", "")) == family),
                scripts[0] if scripts else None,
            ),
        )
        if script is None:
            return found
        if "no_script" in script:
            return found + [
                {"key": "launch_script", "ours": None, "paper": None, "released": None, "source": script["no_script"]}
            ]
        source = " ".join(script["source"].split())
        if script.get("backbone") and backbone and backbone != script["backbone"]:
            source += f"; it launches {script['backbone']}: no released script launches {backbone}"
        return found + [
            {
                "key": key,
                "ours": settings.get(key),
                "paper": paper["settings"].get(key),
                "released": value,
                "source": source,
                "switch": (script.get("switch") or {}).get(key),
            }
            for key, value in script["settings"].items()
        ]
