"""Reading the metrics JSONs of ``python -m pipeline evaluate``, checking the pinned format.

Every file names its ``task``, its ``model`` ({name, path, kind, pooling}) and its
``provenance``, plus the task's own keys (:data:`REQUIRED_KEYS`). A file that lacks one of
them, or holds something other than a number where a table reads one, stops the stage with
an :class:`~pipeline.errors.InputError` naming the file and the key. Entries a run may leave
out (a level, a data set, a split) are not required, and a null number (the harness writes
null for what it could not compute): their cells stay empty. A file that is not UTF-8 JSON, or
nests deeper than :data:`MAX_DEPTH` (no metrics file comes near it; a hostile one would break the
parser or the index written from it), stops the stage the same way (docs/behaviour.md).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from pipeline.errors import InputError, translate

REQUIRED_KEYS = {
    "analogy": ("overall", "levels", "categories", "ties", "ppr", "pnr"),
    "analogy_examples": ("scores", "questions", "n"),
    "sts": ("scores", "subsets", "avg", "n"),
    "wordsim": ("scores", "n"),
    "geogranno": ("splits", "by_query_length", "by_length_difference"),
    "faq": ("datasets", "avg"),
    "ppdb": ("scores", "n"),
    "semeval5a": ("accuracy", "n"),
    "scws": ("scores", "n"),
    "glue": ("tasks", "avg"),  # python -m pipeline classify-summary
    "clue": ("tasks", "avg"),
    "snli": ("dev", "test", "dim", "parameters"),
    "transfer": ("micro", "macro", "tasks"),
}
MODEL_KEYS = ("name", "path", "kind", "pooling")
MAX_DEPTH = 64  # arrays and objects inside each other; evaluate's files nest a handful


def nesting_depth(value: Any) -> int:
    """How many arrays and objects ``value`` holds inside each other (iterative: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def read_json(path: Path) -> Any:
    """The JSON value in ``path``; an :class:`InputError` naming it when that is not UTF-8 JSON of sane depth."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise translate(exc, path) from None  # names the line of the first byte that is not UTF-8
    except RecursionError:
        raise InputError(path, f"not a usable JSON file: nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:  # json.JSONDecodeError, and ints beyond Python's digit limit
        raise InputError(path, f"not a JSON file: {exc}") from None
    if nesting_depth(data) > MAX_DEPTH:
        raise InputError(path, f"not a usable JSON file: nested more than {MAX_DEPTH} levels deep")
    return data


class MetricsFile:
    """One metrics JSON; :meth:`require` and :meth:`number` fail naming the file and key path."""

    def __init__(self, path: Path, data: dict):
        self.path = Path(path)
        self.data = data

    def fail(self, message: str, where: str | None = None):
        raise InputError(self.path, message, where=where)

    def require(self, *keys: str) -> Any:
        node = self.data
        for depth, key in enumerate(keys):
            if not isinstance(node, dict):
                self.fail(f"key {'.'.join(keys[:depth])!r} must be an object, found {type(node).__name__}")
            if key not in node:
                self.fail(f"missing key {'.'.join(keys[: depth + 1])!r}")
            node = node[key]
        return node

    def number(self, *keys: str) -> float | None:
        """A required number; null (or NaN) means the harness could not compute it: an empty cell."""
        value = self.require(*keys)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or math.isinf(value):
            self.fail(f"key {'.'.join(keys)!r} must be a number or null, found {value!r}")
        return float(value)

    @property
    def task(self) -> str:
        return self.data["task"]

    @property
    def model(self) -> dict:
        return self.data["model"]

    @property
    def provenance(self) -> dict:
        return self.data["provenance"]

    def trace(self) -> dict:
        """What made these numbers: the run's config (stage parameters), seed, checkpoint, code version."""
        provenance = self.provenance
        trace = {
            "metrics_file": str(self.path),
            "model": self.model,
            "checkpoint": provenance.get("checkpoint", self.model["path"]),
            "seed": provenance.get("seed"),
            "code_version": provenance.get("code_version"),
            "config": provenance.get("params"),
        }
        notes = self.data.get("notes")  # what a reader of the row must know (e.g. a substitute data set)
        if isinstance(notes, list) and notes and all(isinstance(note, str) for note in notes):
            trace["notes"] = notes
        return trace


def load(path) -> MetricsFile:
    """Read and check one metrics JSON."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "is a directory, expected a metrics JSON file" if path.is_dir() else "file not found")
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError(path, f"expected a JSON object, found {type(data).__name__}")
    metrics = MetricsFile(path, data)
    task = metrics.require("task")
    if task not in REQUIRED_KEYS:
        metrics.fail(f"unknown task {task!r} (known: {', '.join(REQUIRED_KEYS)})")
    for key in MODEL_KEYS:
        metrics.require("model", key)
    name = metrics.model["name"]
    if not isinstance(name, str) or not name:
        metrics.fail(f"key 'model.name' must be a non-empty string, found {name!r}")
    if metrics.model["pooling"] is not None and not isinstance(metrics.model["pooling"], str):
        metrics.fail(f"key 'model.pooling' must be a string or null, found {metrics.model['pooling']!r}")
    if not isinstance(metrics.require("provenance"), dict):
        metrics.fail("key 'provenance' must be an object")
    for key in REQUIRED_KEYS[task]:
        metrics.require(key)
    return metrics
