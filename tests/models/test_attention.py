"""Backbones load with SDPA attention where their architecture has it (pipeline/models/weights.py)."""

from __future__ import annotations

from typing import ClassVar

import pytest
from testdata import minilm_path
from transformers import AutoModel

from pipeline.models.weights import load_pretrained


class NoSdpa:
    """A model class whose architecture has no SDPA attention: transformers refuses the request."""

    calls: ClassVar[list[dict]] = []

    @classmethod
    def from_pretrained(cls, path, **kwargs):
        cls.calls.append(kwargs)
        if kwargs.get("attn_implementation") == "sdpa":
            raise ValueError("NoSdpa does not support an attention implementation through sdpa yet")
        return cls()


def test_a_bert_checkpoint_loads_with_sdpa():
    model = load_pretrained(AutoModel, minilm_path())
    assert model.config._attn_implementation == "sdpa"


def test_an_architecture_without_sdpa_falls_back_to_its_default(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    NoSdpa.calls.clear()
    assert isinstance(load_pretrained(NoSdpa, str(tmp_path)), NoSdpa)
    assert NoSdpa.calls == [{"attn_implementation": "sdpa"}, {}]


def test_an_explicit_attention_implementation_is_kept():
    model = load_pretrained(AutoModel, minilm_path(), attn_implementation="eager")
    assert model.config._attn_implementation == "eager"


def test_other_value_errors_are_not_swallowed(tmp_path):
    class Broken(NoSdpa):
        @classmethod
        def from_pretrained(cls, path, **kwargs):
            raise ValueError("config.json: hidden_size must be divisible by num_attention_heads")

    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(Exception, match="divisible"):
        load_pretrained(Broken, str(tmp_path))
