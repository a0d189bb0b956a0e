"""Packed input: the sampled sentences as one continuous text cut into fixed-length blocks (BURT §5.2).

BURT §5.2: "in accordance with Joshi et al. (2020) [10], we find that single sentence training is
better than the original sentence pair scenario. Thus in our experiments, the input is a
continuous sequence with a maximum length of 512"; the authors' ``run_ngram.py`` concatenates the
tokenized text and cuts it into ``block_size`` blocks. ULR-BERT §4 instead feeds "an n-gram or a
single sequence with a maximum length of 128" (one sentence per input, :class:`TokenDataset`
itself). ``pretrain --input packed --max-length N`` selects this module (docs/stages/pretrain.md).

The token rows (one per sampled sentence, in :class:`TokenDataset`'s ``(doc_id, sent_id)`` order)
are concatenated as content tokens, each row without the special tokens of its own single-sentence
encoding, and cut into blocks of ``N - specials`` content tokens, each wrapped in the tokenizer's
single-sentence template (``[CLS] … [SEP]`` for BERT; the ids and how many lead and trail come from
the tokenizer, :class:`SingleTemplate`). Blocks cross sentence and document boundaries, as
``run_ngram.py``'s do, so only the last block is short (and only it is padded in a batch).

What the collators read is kept in place: ``ngram_spans`` and ``entity_spans`` move with their
tokens into the block; a span cut by a block boundary is dropped from both blocks (a whole n-gram
cannot be masked across two inputs) and counted (:meth:`PackedDataset.cut_spans`). ``word_ids``
are offset per sentence so that they stay unique within a block and whole-word masking groups
only one sentence's sub-words (a word cut by a block boundary is two units, one in each block).
A block's ``idx`` is its index, so its masks are a function of ``(seed, epoch, block)`` like a
sentence's.

Nothing is materialised: the cumulative content lengths (one integer per row) locate a block's
rows by binary search, and a block is built from the memory-mapped rows when it is asked for.
"""

from __future__ import annotations

import numpy as np

from pipeline.errors import InputError
from pipeline.objective_registry import PACKABLE
from pipeline.pretrain.token_dataset import SPAN_COLUMNS, TokenDataset

INPUTS = ("sentences", "packed")  # pretrain --input; the first is the default
# the objectives whose inputs may be packed: masking only (MiSAD encodes single sentences, NSP / SOP pairs)
PACKED_OBJECTIVES = PACKABLE
PACKED_LENGTH = 512  # BURT §5.2: "a continuous sequence with a maximum length of 512"


def check_input(args) -> None:
    """Refuse packed input for an objective that needs sentences; settle the packed block length and the
    batching (``length-grouped`` for sentences, :mod:`pipeline.pretrain.batching`; ``random`` for blocks,
    which all have one length). In place, on the parsed ``pretrain`` arguments."""
    if args.input == "packed" and args.objective not in PACKED_OBJECTIVES:
        raise InputError(
            "--input",
            f"packed input is for {', '.join(PACKED_OBJECTIVES)}; {args.objective} trains on single sentences "
            "or sentence pairs (ULR-BERT §4): use --input sentences",
        )
    if args.input == "packed":
        args.max_length = args.max_length or PACKED_LENGTH
    args.batching = args.batching or ("random" if args.input == "packed" else "length-grouped")


def sentence_length(requested: int | None, data_record: dict) -> int | None:
    """Sentence input's length: the token data's (tokenize cut the sentences there); another is refused."""
    made = data_record.get("params", {}).get("max_length")
    if requested and made and requested != made:
        raise InputError(
            "--max-length",
            f"{requested}, but the sentences were tokenized at {made}: sentence input keeps the token data's "
            "length (rerun tokenize with --max-length, or use --input packed)",
        )
    return requested or made


def check_positions(kind: str, longest: int, positions: int | None) -> None:
    """Refuse inputs longer than the model's position embeddings, naming the option that sets their length."""
    if positions and longest > positions:
        fix = f"pass --max-length {positions}" if kind == "packed" else f"rerun tokenize with --max-length {positions}"
        raise InputError(
            "--max-length", f"inputs of up to {longest} tokens, but the model has {positions} positions; {fix}"
        )


class SingleTemplate:
    """The tokenizer's single-sentence layout: the special ids before and after the text (found by
    encoding a probe, as :class:`~pipeline.pretrain.sentence_pairs.PairTemplate` finds the pair layout)."""

    def __init__(self, tokenizer):
        probe = tokenizer("a b c", return_special_tokens_mask=True)
        ids, special = list(probe["input_ids"]), list(probe["special_tokens_mask"])
        if all(special):
            raise InputError("--model", "the tokenizer encodes a probe text as special tokens only; no template found")
        lead = special.index(0)
        trail = special[::-1].index(0)
        self.prefix = np.array(ids[:lead], dtype=np.int64)
        self.suffix = np.array(ids[len(ids) - trail :], dtype=np.int64)

    @property
    def specials(self) -> int:
        return len(self.prefix) + len(self.suffix)

    def wrap(self, content: np.ndarray) -> np.ndarray:
        return np.concatenate([self.prefix, np.asarray(content, dtype=np.int64), self.suffix])


class PackedDataset:
    """Blocks of the concatenated content of a :class:`TokenDataset`: ``{"idx", "input_ids", "word_ids",
    "ngram_spans" (k×2), "entity_spans" (k×2), "rows" (first, last row)}``, the fields the collators read."""

    def __init__(self, dataset: TokenDataset, tokenizer, max_length: int):
        self.dataset = dataset
        self.template = SingleTemplate(tokenizer)
        self.block = max_length - self.template.specials  # content tokens per block
        if self.block < 1:
            raise InputError(
                "--max-length", f"{max_length} leaves no room for text in [{self.template.specials} special tokens]"
            )
        self.max_length = max_length
        self.lead = len(self.template.prefix)
        content = np.asarray(dataset.lengths(), dtype=np.int64) - self.template.specials
        if len(content) and content.min() < 1:
            raise InputError(
                dataset.path, "a row holds no text besides its special tokens; tokenized with another template?"
            )
        self._check_template(dataset[0] if len(dataset) else None)
        self.starts = np.concatenate([[0], np.cumsum(content)])  # content offset of each row, and the total
        self._cut = None

    def _check_template(self, row: dict | None) -> None:
        """The rows must carry this tokenizer's single-sentence template, or the content would be mis-cut."""
        if row is None:
            return
        ids = np.asarray(row["input_ids"])
        if not (
            np.array_equal(ids[: self.lead], self.template.prefix)
            and np.array_equal(ids[len(ids) - len(self.template.suffix) :], self.template.suffix)
        ):
            raise InputError(self.dataset.path, "rows do not start and end with the tokenizer's special tokens")

    @property
    def content_tokens(self) -> int:
        return int(self.starts[-1])

    def __len__(self) -> int:
        return (self.content_tokens + self.block - 1) // self.block

    def lengths(self) -> np.ndarray:
        """Tokens per block (special tokens included): ``max_length`` except for the last."""
        out = np.full(len(self), self.max_length, dtype=np.int64)
        if len(out):
            out[-1] = self.content_tokens - (len(out) - 1) * self.block + self.template.specials
        return out

    def rows_of(self, idx: int) -> tuple[int, int]:
        """The first and last row (dataset indices) whose content lies in block ``idx``."""
        begin, end = idx * self.block, min((idx + 1) * self.block, self.content_tokens)
        first = int(np.searchsorted(self.starts, begin, side="right")) - 1
        last = int(np.searchsorted(self.starts, end, side="left")) - 1
        return first, last

    def __getitem__(self, idx: int) -> dict:
        if not 0 <= idx < len(self):
            raise IndexError(idx)
        begin, end = idx * self.block, min((idx + 1) * self.block, self.content_tokens)
        first, last = self.rows_of(idx)
        ids, words, spans = [], [], {name: [] for name in SPAN_COLUMNS}
        word_offset = 0
        for i in range(first, last + 1):
            row = self.dataset[i]
            # the row's content [lo, hi) that falls in this block, in content coordinates of the row
            lo = max(begin, int(self.starts[i])) - int(self.starts[i])
            hi = min(end, int(self.starts[i + 1])) - int(self.starts[i])
            shift = int(self.starts[i]) - begin  # row content -> block content coordinates
            ids.append(np.asarray(row["input_ids"])[self.lead + lo : self.lead + hi])
            piece = np.asarray(row["word_ids"], dtype=np.int64)[self.lead + lo : self.lead + hi]
            words.append(np.where(piece >= 0, piece + word_offset, -1))
            word_offset += int(piece.max(initial=-1)) + 1
            for name in SPAN_COLUMNS:
                s = np.asarray(row[name], dtype=np.int64).reshape(-1, 2) - self.lead  # row content coordinates
                inside = (s[:, 0] >= lo) & (s[:, 1] <= hi)
                spans[name].append(s[inside] + shift + self.lead)  # block coordinates, past the block's prefix
        specials = np.full(len(self.template.prefix), -1), np.full(len(self.template.suffix), -1)
        item = {
            "idx": idx,
            "input_ids": self.template.wrap(np.concatenate(ids)),
            "word_ids": np.concatenate([specials[0], *words, specials[1]]).astype(np.int64),
            "rows": (first, last),
        }
        for name in SPAN_COLUMNS:
            item[name] = np.concatenate(spans[name]).reshape(-1, 2)
        return item

    def cut_spans(self) -> dict[str, int]:
        """``{column: spans}`` that a block boundary cuts (dropped from both blocks), over the whole dataset.

        Only a row that a boundary falls strictly inside can have one: one row per boundary is read."""
        if self._cut is None:
            bounds = np.arange(1, len(self), dtype=np.int64) * self.block
            rows = np.searchsorted(self.starts, bounds, side="right") - 1
            inside = bounds > self.starts[rows]
            cut = {name: set() for name in SPAN_COLUMNS}  # (row, span): a long row may hold two boundaries
            for bound, i in zip(bounds[inside], rows[inside]):
                at = int(bound - self.starts[i]) + self.lead  # the boundary in the row's own coordinates
                row = self.dataset[int(i)]
                for name in SPAN_COLUMNS:
                    s = np.asarray(row[name]).reshape(-1, 2)
                    cut[name].update((int(i), int(k)) for k in np.flatnonzero((s[:, 0] < at) & (s[:, 1] > at)))
            self._cut = {name: len(found) for name, found in cut.items()}
        return dict(self._cut)
