"""Bag-of-vectors baselines (docs/method.md §5 "Baselines"): a text is the mean of its tokens' vectors.

- :class:`Word2VecBag` averages word2vec vectors (trained by the ``word2vec`` stage on the
  pipeline's own clean corpus, the papers' BoW-GloVe row). English text is split into word
  characters runs (``\\w+``, as the clean corpus has no punctuation), Chinese into characters;
  a word missing from the vocabulary is looked up lower-cased, then skipped.
- :class:`InputEmbeddingBag` averages a transformers model's input (word-piece) embeddings
  over its tokenizer's pieces, special tokens excluded: the "no context" view of a checkpoint.

A text with no known token gets the zero vector; cosine with it is 0 (:mod:`pipeline.tasks.vectors`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from pipeline.errors import InputError, reading
from pipeline.models.fingerprint import checkpoint_fingerprint
from pipeline.models.word_vectors import check_finite, check_header
from pipeline.provenance import file_fingerprint

_WORD = re.compile(r"\w+")


def bag_tokens(text: str, lang: str) -> list[str]:
    """Words (``\\w+`` runs) in English, non-space characters in Chinese."""
    if lang == "zh":
        return [char for char in text if not char.isspace()]
    return _WORD.findall(text)


_WORD2VEC_HEADER = re.compile(rb"^[0-9]+ [0-9]+\r?\n")


def load_word2vec_binary(path: str):
    """Word vectors in word2vec's C binary format (what the ``word2vec`` stage writes).

    Pickles (gensim's own ``.kv`` / ``.model`` files among them) are refused before anything
    is parsed: unpickling runs whatever code the file names.
    """
    from gensim.models import KeyedVectors

    with reading(path), open(path, "rb") as handle:
        head = handle.read(64)
    if head[:1] == b"\x80" or not _WORD2VEC_HEADER.match(head):
        kind = (
            "a Python pickle (e.g. a gensim .kv file), refused: loading it could run code"
            if head[:1] == b"\x80"
            else "no 'WORDS DIM' header line"
        )
        raise InputError(path, f"not a word2vec binary file: {kind}; the word2vec stage writes vectors.bin")
    check_header(Path(path), binary=True)  # a header claiming more vectors than the file holds: no allocation
    try:
        keyed = KeyedVectors.load_word2vec_format(path, binary=True)
    except (ValueError, EOFError, UnicodeDecodeError) as exc:
        raise InputError(path, f"not a valid word2vec binary file: {exc}") from exc
    check_finite(path, keyed)
    return keyed


class Word2VecBag:
    """Mean of gensim KeyedVectors over the words of a text (``word2vec:PATH``)."""

    kind = "word2vec"
    pooling = "mean"

    def __init__(self, path: str, lang: str | None = None):
        self.path = path
        self.vectors = load_word2vec_binary(path)
        stats = Path(f"{path}.json")
        trained = json.loads(stats.read_text()).get("params", {}) if stats.exists() else {}
        self.lang = lang or trained.get("lang", "en")
        self.lowercase = bool(trained.get("lowercase", False))
        self.dim = self.vectors.vector_size
        self.oov: set[str] = set()

    def describe(self) -> dict:
        return {
            "kind": self.kind,
            "path": self.path,
            "lang": self.lang,
            "lowercase": self.lowercase,
            "vocabulary": len(self.vectors.key_to_index),
            "checkpoint": file_fingerprint(self.path),
        }

    def _lookup(self, word: str) -> int | None:
        index = self.vectors.key_to_index
        if self.lowercase:
            word = word.lower()
        found = index.get(word)
        if found is None:
            found = index.get(word.lower())
        if found is None:
            self.oov.add(word)
        return found

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            ids = [i for i in (self._lookup(w) for w in bag_tokens(text, self.lang)) if i is not None]
            if ids:
                out[row] = self.vectors.vectors[ids].mean(axis=0)
        return out


class InputEmbeddingBag:
    """Mean of a checkpoint's input embeddings over a text's word pieces (``input-embeddings:M``)."""

    kind = "input-embeddings"
    pooling = "mean"

    def __init__(self, path_or_id: str):
        from transformers import AutoModel

        from pipeline.models.tokenizer_check import load_tokenizer
        from pipeline.models.weights import load_pretrained

        self.path = path_or_id
        self.tokenizer = load_tokenizer(path_or_id)
        model = load_pretrained(AutoModel, path_or_id)
        self.table = model.get_input_embeddings().weight.detach().float().cpu().numpy()
        self.dim = self.table.shape[1]

    def describe(self) -> dict:
        return {"kind": self.kind, "path": self.path, "checkpoint": checkpoint_fingerprint(self.path)}

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        pieces = self.tokenizer(list(texts), add_special_tokens=False)["input_ids"] if texts else []
        for row, ids in enumerate(pieces):
            if ids:
                out[row] = self.table[ids].mean(axis=0)
        return out
