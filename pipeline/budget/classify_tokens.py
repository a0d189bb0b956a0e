"""``classify_tokens.yaml`` read and checked: the tokens a GLUE / CLUE fine-tuning run processes per training
example, measured on the data root's files (issue 48 §2).

``bench/classify_tokens.py --write`` measures them through classify's own readers, encoding, samplers and
collators (pipeline/classify/token_measure.py) and writes the file; the plan's fine-tuning FLOPs read it
(pipeline/plan/plan_costs.py), in place of every sequence padded to the task's max_length, which stays the
figure (an upper bound) of a task the file does not measure. Like ``workloads.yaml``
(:mod:`pipeline.budget.workloads_file`) the file is not taken on trust: it is read as a small file, and a
figure that is not a finite positive number, or a padded figure (random order, ``padded``, or grouped by
length, ``grouped``) below the real tokens it pads or above the sequences at their full length, stops the
plan with one line naming the file and the place in it.
"""

from __future__ import annotations

import math
import re
from functools import cache
from pathlib import Path

from pipeline.errors import InputError
from pipeline.small_files import MIB, read_small_yaml

TOKENS = Path(__file__).with_name("classify_tokens.yaml")
LIMIT = MIB
BENCHMARKS = ("glue", "clue")
TOKENIZERS = ("en", "zh")


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 1 << 20


# a data-root path (``glue/RTE/train.tsv``, C3's two files joined by ``+``): printed into the plan's Markdown, so
# nothing that would render as markup
PATH = re.compile(r"[A-Za-z0-9_.+/-]{1,300}")


def _text(value) -> bool:
    return isinstance(value, str) and PATH.fullmatch(value) is not None


def _problem(data) -> tuple[str, str] | None:
    """(place, what is wrong) of the first thing in ``data`` that is not a measurement; None when all is."""
    if not isinstance(data, dict):
        return "the top level", "expected a mapping"
    if not _count(data.get("seeds")):
        return "seeds", "not a whole number of data orders"
    for benchmark, tasks in (data.get("measured") or {}).items():
        if benchmark not in BENCHMARKS or not isinstance(tasks, dict):
            return f"measured.{benchmark}", f"not one of {', '.join(BENCHMARKS)} with its tasks"
        for task, record in tasks.items():
            place = f"measured.{benchmark}.{task}"
            if not isinstance(record, dict):
                return place, "not a mapping"
            for key in ("file", "split", "tokenizer"):
                if not _text(record.get(key)):
                    return f"{place}.{key}", "not a plain path or name (letters, digits, _ . + / -)"
            if record["split"] not in ("train", "dev") or record["tokenizer"] not in TOKENIZERS:
                return place, "split must be train or dev, tokenizer en or zh"
            if not isinstance(record.get("substitute"), bool) or not _count(record.get("examples")):
                return place, "substitute must be true or false, examples a whole number"
            lengths = record.get("lengths")
            if not isinstance(lengths, dict) or not lengths:
                return f"{place}.lengths", "no lengths measured"
            for length, figure in lengths.items():
                where = f"{place}.lengths.{length}"
                if not _count(length) or not isinstance(figure, dict):
                    return where, "not a length with its figures"
                sequences, real, padded = figure.get("sequences"), figure.get("real"), figure.get("padded")
                if not (_number(sequences) and _number(real)) or not isinstance(padded, dict) or not padded:
                    return where, "sequences and real must be positive numbers, padded a mapping by batch size"
                grouped = figure.get("grouped", {})  # batches grouped by length; absent from an older file
                if not isinstance(grouped, dict):
                    return f"{where}.grouped", "not a mapping by batch size"
                for kind, by_batch in (("padded", padded), ("grouped", grouped)):
                    found = _padded_problem(by_batch, sequences, real, length)
                    if found:
                        return f"{where}.{kind}.{found[0]}", found[1]
    for benchmark, tasks in (data.get("missing") or {}).items():
        if benchmark not in BENCHMARKS or not isinstance(tasks, dict) or not all(map(_text, tasks.values())):
            return f"missing.{benchmark}", "not a mapping of tasks to the file looked for"
    return None


def _padded_problem(by_batch: dict, sequences, real, length) -> tuple[str, str] | None:
    """(batch, what is wrong) of the first figure of ``by_batch`` ({batch: [tokens per example with 1 ..
    seeds orders]}) that is not a padded count of these sequences; None when all are."""
    for batch, per_orders in by_batch.items():
        if not _count(batch) or not isinstance(per_orders, list) or not per_orders:
            return str(batch), "not a batch size with a list of figures"
        for value in per_orders:
            if not _number(value):
                return str(batch), f"{value!r} is not a positive number of tokens"
            if not real <= value * (1 + 1e-6) or value > sequences * length * (1 + 1e-6):
                why = (
                    f"{value} tokens per example is not between the real tokens ({real}) and its "
                    f"{sequences} sequences at length {length}"
                )
                return str(batch), why
    return None


def check(data, path) -> dict:
    """``data`` (the parsed file at ``path``) when every figure is a measurement; else one error naming the place."""
    found = _problem(data)
    if found:
        place, why = found
        raise InputError(path, f"{why} (rerun bench/classify_tokens.py --write)", place)
    return data


def read_tokens(path: str | Path = TOKENS) -> dict:
    """The checked content of ``classify_tokens.yaml`` at ``path``; an absent file measures nothing."""
    if not Path(path).is_file():
        return {"seeds": 1, "measured": {}, "missing": {}}
    return check(read_small_yaml(path, LIMIT, "the classify tokens file") or {}, path)


@cache
def classify_tokens() -> dict:
    """``classify_tokens.yaml``, read once and checked."""
    return read_tokens(TOKENS)
