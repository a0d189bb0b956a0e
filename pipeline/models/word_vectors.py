"""Pre-trained word vectors for the BiLSTM encoders (paper 004 §3.1: GloVe 300d).

Read with gensim's ``KeyedVectors.load_word2vec_format`` (nothing is ever unpickled):

- word2vec C binary (a file ending in ``.bin``, as the ``word2vec`` stage writes ``vectors.bin``);
- word2vec text, with its ``COUNT DIM`` header line;
- GloVe text (``glove.840B.300d.txt``): the same without a header, detected from the first line;
- a ``.zip`` holding one such text file (the GloVe download, ``glove.840B.300d.zip``): its first
  ``limit`` lines are copied to a temporary file that gensim reads.

``limit`` keeps the first N words (both formats list the most frequent first). A ``COUNT DIM`` header
that claims more vectors than the file can hold is refused before anything is allocated
(:func:`check_header`). A text line with
a different number of values than the first (every line read is checked: gensim would silently
broadcast a one-value line) stops with an :class:`~pipeline.errors.InputError`
naming the file and the line. Sentences are split into words and punctuation
(:func:`words`); a word is looked up as it is, then lower-cased, and skipped when unknown, as
InferSent drops words without a GloVe vector.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from pipeline.errors import InputError

TOKENIZER = r"\w+|[^\w\s]"
_TOKEN = re.compile(TOKENIZER)


def words(text: str) -> list[str]:
    """Word-character runs and single punctuation marks (SentEval's files are already tokenised)."""
    return _TOKEN.findall(text)


def _has_header(path: Path) -> bool:
    with open(path, "rb") as handle:
        first = handle.readline().split()
    return len(first) == 2 and all(part.isdigit() for part in first)


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


def _find_bad_line(path: Path, header: bool, limit: int | None = None) -> tuple[int, str] | None:
    """The first line (1-based) whose value count differs from the first vector's, with the message;
    only the lines gensim reads (``limit`` vectors) are checked."""
    expected = None
    last = None if limit is None else limit + int(header)
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            if last is not None and number > last:
                break
            if header and number == 1:
                expected = int(line.split()[1])
                continue
            fields = line.rstrip("\n").rstrip(" ").split(" ")
            if line.strip() == "":
                return number, "empty line"
            values = len(fields) - 1
            if expected is None:
                expected = values
            if values != expected:
                return number, f"{values} values where the vectors have {expected} dimensions"
            try:
                [float(value) for value in fields[1:]]
            except ValueError:
                return number, "a value that is not a number"
    return None


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


def _load_zip(path: Path, limit: int | None) -> WordVectors:
    import shutil
    import tempfile
    import zipfile

    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise InputError(path, f"not a zip file: {exc}") from exc
    with archive:
        members = [name for name in archive.namelist() if not name.endswith("/")]
        if len(members) != 1:
            raise InputError(path, f"expected one vectors file in the archive, found {len(members)}")
        with tempfile.TemporaryDirectory() as folder:
            copy = Path(folder) / Path(members[0]).name
            with archive.open(members[0]) as source, open(copy, "wb") as target:
                if limit is None:
                    shutil.copyfileobj(source, target)
                else:
                    for number, line in enumerate(source):
                        if number > limit:  # one line more, in case the file has a header
                            break
                        target.write(line)
            try:
                vectors = load(copy, limit)
            except InputError as exc:
                raise InputError(f"{path}:{members[0]}", exc.message, where=exc.where) from exc
    vectors.source = str(path)
    return vectors


def load(path, limit: int | None = None) -> WordVectors:
    """Read a word2vec binary / text or GloVe text file, or a zip of one (see the module docstring)."""
    from gensim.models import KeyedVectors

    path = Path(path)
    if not path.is_file():
        raise InputError(path, "word vectors file not found")
    if path.suffix == ".zip":
        return _load_zip(path, limit)
    binary = path.suffix == ".bin"
    header = binary or _has_header(path)
    if header and check_header(path, binary, limit) is None and binary:
        raise InputError(path, "not a word2vec binary file: no 'COUNT DIM' header line")
    try:
        keyed = KeyedVectors.load_word2vec_format(
            str(path), binary=binary, no_header=not header, limit=limit, unicode_errors="replace"
        )
    except (ValueError, EOFError, UnicodeDecodeError, IndexError) as exc:
        bad = None if binary else _find_bad_line(path, header, limit)
        if bad:
            raise InputError(path, f"bad word vector: {bad[1]}", where=f"line {bad[0]}") from exc
        kind = "word2vec binary" if binary else "word2vec / GloVe text"
        raise InputError(path, f"not a {kind} vectors file: {exc}") from exc
    # gensim broadcasts a one-value line into a whole vector: check every line it read
    bad = None if binary else _find_bad_line(path, header, limit)
    if bad:
        raise InputError(path, f"bad word vector: {bad[1]}", where=f"line {bad[0]}")
    if not keyed.index_to_key:
        raise InputError(path, "no word vectors in the file")
    check_finite(path, keyed)
    return WordVectors(keyed.index_to_key, keyed.vectors, source=str(path))


def check_finite(path, keyed) -> None:
    """Refuse vectors holding NaN or an infinity: every cosine with them would be NaN, every score null."""
    bad = ~np.isfinite(keyed.vectors).all(axis=1)
    if bad.any():
        word = keyed.index_to_key[int(np.argmax(bad))]
        raise InputError(path, f"{int(bad.sum())} vector(s) hold NaN or infinite values, the first of {word!r}")
