"""Max pooling over time (paper 004 §2.1, the InferSent BiLSTM-Max baseline).

``S = max_t h_t`` per dimension over the valid time steps of ``h_t = [→h_t; ←h_t]`` (eq. 1):
the sentence vector has the BiLSTM's ``2 · hidden`` dimensions.
"""

from __future__ import annotations

import torch
from torch import nn


def masked_max(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Element-wise maximum of ``states`` ``(batch, time, dim)`` over the time steps ``mask`` keeps."""
    return states.masked_fill(~mask.unsqueeze(-1), float("-inf")).amax(dim=1)


class MaxPooling(nn.Module):
    name = "max"

    def __init__(self, hidden: int):
        super().__init__()
        self.dim = 2 * hidden

    def forward(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return masked_max(states, mask)
