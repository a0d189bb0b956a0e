"""``classify_tokens.yaml`` read and checked: the tokens a GLUE / CLUE fine-tuning run processes per training
example, measured on the data root's files (issue 48 §2).

``python -m pipeline measure-tokens --write`` (pipeline/classify/measure_tokens.py) measures them through
classify's own readers, encoding, samplers and collators (pipeline/classify/token_measure.py) and writes the
file, merged by task into what it held (:func:`merge`); the plan's fine-tuning FLOPs read it
(pipeline/plan/plan_costs.py), in place of every sequence padded to the task's max_length, which stays the
figure (an upper bound) of a task the file does not measure. Like ``workloads.yaml``
(:mod:`pipeline.budget.workloads_file`) the file is not taken on trust (issue 55 §2): it is read as a small
regular file (pipeline/small_files.py: a folder, a FIFO or a link to ``/dev/zero`` in its place is an error,
not an absence; only a name with nothing behind it measures nothing), and every figure is checked against
its range (:data:`SEQUENCES`, :data:`TOKENS_PER_EXAMPLE`, the counts' bounds from pipeline/arguments.py), and
a padded figure (random order, ``padded``, or grouped by length, ``grouped``) against the real tokens it pads
and the sequences at their full length. Anything else stops the plan with one line naming the file and the
place in it.
"""

from __future__ import annotations

import datetime
import math
import os
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from pipeline.arguments import MAX_BATCH, MAX_EXAMPLES, MAX_LENGTH, MAX_SEEDS
from pipeline.errors import InputError
from pipeline.small_files import MIB, read_small_yaml

TOKENS = Path(__file__).with_name("classify_tokens.yaml")
LIMIT = MIB
BENCHMARKS = ("glue", "clue")
TOKENIZERS = ("en", "zh")
RERUN = "rerun python -m pipeline measure-tokens --write"
# Sequences a training example is encoded as: one, a candidate each (ChID 10, C3 4) or a window each of its
# passage (CMRC 2018: 7 at 256). A thousand is far past any of them, and bounds sequences x length below.
SEQUENCES = (1.0, 1000.0)
# Tokens per training example, real or padded: from one (a sequence holds [CLS] and [SEP] at least, so a real
# figure below one is no measurement) to a million (1000 sequences at 1024; the tasks here hold 11 to 1,034).
# 1e308 or 1e-300 is a broken or hand-edited file, and the plan's GPU-hours scale with it.
TOKENS_PER_EXAMPLE = (1.0, 1e6)


def _number(value, low: float, high: float) -> bool:
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and low <= value <= high
    )


def _count(value, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= high


def _counts(value, high: int) -> bool:
    """A non-empty list of counts up to ``high`` (the grid's batch sizes, lengths)."""
    return isinstance(value, list) and bool(value) and all(_count(v, high) for v in value)


# a data-root path (``glue/RTE/train.tsv``, C3's two files joined by ``+``): printed into the plan's Markdown, so
# nothing that would render as markup
PATH = re.compile(r"[A-Za-z0-9_.+/-]{1,300}")


def _text(value) -> bool:
    return isinstance(value, str) and PATH.fullmatch(value) is not None


def _problem(data) -> tuple[str, str] | None:
    """(place, what is wrong) of the first thing in ``data`` that is not a measurement; None when all is."""
    if not isinstance(data, dict):
        return "the top level", "expected a mapping"
    if not _count(data.get("seeds"), MAX_SEEDS):
        return "seeds", f"not a whole number of data orders from 1 to {MAX_SEEDS}"
    for key, high in (("batch_sizes", MAX_BATCH), ("lengths", MAX_LENGTH)):  # the grid; absent from an older file
        if key in data and not _counts(data[key], high):
            return key, f"not a list of whole numbers from 1 to {high}"
    for section in ("measured", "missing"):
        if not isinstance(data.get(section) or {}, dict):
            return section, "not a mapping of benchmarks"
    for benchmark, tasks in (data.get("measured") or {}).items():
        if benchmark not in BENCHMARKS or not isinstance(tasks, dict):
            return f"measured.{benchmark}", f"not one of {', '.join(BENCHMARKS)} with its tasks"
        for task, record in tasks.items():
            found = _record_problem(record)
            if found:
                return f"measured.{benchmark}.{task}{found[0]}", found[1]
    for benchmark, tasks in (data.get("missing") or {}).items():
        if benchmark not in BENCHMARKS or not isinstance(tasks, dict) or not all(map(_text, tasks.values())):
            return f"missing.{benchmark}", "not a mapping of tasks to the file looked for"
    return None


def _record_problem(record) -> tuple[str, str] | None:
    """(place under the task, what is wrong) of the first thing in a task's ``record`` that is not a
    measurement; None when all is."""
    if not isinstance(record, dict):
        return "", "not a mapping"
    for key in ("file", "split", "tokenizer"):
        if not _text(record.get(key)):
            return f".{key}", "not a plain path or name (letters, digits, _ . + / -)"
    if record["split"] not in ("train", "dev") or record["tokenizer"] not in TOKENIZERS:
        return "", "split must be train or dev, tokenizer en or zh"
    if not isinstance(record.get("substitute"), bool) or not _count(record.get("examples"), MAX_EXAMPLES):
        return "", "substitute must be true or false, examples a whole number"
    lengths = record.get("lengths")
    if not isinstance(lengths, dict) or not lengths:
        return ".lengths", "no lengths measured"
    for length, figure in lengths.items():
        where = f".lengths.{length}"
        if not _count(length, MAX_LENGTH) or not isinstance(figure, dict):
            return where, f"not a length from 1 to {MAX_LENGTH} with its figures"
        sequences, real, padded = figure.get("sequences"), figure.get("real"), figure.get("padded")
        if not _number(sequences, *SEQUENCES):
            return f"{where}.sequences", f"{sequences!r} is not a number of sequences per example in {list(SEQUENCES)}"
        if not _number(real, *TOKENS_PER_EXAMPLE):
            return f"{where}.real", f"{real!r} is not a number of tokens per example in {_range()}"
        if not isinstance(padded, dict) or not padded:
            return f"{where}.padded", "not a mapping by batch size"
        grouped = figure.get("grouped", {})  # batches grouped by length; absent from an older file
        if not isinstance(grouped, dict):
            return f"{where}.grouped", "not a mapping by batch size"
        for kind, by_batch in (("padded", padded), ("grouped", grouped)):
            found = _padded_problem(by_batch, sequences, real, length)
            if found:
                return f"{where}.{kind}.{found[0]}", found[1]
    return None


def _range() -> str:
    low, high = TOKENS_PER_EXAMPLE
    return f"[{low:g}, {high:g}]"


def _padded_problem(by_batch: dict, sequences, real, length) -> tuple[str, str] | None:
    """(batch, what is wrong) of the first figure of ``by_batch`` ({batch: [tokens per example with 1 ..
    seeds orders]}) that is not a padded count of these sequences; None when all are."""
    for batch, per_orders in by_batch.items():
        if not _count(batch, MAX_BATCH) or not isinstance(per_orders, list) or not per_orders:
            return str(batch), "not a batch size with a list of figures"
        if len(per_orders) > MAX_SEEDS:
            return str(batch), f"figures for more than {MAX_SEEDS} data orders"
        for value in per_orders:
            if not _number(value, 0, math.inf) or value == 0:
                return str(batch), f"{value!r} is not a positive number of tokens"
            if not real <= value * (1 + 1e-6) or value > sequences * length * (1 + 1e-6):
                why = (
                    f"{value} tokens per example is not between the real tokens ({real}) and its "
                    f"{sequences} sequences at length {length}"
                )
                return str(batch), why
            if not _number(value, *TOKENS_PER_EXAMPLE):  # past a million: 1000 sequences at length 1024 or more
                return str(batch), f"{value!r} is not a positive number of tokens per example in {_range()}"
    return None


def check(data, path) -> dict:
    """``data`` (the parsed file at ``path``) when every figure is a measurement; else one error naming the place."""
    found = _problem(data)
    if found:
        place, why = found
        raise InputError(path, f"{why} ({RERUN})", place)
    return data


def nothing_measured() -> dict:
    return {"seeds": 1, "measured": {}, "missing": {}}


def read_tokens(path: str | Path = TOKENS) -> dict:
    """The checked content of ``classify_tokens.yaml`` at ``path``. Only a name with nothing behind it measures
    nothing; whatever is there is read as a small regular file, so a folder, a FIFO, a link to a device or a
    dangling link is one error naming it, never taken for an absent file (issue 55 §2)."""
    if not os.path.lexists(path):
        return nothing_measured()
    return check(read_small_yaml(path, LIMIT, "the classify tokens file") or {}, path)


@cache
def classify_tokens() -> dict:
    """``classify_tokens.yaml``, read once and checked."""
    return read_tokens(TOKENS)


def _grid(data: dict) -> tuple:
    return data.get("seeds"), data.get("batch_sizes"), data.get("lengths")


def _grid_text(data: dict) -> str:
    seeds, batches, lengths = _grid(data)
    return f"seeds {seeds}, batch sizes {batches}, lengths {lengths}"


def refuse_two_grids(old: dict, grid: dict, renewed: set, path) -> None:
    """Refuse a merge into ``path`` (checked content ``old``) that would keep entries measured at another grid
    (seeds, batch sizes, lengths: ``grid``) than the tasks ``renewed`` ({(benchmark, task)}) are measured at:
    one file holds one grid. The stage asks before it measures, :func:`merge` again when it merges."""
    kept = [
        task
        for benchmark, tasks in (old.get("measured") or {}).items()
        for task in tasks
        if (benchmark, task) not in renewed
    ]
    if kept and _grid(old) != _grid(grid):
        raise InputError(
            path,
            f"holds {len(kept)} tasks ({', '.join(kept[:3])}{', ...' if len(kept) > 3 else ''}) measured at "
            f"{_grid_text(old)}; this measurement is at {_grid_text(grid)}: one file holds one grid, so measure "
            "at the file's grid, or every task it holds; nothing written",
        )


def merge(old: dict, new: dict, order: Sequence[str], path) -> dict:
    """The file ``path`` (checked content ``old``) with the measurement ``new`` merged in, by task (issue 55 §2):
    a task measured now replaces that task's entry only, the other tasks keep theirs (a measurement of one task,
    or of a data root that lacks some files, does not drop the rest); a task is listed as missing only where no
    measurement of it is kept. Keeping an entry measured at another grid is refused (:func:`refuse_two_grids`).
    Tasks in ``order`` (the registry's), then any other."""
    renewed = {(benchmark, task) for benchmark, tasks in new["measured"].items() for task in tasks}
    refuse_two_grids(old, new, renewed, path)
    rank = {task: k for k, task in enumerate(order)}
    measured, missing = {}, {}
    for benchmark in BENCHMARKS:
        tasks = {**((old.get("measured") or {}).get(benchmark) or {}), **(new["measured"].get(benchmark) or {})}
        looked = {**((old.get("missing") or {}).get(benchmark) or {}), **(new["missing"].get(benchmark) or {})}
        if tasks:
            measured[benchmark] = dict(sorted(tasks.items(), key=lambda item: rank.get(item[0], len(rank))))
        looked = {task: file for task, file in looked.items() if task not in tasks}
        if looked:
            missing[benchmark] = dict(sorted(looked.items(), key=lambda item: rank.get(item[0], len(rank))))
    return {
        **{key: new[key] for key in ("seeds", "batch_sizes", "lengths", "tokenizers")},
        "measured": measured,
        "missing": missing,
    }


HEADER = """\
# Written by python -m pipeline measure-tokens --write (issue 48 §2) on {date}; do not edit by hand.
# Tokens per training example of one epoch of a classify run, measured on the data root's files through
# classify's readers, encoding, samplers and collators (pipeline/classify/token_measure.py): per task, the
# file read (split: train, or dev where the root has no train file; substitute: not the benchmark's own
# release), the tokenizer (tokenizers), and per length: sequences (rows per example: candidates, windows),
# real (tokens, special tokens included) and padded: per batch size, [1 .. seeds] data orders in a fused
# stack (each batch padded to its longest sequence, a stack's to its longest batch); grouped: the same with
# batches grouped by length (classify --group-by-length, pipeline/classify/batching.py). The plan's fine-tuning
# FLOPs use it (pipeline/plan/plan_costs.py); missing: the tasks with no file here (the plan keeps the
# length as an upper bound for them). Merged by task: a measurement of some tasks replaces theirs only.
"""


def text(document: dict) -> str:
    """The file's text of ``document``: the header (dated today), then the YAML."""
    import yaml

    body = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=120, default_flow_style=None)
    return HEADER.format(date=datetime.date.today().isoformat()) + body
