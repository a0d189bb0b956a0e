"""Each fused member's dropout masks from its own key (docs/stages/classify.md, "Fused seeds").

Under ``vmap(randomness="different")`` the K members of a stack draw their masks from one generator, so a
member's masks depend on which models share its stack and on K. Here a member's mask is a function of its own
key (:func:`member_key`: its model, seed and setting), the step, the dropout call's place in the forward and
the element's coordinates: a counter-based hash of integers (Salmon et al. 2011, "Parallel random numbers: as
easy as 1, 2, 3"), made of integer operations that ``vmap`` batches, so one member draws the same masks in a
stack of 1 as in a stack of 16, and a resumed run the same masks as an unbroken one. An element's mask hashes
its coordinates, not its flat index: a stack pads the token axis to its longest member's, and a real token
keeps its coordinates whatever the padding. The step (a GLUE step is bound by the operators it launches,
bench/fused_ops.py) pays about a dozen element-wise operators per dropout call, shared by the stack's
members: the call keys are hashed once a step for the whole stack (:func:`call_keys`), the coordinates' codes
once a shape (:func:`coordinate_code`).

Every dropout of the transformers models (``nn.Dropout`` modules and the eager attention's
``nn.functional.dropout``) goes through ``torch.nn.functional.dropout``, which :class:`MemberDropout`, a
torch function mode, replaces while the stacked forward runs. The masks are not torch's: a fused member with
dropout on is a run of the same distribution as its solo run, not the same run (with dropout off it is).
"""

from __future__ import annotations

import functools
import hashlib
import json

import torch
from torch.overrides import TorchFunctionMode

MASK32 = 0xFFFFFFFF
# odd multipliers under 2**31: a 32-bit value times one stays inside int64, so the hash is exact on every device
MULTIPLIERS = (0x7FEB352D, 0x5BD1E995)
# one odd multiplier per axis of a tensor (a coordinate's share of the element's code), under 2**31 as well
AXIS_MULTIPLIERS = (0x2C1B3C6D, 0x297A2D39, 0x1B873593, 0x68E31DA5, 0x4CF5AD43, 0x38495AB5)
UNIFORM_BITS = 24  # a mask compares a 24-bit uniform with the rate
MAX_CALLS = 1024  # dropout calls in one forward (BERT-large: 74)


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


def call_keys(keys: torch.Tensor, step: int) -> torch.Tensor:
    """Each member's key for each dropout call of one optimiser step [K, MAX_CALLS], computed once a step for
    the whole stack (a handful of operators on K x 1024 numbers, not a handful per call)."""
    step_key = mix(mix(keys) ^ (step & MASK32))
    calls = torch.arange(MAX_CALLS, device=keys.device)
    return mix(step_key[:, None] ^ calls)


@functools.lru_cache(maxsize=256)
def coordinate_code(shape: tuple[int, ...], device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """The code of each element of a tensor of ``shape``, a sum of its coordinates times one multiplier per axis
    modulo 2**32, as (the leading axes' share, broadcastable; the last axis's share): it depends on the
    coordinates alone, so a token keeps its code whatever the padding. Cached: a shape recurs every step."""
    if not shape:
        return torch.zeros((), dtype=torch.int64, device=device), torch.zeros((), dtype=torch.int64, device=device)
    if len(shape) > len(AXIS_MULTIPLIERS):
        raise ValueError(f"dropout on a tensor of {len(shape)} axes; at most {len(AXIS_MULTIPLIERS)}")
    shares = [
        ((torch.arange(size, dtype=torch.int64, device=device) * AXIS_MULTIPLIERS[axis]) & MASK32).view(
            [size if a == axis else 1 for a in range(len(shape))]
        )
        for axis, size in enumerate(shape)
    ]
    leading = torch.zeros([1] * len(shape), dtype=torch.int64, device=device)
    for share in shares[:-1]:
        leading = leading + share
    return leading, shares[-1]


def keep_mask(call_key: torch.Tensor, shape: torch.Size, p: float, device) -> torch.Tensor:
    """Which elements of a tensor of ``shape`` one dropout call keeps (True with probability 1 - p): a hash of the
    call's key (the member's, the step's and the call's) and the element's coordinate code."""
    leading, last = coordinate_code(tuple(shape), torch.device(device))
    x = ((leading + last) ^ call_key) & MASK32
    x = (x * MULTIPLIERS[0]) & MASK32
    x = x ^ (x >> 15)
    x = (x * MULTIPLIERS[1]) & MASK32
    threshold = round(p * (1 << UNIFORM_BITS))
    return (x >> (32 - UNIFORM_BITS)) >= threshold


def _dropout_arguments(input, p=0.5, training=True, inplace=False):
    return input, p, training


class MemberDropout(TorchFunctionMode):
    """``torch.nn.functional.dropout`` with the masks of :func:`keep_mask`, while the mode is on. ``keys`` are the
    member's call keys for this step (:func:`call_keys`; a batched [MAX_CALLS] tensor inside ``vmap``); each
    call of the forward takes the next."""

    def __init__(self, keys: torch.Tensor):
        super().__init__()
        self.keys = keys
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
        if self.calls == MAX_CALLS:
            raise RuntimeError(f"more than {MAX_CALLS} dropout calls in one forward")
        keep = keep_mask(self.keys[self.calls], tensor.shape, p, tensor.device)
        self.calls += 1
        return tensor * keep * (1.0 / (1.0 - p))
