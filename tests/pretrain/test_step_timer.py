"""train_log.jsonl's ``step_seconds`` (pipeline/pretrain/step_timer.py): one step's own compute, from its first
micro-batch to after its optimizer step, the wall clock off a GPU."""

from __future__ import annotations

import time

import torch

from pipeline.pretrain.step_timer import StepTimer


def test_a_step_is_timed_from_its_first_micro_batch_to_its_end():
    timer = StepTimer(torch.device("cpu"))
    assert timer.stop() == 0.0  # never started
    timer.start()
    time.sleep(0.05)
    timer.start()  # a second micro-batch of the same step does not restart the clock
    time.sleep(0.05)
    assert 0.09 <= timer.stop() < 1.0
    timer.start()  # the next step starts afresh
    assert timer.stop() < 0.05
