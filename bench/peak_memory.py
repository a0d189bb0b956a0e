"""Run one ``python -m pipeline STAGE ...`` in this process and record the GPU memory it peaked at.

    python bench/peak_memory.py PEAK.json STAGE [ARGS...]

The stage runs through the package's own entry point (``pipeline.cli.main``, what ``python -m pipeline`` calls), so
nothing of it is re-implemented; afterwards ``torch.cuda.max_memory_allocated()`` (the most memory the caching
allocator handed to tensors at once, the quantity pipeline/budget/memory.py estimates) is written to PEAK.json,
``null`` on a machine without CUDA. The stage's exit status is this script's. Used by bench/gpu_acceptance.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str]) -> int:
    out, stage = Path(argv[0]), argv[1:]
    from pipeline.cli import main as pipeline_main

    status = pipeline_main(stage)
    import torch

    peak = torch.cuda.max_memory_allocated() if torch.cuda.is_available() else None
    out.write_text(json.dumps({"peak_bytes": peak, "status": status}) + "\n", encoding="utf-8")
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
