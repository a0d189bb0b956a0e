"""The ngrams stage: equal to the plain-Python specification, edge cases, entities, bad input."""

from __future__ import annotations

import math

import pmi_python
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline import contracts
from pipeline.ngrams.token_batch import WHITESPACE

ZH_SENTENCES = [
    "北京是中华人民共和国的首都",
    "北京是中国的政治中心和文化中心",
    "中华人民共和国成立于一九四九年",
    "上海是中国的经济中心",
    "北京和上海都是中国的直辖市",
]


def sentences_file(path, docs: dict[int, list[str]], entities: dict | None = None):
    rows = []
    for doc_id, texts in docs.items():
        for sent_id, text in enumerate(texts):
            spans = (entities or {}).get((doc_id, sent_id), [])
            rows.append(
                {
                    "doc_id": doc_id,
                    "sent_id": sent_id,
                    "text": text,
                    "entities": [{"start": a, "end": b, "target": t} for a, b, t in spans],
                }
            )
    contracts.write_table(path, pa.Table.from_pylist(rows, schema=contracts.SENTENCES), contracts.SENTENCES)
    return path


@pytest.fixture(scope="module")
def real_docs(data_root):
    """Eight real Wikipedia articles (the reference sentences), about 30k words."""
    frame = pl.read_parquet(data_root / "reference_pmi/sentences.parquet")
    picked = frame.filter(pl.col("doc_id").is_in([3, 11, 17, 29, 40, 58, 77, 101]))
    return {d: g["text"].to_list() for (d,), g in picked.group_by(["doc_id"], maintain_order=True)}


def run_stage(cli, tmp_path, sentences, *options, name="out"):
    """The stage with every n-gram a candidate (no minimum count, no threshold), N 6, K 3000, then ``options``."""
    out = tmp_path / name
    plain = ["--preset", "burt_windows", "--max-n", "6", "--min-count", "1"]
    assert cli("ngrams", "--sentences", sentences, "--out", out, *plain, *options) == 0
    return pl.read_parquet(out / "ngrams.parquet"), pl.read_parquet(out / "marked.parquet"), out


@pytest.mark.parametrize(
    "options, spec",
    [
        (["--mode", "paper"], {"mode": "paper"}),
        (["--mode", "paper", "--lowercase", "--top-k", "200"], {"mode": "paper", "lowercase": True, "k": 200}),
        (["--mode", "paper", "--min-count", "2", "--max-n", "4"], {"mode": "paper", "min_count": 2, "max_n": 4}),
        (["--mode", "paper", "--threshold", "1.5"], {"mode": "paper", "threshold": 1.5}),
        (["--mode", "reference", "--top-k", "150"], {"mode": "reference", "k": 150}),  # cuts through ties
        (["--mode", "reference", "--normalise", "--top-k", "500"], {"mode": "reference", "normalise": True, "k": 500}),
    ],
    ids=["paper", "lowercase-k200", "min-count", "threshold", "reference-k150", "normalised-k500"],
)
def test_equals_plain_python_specification(cli, tmp_path, real_docs, options, spec):
    path = sentences_file(tmp_path / "s.parquet", real_docs)
    ngrams, marked, _ = run_stage(cli, tmp_path, path, "--no-entities", "--batch-chars", "60000", *options)
    max_n = spec.pop("max_n", 6)
    k = spec.pop("k", 3000)
    for doc_id, texts in real_docs.items():
        kept, _words, spans = pmi_python.process_document(texts, max_n=max_n, k=k, **spec)
        got = ngrams.filter(pl.col("doc_id") == doc_id).sort("rank")
        assert got["ngram"].to_list() == [g for g, *_ in kept]
        assert got["n"].to_list() == [n for _, n, _, _ in kept]
        assert got["count"].to_list() == [c for _, _, c, _ in kept]
        assert got["pmi"].to_list() == [float(s) for *_, s in kept]  # bit for bit
        doc_marked = marked.filter(pl.col("doc_id") == doc_id).sort("sent_id")
        assert [[(s["start"], s["end"]) for s in row] for row in doc_marked["spans"]] == spans


def test_paper_formula_by_hand(cli, tmp_path):
    """Two sentences; PMI(new york) = 1/2 (log(2/4) - log(2/6) - log(2/6))."""
    path = sentences_file(tmp_path / "s.parquet", {7: ["new york city", "new york"]})
    ngrams, marked, _ = run_stage(cli, tmp_path, path)
    row = ngrams.filter(pl.col("ngram") == "new york").row(0, named=True)
    assert row["count"] == 2 and row["n"] == 2
    assert row["pmi"] == pytest.approx(0.5 * (math.log(2 / 3) - 2 * math.log(2 / 5)))
    # bigram positions: 2 + 1 = 3; unigrams: 5 tokens
    three = ngrams.filter(pl.col("ngram") == "new york city").row(0, named=True)
    assert three["pmi"] == pytest.approx((math.log(1 / 1) - 2 * math.log(2 / 5) - math.log(1 / 5)) / 3)
    assert marked["spans"][0][0]["end"] == 3  # longest first: the trigram


def test_chinese_characters_equal_specification(cli, tmp_path):
    docs = {1: ZH_SENTENCES, 2: ZH_SENTENCES[:2]}
    path = sentences_file(tmp_path / "s.parquet", docs)
    ngrams, marked, _ = run_stage(cli, tmp_path, path, "--lang", "zh", "--top-k", "40", "--no-entities")
    for doc_id, texts in docs.items():
        kept, _, spans = pmi_python.process_document([" ".join(t) for t in texts], mode="paper", k=40)
        got = ngrams.filter(pl.col("doc_id") == doc_id).sort("rank")
        assert got["ngram"].to_list() == [g.replace(" ", "") for g, *_ in kept]
        rows = marked.filter(pl.col("doc_id") == doc_id)["spans"].to_list()
        assert [[(s["start"], s["end"]) for s in row] for row in rows] == spans


def test_chinese_whitespace_is_a_boundary_and_offsets_are_string_indices(cli, tmp_path):
    path = sentences_file(tmp_path / "s.parquet", {1: ["北京 北京", "北京 北京"]})
    ngrams, marked, _ = run_stage(cli, tmp_path, path, "--lang", "zh")
    assert set(ngrams["ngram"]) == {"北京"}  # never "京北" across the space
    assert [(s["start"], s["end"]) for s in marked["spans"][0]] == [(0, 2), (3, 5)]


def test_entities_join_the_candidates(cli, tmp_path):
    texts = ["The Eiffel Tower is in Paris", "Paris is the capital of France", "The Eiffel Tower is tall"]
    entities = {
        (5, 0): [(4, 16, "Eiffel Tower"), (23, 28, "Paris")],
        (5, 1): [(0, 5, "Paris"), (24, 30, "France")],
        (5, 2): [(4, 16, "Eiffel Tower")],
    }
    path = sentences_file(tmp_path / "s.parquet", {5: texts}, entities)
    ngrams, marked, _ = run_stage(cli, tmp_path, path)
    rows = ngrams.filter(pl.col("source") == "entity").sort("rank")
    assert rows["ngram"].to_list() == ["Eiffel Tower", "Paris", "France"]
    assert rows["count"].to_list() == [2, 2, 1]
    eiffel = ngrams.filter((pl.col("source") == "pmi") & (pl.col("ngram") == "Eiffel Tower"))["pmi"].item()
    assert rows["pmi"][0] == eiffel and rows["pmi"][1] is None  # one word: no PMI
    first = [s for s in marked["spans"][0] if s["source"] == "entity"]
    assert [(s["start"], s["end"], s["n"]) for s in first] == [(1, 3, 2), (5, 6, 1)]


@pytest.mark.parametrize(
    "docs",
    [
        {1: ["word"]},  # a one-token document
        {1: ["?!.", "(...)"], 2: ["a b"]},  # sentences with only punctuation (reference mode strips them)
        {1: ["solitary"], 2: ["another lonely line"]},
    ],
)
def test_tiny_documents(cli, tmp_path, docs):
    path = sentences_file(tmp_path / "s.parquet", docs)
    for mode in ("paper", "reference"):
        ngrams, marked, _out = run_stage(cli, tmp_path, path, "--mode", mode, name=mode)
        assert marked.height == sum(map(len, docs.values()))
        for doc_id, texts in docs.items():
            kept, _words, _spans = pmi_python.process_document(texts, mode=mode)
            assert ngrams.filter(pl.col("doc_id") == doc_id)["ngram"].to_list() == [g for g, *_ in kept]


def test_zero_documents_keep_the_schema(cli, tmp_path):
    path = sentences_file(tmp_path / "empty.parquet", {})
    ngrams, marked, out = run_stage(cli, tmp_path, path)
    assert ngrams.height == marked.height == 0
    assert pq.read_schema(out / "ngrams.parquet").remove_metadata().equals(contracts.NGRAMS)
    assert pq.read_schema(out / "marked.parquet").remove_metadata().equals(contracts.MARKED)


def test_million_word_document(cli, tmp_path, real_docs):
    words = " ".join(" ".join(texts) for texts in real_docs.values()).split()
    sentence = [" ".join(words[i : i + 25]) for i in range(0, len(words), 25)]
    texts = (sentence * (1_000_000 // len(words) + 1))[: 1_000_000 // 25]
    path = sentences_file(tmp_path / "long.parquet", {42: texts})
    ngrams, marked, _out = run_stage(cli, tmp_path, path, "--batch-chars", "100000")
    assert ngrams.height == 3000 and marked.height == len(texts)
    assert ngrams["rank"].to_list() == list(range(1, 3001))


def test_batches_do_not_change_the_result(cli, tmp_path, real_docs):
    path = sentences_file(tmp_path / "s.parquet", real_docs)
    one, marked_one, _ = run_stage(cli, tmp_path, path, name="one")
    many, marked_many, _ = run_stage(cli, tmp_path, path, "--batch-chars", "1000", name="many")
    assert one.equals(many) and marked_one.equals(marked_many)


def test_same_input_same_bytes(cli, tmp_path, real_docs):
    path = sentences_file(tmp_path / "s.parquet", real_docs)
    *_, a = run_stage(cli, tmp_path, path, name="a")
    *_, b = run_stage(cli, tmp_path, path, name="b")
    assert (a / "ngrams.parquet").read_bytes() == (b / "ngrams.parquet").read_bytes()
    assert (a / "marked.parquet").read_bytes() == (b / "marked.parquet").read_bytes()


def test_split_documents_are_an_error(cli, tmp_path, capsys):
    table = pa.table({"doc_id": [1, 2, 1], "sent_id": [0, 0, 1], "text": ["a b", "c d", "e f"]})
    path = tmp_path / "bad.parquet"
    pq.write_table(table, path)
    assert cli("ngrams", "--sentences", path, "--out", tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert str(path) in err and "document 1" in err and "not contiguous" in err
    assert not (tmp_path / "out" / "ngrams.parquet").exists() and not (tmp_path / "out" / "marked.parquet").exists()


def test_missing_column_is_an_error(cli, tmp_path, capsys):
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"doc_id": [1], "text": ["a b"]}), path)
    assert cli("ngrams", "--sentences", path, "--out", tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert str(path) in err and "sent_id" in err
    assert not list((tmp_path / "out").glob("*")) if (tmp_path / "out").exists() else True


def test_whitespace_table_matches_python():
    import sys

    assert set(WHITESPACE) == {c for c in range(sys.maxunicode + 1) if chr(c).isspace()}
