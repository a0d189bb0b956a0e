"""The BERT models the fused-training benches step: a BERT of a given shape with random weights, random
batches for it, and one training step of the solo model or of K members stacked.

Used by bench/fused_ops.py (operators per member-step, CPU wall time, activations saved for backward) and
bench/gpu_step.py (the step's floor on a GPU). The fused step is the one the fused classify stage takes
(pipeline/classify/fused_training.py: ``StackedModel``'s vmapped forward and backward, ``StackedAdamW``);
the solo step is the Trainer's (forward, backward, ``clip_grad_norm_``, ``torch.optim.AdamW`` foreach).
Both benches time or count these steps, so they must build the same models and steps.
"""

from __future__ import annotations

import contextlib

import torch
from transformers import BertConfig, BertForSequenceClassification

from pipeline.classify.fused_dropout import call_keys
from pipeline.classify.fused_training import StackedAdamW, StackedModel, stack_batches

WEIGHT_DECAY = 0.01
MAX_GRAD_NORM = 1.0


def bert(
    layers: int,
    hidden: int,
    heads: int,
    intermediate: int,
    vocab: int = 30522,
    dropout: float = 0.1,
    seed: int | None = None,
) -> BertForSequenceClassification:
    """A 2-way BERT classifier of this shape from its config (random weights; ``seed``, where given, seeds torch
    first, so that every model built with it starts from the same weights)."""
    if seed is not None:
        torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=vocab,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=intermediate,
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
        num_labels=2,
    )
    return BertForSequenceClassification(config)


def members(make, k: int) -> list:
    """K models from ``make()`` (one architecture), each with its own head initialisation (seeds 0..K-1)."""
    models = []
    for seed in range(k):
        model = make()
        torch.manual_seed(seed)
        model.classifier.reset_parameters()
        models.append(model)
    return models


def random_batch(vocab: int, size: int, length: int, seed: int, padded_row: bool = False, device="cpu") -> dict:
    """``size`` sequences of ``length`` random token ids (above the special ids) and 2-way labels, drawn from
    ``seed``; ``padded_row``: the first row's second half is padding, as a collated batch has."""
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab, (size, length), generator=generator)
    mask = torch.ones_like(ids)
    if padded_row:
        mask[0, length // 2 :] = 0
    labels = torch.randint(0, 2, (size,), generator=generator)
    return {"input_ids": ids.to(device), "attention_mask": mask.to(device), "labels": labels.to(device)}


def stacked_batch(k: int, vocab: int, size: int, length: int, padded_row: bool = False, device="cpu") -> dict:
    """K members' batches (:func:`random_batch` with seeds 0..K-1) stacked as the fused step takes them."""
    batches = [random_batch(vocab, size, length, seed, padded_row) for seed in range(k)]
    return {key: value.to(device) for key, value in stack_batches(batches, 0).items()}


def decayed(names) -> set[str]:
    """The parameters the Trainer decays: not biases and LayerNorm weights."""
    return {name for name in names if "bias" not in name and "LayerNorm" not in name}


def _compiled(forward_backward, compiled: bool):
    # CUDA graphs (reduce-overhead) are what a compiled step can save on a launch-bound GPU step
    return torch.compile(forward_backward, mode="reduce-overhead") if compiled else forward_backward


class SoloStep:
    """One run's training step as the Trainer takes it: forward, backward, ``clip_grad_norm_``, AdamW (foreach),
    zero the gradients. ``decay_all``: weight decay on every parameter (one group) instead of the Trainer's
    groups; ``autocast``: the forward in bf16 autocast; ``compiled``: forward and backward under
    ``torch.compile``."""

    def __init__(self, model, lr: float = 3e-5, decay_all=False, autocast=False, compiled=False):
        self.model = model.train()
        named = list(model.named_parameters())
        decay = {name for name, _ in named} if decay_all else decayed(name for name, _ in named)
        groups = [
            {"params": [p for n, p in named if n in decay], "weight_decay": WEIGHT_DECAY},
            {"params": [p for n, p in named if n not in decay], "weight_decay": 0.0},
        ]
        # an empty group would cost the step a pass of its own
        self.optimiser = torch.optim.AdamW([g for g in groups if g["params"]], lr=lr, foreach=True)
        self.device = named[0][1].device
        self.autocast = autocast
        self.forward_backward = _compiled(self._forward_backward, compiled)

    def _forward_backward(self, batch):
        context = torch.autocast(self.device.type, torch.bfloat16) if self.autocast else contextlib.nullcontext()
        with context:
            loss = self.model(**batch).loss
        loss.backward()
        return loss

    def __call__(self, batch):
        loss = self.forward_backward(batch)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), MAX_GRAD_NORM, foreach=True)
        self.optimiser.step()
        self.optimiser.zero_grad(set_to_none=True)
        return loss


class FusedStep:
    """K members' training step as the fused classify stage takes it: one vmapped forward and backward over the
    stacked weights, each member's gradients clipped by its own norm, one AdamW step at one learning rate.
    ``decay_all``, ``autocast`` and ``compiled`` as :class:`SoloStep`'s."""

    def __init__(self, models, lr: float = 3e-5, decay_all=False, autocast=False, compiled=False):
        self.stacked = StackedModel(models, "classification")
        names = set(self.stacked.params)
        decay = names if decay_all else decayed(names)
        self.optimiser = StackedAdamW(self.stacked.params, decay, WEIGHT_DECAY, MAX_GRAD_NORM)
        device = next(iter(self.stacked.params.values())).device
        self.lrs = torch.full((len(models),), lr, dtype=torch.float64, device=device)
        self.keys = torch.arange(len(models), dtype=torch.int64, device=device)  # each member's dropout key
        self.autocast = autocast
        self.forward_backward = _compiled(self._forward_backward, compiled)

    def _forward_backward(self, batch):
        losses, _ = self.stacked.losses(batch, call_keys(self.keys, self.optimiser.step_count), autocast=self.autocast)
        self.stacked.backward(losses)
        return losses

    def __call__(self, batch):
        losses = self.forward_backward(batch)
        self.optimiser.clip()
        self.optimiser.step(self.lrs)
        return losses
