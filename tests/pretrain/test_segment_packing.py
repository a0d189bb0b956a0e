"""MiSAD's w and R packed into one row per example give the states of separate encodings, with less padding."""

from __future__ import annotations

import pytest
import torch
from transformers import (
    AlbertConfig,
    AlbertForMaskedLM,
    AutoTokenizer,
    BertConfig,
    BertForMaskedLM,
    ElectraConfig,
    ElectraForMaskedLM,
    RobertaConfig,
    RobertaForMaskedLM,
)

from pipeline.models.pooling import pool
from pipeline.models.runtime import World
from pipeline.pretrain import segment_packing
from pipeline.pretrain.batching import epoch_batches, example_lengths, padding_counts
from pipeline.pretrain.encoder_heads import encode
from pipeline.pretrain.objectives import make_data, position_offset
from pipeline.pretrain.pooler import Pooler

SIZES = {
    "vocab_size": 100,
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 64,
}
ARCHITECTURES = {
    "bert": (BertForMaskedLM, BertConfig(**SIZES)),
    "albert": (AlbertForMaskedLM, AlbertConfig(embedding_size=16, **SIZES)),
    "electra": (ElectraForMaskedLM, ElectraConfig(embedding_size=16, **SIZES)),
    "roberta": (RobertaForMaskedLM, RobertaConfig(pad_token_id=1, **SIZES)),  # positions start after padding_idx
}


def right_padded(lengths: list[int], pad: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    ids = torch.full((len(lengths), max(lengths)), pad)
    mask = torch.zeros_like(ids)
    for i, n in enumerate(lengths):
        ids[i, :n] = torch.randint(5, 90, (n,), generator=generator)
        ids[i, 0], ids[i, n - 1] = 2, 3  # [CLS] ... [SEP]
        mask[i, :n] = 1
    return ids, mask


@pytest.mark.parametrize("attention", ["eager", "sdpa"])
@pytest.mark.parametrize("architecture", sorted(ARCHITECTURES))
def test_packed_states_equal_separate_encodings(architecture, attention):
    model_class, config = ARCHITECTURES[architecture]
    torch.manual_seed(0)
    model = model_class._from_config(config, attn_implementation=attention).eval()
    generator = torch.Generator().manual_seed(1)
    pad = config.pad_token_id or 0
    w, w_mask = right_padded([3, 8, 4, 5, 3, 6], pad, generator)
    r, r_mask = right_padded([20, 5, 31, 12, 9, 17], pad, generator)
    pooler = Pooler(config.hidden_size)
    with torch.no_grad():
        apart = [(encode(model, w, w_mask), w_mask), (encode(model, r, r_mask), r_mask)]
        packed = segment_packing.pack(w, w_mask, r, r_mask, pad)
        mask = segment_packing.attention_mask(packed["segments"], model.config._attn_implementation, torch.float32)
        hidden = encode(model, packed["input_ids"], mask, None, packed["position_ids"] + position_offset(model))
        together = segment_packing.unpack(hidden, packed)
        for (states, m), (expected, expected_mask) in zip(together, apart):
            assert torch.equal(m, expected_mask)
            for pooling in ("mean", "max", "cls"):
                torch.testing.assert_close(pool(states, m, pooling), pool(expected, m, pooling), atol=1e-5, rtol=0)
            torch.testing.assert_close(pooler(states), pooler(expected), atol=1e-5, rtol=0)
    assert packed["input_ids"].shape[1] == max(a + b for a, b in zip([3, 8, 4, 5, 3, 6], [20, 5, 31, 12, 9, 17]))


def test_packing_cuts_the_padding_of_misad_batches_on_real_sentences(dataset_en, tiny_en):
    """Length-grouped batches of the real sample: w and R packed carry far less padding than apart."""
    tokenizer = AutoTokenizer.from_pretrained(tiny_en)
    examples, collator = make_data("misad", dataset_en, tokenizer, 0, 128, "random")
    batches = epoch_batches(len(examples), 0, 0, 16, World(), example_lengths(examples, dataset_en))[:12]
    apart = packed = [0, 0]
    for indices in batches:
        batch = collator([examples[i] for i in indices])
        for key in ("w_attention_mask", "r_attention_mask"):
            mask = batch[key]
            apart = [apart[0] + mask.numel() - int(mask.sum()), apart[1] + mask.numel()]
        pad, total = padding_counts(batch)["wr_"]
        packed = [packed[0] + pad, packed[1] + total]
        assert total - pad == int(batch["w_attention_mask"].sum() + batch["r_attention_mask"].sum())
    assert packed[0] / packed[1] < 0.5 * apart[0] / apart[1]
