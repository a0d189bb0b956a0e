"""One list of poolings and one ``pool()``: values by hand, sentence-transformers' Pooling, the workflow schema."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import yaml

from pipeline.models.bilstm.encoder import BILSTM_POOLINGS
from pipeline.models.pooling import POOLING_FLAGS, POOLINGS, pool, pooling_of

SCHEMA = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


def test_pool_ignores_padding():
    hidden = torch.tensor([[[1.0, 2.0], [3.0, -4.0], [100.0, 100.0]]])
    mask = torch.tensor([[1, 1, 0]])
    assert pool(hidden, mask, "mean").tolist() == [[2.0, -1.0]]
    assert pool(hidden, mask, "max").tolist() == [[3.0, 2.0]]
    assert pool(hidden, mask, "cls").tolist() == [[1.0, 2.0]]


def test_pooling_by_hand():
    hidden = torch.tensor([[[1.0, 0.0], [3.0, 2.0], [100.0, 100.0]]])
    mask = torch.tensor([[1, 1, 0]])
    assert pool(hidden, mask, "mean").tolist() == [[2.0, 1.0]]
    assert pool(hidden, mask, "max").tolist() == [[3.0, 2.0]]
    assert pool(hidden, mask, "cls").tolist() == [[1.0, 0.0]]


def test_a_batch_pools_row_by_row_and_an_empty_mask_averages_to_zero():
    hidden = torch.tensor([[[1.0, -1.0], [5.0, 7.0]], [[2.0, 4.0], [-3.0, 9.0]], [[8.0, 8.0], [8.0, 8.0]]])
    mask = torch.tensor([[1, 0], [1, 1], [0, 0]])
    assert pool(hidden, mask).tolist() == [[1.0, -1.0], [-0.5, 6.5], [0.0, 0.0]]  # mean is the default
    assert pool(hidden, mask, "max").tolist()[:2] == [[1.0, -1.0], [2.0, 9.0]]
    assert pool(hidden, mask, "cls").tolist() == [[1.0, -1.0], [2.0, 4.0], [8.0, 8.0]]


def test_max_pooling_sends_a_tie_gradient_to_one_position():
    """MiSAD trains through pool(): a tie of the maximum gets one gradient, as torch.max(dim) gives it."""
    hidden = torch.tensor([[[2.0], [2.0], [1.0]]], requires_grad=True)
    pool(hidden, torch.tensor([[1, 1, 1]]), "max").sum().backward()
    assert hidden.grad.sum().item() == 1.0 and int((hidden.grad != 0).sum()) == 1


def test_an_unknown_pooling_is_refused():
    with pytest.raises(ValueError, match="expected one of mean, cls, max"):
        pool(torch.zeros(1, 2, 3), torch.ones(1, 2), "first")


@pytest.mark.parametrize("pooling", POOLINGS)
def test_pool_equals_sentence_transformers_pooling(pooling):
    """Bit for bit in float32, the precision the encoders run in (in bf16 their mean rounds differently)."""
    from sentence_transformers.sentence_transformer.modules import Pooling

    generator = torch.Generator().manual_seed(0)
    hidden = torch.randn(6, 11, 8, generator=generator)
    mask = (torch.rand(6, 11, generator=generator) > 0.4).long()
    mask[:, 0] = 1
    theirs = Pooling(8, pooling)({"token_embeddings": hidden.clone(), "attention_mask": mask})["sentence_embedding"]
    assert torch.equal(pool(hidden, mask, pooling), theirs)


def test_the_sentence_transformers_flags_name_every_pooling(tmp_path):
    from pipeline.models.directory import write_sentence_transformers_files

    assert tuple(POOLING_FLAGS) == POOLINGS
    assert pooling_of(tmp_path) == "mean"  # a folder without 1_Pooling/config.json
    for pooling in POOLINGS:
        folder = tmp_path / pooling
        folder.mkdir()
        write_sentence_transformers_files(folder, hidden_size=4, max_length=16, pooling=pooling)
        assert pooling_of(folder) == pooling


def _pooling_enums(node, path=()):
    """(path, enum) of every ``pooling`` / ``poolings`` property of the schema."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("pooling", "poolings") and isinstance(value, dict):
                yield ".".join(path + (key,)), value.get("enum") or value.get("items", {}).get("enum")
            else:
                yield from _pooling_enums(value, path + (key,) if key != "properties" else path)


def test_the_config_schema_lists_the_same_poolings():
    found = dict(_pooling_enums(yaml.safe_load(SCHEMA.read_text())))
    transformer = {path: enum for path, enum in found.items() if not path.startswith("bilstm.")}
    assert {"finetune.pooling", "finetune.ablation.pooling", "evaluate.pooling"} <= set(transformer)
    assert all(enum == list(POOLINGS) for enum in transformer.values()), transformer
    assert set(found["bilstm.poolings"]) == set(BILSTM_POOLINGS)
