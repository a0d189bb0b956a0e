"""Fine-tuning hyper-parameters from the papers, the defaults of the CLI and of the config.

GLUE (ULR-BERT §5.1.2, BURT §5.3): learning rate 3e-5, 3 epochs, length 128, batch size chosen
on dev from {8, 16, 32, 64}. CLUE (BURT §5.3, Table V header): batch 8 / 16, learning rate
1e-5 to 3e-5 (2e-5 here), length 128 / 256 (256 for the reading-comprehension tasks), 50 epochs
on WSC and 2-5 on the rest (3 here). The papers do not state warm-up or weight decay; BERT's
fine-tuning recipe (10 % linear warm-up, weight decay 0.01) is used. The span-extraction
window (doc stride 128, answers of at most 30 tokens) is the CLUE CMRC 2018 baseline's.
"""

from __future__ import annotations

GLUE = {"lr": 3e-5, "epochs": 3.0, "max_length": 128, "batch_sizes": (8, 16, 32, 64), "batch_size": 32}
CLUE = {"lr": 2e-5, "epochs": 3.0, "max_length": 128, "batch_sizes": (8, 16), "batch_size": 16}
TASK_OVERRIDES = {
    "cluewsc": {"epochs": 50.0},
    "cmrc2018": {"max_length": 256},
    "chid": {"max_length": 256},
    "c3": {"max_length": 256},
}
COMMON = {"warmup_ratio": 0.1, "weight_decay": 0.01, "doc_stride": 128, "max_answer_tokens": 30}


def defaults(task) -> dict:
    base = GLUE if task.benchmark == "glue" else CLUE
    return {**COMMON, **base, **TASK_OVERRIDES.get(task.name, {})}
