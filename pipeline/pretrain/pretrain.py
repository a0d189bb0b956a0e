"""Stage ``pretrain``: continue pre-training a masked-LM backbone with one objective (docs/method.md §3).

Objectives: ``mlm`` (BERT token masking), ``wwm`` (whole words), ``burt`` (PMI n-gram masking, BURT §3.2),
``spanbert`` (random spans), ``entity`` (named-entity spans), ``misad`` (MiSAD + MLM, ULR-BERT §3.2;
``--misad-choice mlm-score`` as the paper, ``random`` as the released code), ``misad-span`` / ``misad-entity``
(MiSAD with w a random span / a named entity, drawn uniformly: ULR-BERT §7.2), ``nsp`` and ``sop`` (sentence-pair
baselines with MLM, ULR-BERT §7.1); each is one entry of :mod:`pipeline.objective_registry`. MiSAD's ``--pooling``:
mean (default), cls, max, or ``pooler`` (BERT's pooler on [CLS], ULR-BERT §3.2; saved with the model:
:mod:`pipeline.pretrain.pooler`); its ``--misad-loss``: ``equation`` (ULR-BERT §3.2 as written) or ``released`` (the
authors' ``run_mse.py``: the sum re-normalised, R masked with its MLM loss added, a fresh pooler; docs/method.md
§3). ``--span-max-words``: SpanBERT's longest span (6, ULR-BERT §7.2; BURT's Span rows 10, as ``run_span.py``). Both
are recorded in ``pretrain_config.json``.

Optimisation as in both papers: AdamW, lr 5e-5, linear warm-up over the first 10% of the
steps then linear decay, dropout 0.1, gradient clipping at 1.0, one epoch by default
(``--max-steps`` overrides). ``--batch-size`` is per process; the effective batch is
batch size × ``--grad-accum`` × processes. bf16 autocast on CUDA. Multi-GPU:
``torchrun --nproc_per_node=K -m pipeline pretrain ...`` (DDP; rank 0 logs and saves). Each
process draws dropout from a stream of its own (seeded by ``(seed, rank)``); the masks are functions of
``(seed, epoch, example)``, and the MLM loss is averaged over the whole batch's masked tokens, so K processes
train the weights one process would (dropout 0). The log's ``tokens`` are summed over the processes.

``--data`` takes the token dataset as one file or several (one per sample shard, read in path order).

Input: ``--input sentences`` (default; one sentence per example, as tokenize cut it: ULR-BERT §4) or
``packed`` (the sentences concatenated and cut into ``--max-length`` blocks, default 512: BURT §5.2,
:mod:`pipeline.pretrain.packing`; masking objectives only). ``--batching length-grouped`` (the default
for sentences) puts sentences of similar length in a batch, ``random`` does not
(:mod:`pipeline.pretrain.batching`); the log and ``stats.json`` give the share of padding.

Outputs. ``OUT/`` appears only when training completes: ``save_pretrained`` model (encoder + MLM head) and
tokenizer, sentence-transformers module files, ``pretrain_config.json`` (resolved settings + provenance) and
``train_log.jsonl`` (one line per optimizer step: every loss term, lr, tokens, tokens/s, the step's compute seconds
``step_seconds``: :mod:`pipeline.pretrain.step_timer`, its mask rate) and ``stats.json`` (the run's masking
statistics: :mod:`pipeline.pretrain.masking_stats`). While training, everything lives in ``.OUT.work/`` beside it:
the memory-mapped copy of the data, the log and ``checkpoint/`` (every ``--save-every`` steps). ``--resume``
continues exactly from that checkpoint, or starts a fresh run when there is none (so a workflow can always pass it);
a checkpoint made with other settings or data is refused (exit status 2, naming the differences) rather than thrown
away, since it may hold days of GPU work: ``--restart`` discards it and starts afresh. The work directory is deleted
on success, except that ``--keep-checkpoint`` moves the final checkpoint to ``OUT/checkpoint/``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import shutil
import time
from pathlib import Path

import numpy as np
import torch
from torch.nn.parallel import DistributedDataParallel
from transformers import get_linear_schedule_with_warmup

from pipeline import provenance, tracking
from pipeline.arguments import (
    BATCH,
    EPOCHS,
    EXAMPLES,
    FRACTION,
    MAX_LENGTH,
    NON_NEGATIVE,
    POSITIVE_STEPS,
    PROBABILITY,
    RATE,
    SEED,
    STEPS,
    WORKERS,
    integer,
)
from pipeline.atomic import json_text, writing
from pipeline.errors import InputError
from pipeline.models import runtime
from pipeline.models.directory import AtomicDir, check_output_dir, save_model, vocab_sha256
from pipeline.models.loading import (
    generator_for,
    is_electra_discriminator,
    load_discriminator,
    load_masked_lm,
    load_tokenizer,
)
from pipeline.models.tokenizer_check import MIN_MAX_LENGTH
from pipeline.objective_registry import lookup
from pipeline.output_guard import refuse_inputs
from pipeline.pretrain import checkpoint, heldout
from pipeline.pretrain.batching import BATCHINGS, PaddingMeter, epoch_batches, example_lengths, padding_counts
from pipeline.pretrain.checkpoint import RESUME_KEYS
from pipeline.pretrain.loader import epoch_loader
from pipeline.pretrain.masking_stats import MaskingStats, gather
from pipeline.pretrain.misad import choice_for, choose_by_mlm_score
from pipeline.pretrain.objectives import (
    MISAD_SOURCES,
    OBJECTIVES,
    RELEASED_NEEDS,
    PretrainingModel,
    add_objective_arguments,
    make_data,
)
from pipeline.pretrain.packing import (
    INPUTS,
    PACKED_LENGTH,
    PackedDataset,
    check_input,
    check_positions,
    sentence_length,
)
from pipeline.pretrain.pooler import export_pooler
from pipeline.pretrain.step_timer import StepTimer
from pipeline.pretrain.token_dataset import TokenDataset, build_arrow_cache, check_data, data_fingerprint
from pipeline.progress import Progress
from pipeline.shards import input_files

log = logging.getLogger("pipeline.pretrain")


class TrainingHalted(Exception):
    """Raised by ``train(..., halt_after=N)``: a stand-in for a killed run, for resume tests."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data",
        required=True,
        nargs="+",
        type=Path,
        help="token dataset (tokenize stage): files or directories of shards, in any order",
    )
    parser.add_argument("--model", required=True, help="backbone: hub id or local path")
    parser.add_argument("--objective", required=True, choices=OBJECTIVES)
    parser.add_argument(
        "--generator",
        help="ELECTRA: the generator paired with the --model discriminator (default: "
        "the registry's pair, or MODEL/generator)",
    )
    parser.add_argument("--out", required=True, type=Path, help="output model directory")
    add_objective_arguments(parser)  # MiSAD's and the masking's own options
    parser.add_argument(
        "--input",
        choices=INPUTS,
        default=INPUTS[0],
        help="sentences: one sentence per input (ULR-BERT §4); packed: the sentences concatenated and cut into "
        "--max-length blocks (BURT §5.2; mlm, wwm, burt, spanbert, entity only)",
    )
    parser.add_argument(
        "--max-length",
        type=integer(MIN_MAX_LENGTH, MAX_LENGTH),
        help=f"tokens per input: packed, the block length (default {PACKED_LENGTH}); sentences, the token "
        "data's (tokenize --max-length; another is refused)",
    )
    parser.add_argument(
        "--batching",
        choices=BATCHINGS,
        help="which examples share a batch: length-grouped (default for sentences: less padding) or random "
        "(default for packed)",
    )
    parser.add_argument("--max-steps", type=STEPS, default=0, help="optimizer steps (0: --epochs over the data)")
    parser.add_argument("--epochs", type=EPOCHS, default=1.0)
    parser.add_argument("--batch-size", type=BATCH, default=64, help="sentences per process and micro-batch")
    parser.add_argument("--grad-accum", type=BATCH, default=1)
    parser.add_argument("--lr", type=RATE, default=5e-5)
    parser.add_argument("--warmup", type=FRACTION, default=0.1, help="fraction of steps with linear warm-up")
    parser.add_argument(
        "--weight-decay",
        type=NON_NEGATIVE,
        default=0.0,
        help="AdamW weight decay, never on biases and norms (default 0: neither paper states one; docs/method.md §3)",
    )
    parser.add_argument("--dropout", type=FRACTION, default=0.1)
    parser.add_argument("--max-grad-norm", type=RATE, default=1.0)
    parser.add_argument("--mlm-probability", type=PROBABILITY, default=0.15)
    parser.add_argument("--seed", type=SEED, default=0)
    parser.add_argument("--save-every", type=STEPS, default=0, help="checkpoint every N steps (0: never)")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue from the checkpoint in .OUT.work/ (refused, exit 2, if it was made with other settings)",
    )
    parser.add_argument("--restart", action="store_true", help="discard any checkpoint in .OUT.work/ and start afresh")
    parser.add_argument("--keep-checkpoint", action="store_true", help="keep the final checkpoint in OUT/checkpoint")
    parser.add_argument("--num-workers", type=WORKERS, default=0, help="data-loader worker processes (loader.py)")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model (CUDA; see docs/stages)")
    parser.add_argument("--heldout", type=EXAMPLES, default=0, help="sentences set aside for held-out evaluation")
    parser.add_argument("--eval-every", type=POSITIVE_STEPS, default=100, help="held-out evaluation every N steps")
    tracking.add_arguments(parser)  # live curves (pipeline/tracking.py)


def dropout_seed(seed: int, rank: int) -> int:
    """The seed of a process's own stream for dropout (and any other global-RNG draw)."""
    return int(np.random.SeedSequence([seed, rank, 4]).generate_state(1)[0])


def optimizer_for(model, lr: float, weight_decay: float) -> torch.optim.AdamW:
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if param.requires_grad:
            (no_decay if param.ndim < 2 or "norm" in name.lower() else decay).append(param)
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}], lr=lr
    )


def to_device(batch: dict, device) -> dict:
    return {k: v.to(device, non_blocking=True) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}


def prepare(batch: dict, module: PretrainingModel, collator, tokenizer, device) -> dict:
    """The batch on the device; for MiSAD by MLM score, first choose w with the current model."""
    if "candidates" in batch:
        with runtime.autocast(device):
            batch = choose_by_mlm_score(module.mlm, batch, collator, tokenizer.mask_token_id, device)
    return to_device(batch, device)


def forward_backward(model, batch: dict, grad_accum: int, device, defer_sync=False, weight=1.0) -> dict[str, float]:
    """One micro-batch: forward under autocast, backward of loss x ``weight`` / grad_accum. ``defer_sync``: a DDP
    micro-batch before the last of an accumulation, whose gradients need no all-reduce yet."""
    context = model.no_sync() if defer_sync else contextlib.nullcontext()
    with context:
        with runtime.autocast(device):
            losses = model(**batch)
        (losses["loss"] * weight / grad_accum).backward()
    return {key: value.item() for key, value in losses.items()}


def optimizer_step(module, optimizer, scheduler, max_grad_norm: float) -> None:
    torch.nn.utils.clip_grad_norm_(module.parameters(), max_grad_norm)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)


def run(args: argparse.Namespace) -> None:
    train(args)


def train(args: argparse.Namespace, halt_after: int | None = None) -> Path:
    out = Path(args.out)
    refuse_inputs(out, None, [args.model], args.data)  # never the backbone it starts from, nor its data
    check_output_dir(out)  # before any work: --out may replace only an earlier model of ours
    world = runtime.init_world()
    try:
        with writing(out.with_name(f".{out.name}.work")):  # a full disk in the work folder names it
            return _train(args, world, halt_after)
    finally:
        runtime.close_world(world)


def _train(args, world: runtime.World, halt_after: int | None) -> Path:
    device = runtime.pick_device(world.local_rank)
    check_input(args)  # before any work: packed input only for the masking objectives
    if args.misad_loss == "released" and lookup(args.objective).loss != "misad":  # a setting that would do nothing
        raise InputError("--misad-loss", f"released is MiSAD's loss (ULR-BERT §3.2); {args.objective} has none")
    if not world.is_main:
        log.setLevel(logging.WARNING)  # one progress log per run, not per process
    out = Path(args.out)
    work = out.with_name(f".{out.name}.work")
    tokenizer = load_tokenizer(args.model)
    data_files = input_files(args.data, unique_names=False)
    data_record = check_data(data_files, tokenizer)
    data_prints, data_sha = data_fingerprint(data_files)
    if args.input == "sentences":
        args.max_length = sentence_length(args.max_length, data_record)
    if args.pooling == "pooler" and args.objective not in MISAD_SOURCES:
        raise InputError(args.model, f"--pooling pooler is MiSAD's (ULR-BERT §3.2); {args.objective} trains no pooler")
    if lookup(args.objective).loss == "misad" and args.misad_loss == "released" and args.pooling != "pooler":
        raise InputError("--misad-loss", RELEASED_NEEDS)
    args.misad_choice = choice_for(MISAD_SOURCES.get(args.objective, "ngram"), args.misad_choice)  # as it runs
    settings = {key: getattr(args, key) for key in RESUME_KEYS}
    settings.update(data_sha256=data_sha, world_size=world.size)
    resumable = args.resume and not args.restart and checkpoint.exists(work / "checkpoint")
    changed = resumable and checkpoint.differences(work / "checkpoint", settings)
    if changed:  # every process raises, so that none waits at a barrier for the others
        raise InputError(
            work / "checkpoint",
            f"checkpoint made with other settings ({changed}); pass --restart to discard it and start afresh",
        )
    if world.is_main:
        if args.restart and work.exists():
            log.warning("%s: --restart: discarding the work directory and its checkpoint", work)
        if not resumable:
            shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True, exist_ok=True)
        if not (work / "tokens.arrow").exists():
            build_arrow_cache(data_files, work / "tokens.arrow")
    runtime.barrier(world)
    dataset = TokenDataset(work / "tokens.arrow")
    if len(dataset) == 0:
        raise InputError(data_files[0], "the token dataset is empty")
    dataset, held = heldout.set_aside(args, dataset, tokenizer)  # --heldout: never trained on
    max_length = int(args.max_length or dataset.lengths().max())

    runtime.seed_everything(args.seed)
    discriminator = None
    if is_electra_discriminator(args.model):  # ELECTRA: generator MLM + replaced-token detection
        if lookup(args.objective).loss == "misad" and args.misad_loss == "released":
            raise InputError("--misad-loss", RELEASED_NEEDS)
        args.generator = generator_for(args.model, args.generator)
        discriminator = load_discriminator(args.model, args.dropout)
        mlm_model, new_head = load_masked_lm(args.generator, args.dropout)
    elif args.generator:
        raise InputError(args.model, "--generator is for an ELECTRA discriminator (ElectraForPreTraining)")
    else:
        mlm_model, new_head = load_masked_lm(args.model, args.dropout)
    embeddings = mlm_model.get_input_embeddings().num_embeddings
    if embeddings < len(tokenizer):
        raise InputError(
            args.model, f"the tokenizer has {len(tokenizer)} tokens but the model only {embeddings} embeddings"
        )
    positions = getattr(mlm_model.config, "max_position_embeddings", None)
    check_positions(args.input, max_length if args.input == "packed" else int(dataset.lengths().max()), positions)
    module = PretrainingModel(mlm_model, args.objective, args.pooling, args.dropout, discriminator, args.misad_loss)
    module = module.to(device)
    new_pair_head = module.start_pair_head(args.model)  # NSP / SOP: from BERT's pre-trained head where there is one
    new_pooler = module.start_pooler(args.model)  # MiSAD's pooler: the checkpoint's, or fresh (released loss)
    model = (
        DistributedDataParallel(module, device_ids=[device.index] if device.type == "cuda" else None)
        if world.size > 1
        else module
    )  # DDP starts every replica from rank 0's weights
    if args.compile:  # kernels fused by TorchInductor; checkpoints keep saving the uncompiled module
        model = torch.compile(model)
    runtime.seed_everything(dropout_seed(args.seed, world.rank))
    packed = PackedDataset(dataset, tokenizer, max_length) if args.input == "packed" else None
    examples, collator = make_data(
        args.objective,
        packed or dataset,
        tokenizer,
        args.seed,
        max_length,
        args.misad_choice,
        args.misad_max_candidates,
        args.ngram_pool,
        args.mlm_probability,
        args.span_max_words,
        args.misad_loss,
    )
    lengths = example_lengths(examples, dataset) if args.batching == "length-grouped" else None
    per_epoch = len(epoch_batches(len(examples), 0, args.seed, args.batch_size, world, lengths))
    if per_epoch < args.grad_accum:
        raise InputError(
            data_files[0],
            f"{len(examples)} examples make {per_epoch} batch(es) per process and epoch, "
            f"fewer than --grad-accum {args.grad_accum}",
        )
    total_steps = args.max_steps or max(1, math.floor(args.epochs * per_epoch / args.grad_accum))
    optimizer = optimizer_for(module, args.lr, args.weight_decay)
    scheduler = get_linear_schedule_with_warmup(optimizer, math.ceil(args.warmup * total_steps), total_steps)

    position = {"epoch": 0, "batches_done": 0, "step": 0}
    if args.resume and checkpoint.exists(work / "checkpoint"):
        position = checkpoint.load(work / "checkpoint", world, module, optimizer, scheduler, settings)
        log.info(
            "resumed at step %d (epoch %d, batch %d)", position["step"], position["epoch"], position["batches_done"]
        )
    log_path = work / "train_log.jsonl"
    if world.is_main:
        kept = log_path.read_text().splitlines() if log_path.exists() else []
        log_path.write_text("".join(line + "\n" for line in kept if json.loads(line)["step"] <= position["step"]))

    config = {
        **{
            k: (str(v) if isinstance(v, Path) else [str(p) for p in v] if k == "data" else v)
            for k, v in vars(args).items()
            if k not in ("run", "verbose", "stage", "report_to", "tracking_dir")  # trackers change no result
        },
        "total_steps": total_steps,
        "warmup_steps": math.ceil(args.warmup * total_steps),
        "batches_per_epoch": per_epoch,
        "examples": len(examples),
        "world_size": world.size,
        "effective_batch_size": args.batch_size * args.grad_accum * world.size,
        "device": device.type,
        "precision": "bf16-autocast" if device.type == "cuda" else "fp32",
        "attention": mlm_model.config._attn_implementation,  # sdpa where the architecture has it
        "max_length": max_length,
        "new_mlm_head": new_head,
        "new_pair_head": new_pair_head,
        "new_pooler": new_pooler,
        "vocab_sha256": vocab_sha256(tokenizer),
    }
    if packed is not None:  # BURT §5.2's blocks: how many, and the marked spans their boundaries cut
        config["packing"] = {"blocks": len(packed), "rows": len(dataset), "content_tokens": packed.content_tokens}
        config["packing"]["cut_spans"] = packed.cut_spans()
    record = provenance.make("pretrain", config, inputs=data_prints, seed=args.seed)
    run_stats = MaskingStats.from_dict(position["masking"]) if "masking" in position else MaskingStats()
    run_padding = PaddingMeter.from_dict(position.get("padding", {}))

    def save_checkpoint(epoch: int, done: int, step: int) -> None:
        """The data position and the run's totals so far beside the model, optimizer and RNG states."""
        totals = {"masking": run_stats.as_dict(), "padding": run_padding.as_dict()}
        at = {"epoch": epoch, "batches_done": done, "step": step, **totals}
        checkpoint.save(work / "checkpoint", world, module, optimizer, scheduler, at, settings)

    step, epoch, done = position["step"], position["epoch"], position["batches_done"]
    meter, timer = Progress(log, "steps", total=total_steps), StepTimer(device)
    meter.count = step
    loader_rng = torch.Generator().manual_seed(args.seed)  # keeps worker seeding off the global (dropout) RNG
    model.train()
    curves = tracking.Tracker(args if world.is_main else None, Path(args.out).name, config)  # live curves
    with log_path.open("a") as log_file, curves:
        if held is not None and step == 0 and world.is_main:  # where the held-out accuracy starts from
            start = {"step": 0, **held.evaluate(module.mlm, device)}
            log_file.write(json.dumps(start) + "\n")
            curves.log(start, 0)
        while step < total_steps:
            collator.set_epoch(epoch)
            if hasattr(examples, "set_epoch"):
                examples.set_epoch(epoch)
            if lengths is not None:  # this epoch's: an NSP negative's second sentence is drawn per epoch
                lengths = example_lengths(examples, dataset)
            batches = epoch_batches(len(examples), epoch, args.seed, args.batch_size, world, lengths)
            # an epoch ends on an optimizer step: drop the tail that cannot fill a whole accumulation
            batches = batches[: len(batches) // args.grad_accum * args.grad_accum] or batches
            loader = epoch_loader(examples, batches[done:], collator, args.num_workers, device, loader_rng)
            sums, started, micro, step_stats, padding = {}, time.monotonic(), 0, MaskingStats(), PaddingMeter()
            for batch in loader:
                timer.start()  # the step's compute from its first micro-batch on, no wait for the loader in it
                stats = batch.pop("masking_stats", None)
                batch = prepare(batch, module, collator, tokenizer, device)
                step_stats.add(stats).add(batch.pop("masking_stats", None))
                micro += 1
                done += 1
                sync = micro % args.grad_accum == 0
                weight = module.global_token_weight(batch, world, device)
                losses = forward_backward(model, batch, args.grad_accum, device, world.size > 1 and not sync, weight)
                for key, value in losses.items():
                    sums[key] = sums.get(key, 0.0) + value / args.grad_accum
                padding.add(padding_counts(batch))
                if not sync:
                    continue
                lr = scheduler.get_last_lr()[0]  # the rate this step uses (the scheduler moves on after it)
                optimizer_step(module, optimizer, scheduler, args.max_grad_norm)
                step += 1
                seconds = time.monotonic() - started
                step_stats = gather(step_stats, world)
                padding = padding.summed(world, device)  # the step's pad and all tokens, over the processes
                all_tokens = sum(total - pad for pad, total in padding.sums.values())
                losses = {k: runtime.all_mean(v, world, device) for k, v in sorted(sums.items())}
                counts = step_stats.counts
                entry = {
                    "step": step,
                    "epoch": epoch,
                    "lr": lr,
                    **losses,
                    "tokens": all_tokens,
                    "tokens_per_s": round(all_tokens / seconds, 1),
                    "step_seconds": timer.stop(),
                    "mask_rate": round(counts["masked_tokens"] / max(counts["eligible_tokens"], 1), 5),
                    **padding.shares(),
                }
                if held is not None and held.due(step, total_steps) and world.is_main:
                    entry.update(held.evaluate(module.mlm, device))
                for key in ("misad_fallbacks", "nsp_relabelled"):
                    if counts[key]:
                        entry[key] = counts[key]
                if device.type == "cuda":
                    entry["gpu_memory_gb"] = round(torch.cuda.max_memory_allocated(device) / 1e9, 3)
                run_stats.add(step_stats)
                run_padding.add(padding.sums)
                if world.is_main:
                    log_file.write(json.dumps(entry) + "\n")
                    log_file.flush()
                    curves.log(entry, step)
                meter.update(1, position=step, info={"loss": float(losses["loss"])})
                sums, started, step_stats, padding = {}, time.monotonic(), MaskingStats(), PaddingMeter()
                if args.save_every and step % args.save_every == 0 and step < total_steps:
                    save_checkpoint(epoch, done, step)
                if halt_after is not None and step >= halt_after:
                    raise TrainingHalted(f"halted after step {step}")
                if step >= total_steps:
                    break
            if step < total_steps:
                epoch, done = epoch + 1, 0
    meter.done()
    log.info("masking: %s", run_stats.line())
    if args.keep_checkpoint:
        save_checkpoint(epoch, done, step)
    if world.is_main:
        with AtomicDir(out) as tmp:
            save_model(tmp, module.encoder, tokenizer, max_length, args.pooling)
            if hasattr(module, "pooler"):  # AutoModel's pooler_output and sentence-transformers' 2_Dense
                export_pooler(tmp, module.pooler, module.encoder.config)
            if module.discriminator is not None:  # the pair, so that it can be continued
                module.mlm.save_pretrained(tmp / "generator")
                tokenizer.save_pretrained(tmp / "generator")
            (tmp / "pretrain_config.json").write_text(json_text({**config, "provenance": record}))
            (tmp / "stats.json").write_text(
                json_text({"steps": step, **run_padding.shares(), "masking": run_stats.summary(), "provenance": record})
            )
            shutil.copy(log_path, tmp / "train_log.jsonl")
            if args.keep_checkpoint:
                shutil.move(work / "checkpoint", tmp / "checkpoint")
        shutil.rmtree(work, ignore_errors=True)
        log.info("%s: %d steps of %s → %s", args.model, step, args.objective, out)
    runtime.barrier(world)
    return out
