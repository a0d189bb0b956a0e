"""Pre-training experiments: each paper's rows trained with that paper's settings (docs/method.md §3).

The two papers pre-train differently. ULR-BERT §4: "each input is an n-gram or a single sequence
with a maximum length of 128 ... Batch size is 64"; BURT §5.2: "the input is a continuous sequence
with a maximum length of 512 ... Batch size is set to 16". Their MLM baselines are therefore two
different runs. A config's ``pretrain.experiments`` names one group of objectives per paper with
that paper's settings; the keys an experiment leaves out come from the ``pretrain`` section.

A run's label, which names its model folder and its rows in every table, is
``<backbone>+<objective><suffix>`` with the experiment's ``suffix`` ("" by default): one experiment
may keep the plain labels and the others say what differs (``bert-base-uncased+mlm.packed``).
Without ``experiments`` the section itself is the one experiment (``pretrain.objectives``).
An experiment trains every backbone of ``pretrain.backbones`` unless it lists its own
``backbones``: ULR-BERT's large and ALBERT rows (Tables 2, 3) need only MLM and MiSAD, not every
baseline of the base model.

Fine-tuning likewise: every start of ``finetune.start`` runs the recipes of ``finetune.recipes``
unless ``finetune.start_recipes`` gives it its own (:func:`finetune_recipes`), so that a large or
ALBERT start trains only the recipes its paper's rows use.
"""

from __future__ import annotations

from dataclasses import dataclass

# From the objectives' registry (pipeline/objective_registry.py): objectives whose input is a plain token
# sequence, which packing may fill (BURT §5.2; MiSAD needs single sentences, ULR-BERT §4, and NSP / SOP
# sentence pairs); MiSAD and its two Table 7 variants (ULR-BERT §3, §7.2); the sentence-pair baselines (§7.1).
from pipeline.objective_registry import MISAD_OBJECTIVES, PACKABLE, PAIR_OBJECTIVES

__all__ = [
    "DEFAULT_PRESET",
    "MISAD_OBJECTIVES",
    "PACKABLE",
    "PAIR_OBJECTIVES",
    "SETTING_KEYS",
    "PretrainRun",
    "finetune_recipes",
    "ngram_preset",
    "runs",
]

# The settings an experiment may set; the others are the pretrain section's for every run. misad_loss
# (the paper's equation or the released run_mse.py) and span_max_words (ULR-BERT §7.2's 6, BURT's Span rows
# SpanBERT's 10) differ between the papers' rows (docs/method.md §3).
SETTING_KEYS = (
    "input",
    "max_length",
    "batch_size",
    "grad_accum",
    "lr",
    "warmup",
    "epochs",
    "max_steps",
    "misad_loss",
    "span_max_words",
)
# The n-gram preset an objective reads unless ngrams.presets names another (docs/method.md §2).
DEFAULT_PRESET = "ulr"


def finetune_recipes(finetune: dict, start: str) -> list[str]:
    """The recipes fine-tuned from ``start``: its own list in ``finetune.start_recipes``, else
    ``finetune.recipes``."""
    return list((finetune.get("start_recipes") or {}).get(start, finetune["recipes"]))


def ngram_preset(ngrams: dict, objective: str) -> str:
    """The n-gram preset whose sample ``objective`` reads: ``ngrams.presets`` of the config, else the
    default. BURT masking reads BURT's vocabulary and MiSAD ULR-BERT's; objectives without n-gram spans
    (mlm, wwm, spanbert, entity, nsp, sop) all share the default."""
    return ngrams.get("presets", {}).get(objective, DEFAULT_PRESET)


@dataclass(frozen=True)
class PretrainRun:
    label: str
    backbone: str
    objective: str
    experiment: str  # "" where the config defines no experiments
    settings: dict  # SETTING_KEYS -> value


def runs(pretrain: dict) -> dict[str, PretrainRun]:
    """Label -> run for every backbone x objective of every experiment, in config order.

    Raises ``ValueError("config: ...")`` for a config that cannot be run as written."""
    experiments = pretrain.get("experiments") or {}
    if experiments and pretrain.get("objectives"):
        raise ValueError(
            "config: pretrain.objectives and pretrain.experiments both list objectives; with experiments, "
            "list each experiment's objectives under it"
        )
    if not experiments:
        experiments = {"": {"objectives": pretrain.get("objectives", [])}}
    found: dict[str, PretrainRun] = {}
    for name, experiment in experiments.items():
        where = f"pretrain.experiments.{name}" if name else "pretrain"
        settings = {key: experiment.get(key, pretrain.get(key)) for key in SETTING_KEYS}
        settings["input"] = settings["input"] or "sentences"
        if settings["input"] == "packed":
            unpackable = [objective for objective in experiment["objectives"] if objective not in PACKABLE]
            if unpackable:
                raise ValueError(
                    f"config: {where}: packed input is for {', '.join(PACKABLE)}; "
                    f"{', '.join(unpackable)} train on single sentences or pairs"
                )
        elif settings["max_length"] != pretrain.get("max_length"):
            raise ValueError(
                f"config: {where}.max_length: sentence input is cut at pretrain.max_length "
                f"({pretrain.get('max_length')}) when tokenized; set it there, or use input: packed"
            )
        misad = [objective for objective in experiment["objectives"] if objective in MISAD_OBJECTIVES]
        if misad and settings["misad_loss"] == "released" and pretrain.get("misad_pooling") != "pooler":
            raise ValueError(
                f"config: {where}.misad_loss: released (the authors' run_mse.py) pools with a fresh BertPooler: "
                "set pretrain.misad_pooling: pooler, or misad_loss: equation"
            )
        for backbone in experiment.get("backbones", pretrain.get("backbones", [])):
            for objective in experiment["objectives"]:
                label = f"{backbone}+{objective}{experiment.get('suffix', '')}"
                if label in found:
                    other = found[label].experiment or "pretrain"
                    raise ValueError(f"config: {where} and {other} both make {label}; give one of them a suffix")
                found[label] = PretrainRun(label, backbone, objective, name, settings)
    return found
