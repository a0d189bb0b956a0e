"""Word vectors for the BiLSTM: word2vec binary / text and GloVe text through gensim; bad lines."""

from __future__ import annotations

import numpy as np
import pytest
from gensim.models import KeyedVectors

from pipeline.errors import InputError
from pipeline.models import word_vectors

WORDS = ["the", "cat", "sat", "on", "mat", "."]


def keyed(dim: int = 4) -> KeyedVectors:
    vectors = KeyedVectors(dim)
    vectors.add_vectors(WORDS, np.arange(len(WORDS) * dim, dtype=np.float32).reshape(len(WORDS), dim) / 7)
    return vectors


@pytest.mark.parametrize("binary", [True, False])
def test_word2vec_binary_and_text_files_read_back(tmp_path, binary):
    path = tmp_path / ("vectors.bin" if binary else "vectors.txt")
    keyed().save_word2vec_format(str(path), binary=binary)
    loaded = word_vectors.load(path)
    assert loaded.words == WORDS and loaded.dim == 4
    assert np.allclose(loaded.vectors, keyed().vectors, atol=1e-5)


def test_glove_text_without_header_and_limit(tmp_path):
    path = tmp_path / "glove.txt"
    keyed().save_word2vec_format(str(path), binary=False, write_header=False)
    assert word_vectors.load(path).words == WORDS
    assert word_vectors.load(path, limit=3).words == WORDS[:3]


def test_a_zipped_glove_file_reads_like_the_text(tmp_path):
    import zipfile

    text = tmp_path / "glove.txt"
    keyed().save_word2vec_format(str(text), binary=False, write_header=False)
    with zipfile.ZipFile(tmp_path / "glove.zip", "w") as archive:
        archive.write(text, "glove.840B.300d.txt")
    assert word_vectors.load(tmp_path / "glove.zip").words == WORDS
    assert word_vectors.load(tmp_path / "glove.zip", limit=2).words == WORDS[:2]


def test_lookup_falls_back_to_lower_case_and_skips_unknown_words():
    vectors = word_vectors.WordVectors(WORDS, np.zeros((len(WORDS), 2)))
    assert word_vectors.words("The cat sat on the mat.") == ["The", "cat", "sat", "on", "the", "mat", "."]
    assert vectors.ids("The dog sat on the MAT.") == [0, 2, 3, 0, 4, 5]


@pytest.mark.parametrize("header", [True, False])
def test_a_line_with_the_wrong_dimension_names_file_and_line(tmp_path, header):
    path = tmp_path / "bad.txt"
    lines = ["the 0.1 0.2 0.3", "cat 0.4 0.5 0.6", "sat 0.7 0.8", "on 0.1 0.1 0.1"]
    path.write_text(("4 3\n" if header else "") + "\n".join(lines) + "\n")
    with pytest.raises(InputError) as error:
        word_vectors.load(path)
    assert error.value.path == str(path)
    assert error.value.where == f"line {4 if header else 3}"
    assert "2 values where the vectors have 3 dimensions" in error.value.message


def test_the_stage_prints_one_line_and_exits_2_on_a_bad_vectors_file(tmp_path, cli, capsys):
    vectors = tmp_path / "glove.txt"
    vectors.write_text("the 0.1 0.2\ncat 0.3\n")
    nli = tmp_path / "pairs.csv"
    nli.write_text("pairID,sentence1,sentence2,label\n1,the cat,a cat,entailment\n")
    assert (
        cli(
            "bilstm",
            "--train",
            nli,
            "--vectors",
            vectors,
            "--pooling",
            "max",
            "--out",
            tmp_path / "m",
            "--metrics",
            tmp_path / "m.json",
        )
        == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {vectors} (line 2): bad word vector: 1 values where the vectors have 2 dimensions"]
    assert not (tmp_path / "m").exists() and not (tmp_path / "m.json").exists()
