"""``workloads.yaml`` read and checked: the measured inputs of the cost model (pipeline/budget/cost.py).

Most of the file is written by hand, each value citing its source. ``step_floor_measured`` is written
by ``bench/gpu_step.py --write-workloads`` on a GPU (issue 41 §3) and replaces the documented per-step
floor (``step_floor``) in the plan. A floor decides most of a small job's GPU-hours, so the file is not
taken on trust (issue 47 §5): it is read as a small file (pipeline/small_files.py) and both floors are
checked against :data:`SCHEMA`, each time a finite number of milliseconds in :data:`MS_RANGE`, never a
boolean (YAML's ``true`` is not 1 ms), and the card's name plain text (it is printed into the plan's
Markdown). Anything else stops the plan with one line naming the file and the place in it.
"""

from __future__ import annotations

import math
from pathlib import Path

from pipeline.errors import InputError
from pipeline.small_files import MIB, read_small_yaml

LIMIT = MIB
# Milliseconds a step, per member-step or per layer, may take: from 10 us (below any optimiser step
# of BERT-base: AdamW alone reads and writes its 110M parameters' 16 bytes each, about 1 ms on an
# H100) to 100 s (a step past it is a stalled card, not a floor).
MS_RANGE = (1e-2, 1e5)
MILLISECONDS = {"type": "number", "minimum": MS_RANGE[0], "maximum": MS_RANGE[1]}
# A cell bench/gpu_step.py could not time says why (bench/gpu_step.py, measure()).
NOT_TIMED = {"type": "string", "pattern": r"^(out of memory|skipped: time|failed: [A-Za-z]\w{0,63})$"}
# torch.cuda.get_device_name(): "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "Tesla V100-SXM2-16GB"
CARD = {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9 .()+-]{0,79}$"}
COUNT = {"type": "integer", "minimum": 1, "maximum": 65536}

SCHEMA = {
    "type": "object",
    "properties": {
        "step_floor": {
            "type": "object",
            "required": ["per_layer_ms"],
            "properties": {"per_layer_ms": MILLISECONDS},
        },
        "step_floor_measured": {
            "type": "object",
            "required": ["card", "ms_per_member_step"],
            "additionalProperties": False,
            "properties": {
                "card": CARD,
                "ms_per_member_step": {  # shape -> mode -> batch -> members K -> ms per member-step
                    "type": "object",
                    "propertyNames": {"type": "string", "pattern": r"^[a-z0-9][a-z0-9-]{0,31}$"},
                    "additionalProperties": {
                        "type": "object",
                        "propertyNames": {"enum": ["eager", "compiled"]},
                        "additionalProperties": {
                            "type": "object",
                            "propertyNames": COUNT,
                            "additionalProperties": {
                                "type": "object",
                                "propertyNames": COUNT,
                                "additionalProperties": {"oneOf": [MILLISECONDS, NOT_TIMED]},
                            },
                        },
                    },
                },
            },
        },
    },
}


def _place(path) -> str:
    return ".".join(str(part) for part in path) or "the top level"


def not_finite(value, path=()) -> tuple | None:
    """Where ``value`` holds a NaN (a range check passes it: every comparison with NaN is false)."""
    if isinstance(value, float) and not math.isfinite(value):
        return path
    if isinstance(value, dict):
        for key, item in value.items():
            found = not_finite(item, (*path, key))
            if found is not None:
                return found
    return None


def _why(value, error) -> str:
    """What is wrong with ``value``, the place ``error`` (jsonschema's) found wrong."""
    shown = repr(value) if len(repr(value)) <= 80 else f"{repr(value)[:80]}..."
    if isinstance(value, bool):
        return f"{str(value).lower()} is a boolean, not a number"
    if isinstance(value, int | float) and error.validator in ("minimum", "maximum", "oneOf"):
        low, high = MS_RANGE
        return f"{shown} ms is outside [{low}, {high:g}] ms: no training step's floor"
    if error.validator == "oneOf" or error.schema is NOT_TIMED:
        return f"{shown} is neither a number of milliseconds nor a reason bench/gpu_step.py records"
    if error.validator == "pattern" and error.schema is CARD:
        return f"{shown} is not plain text (letters, digits, spaces and . ( ) + -)"
    return " ".join(error.message.split())[:200]


def check(data, path) -> dict:
    """``data`` (the parsed file at ``path``) when it satisfies :data:`SCHEMA`; else one error naming the place."""
    import jsonschema

    if not isinstance(data, dict):
        raise InputError(path, "not a workloads file: expected a mapping")
    for section in ("step_floor", "step_floor_measured"):
        place = not_finite(data.get(section), (section,))
        if place is not None:
            raise InputError(path, "not a finite number of milliseconds (rerun bench/gpu_step.py)", _place(place))
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(SCHEMA).iter_errors(data))
    if error is not None:
        raise InputError(path, f"{_why(error.instance, error)} (rerun bench/gpu_step.py)", _place(error.absolute_path))
    return data


def read_workloads(path: str | Path) -> dict:
    """The checked content of ``workloads.yaml`` at ``path``."""
    return check(read_small_yaml(path, LIMIT, "the workloads file") or {}, path)
