"""Run acceptance jobs through the package's entry point in this process and record the GPU memory each peaked at.

    python -m pipeline.acceptance.peak_memory JOBS.json

JOBS.json lists jobs, each ``{"name", "argv", "log", "peak"}``: ``argv`` a ``python -m pipeline`` command line
(``pipeline.cli.main``, so nothing of a stage is re-implemented), ``log`` the file its log lines go to, ``peak``
the JSON file that receives ``{"peak_bytes", "status", "seconds"}``, where ``peak_bytes`` is
``torch.cuda.max_memory_allocated()`` over that job alone (the quantity pipeline/budget/memory.py estimates;
``null`` without CUDA). Several jobs share one process so that torch, transformers and the CUDA context are
loaded once, not once a job (seconds each, on a lease counted in minutes); the allocator's peak is reset and
its cache emptied between them. The exit status is the number of failed jobs (at most 100).
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import sys
import time
from pathlib import Path


def run_one(job: dict) -> int:
    import torch

    from pipeline.cli import main as pipeline_main

    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    log_path = Path(job["log"])
    log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with open(log_path, "w", encoding="utf-8") as log:
        handler = logging.StreamHandler(log)
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        logging.getLogger().addHandler(handler)
        try:
            with contextlib.redirect_stderr(log), contextlib.redirect_stdout(log):
                try:
                    status = pipeline_main([str(a) for a in job["argv"]])
                except BaseException as error:  # a job's crash (SystemExit too) is its row's finding
                    if isinstance(error, KeyboardInterrupt):
                        raise
                    import traceback

                    traceback.print_exc(file=log)
                    status = 1
        finally:
            logging.getLogger().removeHandler(handler)
    peak = torch.cuda.max_memory_allocated() if cuda else None
    gc.collect()
    record = {"peak_bytes": peak, "status": status, "seconds": round(time.monotonic() - started, 3)}
    Path(job["peak"]).write_text(json.dumps(record) + "\n", encoding="utf-8")
    return status


def main(argv: list[str]) -> int:
    jobs = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    logging.basicConfig(level=logging.INFO, handlers=[logging.NullHandler()])
    failed = sum(run_one(job) != 0 for job in jobs)
    return min(failed, 100)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
