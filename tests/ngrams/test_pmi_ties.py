"""PMI ties (paper mode): n-grams whose scores are equal on paper get equal floats, and the tie
rule (shorter, then earlier in the document) orders them, in both implementations."""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction

import numpy as np
import pmi_python
import polars as pl
import pyarrow as pa
import pytest

from pipeline import contracts


@pytest.fixture(scope="module")
def docs(data_root):
    frame = pl.read_parquet(data_root / "reference_pmi/sentences.parquet")
    picked = frame.filter(pl.col("doc_id").is_in([3, 11, 17, 29]))
    return {d: g["text"].to_list() for (d,), g in picked.group_by(["doc_id"], maintain_order=True)}


def exact_ratio(vocab, ngram: str, count: int) -> Fraction:
    """c(w) / prod c(x_k): within a document and an order, the paper's score is a function of it."""
    return Fraction(count, math.prod(vocab[0][word] for word in ngram.split()))


def left_to_right(vocab, ngram: str, count: int, n: int) -> float:
    """The paper score with the logs subtracted one by one (what the released code does)."""
    total_1 = sum(vocab[0].values())
    score = np.log(count) - np.log(sum(vocab[n - 1].values()))
    for word in ngram.split():
        score -= np.log(vocab[0][word]) - np.log(total_1)
    return score / n


def test_equal_on_paper_is_equal_in_floats_and_ties_follow_the_rule(cli, docs, tmp_path):
    rows = [
        {"doc_id": d, "sent_id": i, "text": t, "entities": []} for d, texts in docs.items() for i, t in enumerate(texts)
    ]
    contracts.write_table(
        tmp_path / "s.parquet", pa.Table.from_pylist(rows, schema=contracts.SENTENCES), contracts.SENTENCES
    )
    assert (
        cli(
            "ngrams",
            "--sentences",
            tmp_path / "s.parquet",
            "--out",
            tmp_path / "out",
            "--mode",
            "paper",
            "--no-entities",
            "--top-k",
            "1000000",
            "--min-count",
            "1",
        )
        == 0
    )
    got = pl.read_parquet(tmp_path / "out" / "ngrams.parquet")
    noisy_before = 0
    for doc_id, texts in docs.items():
        words = [t.split() for t in texts]
        vocab = pmi_python.count_ngrams(words, 6, skip_brackets=False)
        first_seen = {}
        for n in range(2, 7):
            for s, sentence in enumerate(words):
                for i in range(len(sentence) - n + 1):
                    first_seen.setdefault(" ".join(sentence[i : i + n]), (s, i))
        kept, _, _ = pmi_python.process_document(texts, mode="paper", k=1_000_000)
        spec = {ngram: score for ngram, _, _, score in kept}
        doc = got.filter(pl.col("doc_id") == doc_id).sort("rank")
        assert doc["pmi"].to_list() == [float(spec[g]) for g in doc["ngram"].to_list()]  # bit for bit
        tied = defaultdict(list)
        for ngram, n, count, rank, score in doc.select("ngram", "n", "count", "rank", "pmi").iter_rows():
            tied[(n, exact_ratio(vocab, ngram, count))].append((rank, ngram, score))
        several = 0
        for (n, _), group in tied.items():
            assert len({score for _, _, score in group}) == 1, group[:3]
            ranked = [ngram for _, ngram, _ in sorted(group)]
            assert ranked == sorted(ranked, key=first_seen.__getitem__), group[:3]  # earlier first
            factorings = {tuple(sorted(vocab[0][w] for w in g.split())) for _, g, _ in group}
            several += len(factorings) > 1
            noisy_before += len({left_to_right(vocab, g, vocab[n - 1][g], n) for _, g, _ in group}) > 1
        assert several > 10  # the document holds equal ratios of different counts (3/6 and 1/2)
    assert noisy_before > 100  # subtracting log by log would have split these ties by rounding
