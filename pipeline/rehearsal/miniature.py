"""A paper config in miniature: the same rules, flags and experiment structure, smaller sizes.

What the rehearsal may change is sizes and sources only (docs/stages/rehearsal.md): shards, slices,
sample size, steps, batch sizes, examples, seeds, grid points, hidden sizes, and the URLs and
checksums the mirror and the local hub serve, and the lock file of the unpinned hub models (its own). Every backbone, objective, experiment (``.packed``),
recipe, start, pooling, baseline and table stays. Where a config lists tasks, the miniature keeps
one task of each task family (a GLUE / CLUE task's head, an evaluation's task group,
pipeline/rehearsal/coverage.py), the first the paper config lists, and the twin ablation keeps
every pooling and the first value of its other grids. One pre-training and one fine-tuning job
at least run with two processes (``gpus: 2``: torchrun under Snakemake, on CPU).
"""

from __future__ import annotations

import copy
from pathlib import Path

from pipeline.classify.tasks import TASKS
from pipeline.rehearsal.coverage import EVALUATE_GROUPS

STEPS = 4  # optimiser steps of every training job
BATCH = 4
SAMPLE = 3000  # sentences per language
# SentEval transfer tasks kept: one of each kind (single sentence, sentence pair, relatedness, STS)
TRANSFER_TASKS = ("MR", "MRPC", "SICK-R", "STS14")


def first_of_each(items: list, family) -> list:
    """The first item of each family, in the list's order."""
    seen, kept = set(), []
    for item in items:
        if family(item) not in seen:
            seen.add(family(item))
            kept.append(item)
    return kept


def _first(value):
    """A grid's first point (a list), or the value itself; per benchmark or task where it is a mapping."""
    if isinstance(value, dict):
        return {key: _first(v) for key, v in value.items()}
    if isinstance(value, list):
        return value[:1]
    return value


def miniature(paper: dict, run: str, data_root: str) -> dict:
    """The rehearsal config of a resolved paper config (pipeline.workflow_config.resolve_config)."""
    config = copy.deepcopy(paper)
    config["run"] = run
    config["data_root"] = data_root
    corpus = config["corpus"]
    corpus["shards"] = min(corpus["shards"], 2)
    for lang in corpus["languages"]:
        for part in corpus[lang]["dumps"].values():
            if isinstance(part, dict) and "slices" in part:
                part["slices"] = min(part["slices"], 2)
    if config["models"].get("lock"):
        # a source change: the rehearsal's own lock beside its data root (seeded with the paper lock's commits
        # by the rehearsal), never the paper config's, which only a real first download may extend
        config["models"]["lock"] = str(Path(data_root).parent / "models.lock")
    config["kenlm"]["memory"] = "100M"
    config["sample"]["size"] = SAMPLE

    pretrain = config["pretrain"]
    pretrain.update(max_steps=STEPS, batch_size=BATCH, heldout=32, eval_every=2, save_every=2, gpus=2)
    for experiment in pretrain["experiments"].values():
        for key in ("batch_size", "max_steps", "epochs"):
            experiment.pop(key, None)

    finetune = config["finetune"]
    finetune.update(max_steps=STEPS, batch_size=BATCH, eval_steps=2, save_every=2, gpus=2)
    ablation = finetune.get("ablation") or {}
    for key, values in ablation.items():
        if isinstance(values, list) and key not in ("start", "pooling"):
            ablation[key] = values[:1]

    classify = config["classify"]
    # a source change: every release the benchmarks need comes from the mirror, whose lists pin a
    # checksum for each (the paper configs leave CLUE's unpinned archives to the user)
    classify.update(seeds=1, max_steps=STEPS, max_train_examples=64, download=True)
    for key in ("batch_sizes", "lr", "epochs", "max_length"):
        classify[key] = _first(classify[key])
    for benchmark in ("glue", "clue"):
        section = classify.get(benchmark) or {}
        if section.get("tasks"):
            section["tasks"] = first_of_each(section["tasks"], lambda t: TASKS[t].head)

    evaluate = config["evaluate"]
    evaluate["batch_size"] = 16
    evaluate["semeval5a"].update(max_steps=STEPS, batch_size=BATCH)  # the SemEval fine-tuning (finetune_semeval)
    evaluate["tasks"] = {
        lang: first_of_each(tasks, lambda t: EVALUATE_GROUPS.get(t, t)) for lang, tasks in evaluate["tasks"].items()
    }
    config["transfer"].update(kfold=2, tasks=[t for t in config["transfer"]["tasks"] if t in TRANSFER_TASKS])

    word2vec = config["word2vec"]
    word2vec.update(dim=16, epochs=1, min_count=1)
    bilstm = config["bilstm"]
    if bilstm.get("poolings"):
        bilstm.update(sizes=[8 * (i + 1) for i in range(len(bilstm["sizes"]))], epochs=1, max_train_pairs=256)
        bilstm["extra"] = []  # a pooling the grid trains already: the same kind of job (coverage.py)
        bilstm["frequent_words"] = 2000
    return config
