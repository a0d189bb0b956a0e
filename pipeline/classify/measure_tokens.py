"""Stage ``measure-tokens``: the tokens a GLUE / CLUE fine-tuning run processes per epoch, measured on the data
root's files (issue 48 §2) into pipeline/budget/classify_tokens.yaml, which the plan reads.

    python -m pipeline measure-tokens [--data ROOT] [--tasks T ...] [--write | --out FILE]   # CPU, a few minutes

For every task asked (default: the whole registry, pipeline/classify/tasks.py) it reads the training file
the data root has (the benchmark's release, else the public substitute classify --allow-substitutes reads;
where neither, the dev file), encodes it as classify does at each length, and counts one epoch's tokens as
classify's batches hold them, at each batch size and for stacks of 1 .. --seeds data orders
(pipeline/classify/token_measure.py), in random order and grouped by length (``classify --group-by-length``),
with the tokenizers of pipeline/classify/measure_tokenizers.py. ``--write`` merges the figures per training
example into pipeline/budget/classify_tokens.yaml (``--out FILE``: into FILE; neither: the measurement to
standard output), each with the file and the tokenizer it was measured with; a task with no file is listed
with the file it looked for.

The file is merged by task (issue 55 §2, pipeline/budget/classify_tokens.py ``merge``): a measurement of one
task replaces that task's entry only, a task asked twice is measured once, a task whose file the root lacks
keeps its earlier measurement, and a measurement of nothing (an empty data root) is refused, exit 2, the file
untouched. The output is never a file the measurement reads: one that is, or lies inside, the data root or
the tokenizer's model, or is (through a link) a training file, is refused before anything is written
(pipeline/output_guard.py), and it is written atomically (pipeline/atomic.py), its folder tried before the
minutes of measuring (a read-only folder is one line at once).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

from pipeline.arguments import BATCH, SEEDS, TOKENS
from pipeline.atomic import AtomicFiles
from pipeline.budget import classify_tokens
from pipeline.classify import measure_tokenizers, tasks, token_measure
from pipeline.errors import InputError
from pipeline.output_guard import refuse_inputs, refuse_read_files

log = logging.getLogger("pipeline.classify")
REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("ULR_DATA_ROOT", REPO.parent / "shared" / "data"))
# span extraction's windows overlap by a doc stride of 128, which a length of 128 cannot hold (the workflow
# runs CMRC 2018 at 256 only: docs/stages/classify.md)
SPAN_SHORTEST = 128 + 3


def task_name(text: str) -> str:
    """A task of the registry (an alias as classify takes it: ``sts-b``, ``RTE``), by its registry name."""
    try:
        return tasks.get(text).name
    except InputError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc.message}") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", type=Path, default=DATA, help=f"the data root (default: $ULR_DATA_ROOT or {DATA})")
    parser.add_argument("--tasks", type=task_name, nargs="+", default=list(tasks.TASKS), help="default: every task")
    parser.add_argument("--batch-sizes", type=BATCH, nargs="+", default=[8, 16, 32, 64])
    parser.add_argument("--lengths", type=TOKENS, nargs="+", default=[128, 256])
    parser.add_argument("--seeds", type=SEEDS, default=5, help="stacks of 1 .. SEEDS data orders (seeds 0 ..)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--write", action="store_true", help="merge into pipeline/budget/classify_tokens.yaml")
    where.add_argument("--out", type=Path, help="merge into this file instead (default: standard output)")


def training_file(task, root: Path):
    """(split, files) the measurement reads: the train split classify reads (release, else substitute), else dev."""
    for split in ("train", "dev"):
        files = task.split_files(root, split, allow_substitutes=True)
        if files:
            return split, files
    return None, None


def _unique(values: list) -> list:
    return list(dict.fromkeys(values))  # a task, batch size or length given twice is measured once


def run(args: argparse.Namespace) -> None:
    out = classify_tokens.TOKENS if args.write else args.out  # read at run time: the tests move it
    registry = [tasks.get(name) for name in _unique(args.tasks)]
    batch_sizes, lengths = _unique(args.batch_sizes), _unique(args.lengths)
    if not args.data.is_dir():
        raise InputError(args.data, "not a folder: expected the data root (--data, or $ULR_DATA_ROOT)")
    found, missing = {}, {}
    for task in registry:
        split, files = training_file(task, args.data)
        if files is None:
            looked = "+".join(task.candidates("train")[0])
            missing.setdefault(task.benchmark, {})[task.name] = looked
            log.info("%s: no file in the data root (%s or a substitute, nor a dev file)", task.name, looked)
        else:
            found[task.name] = (split, files)
    if not found:
        raise InputError(args.data, "holds no file of the tasks asked: nothing measured, nothing written")
    earlier = None
    if out is not None:  # never over the data, the tokenizer, or a file it reads (a root may link elsewhere)
        refuse_inputs(out, data=args.data, models=[measure_tokenizers.MINILM])
        refuse_read_files([out], [path for _, files in found.values() for path in files], "measure-tokens")
        earlier = _earlier(out)
        grid = {"seeds": args.seeds, "batch_sizes": batch_sizes, "lengths": lengths}
        renewed = {(tasks.get(name).benchmark, name) for name in found}
        classify_tokens.refuse_two_grids(earlier, grid, renewed, out)  # before the minutes of measuring
    with AtomicFiles() as written:
        if out is not None:
            written.temp(out).touch()  # a folder that cannot be written fails now, not after the measurement
        document = _measure(registry, found, missing, args.data, batch_sizes, lengths, args.seeds)
        if out is None:
            sys.stdout.write(classify_tokens.text(document))
            return
        merged = classify_tokens.merge(earlier, document, list(tasks.TASKS), out)
        written.temp(out).write_text(classify_tokens.text(merged), encoding="utf-8")
    now = _count(document)
    log.info("wrote %s (%d tasks measured now, %d kept from before)", out, now, _count(merged) - now)


def _earlier(out: Path) -> dict:
    """What ``out`` holds now, to merge into: nothing where it does not exist; a file that is not a checked
    measurement (a user's file, a broken one) is refused, untouched."""
    try:
        return classify_tokens.read_tokens(out)
    except InputError as exc:
        raise InputError(
            out, f"is not a measurement to merge into ({exc}): nothing written; give a new file or remove it"
        ) from None


def _count(document: dict) -> int:
    return sum(len(tasks_) for tasks_ in document["measured"].values())


def _measure(registry, found: dict, missing: dict, root: Path, batch_sizes, lengths, seeds: int) -> dict:
    """The measurement of the tasks ``found`` ({task: (split, files)}), as classify_tokens.yaml holds it."""
    read = {task.name: task.read(found[task.name][1]) for task in registry if task.name in found}
    chinese = [  # the vocabulary holds every character of the Chinese tasks read (measure_tokenizers.py)
        text
        for name, examples in read.items()
        if tasks.get(name).lang == "zh"
        for text in measure_tokenizers.texts(examples)
    ]
    tokenizers = {}  # built only for the languages asked: an English run never builds the Chinese vocabulary
    measured: dict = {}
    for task in registry:
        if task.name not in read:
            continue
        split, files = found[task.name]
        examples = read[task.name]
        if task.lang not in tokenizers:
            english = task.lang == "en"
            tokenizers[task.lang] = (
                measure_tokenizers.english_tokenizer() if english else measure_tokenizers.chinese_tokenizer(chinese)
            )
        tokenizer = tokenizers[task.lang]
        started = time.perf_counter()
        task_lengths = [n for n in lengths if task.head != "span" or n >= SPAN_SHORTEST]
        if not task_lengths:
            log.info(
                "%s: no length of --lengths holds its windows (at least %d): not measured", task.name, SPAN_SHORTEST
            )
            continue
        figures = token_measure.measure(task, tokenizer, examples, batch_sizes, task_lengths, seeds)
        later = token_measure.measure(task, tokenizer, examples, batch_sizes[:1], task_lengths[:1], 1, epoch=1)
        record = _record(task, root, split, files, examples, figures)
        measured.setdefault(task.benchmark, {})[task.name] = record
        _report(task, record, examples, figures, later, batch_sizes[0], task_lengths[0], tokenizer, started)
    if not measured:
        raise InputError(root, "no task asked could be measured: nothing measured, nothing written")
    return {
        "seeds": seeds,
        "batch_sizes": batch_sizes,
        "lengths": lengths,
        "tokenizers": measure_tokenizers.DESCRIPTIONS,
        "measured": measured,
        "missing": missing,
    }


def _record(task, root: Path, split: str, files, examples, figures: dict) -> dict:
    """A task's entry: the file read and the figures per training example, rounded as the file holds them."""
    n = len(examples)
    record = {
        "file": "+".join(str(p.relative_to(root)) for p in files),
        "split": split,
        "substitute": bool(task.substitutes(root, {split: files})),
        "tokenizer": task.lang,
        "examples": n,
        "lengths": {},
    }
    for length, figure in figures.items():
        record["lengths"][length] = {
            "sequences": round(figure["rows"] / n, 4),
            "real": round(figure["real"] / n, 3),
            **{
                kind: {batch: [round(v / n, 3) for v in values] for batch, values in figure[kind].items()}
                for kind in ("padded", "grouped")
            },
        }
    return record


def _report(task, record, examples, figures, later, batch: int, length: int, tokenizer, started: float) -> None:
    """One line per task: its figures at the first batch size and length, and epoch 1's drift from epoch 0."""
    first, again = figures[length]["padded"][batch][0], later[length]["padded"][batch][0]
    extra = ""
    if task.lang == "zh":
        extra = f", ## pieces {100 * measure_tokenizers.continuation_share(tokenizer, examples):.2f}%"
    line = record["lengths"][length]
    log.info(
        "%s: %s (%s, %s examples): at %d real %.1f, padded at batch %d %.1f per example (grouped by length %.1f) "
        "(epoch 1 %+.2f%%)%s; %.0f s",
        task.name,
        record["file"],
        record["split"],
        f"{len(examples):,}",
        length,
        line["real"],
        batch,
        line["padded"][batch][0],
        line["grouped"][batch][0],
        100 * (again / first - 1),
        extra,
        time.perf_counter() - started,
    )
