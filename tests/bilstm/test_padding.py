"""Padding never reaches a sentence vector: every pooling gives a sentence the same vector alone or in a batch."""

from __future__ import annotations

import pytest
import torch

from pipeline.models.bilstm.encoder import BILSTM_POOLINGS, BiLSTMEncoder


@pytest.mark.parametrize("pooling", sorted(BILSTM_POOLINGS))
def test_a_sentence_gets_the_same_vector_alone_and_next_to_a_longer_one(pooling):
    torch.manual_seed(0)
    # negative word vectors: padding zeros would win a maximum over negative states if they leaked in
    encoder = BiLSTMEncoder(-torch.rand(20, 6) - 1, 5, pooling).eval()
    short, long_ = [3, 4], [1, 2, 5, 6, 7, 8, 9]
    with torch.inference_mode():
        alone = encoder([short])
        batched = encoder([long_, short, []])
    assert torch.allclose(alone[0], batched[1], atol=1e-6)
    assert torch.isfinite(batched).all()  # a sentence without a known word is one zero vector, not -inf
