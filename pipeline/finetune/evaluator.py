"""Universal analogy and STS as sentence-transformers evaluators (docs/method.md §5).

Any sentence-transformers user can pass these to a trainer (``evaluator=``) or call them on a
model. They are thin adapters: :mod:`pipeline.tasks.analogy` and :mod:`pipeline.tasks.sts`
compute the numbers, and the texts are encoded exactly as the ``evaluate`` stage encodes them
(:class:`~pipeline.models.transformer_encoder.TransformerEncoder`: the same batches, padding, truncation and
pooling, run on the model's own transformer and tokenizer), so a model scores the same here and
in ``python -m pipeline evaluate analogy|sts`` on its saved directory. A model that is not
Transformer + mean / cls / max Pooling is encoded with ``model.encode`` instead.

- :class:`UniversalAnalogyEvaluator`: ``<name>_overall`` (primary: the mean of the three level
  averages) and ``<name>_<level>_avg`` / ``_sem`` / ``_syn``.
- :class:`STSEvaluator`: Spearman ×100 of cosine per data set and their ``avg`` (primary) when
  every data set of the tables is there; built on STS-B dev by :func:`stsb_dev` (``<name>_spearman``
  primary), the data set to select checkpoints on, never a test set.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np

try:  # sentence-transformers 6 moved it; 5 has only the old path
    from sentence_transformers.sentence_transformer.evaluation import SentenceEvaluator
except ImportError:
    from sentence_transformers.evaluation import SentenceEvaluator

from pipeline.models.pooling import POOLINGS
from pipeline.models.transformer_encoder import TransformerEncoder
from pipeline.tasks import analogy, sts
from pipeline.tasks.data_root import DataRoot

log = logging.getLogger("pipeline.finetune.evaluator")


class ModelEncoder(TransformerEncoder):
    """The ``evaluate`` stage's encoder over a loaded sentence-transformers model (no files read)."""

    def __init__(self, model, batch_size: int = 64, max_length: int = 128):
        transformer, pooling = model[0], model[1]
        self.path = "<in memory>"
        self.pooling = pooling.pooling_mode if isinstance(pooling.pooling_mode, str) else pooling.pooling_mode[0]
        self.batch_size = batch_size
        self.max_length = max_length
        self.model = transformer.auto_model
        self.tokenizer = transformer.tokenizer
        self.device = next(self.model.parameters()).device
        self.dim = self.model.config.hidden_size


class SentenceTransformerEncode:
    """Fallback for other architectures: ``model.encode`` as the encoder."""

    def __init__(self, model, batch_size: int = 64):
        self.model, self.batch_size = model, batch_size

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True)


def encoder_for(model, batch_size: int = 64, max_length: int = 128):
    modules = list(model) if hasattr(model, "__iter__") else []
    simple = (
        len(modules) == 2
        and hasattr(modules[0], "auto_model")
        and hasattr(modules[0], "tokenizer")
        and getattr(modules[1], "pooling_mode", None) is not None
    )
    if simple:
        mode = modules[1].pooling_mode
        mode = mode if isinstance(mode, str) else (mode[0] if len(mode) == 1 else None)
        if mode in POOLINGS:
            return ModelEncoder(model, batch_size, max_length)
    return SentenceTransformerEncode(model, batch_size)


class _Evaluator(SentenceEvaluator):
    def __init__(self, name: str, batch_size: int, max_length: int):
        super().__init__()
        self.name, self.batch_size, self.max_length = name, batch_size, max_length

    def _encode_with(self, model, score):
        was_training = model.training
        model.eval()
        try:
            return score(encoder_for(model, self.batch_size, self.max_length))
        finally:
            model.train(was_training)


class UniversalAnalogyEvaluator(_Evaluator):
    """Universal analogy accuracy (ULR-BERT §5.1.1) of a sentence-transformers model."""

    def __init__(
        self, categories: list[analogy.Category], name: str = "analogy", batch_size: int = 64, max_length: int = 128
    ):
        super().__init__(name, batch_size, max_length)
        self.categories = categories
        self.primary_metric = "overall"

    @classmethod
    def from_data_root(cls, root, **kwargs) -> UniversalAnalogyEvaluator:
        return cls(analogy.load(DataRoot(root)), **kwargs)

    def __call__(self, model, output_path=None, epoch: int = -1, steps: int = -1) -> dict[str, float]:
        result = self._encode_with(model, lambda encoder: analogy.evaluate(encoder, self.categories))
        self.last_result = result
        metrics = {"overall": result["overall"]}
        for level, entry in result["levels"].items():
            metrics.update({f"{level}_{part}": entry[part] for part in ("sem", "syn", "avg")})
        metrics = {key: (float("nan") if value is None else value) for key, value in metrics.items()}
        metrics = self.prefix_name_to_metrics(metrics, self.name)
        self.store_metrics_in_model_card_data(model, metrics, epoch, steps)
        return metrics


class STSEvaluator(_Evaluator):
    """Spearman ×100 of cosine similarity against gold (BURT twin §4.1) on the given data sets."""

    def __init__(
        self, sets: dict[str, dict[str, sts.Pairs]], name: str = "sts", batch_size: int = 64, max_length: int = 128
    ):
        super().__init__(name, batch_size, max_length)
        self.sets = sets
        self.every_dataset = set(sts.DATASETS) <= set(sets)  # the tables' seven: their avg is the primary metric
        self.primary_metric = "avg" if self.every_dataset else "spearman"

    @classmethod
    def from_data_root(cls, root, **kwargs) -> STSEvaluator:
        return cls(sts.load(DataRoot(root)), **kwargs)

    def __call__(self, model, output_path=None, epoch: int = -1, steps: int = -1) -> dict[str, float]:
        result = self._encode_with(model, lambda encoder: sts.evaluate(encoder, self.sets))
        self.last_result = result
        metrics = dict(result["scores"])
        if self.every_dataset:  # NaN, not None, where a set has no score: the trainer needs the key
            metrics["avg"] = math.nan if result["avg"] is None else result["avg"]
        else:
            metrics["spearman"] = float(np.mean(list(result["scores"].values())))
        metrics = self.prefix_name_to_metrics(metrics, self.name)
        self.store_metrics_in_model_card_data(model, metrics, epoch, steps)
        return metrics


STSB_DEV = "sts/STSBenchmark/sts-dev.csv"


def stsb_dev(root, **kwargs) -> STSEvaluator:
    """STS-B dev (the checkpoint-selection set): ``stsb-dev_spearman``."""
    data = DataRoot(root)
    pairs = sts.read_stsb(data.file(STSB_DEV, "STS Benchmark dev set"))
    return STSEvaluator({"STS-B-dev": {"dev": pairs}}, name="stsb-dev", **kwargs)


def evaluators_for(root, tasks: list[str], batch_size: int = 64, max_length: int = 128) -> list[SentenceEvaluator]:
    """``stsb-dev``, ``sts`` (the test sets), ``analogy`` under ``root``; selection metric first."""
    kwargs = {"batch_size": batch_size, "max_length": max_length}
    made = {
        "stsb-dev": lambda: stsb_dev(root, **kwargs),
        "sts": lambda: STSEvaluator.from_data_root(Path(root), **kwargs),
        "analogy": lambda: UniversalAnalogyEvaluator.from_data_root(Path(root), **kwargs),
    }
    unknown = set(tasks) - set(made)
    if unknown:
        raise ValueError(f"unknown evaluation tasks {sorted(unknown)}; expected some of {', '.join(made)}")
    return [made[task]() for task in made if task in tasks]
