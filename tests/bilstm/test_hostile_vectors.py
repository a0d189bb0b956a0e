"""Hostile ``bilstm --vectors`` files (issue 32): whatever is not a word2vec / GloVe vectors file with one
consistent dimension and finite values is refused in one line naming the file and what is wrong, exit
2, before any training and with nothing written; a pickle is named and never loaded."""

from __future__ import annotations

import pickle
import zipfile

import numpy as np
import pytest
from hostile import MARKER_FILE, Payload, assert_clean_failure

PAIRS = "pairID,sentence1,sentence2,label\n1,the cat sat,a cat sat,entailment\n2,the dog ran,a cat sat,neutral\n"
GOOD_LINES = ["the 0.1 0.2 0.3", "cat 0.4 0.5 0.6", "sat 0.7 0.8 0.9", "a 0.1 0.1 0.1", "dog 0.2 0.2 0.2"]


def _text(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def _pickle_of_vectors(tmp_path) -> bytes:
    return pickle.dumps({"the": np.ones(3, dtype=np.float32), "cat": np.zeros(3, dtype=np.float32)})


def _zip_of(content: bytes):
    def make(tmp_path) -> bytes:
        inner = tmp_path / "inner.zip"
        with zipfile.ZipFile(inner, "w") as archive:
            archive.writestr("glove.840B.300d.txt", content)
        return inner.read_bytes()

    return make


# (name of the vectors file, its content or a function of tmp_path giving it, a fragment of the error);
# the kinds that were refused before (binary junk, a header alone, a line with more or fewer values, NaN, a
# value that is not a number) are kept refused by the streaming reader: tests/bilstm/test_vectors_reading.py
CASES = {
    "pickle": ("glove.vec", _pickle_of_vectors, "pickle"),
    "pickle-as-bin": ("vectors.bin", _pickle_of_vectors, "pickle"),
    "pickle-in-zip": ("glove.zip", lambda tmp: _zip_of(_pickle_of_vectors(tmp))(tmp), "pickle"),
    "empty": ("glove.txt", b"", "no word vectors"),
    "words-without-values": ("glove.txt", b"the\ncat\nsat\n", "no values"),
    "nul-bytes": ("glove.txt", _text(GOOD_LINES[:2]) + b"sat 0.7\x00 0.8 0.9\n", "binary data"),
    "one-huge-line": ("glove.txt", b"the " + b"0.1" * 500_000, "longer than"),
    "header-count-wrong": ("glove.txt", b"9 3\n" + _text(GOOD_LINES), "header claims"),
    "truncated-bin": (
        "vectors.bin",
        b"2 3\nthe " + np.ones(3, dtype="<f4").tobytes() + b"cat " + bytes(6),
        "ends inside vector 2",
    ),
}


def run_bilstm(cli, tmp_path, vectors, *extra):
    """``bilstm`` on two demo-like pairs with ``vectors``; returns (exit status, the output folder)."""
    train = tmp_path / "pairs.csv"
    train.write_text(PAIRS)
    out = tmp_path / "out"
    argv = ["--train", train, "--vectors", vectors, "--pooling", "max", *extra]
    return cli("bilstm", *argv, "--out", out / "model", "--metrics", out / "snli.json"), out


@pytest.mark.parametrize("case", sorted(CASES))
def test_bilstm_refuses_a_vectors_file_that_is_not_one_in_one_line(cli, tmp_path, capsys, case):
    name, content, fragment = CASES[case]
    vectors = tmp_path / name
    vectors.write_bytes(content(tmp_path) if callable(content) else content)
    status, out = run_bilstm(cli, tmp_path, vectors, "--dev", tmp_path / "pairs.csv", "--hidden", 4, "--epochs", 1)
    assert_clean_failure(status, capsys.readouterr().err, vectors, out, fragment)


def test_a_pickle_that_runs_code_when_loaded_is_refused_without_running_it(cli, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    vectors = tmp_path / "glove.vec"
    vectors.write_bytes(pickle.dumps(Payload(tmp_path / MARKER_FILE)))
    status, out = run_bilstm(cli, tmp_path, vectors)
    assert_clean_failure(status, capsys.readouterr().err, vectors, out, "pickle")
    assert not (tmp_path / MARKER_FILE).exists()
