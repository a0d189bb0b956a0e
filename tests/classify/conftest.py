"""Fixtures of the classify tests: tiny BERTs with vocabularies of real task text, small data roots of real rows.

The builders live in ``classify_builders`` (a unique module name: conftest modules of several
test folders share the name ``conftest``, so tests must not import from one).
"""

from __future__ import annotations

import os

import pytest
from classify_builders import DEMO_ROOT, demo_texts, small_root, tiny_model, zh_texts

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def demo_root():
    return DEMO_ROOT


@pytest.fixture(scope="session")
def tiny_en(tmp_path_factory):
    """A tiny random BERT whose vocabulary is learned from the demo GLUE fixtures (no real data needed)."""
    return tiny_model(tmp_path_factory.mktemp("models") / "tiny-en", demo_texts(), vocab_size=400)


@pytest.fixture(scope="session")
def real_root(data_root, tmp_path_factory):
    """A data root with the first rows of every real task file (same formats, same quirks)."""
    return small_root(data_root, tmp_path_factory.mktemp("root"), rows=24)


@pytest.fixture(scope="session")
def tiny_zh(data_root, tmp_path_factory):
    """A tiny random BERT with a vocabulary of real CLUE text (contexts up to 256 tokens)."""
    return tiny_model(
        tmp_path_factory.mktemp("models") / "tiny-zh", zh_texts(data_root), vocab_size=1500, max_length=256
    )


@pytest.fixture(scope="session")
def tiny_en_real(data_root, tmp_path_factory):
    """A tiny random BERT with a vocabulary of real GLUE text."""
    from classify_builders import en_texts

    return tiny_model(tmp_path_factory.mktemp("models") / "tiny-en-real", en_texts(data_root), vocab_size=1500)
