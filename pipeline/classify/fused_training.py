"""Several fine-tuning runs of one grid trained as one stacked model (issue 41 §2, docs/stages/classify.md).

Runs that share an architecture, a task, a batch size and a number of steps differ only in their seed,
their learning rate and (where the grid fine-tunes several checkpoints of one architecture) their
starting weights. A GLUE step of BERT-base at batch 8-32 is bound by kernel launches and the optimiser
step, not by arithmetic, so K such runs stepped together -- one forward and backward over the K members'
weights stacked on a leading axis (``torch.func.stack_module_state``, ``functional_call``, ``vmap``) --
cost far fewer launches per member than K runs one after another (bench/fused_ops.py).

Each member is exactly the run :func:`pipeline.classify.training.run_seed` would make:

* its ``Trainer`` is built as the solo run builds it (same seed before the head is initialised, same
  arguments), and supplies the member's batches (the seeded sampler, re-seeded every epoch), its
  number of steps, warm-up and weight-decay groups; only the step is fused;
* the step is the solo step written for stacked weights: the loss of each member's batch, gradient
  clipping by each member's own norm, AdamW with each member's learning rate on the linear schedule
  with warm-up (transformers' ``get_linear_schedule_with_warmup``);
* dropout draws each member's own masks from its own key (its model, seed and setting:
  :mod:`pipeline.classify.fused_dropout`), so a member's masks, like its batches, do not depend on the
  models it shares a stack with;
* after training, the member's own model (whose parameters are views of its slice of the stack)
  predicts through its own ``Trainer``, so predictions, metrics and files are those of a solo run.

The stack runs every member through one template module built from one member's config, so only models
of one config share a stack (:func:`pipeline.classify.fused_stacks.stack_config`: the whole config at the run's dropout, names,
``architectures`` and dtype aside; ``fused_stacks.run_stacks`` splits a job's runs by it and logs how), and only the
architectures tested exact fuse (:data:`FUSED_ARCHITECTURES`; the others train one by one). With dropout
off the fused members equal their solo runs (logits within 1e-4 after 20 steps in float32,
tests/classify/test_fused_training.py, test_fused_architectures.py). The encoders run under ``vmap`` with
eager attention and a precomputed 4-D additive attention mask: transformers' own mask builder inspects the
mask's values to skip it, which ``vmap`` cannot trace.
"""

from __future__ import annotations

import argparse
import copy
import logging
import math
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import torch
from torch.func import functional_call, stack_module_state, vmap
from transformers import Trainer, set_seed

from pipeline import tracking
from pipeline.classify import processed_tokens, training
from pipeline.classify.batching import ClassifyTrainer
from pipeline.classify.fused_dropout import MemberDropout, call_keys, member_key
from pipeline.classify.fused_resume import Resume, cuda_rng_state, data_fingerprint, restore_cuda_rng
from pipeline.classify.fused_stacks import CHOICE_ARCHITECTURES, FUSED_ARCHITECTURES, UNKEYED_CONFIG
from pipeline.classify.hyperparameters import setting_label
from pipeline.errors import InputError
from pipeline.progress import Progress

log = logging.getLogger("pipeline.classify")

ADAM_BETAS = (0.9, 0.999)  # TrainingArguments' adam_beta1 / adam_beta2 / adam_epsilon defaults
ADAM_EPSILON = 1e-8
PAD_KEYS = {"input_ids": "pad", "attention_mask": 0, "token_type_ids": 0}


@dataclass(frozen=True)
class Member:
    """One run of the grid: its seed, its learning rate and its starting checkpoint."""

    seed: int
    lr: float
    model_path: str


def member_trainer(task, member: Member, tokenizer, train, settings: training.Settings, scratch: str) -> Trainer:
    """The member's Trainer and model, built as :func:`training.run_seed` builds them (the seed fixes the head)."""
    set_seed(member.seed)
    model = training.load_model(task, member.model_path, settings.dropout)
    return ClassifyTrainer(
        model=model,
        args=training.training_arguments(replace(settings, lr=member.lr), member.seed, scratch),
        train_dataset=train[1],
        data_collator=training.collator(task, tokenizer),
        processing_class=tokenizer,
    )


def dropout_key(member: Member, settings: training.Settings) -> int:
    """The member's dropout key (:func:`fused_dropout.member_key`): its model (the checkpoint folder's name: a
    workflow's model label or a hub commit), its seed and its setting."""
    setting = setting_label(settings.batch_size, member.lr, settings.epochs, settings.max_length)
    return member_key(Path(member.model_path.rstrip("/")).name, member.seed, f"{setting}-steps{settings.max_steps}")


def member_batches(trainer: Trainer, max_steps: int):
    """The member's training batches in the order its Trainer would feed them (its sampler is re-seeded with
    the epoch, as ``Trainer._run_epoch`` does), ``max_steps`` of them."""
    loader = trainer.get_train_dataloader()
    step, epoch = 0, 0
    while step < max_steps:
        if hasattr(loader, "set_epoch"):
            loader.set_epoch(epoch)
        inner = getattr(getattr(loader, "batch_sampler", None), "batch_sampler", None)
        if hasattr(inner, "set_epoch"):
            inner.set_epoch(epoch)
        for batch in loader:
            yield batch
            step += 1
            if step == max_steps:
                return
        epoch += 1


def training_steps(trainer: Trainer, settings: training.Settings) -> int:
    """The Trainer's number of optimiser steps: ``max_steps``, or the epochs times the batches per epoch."""
    per_epoch = max(len(trainer.get_train_dataloader()), 1)
    return settings.max_steps if settings.max_steps > 0 else math.ceil(settings.epochs * per_epoch)


def linear_warmup(step: int, warmup: int, total: int) -> float:
    """transformers' ``get_linear_schedule_with_warmup`` factor at ``step`` (0 at the first step of a warm-up)."""
    if step < warmup:
        return step / max(1, warmup)
    return max(0.0, (total - step) / max(1, total - warmup))


def stack_batches(batches: list[dict], pad_id: int) -> dict:
    """K members' batches as one, each tensor with a leading member axis; the token axis is padded to the
    longest member's (padding is masked, so a member's result does not change). ``length`` keeps each
    member's own padded length, over which span extraction's loss runs."""
    stacked = {"length": torch.tensor([b["input_ids"].shape[-1] for b in batches])}
    for key in batches[0]:
        tensors = [b[key] for b in batches]
        if key in PAD_KEYS:
            length = max(t.shape[-1] for t in tensors)
            fill = pad_id if PAD_KEYS[key] == "pad" else 0
            tensors = [torch.nn.functional.pad(t, (0, length - t.shape[-1]), value=fill) for t in tensors]
        stacked[key] = torch.stack(tensors)
    return stacked


def additive_mask(attention_mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The 0/1 padding mask [..., L] as the 4-D additive mask eager attention adds to its scores [N, 1, 1, L]."""
    flat = attention_mask.reshape(-1, attention_mask.shape[-1]).to(dtype)
    return ((1.0 - flat) * torch.finfo(dtype).min)[:, None, None, :]


class StackedModel:
    """K members' weights stacked on a leading axis and one template module that runs any of them.

    Each member's own model keeps its parameters as views of its slice of the stack, so the trained member
    predicts (and is saved) as a solo run's model would be."""

    def __init__(self, models: list[torch.nn.Module], heads: str):
        model_type = models[0].config.model_type
        supported = CHOICE_ARCHITECTURES if heads == "choice" else FUSED_ARCHITECTURES
        if model_type not in supported:  # the template below would run another forward than the member's own
            where = "multiple-choice path" if heads == "choice" else "path"
            raise InputError(
                models[0].name_or_path, f"the fused {where} runs {', '.join(supported)}, not {model_type}: use --fuse 1"
            )
        configs = [{k: v for k, v in m.config.to_dict().items() if k not in UNKEYED_CONFIG} for m in models]
        if any(config != configs[0] for config in configs[1:]):  # the template is the first member's
            raise ValueError("the members of one stack must share one config (fused_training.stack_config)")
        self.heads = heads
        self.params, self.buffers = stack_module_state(models)
        for k, model in enumerate(models):
            for name, parameter in model.named_parameters():
                parameter.data = self.params[name].data[k]
        # an embedding's padding row gets no gradient; under vmap only the first member's is kept at zero
        self.padding_rows = [
            (f"{name}.weight", module.padding_idx)
            for name, module in models[0].named_modules()
            if isinstance(module, torch.nn.Embedding) and module.padding_idx is not None
        ]
        self.template = copy.deepcopy(models[0]).to("meta")
        self.template.config._attn_implementation = "eager"  # vmap-able; sdpa's mask skipping is not
        self.template.train()
        self.dtype = next(iter(self.params.values())).dtype

    def _forward(self, params, buffers, batch, key):
        with MemberDropout(key):  # the member's own masks (fused_dropout)
            return self._member_forward(params, buffers, batch)

    def _member_forward(self, params, buffers, batch):
        if self.heads == "choice":
            return self._choice(params, buffers, batch)
        length = batch.pop("length")
        if self.heads == "span":
            return self._span(params, buffers, batch, length)
        batch = {**batch, "attention_mask": additive_mask(batch["attention_mask"], self.dtype)}
        output = functional_call(self.template, (params, buffers), args=(), kwargs=batch)
        return output.loss, output.logits

    def _span(self, params, buffers, batch, length):
        """``BertForQuestionAnswering``'s loss over the member's own padded length: the head scores padding
        positions too, and the solo run's softmax runs over its own batch's length, not the stack's."""
        positions = {key: batch.pop(key) for key in ("start_positions", "end_positions") if key in batch}
        batch["attention_mask"] = additive_mask(batch["attention_mask"], self.dtype)
        output = functional_call(self.template, (params, buffers), args=(), kwargs=batch)
        logits = torch.stack([output.start_logits, output.end_logits])  # [2, B, L]
        if not positions:
            return logits.sum() * 0, logits
        outside = torch.arange(logits.shape[-1], device=logits.device) >= length
        masked = logits.masked_fill(outside, torch.finfo(logits.dtype).min)
        losses = []
        for scores, key in zip(masked, ("start_positions", "end_positions")):
            target = torch.minimum(positions[key].clamp(min=0), length)
            valid = target < length  # the head's ignore_index: a position clamped to the length
            each = torch.nn.functional.cross_entropy(scores, torch.where(valid, target, 0), reduction="none")
            losses.append((each * valid).sum() / valid.sum())
        return (losses[0] + losses[1]) / 2, logits

    def _choice(self, params, buffers, batch):
        """``BertForMultipleChoice`` with the choices flattened here, so that the encoder gets the 4-D mask
        (the head's own forward flattens the mask back to 2-D); loss as the head computes it."""
        batch.pop("length")
        labels = batch.get("labels")
        choices = batch["input_ids"].shape[1]
        flat = {key: batch[key].reshape(-1, batch[key].shape[-1]) for key in PAD_KEYS if key in batch}
        flat["attention_mask"] = additive_mask(flat["attention_mask"], self.dtype)
        encoder = getattr(self.template, self.template.base_model_prefix)
        prefix = self.template.base_model_prefix + "."

        def inner(mapping):
            return {name[len(prefix) :]: value for name, value in mapping.items() if name.startswith(prefix)}

        pooled = functional_call(encoder, (inner(params), inner(buffers)), args=(), kwargs=flat).pooler_output
        head = {name: value for name, value in params.items() if not name.startswith(prefix)}
        pooled = functional_call(self.template.dropout, {}, args=(pooled,))
        logits = functional_call(self.template.classifier, _child(head, "classifier"), args=(pooled,))
        logits = logits.view(-1, choices)
        loss = torch.nn.functional.cross_entropy(logits, labels) if labels is not None else logits.sum() * 0
        return loss, logits

    def backward(self, losses: torch.Tensor) -> None:
        """Each member's gradient of its own loss (the sum's gradient, member by member)."""
        losses.sum().backward()
        with torch.no_grad():
            for name, row in self.padding_rows:
                self.params[name].grad[:, row] = 0

    def losses(self, batch: dict, keys: torch.Tensor, autocast: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """Every member's loss [K] and outputs on its own batch (``batch`` stacked by :func:`stack_batches`), its
        dropout masks drawn from its own keys (``keys`` [K, calls], :func:`fused_dropout.call_keys`). No other
        random draw may happen in the forward (``randomness="error"``): it would come from the stack's one
        generator."""
        with torch.autocast(next(iter(self.params.values())).device.type, torch.bfloat16, enabled=autocast):
            return vmap(self._forward, randomness="error")(self.params, self.buffers, batch, keys)


def _child(params: dict, module: str) -> dict:
    return {name[len(module) + 1 :]: value for name, value in params.items() if name.startswith(module + ".")}


def _member_norm(tensor: torch.Tensor) -> torch.Tensor:
    """Each member's 2-norm of its slice [K] (one operator: no flattening)."""
    if tensor.dim() == 1:  # one number per member
        return tensor.abs()
    return torch.linalg.vector_norm(tensor, dim=tuple(range(1, tensor.dim())))


class StackedAdamW:
    """``torch.optim.AdamW`` (the Trainer's optimiser) for stacked weights, with each member's learning rate,
    gradient clipping by each member's own global norm (``clip_grad_norm_``, max norm 1.0), and weight decay
    on the parameters the Trainer decays (not biases and LayerNorm weights)."""

    def __init__(self, params: dict, decay: set[str], weight_decay: float, max_grad_norm: float):
        self.params = params
        self.weight_decay = {name: weight_decay if name in decay else 0.0 for name in params}
        self.max_grad_norm = max_grad_norm
        self.exp_avg = {name: torch.zeros_like(p) for name, p in params.items()}
        self.exp_avg_sq = {name: torch.zeros_like(p) for name, p in params.items()}
        self.step_count = 0

    def clip(self) -> torch.Tensor:
        """Scale each member's gradients to a global norm of at most ``max_grad_norm``; the norms before [K]."""
        grads = [p.grad for p in self.params.values()]
        norms = torch.stack([_member_norm(g) for g in grads]).norm(dim=0)
        if self.max_grad_norm > 0:
            scale = (self.max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
            torch._foreach_mul_(grads, [scale.view(-1, *[1] * (g.dim() - 1)) for g in grads])
        return norms

    @torch.no_grad()
    def step(self, lrs: torch.Tensor) -> None:
        """One AdamW step (``torch.optim.AdamW``'s foreach arithmetic); ``lrs`` [K] is each member's learning
        rate at this step. Members that share a rate (a setting's seeds) step with a plain number, which keeps
        the multi-tensor kernels' fast path on a GPU; several rates broadcast one per member."""
        self.step_count += 1
        beta1, beta2 = ADAM_BETAS
        correction1 = 1 - beta1**self.step_count
        correction2_sqrt = math.sqrt(1 - beta2**self.step_count)
        names = list(self.params)
        params = [self.params[n] for n in names]
        grads = [p.grad for p in params]
        exp_avgs = [self.exp_avg[n] for n in names]
        exp_avg_sqs = [self.exp_avg_sq[n] for n in names]
        shared = bool((lrs == lrs[0]).all())

        def per_member(values: torch.Tensor, tensors: list) -> list | float:
            if shared:
                return float(values[0])
            return [values.to(t.dtype).view(-1, *[1] * (t.dim() - 1)) for t in tensors]

        for decay in {self.weight_decay[n] for n in names} - {0.0}:
            decayed = [self.params[n] for n in names if self.weight_decay[n] == decay]
            factor = per_member(1 - lrs * decay, decayed)
            torch._foreach_mul_(decayed, factor)
        torch._foreach_lerp_(exp_avgs, grads, 1 - beta1)
        torch._foreach_mul_(exp_avg_sqs, beta2)
        torch._foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2)
        denom = torch._foreach_sqrt(exp_avg_sqs)
        torch._foreach_div_(denom, correction2_sqrt)
        torch._foreach_add_(denom, ADAM_EPSILON)
        if shared:
            torch._foreach_addcdiv_(params, exp_avgs, denom, -float(lrs[0]) / correction1)
        else:
            steps = torch._foreach_div(exp_avgs, denom)
            torch._foreach_mul_(steps, per_member(-lrs / correction1, params))
            torch._foreach_add_(params, steps)
        for p in params:
            p.grad = None

    def state_dict(self) -> dict:
        return {"exp_avg": self.exp_avg, "exp_avg_sq": self.exp_avg_sq, "step": self.step_count}

    def load_state_dict(self, state: dict) -> None:
        with torch.no_grad():
            for name in self.params:
                self.exp_avg[name].copy_(state["exp_avg"][name])
                self.exp_avg_sq[name].copy_(state["exp_avg_sq"][name])
        self.step_count = state["step"]


def member_trackers(members: list[Member], tracker_args) -> list:
    """Each member's live curves where the solo run keeps them (TensorBoard, ``seed-N`` under --tracking-dir).
    ``tracker_args``: the job's arguments, or a list of them, one per member (the members of several
    models, each model's curves in its own folder)."""
    per_member = tracker_args if isinstance(tracker_args, list) else [tracker_args] * len(members)
    return [
        tracking.Tracker(None, "")
        if a is None or a.tracking_dir is None
        else tracking.Tracker(
            argparse.Namespace(report_to=a.report_to, tracking_dir=a.tracking_dir / f"seed-{m.seed}"), f"seed-{m.seed}"
        )
        for m, a in zip(members, per_member)
    ]


def train_members(
    task,
    members: list[Member],
    tokenizer,
    train,
    settings: training.Settings,
    scratch: str,
    tracker_args=None,
    resume: Resume | None = None,
):
    """Fine-tune every member at once; returns their Trainers (the trained models and, as ``processed_tokens``,
    the tokens of their batches), steps, mean training losses and training seconds. Live curves (loss,
    learning rate, gradient norm) go to each member's tracker every ``logging_steps``, as the Trainer logs them."""
    trainers = [member_trainer(task, m, tokenizer, train, settings, scratch) for m in members]
    steps = training_steps(trainers[0], settings)
    args = trainers[0].args
    warmup = args.get_warmup_steps(steps)
    stacked = StackedModel([t.model for t in trainers], task.head)
    decay = set(trainers[0].get_decay_parameter_names(trainers[0].model))
    optimiser = StackedAdamW(stacked.params, decay, settings.weight_decay, args.max_grad_norm)
    device = next(iter(stacked.params.values())).device
    base_lrs = torch.tensor([m.lr for m in members], dtype=torch.float64, device=device)
    streams = [member_batches(t, steps) for t in trainers]
    counts = processed_tokens.StackCount(len(members), len(trainers[0].get_train_dataloader()))
    pad_id = tokenizer.pad_token_id or 0
    # each member's dropout masks come from its own key (its model, seed and setting: fused_dropout), not from
    # the stack; the global generator only seeds the data loaders' iterators, which draw nothing that matters
    keys = torch.tensor([dropout_key(m, settings) for m in members], dtype=torch.int64, device=device)
    torch.manual_seed(members[0].seed)
    loss_sums = torch.zeros(len(members), dtype=torch.float64, device=device)
    trackers, logged = member_trackers(members, tracker_args), torch.zeros_like(loss_sums)
    identity = {"members": [vars(m) for m in members], "steps": steps, "settings": vars(settings)}
    state = None
    if resume:  # a save for these members and settings, on this training data, holding what this run holds
        identity["train"] = data_fingerprint(*train)
        expected = {"step": 0, "params": stacked.params, "optimiser": optimiser.state_dict()}
        expected |= {
            "loss_sums": loss_sums,
            "logged": logged,
            "rng": torch.get_rng_state(),
            "cuda_rng": cuda_rng_state(),
        }
        state = resume.load(identity, expected, steps)
    first = 0
    if state is not None:
        with torch.no_grad():
            for name, tensor in state["params"].items():
                stacked.params[name].copy_(tensor)
        optimiser.load_state_dict(state["optimiser"])
        loss_sums.copy_(state["loss_sums"])
        logged.copy_(state["logged"])
        first = state["step"]
        for step in range(first):  # each member's sampler replayed to where the run stopped, its tokens counted
            counts.add([next(stream) for stream in streams], step)
        torch.set_rng_state(state["rng"])  # after the replay: a data loader draws its base seed from it
        restore_cuda_rng(state["cuda_rng"])
    progress = Progress(log, f"{task.name} fused x{len(members)} steps", total=steps)
    started = time.perf_counter()
    for step in range(first, steps):
        batch = stack_batches(counts.add([next(s) for s in streams], step), pad_id)
        batch = {key: value.to(device) for key, value in batch.items()}
        losses, _ = stacked.losses(batch, call_keys(keys, step), autocast=settings.bf16)
        stacked.backward(losses)
        norms = optimiser.clip()
        lrs = base_lrs * linear_warmup(step, warmup, steps)
        optimiser.step(lrs)
        loss_sums += losses.detach().double()
        if (step + 1) % args.logging_steps == 0:
            mean = (loss_sums - logged) / args.logging_steps
            for k, tracker in enumerate(trackers):
                record = {"train/loss": mean[k], "train/learning_rate": lrs[k], "train/grad_norm": norms[k]}
                tracker.log({key: float(value) for key, value in record.items()}, step + 1)
            logged = loss_sums.clone()
        if resume and (step + 1) % resume.every == 0 and step + 1 < steps:
            resume.save(
                {
                    "identity": identity,
                    "step": step + 1,
                    "params": {name: p.detach().cpu() for name, p in stacked.params.items()},
                    "optimiser": {
                        key: {n: t.cpu() for n, t in value.items()} if isinstance(value, dict) else value
                        for key, value in optimiser.state_dict().items()
                    },
                    "loss_sums": loss_sums.cpu(),
                    "logged": logged.cpu(),
                    "rng": torch.get_rng_state(),
                    "cuda_rng": cuda_rng_state(),
                }
            )
        progress.update(1, position=step + 1)
    progress.done()
    for tracker in trackers:
        tracker.close()
    if resume:
        resume.finish()
    seconds = time.perf_counter() - started
    for trainer, record in zip(trainers, counts.records()):
        trainer.model.eval()
        trainer.processed_tokens = record
    return trainers, steps, (loss_sums / max(steps, 1)).tolist(), seconds


def run_members(
    task,
    members: list[Member],
    tokenizer,
    train,
    evaluations: dict,
    settings: training.Settings,
    tracker_args=None,
    resume: Resume | None = None,
) -> list[dict]:
    """The outcome :func:`training.run_seed` returns, for every member, trained as one stacked model."""
    with tempfile.TemporaryDirectory(prefix="classify-fused-") as scratch:
        trainers, steps, losses, seconds = train_members(
            task, members, tokenizer, train, settings, scratch, tracker_args, resume
        )
        outcomes = []
        for member, trainer, loss in zip(members, trainers, losses):
            outcome = {
                "seed": member.seed,
                "lr": member.lr,
                "model_path": member.model_path,
                "train_seconds": seconds / len(members),
                "steps": steps,
                "train_examples_per_second": steps * settings.batch_size * len(members) / max(seconds, 1e-9),
                "train_loss": loss,
                "processed_tokens": trainer.processed_tokens,
                "sets": {},
            }
            for name, (examples, features) in evaluations.items():
                predicted = training.predictions(task, trainer, features, examples)
                labelled = all(e.label is not None for e in examples)
                outcome["sets"][name] = {
                    "predictions": predicted,
                    "metrics": training.score(task, examples, predicted) if labelled else None,
                }
            outcomes.append(outcome)
    return outcomes
