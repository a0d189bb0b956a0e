"""Builders for the classify tests: tiny random BERTs whose vocabularies are learned from real task text."""

from __future__ import annotations

from pathlib import Path

from tokenizers import BertWordPieceTokenizer
from transformers import BertTokenizerFast

from pipeline.pretrain.tiny import SPECIAL_TOKENS, learn_vocabulary, tiny_bert


def tiny_model(out: Path, texts: list[str], vocab_size: int = 800, max_length: int = 128) -> Path:
    """A 2-layer, 32-wide random BERT (pipeline.pretrain.tiny) with a WordPiece vocabulary of ``texts``."""
    vocab = learn_vocabulary(texts, vocab_size, min_frequency=2)
    wordpiece = BertWordPieceTokenizer({token: i for i, token in enumerate(vocab)}, lowercase=True,
                                       handle_chinese_chars=True)
    tokenizer = BertTokenizerFast(tokenizer_object=wordpiece._tokenizer, do_lower_case=True,
                                  model_max_length=max_length, **SPECIAL_TOKENS)
    model = tiny_bert(tokenizer, hidden=32, layers=2, heads=2, max_length=max_length, seed=0)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
