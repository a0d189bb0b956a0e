"""Stage ``finetune``: a Siamese encoder fine-tuned on NLI (+ PPDB) with sentence-transformers (docs/method.md §4).

Recipes (``--recipe``): ``twin`` (BURT twin §3: NLI + PPDB paraphrase identification + PPDB
pairwise text classification, NLI every second batch; ``--objectives`` picks Table 4's subsets),
``sbert-nli`` (NLI with the softmax head: the SBERT / SBURT rows) and ``nli-mnrl`` (entailment
pairs with contradiction hard negatives under MultipleNegativesRankingLoss).

Inputs: ``--nli`` (repeatable) is an SNLI / MultiNLI jsonl or CSV file, ``DIR:SPLIT`` (the
3-file layout ``s1.SPLIT``, ``s2.SPLIT``, ``labels.SPLIT``) or ``snli_1.0.zip:SPLIT``; the sources
are merged. ``--ppdb`` is a PPDB 2.0 pack (`` ||| ``-separated, with the entailment relation).
``--model`` is a checkpoint directory, a hub id or ``package:NAME``.

Optimisation: the recipe's optimiser (:data:`pipeline.finetune.recipes.OPTIMISERS`: twin §3.3's
Adam with β2 0.98 and ε 1e-9, no weight decay; SBERT's AdamW with ε 1e-6 and weight decay 0.01
for ``sbert-nli``), linear warm-up over
the first 10% of the steps then linear decay, batch 16, dropout 0.1, gradient clipping at 1.0;
bf16 autocast on CUDA. Several GPUs: ``torchrun --nproc_per_node=K -m pipeline finetune ...``.

Budget (``--epochs`` or ``--max-steps``). The papers train a fixed schedule measured in passes
over the NLI data: SBERT one epoch (Reimers & Gurevych 2019 §4), the twin structure 2 (ALBURT
§3: "The models is trained for 2 epochs"). ``--epochs E`` sets the optimizer steps to E passes
(:func:`pipeline.finetune.recipes.steps_per_epoch`): for the twin recipe, one pass over NLI is
twice as many batches when PPDB tasks take every second turn, so Table 4's ablation rows all see
the same NLI data. ``--max-steps`` fixes the steps instead (CPU-sized runs).

Evaluation while training (``--eval-data DATA_ROOT --eval-steps N``): every N steps the model
is scored on STS-B dev (never a test set) and on the STS test sets and the universal analogy
(``--eval-tasks``), through the sentence-transformers evaluators of
:mod:`pipeline.finetune.evaluator`, for the log. The papers select no checkpoint: the model
saved is the last step's. ``--select-best`` saves instead the checkpoint best on STS-B dev
(``load_best_model_at_end``), an option beyond the papers.

Outputs. ``OUT/`` appears only when training completes: a sentence-transformers model directory
(loads with ``SentenceTransformer(OUT)`` and, the encoder being at its root, ``AutoModel``),
``finetune_config.json`` (resolved settings, data counts and provenance), ``train_log.jsonl``
and ``heads.pt`` (the task heads). While training, everything lives in ``.OUT.work/``;
``--resume`` continues from its last checkpoint (every ``--save-every`` steps) when it was made
with the same settings and data, and starts afresh otherwise.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import shutil
from pathlib import Path

from pipeline import provenance, tracking
from pipeline.arguments import BATCH, EPOCHS, FRACTION, NEGATIVES, POSITIVE_STEPS, RATE, SEED, STEPS, TOKENS, WORKERS
from pipeline.atomic import json_text, writing
from pipeline.errors import InputError
from pipeline.finetune import ppdb, recipes
from pipeline.finetune.resume_check import SETTINGS_BYTES, is_regular_file, resumed_log, verify_checkpoint
from pipeline.models.directory import AtomicDir, check_output_dir
from pipeline.models.pooling import POOLINGS
from pipeline.output_guard import refuse_inputs
from pipeline.tasks import nli

log = logging.getLogger("pipeline.finetune")

RESUME_KEYS = (
    "model",
    "recipe",
    "objectives",
    "concatenation",
    "pooling",
    "negatives",
    "max_steps",
    "epochs",
    "batch_size",
    "lr",
    "warmup",
    "dropout",
    "max_length",
    "seed",
    "eval_steps",
    "eval_tasks",
    "select_best",
)
EVAL_TASKS = ("stsb-dev", "sts", "analogy")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="checkpoint directory, hub id or package:NAME")
    parser.add_argument("--recipe", required=True, choices=recipes.RECIPES)
    parser.add_argument(
        "--nli",
        required=True,
        action="append",
        help="NLI jsonl/CSV, DIR:SPLIT or ARCHIVE.zip:SPLIT (repeat to merge SNLI and MultiNLI)",
    )
    parser.add_argument("--ppdb", type=Path, help="PPDB 2.0 pack with entailment relations (twin)")
    budget = parser.add_mutually_exclusive_group(required=True)
    budget.add_argument("--max-steps", type=POSITIVE_STEPS, help="optimizer steps")
    budget.add_argument("--epochs", type=EPOCHS, help="passes over the NLI data (the papers' unit)")
    parser.add_argument("--batch-size", type=BATCH, default=16, help="pairs per batch and process (paper: 16)")
    parser.add_argument("--seed", type=SEED, default=0)
    parser.add_argument("--out", required=True, type=Path, help="output model directory")
    parser.add_argument(
        "--objectives", choices=recipes.OBJECTIVES, default="nli+pi+ptc", help="twin: the tasks trained (Table 4)"
    )
    parser.add_argument(
        "--concatenation",
        choices=tuple(recipes.CONCATENATIONS),
        default="uv-diff",
        help="pair features of the softmax heads (Table 4)",
    )
    parser.add_argument("--pooling", choices=POOLINGS, default="mean")
    parser.add_argument("--negatives", type=NEGATIVES, default=3, help="k: sampled negatives per PPDB pair (PI)")
    parser.add_argument("--lr", type=RATE, default=2e-5)
    parser.add_argument("--warmup", type=FRACTION, default=0.1, help="fraction of steps with linear warm-up")
    parser.add_argument("--dropout", type=FRACTION, default=0.1)
    parser.add_argument("--max-length", type=TOKENS, default=128, help="tokens per sequence")
    parser.add_argument("--eval-data", type=Path, help="data root for the evaluation while training")
    parser.add_argument(
        "--eval-steps", type=STEPS, default=0, help="evaluate (and keep a checkpoint) every N steps; 0: never"
    )
    parser.add_argument(
        "--eval-tasks",
        default="stsb-dev,sts,analogy",
        help="comma-separated: stsb-dev (selection) and, logged only, sts, analogy",
    )
    parser.add_argument(
        "--select-best",
        action="store_true",
        help="save the checkpoint best on STS-B dev, not the last (needs --eval-steps)",
    )
    parser.add_argument("--save-every", type=STEPS, default=0, help="resume checkpoint every N steps (0: never)")
    parser.add_argument("--resume", action="store_true", help="continue from the last checkpoint in .OUT.work/")
    parser.add_argument("--num-workers", type=WORKERS, default=0, help="data-loader worker processes")
    tracking.add_arguments(parser)  # live curves (pipeline/tracking.py)


def check_args(args) -> None:
    if (
        (args.max_steps is not None and args.max_steps < 1)
        or args.batch_size < 1
        or not 0 <= args.warmup < 1
        or args.negatives < 1
    ):
        raise InputError(
            "--max-steps/--batch-size/--warmup/--negatives",
            "need max steps >= 1, batch size >= 1, 0 <= warmup < 1, negatives >= 1",
        )
    tasks = [task for task in args.eval_tasks.split(",") if task]
    if unknown := set(tasks) - set(EVAL_TASKS):
        raise InputError("--eval-tasks", f"unknown {sorted(unknown)}; expected some of {', '.join(EVAL_TASKS)}")
    if args.eval_steps and args.eval_data is None:
        raise InputError("--eval-steps", "evaluation while training needs --eval-data DATA_ROOT")
    if args.select_best and not args.eval_steps:
        raise InputError("--select-best", "checkpoint selection needs --eval-steps N")
    if args.select_best and "stsb-dev" not in tasks:
        raise InputError("--eval-tasks", "checkpoint selection needs stsb-dev")
    inputs = [path for path in (*(args.nli or []), args.ppdb) if path is not None and Path(str(path)).exists()]
    refuse_inputs(args.out, args.eval_data, [args.model], inputs)  # never the model it starts from, nor its data


def load_data(args) -> tuple[dict, dict]:
    """Task columns and a summary of the data (counts, files) for the config."""
    nli_pairs = nli.read_sources(args.nli)
    pairs = ppdb.read(args.ppdb) if args.ppdb else None
    columns = recipes.training_columns(
        args.recipe, args.objectives, nli_pairs, pairs, args.negatives, args.seed, args.ppdb
    )
    files = list(nli_pairs.files) + ([args.ppdb] if args.ppdb else [])
    summary = {
        "nli_pairs": len(nli_pairs),
        "nli_skipped_no_gold": nli_pairs.skipped,
        "ppdb_pairs": len(pairs) if pairs else 0,
        "examples": {task: len(next(iter(cols.values()))) for task, cols in columns.items()},
        "files": [str(f) for f in files],
    }
    return columns, summary


def evaluators(args):
    from pipeline.finetune.evaluator import evaluators_for

    tasks = [task for task in args.eval_tasks.split(",") if task]
    return evaluators_for(args.eval_data, tasks, batch_size=64, max_length=args.max_length)


def training_arguments(args, work: Path, total_warmup: int, twin: bool):
    """The stage's trainer arguments: the recipe's optimiser and the shared settings
    (:func:`pipeline.finetune.recipes.trainer_arguments`), with the stage's trackers, data loading (full batches,
    the recipe's batch sampler, the twin schedule), checkpoints and evaluation while training."""
    import torch
    from sentence_transformers.base.sampler import BatchSamplers

    from pipeline.finetune.schedule import PaperScheduleBatchSampler

    evaluate = args.eval_steps > 0
    save_steps = args.eval_steps if evaluate else args.save_every
    return recipes.trainer_arguments(
        work,
        recipes.OPTIMISERS[args.recipe],
        max_steps=args.max_steps,
        batch_size=args.batch_size,
        lr=args.lr,
        warmup_steps=total_warmup,
        seed=args.seed,
        report_to=tracking.trainer_report_to(args) or "none",  # live curves (pipeline/tracking.py)
        dataloader_drop_last=True,
        dataloader_num_workers=args.num_workers,
        dataloader_pin_memory=torch.cuda.is_available(),
        save_strategy="steps" if save_steps else "no",
        save_steps=save_steps or 500,
        save_total_limit=2 if args.select_best else 1,  # latest (+ best)
        eval_strategy="steps" if evaluate else "no",
        eval_steps=args.eval_steps or None,
        load_best_model_at_end=args.select_best,
        metric_for_best_model="eval_stsb-dev_spearman" if args.select_best else None,
        greater_is_better=True,
        batch_sampler=BatchSamplers.NO_DUPLICATES if args.recipe == "nli-mnrl" else BatchSamplers.BATCH_SAMPLER,
        multi_dataset_batch_sampler=PaperScheduleBatchSampler if twin else "round_robin",
    )


def settings_of(args, summary: dict) -> dict:
    settings = {key: getattr(args, key) for key in RESUME_KEYS}
    settings["data"] = [provenance.file_fingerprint(f)["sha256"] for f in summary["files"] if Path(f).is_file()]
    return settings


def _same_settings(saved: Path, settings: dict) -> bool:
    """Was the work folder's checkpoint made with ``settings`` (an unreadable record counts as no)."""
    try:
        if not is_regular_file(saved, SETTINGS_BYTES):  # a FIFO would block the read; a link, a huge file: not ours
            return False
        return json.loads(saved.read_text(encoding="utf-8")) == json.loads(json.dumps(settings))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return False


def prepare_work(work: Path, settings: dict, resume: bool, is_main: bool) -> str | None:
    """The checkpoint to resume from, or None (the work directory is then emptied)."""
    from transformers.trainer_utils import get_last_checkpoint

    saved = work / "settings.json"
    last = get_last_checkpoint(str(work)) if resume and work.is_dir() else None
    if last and not _same_settings(saved, settings):
        log.warning("%s: checkpoint made with other settings or data; starting afresh", work)
        last = None
    if is_main and last is None:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        saved.write_text(json_text(settings))
    return last


def build_trainer(args, columns: dict, work: Path, log_path: Path):
    """The stage's trainer: the encoder, one loss (head) per task, the schedule, the step log."""
    from datasets import Dataset
    from transformers.trainer_utils import set_seed

    from pipeline.finetune import encoder
    from pipeline.finetune.twin_trainer import StepLog, TwinTrainer

    set_seed(args.seed)  # the heads are initialised from this
    model = encoder.build(args.model, args.pooling, args.max_length, args.dropout)
    losses = recipes.losses(args.recipe, list(columns), model, args.concatenation)
    datasets = {task: Dataset.from_dict(cols) for task, cols in columns.items()}
    warmup = math.ceil(args.warmup * args.max_steps)
    trainer = TwinTrainer(
        model=model,
        args=training_arguments(args, work, warmup, args.recipe == "twin"),
        train_dataset=datasets,
        loss=losses,
        evaluator=evaluators(args) if args.eval_steps else None,
    )
    trainer.add_callback(StepLog(log_path, trainer))
    for callback in tracking.trainer_callbacks(args):  # live curves (pipeline/tracking.py)
        trainer.add_callback(callback)
    return trainer


def run(args: argparse.Namespace) -> None:
    train(args)


def train(args: argparse.Namespace, halt_after: int | None = None) -> Path:
    check_args(args)
    out = Path(args.out)
    check_output_dir(out)  # before any work: --out may replace only an earlier model of ours
    columns, summary = load_data(args)
    if args.epochs is not None:  # the papers' unit: passes over the NLI data, on every process's batches
        world = int(os.environ.get("WORLD_SIZE", "1"))
        per_epoch = recipes.steps_per_epoch(args.recipe, columns, args.batch_size * world)
        args.max_steps = max(1, math.ceil(args.epochs * per_epoch))
        summary["steps_per_epoch"] = per_epoch
        log.info("%s epochs of %d steps: %d optimizer steps", args.epochs, per_epoch, args.max_steps)
    work = out.with_name(f".{out.name}.work")
    with writing(work):  # a full disk in the work folder (log, trainer checkpoints) names it
        return _train(args, columns, summary, out, work, halt_after)


def _train(args, columns: dict, summary: dict, out: Path, work: Path, halt_after: int | None) -> Path:
    import torch
    import torch.distributed as dist

    from pipeline.finetune.twin_trainer import HaltAfter, head_state
    from pipeline.models.fingerprint import checkpoint_fingerprint
    from pipeline.models.spec import resolve_path

    settings = settings_of(args, summary)
    rank = int(os.environ.get("RANK", "0"))  # torchrun: one process per GPU; rank 0 keeps the files
    resume_from = prepare_work(work, settings, args.resume, rank == 0)
    log_path = work / "train_log.jsonl"
    resumed_step = int(resume_from.rsplit("-", 1)[-1]) if resume_from else 0
    if rank == 0:
        log_path.write_text(resumed_log(log_path, resumed_step))  # checked: a regular file of step-log lines

    trainer = build_trainer(args, columns, work, log_path)
    model, tasks, twin = trainer.model, list(columns), args.recipe == "twin"
    if resume_from:
        verify_checkpoint(Path(resume_from), trainer)  # complete, regular files, a step within the run
    warmup = math.ceil(args.warmup * args.max_steps)
    if halt_after is not None:
        trainer.add_callback(HaltAfter(halt_after))
    if resume_from:
        log.info("resuming from %s", resume_from)
    trainer.train(resume_from_checkpoint=resume_from)
    if dist.is_available() and dist.is_initialized():
        # every rank leaves train() (whose last checkpoint each may still touch) before rank 0 saves the
        # model and removes the work folder: under torchrun, rank 1 read checkpoint-N/README.md after
        # rank 0 had deleted it (found by the paper-en rehearsal, docs/stages/rehearsal.md)
        dist.barrier()

    config = {
        **{
            k: (str(v) if isinstance(v, Path) else v)
            for k, v in vars(args).items()
            if k not in ("run", "verbose", "stage", "report_to", "tracking_dir")  # trackers change no result
        },
        "tasks": tasks,
        "warmup_steps": warmup,
        "schedule": "paper" if twin else "single task",
        "optimizer": recipes.OPTIMISERS[args.recipe].record(),
        "world_size": trainer.args.world_size,
        "effective_batch_size": args.batch_size * trainer.args.world_size,
        "precision": "bf16-autocast" if trainer.args.bf16 else "fp32",
        "data": summary,
        "best_checkpoint_step": (
            int(trainer.state.best_model_checkpoint.rsplit("-", 1)[-1]) if trainer.state.best_model_checkpoint else None
        ),
        "best_metric": trainer.state.best_metric,
    }
    record = provenance.make(
        "finetune",
        config,
        inputs=[provenance.file_fingerprint(f) for f in summary["files"] if Path(f).is_file()],
        seed=args.seed,
    )
    record["checkpoint"] = checkpoint_fingerprint(resolve_path(args.model))
    if trainer.is_world_process_zero():
        with AtomicDir(out) as tmp:
            model.save(str(tmp))
            torch.save(
                head_state(trainer.loss if isinstance(trainer.loss, dict) else {"nli": trainer.loss}), tmp / "heads.pt"
            )
            (tmp / "finetune_config.json").write_text(json_text({**config, "provenance": record}))
            shutil.copy(log_path, tmp / "train_log.jsonl")
        shutil.rmtree(work, ignore_errors=True)
        log.info("%s: %d steps of %s → %s", args.model, trainer.state.global_step, args.recipe, out)
    if dist.is_available() and dist.is_initialized():
        dist.barrier()
    return out
