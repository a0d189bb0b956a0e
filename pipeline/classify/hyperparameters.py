"""Fine-tuning hyper-parameters from the papers: the CLI's defaults and the grids searched on dev.

GLUE (ULR-BERT §5.1.2, BURT §5.3): "All experiments on the GLUE benchmark are ran with a total
train batch sizes between 8 and 64 and learning rates of 3e-5 for 3 epochs" (BURT §5.3): lr 3e-5,
3 epochs, length 128, batch size chosen on dev from {8, 16, 32, 64}.

CLUE (BURT §5.3 and Table V's header, "Batch size: 8, 16; Length: 128, 256; Epoch: 2, 3, 5, 50;
lr: 1e-5, 2e-5, 3e-5"): "we set batch sizes to 8 and 16, learning rates between 1e-5 and 3e-5,
and train 50 epochs on WSC and 2–5 epochs on the rest tasks". The workflow's default grid
(workflow/schemas/config.schema.yaml, ``classify``) is that product, every setting selected on
dev; the reading-comprehension tasks keep length 256, the CLUE CMRC 2018 baseline's window
(doc stride 128, answers of at most 30 tokens), which a length of 128 cannot hold. The CLI's
single defaults below are the grid's middle values.

The papers do not state warm-up or weight decay; BERT's fine-tuning recipe (10 % linear warm-up,
weight decay 0.01) is used.
"""

from __future__ import annotations

import math
from itertools import product

GLUE = {"lr": 3e-5, "epochs": 3.0, "max_length": 128, "batch_sizes": (8, 16, 32, 64), "batch_size": 32}
CLUE = {"lr": 2e-5, "epochs": 3.0, "max_length": 128, "batch_sizes": (8, 16), "batch_size": 16}
TASK_OVERRIDES = {
    "cluewsc": {"epochs": 50.0},
    "cmrc2018": {"max_length": 256},
    "chid": {"max_length": 256},
    "c3": {"max_length": 256},
}
COMMON = {"warmup_ratio": 0.1, "weight_decay": 0.01, "doc_stride": 128, "max_answer_tokens": 30}
GRID_KEYS = ("batch_size", "lr", "epochs", "max_length")
MAX_SETTINGS = 1000  # settings of one task's grid: each is a job per seed, listed while Snakemake reads the rules


def defaults(task) -> dict:
    base = GLUE if task.benchmark == "glue" else CLUE
    return {**COMMON, **base, **TASK_OVERRIDES.get(task.name, {})}


def setting_label(batch_size: int, lr: float, epochs: float, max_length: int) -> str:
    """One grid point as a folder name, e.g. ``batch16-lr2e-05-epochs3-len128``."""
    return f"batch{int(batch_size)}-lr{float(lr):g}-epochs{float(epochs):g}-len{int(max_length)}"


def grid(**values) -> dict[str, dict]:
    """Label -> setting for every combination of the values of :data:`GRID_KEYS` (each a number or a list),
    in the order the lists give them; a repeated value counts once."""
    axes = [
        list(dict.fromkeys(values[key] if isinstance(values[key], list | tuple) else [values[key]]))
        for key in GRID_KEYS
    ]
    size = math.prod(len(axis) for axis in axes)
    if size > MAX_SETTINGS:
        raise ValueError(
            f"config: classify: the grid of {' x '.join(str(len(axis)) for axis in axes)} values "
            f"({', '.join(GRID_KEYS)}) has {size:,} settings; at most {MAX_SETTINGS:,}"
        )
    settings = (dict(zip(GRID_KEYS, point)) for point in product(*axes))
    return {setting_label(**setting): setting for setting in settings}
