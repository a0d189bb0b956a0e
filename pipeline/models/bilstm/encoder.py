"""The BiLSTM sentence encoder of paper 004 (§2.1, eq. 1) with a pluggable pooling (§2.2).

Frozen pre-trained word vectors (InferSent and the paper keep GloVe fixed) feed one
bidirectional LSTM layer with ``hidden`` units per direction; its states
``h_t = [→h_t; ←h_t]`` over the valid time steps go to the pooling module named by
``pooling``. Sentences are packed (``pack_padded_sequence``), so padding never reaches the
LSTM; a sentence with no known word is one zero vector.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

from pipeline.models.bilstm.pooling_bf_attention import BFAttentionPooling
from pipeline.models.bilstm.pooling_bf_balanced import BFBalancedPooling
from pipeline.models.bilstm.pooling_bf_combined import BFCombinedPooling
from pipeline.models.bilstm.pooling_inner_attention import InnerAttentionPooling
from pipeline.models.bilstm.pooling_max import MaxPooling

# The BiLSTM poolings by name (``--pooling`` of the bilstm stage); not the transformer poolings of
# :data:`pipeline.models.pooling.POOLINGS`.
BILSTM_POOLINGS = {
    cls.name: cls
    for cls in (MaxPooling, BFBalancedPooling, BFCombinedPooling, BFAttentionPooling, InnerAttentionPooling)
}


class BiLSTMEncoder(nn.Module):
    def __init__(self, embeddings: torch.Tensor, hidden: int, pooling: str):
        super().__init__()
        if pooling not in BILSTM_POOLINGS:
            raise ValueError(f"unknown pooling {pooling!r} (expected one of {', '.join(BILSTM_POOLINGS)})")
        self.embedding = nn.Embedding.from_pretrained(torch.as_tensor(embeddings, dtype=torch.float32), freeze=True)
        self.lstm = nn.LSTM(self.embedding.embedding_dim, hidden, batch_first=True, bidirectional=True)
        self.pooling = BILSTM_POOLINGS[pooling](hidden)
        self.hidden = hidden
        self.dim = self.pooling.dim

    def states(self, sentences: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        """BiLSTM states ``(batch, time, 2·hidden)`` of word-id lists, and the valid-step mask."""
        device = self.embedding.weight.device
        lengths = torch.tensor([max(len(ids), 1) for ids in sentences])
        vectors = [
            self.embedding(torch.tensor(ids, dtype=torch.long, device=device))
            if ids
            else torch.zeros(1, self.embedding.embedding_dim, device=device)
            for ids in sentences
        ]
        packed = pack_padded_sequence(
            pad_sequence(vectors, batch_first=True), lengths, batch_first=True, enforce_sorted=False
        )
        states, _ = pad_packed_sequence(self.lstm(packed)[0], batch_first=True)
        mask = torch.arange(states.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
        return states, mask.to(device)

    def forward(self, sentences: list[list[int]]) -> torch.Tensor:
        """Sentence vectors ``(batch, dim)``."""
        return self.pooling(*self.states(sentences))

    def trainable_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad)
