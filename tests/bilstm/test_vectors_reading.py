"""The BiLSTM's word vectors read as InferSent read GloVe (issue 31): every word of the data, wherever
it stands in the file, plus the file's first N words; one streaming pass that checks every vector."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest
from gensim.models import KeyedVectors

from pipeline.errors import InputError
from pipeline.models import word_vectors

DIM = 4
FILLER = [f"filler{i}" for i in range(60)]
LATE = ["zebra", "Grazes", "."]  # data words after line 60 of the file


def glove_lines() -> list[str]:
    """A GloVe-format file (no header): 60 frequent words, GloVe 840B's kind of word with spaces, then the late words."""
    rng = np.random.default_rng(0)
    words = [*FILLER, ". . .", *LATE]
    return [" ".join([word, *(f"{x:.4f}" for x in rng.standard_normal(DIM))]) for word in words]


@pytest.fixture
def glove(tmp_path):
    path = tmp_path / "glove.txt"
    path.write_text("\n".join(glove_lines()) + "\n", encoding="utf-8")
    return path


def test_the_data_words_are_found_after_the_first_n_lines(glove):
    wanted = word_vectors.data_words(["A zebra grazes ."])  # "grazes" is in the file as "Grazes"
    assert {"A", "a", "zebra", "grazes", "."} <= wanted
    vectors = word_vectors.load(glove, limit=5, vocabulary=wanted)
    assert vectors.words == [*FILLER[:5], "zebra", "."]  # file order; "Grazes" is not a data word form
    vectors = word_vectors.load(glove, limit=5, vocabulary=word_vectors.data_words(["A zebra Grazes ."]))
    assert vectors.words == [*FILLER[:5], *LATE]
    everything = word_vectors.load(glove)
    for word in LATE:
        assert np.array_equal(vectors.vectors[vectors.index[word]], everything.vectors[everything.index[word]])
    assert vectors.ids("a zebra Grazes.") == [5, 6, 7]  # "a" has no vector and is dropped
    # the old reading (the first N words only) missed every late word
    assert word_vectors.load(glove, limit=5).words == FILLER[:5]


def test_only_the_data_words_when_no_frequent_words_are_asked_for(glove):
    vectors = word_vectors.load(glove, limit=0, vocabulary={"zebra", "filler3", "absent"})
    assert vectors.words == ["filler3", "zebra"] and vectors.vectors.shape == (2, DIM)


def test_a_glove_word_with_spaces_is_read_as_one_word(glove):
    vectors = word_vectors.load(glove)
    assert ". . ." in vectors.words and vectors.dim == DIM and len(vectors.words) == len(FILLER) + 4


def test_the_zip_is_streamed_with_the_same_words(glove, tmp_path):
    archive = tmp_path / "glove.840B.300d.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as handle:
        handle.write(glove, "glove.840B.300d.txt")
    wanted = {"zebra", "."}
    plain, zipped = word_vectors.load(glove, 3, wanted), word_vectors.load(archive, 3, wanted)
    assert zipped.words == plain.words == [*FILLER[:3], "zebra", "."]
    assert np.array_equal(zipped.vectors, plain.vectors)


def test_a_word2vec_binary_file_is_streamed_with_the_data_words(tmp_path):
    keyed = KeyedVectors(DIM)
    words = [*FILLER, *LATE]
    keyed.add_vectors(words, np.arange(len(words) * DIM, dtype=np.float32).reshape(len(words), DIM))
    path = tmp_path / "vectors.bin"
    keyed.save_word2vec_format(str(path), binary=True)
    vectors = word_vectors.load(path, limit=2, vocabulary={"zebra"})
    assert vectors.words == [*FILLER[:2], "zebra"]
    assert np.array_equal(vectors.vectors[2], keyed["zebra"])


# the kinds refused before the streaming reader, still refused by it (every line is checked, used or not)
REFUSED = {
    "binary-junk": ("glove.txt", bytes(np.random.default_rng(0).integers(0, 256, 5000, dtype=np.uint8)), ""),
    "binary-junk-bin": ("vectors.bin", b"3 4\n" + bytes(range(256)) * 2, ""),
    "header-only": ("glove.txt", b"5 3\n", ""),
    "one-value-short": ("glove.txt", b"the 0.1 0.2 0.3\nsat 0.7 0.8\n", "2 values where the vectors have 3"),
    "one-value-more": ("glove.txt", b"the 0.1 0.2 0.3\nsat 0.7 0.8 0.9 1.0\n", "4 values where the vectors have 3"),
    "nan": ("glove.txt", b"the 0.1 0.2 0.3\nsat nan 0.8 0.9\n", "'sat' holds NaN"),
    "inf-in-an-unused-word": ("glove.txt", b"the 0.1 0.2 0.3\nzebra 0.1 inf 0.3\n", "'zebra' holds NaN or infinite"),
    "not-a-number": ("glove.txt", b"the 0.1 0.2 0.3\na 0.1 x 0.1\n", "not a number"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_is_not_a_vectors_file_is_refused_even_where_only_data_words_are_kept(tmp_path, case):
    name, content, fragment = REFUSED[case]
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError) as caught:
        word_vectors.load(path, limit=0, vocabulary={"the"})
    assert caught.value.path == str(path) and fragment in caught.value.message


def test_the_stage_keeps_the_late_data_words_and_its_frequent_words(glove, tmp_path, cli):
    pairs = tmp_path / "pairs.csv"
    pairs.write_text(
        "pairID,sentence1,sentence2,label\n1,zebra Grazes .,filler1 filler2,entailment\n"
        "2,filler2 zebra,filler1 .,contradiction\n3,zebra,filler7,neutral\n"
    )
    out = tmp_path / "model"
    common = ["bilstm", "--train", pairs, "--dev", pairs, "--test", pairs, "--vectors", glove, "--pooling", "max"]
    assert (
        cli(
            *common, "--hidden", 4, "--epochs", 1, "--frequent-words", 3, "--out", out, "--metrics", tmp_path / "m.json"
        )
        == 0
    )
    vocabulary = (out / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1]
    assert vocabulary == ["filler0", "filler1", "filler2", "filler7", "zebra", "Grazes", "."]
    oov = json.loads((tmp_path / "m.json").read_text())["oov"]
    assert oov["train"]["tokens"] == 0.0 and oov["test"]["types"] == 0.0
