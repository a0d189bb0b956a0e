"""Stage ``classify``: fine-tune a model on one GLUE or CLUE task with several seeds (docs/method.md §4).

    python -m pipeline classify --model MODEL --task TASK --data ROOT --seeds K --max-steps N
                                --batch-size B --out DIR

TASK is a lower-case task name (cola, sst2, mnli, qnli, rte, mrpc, qqp, stsb, tnews, iflytek,
cluewsc, afqmc, csl, ocnli, cmrc2018, chid, c3); ROOT a data root laid out like the project's
public data (glue/<Task>/, sts/STSBenchmark/, nli/mnli_dev/, chinese/<task>/, chinese/fewclue/).
Seeds FIRST..FIRST+K-1 each fine-tune a fresh copy of MODEL with the Hugging Face Trainer and
predict the dev set (and MNLI's mismatched dev, and the test set where there is one).

Writes, all at once when every seed is done:
  DIR/metrics.json                     per-seed dev metrics (x 100), their mean / std / max / min,
                                       the tokens each seed's training batches held (padded, real,
                                       per epoch),
                                       test metrics where the test labels are public (FewCLUE
                                       test_public, C3, STS Benchmark), settings, data files,
                                       checkpoint and provenance (with --fuse, each seed's stack: the
                                       runs it trained beside); the same seed and stack give the same
                                       file (speed and wall time are in the log)
  DIR/dev_predictions.seed<S>.tsv      header, then index, label, prediction per dev example
  DIR/<set>_predictions.seed<S>.tsv    the same for dev_mm (MNLI) and test
  DIR/submission/seed<S>/<file>        test predictions in the GLUE / CLUE server's format

Several models (--model, --out and --name repeated, in the same order) train in one job: the data
is read and encoded once, with their one tokenizer (models whose tokenizers differ are refused),
every model x seed is a run, and with --fuse K the runs of models of one architecture train in
stacked groups of up to K (docs/stages/classify.md, "Fused seeds"). Each model's files go to its
own DIR, as a one-model job of that model writes them; the files of all models are written at once.

Hyper-parameters default to the papers' (see pipeline/classify/hyperparameters.py); --max-steps
caps training (0: the epochs). A task without a train split here stops with the file the
download rule would fetch, unless --train-from-dev F trains on a seeded share F of dev and
scores the rest (recorded in metrics.json). Bad input (a label outside the task's set, a
missing column, an empty split) stops before training with one line naming the file.
"""

from __future__ import annotations

import argparse
import logging
import random
import time
from pathlib import Path

from pipeline import provenance, tracking
from pipeline.arguments import (
    BATCH,
    EPOCHS,
    EXAMPLES,
    FRACTION,
    MAX_SEED,
    NON_NEGATIVE,
    RATE,
    SEED,
    SEEDS,
    STEPS,
    TOKENS,
)
from pipeline.atomic import AtomicFiles, json_text
from pipeline.classify import encoding, fused_stacks, fused_training, hyperparameters, submission, tasks, training
from pipeline.classify.fused_resume import check_folder, data_fingerprint
from pipeline.errors import InputError
from pipeline.output_guard import refuse_inputs, refuse_read_files

log = logging.getLogger("pipeline.classify")

SPLIT_SEED = 0  # the --train-from-dev split is the same for every fine-tuning seed


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        required=True,
        action="append",
        help="hub id, path, package:NAME, or a pretrain / finetune output; repeated: several models of one "
        "tokenizer in one job (one --out, and --name if any, each, in the same order)",
    )
    parser.add_argument("--task", required=True, help="lower-case task name: " + ", ".join(tasks.TASKS))
    parser.add_argument("--data", required=True, type=Path, help="data root")
    parser.add_argument("--out", required=True, type=Path, action="append", help="output directory (one per --model)")
    parser.add_argument("--seeds", type=SEEDS, default=5, help="number of seeds (default 5, at most 100)")
    tracking.add_arguments(parser)  # live curves, one folder per seed (pipeline/tracking.py)
    parser.add_argument("--first-seed", type=SEED, default=0, help="seeds are FIRST .. FIRST+K-1")
    parser.add_argument(
        "--seed-dirs",
        action="store_true",
        help="write each seed's files to OUT/seed<S>/, as a one-seed job with --out OUT/seed<S> would",
    )
    parser.add_argument("--max-steps", type=STEPS, default=0, help="cap on training steps (0: train the epochs)")
    parser.add_argument("--batch-size", type=BATCH, help="train batch size (default: GLUE 32, CLUE 16)")
    parser.add_argument("--lr", type=RATE, help="learning rate (default: GLUE 3e-5, CLUE 2e-5)")
    parser.add_argument("--epochs", type=EPOCHS, help="epochs (default 3; CLUEWSC 50)")
    parser.add_argument("--max-length", type=TOKENS, help="tokens per input (default 128; CMRC, ChID, C3 256)")
    parser.add_argument("--warmup-ratio", type=FRACTION, help="share of steps with linear warm-up (default 0.1)")
    parser.add_argument("--weight-decay", type=NON_NEGATIVE, help="default 0.01")
    parser.add_argument("--eval-batch-size", type=BATCH, default=64)
    parser.add_argument("--bf16", action="store_true", help="bfloat16 mixed precision (GPU)")
    parser.add_argument(
        "--dropout",
        type=FRACTION,
        default=0.1,
        help="every dropout of every model, whatever its config says (default 0.1, ULR-BERT §5.1.2; training.py)",
    )
    parser.add_argument(
        "--group-by-length",
        action="store_true",
        help="batches of examples of like length, less padding (Hugging Face's group_by_length, seeded per run: "
        "pipeline/classify/batching.py); default: random order, as the papers' run_glue",
    )
    parser.add_argument(
        "--fuse",
        type=SEEDS,
        default=1,
        metavar="K",
        help="train up to K runs (seeds, and the models of one architecture) at once as one stacked model "
        "(pipeline/classify/fused_training.py), a run left alone as a stack of one; 1: one by one",
    )
    parser.add_argument(
        "--resume-every",
        type=STEPS,
        default=0,
        metavar="N",
        help="fused runs: save their state every N steps under the first OUT's .resume/, and go on from it "
        "after a kill (0: off; needs --fuse K above 1)",
    )
    parser.add_argument(
        "--train-from-dev",
        type=FRACTION,
        default=0.0,
        metavar="F",
        help="no train split here: train on a share F of dev, score the rest",
    )
    parser.add_argument(
        "--max-train-examples", type=EXAMPLES, default=0, help="use the first N train examples (0: all)"
    )
    parser.add_argument(
        "--allow-substitutes",
        action="store_true",
        help="where a benchmark's own release is missing, use the public copy the data root has "
        "(FewCLUE splits, OCNLI's 10k subset, ...); recorded, and the tables say so",
    )
    parser.add_argument("--no-test", action="store_true", help="skip the test set (no test predictions, no submission)")
    parser.add_argument(
        "--name", action="append", help="model name in the metrics (default: the model folder's name); one per --model"
    )


def settings_from(args, task) -> training.Settings:
    defaults = hyperparameters.defaults(task)

    def pick(value, key):
        return defaults[key] if value is None else value

    return training.Settings(
        batch_size=pick(args.batch_size, "batch_size"),
        lr=pick(args.lr, "lr"),
        epochs=pick(args.epochs, "epochs"),
        max_steps=args.max_steps,
        max_length=pick(args.max_length, "max_length"),
        warmup_ratio=pick(args.warmup_ratio, "warmup_ratio"),
        weight_decay=pick(args.weight_decay, "weight_decay"),
        doc_stride=defaults["doc_stride"],
        max_answer_tokens=defaults["max_answer_tokens"],
        eval_batch_size=args.eval_batch_size,
        bf16=args.bf16 and _bf16_device(),
        dropout=args.dropout,
        group_by_length=args.group_by_length,
    )


def _bf16_device() -> bool:
    """Whether --bf16 can be honoured: bfloat16 mixed precision needs a GPU (the Trainer refuses it on
    CPU). Without one, as pretrain and finetune do, the run trains in float32, says so, and records
    ``bf16: false`` in its settings (a rehearsal of a paper config on CPU, docs/stages/rehearsal.md)."""
    import torch

    if torch.cuda.is_available():
        return True
    log.warning("--bf16 asks for bfloat16 mixed precision, which needs a GPU: training in float32 on CPU")
    return False


def load_splits(
    task, root: Path, train_from_dev: float, max_train: int, allow_substitutes: bool = False
) -> tuple[dict, dict]:
    """{split: examples} for train, dev, extra dev sets and test, and {split: data files}."""
    if not root.is_dir():
        raise InputError(root, "data root not found")
    files = {
        split: task.split_files(root, split, allow_substitutes)
        for split in ("train", "dev", *task.extra_dev, *task.test_sets)
    }
    if files["dev"] is None:
        raise InputError(root / task.splits["dev"][0], f"{task.title} dev split not found")
    splits = {split: task.read(paths) for split, paths in files.items() if paths is not None}
    for split, examples in splits.items():
        if split not in task.test_sets and any(e.label is None for e in examples):
            raise InputError(files[split][0], f"the {split} split must be labelled")
    if files["train"] is None:
        if not 0 < train_from_dev < 1:
            raise InputError(
                root / task.splits["train"][0],
                f"{task.title} train split not found (the download "
                "rules fetch it; or pass --train-from-dev F to train on a share of dev)",
            )
        order = list(range(len(splits["dev"])))
        random.Random(SPLIT_SEED).shuffle(order)
        cut = round(train_from_dev * len(order))
        if not 0 < cut < len(order):
            raise InputError(
                "--train-from-dev",
                f"{train_from_dev} of the {len(order)} dev examples in {files['dev'][0]} leaves {cut} to train on "
                f"and {len(order) - cut} to score; both need at least one",
            )
        splits["train"] = [splits["dev"][i] for i in order[:cut]]
        splits["dev"] = [splits["dev"][i] for i in sorted(order[cut:])]
    if max_train > 0:
        splits["train"] = splits["train"][:max_train]
    return splits, files


def _cell(value) -> str:
    return " ".join(str(value).split()) if isinstance(value, str) else str(value)


def predictions_tsv(task, examples, predicted) -> str:
    def gold(example):
        if task.head == "span":
            return example.answers[0][0] if example.answers else ""
        return "" if example.label is None else example.label

    rows = [f"{_cell(e.id)}\t{_cell(gold(e))}\t{_cell(p)}" for e, p in zip(examples, predicted)]
    return "index\tlabel\tprediction\n" + "".join(row + "\n" for row in rows)


def summarise(task, outcomes: list[dict], set_name: str) -> dict | None:
    from pipeline.classify.metrics import spread

    per_seed = [outcome["sets"][set_name]["metrics"] for outcome in outcomes if set_name in outcome["sets"]]
    if not per_seed or any(m is None for m in per_seed):
        return None
    return {name: spread([m[name] for m in per_seed]) for name in per_seed[0]}


def log_seed(outcome: dict, model: str = "") -> None:
    log.info(  # speed goes to the log: metrics.json holds only what the same seed reproduces
        "%sseed %d: %d steps in %.1f s (%.1f train examples/s), train loss %.4f",
        f"{model} " if model else "",
        outcome["seed"],
        outcome["steps"],
        outcome["train_seconds"],
        outcome["train_examples_per_second"] or 0.0,
        outcome["train_loss"],
    )


def model_jobs(args: argparse.Namespace) -> list[argparse.Namespace]:
    """One set of arguments per ``--model``, as a one-model job of that model would parse them (its own
    ``--model``, ``--name`` and ``--out``): what its metrics.json and provenance record."""
    models, outs, names = args.model, args.out, args.name
    if len(outs) != len(models):
        raise InputError("--out", f"{len(models)} --model but {len(outs)} --out: give one --out per --model")
    if names is not None and len(names) != len(models):
        raise InputError("--name", f"{len(models)} --model but {len(names)} --name: give one --name per --model")
    folders = [out.resolve() for out in outs]
    twice = sorted({str(out) for out, folder in zip(outs, folders) if folders.count(folder) > 1})
    if twice:
        raise InputError(twice[0], "given as --out of two models: each model needs its own folder")
    return [
        argparse.Namespace(**{**vars(args), "model": model, "out": out, "name": None if names is None else names[i]})
        for i, (model, out) in enumerate(zip(models, outs))
    ]


def check_one_tokenizer(tokenizers: list, specs: list[str]) -> None:
    """The data is encoded once, with the first model's tokenizer: every model must split text as it does
    (the same vocabulary, and the same ids for a probe of cased, accented and Chinese text)."""
    probe = "Ünïcode TEXT, don't 中文 Straße"
    first = tokenizers[0]
    for tokenizer, spec in zip(tokenizers[1:], specs[1:]):
        if tokenizer.get_vocab() != first.get_vocab() or tokenizer(probe)["input_ids"] != first(probe)["input_ids"]:
            raise InputError(
                "--model",
                f"{spec} and {specs[0]} have different tokenizers; the models of one classify job share one "
                "(the data is encoded once): run them as separate jobs",
            )


def run_groups(task, runs: list[tuple[int, int]], paths: list[str], settings, args) -> fused_stacks.JobGroups:
    """The runs (model index, seed), model-major, by the path they train through: with ``--fuse`` K above 1
    in stacked models of up to K, the models of one config together, a stack of one included; solo where the
    job does not fuse (K = 1, live curves in wandb or mlflow) or the architecture cannot
    (fused_stacks.run_stacks, whose log says why)."""
    return fused_stacks.run_stacks(task, runs, paths, settings, args.fuse, args)


def resume_path(jobs: list[argparse.Namespace], group: list[tuple[int, int]]) -> Path:
    """Where a fused group keeps its state: under the first ``--out``'s .resume/, named by its first and
    last run (a group is a stretch of the model-major order), so that no two groups of a job share one."""
    (first_model, first_seed), (last_model, last_seed) = group[0], group[-1]
    if len(jobs) == 1:
        name = f"fused-seeds{first_seed}-{last_seed}.pt"
    else:
        name = f"fused-model{first_model}-seed{first_seed}-to-model{last_model}-seed{last_seed}.pt"
    return jobs[0].out / ".resume" / name


def run(args: argparse.Namespace) -> None:
    from pipeline.models.fingerprint import checkpoint_fingerprint
    from pipeline.models.spec import resolve_path, transformers_folder
    from pipeline.models.tokenizer_check import load_tokenizer

    started = time.perf_counter()
    task = tasks.get(args.task)
    jobs = model_jobs(args)
    if args.resume_every > 0 and args.fuse <= 1:  # only a fused group saves its state (fused_resume.py)
        raise InputError(
            "--resume-every",
            f"{args.resume_every} saves the state of fused runs, and without --fuse K (K above 1) there are none: "
            "add --fuse, or drop --resume-every",
        )
    for job in jobs:  # no --out is, or lies inside, the data root or a model of the job
        refuse_inputs(job.out, args.data, [other.model for other in jobs])
    if args.resume_every > 0:  # before any work: saves go only into a plain .resume folder of the run's own
        check_folder(jobs[0].out / ".resume")
    if args.seeds < 1:
        raise InputError(jobs[0].out, f"--seeds must be at least 1, got {args.seeds}")
    last_seed = args.first_seed + args.seeds - 1
    if last_seed > MAX_SEED:  # numpy's generators take 32-bit seeds
        raise InputError(
            "--first-seed",
            f"seeds {args.first_seed} .. {last_seed} (--seeds {args.seeds}) go past the largest seed, {MAX_SEED}",
        )
    settings = settings_from(args, task)
    splits, files = load_splits(task, args.data, args.train_from_dev, args.max_train_examples, args.allow_substitutes)
    if args.no_test:
        for name in task.test_sets:
            splits.pop(name, None)
            files[name] = None
    read = [path for paths in files.values() if paths is not None for path in paths]
    refuse_read_files([job.out for job in jobs], read, "this classification")  # data the root links to
    paths = [transformers_folder(resolve_path(job.model)) for job in jobs]
    tokenizers = [load_tokenizer(path) for path in paths]  # each refuses one that would map words to [UNK]
    check_one_tokenizer(tokenizers, [job.model for job in jobs])
    tokenizer = tokenizers[0]
    names = [job.name or Path(path.rstrip("/")).name for job, path in zip(jobs, paths)]
    if len(jobs) > 1:
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise InputError("--name", f"two models are named {repeated[0]!r}: give each model its own --name")
        for job, name in zip(jobs, names):  # each model's live curves in their own folder
            job.tracking_dir = args.tracking_dir / name if args.tracking_dir else None
    log.info(
        "%s: %s train / %s dev examples, model %s",
        task.title,
        f"{len(splits['train']):,}",
        f"{len(splits['dev']):,}",
        ", ".join(paths),
    )

    def features(examples):
        return encoding.encode(task, tokenizer, examples, settings.max_length, settings.doc_stride)

    train = (splits["train"], features(splits["train"]))
    evaluations = {name: (examples, features(examples)) for name, examples in splits.items() if name != "train"}
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    runs = [(model, seed) for model in range(len(jobs)) for seed in seeds]
    # where a job's time goes (bench/classify_fixed_cost.py): what it pays once, before the seeds
    log.info("ready to fine-tune %d seed(s) of %d model(s): data read and encoded", len(seeds), len(jobs))
    # hashed once per job, not once per seed folder (and once per model)
    inputs = [provenance.file_fingerprint(p) for split_files in files.values() if split_files for p in split_files]
    checkpoints = [checkpoint_fingerprint(path) for path in paths]
    outcomes, resumes = {model: [] for model in range(len(jobs))}, []
    groups = run_groups(task, runs, paths, settings, args)
    for index, group in enumerate(groups.stacks):
        members = [fused_training.Member(seed, settings.lr, paths[model]) for model, seed in group]
        # its provenance names the runs beside it (issue 47 §2), though a member's numbers do not depend on them:
        # its dropout masks come from its own key and its batches from its own sampler, in a stack of one as in
        # a stack of K (docs/stages/classify.md "Fused seeds")
        stack = {
            "index": index,
            "of": len(groups.stacks),
            "runs": [{"model": names[model], "seed": seed} for model, seed in group],
        }
        if len(jobs) > 1:
            log.info("fused: %s", ", ".join(f"{names[model]} seed {seed}" for model, seed in group))
        resume, fused = None, None
        if args.resume_every > 0:
            resume = fused_training.Resume(resume_path(jobs, group), args.resume_every)
            resumes.append(resume)
            # a group finished before a kill is not trained again: its outcomes, for these inputs and this
            # data as encoded (--max-train-examples, --train-from-dev, --max-length), were kept
            identity = {
                "members": [vars(m) for m in members],
                "settings": vars(settings),
                "checkpoints": [checkpoints[model] for model, _ in group],
                "inputs": inputs,
                "train": data_fingerprint(*train),
                "evaluations": {name: data_fingerprint(*split) for name, split in evaluations.items()},
            }
            fused = resume.finished(identity)
        if fused is None:
            trackers = [jobs[model] for model, _ in group]
            fused = fused_training.run_members(task, members, tokenizer, train, evaluations, settings, trackers, resume)
            if resume:
                resume.keep(identity, fused)
        for (model, _), outcome in zip(group, fused):
            log_seed(outcome, names[model] if len(jobs) > 1 else "")
            outcomes[model].append({**outcome, "stack": stack})
    for model, seed in groups.solo:  # fusing off for the job, or for the model's architecture: torch's own masks
        outcome = training.run_seed(task, paths[model], tokenizer, train, evaluations, settings, seed, jobs[model])
        log_seed(outcome, names[model] if len(jobs) > 1 else "")
        outcomes[model].append({**outcome, "stack": None})

    def write(atomic: AtomicFiles, out: Path, outcomes: list[dict], params: dict, model: dict, checkpoint) -> None:
        """metrics.json and the prediction files of ``outcomes`` into ``out`` (through ``atomic``)."""
        seeds = [o["seed"] for o in outcomes]
        record = {
            "task": task.name,
            "title": task.title,
            "benchmark": task.benchmark,
            "head": task.head,
            "metric": task.metrics[0],
            "metrics": list(task.metrics),
            "model": model,
            "seeds": seeds,
            "per_seed": {
                str(o["seed"]): {
                    **{set_name: result["metrics"] for set_name, result in o["sets"].items()},
                    "steps": o["steps"],
                    "train_loss": o["train_loss"],
                    # the tokens of its training batches, padding included, per epoch (processed_tokens.py)
                    "processed_tokens": o["processed_tokens"],
                }
                for o in outcomes
            },
            "settings": vars(settings),
            "examples": {split: len(examples) for split, examples in splits.items()},
            "train_from_dev": args.train_from_dev if files["train"] is None else None,
            "substitutes": task.substitutes(args.data, files),
            "provenance": {
                **provenance.make("classify", params, seed=seeds[0], inputs=inputs),
                "checkpoint": checkpoint,
                # per seed, the path it trained through: the stacked model it trained in (--fuse K above 1, a stack
                # of one included) and which runs shared it, its masks its own key's whatever they are; null:
                # solo (fusing off: --fuse 1, live curves in wandb or mlflow, an architecture the fused path
                # cannot run), through training.run_seed with torch's own masks
                "stacks": {str(o["seed"]): o["stack"] for o in outcomes},
            },
        }
        for set_name in evaluations:
            record[set_name] = summarise(task, outcomes, set_name)
        for outcome in outcomes:
            seed = outcome["seed"]
            for set_name, (examples, _) in evaluations.items():
                predicted = outcome["sets"][set_name]["predictions"]
                atomic.temp(out / f"{set_name}_predictions.seed{seed}.tsv").write_text(
                    predictions_tsv(task, examples, predicted), encoding="utf-8"
                )
                if set_name in task.test_sets:
                    target = out / "submission" / f"seed{seed}" / task.test_sets[set_name]
                    atomic.temp(target).write_text(
                        submission.render(task, [e.id for e in examples], predicted), encoding="utf-8"
                    )
        atomic.temp(out / "metrics.json").write_text(json_text(record), encoding="utf-8")

    with AtomicFiles() as atomic:  # every file of the job, of every model, at once, or none
        for index, job in enumerate(jobs):
            params = {
                key: (str(value) if isinstance(value, Path) else value)
                for key, value in vars(job).items()
                if key not in ("run", "verbose", "stage", "report_to", "tracking_dir")  # trackers change no result
            }
            model = {"name": names[index], "path": paths[index], "spec": job.model}
            checkpoint = checkpoints[index]
            if args.seed_dirs:  # each seed's files as its own one-seed job writes them (the workflow's layout)
                for outcome in outcomes[index]:
                    seed, folder = outcome["seed"], job.out / f"seed{outcome['seed']}"
                    alone = {**params, "seeds": 1, "first_seed": seed, "seed_dirs": False, "out": str(folder)}
                    write(atomic, folder, [outcome], alone, model, checkpoint)
            else:
                write(atomic, job.out, outcomes[index], params, model, checkpoint)
    for resume in resumes:  # the files are written: a rerun has nothing to go on from
        resume.drop()
    for index, job in enumerate(jobs):
        dev = summarise(task, outcomes[index], "dev")[task.metrics[0]]
        log.info(
            "%s %s%s over %d seeds: mean %.2f, std %.2f, max %.2f → %s (%.1f s in all)",
            task.title,
            task.metrics[0],
            f" of {names[index]}" if len(jobs) > 1 else "",
            len(seeds),
            dev["mean"],
            dev["std"],
            dev["max"],
            job.out,
            time.perf_counter() - started,
        )
