"""Word vectors that cover the NLI words: ``word2vec --nli`` and the out-of-vocabulary rates."""

from __future__ import annotations

import json

import pyarrow as pa
from testdata import DEMO_DATA

from pipeline import contracts
from pipeline.models import word_vectors

NLI = DEMO_DATA / "nli" / "snli_1.0_demo_train.jsonl"


def write_sentences(path, texts: list[str]) -> None:
    rows = {
        "doc_id": [0] * len(texts),
        "sent_id": list(range(len(texts))),
        "text": texts,
        "entities": [[]] * len(texts),
    }
    contracts.write_table(path, pa.table(rows, schema=contracts.SENTENCES), contracts.SENTENCES)


def test_coverage_counts_tokens_and_types_as_the_encoder_looks_them_up():
    vectors = word_vectors.WordVectors(["a", "dog", "."], [[1.0], [2.0], [3.0]])
    found = word_vectors.coverage(vectors, ["A dog barks.", "a cat, a dog"])
    # tokens: A dog barks . | a cat , a dog ; "A" is found lower-cased
    assert (found["tokens"], found["oov_tokens"], found["types"], found["oov_types"]) == (9, 3, 7, 3)
    assert found["oov_token_rate"] == 100 * 3 / 9 and found["oov_type_rate"] == 100 * 3 / 7


def test_word2vec_nli_adds_the_nli_words_split_like_the_encoder(tmp_path, cli):
    write_sentences(tmp_path / "sentences.parquet", ["the cat sat on the mat"] * 5)
    plain, with_nli = tmp_path / "plain.bin", tmp_path / "nli.bin"
    common = ["word2vec", "--sentences", tmp_path / "sentences.parquet", "--lang", "en", "--dim", 8]
    assert cli(*common, "--min-count", 1, "--out", plain) == 0
    assert cli(*common, "--min-count", 1, "--nli", NLI, "--out", with_nli) == 0
    before, after = word_vectors.load(plain), word_vectors.load(with_nli)
    assert set(before.words) == {"the", "cat", "sat", "on", "mat"}
    # "wall." of the raw text becomes "wall" and "." (the BiLSTM's tokenizer), lower-cased
    assert {"wall", ".", "climbing", "man"} <= set(after.words) and "wall." not in after.words
    texts = ["A man in a red jacket is climbing a steep rock wall."]
    assert word_vectors.coverage(before, texts)["oov_tokens"] == 13  # 12 words and "."
    assert word_vectors.coverage(after, texts)["oov_tokens"] == 0
    stats = json.loads((tmp_path / "nli.bin.json").read_text())
    assert stats["params"]["nli"] == [str(NLI)] and stats["params"]["nli_sentences"] > 0
    assert "nli" not in json.loads((tmp_path / "plain.bin.json").read_text())["params"]
    assert str(NLI) in json.dumps(stats["provenance"])


def test_word2vec_nli_bad_input_is_one_line(tmp_path, cli, capsys):
    write_sentences(tmp_path / "sentences.parquet", ["the cat sat on the mat"] * 5)
    common = ["word2vec", "--sentences", tmp_path / "sentences.parquet", "--min-count", 1, "--out", tmp_path / "v.bin"]
    assert cli(*common, "--lang", "en", "--nli", tmp_path / "missing.csv") == 2
    assert cli(*common, "--lang", "zh", "--nli", NLI) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 2 and "missing.csv" in errors[0] and "--nli is for English" in errors[1]
    assert not (tmp_path / "v.bin").exists()
