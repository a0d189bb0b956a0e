"""Pre-trained word vectors for the BiLSTM encoders (paper 004 §3.1: GloVe 840B 300d).

Read by one streaming pass over the file (nothing is ever unpickled, and at most the kept vectors are
held in memory):

- word2vec C binary (a file ending in ``.bin``, as the ``word2vec`` stage writes ``vectors.bin``);
- word2vec text, with its ``COUNT DIM`` header line;
- GloVe text (``glove.840B.300d.txt``): the same without a header, detected from the first line;
- a ``.zip`` holding one such text file (the GloVe download, ``glove.840B.300d.zip``), read from the
  archive as it is decompressed.

Which vectors are kept (:func:`load`): every vector, or the first ``limit`` (both formats list the most
frequent words first), or, given ``vocabulary``, the vectors of those words wherever they stand in the
file plus the first ``limit``. The last is how InferSent read GloVe (its ``build_vocab`` /
``get_w2v``: the whole 2.2M-word file, keeping the words of the data), without holding 2.2M × 300
floats; :func:`data_words` gives the words a set of sentences looks up.

Every vector of the file is checked, kept or not, so that what is not a word vectors file is refused
in one line (:class:`~pipeline.errors.InputError` naming the file and, where there is one, the line):
a pickle, binary data in a text file, an empty file, a line longer than :data:`MAX_LINE_BYTES`, a
line whose number of values differs from the first vector's, a value that is not a number, NaN or an
infinity, a ``COUNT DIM`` header that the file does not bear out (:func:`check_header` refuses one
claiming more than the file's size can hold before anything is allocated). GloVe 840B has a few words
that contain spaces (``. . .``): a text line is split from the right into the dimension's values and
the word, and a line is refused as holding too many values only where the piece before them is a
number too. Sentences are split into words and punctuation (:func:`words`); a word is looked up as it
is, then lower-cased, and skipped when unknown, as InferSent drops words without a GloVe vector.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np

from pipeline.errors import InputError

TOKENIZER = r"\w+|[^\w\s]"
_TOKEN = re.compile(TOKENIZER)
MAX_LINE_BYTES = 1 << 20  # a GloVe 300d line is about 3 KB; a 1 MB "line" is not a text vectors file
MAX_WORD_BYTES = 1 << 16  # the same bound for a word of the binary format
_CHUNK = 4096  # text lines parsed together (numpy parses one long string much faster than 300 short ones)


def words(text: str) -> list[str]:
    """Word-character runs and single punctuation marks (SentEval's files are already tokenised)."""
    return _TOKEN.findall(text)


def data_words(texts: Iterable[str]) -> set[str]:
    """The words that :meth:`WordVectors.lookup` may ask for on ``texts``: each token and its lower case."""
    found: set[str] = set()
    for text in texts:
        for word in words(text):
            found.add(word)
            found.add(word.lower())
    return found


def _is_header(first: bytes) -> bool:
    parts = first.split()
    return len(parts) == 2 and all(part.isdigit() for part in parts)


def check_header(path: Path, binary: bool, limit: int | None = None) -> tuple[int, int] | None:
    """``(count, dim)`` of a ``COUNT DIM`` header line (None without one), refused when the file is too
    short to hold the vectors it claims: a lying header must not make gensim allocate them. Each
    vector takes at least ``4 * dim + 2`` bytes in the binary format (word, space, floats) and
    ``2 * dim + 2`` in text (word, `` 0`` per value, newline); ``limit`` vectors are read at most."""
    with open(path, "rb") as handle:
        first = handle.readline(256).split()
    if len(first) != 2 or not all(part.isdigit() for part in first):
        return None
    count, dim = int(first[0]), int(first[1])
    if count < 1 or dim < 1:
        raise InputError(path, f"header claims {count} vectors of {dim} dimensions", where="line 1")
    rows = count if limit is None else min(count, limit)
    need = rows * ((4 if binary else 2) * dim + 2)
    size = Path(path).stat().st_size
    if need > size:
        raise InputError(
            path,
            f"header claims {count:,} vectors of {dim:,} dimensions, more than the file's {size:,} bytes "
            "can hold (a truncated or corrupt vectors file)",
            where="line 1",
        )
    return count, dim


def _refuse_pickle(path, head: bytes) -> None:
    """A pickle (protocol 2-5 starts with ``\\x80`` and its protocol number) is named, never read."""
    if len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5:
        raise InputError(path, "a Python pickle, not a word vectors file (pickles are never loaded)")


class _Kept:
    """The vectors kept while streaming a file: the first ``limit`` and those of ``vocabulary``."""

    def __init__(self, limit: int | None, vocabulary: set[str] | None):
        self.limit, self.vocabulary = limit, vocabulary
        self.words: list[str] = []
        self.rows: list[np.ndarray] = []
        self.seen: set[str] = set()
        self.read = 0

    @property
    def done(self) -> bool:
        """Only the first ``limit`` are wanted, and they are read: the rest need not be."""
        return self.vocabulary is None and self.limit is not None and self.read >= self.limit

    def offer(self, word: str, vector: np.ndarray) -> None:
        position = self.read
        self.read += 1
        if word in self.seen:  # a repeated word keeps its first (most frequent) vector
            return
        wanted = self.limit is None if self.vocabulary is None else word in self.vocabulary
        if wanted or (self.limit is not None and position < self.limit):
            self.seen.add(word)
            self.words.append(word)
            self.rows.append(np.array(vector, dtype=np.float32))


def _check_finite_rows(path, matrix: np.ndarray, names: list[str], lines: list[int]) -> None:
    bad = ~np.isfinite(matrix).all(axis=1)
    if bad.any():
        row = int(np.argmax(bad))
        raise InputError(path, f"the vector of {names[row]!r} holds NaN or infinite values", where=f"line {lines[row]}")


def _text_lines(handle: BinaryIO, path) -> Iterator[tuple[int, bytes]]:
    number = 0
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE_BYTES:
            raise InputError(
                path, f"a line longer than {MAX_LINE_BYTES:,} bytes: not a text vectors file", where=f"line {number}"
            )
        yield number, line


def _read_text(handle: BinaryIO, path, kept: _Kept) -> tuple[int, int | None]:
    """Stream a word2vec / GloVe text file into ``kept``; returns (dim, the header's count or None)."""
    dim, count = None, None
    pending: list[tuple[int, str, bytes]] = []  # (line, word, values) parsed a chunk at a time

    def flush() -> None:
        if not pending:
            return
        try:
            values = np.fromstring(b" ".join(item[2] for item in pending), dtype=np.float32, sep=" ")
        except ValueError:
            values = None
        if values is None or values.size != len(pending) * dim:
            for number, _, text in pending:  # find the line
                try:
                    if np.fromstring(text, dtype=np.float32, sep=" ").size == dim:
                        continue
                except ValueError:
                    pass
                raise InputError(path, "bad word vector: a value that is not a number", where=f"line {number}")
        matrix = values.reshape(len(pending), dim)
        _check_finite_rows(path, matrix, [item[1] for item in pending], [item[0] for item in pending])
        for (_, word, _), vector in zip(pending, matrix, strict=True):
            kept.offer(word, vector)
        pending.clear()

    for number, raw in _text_lines(handle, path):
        if number == 1:
            _refuse_pickle(path, raw)
            if _is_header(raw):
                count, dim = (int(part) for part in raw.split())
                if count < 1 or dim < 1:
                    raise InputError(path, f"header claims {count} vectors of {dim} dimensions", where="line 1")
                continue
        if b"\0" in raw:
            raise InputError(path, "binary data (a NUL byte) in a text vectors file", where=f"line {number}")
        line = raw.rstrip(b"\r\n").rstrip(b" ")
        if not line.strip():
            raise InputError(path, "bad word vector: empty line", where=f"line {number}")
        spaces = line.count(b" ")
        if dim is None:
            dim = spaces
            if dim < 1:
                raise InputError(
                    path, "not a word vectors text file: its first vector has no values", where=f"line {number}"
                )
        if spaces < dim:
            raise InputError(
                path,
                f"bad word vector: {spaces} values where the vectors have {dim} dimensions",
                where=f"line {number}",
            )
        word, _, values = line.partition(b" ")
        if spaces > dim:  # a word with spaces (GloVe's ". . ."), or too many values
            parts = line.rsplit(b" ", dim)
            word, values = parts[0], b" ".join(parts[1:])
            try:
                float(word.rsplit(b" ", 1)[1])
            except ValueError:
                pass
            else:
                raise InputError(
                    path,
                    f"bad word vector: {spaces} values where the vectors have {dim} dimensions",
                    where=f"line {number}",
                )
        pending.append((number, word.decode("utf-8", errors="replace"), values))
        if len(pending) >= _CHUNK:
            flush()
            if kept.done:
                return dim, count
    flush()
    if dim is None:
        raise InputError(path, "no word vectors in the file")
    return dim, count


def _read_binary(handle: BinaryIO, path, kept: _Kept) -> tuple[int, int]:
    """Stream a word2vec C binary file (``COUNT DIM`` line, then per vector: word, space, DIM float32)."""
    first = handle.readline(256)
    _refuse_pickle(path, first)
    if not _is_header(first):
        raise InputError(path, "not a word2vec binary file: no 'COUNT DIM' header line")
    count, dim = (int(part) for part in first.split())
    if count < 1 or dim < 1:
        raise InputError(path, f"header claims {count} vectors of {dim} dimensions", where="line 1")
    size = 4 * dim
    for index in range(count):
        word = bytearray()
        while True:
            byte = handle.read(1)
            if not byte:
                raise InputError(path, f"ends after {index:,} of the {count:,} vectors its header claims")
            if byte == b" ":
                break
            if byte != b"\n" or word:
                word += byte
            if len(word) > MAX_WORD_BYTES:
                raise InputError(path, f"vector {index + 1:,}: a word longer than {MAX_WORD_BYTES:,} bytes")
        data = handle.read(size)
        if len(data) != size:
            raise InputError(path, f"ends inside vector {index + 1:,} of the {count:,} its header claims")
        vector = np.frombuffer(data, dtype="<f4")
        name = bytes(word).decode("utf-8", errors="replace")
        if not np.isfinite(vector).all():
            raise InputError(path, f"the vector of {name!r} (vector {index + 1:,}) holds NaN or infinite values")
        kept.offer(name, vector)
        if kept.done:
            break
    return dim, count


class WordVectors:
    """``words`` (list) and ``vectors`` (float32 ``(len(words), dim)``) of a vectors file."""

    def __init__(self, words_: list[str], vectors: np.ndarray, source: str | None = None):
        self.words = list(words_)
        self.vectors = np.asarray(vectors, dtype=np.float32)
        self.source = source
        self.index = {word: row for row, word in enumerate(self.words)}

    @property
    def dim(self) -> int:
        return self.vectors.shape[1]

    def lookup(self, word: str) -> int | None:
        found = self.index.get(word)
        return self.index.get(word.lower()) if found is None else found

    def ids(self, text: str) -> list[int]:
        return [row for row in (self.lookup(word) for word in words(text)) if row is not None]


def coverage(vectors: WordVectors, texts) -> dict:
    """Out-of-vocabulary rates of ``texts`` under ``vectors``, split and looked up as :meth:`WordVectors.ids`
    does: ``tokens`` / ``oov_tokens`` count every token, ``types`` / ``oov_types`` each distinct
    token once; the rates are percentages."""
    counts: dict[str, int] = {}
    for text in texts:
        for word in words(text):
            counts[word] = counts.get(word, 0) + 1
    missing = [word for word in counts if vectors.lookup(word) is None]
    tokens, oov_tokens = sum(counts.values()), sum(counts[word] for word in missing)
    return {
        "tokens": tokens,
        "oov_tokens": oov_tokens,
        "oov_token_rate": 100.0 * oov_tokens / max(tokens, 1),
        "types": len(counts),
        "oov_types": len(missing),
        "oov_type_rate": 100.0 * len(missing) / max(len(counts), 1),
    }


def _stream(path: Path, handle: BinaryIO, binary: bool, kept: _Kept) -> int:
    """Read ``handle`` into ``kept``; the dimension. The file's vector count must match its header."""
    dim, count = (_read_binary if binary else _read_text)(handle, path, kept)
    if count is not None and not kept.done and kept.read != count:
        raise InputError(path, f"header claims {count:,} vectors, the file holds {kept.read:,}", where="line 1")
    return dim


def load(path, limit: int | None = None, vocabulary: Iterable[str] | None = None) -> WordVectors:
    """The vectors of a word2vec binary / text or GloVe text file, or of a zip of one: all, the first
    ``limit``, or (given ``vocabulary``) those of its words plus the first ``limit`` (module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "word vectors file not found")
    kept = _Kept(limit, None if vocabulary is None else set(vocabulary))
    if path.suffix == ".zip":
        try:
            archive = zipfile.ZipFile(path)
        except zipfile.BadZipFile as exc:
            raise InputError(path, f"not a zip file: {exc}") from exc
        with archive:
            members = [name for name in archive.namelist() if not name.endswith("/")]
            if len(members) != 1:
                raise InputError(path, f"expected one vectors file in the archive, found {len(members)}")
            where = f"{path}:{members[0]}"
            try:
                with archive.open(members[0]) as handle:
                    dim = _stream(Path(where), handle, members[0].endswith(".bin"), kept)
            except (zipfile.BadZipFile, EOFError, OSError) as exc:  # a corrupt or truncated archive
                raise InputError(where, f"cannot be read from the archive: {exc}") from exc
    else:
        binary = path.suffix == ".bin"
        check_header(path, binary, None if vocabulary is not None else limit)
        with open(path, "rb") as handle:
            dim = _stream(path, handle, binary, kept)
    if not kept.read:
        raise InputError(path, "no word vectors in the file")
    matrix = np.stack(kept.rows) if kept.rows else np.zeros((0, dim), dtype=np.float32)
    return WordVectors(kept.words, matrix, source=str(path))


def check_finite(path, keyed) -> None:
    """Refuse vectors holding NaN or an infinity: every cosine with them would be NaN, every score null."""
    bad = ~np.isfinite(keyed.vectors).all(axis=1)
    if bad.any():
        word = keyed.index_to_key[int(np.argmax(bad))]
        raise InputError(path, f"{int(bad.sum())} vector(s) hold NaN or infinite values, the first of {word!r}")
