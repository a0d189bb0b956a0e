"""The one writer of the sentence-transformers files: their bytes, existing files kept, a saved model loads."""

from __future__ import annotations

import json

import pytest

from pipeline.models.directory import AtomicDir, save_model, write_sentence_transformers_files

MODULES = """[
  {
    "idx": 0,
    "name": "0",
    "path": "",
    "type": "sentence_transformers.models.Transformer"
  },
  {
    "idx": 1,
    "name": "1",
    "path": "1_Pooling",
    "type": "sentence_transformers.models.Pooling"
  }
]
"""
SENTENCE_BERT_CONFIG = """{
  "max_seq_length": 64,
  "do_lower_case": false
}
"""
POOLING_CONFIG = """{{
  "word_embedding_dimension": 32,
  "pooling_mode_mean_tokens": {mean},
  "pooling_mode_cls_token": {cls},
  "pooling_mode_max_tokens": {max}
}}
"""


@pytest.mark.parametrize("pooling", ["mean", "cls", "max"])
def test_the_files_are_the_bytes_sentence_transformers_reads(tmp_path, pooling):
    """The bytes every model directory of the pipeline has carried (key order, indent, final newline)."""
    import sentence_transformers
    import torch
    import transformers

    write_sentence_transformers_files(tmp_path, hidden_size=32, max_length=64, pooling=pooling)
    assert (tmp_path / "modules.json").read_text() == MODULES
    assert (tmp_path / "sentence_bert_config.json").read_text() == SENTENCE_BERT_CONFIG
    flags = {name: str(name == pooling).lower() for name in ("mean", "cls", "max")}
    assert (tmp_path / "1_Pooling" / "config.json").read_text() == POOLING_CONFIG.format(**flags)
    assert json.loads((tmp_path / "config_sentence_transformers.json").read_text()) == {
        "__version__": {
            "sentence_transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "pytorch": torch.__version__,
        },
        "model_type": "SentenceTransformer",
        "prompts": {},
        "default_prompt_name": None,
        "similarity_fn_name": "cosine",
    }


def test_files_a_stage_wrote_are_kept(tmp_path):
    write_sentence_transformers_files(tmp_path, hidden_size=32, max_length=64, pooling="cls")
    write_sentence_transformers_files(tmp_path, hidden_size=8, max_length=512, pooling="mean")
    assert json.loads((tmp_path / "1_Pooling" / "config.json").read_text())["pooling_mode_cls_token"]
    assert json.loads((tmp_path / "sentence_bert_config.json").read_text())["max_seq_length"] == 64


def test_a_saved_masked_lm_loads_with_its_pooling_and_length(tiny_model, tmp_path):
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    model = AutoModelForMaskedLM.from_pretrained(tiny_model)  # a new MLM head: saved with the encoder
    with AtomicDir(tmp_path / "saved") as tmp:
        save_model(tmp, model, AutoTokenizer.from_pretrained(tiny_model), max_length=64, pooling="max")
    loaded = SentenceTransformer(str(tmp_path / "saved"), device="cpu")
    assert loaded.max_seq_length == 64 and loaded[1].pooling_mode == "max"
    assert (tmp_path / "saved" / "README.md").exists()  # completed on the way in: card, pooler
    assert not list(tmp_path.glob(".saved.tmp-*"))


def test_a_saved_tokenizer_does_not_follow_hf_hub_offline(tiny_model, tmp_path, monkeypatch):
    """The tests' demo (HF_HUB_OFFLINE=1) and CI's cluster demo (unset) wrote other tokenizer_config.json bytes:
    transformers saves how a tokenizer was loaded (``local_files_only``) among its settings."""
    from pipeline.models.loading import load_tokenizer

    saved = {}
    for offline in ("1", "0"):
        monkeypatch.setenv("HF_HUB_OFFLINE", offline)
        load_tokenizer(str(tiny_model)).save_pretrained(tmp_path / offline)
        saved[offline] = (tmp_path / offline / "tokenizer_config.json").read_bytes()
    assert b"local_files_only" not in saved["1"]
    assert saved["1"] == saved["0"]
