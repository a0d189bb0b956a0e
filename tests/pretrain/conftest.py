"""Fixtures of the pre-training tests: marked sentences from real Wikipedia text, a tiny model.

The marked files are built the way the ngrams stage builds them (greedy longest-first matching
of each document's top-3000 PMI n-grams, SPEC §2), from the reference PMI sets of the real
English sample (`reference_pmi/`), plus capitalised-word runs as stand-in entity spans.
"""

from __future__ import annotations

import os
import re

import pyarrow as pa
import pytest

from pipeline import contracts

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before any test module imports torch

PUNCT = re.compile(r"[().,?;'!:]+")


def greedy_spans(words: list[str], ngrams: set[tuple[str, ...]], max_n: int = 6) -> list[tuple[int, int]]:
    spans, i = [], 0
    keys = [PUNCT.sub("", w) for w in words]
    while i < len(words):
        for n in range(max_n, 1, -1):
            if i + n <= len(words) and tuple(keys[i:i + n]) in ngrams:
                spans.append((i, i + n))
                i += n
                break
        else:
            i += 1
    return spans


def entity_like(words: list[str]) -> list[tuple[int, int]]:
    """Runs of capitalised words after the first word: a realistic stand-in for link surfaces."""
    spans, i = [], 1
    while i < len(words):
        if words[i][:1].isupper():
            j = i
            while j < len(words) and words[j][:1].isupper():
                j += 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    return spans


def marked_rows(data_root, docs: int, per_doc: int) -> list[dict]:
    import pyarrow.parquet as pq

    sentences = pq.read_table(data_root / "reference_pmi" / "sentences.parquet").to_pylist()
    topk = pq.read_table(data_root / "reference_pmi" / "topk_reference.parquet", columns=["doc_id", "ngram"])
    by_doc: dict[int, set] = {}
    for row in topk.to_pylist():
        by_doc.setdefault(row["doc_id"], set()).add(tuple(row["ngram"].split()))
    rows, counts = [], {}
    for s in sentences:
        if s["doc_id"] >= docs or counts.get(s["doc_id"], 0) >= per_doc:
            continue
        counts[s["doc_id"]] = counts.get(s["doc_id"], 0) + 1
        words = s["text"].split()
        spans = [{"start": a, "end": b, "n": b - a, "pmi": 1.0, "source": "pmi"}
                 for a, b in greedy_spans(words, by_doc.get(s["doc_id"], set()))]
        spans += [{"start": a, "end": b, "n": b - a, "pmi": None, "source": "entity"} for a, b in entity_like(words)]
        rows.append({"doc_id": s["doc_id"], "sent_id": s["sent_id"], "text": s["text"], "spans": spans})
    return rows


def write_marked(path, rows) -> None:
    contracts.write_table(path, pa.Table.from_pylist(rows, schema=contracts.MARKED), contracts.MARKED)


@pytest.fixture(scope="session")
def marked_en(data_root, tmp_path_factory):
    """Marked sentences: 12 real articles, up to 40 sentences each."""
    path = tmp_path_factory.mktemp("marked") / "marked-en.parquet"
    write_marked(path, marked_rows(data_root, docs=12, per_doc=40))
    return path


@pytest.fixture(scope="session")
def tiny_en(marked_en, tmp_path_factory):
    """A tiny random BERT whose WordPiece vocabulary was trained on ``marked_en``."""
    from pipeline.cli import main

    out = tmp_path_factory.mktemp("models") / "tiny-en"
    assert main(["tiny-model", "--sentences", str(marked_en), "--lang", "en", "--out", str(out),
                 "--vocab-size", "1500", "--hidden", "32", "--layers", "2", "--heads", "2"]) == 0
    return out


def albert_like_tokenizer(texts: list[str], out_dir, vocab_size: int = 800):
    """An ALBERT-style tokenizer (SentencePiece unigram, ``▁`` word prefix, ``[CLS] A [SEP] B [SEP]``)
    trained on ``texts``, saved to ``out_dir`` and reloaded through ``AutoTokenizer``."""
    from tokenizers import SentencePieceUnigramTokenizer
    from tokenizers.processors import TemplateProcessing
    from transformers import AlbertTokenizerFast, AutoTokenizer

    specials = ["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"]
    unigram = SentencePieceUnigramTokenizer()
    unigram.train_from_iterator(texts, vocab_size=vocab_size, special_tokens=specials, unk_token="<unk>",
                                show_progress=False)
    backend = unigram._tokenizer
    backend.post_processor = TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", backend.token_to_id("[CLS]")), ("[SEP]", backend.token_to_id("[SEP]"))])
    tokenizer = AlbertTokenizerFast(tokenizer_object=backend, unk_token="<unk>", pad_token="<pad>",
                                    cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
    tokenizer.save_pretrained(out_dir)
    return AutoTokenizer.from_pretrained(out_dir)


@pytest.fixture(scope="session")
def albert_en(marked_en, tmp_path_factory):
    """A tiny random ALBERT (AlbertForMaskedLM) with an ALBERT-style tokenizer trained on ``marked_en``."""
    import pyarrow.parquet as pq
    import torch
    from transformers import AlbertConfig, AlbertForMaskedLM

    out = tmp_path_factory.mktemp("models") / "albert-en"
    tokenizer = albert_like_tokenizer(pq.read_table(marked_en, columns=["text"]).column("text").to_pylist(), out)
    torch.manual_seed(0)
    config = AlbertConfig(vocab_size=len(tokenizer), embedding_size=16, hidden_size=32, num_hidden_layers=2,
                          num_attention_heads=2, intermediate_size=64, max_position_embeddings=128,
                          hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                          pad_token_id=tokenizer.pad_token_id)
    AlbertForMaskedLM(config).save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def tokens_en(marked_en, tiny_en, tmp_path_factory):
    """``marked_en`` tokenized for ``tiny_en`` (max length 64, so that a few sentences are cut)."""
    from pipeline.cli import main

    out = tmp_path_factory.mktemp("tokens") / "tokens-en.parquet"
    assert main(["tokenize", "--marked", str(marked_en), "--model", str(tiny_en), "--lang", "en",
                 "--max-length", "64", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="session")
def dataset_en(tokens_en, tmp_path_factory):
    from pipeline.pretrain.token_dataset import TokenDataset, build_arrow_cache

    return TokenDataset(build_arrow_cache(tokens_en, tmp_path_factory.mktemp("cache") / "tokens.arrow"))
