"""Builders for the pre-training tests: marked sentences from real Wikipedia text, an ALBERT-style tokenizer.

The marked files are built the way the ngrams stage builds them (greedy longest-first matching
of each document's top-3000 PMI n-grams, docs/method.md §2), from the reference PMI sets of the real
English sample (`reference_pmi/`), plus capitalised-word runs as stand-in entity spans.
"""

from __future__ import annotations

import re

import pmi_python
import pyarrow as pa

from pipeline import contracts

PUNCT = re.compile(r"[().,?;'!:]+")


def greedy_spans(words: list[str], ngrams: set[tuple[str, ...]], max_n: int = 6) -> list[tuple[int, int]]:
    """The ngrams stage's marking (pmi_python.mark) on the words with the released code's punctuation removed."""
    return pmi_python.mark([PUNCT.sub("", w) for w in words], {" ".join(g) for g in ngrams}, max_n)


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
        spans = [
            {"start": a, "end": b, "n": b - a, "pmi": 1.0, "source": "pmi"}
            for a, b in greedy_spans(words, by_doc.get(s["doc_id"], set()))
        ]
        spans += [{"start": a, "end": b, "n": b - a, "pmi": None, "source": "entity"} for a, b in entity_like(words)]
        rows.append({"doc_id": s["doc_id"], "sent_id": s["sent_id"], "text": s["text"], "spans": spans})
    return rows


def write_marked(path, rows) -> None:
    contracts.write_table(path, pa.Table.from_pylist(rows, schema=contracts.MARKED), contracts.MARKED)


def albert_like_tokenizer(texts: list[str], out_dir, vocab_size: int = 800):
    """An ALBERT-style tokenizer (SentencePiece unigram, ``▁`` word prefix, ``[CLS] A [SEP] B [SEP]``)
    trained on ``texts``, saved to ``out_dir`` and reloaded through ``AutoTokenizer``."""
    from tokenizers import SentencePieceUnigramTokenizer
    from tokenizers.processors import TemplateProcessing
    from transformers import AlbertTokenizerFast, AutoTokenizer

    specials = ["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"]
    unigram = SentencePieceUnigramTokenizer()
    unigram.train_from_iterator(
        texts, vocab_size=vocab_size, special_tokens=specials, unk_token="<unk>", show_progress=False
    )
    backend = unigram._tokenizer
    backend.post_processor = TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", backend.token_to_id("[CLS]")), ("[SEP]", backend.token_to_id("[SEP]"))],
    )
    tokenizer = AlbertTokenizerFast(
        tokenizer_object=backend,
        unk_token="<unk>",
        pad_token="<pad>",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )
    tokenizer.save_pretrained(out_dir)
    return AutoTokenizer.from_pretrained(out_dir)


# The size of the tests' tiny BERT (the tiny-model stage's options): the shared fixture and the tests that
# build it again (to check that the same options give the same bytes) use these.
TINY_SIZE = ["--vocab-size", "1500", "--hidden", "32", "--layers", "2", "--heads", "2"]
