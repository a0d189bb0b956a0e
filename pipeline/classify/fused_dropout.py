"""Each fused member's dropout masks from its own key (docs/stages/classify.md, "Fused seeds").

Under ``vmap(randomness="different")`` the K members of a stack draw their masks from one generator, so a
member's masks depend on which models share its stack and on K. Here a member's mask is a function of its own
key (:func:`member_key`: its model, seed and setting), the step, the dropout call's place in the forward and
the element's coordinates: a counter-based hash of integers (Salmon et al. 2011, "Parallel random numbers: as
easy as 1, 2, 3"), made of integer operations that ``vmap`` batches, so one member draws the same masks in a
stack of 1 as in a stack of 16, and a resumed run the same masks as an unbroken one. An element's mask hashes
its coordinates, not its flat index: a stack pads the token axis to its longest member's, and a real token
keeps its coordinates whatever the padding.

Every dropout of the transformers models (``nn.Dropout`` modules and the eager attention's
``nn.functional.dropout``) goes through ``torch.nn.functional.dropout``, which :class:`MemberDropout`, a
torch function mode, replaces while the stacked forward runs. The masks are not torch's: a fused member with
dropout on is a run of the same distribution as its solo run, not the same run (with dropout off it is).
"""

from __future__ import annotations

import hashlib
import json

import torch
from torch.overrides import TorchFunctionMode

MASK32 = 0xFFFFFFFF
# odd multipliers under 2**31: a 32-bit value times one stays inside int64, so the hash is exact on every device
MULTIPLIERS = (0x7FEB352D, 0x5BD1E995)
UNIFORM_BITS = 24  # a mask compares a 24-bit uniform with the rate


def mix(x: torch.Tensor) -> torch.Tensor:
    """A 32-bit integer hash (xor-shift and odd multiplies modulo 2**32, a bijection) of int64 values in [0, 2**32)."""
    x = x ^ (x >> 16)
    x = (x * MULTIPLIERS[0]) & MASK32
    x = x ^ (x >> 15)
    x = (x * MULTIPLIERS[1]) & MASK32
    return x ^ (x >> 16)


def member_key(model: str, seed: int, setting: str) -> int:
    """A member's 32-bit dropout key: its model, its seed and its setting (the grid point's label), nothing of
    the stack it trains in."""
    text = json.dumps([model, seed, setting])
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:4], "big")


def step_keys(keys: torch.Tensor, step: int) -> torch.Tensor:
    """Each member's key [K] for one optimiser step."""
    return mix(mix(keys) ^ (step & MASK32))


def keep_mask(key: torch.Tensor, call: int, shape: torch.Size, p: float, device) -> torch.Tensor:
    """Which elements of a tensor of ``shape`` one dropout call keeps (True with probability 1 - p): a hash of the
    member's step key, the call's place in the forward and each coordinate, one axis after the other."""
    h = mix(key ^ call).reshape([1] * len(shape))
    for axis, size in enumerate(shape):
        coordinate = torch.arange(size, device=device).view([size if a == axis else 1 for a in range(len(shape))])
        h = mix(h ^ coordinate)
    threshold = round(p * (1 << UNIFORM_BITS))
    return (h >> (32 - UNIFORM_BITS)) >= threshold


def _dropout_arguments(input, p=0.5, training=True, inplace=False):
    return input, p, training


class MemberDropout(TorchFunctionMode):
    """``torch.nn.functional.dropout`` with the masks of :func:`keep_mask`, while the mode is on. ``key`` is the
    member's step key (a batched 0-d tensor inside ``vmap``); each call of the forward counts one."""

    def __init__(self, key: torch.Tensor):
        super().__init__()
        self.key = key
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is not torch.nn.functional.dropout:
            return func(*args, **kwargs)
        tensor, p, training = _dropout_arguments(*args, **kwargs)
        if not training or p == 0:
            return tensor
        if p >= 1:
            return tensor * 0
        self.calls += 1
        keep = keep_mask(self.key, self.calls, tensor.shape, p, tensor.device)
        return tensor * (keep.to(tensor.dtype) * (1.0 / (1.0 - p)))
