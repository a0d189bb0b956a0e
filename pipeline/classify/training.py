"""One fine-tuning run (one task, one seed) with the Hugging Face ``Trainer``, and its predictions.

Heads (docs/method.md §4): ``AutoModelForSequenceClassification`` on the [CLS] token for
classification (and, with one output and mean-squared error, STS-B regression),
``AutoModelForQuestionAnswering`` for CMRC 2018, ``AutoModelForMultipleChoice`` for ChID and C3.
CLUEWSC is classification of the span-marked text (see clue_readers). A model is any
checkpoint ``from_pretrained`` loads: a hub id or path, a ``package:NAME`` checkpoint shipped
in a Python package, a tiny model, a ``pretrain`` output (its MLM head is dropped) or a
sentence-transformers folder (the folder of its Transformer module), as
:func:`pipeline.models.spec.resolve_path` and :func:`~pipeline.models.spec.transformers_folder` find
it. The seed fixes the new head's initialisation and the data order, so the same seed gives the same run.

Every dropout of the model (the encoder's and the head's) is set to the run's ``dropout`` (``--dropout``,
default 0.1: ULR-BERT §5.1.2, "We use the same sets of hyperparameters for all the evaluated models", and
BERT's fine-tuning, whose run_glue keeps the config's 0.1): a checkpoint's own value would fine-tune
released ALBERT (whose v2 configs ship 0) and ALBERT pre-trained here (saved with 0.1) at different rates.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from dataclasses import dataclass

import numpy as np
import torch
from transformers import (
    AutoModelForMultipleChoice,
    AutoModelForQuestionAnswering,
    AutoModelForSequenceClassification,
    DataCollatorForMultipleChoice,
    DataCollatorWithPadding,
    Trainer,
    TrainerCallback,
    TrainingArguments,
    set_seed,
)

from pipeline import tracking
from pipeline.classify import batching, encoding, metrics
from pipeline.classify.processed_tokens import CountTokens
from pipeline.errors import InputError
from pipeline.models.loading import DROPOUT_FIELDS, HEAD_DROPOUT_FIELDS, set_dropout
from pipeline.models.weights import load_pretrained
from pipeline.progress import Progress

log = logging.getLogger("pipeline.classify")


def model_config(task, path: str, dropout: float | None = None):
    """The config the task's head is built from: the checkpoint's, with the task's labels and, unless
    ``dropout`` is None, every dropout of the encoder and of the head at ``dropout``."""
    from transformers import AutoConfig

    labels = {}
    if task.head in ("classification", "regression"):
        problem = "regression" if task.head == "regression" else "single_label_classification"
        labels = {"num_labels": task.num_labels, "problem_type": problem}
    try:
        config = AutoConfig.from_pretrained(path, **labels)
    except (OSError, ValueError) as exc:
        raise InputError(path, f"cannot load a model config: {exc}") from exc
    return set_dropout(config, dropout, DROPOUT_FIELDS + HEAD_DROPOUT_FIELDS)


HEADS = {
    "span": AutoModelForQuestionAnswering,
    "choice": AutoModelForMultipleChoice,
    "classification": AutoModelForSequenceClassification,
    "regression": AutoModelForSequenceClassification,
}


def load_model(task, path: str, dropout: float | None = None):
    """The task's head on the checkpoint at the run's ``dropout`` (None: the checkpoint's own), loaded whole or
    refused in one line (pipeline.models.weights)."""
    return load_pretrained(HEADS[task.head], path, config=model_config(task, path, dropout))


class MultipleChoiceCollator(DataCollatorForMultipleChoice):
    """transformers' multiple-choice collator, for unlabelled rows too: it reads every row's label, and a
    benchmark's own test set has none (CLUE's ChID and C3 releases; found by the paper-zh rehearsal,
    docs/stages/rehearsal.md). Such a batch is collated with a placeholder label, which is dropped."""

    def torch_call(self, examples):
        if all("labels" in example for example in examples):
            return super().torch_call(examples)
        batch = super().torch_call([{**example, "labels": 0} for example in examples])
        del batch["labels"]
        return batch


def collator(task, tokenizer):
    return MultipleChoiceCollator(tokenizer) if task.head == "choice" else DataCollatorWithPadding(tokenizer)


class ProgressLog(TrainerCallback):
    """A log line every 10 s with steps done, rate and ETA (pipeline.progress)."""

    def __init__(self, label: str):
        self.label = label
        self.progress = None

    def on_train_begin(self, args, state, control, **kwargs):
        self.progress = Progress(log, f"{self.label} steps", total=state.max_steps)

    def on_step_end(self, args, state, control, **kwargs):
        self.progress.update(1, position=state.global_step)

    def on_train_end(self, args, state, control, **kwargs):
        self.progress.done()


@dataclass
class Settings:
    batch_size: int
    lr: float
    epochs: float
    max_steps: int
    max_length: int
    warmup_ratio: float
    weight_decay: float
    doc_stride: int
    max_answer_tokens: int
    eval_batch_size: int = 64
    bf16: bool = False
    dropout: float = 0.1
    group_by_length: bool = False  # batches of like length (pipeline/classify/batching.py); off: random order


def training_arguments(settings: Settings, seed: int, output_dir: str, report_to=()) -> TrainingArguments:
    return TrainingArguments(
        output_dir=output_dir,
        per_device_train_batch_size=settings.batch_size,
        per_device_eval_batch_size=settings.eval_batch_size,
        learning_rate=settings.lr,
        num_train_epochs=settings.epochs,
        max_steps=settings.max_steps if settings.max_steps > 0 else -1,
        warmup_steps=settings.warmup_ratio,
        weight_decay=settings.weight_decay,
        seed=seed,
        data_seed=seed,
        train_sampling_strategy=batching.GROUPED if settings.group_by_length else "random",
        save_strategy="no",
        eval_strategy="no",
        logging_strategy="steps",
        logging_steps=50,
        report_to=list(report_to) or "none",
        disable_tqdm=True,
        bf16=settings.bf16,
        dataloader_num_workers=0,
        dataloader_pin_memory=torch.cuda.is_available(),
    )


def predictions(task, trainer: Trainer, features, examples) -> list:
    """Predicted labels (label strings, scores, option indices or answer texts) of ``examples``."""
    output = trainer.predict(features).predictions
    if task.head == "span":
        start, end = output
        return encoding.best_spans(features, examples, start, end)
    if task.head == "regression":
        return [float(v) for v in np.asarray(output).reshape(-1)]
    indices = np.asarray(output).argmax(-1)
    return [task.labels[i] for i in indices] if task.head == "classification" else [int(i) for i in indices]


def score(task, examples, predicted) -> dict[str, float]:
    """The task's metrics (x 100) of ``predicted`` against the gold labels of ``examples``."""
    if task.head == "span":
        return metrics.span_extraction([[text for text, _ in e.answers] for e in examples], predicted)
    if task.head == "regression":
        return metrics.regression([e.label for e in examples], predicted)
    if task.head == "classification":
        gold = [task.labels.index(e.label) for e in examples]
        return metrics.classification(task.metrics, gold, [task.labels.index(p) for p in predicted])
    return metrics.classification(task.metrics, [int(e.label) for e in examples], predicted)


def run_seed(
    task, model_path: str, tokenizer, train, evaluations: dict, settings: Settings, seed: int, tracker_args=None
) -> dict:
    """Fine-tune a fresh copy of the model on ``train`` (examples, features) with ``seed``; predict
    every evaluation set ({name: (examples, features)}). Returns predictions, metrics, speed and the tokens its
    training batches held (:mod:`pipeline.classify.processed_tokens`).
    ``tracker_args`` (``--report-to``, ``--tracking-dir``): the live curves, in ``seed-N`` under the folder."""
    report_to, curves = [], []
    if tracker_args is not None:
        folder = tracker_args.tracking_dir
        seed_args = argparse.Namespace(
            report_to=tracker_args.report_to, tracking_dir=folder / f"seed-{seed}" if folder else None
        )
        report_to = tracking.trainer_report_to(seed_args)
        curves = tracking.trainer_callbacks(seed_args)
    set_seed(seed)
    model = load_model(task, model_path, settings.dropout)
    counted = CountTokens(model)  # the tokens of every training batch, padding included (issue 48 §2)
    with tempfile.TemporaryDirectory(prefix="classify-") as scratch:
        trainer = batching.ClassifyTrainer(
            model=model,
            args=training_arguments(settings, seed, scratch, report_to),
            train_dataset=train[1],
            data_collator=collator(task, tokenizer),
            processing_class=tokenizer,
            callbacks=[ProgressLog(f"{task.name} seed {seed}"), counted, *curves],
        )
        started = time.perf_counter()
        result = trainer.train()
        train_seconds = time.perf_counter() - started
        outcome = {
            "seed": seed,
            "train_seconds": train_seconds,
            "steps": result.global_step,
            "train_examples_per_second": result.metrics.get("train_samples_per_second"),
            "train_loss": result.training_loss,
            "processed_tokens": counted.record(),
            "sets": {},
        }
        for name, (examples, features) in evaluations.items():
            predicted = predictions(task, trainer, features, examples)
            labelled = all(e.label is not None for e in examples)
            outcome["sets"][name] = {
                "predictions": predicted,
                "metrics": score(task, examples, predicted) if labelled else None,
            }
    return outcome
