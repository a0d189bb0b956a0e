"""Where and how a run happens: the device, the process group under ``torchrun``, the seeds.

One helper picks the device (CUDA when present, else CPU; never a device id: under
``torchrun`` each process takes the GPU of its ``LOCAL_RANK``), so code never names one.
A plain ``python -m pipeline pretrain`` is a world of one process. :func:`seed_everything`
seeds Python, NumPy and torch for the stages that train or evaluate a model.

torch is imported inside the functions that use it: the ``evaluate`` stage imports this module
for its seeds, and a lexical or word2vec baseline never needs torch.
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class World:
    rank: int = 0
    size: int = 1
    local_rank: int = 0

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def pick_device(local_rank: int = 0) -> torch.device:
    """The accelerator of this process: ``cuda`` (the ``LOCAL_RANK``-th GPU under torchrun) or ``cpu``."""
    import torch

    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank % torch.cuda.device_count())
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def init_world() -> World:
    """Join the process group when started by ``torchrun`` (``WORLD_SIZE`` > 1)."""
    import torch
    import torch.distributed as dist

    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1:
        return World()
    if not dist.is_initialized():
        # NCCL wants a GPU of its own per process; more processes than GPUs (two ranks on one GPU, as the GPU
        # acceptance run checks DDP on a one-GPU host) take gloo, which reduces CUDA tensors as well
        local_size = int(os.environ.get("LOCAL_WORLD_SIZE", str(size)))
        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        dist.init_process_group(backend="nccl" if gpus and local_size <= gpus else "gloo")
    return World(rank=dist.get_rank(), size=dist.get_world_size(), local_rank=int(os.environ.get("LOCAL_RANK", "0")))


def barrier(world: World) -> None:
    if world.size > 1:
        import torch.distributed as dist

        dist.barrier()


def shared_text(world: World, text: str, limit: int = 1024) -> str:
    """Rank 0's ``text`` in every process (a broadcast of its UTF-8 bytes as a tensor, no pickle): a name rank 0
    chose, such as a temporary's, that the other ranks write into."""
    if world.size <= 1:
        return text
    import torch
    import torch.distributed as dist

    device = torch.device("cuda", torch.cuda.current_device()) if dist.get_backend() == "nccl" else torch.device("cpu")
    data = text.encode("utf-8")[:limit] if world.is_main else b""
    buffer = torch.zeros(limit + 2, dtype=torch.uint8, device=device)
    buffer[: 2 + len(data)] = torch.tensor([len(data) // 256, len(data) % 256, *data], dtype=torch.uint8)
    dist.broadcast(buffer, src=0)
    received = buffer.cpu().tolist()
    return bytes(received[2 : 2 + received[0] * 256 + received[1]]).decode("utf-8")


def close_world(world: World) -> None:
    import torch.distributed as dist

    if world.size > 1 and dist.is_initialized():
        with contextlib.suppress(Exception):
            dist.barrier()
        dist.destroy_process_group()


def all_mean(value: float, world: World, device: torch.device) -> float:
    """Mean of a scalar over the processes (for logging the global loss)."""
    if world.size == 1:
        return value
    import torch
    import torch.distributed as dist

    tensor = torch.tensor([value], dtype=torch.float64, device=device)
    dist.all_reduce(tensor)
    return tensor.item() / world.size


def all_sum(value: float, world: World, device: torch.device) -> float:
    """Sum of a scalar over the processes (e.g. tokens of a step)."""
    if world.size == 1:
        return value
    import torch
    import torch.distributed as dist

    tensor = torch.tensor([value], dtype=torch.float64, device=device)
    dist.all_reduce(tensor)
    return tensor.item()


def autocast(device: torch.device):
    """bf16 autocast on CUDA (docs/method.md §3: mixed precision on GPUs); full precision on CPU."""
    import torch

    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and, where a model brought it in, torch (never imported just for this)."""
    random.seed(seed)
    np.random.seed(seed)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)
