"""``acceptance.yaml``: what the GPU acceptance run measured (python -m pipeline gpu-acceptance, issue 48 §1), read and
checked for the budget and the plan.

``python -m pipeline gpu-acceptance`` on a CUDA GPU runs the pipeline's own stages on random-weight models of the papers'
architectures and writes this file beside ``workloads.yaml``: the card's name and the date, the per-step floor
per Transformer layer (a BERT-base fine-tuning step as the classify stage takes it, over its 12 layers), the
time per member-step of a fused stack over a solo step by stack size, the model FLOPs utilisation each
pre-training objective reached, the MFU classify's solo and fused steps reached at the grids' shapes
(``finetune_mfu``, read by :func:`finetune_mfu`; absent from a file made before it was measured), and the GPU memory measured over pipeline/budget/memory.py's estimate, the
largest over the jobs of each kind (pre-training, fused fine-tuning). Where the file exists the plan costs its
jobs with these (pipeline/plan/plan_costs.py) and says "measured on CARD, DATE" in its assumption line, and the
memory model corrects an estimate that was more than :data:`MEMORY_TOLERANCE` off (:func:`memory_factor`).

Only a CUDA run writes it: ``device`` must be ``cuda``, so the CPU form CI runs (``python -m pipeline gpu-acceptance
--device cpu``, tiny models) can never feed the plan, even when its file is copied here. Like
``workloads.yaml`` it decides GPU-hours, so it is not taken on trust (issue 47 §5): read as a small file and
checked against :data:`SCHEMA`; anything else stops the plan with one line naming the file and the place.
"""

from __future__ import annotations

import datetime
from functools import cache
from itertools import pairwise
from pathlib import Path

from pipeline.budget.workloads_file import not_finite
from pipeline.errors import InputError
from pipeline.small_files import MIB, read_small_yaml

ACCEPTANCE = Path(__file__).with_name("acceptance.yaml")
LIMIT = MIB
# The estimate is kept where the measured peak is within 15% of it (issue 48 §1), and corrected otherwise.
MEMORY_TOLERANCE = 0.15
KINDS = ("pretrain", "electra", "fused")  # ELECTRA: a generator and a discriminator in one step
# The fine-tuning shapes whose MFU the run measures (issue 53 §3): ``sentence``, GLUE at 128 tokens, batch 32 on
# BERT-base; ``multiple-choice``, ChID at 256 tokens, batch 8 x 10 candidates on the wwm-ext shape
FINETUNE_SHAPES = ("sentence", "multiple-choice")
# The pre-training sizes and inputs whose MLM MFU the run measures (issue 53 §3): what the plan applies it to
SIZES, INPUTS = ("base", "large", "xxlarge"), ("sentences", "packed")
MFU = {"type": "number", "exclusiveMinimum": 0, "maximum": 1}
CARD = {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9 .()+-]{0,79}$"}  # as workloads_file.CARD
RATIO = {"type": "number", "exclusiveMinimum": 0, "maximum": 100}
SCHEMA = {
    "type": "object",
    "required": ["card", "date", "device", "step_floor_per_layer_ms", "fused_ratio", "mfu", "memory_factor"],
    "additionalProperties": False,
    "properties": {
        "card": CARD,
        "date": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
        "device": {"const": "cuda"},  # a CPU run never feeds the plan
        "torch": {"type": "string", "pattern": r"^[0-9A-Za-z.+-]{1,40}$"},
        "step_floor_per_layer_ms": {"type": "number", "minimum": 1e-3, "maximum": 1e4},
        "fused_ratio": {  # members K -> time per member-step over a solo step's
            "type": "object",
            "propertyNames": {"pattern": r"^[1-9][0-9]{0,3}$"},
            "additionalProperties": RATIO,
        },
        "mfu": {  # job label (an objective, ELECTRA's or ALBERT-xxlarge's prefixed) -> MFU in (0, 1]
            "type": "object",
            "propertyNames": {"pattern": r"^[a-z0-9][a-z0-9.+-]{0,63}$"},
            "additionalProperties": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        },
        "memory_factor": {
            "type": "object",
            "propertyNames": {"enum": list(KINDS)},
            "additionalProperties": RATIO,
        },
        "pretrain_mfu": {  # size -> input -> MLM's MFU at steady state (CUDA events, warm-up left out)
            "type": "object",
            "propertyNames": {"enum": list(SIZES)},
            "additionalProperties": {
                "type": "object",
                "minProperties": 1,
                "propertyNames": {"enum": list(INPUTS)},
                "additionalProperties": MFU,
            },
        },
        "finetune_mfu": {  # shape -> members K (1: solo) -> the MFU classify's steps reached, in (0, 1]
            "type": "object",
            "propertyNames": {"enum": list(FINETUNE_SHAPES)},
            "additionalProperties": {
                "type": "object",
                "minProperties": 1,
                "propertyNames": {"pattern": r"^[1-9][0-9]{0,3}$"},
                "additionalProperties": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
            },
        },
    },
}


def check(data, path) -> dict:
    """``data`` (the parsed file at ``path``) when it satisfies :data:`SCHEMA`; else one error naming the place."""
    import jsonschema

    if not isinstance(data, dict):
        raise InputError(path, "not an acceptance file: expected a mapping (rerun python -m pipeline gpu-acceptance)")
    data = {**data, "date": str(data["date"])} if "date" in data else data  # YAML reads an unquoted date as one
    place = not_finite(data)
    if place is not None:
        raise InputError(
            path, "not a finite number (rerun python -m pipeline gpu-acceptance)", ".".join(map(str, place))
        )
    # YAML reads a key `4:` as the number 4, which a schema's propertyNames pattern does not check: the
    # schema sees every key as text (0, -4 or `true` as a stack size is then refused)
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(SCHEMA).iter_errors(_keys_as_text(data)))
    if error is not None:
        where = ".".join(str(part) for part in error.absolute_path) or "the top level"
        what = " ".join(error.message.split())[:200]
        raise InputError(path, f"{what} (rerun python -m pipeline gpu-acceptance on a CUDA GPU)", where)
    try:
        datetime.date.fromisoformat(data["date"])
    except ValueError:
        raise InputError(path, f"{data['date']} is not a calendar date (YYYY-MM-DD)", "date") from None
    return data


def _keys_as_text(node):
    """``node`` with every mapping key as text: a number as its digits, ``true`` / ``false`` as ``True`` /
    ``False`` (which no key pattern of the schema admits)."""
    if isinstance(node, dict):
        return {str(key): _keys_as_text(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_keys_as_text(value) for value in node]
    return node


def read_acceptance(path: str | Path = ACCEPTANCE) -> dict | None:
    """The checked content of the acceptance file at ``path``; None where there is none (no GPU run yet)."""
    if not Path(path).exists():
        return None
    return check(read_small_yaml(path, LIMIT, "the acceptance file"), path)


@cache
def measured() -> dict | None:
    """:data:`ACCEPTANCE` read once (None: not measured on a GPU yet)."""
    return read_acceptance(ACCEPTANCE)


def memory_factor(kind: str) -> float:
    """What the memory estimate of a ``kind`` job (:data:`KINDS`) is multiplied by: the measured peak over the
    estimate where a GPU run found them more than :data:`MEMORY_TOLERANCE` apart, else 1 (the estimate stands)."""
    found = measured()
    factor = float(((found or {}).get("memory_factor") or {}).get(kind, 1.0))
    return factor if abs(factor - 1) > MEMORY_TOLERANCE else 1.0


def pretrain_mfu(keys: list[str], size: str, form: str, default: float) -> float:
    """The MFU a pre-training job runs at, ``keys`` its objective's labels in acceptance.yaml ``mfu``, most
    specific first (``albert-xxlarge+misad``, ``misad.released``, ``misad``), ``size`` (base, large, xxlarge)
    and ``form`` its input (sentences, packed): the objective's figure, measured on BERT-base's sentences (an
    ``albert-xxlarge+`` one on ALBERT-xxlarge's), times MLM's figure at the job's size and input over MLM's
    where the objective's was measured (``pretrain_mfu``), so that a large or packed job runs at its own shape's
    rate, not base's; an objective not measured: MLM's figure at its size and input; neither: ``default``."""
    found = measured() or {}
    objectives, shapes = found.get("mfu") or {}, found.get("pretrain_mfu") or {}
    here = (shapes.get(size) or {}).get(form)
    for key in keys:
        if key in objectives:
            there = (shapes.get("xxlarge" if key.startswith("albert-xxlarge+") else "base") or {}).get("sentences")
            return min(1.0, objectives[key] * here / there) if here and there else objectives[key]
    return here or default


def finetune_mfu(multiple_choice: bool, members: int, default: float) -> float:
    """The MFU a fine-tuning job of ``members`` stacked runs (1: solo) reached on the GPU acceptance run, for its
    shape (``multiple-choice`` or ``sentence``, :data:`FINETUNE_SHAPES`): linear in K between the stack sizes
    measured, the nearest one's outside them; ``default`` (the plan's --mfu) where the shape was not measured."""
    table = ((measured() or {}).get("finetune_mfu") or {}).get("multiple-choice" if multiple_choice else "sentence")
    if not table:
        return default
    points = sorted((int(k), float(v)) for k, v in table.items())
    if members <= points[0][0]:
        return points[0][1]
    for (k0, v0), (k1, v1) in pairwise(points):
        if members <= k1:
            return v0 + (members - k0) / (k1 - k0) * (v1 - v0)
    return points[-1][1]


def finetune_source(mfu: float) -> str:
    """Which MFU the plan costs fine-tuning at, for its assumption line: the measured one per shape, or ``mfu``."""
    table = (measured() or {}).get("finetune_mfu") or {}
    shown = [
        f"{shape} {', '.join(f'K={k} {100 * float(v):.1f}%' for k, v in sorted(table[shape].items(), key=lambda kv: int(kv[0])))}"
        for shape in FINETUNE_SHAPES
        if shape in table
    ]
    if not shown:
        return (
            f"fine-tuning at the assumed {100 * mfu:g}% MFU (not measured: python -m pipeline gpu-acceptance "
            "measures it on a GPU)"
        )
    unmeasured = [shape for shape in FINETUNE_SHAPES if shape not in table]
    rest = f"; {', '.join(unmeasured)} at the assumed {100 * mfu:g}%" if unmeasured else ""
    return (
        f"fine-tuning at the MFU measured at the grids' shapes, linear in K between ({'; '.join(shown)}: "
        f"sentence = GLUE 128 x 32 on BERT-base, multiple-choice = ChID 256 x 8 x 10 on chinese-bert-wwm-ext){rest}"
    )


def source() -> str | None:
    """ "measured on CARD, DATE ..." for the plan's assumption line; None where nothing was measured."""
    found = measured()
    if found is None:
        return None
    return f"measured on {found['card']}, {found['date']} by python -m pipeline gpu-acceptance (pipeline/budget/acceptance.yaml)"
