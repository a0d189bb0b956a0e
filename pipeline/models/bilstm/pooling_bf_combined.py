"""BF-combined max pooling (paper 004 §2.2, eq. 3).

    H = [→h ; ←h],   A = W H + b,   S = Maxpooling(A)

A linear map mixes the two directions at every time step before the maximum over time is
taken, so information spread over several dimensions is not lost to a per-dimension maximum.
W is square: the sentence vector keeps the BiLSTM's ``2 · hidden`` dimensions (Table 2's 600
for 300 units per direction).
"""

from __future__ import annotations

import torch
from torch import nn

from pipeline.models.bilstm.pooling_max import masked_max


class BFCombinedPooling(nn.Module):
    name = "bf-combined"

    def __init__(self, hidden: int):
        super().__init__()
        self.combine = nn.Linear(2 * hidden, 2 * hidden)  # W, b of eq. 3
        self.dim = 2 * hidden

    def forward(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return masked_max(self.combine(states), mask)
