"""A batch of documents as flat token-id arrays: the input of the vectorised n-gram counter.

Tokens (docs/method.md §2) are whitespace words in English, found with Arrow's whitespace split and
numbered with Arrow's dictionary encoding, and characters in Chinese, numbered by their code
point. Either way the work is done in C over the whole batch; Python never touches a token.

Every token carries its document (batch-local index), the end of its *run* (the stretch an
n-gram may span: the sentence in English, a whitespace-free part of the sentence in Chinese)
and, in ``reference`` mode, whether it contains a bracket (the released code skips any n-gram
with ``[`` or ``]``).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# reference mode: the punctuation the released code strips from a sentence before splitting it
# (Liyianan/ULR, ulr_code/scripts/src/pmi.py); tests/pmi_python.py, the specification, reads it here
REFERENCE_STRIP = re.compile(r"[().,?;'!:]+")


@dataclass
class TokenBatch:
    ids: np.ndarray  # int64 token ids; equal ids ⇔ equal tokens within the batch
    vocab_size: int  # ids are < vocab_size
    doc: np.ndarray  # int64 batch-local document index of each token (non-decreasing)
    run_end: np.ndarray  # int64 index one past the last token of the token's run
    sentence: np.ndarray  # int64 batch-local sentence index of each token
    offset: np.ndarray  # int64 token offset in its sentence: word index (en), string index (zh)
    n_docs: int
    n_sentences: int
    blocked: np.ndarray | None = None  # bool: no n-gram may contain this token
    words: pa.Array | None = None  # en: the batch's token strings, for building n-gram text
    codepoints: np.ndarray | None = None  # zh: the token characters' code points

    def __len__(self) -> int:
        return len(self.ids)

    def ngram_text(self, starts: np.ndarray, n: np.ndarray) -> pa.Array:
        """The text of the n-grams that start at token ``starts`` with lengths ``n``."""
        n = np.asarray(n, dtype=np.int64)
        offsets = np.zeros(len(n) + 1, dtype=np.int64)
        np.cumsum(n, out=offsets[1:])
        # token index of every token of every n-gram, without a Python loop
        gather = np.repeat(np.asarray(starts, dtype=np.int64) - offsets[:-1], n) + np.arange(offsets[-1])
        if self.words is not None:
            tokens = pa.LargeListArray.from_arrays(pa.array(offsets), self.words.take(pa.array(gather)))
            return pc.binary_join(tokens, pa.scalar(" ", pa.large_string())).cast(pa.string())
        chars = self.codepoints[gather].astype("<u4").tobytes().decode("utf-32-le")
        return pa.array([chars[a:b] for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())], pa.string())


# The characters for which str.isspace() is true (Unicode 15; tests/ngrams check it against
# the running Python): what str.split() and pipeline.words split on.
WHITESPACE = (
    0x9,
    0xA,
    0xB,
    0xC,
    0xD,
    0x1C,
    0x1D,
    0x1E,
    0x1F,
    0x20,
    0x85,
    0xA0,
    0x1680,
    *range(0x2000, 0x200B),
    0x2028,
    0x2029,
    0x202F,
    0x205F,
    0x3000,
)
_WHITESPACE = np.array(WHITESPACE, dtype=np.uint32)
# Arrow's whitespace split knows only ASCII spaces for certain: the others become " " first.
_OTHER_SPACE = "[" + "".join(f"\\x{{{c:x}}}" for c in WHITESPACE if c > 0x20 or 0x1C <= c <= 0x1F) + "]"


def _runs_to_ends(run_id: np.ndarray) -> np.ndarray:
    """For each token, the index one past the last token with the same (non-decreasing) run id."""
    if len(run_id) == 0:
        return np.zeros(0, dtype=np.int64)
    last = np.flatnonzero(np.diff(run_id)) + 1
    ends = np.append(last, len(run_id))
    return ends[np.searchsorted(ends, np.arange(len(run_id)), side="right")]


def english(
    texts: pa.Array | list[str], sentence_doc: np.ndarray, n_docs: int, reference: bool = False, lowercase: bool = False
) -> TokenBatch:
    """Whitespace words; ``reference`` strips the released code's punctuation and blocks brackets."""
    if lowercase:  # Python's lower(), as pipeline.words folds case
        texts = [text.lower() for text in _strings(texts)]
    array = pa.array(texts, pa.large_string()) if isinstance(texts, list) else texts.cast(pa.large_string())
    if reference:
        array = pc.replace_substring_regex(array, REFERENCE_STRIP.pattern, "")
    array = _ascii_spaces(array)
    lists = pc.ascii_split_whitespace(pc.ascii_trim_whitespace(array))  # no empty words at the ends
    words = lists.flatten()
    encoded = words.dictionary_encode()
    ids = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    counts = np.diff(lists.offsets.to_numpy())
    sentence = np.repeat(np.arange(len(texts), dtype=np.int64), counts)
    starts = np.zeros(len(texts), dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    blocked = None
    if reference:
        bracket = pc.match_substring_regex(encoded.dictionary, r"[\[\]]").to_numpy(zero_copy_only=False)
        blocked = bracket[ids] if len(ids) else np.zeros(0, dtype=bool)
    return TokenBatch(
        ids=ids,
        vocab_size=len(encoded.dictionary),
        doc=np.asarray(sentence_doc, dtype=np.int64)[sentence],
        run_end=_runs_to_ends(sentence),
        sentence=sentence,
        offset=np.arange(len(ids)) - starts[sentence],
        n_docs=n_docs,
        n_sentences=len(texts),
        blocked=blocked,
        words=words,
    )


def _ascii_spaces(array: pa.Array) -> pa.Array:
    """Split where Python's str.split() does: the rare rows holding non-ASCII whitespace (which
    Arrow's split does not know) get it turned into " " first. Finding them scans the UTF-8
    bytes in NumPy; the regex runs on those rows only."""
    array = array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array
    if len(array) == 0:
        return array
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64)[array.offset : array.offset + len(array) + 1]
    data = np.frombuffer(array.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
    # lead bytes of every whitespace character above U+007F (C2, E1, E2, E3) and U+001C..U+001F
    suspect = np.flatnonzero(((data >= 0xE1) & (data <= 0xE3)) | (data == 0xC2) | ((data >= 0x1C) & (data <= 0x1F)))
    if len(suspect) == 0:
        return array
    rows = np.unique(np.searchsorted(offsets, suspect + offsets[0], side="right") - 1)
    fixed = pc.replace_substring_regex(array.take(pa.array(rows)), _OTHER_SPACE, " ")
    mask = np.zeros(len(array), dtype=bool)
    mask[rows] = True
    # rows in order: the untouched ones from the array, the fixed ones from `fixed`
    source = np.cumsum(mask) - 1
    position = np.where(mask, len(array) + source, np.arange(len(array)))
    return pa.concat_arrays([array, fixed]).take(pa.array(position))


def _strings(texts: pa.Array | list[str]) -> list[str]:
    return texts if isinstance(texts, list) else texts.to_pylist()


def chinese(texts: pa.Array | list[str], sentence_doc: np.ndarray, n_docs: int, lowercase: bool = False) -> TokenBatch:
    """Characters by code point; whitespace separates runs and is not a token."""
    texts = _strings(texts)
    if lowercase:  # per sentence, as pipeline.words folds case; offsets need equal lengths
        texts = [lower if len(lower := text.lower()) == len(text) else text for text in texts]
    joined = "".join(texts)
    codepoints = np.frombuffer(joined.encode("utf-32-le"), dtype="<u4")
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    char_sentence = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
    sentence_start = np.zeros(len(texts), dtype=np.int64)
    np.cumsum(lengths[:-1], out=sentence_start[1:])
    space = np.isin(codepoints, _WHITESPACE)
    # a new run starts after whitespace and at every sentence start
    run_start = np.ones(len(codepoints), dtype=bool)
    run_start[1:] = space[:-1] | (char_sentence[1:] != char_sentence[:-1])
    run_id = np.cumsum(run_start)
    keep = ~space
    sentence = char_sentence[keep]
    return TokenBatch(
        ids=codepoints[keep].astype(np.int64),
        vocab_size=sys.maxunicode + 1,
        doc=np.asarray(sentence_doc, dtype=np.int64)[sentence],
        run_end=_runs_to_ends(run_id[keep]),
        sentence=sentence,
        offset=np.flatnonzero(keep) - sentence_start[sentence],
        n_docs=n_docs,
        n_sentences=len(texts),
        codepoints=codepoints[keep],
    )
