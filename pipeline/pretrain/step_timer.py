"""The compute time of one pre-training optimizer step: ``train_log.jsonl``'s ``step_seconds`` (issue 53 §3).

``tokens_per_s`` in the log is wall-clock from the end of one step to the end of the next, so it holds the wait
for the next batch: at an epoch's start the data loader's workers start afresh (pipeline/pretrain/loader.py), a
second or more, which a small corpus meets every few steps. ``step_seconds`` holds only the step itself: from
before its first micro-batch is prepared (moved to the device, MiSAD's candidates scored) to after the optimizer
step, timed with CUDA events on the device's own clock where it is a GPU (the end event synchronised, so that the
queued kernels are counted, not their launches), and with the wall clock elsewhere. The GPU acceptance run reads it
for the MFU and the step floor (pipeline/acceptance/rows.py).
"""

from __future__ import annotations

import time

import torch


class StepTimer:
    """:meth:`start` before each micro-batch (only the step's first one starts the clock), :meth:`stop` after
    the optimizer step: the step's seconds."""

    def __init__(self, device: torch.device):
        self.cuda = device.type == "cuda"
        self.begun = None

    def start(self) -> None:
        if self.begun is not None:
            return
        if self.cuda:
            self.begun = torch.cuda.Event(enable_timing=True)
            self.begun.record()
        else:
            self.begun = time.perf_counter()

    def stop(self) -> float:
        if self.begun is None:
            return 0.0
        if self.cuda:
            end = torch.cuda.Event(enable_timing=True)
            end.record()
            end.synchronize()
            seconds = self.begun.elapsed_time(end) / 1000
        else:
            seconds = time.perf_counter() - self.begun
        self.begun = None
        return round(seconds, 6)
