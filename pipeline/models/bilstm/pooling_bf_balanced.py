"""BF-balanced max pooling (paper 004 §2.2, eq. 2).

At each time step the forward and backward states are weighted by their shares of the
"amount of information" ``I``, then concatenated ("we change the strength of →h_t, ←h_t
according to their amount of information and concatenate them before pooling") and max-pooled:

    w0 = →I / (→I + ←I),   w1 = ←I / (→I + ←I),   S = Maxpooling([2·w0·→h_t ; 2·w1·←h_t])

The paper says only that a parameter matrix W measures the information. Here it is one matrix
shared by both directions, ``I = exp(W h + b)`` per dimension, so ``w0 = sigmoid(W(→h − ←h))``
(computed in that form, which cannot overflow; b cancels, so the layer has none). With equal directions
(``→h_t = ←h_t``) both weights are 1/2 and the factor 2 ("for keeping the whole information
stable") makes S exactly BiLSTM-max pooling. Dimension ``2 · hidden``.
"""

from __future__ import annotations

import torch
from torch import nn

from pipeline.models.bilstm.pooling_max import masked_max


class BFBalancedPooling(nn.Module):
    name = "bf-balanced"

    def __init__(self, hidden: int):
        super().__init__()
        self.hidden = hidden
        self.information = nn.Linear(hidden, hidden, bias=False)  # W of eq. 2; a bias b would cancel in the shares
        self.dim = 2 * hidden

    def weights(self, forward: torch.Tensor, backward: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(w0, w1) of eq. 2: the shares of →I = exp(W →h + b) and ←I = exp(W ←h + b)."""
        w0 = torch.sigmoid(self.information(forward) - self.information(backward))
        return w0, 1.0 - w0

    def forward(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        forward, backward = states[..., : self.hidden], states[..., self.hidden :]
        w0, w1 = self.weights(forward, backward)
        return masked_max(torch.cat([2 * w0 * forward, 2 * w1 * backward], dim=-1), mask)
