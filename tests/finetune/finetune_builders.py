"""Builders for the fine-tuning tests: a tiny random BERT whose vocabulary is learned from the fixtures."""

from __future__ import annotations

import json
from pathlib import Path

from testdata import DEMO_DATA

NLI_TRAIN = DEMO_DATA / "nli" / "snli_1.0_demo_train.jsonl"
NLI_DEV = DEMO_DATA / "nli" / "snli_1.0_demo_dev.jsonl"
PPDB = DEMO_DATA / "ppdb" / "ppdb-2.0-demo-phrasal"


def fixture_texts() -> list[str]:
    texts = []
    for path in (NLI_TRAIN, NLI_DEV):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            texts += [row["sentence1"], row["sentence2"]]
    for line in PPDB.read_text().splitlines():
        fields = line.split(" ||| ")
        texts += [fields[1], fields[2]]
    return texts


def tiny_bert_dir(out: Path, texts: list[str], hidden: int = 32, seed: int = 0) -> Path:
    """A random 2-layer BERT (MLM head included, as the tiny-model stage saves it) and its WordPiece tokenizer."""
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertTokenizerFast

    from pipeline.pretrain.tiny_model import SPECIAL_TOKENS, learn_vocabulary, tiny_bert

    vocab = learn_vocabulary(texts, 600, 1)
    wordpiece = BertWordPieceTokenizer({token: i for i, token in enumerate(vocab)}, lowercase=True)
    tokenizer = BertTokenizerFast(
        tokenizer_object=wordpiece._tokenizer, do_lower_case=True, model_max_length=64, **SPECIAL_TOKENS
    )
    model = tiny_bert(tokenizer, hidden, 2, 2, 64, seed)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def resume_arguments(model, out) -> list:
    """``finetune`` arguments of a 4-step twin run that checkpoints every 2 steps and resumes."""
    return [
        "finetune",
        *("--model", model, "--recipe", "twin", "--nli", NLI_TRAIN, "--ppdb", PPDB, "--out", out),
        *("--max-steps", 4, "--batch-size", 8, "--lr", 1e-3, "--save-every", 2, "--resume"),
    ]
