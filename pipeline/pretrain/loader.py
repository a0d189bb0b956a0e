"""The data loader of one pre-training epoch: collation (masking included) in worker processes.

A GPU is kept busy only if the batches are ready when it asks for them: ``pretrain`` collates in
``--num-workers`` processes (the workflow gives each GPU process its CPUs less one,
``workflow/rules/pretrain.smk``), each keeping ``PREFETCH`` batches ready, into pinned (page-locked)
host memory, from which the training process copies them with ``non_blocking=True`` while the GPU
is still busy with the previous step (``pretrain.to_device``).

Masking does not depend on the workers: each example's draws come from its own generator, seeded
by ``(seed, epoch, example)`` (``pipeline/pretrain/masking.py``), and the batches' order is the
batch sampler's, so 0, 1 or 8 workers give the same batches (tests/pretrain/test_loader.py). The
workers are made once per epoch, after the collator has been told the epoch, so that each one
copies it with the right epoch: the papers train one epoch, and a run of several pays the workers'
start-up (a second or two) once per epoch.
"""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader

# batches each worker keeps ready: enough to cover a slow batch (a long MiSAD candidate list, a
# batch of long sentences) without holding many batches of pinned memory
PREFETCH = 4


def epoch_loader(examples, batches: list[list[int]], collator, workers: int, device: torch.device, generator):
    """A loader over ``batches`` (lists of example indices, in training order) that collates with
    ``collator`` in ``workers`` processes (0: in this process)."""
    extra = {"prefetch_factor": PREFETCH, "persistent_workers": False} if workers else {}
    return DataLoader(
        examples,
        batch_sampler=batches,
        collate_fn=collator,
        num_workers=workers,
        pin_memory=device.type == "cuda",  # page-locked buffers: asynchronous host-to-device copies
        generator=generator,
        **extra,
    )
