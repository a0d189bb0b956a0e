"""tiny-model --family and --architecture: random ALBERT and ELECTRA models, and the papers' sizes (issue 48 §1)."""

from __future__ import annotations

import argparse
import json

import pyarrow as pa
import pytest

from pipeline import contracts
from pipeline.budget.cost import ARCHITECTURES
from pipeline.pretrain import tiny_model

TEXTS = [f"the {w} of the river runs past the old mill and the quiet town of {w}" for w in ("north", "south", "east")]


@pytest.fixture
def sentences(tmp_path):
    rows = [{"doc_id": 1, "sent_id": i, "text": t, "entities": []} for i, t in enumerate(TEXTS * 4)]
    path = tmp_path / "sentences.parquet"
    contracts.write_table(path, pa.Table.from_pylist(rows, schema=contracts.SENTENCES), contracts.SENTENCES)
    return path


def test_albert_family_shares_one_layer_over_factorised_embeddings(sentences, tmp_path, cli):
    from transformers import AutoModelForMaskedLM

    out = tmp_path / "albert"
    argv = ["--family", "albert", "--hidden", "64", "--layers", "3", "--heads", "1", "--embedding-size", "16"]
    assert cli("tiny-model", "--sentences", sentences, "--lang", "en", "--out", out, *argv) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["model_type"] == "albert" and config["architectures"] == ["AlbertForPreTraining"]
    assert (config["embedding_size"], config["hidden_size"], config["num_hidden_layers"]) == (16, 64, 3)
    model = AutoModelForMaskedLM.from_pretrained(out)
    assert len(model.albert.encoder.albert_layer_groups) == 1  # one layer, applied 3 times (Lan et al. 2020 §3.1)
    from pipeline.models.card import card_text

    assert "A small randomly initialised ALBERT with a WordPiece vocabulary" in card_text(out)


def test_electra_family_writes_its_generator_where_pretrain_looks(sentences, tmp_path, cli):
    from pipeline.models.loading import generator_for

    out = tmp_path / "electra"
    argv = ["--family", "electra", "--hidden", "32", "--layers", "2", "--heads", "2"]
    assert cli("tiny-model", "--sentences", sentences, "--lang", "en", "--out", out, *argv) == 0
    discriminator = json.loads((out / "config.json").read_text())
    generator = json.loads((out / "generator" / "config.json").read_text())
    assert discriminator["architectures"] == ["ElectraForPreTraining"]
    assert generator["architectures"] == ["ElectraForMaskedLM"]
    # ELECTRA §3.2: a smaller generator over the discriminator's embeddings (shared)
    assert generator["embedding_size"] == discriminator["embedding_size"] == 32
    assert generator["hidden_size"] == 16
    assert generator_for(str(out)) == str(out / "generator")
    assert (out / "generator" / "tokenizer.json").is_file()


@pytest.mark.parametrize("name", sorted(tiny_model.NAMED))
def test_architecture_takes_every_size_of_the_released_checkpoint(name):
    args = argparse.Namespace(architecture=name, family="bert", layers=2, hidden=64, heads=2, embedding_size=None)
    tiny_model.resolve_architecture(args)
    arch = ARCHITECTURES[name]
    assert (args.layers, args.hidden, args.embedding_size) == (arch.layers, arch.hidden, arch.embedding)
    assert args.hidden // args.heads == 64 and (args.family in name or args.family == "bert" and "chinese" in name)


def test_electra_base_generator_is_the_released_shape():
    """--architecture electra-base-discriminator builds the generator electra-base-generator has (256 wide, 4
    heads, feed-forward 1024, 12 layers over the 768-wide shared embeddings), checked on its config only."""
    from unittest import mock

    import torch

    args = argparse.Namespace(architecture="electra-base-discriminator", max_length=128, seed=0)
    tiny_model.resolve_architecture(args)
    tokenizer = mock.Mock(pad_token_id=0)
    tokenizer.__len__ = lambda self: 500
    with torch.device("meta"):
        _, generator = tiny_model.family_model(tokenizer, args)
    released = ARCHITECTURES["electra-base-generator"]
    config = generator.config
    assert (config.hidden_size, config.intermediate_size, config.num_hidden_layers) == (
        released.hidden,
        released.intermediate,
        released.layers,
    )
    assert (config.embedding_size, config.vocab_size, config.num_attention_heads) == (768, released.vocab, 4)
