"""Inner-attention pooling, the self-attention baseline of paper 004 Table 2 (Liu et al. 2016,
*Learning Natural Language Inference using Bidirectional LSTM Model and Inner-Attention*, §3.2).

The sentence's own mean state attends over its states:

    M = tanh(W_y Y + W_h R_avg ⊗ e_L),   α = softmax(wᵀ M),   R_att = Y αᵀ

with ``Y`` the BiLSTM states and ``R_avg`` their mean over the valid time steps. Dimension
``2 · hidden``.
"""

from __future__ import annotations

import torch
from torch import nn

from pipeline.models.bilstm.pooling_bf_attention import masked_softmax


class InnerAttentionPooling(nn.Module):
    name = "inner-attention"

    def __init__(self, hidden: int):
        super().__init__()
        self.states = nn.Linear(2 * hidden, 2 * hidden, bias=False)  # W_y
        self.average = nn.Linear(2 * hidden, 2 * hidden, bias=False)  # W_h
        self.score = nn.Linear(2 * hidden, 1, bias=False)  # w
        self.dim = 2 * hidden

    def attention(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """α, ``(batch, time)``."""
        keep = mask.unsqueeze(-1).to(states.dtype)
        mean = (states * keep).sum(1) / keep.sum(1).clamp(min=1.0)
        memory = torch.tanh(self.states(states) + self.average(mean).unsqueeze(1))
        return masked_softmax(self.score(memory).squeeze(-1), mask)

    def forward(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return (self.attention(states, mask).unsqueeze(-1) * states).sum(dim=1)
