"""The token dataset as a memory-mapped, random-access ``torch`` dataset (never all in RAM).

The ``tokens`` Parquet files (:data:`pipeline.contracts.TOKENS`; one per sample shard) are
compressed, so they cannot be mapped directly; :func:`build_arrow_cache` copies them, a row
group at a time and in the order of their paths (so the order they are named in does not
matter), into one uncompressed Arrow IPC file, which :class:`TokenDataset` memory-maps: each row is a pair of
slices into the mapped column buffers, and the operating system pages in what is read. The
dataset itself is never modified; masking happens in the collators, anew each epoch.

Before a run, :func:`check_data` checks every file ``pretrain`` is given (schema, vocabulary, length,
rows) and :func:`data_fingerprint` names the data a checkpoint belongs to.

A ``tokens pairs`` dataset (the NSP / SOP sample, ULR-BERT §7.1) keeps its ``sampled`` column in the
cache; :meth:`TokenDataset.column` gives it, and :attr:`TokenDataset.has_sampled` says it is there.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline import contracts, provenance
from pipeline.atomic import AtomicFiles
from pipeline.errors import InputError
from pipeline.models.directory import vocab_sha256

LIST_COLUMNS = ("input_ids", "word_ids")
SPAN_COLUMNS = ("ngram_spans", "entity_spans")


def build_arrow_cache(parquet_paths, cache_path, batch_rows: int = 65536) -> Path:
    """Copy the token dataset (one file or several, taken in path order) to an uncompressed Arrow
    IPC file (atomically), batch by batch; the metadata (tokenizer, provenance) is the first file's."""
    paths = sorted(map(Path, [parquet_paths] if isinstance(parquet_paths, (str, Path)) else parquet_paths), key=str)
    contract = contracts.sampled_variant(paths, contracts.TOKENS, contracts.TOKENS_PAIRS)
    schema = contract.with_metadata(pq.ParquetFile(paths[0]).schema_arrow.metadata)
    with (
        AtomicFiles() as files,
        pa.OSFile(str(files.temp(cache_path)), "wb") as sink,
        pa.ipc.new_file(sink, schema) as writer,
    ):
        for path in paths:
            for batch in contracts.iter_batches(path, contract.names, batch_rows):
                writer.write_batch(pa.RecordBatch.from_arrays(batch.columns, schema=schema))
    return Path(cache_path)


def check_token_rows(path, vocab_size: int, batch_rows: int = 65536, special_ids=()) -> None:
    """Refuse rows the collators cannot trust, naming the first: no tokens, only special tokens
    (``special_ids``: ``[CLS] [SEP]`` leaves nothing to mask, and a batch of them trains with loss 0;
    ``tokenize`` drops such sentences, and packed input refuses them too), an id outside
    ``[0, vocab_size)``, ``word_ids`` of another length than ``input_ids``, a span that is empty
    or reaches past its row (docs/design.md, the ``tokens`` contract). Vectorised per batch."""
    specials = pa.array(sorted({int(i) for i in special_ids}), type=pa.int64())
    seen = 0
    for batch in contracts.iter_batches(path, contracts.TOKENS.names, batch_rows):
        ids = batch.column("input_ids")
        lengths = pc.list_value_length(ids).fill_null(0)
        problems = [
            (pc.equal(lengths, 0), "no input_ids"),
            (
                pc.not_equal(pc.list_value_length(batch.column("word_ids")).fill_null(0), lengths),
                "word_ids and input_ids differ in length",
            ),
        ]
        values = pc.list_flatten(ids)
        if len(specials):
            content = pc.invert(pc.is_in(pc.cast(values, pa.int64()), value_set=specials))
            only_specials = pc.and_(pc.invert(_rows_of(ids, content, batch.num_rows)), pc.greater(lengths, 0))
            problems.append((only_specials, "only special tokens (no text between [CLS] and [SEP]: nothing to mask)"))
        outside = pc.or_(pc.less(values, 0), pc.greater_equal(values, vocab_size))
        problems.append(
            (_rows_of(ids, outside, batch.num_rows), f"a token id outside the vocabulary [0, {vocab_size})")
        )
        for name in SPAN_COLUMNS:
            spans = batch.column(name)
            start, end = (pc.struct_field(pc.list_flatten(spans), [i]) for i in (0, 1))
            row_length = pc.take(lengths, pc.list_parent_indices(spans))
            wrong = pc.or_(pc.or_(pc.less(start, 0), pc.less_equal(end, start)), pc.greater(end, row_length))
            problems.append((_rows_of(spans, wrong, batch.num_rows), f"a span in {name} outside its row or empty"))
        for mask, what in problems:
            first = pc.index(mask.fill_null(False), True).as_py()
            if first >= 0:
                doc, sent = batch.column("doc_id")[first].as_py(), batch.column("sent_id")[first].as_py()
                raise InputError(
                    path, f"{what}; rerun tokenize", where=f"row {seen + first}, doc {doc} sentence {sent}"
                )
        seen += batch.num_rows


def check_data(paths: list[Path], tokenizer) -> dict:
    """The first file's tokenize record, after checking every file's schema, vocabulary and length."""
    records = []
    for path in paths:
        contracts.check_schema(path, contracts.TOKENS)
        record = contracts.read_provenance(path)
        made_with = record.get("params", {}).get("vocab_sha256")
        if made_with and made_with != vocab_sha256(tokenizer):
            raise InputError(
                path,
                f"tokenized with another vocabulary ({record['params'].get('model')}); rerun tokenize with this model",
            )
        if records and record.get("params", {}).get("max_length") != records[0].get("params", {}).get("max_length"):
            raise InputError(path, "tokenized with another --max-length than the other shards")
        check_token_rows(path, len(tokenizer), special_ids=tokenizer.all_special_ids)
        records.append(record)
    return records[0]


def data_fingerprint(paths: list[Path]) -> tuple[list[dict], str]:
    """Each file's fingerprint (path order) and one SHA-256 over them: the data a checkpoint belongs to."""
    prints = [provenance.file_fingerprint(p) for p in sorted(paths, key=str)]
    return prints, hashlib.sha256("".join(p["sha256"] for p in prints).encode()).hexdigest()


def _rows_of(lists: pa.Array, value_mask: pa.Array, rows: int) -> pa.Array:
    """Per row: does any of its list values satisfy ``value_mask``."""
    flagged = np.zeros(rows, dtype=bool)
    parents = pc.list_parent_indices(lists).to_numpy()
    flagged[parents[value_mask.to_numpy(zero_copy_only=False)]] = True
    return pa.array(flagged)


class _Chunk:
    """Zero-copy numpy views of one record batch's columns."""

    def __init__(self, batch: pa.RecordBatch):
        self.rows = batch.num_rows
        self.doc_id = batch.column("doc_id").to_numpy()
        self.sent_id = batch.column("sent_id").to_numpy()
        names = batch.schema.names
        self.sampled = batch.column("sampled").to_numpy(zero_copy_only=False) if "sampled" in names else None
        self.lists = {}
        for name in LIST_COLUMNS:
            column = batch.column(name)
            self.lists[name] = (column.offsets.to_numpy(), column.values.to_numpy())
        self.spans = {}
        for name in SPAN_COLUMNS:
            column = batch.column(name)
            start, end = column.values.flatten()
            self.spans[name] = (
                column.offsets.to_numpy(),
                np.stack([start.to_numpy(), end.to_numpy()], axis=1) if len(start) else np.zeros((0, 2), np.int32),
            )

    def row(self, i: int) -> dict:
        item = {"doc_id": int(self.doc_id[i]), "sent_id": int(self.sent_id[i])}
        for name, (offsets, values) in self.lists.items():
            item[name] = values[offsets[i] : offsets[i + 1]]
        for name, (offsets, values) in self.spans.items():
            item[name] = values[offsets[i] : offsets[i + 1]]
        return item


class TokenDataset:
    """Rows of a token dataset by index: ``{"idx", "doc_id", "sent_id", "input_ids", "word_ids",
    "ngram_spans" (k×2), "entity_spans" (k×2)}`` as numpy views of the mapped file.

    Indices run over the rows sorted by ``(doc_id, sent_id)``, not in file order, so that the same
    sample cut into a different number of shards is the same dataset: same order, same per-example
    masks, same training run."""

    def __init__(self, cache_path):
        self.path = Path(cache_path)
        self._source = pa.memory_map(str(self.path), "r")
        reader = pa.ipc.open_file(self._source)
        self.metadata = reader.schema.metadata or {}
        self._chunks = [_Chunk(reader.get_batch(i)) for i in range(reader.num_record_batches)]
        self._starts = np.cumsum([0] + [c.rows for c in self._chunks])
        self.has_sampled = "sampled" in reader.schema.names
        self._order = np.lexsort((self._stored("sent_id"), self._stored("doc_id")))

    def __len__(self) -> int:
        return int(self._starts[-1])

    def __getitem__(self, idx: int) -> dict:
        if not 0 <= idx < len(self):
            raise IndexError(idx)
        stored = int(self._order[idx])
        c = bisect_right(self._starts, stored) - 1
        item = self._chunks[c].row(stored - int(self._starts[c]))
        item["idx"] = idx
        return item

    def _stored(self, name: str) -> np.ndarray:
        return np.concatenate([getattr(c, name) for c in self._chunks]) if self._chunks else np.zeros(0, np.int64)

    def column(self, name: str) -> np.ndarray:
        """A per-row scalar column (``doc_id``, ``sent_id``; ``sampled`` where :attr:`has_sampled`) over
        the whole dataset, in index order."""
        if name == "sampled" and not self.has_sampled:
            raise KeyError(f"{self.path}: no 'sampled' column (not a --with-next sample)")
        return self._stored(name)[self._order]

    def lengths(self) -> np.ndarray:
        """Tokens per row (special tokens included), in index order."""
        stored = (
            np.concatenate([np.diff(c.lists["input_ids"][0]) for c in self._chunks])
            if self._chunks
            else np.zeros(0, np.int64)
        )
        return stored[self._order]
