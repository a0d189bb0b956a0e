"""Bag-of-vectors baselines and the word2vec stage: streamed, deterministic, atomic."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
from transformers import AutoTokenizer

from pipeline import contracts
from pipeline.errors import InputError
from pipeline.models.bags import InputEmbeddingBag, Word2VecBag, bag_tokens

SENTENCES = [
    "The king rules the land",
    "The queen rules the land",
    "A man walks in Paris",
    "A woman walks in Paris",
    "The king and the queen walk",
] * 20


@pytest.fixture
def sentences(tmp_path):
    path = tmp_path / "shard-000.parquet"
    table = pa.table(
        {
            "doc_id": [i // 5 for i in range(len(SENTENCES))],
            "sent_id": [i % 5 for i in range(len(SENTENCES))],
            "text": SENTENCES,
            "entities": [[] for _ in SENTENCES],
        }
    )
    contracts.write_table(path, table, contracts.SENTENCES)
    return path


def train(cli, sentences, out, *extra):
    return cli(
        "word2vec",
        "--sentences",
        sentences,
        "--lang",
        "en",
        "--out",
        out,
        "--dim",
        8,
        "--min-count",
        1,
        "--epochs",
        2,
        *extra,
    )


def test_word2vec_stage_is_deterministic(cli, sentences, tmp_path):
    assert train(cli, sentences, tmp_path / "a.bin") == 0
    assert train(cli, sentences, tmp_path / "b.bin") == 0
    first, second = Word2VecBag(str(tmp_path / "a.bin")), Word2VecBag(str(tmp_path / "b.bin"))
    assert first.vectors.index_to_key == second.vectors.index_to_key
    np.testing.assert_array_equal(first.vectors.vectors, second.vectors.vectors)
    stats = json.loads((tmp_path / "a.bin.json").read_text())
    assert stats["sentences"] == 100 and stats["words"] == 520
    assert stats["vocabulary"] == 13  # lower-cased: the king rules land queen a man walks in paris woman and walk
    assert stats["provenance"]["inputs"][0]["sha256"]
    assert not list(tmp_path.glob(".*.tmp-*"))


def test_word2vec_bag_is_the_mean_of_known_words(cli, sentences, tmp_path):
    train(cli, sentences, tmp_path / "w.bin")
    bag = Word2VecBag(str(tmp_path / "w.bin"))
    vectors = bag.vectors
    got = bag.encode(["King, queen!", "zzz qqq", ""])
    np.testing.assert_allclose(got[0], (vectors["king"] + vectors["queen"]) / 2, rtol=1e-6)
    assert not got[1].any() and not got[2].any()  # no known word: the zero vector
    assert {"zzz", "qqq"} <= bag.oov


def test_word2vec_rejects_a_non_sentences_file(cli, tmp_path, capsys):
    bad = tmp_path / "x.parquet"
    bad.write_text("not parquet")
    assert train(cli, bad, tmp_path / "w.bin") == 2
    assert "x.parquet" in capsys.readouterr().err


def test_word2vec_bag_rejects_a_bad_file(tmp_path):
    (tmp_path / "bad.bin").write_text("nope")
    with pytest.raises(InputError, match="not a word2vec binary file"):
        Word2VecBag(str(tmp_path / "bad.bin"))


class _Payload:
    """Unpickling this touches a file: the proof that a loader executed the pickle."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def test_word2vec_bag_refuses_a_pickle_without_running_it(tmp_path):
    import pickle

    marker = tmp_path / "pwned"
    crafted = tmp_path / "vectors.kv"
    crafted.write_bytes(pickle.dumps(_Payload(marker), protocol=4))
    with pytest.raises(InputError, match="pickle"):
        Word2VecBag(str(crafted))
    assert not marker.exists()


def test_word2vec_stage_writes_the_same_bytes_on_a_rerun(cli, sentences, tmp_path):
    assert train(cli, sentences, tmp_path / "a.bin") == 0
    assert train(cli, sentences, tmp_path / "b.bin") == 0
    assert (tmp_path / "a.bin").read_bytes() == (tmp_path / "b.bin").read_bytes()
    assert (tmp_path / "a.bin").read_bytes().startswith(b"13 8\n")  # the word2vec C binary header


def test_input_embedding_bag(tiny_model):
    bag = InputEmbeddingBag(str(tiny_model))
    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    ids = tokenizer("the king", add_special_tokens=False)["input_ids"]
    assert len(ids) == 2 and tokenizer.cls_token_id not in ids
    np.testing.assert_allclose(bag.encode(["the king"])[0], bag.table[ids].mean(0), rtol=1e-6)


def test_bag_tokens():
    assert bag_tokens("A plane, taking off.", "en") == ["A", "plane", "taking", "off"]
    assert bag_tokens("花呗 额度", "zh") == ["花", "呗", "额", "度"]
