"""Sentences files read a batch of whole documents at a time, so memory stays flat.

The n-gram stage needs every sentence of a document together (counts are per document) but
never the whole corpus. Sentences of a document are contiguous in a ``sentences`` file (the
clean stage writes them so); a document whose sentences are split across the file is an
error, because its counts would silently be wrong. So is a sentence whose ``sent_id`` is
negative or null, or repeats another of its document (the contract counts a document's sentences
from 0, pipeline/contracts.py): the marked sentences would be ambiguous. The error names the file,
the document and the sentence (docs/behaviour.md).

Besides the ``sentences`` contract this reads any Parquet file with ``doc_id``, ``sent_id``
and ``text`` (the benchmark's and the reference's layout); ``entities`` is used when present.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.contracts import ENTITY, check_unique_columns, iter_batches
from pipeline.errors import InputError, reading

REQUIRED = {"doc_id": pa.int64(), "sent_id": pa.int32(), "text": pa.string()}


@dataclass
class DocumentBatch:
    doc_ids: np.ndarray  # int64, one per document, in file order
    sentence_doc: np.ndarray  # int64 batch-local document index of each sentence
    sent_ids: pa.Array  # int32
    texts: pa.Array  # string
    entities: pa.Array | None  # list<ENTITY>, or None when the input has none

    @property
    def n_docs(self) -> int:
        return len(self.doc_ids)


def _columns(path: Path, want_entities: bool) -> list[str]:
    if Path(path).is_dir():
        raise InputError(path, "is a directory, expected a Parquet file")
    try:
        with reading(path):
            schema = pq.read_schema(path)
    except InputError as exc:
        raise InputError(path, f"not a readable Parquet file: {exc.message}") from exc
    check_unique_columns(path, schema)
    for name, kind in REQUIRED.items():
        if name not in schema.names:
            raise InputError(path, f"missing column {name!r} (the ngrams stage reads doc_id, sent_id, text)")
        found = schema.field(name).type
        if not (
            found.equals(kind)
            or (kind != pa.string() and pa.types.is_integer(found))
            or (kind == pa.string() and pa.types.is_large_string(found))
        ):
            raise InputError(path, f"column {name!r} has type {found}, expected {kind}")
    columns = list(REQUIRED)
    if want_entities and "entities" in schema.names:
        if not schema.field("entities").type.equals(pa.list_(ENTITY)):
            raise InputError(
                path, f"column 'entities' has type {schema.field('entities').type}, expected {pa.list_(ENTITY)}"
            )
        columns.append("entities")
    return columns


def read(path: Path, batch_chars: int = 2_000_000, want_entities: bool = True) -> Iterator[DocumentBatch]:
    """Batches of whole documents of about ``batch_chars`` characters of text (one long document
    makes a batch of its own)."""
    columns = _columns(path, want_entities)
    seen: set[int] = set()
    pending: list[pa.RecordBatch] = []
    pending_chars = 0
    for record in iter_batches(path, columns, 8192):
        if record.column(2).null_count or record.column(0).null_count or record.column(1).null_count:
            raise InputError(path, "null doc_id, sent_id or text")
        record = pa.RecordBatch.from_arrays(
            [_cast(path, record, name, kind) for name, kind in REQUIRED.items()] + record.columns[3:],
            names=columns,
        )
        pending.append(record)
        pending_chars += pc.sum(pc.utf8_length(record.column(2))).as_py() or 0
        if pending_chars < batch_chars:
            continue
        table = pa.Table.from_batches(pending)
        doc = table.column("doc_id").to_numpy()
        # hold the last document back: its sentences may go on in the next record batch
        others = np.flatnonzero(doc != doc[-1])
        if len(others) == 0:
            continue  # one long document so far: it becomes a batch of its own when it ends
        cut = int(others[-1]) + 1
        yield _batch(path, table.slice(0, cut), seen)
        rest = table.slice(cut)
        pending, pending_chars = rest.to_batches(), pc.sum(pc.utf8_length(rest.column("text"))).as_py() or 0
    if pending and sum(len(b) for b in pending):
        yield _batch(path, pa.Table.from_batches(pending), seen)


def _cast(path: Path, record: pa.RecordBatch, name: str, kind: pa.DataType) -> pa.Array:
    """Column ``name`` as ``kind``; a value out of its range is bad input, not a corrupt file."""
    try:
        return record.column(name).cast(kind)
    except (pa.ArrowInvalid, OverflowError):
        raise InputError(path, f"column {name!r} holds a value out of range for {kind}") from None


def _check_sent_ids(path: Path, doc_ids: np.ndarray, sentence_doc: np.ndarray, sent_ids: np.ndarray) -> None:
    """No sentence of a document has a negative ``sent_id`` or one that another of its sentences has."""
    negative = np.flatnonzero(sent_ids < 0)
    if len(negative):
        first = int(negative[0])
        raise InputError(
            path,
            "negative sent_id (sentences count from 0)",
            where=f"document {int(doc_ids[sentence_doc[first]])}, sentence {int(sent_ids[first])}",
        )
    order = np.lexsort((sent_ids, sentence_doc))
    same = (sentence_doc[order][1:] == sentence_doc[order][:-1]) & (sent_ids[order][1:] == sent_ids[order][:-1])
    if same.any():
        first = int(order[1:][same].min())  # the first repeat in file order
        raise InputError(
            path,
            "duplicate sent_id: two sentences of the document have the same number",
            where=f"document {int(doc_ids[sentence_doc[first]])}, sentence {int(sent_ids[first])}",
        )


def _batch(path: Path, table: pa.Table, seen: set[int]) -> DocumentBatch:
    table = table.combine_chunks()
    doc = table.column("doc_id").to_numpy()
    change = np.flatnonzero(doc[1:] != doc[:-1]) + 1
    doc_starts = np.concatenate([[0], change]) if len(doc) else np.zeros(0, dtype=np.int64)
    doc_ids = doc[doc_starts]
    if len(set(doc_ids.tolist())) != len(doc_ids) or seen.intersection(doc_ids.tolist()):
        again = next(d for d in doc_ids.tolist() if d in seen or (doc_ids == d).sum() > 1)
        raise InputError(
            path,
            f"the sentences of document {again} are not contiguous (sort the file by doc_id, keeping sentence order)",
        )
    seen.update(doc_ids.tolist())
    sentence_doc = np.repeat(np.arange(len(doc_ids)), np.diff(np.append(doc_starts, len(doc))))
    _check_sent_ids(path, doc_ids, sentence_doc, table.column("sent_id").to_numpy())
    entities = table.column("entities").chunk(0) if "entities" in table.column_names else None
    return DocumentBatch(
        doc_ids, sentence_doc, table.column("sent_id").chunk(0), table.column("text").chunk(0), entities
    )
