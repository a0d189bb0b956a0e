"""BF-attention (paper 004 §2.2, eq. 4): attention over the combined states of eq. 3.

    A = W H + b,   e_j = u_wᵀ tanh(W_a a_j + b_a),   w_j = softmax_j(e_j),   S = Σ_j w_j a_j

over the valid time steps. The attention projection ``W_a`` keeps the size of ``a_j``
(the paper does not give it); the sentence vector has ``2 · hidden`` dimensions.
"""

from __future__ import annotations

import torch
from torch import nn


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Softmax over time ``(batch, time)`` with padded steps at weight 0."""
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=1)


class BFAttentionPooling(nn.Module):
    name = "bf-attention"

    def __init__(self, hidden: int):
        super().__init__()
        self.combine = nn.Linear(2 * hidden, 2 * hidden)  # W, b: A = WH + b
        self.project = nn.Linear(2 * hidden, 2 * hidden)  # W_a, b_a of e_j
        self.context = nn.Linear(2 * hidden, 1, bias=False)  # u_w
        self.dim = 2 * hidden

    def attention(self, combined: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """w_j of eq. 4, ``(batch, time)``."""
        return masked_softmax(self.context(torch.tanh(self.project(combined))).squeeze(-1), mask)

    def forward(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        combined = self.combine(states)
        return (self.attention(combined, mask).unsqueeze(-1) * combined).sum(dim=1)
