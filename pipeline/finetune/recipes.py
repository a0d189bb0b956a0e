"""The fine-tuning recipes: training data sets and their losses (docs/method.md §4).

- ``twin`` (BURT twin §3.2): NLI 3-way, PPDB paraphrase identification (2-way, k sampled
  negatives) and PPDB pairwise text classification (3-way), each with its own linear + softmax
  head over the pair features (``SoftmaxLoss``), under the paper's batch schedule
  (:mod:`pipeline.finetune.schedule`). ``objectives`` picks Table 4's subsets: ``nli``,
  ``nli+pi``, ``nli+ptc``, ``nli+pi+ptc``.
- ``sbert-nli``: NLI alone with the softmax head (SBERT, Reimers & Gurevych 2019; the SBURT rows).
- ``nli-mnrl``: (premise, entailed hypothesis, contradicted hypothesis) triplets under
  ``MultipleNegativesRankingLoss`` (in-batch negatives plus the contradiction as a hard
  negative), batches without duplicate texts. Beyond the papers.

Pair features (Table 4, "Concatenation Methods"): ``uv`` = [u; v], ``diff`` = [|u−v|],
``prod`` = [u∗v], and their joins with ``-``; the default ``uv-diff`` is the paper's [u; v; |u−v|].
``SoftmaxLoss`` builds the features in the order u, v, |u−v|, u∗v, which is the paper's.

Each recipe trains under its own optimiser (:data:`OPTIMISERS`, from :mod:`pipeline.training_settings`): the twin recipe under BURT
twin §3.3's Adam (β2 0.98, ε 1e-9, no weight decay); ``sbert-nli`` under SBERT's, which
Reimers & Gurevych 2019 §3.1 state as "Adam optimizer with learning rate 2e-5, and a linear
learning rate warm-up over 10% of the training data" and whose released code
(sentence-transformers' ``SentenceTransformer.fit``, the version of the paper) runs as AdamW with
β (0.9, 0.999), ε 1e-6 and weight decay 0.01 (not on biases and LayerNorm weights), gradient
clipping at 1. ``nli-mnrl``, beyond the papers, keeps the twin recipe's. :func:`trainer_arguments` puts an
optimiser into the trainer arguments that both fine-tuning stages (``finetune``, ``finetune-semeval``) train under.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from pipeline.errors import InputError
from pipeline.finetune.ppdb import PPDBPair
from pipeline.finetune.ppdb_tasks import PI_LABELS, PTC_CLASSES, pairwise_text_classification, paraphrase_identification
from pipeline.tasks.nli import LABELS, NLIPairs
from pipeline.training_settings import RECIPE_OPTIMISERS, Optimiser

RECIPES = ("twin", "sbert-nli", "nli-mnrl")
OBJECTIVES = ("nli", "nli+pi", "nli+ptc", "nli+pi+ptc")
# name -> (u;v, |u-v|, u*v): SoftmaxLoss's concatenation_sent_rep / _difference / _multiplication
CONCATENATIONS = {
    "uv": (True, False, False),
    "diff": (False, True, False),
    "prod": (False, False, True),
    "uv-diff": (True, True, False),
    "uv-prod": (True, False, True),
    "diff-prod": (False, True, True),
    "uv-diff-prod": (True, True, True),
}
NUM_LABELS = {"nli": len(LABELS), "pi": len(PI_LABELS), "ptc": len(PTC_CLASSES)}


# each recipe's optimiser (the module docstring); the plan reads the same table
OPTIMISERS = RECIPE_OPTIMISERS


def trainer_arguments(
    work: Path,
    optimiser: Optimiser,
    max_steps: int,
    batch_size: int,
    lr: float,
    warmup_steps: int,
    seed: int,
    **settings,
):
    """sentence-transformers' training arguments of a fine-tuning run whose trainer works in ``work``.

    What every fine-tuning run here shares: ``optimiser`` (a recipe's, :data:`OPTIMISERS`) as torch's AdamW,
    ``lr`` warmed up linearly over ``warmup_steps`` then decayed linearly to 0 after ``max_steps`` steps of
    ``batch_size``, gradient clipping at 1.0, ``seed`` for the heads and the data order, bf16 autocast on a GPU
    (the CPU otherwise), the loss logged every step and no progress bar. ``settings``: the run's own arguments
    (trackers, data loading, checkpoints, evaluation). Used by both fine-tuning stages, ``finetune``
    (:func:`pipeline.finetune.finetune.training_arguments`) and ``finetune-semeval``
    (:func:`pipeline.finetune.finetune_semeval.fine_tune`)."""
    import torch
    from sentence_transformers import SentenceTransformerTrainingArguments

    gpu = torch.cuda.is_available()
    return SentenceTransformerTrainingArguments(
        output_dir=str(work),
        max_steps=max_steps,
        per_device_train_batch_size=batch_size,
        learning_rate=lr,
        warmup_steps=warmup_steps,
        lr_scheduler_type="linear",
        optim="adamw_torch",
        adam_beta1=optimiser.betas[0],
        adam_beta2=optimiser.betas[1],
        adam_epsilon=optimiser.eps,
        weight_decay=optimiser.weight_decay,  # the Trainer exempts biases and LayerNorm weights
        max_grad_norm=1.0,
        seed=seed,
        data_seed=seed,
        bf16=gpu,
        # without a GPU, only use_cpu makes the Trainer join torchrun's process group (gloo): else each
        # process trained alone and both rotated the same checkpoints (found by the paper-en rehearsal)
        use_cpu=not gpu,
        logging_steps=1,
        disable_tqdm=True,
        **settings,
    )


def tasks_of(recipe: str, objectives: str) -> list[str]:
    if recipe == "twin":
        return objectives.split("+")
    return ["nli"]


def nli_examples(nli: NLIPairs) -> dict[str, list]:
    return {"sentence1": list(nli.premises), "sentence2": list(nli.hypotheses), "label": list(nli.labels)}


def mnrl_triplets(nli: NLIPairs, seed: int) -> dict[str, list]:
    """(anchor, positive, negative): each entailed hypothesis of a premise with one of its contradictions,
    drawn at random; premises without both are left out (SBERT's ``training_nli_v2`` recipe)."""
    entailed, contradicted = defaultdict(list), defaultdict(list)
    for premise, hypothesis, label in zip(nli.premises, nli.hypotheses, nli.labels):
        if LABELS[label] == "entailment":
            entailed[premise].append(hypothesis)
        elif LABELS[label] == "contradiction":
            contradicted[premise].append(hypothesis)
    rng = np.random.default_rng([seed, 13])
    anchors, positives, negatives = [], [], []
    for premise, hypotheses in entailed.items():
        if not contradicted[premise]:
            continue
        for hypothesis in hypotheses:
            anchors.append(premise)
            positives.append(hypothesis)
            negatives.append(contradicted[premise][int(rng.integers(len(contradicted[premise])))])
    if not anchors:
        raise InputError(
            nli.files[0] if nli.files else "--nli",
            "no premise has both an entailed and a contradicted hypothesis (nli-mnrl needs them)",
        )
    return {"anchor": anchors, "positive": positives, "negative": negatives}


def training_columns(
    recipe: str,
    objectives: str,
    nli: NLIPairs,
    ppdb: list[PPDBPair] | None,
    negatives: int,
    seed: int,
    ppdb_source="--ppdb",
) -> dict[str, dict[str, list]]:
    """Task name -> the columns of its training data set, NLI first (the schedule's order)."""
    if recipe not in RECIPES:
        raise InputError("--recipe", f"unknown recipe {recipe!r}; expected one of {', '.join(RECIPES)}")
    if recipe == "nli-mnrl":
        return {"nli": mnrl_triplets(nli, seed)}
    tasks = tasks_of(recipe, objectives)
    if set(tasks) - {"nli"} and not ppdb:
        raise InputError("--ppdb", f"objectives {objectives} need PPDB 2.0 pairs (--ppdb)")
    columns = {"nli": nli_examples(nli)}
    if "pi" in tasks:
        columns["pi"] = paraphrase_identification(ppdb, negatives, seed, ppdb_source).columns()
    if "ptc" in tasks:
        columns["ptc"] = pairwise_text_classification(ppdb, seed, ppdb_source).columns()
    return columns


def steps_per_epoch(recipe: str, columns: dict[str, dict[str, list]], batch_size: int) -> int:
    """Optimizer steps of one pass over the NLI data (the first task), full batches only.

    The twin recipe's schedule (:mod:`pipeline.finetune.schedule`) gives NLI every second batch
    when PPDB tasks take part, so its pass is twice the NLI batches; the others train NLI alone."""
    from pipeline.finetune.schedule import task_pattern

    nli_batches = len(next(iter(columns["nli"].values()))) // batch_size
    if nli_batches < 1:
        raise InputError("--nli", f"fewer NLI training examples than one batch of {batch_size}")
    pattern = task_pattern(len(columns)) if recipe == "twin" else [0]
    return nli_batches * len(pattern) // pattern.count(0)


def pair_softmax_loss():
    """sentence-transformers' ``SoftmaxLoss`` with both sentences of a batch's pairs in one encoder pass.

    The library embeds the first column on its own (``embed_columns``' ``separate_first``: a query and
    a document differ in length), so a Siamese step makes two forward passes of ``batch`` sequences; the
    two sentences of an NLI or PPDB pair are of one kind, and one pass of ``2 x batch`` sequences
    (the library's ``separate_first=False``: both padded to the longer, padding masked) halves the
    launches of a step that is launch-bound at 16 pairs (BENCHMARKS "GPU budget"). The loss and
    gradients are the same up to dropout sampling (the library's own statement); u and v are still
    pooled from each sentence alone, as SBERT's Siamese network (BURT twin §3.2) has them."""
    import torch
    from sentence_transformers.base.losses.merged_forward import embed_columns
    from sentence_transformers.sentence_transformer.losses import SoftmaxLoss

    class PairSoftmaxLoss(SoftmaxLoss):
        def forward(self, sentence_features, labels):
            reps = embed_columns(self.model, sentence_features, separate_first=False)
            rep_a, rep_b = reps
            # the pair features in SoftmaxLoss's own order: u, v, |u-v|, u*v (its forward, with one pass)
            vectors = []
            if self.concatenation_sent_rep:
                vectors += [rep_a, rep_b]
            if self.concatenation_sent_difference:
                vectors.append(torch.abs(rep_a - rep_b))
            if self.concatenation_sent_multiplication:
                vectors.append(rep_a * rep_b)
            output = self.classifier(torch.cat(vectors, 1).to(self.classifier.weight.dtype))
            if labels is None:
                return reps, output
            if self.num_labels == 1 or labels.shape != output.shape:
                labels = labels.view(-1)
            return self.loss_fct(output, labels)

    return PairSoftmaxLoss


def losses(recipe: str, tasks: list[str], model, concatenation: str) -> dict:
    """Task name -> its loss (with its own head) on ``model``: :func:`pair_softmax_loss` for the pair
    tasks, ``MultipleNegativesRankingLoss`` for ``nli-mnrl``'s triplets."""
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    if recipe == "nli-mnrl":
        return {"nli": MultipleNegativesRankingLoss(model)}
    rep, difference, product = CONCATENATIONS[concatenation]
    dim = model.get_embedding_dimension()
    loss = pair_softmax_loss()
    return {
        task: loss(
            model,
            dim,
            NUM_LABELS[task],
            concatenation_sent_rep=rep,
            concatenation_sent_difference=difference,
            concatenation_sent_multiplication=product,
        )
        for task in tasks
    }
