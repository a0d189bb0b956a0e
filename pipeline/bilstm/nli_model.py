"""The NLI classifier on top of a sentence encoder (paper 004 §2.2, Fig. 1).

Premise and hypothesis are encoded by the same encoder into u and v; the features
``[u; v; |u − v|; u * v]`` go through one fully connected layer of 512 units (§3.1) and a
softmax layer over the three labels. The hidden layer uses tanh (the paper does not name the
non-linearity).
"""

from __future__ import annotations

import torch
from torch import nn

from pipeline.models.bilstm.encoder import BiLSTMEncoder


def pair_features(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """[u; v; |u − v|; u * v]."""
    return torch.cat([u, v, (u - v).abs(), u * v], dim=-1)


class NLIClassifier(nn.Module):
    def __init__(self, encoder: BiLSTMEncoder, hidden: int = 512, classes: int = 3):
        super().__init__()
        self.encoder = encoder
        self.classifier = nn.Sequential(nn.Linear(4 * encoder.dim, hidden), nn.Tanh(), nn.Linear(hidden, classes))

    def forward(self, premises: list[list[int]], hypotheses: list[list[int]]) -> torch.Tensor:
        """Logits ``(batch, classes)``."""
        return self.classifier(pair_features(self.encoder(premises), self.encoder(hypotheses)))
