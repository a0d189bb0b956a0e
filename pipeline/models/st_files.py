"""The trained model directory: loadable by ``AutoModel`` / ``AutoModelForMaskedLM`` and by sentence-transformers.

``save_pretrained`` writes the masked-LM weights (encoder + MLM head) and the tokenizer; the
sentence-transformers module files (``modules.json``, ``sentence_bert_config.json``,
``1_Pooling/config.json``) are written beside them by hand rather than through
``SentenceTransformer.save``, which would re-save the encoder without its MLM head. The
pooling is the one MiSAD trained with (mean by default). The NSP / SOP classifier is not
part of the exported model (it lives only in the resume checkpoint).
"""

from __future__ import annotations

import json
from pathlib import Path

POOLING_FLAGS = {"mean": "pooling_mode_mean_tokens", "cls": "pooling_mode_cls_token", "max": "pooling_mode_max_tokens"}


def write_sentence_transformers_config(directory: Path, hidden_size: int, max_length: int, pooling: str) -> None:
    directory = Path(directory)
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]
    (directory / "modules.json").write_text(json.dumps(modules, indent=2) + "\n")
    (directory / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": max_length, "do_lower_case": False}, indent=2) + "\n"
    )
    pooling_config = {
        "word_embedding_dimension": hidden_size,
        **{flag: False for flag in POOLING_FLAGS.values()},
        POOLING_FLAGS[pooling]: True,
    }
    (directory / "1_Pooling").mkdir(exist_ok=True)
    (directory / "1_Pooling" / "config.json").write_text(json.dumps(pooling_config, indent=2) + "\n")


def export(directory: Path, mlm_model, tokenizer, max_length: int, pooling: str) -> None:
    mlm_model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    write_sentence_transformers_config(directory, mlm_model.config.hidden_size, max_length, pooling)
