"""Transformer encoder: pooling against a hand-rolled forward pass, one pass per distinct string, batching
(``pool()`` itself: test_pooling)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from pipeline.errors import InputError
from pipeline.models.fingerprint import checkpoint_fingerprint
from pipeline.models.transformer_encoder import TransformerEncoder, unique_in_order

TEXTS = ["the king", "he was hired by the queen at age 28", "paris", "the king"]


def reference(model_dir, text):
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir).eval()
    batch = tokenizer([text], return_tensors="pt")
    with torch.no_grad():
        return model(**batch).last_hidden_state[0].numpy()


@pytest.mark.parametrize("pooling", ["mean", "cls", "max"])
def test_pooling_matches_a_plain_forward_pass(tiny_model, pooling):
    encoder = TransformerEncoder(str(tiny_model), pooling=pooling, batch_size=2)
    vectors = encoder.encode(TEXTS)
    for text, vector in zip(TEXTS, vectors):
        hidden = reference(tiny_model, text)  # every position is real text: mask all ones
        expected = {"mean": hidden.mean(0), "cls": hidden[0], "max": hidden.max(0)}[pooling]
        np.testing.assert_allclose(vector, expected, rtol=1e-5, atol=1e-5)


def test_each_distinct_string_is_encoded_once_longest_first(tiny_model):
    encoder = TransformerEncoder(str(tiny_model), batch_size=2)
    seen = []
    forward = encoder.model.forward
    encoder.model.forward = lambda **batch: seen.append(batch["attention_mask"].sum(1).tolist()) or forward(**batch)
    vectors = encoder.encode(TEXTS)
    assert sum(len(lengths) for lengths in seen) == 3  # "the king" twice, encoded once
    flat = [length for lengths in seen for length in lengths]
    assert flat == sorted(flat, reverse=True)  # batches sorted by length
    np.testing.assert_array_equal(vectors[0], vectors[3])


def test_order_and_batch_size_do_not_change_results(tiny_model):
    one = TransformerEncoder(str(tiny_model), batch_size=1).encode(TEXTS)
    many = TransformerEncoder(str(tiny_model), batch_size=64).encode(TEXTS[::-1])[::-1]
    np.testing.assert_allclose(one, many, rtol=1e-5, atol=1e-6)
    again = TransformerEncoder(str(tiny_model), batch_size=64).encode(TEXTS[::-1])[::-1]
    np.testing.assert_array_equal(many, again)  # deterministic


def test_unique_in_order():
    unique, positions = unique_in_order(["b", "a", "b"])
    assert unique == ["b", "a"] and positions.tolist() == [0, 1, 0]


def test_fingerprint_names_weights_and_config(tiny_model):
    files = checkpoint_fingerprint(str(tiny_model))["files"]
    assert set(files) == {"config.json", "model.safetensors"}
    assert all(len(digest) == 64 for digest in files.values())


def test_a_missing_checkpoint_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot load"):
        TransformerEncoder(str(tmp_path / "nothing-here"))


def test_minilm_sts_b_sanity(minilm, data_root):
    """all-MiniLM-L6-v2 on STS-B test: the published Spearman is about 82."""
    from pipeline.tasks import sts
    from pipeline.tasks.data_root import DataRoot

    sets = sts.load(DataRoot(data_root))
    result = sts.evaluate(TransformerEncoder(str(minilm)), {"STS-B": sets["STS-B"]})
    assert 80 < result["scores"]["STS-B"] < 84.5
