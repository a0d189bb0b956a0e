"""Fixtures of the pre-training tests: tiny ALBERT and ELECTRA models, the real sample tokenized for MiniLM
(the marked sentences, the tiny BERT and its tokens are shared: tests/conftest.py).

The builders live in ``pretrain_builders`` (a unique module name: conftest modules of several
test folders share the name ``conftest``, so tests must not import from one).
"""

from __future__ import annotations

import os

import pytest
from pretrain_builders import albert_like_tokenizer

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before any test module imports torch


@pytest.fixture(scope="session")
def albert_en(marked_en, tmp_path_factory):
    """A tiny random ALBERT (AlbertForMaskedLM) with an ALBERT-style tokenizer trained on ``marked_en``."""
    import pyarrow.parquet as pq
    import torch
    from transformers import AlbertConfig, AlbertForMaskedLM

    out = tmp_path_factory.mktemp("models") / "albert-en"
    tokenizer = albert_like_tokenizer(pq.read_table(marked_en, columns=["text"]).column("text").to_pylist(), out)
    torch.manual_seed(0)
    config = AlbertConfig(
        vocab_size=len(tokenizer),
        embedding_size=16,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        pad_token_id=tokenizer.pad_token_id,
    )
    AlbertForMaskedLM(config).save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def dataset_en(tokens_en, tmp_path_factory):
    from pipeline.pretrain.token_dataset import TokenDataset, build_arrow_cache

    return TokenDataset(build_arrow_cache(tokens_en, tmp_path_factory.mktemp("cache") / "tokens.arrow"))


@pytest.fixture(scope="session")
def minilm_sample(data_root, tmp_path_factory):
    """The real English sample as the workflow makes it: extract → clean → ngrams --lowercase (the stage's
    defaults otherwise) → 3,000 sampled sentences → tokenized for all-MiniLM-L6-v2 at max length 128.
    Returns ``(tokenizer path, TokenDataset)``."""
    from testdata import build_token_sample, minilm_path

    from pipeline.pretrain.token_dataset import TokenDataset, build_arrow_cache

    work = tmp_path_factory.mktemp("minilm-sample")
    model = minilm_path()
    # BURT masking's own vocabulary: in English the released code's, whose PMI n-grams cover about half
    # of the words (docs/method.md §2)
    tokens = build_token_sample(data_root, work, 3000, model, preset="burt")
    return model, TokenDataset(build_arrow_cache(tokens, work / "tokens.arrow"))


@pytest.fixture(scope="session")
def electra_en(tiny_en, tmp_path_factory):
    """A tiny random ELECTRA pair with ``tiny_en``'s WordPiece tokenizer: the discriminator
    (ElectraForPreTraining) in the folder, its smaller generator (ElectraForMaskedLM) in ``generator/``."""
    import torch
    from transformers import AutoTokenizer, ElectraConfig, ElectraForMaskedLM, ElectraForPreTraining

    out = tmp_path_factory.mktemp("models") / "electra-en"
    tokenizer = AutoTokenizer.from_pretrained(tiny_en)
    common = {
        "vocab_size": len(tokenizer),
        "embedding_size": 16,
        "num_hidden_layers": 2,
        "max_position_embeddings": 128,
        "pad_token_id": tokenizer.pad_token_id,
    }
    torch.manual_seed(0)
    ElectraForPreTraining(
        ElectraConfig(hidden_size=32, num_attention_heads=2, intermediate_size=64, **common)
    ).save_pretrained(out)
    ElectraForMaskedLM(
        ElectraConfig(hidden_size=16, num_attention_heads=1, intermediate_size=32, **common)
    ).save_pretrained(out / "generator")
    for folder in (out, out / "generator"):
        tokenizer.save_pretrained(folder)
    return out
