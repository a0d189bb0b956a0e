"""Checks of a docs Parquet file beyond its contract's schema, before a corpus stage reads it.

:func:`pipeline.contracts.check_schema` checks the columns, their types and the nulls of
top-level columns; ``convert`` and ``clean`` also need every entity inside the ``entities``
lists to be whole (no null entity, no null ``start``, ``end`` or ``target``), and no column
name may appear twice (Arrow cannot tell the two apart). Bad input is one line naming the
file, the column and the row (docs/behaviour.md).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from pipeline import contracts
from pipeline.errors import InputError


def _first_broken_entity(entities: pa.ListArray) -> tuple[int, str] | None:
    """``(row, what)`` of the first entity in ``entities`` that is null or has a null field."""
    flat = entities.flatten()
    problems = [(flat.is_null(), "a null entity")]
    problems += [(flat.field(name).is_null(), f"an entity with a null {name!r}") for name in ("start", "end", "target")]
    first = None
    for mask, what in problems:
        if mask.null_count == len(mask) or not pc.any(mask).as_py():
            continue
        at = pc.index(mask, True).as_py()
        if first is None or at < first[0]:
            first = (at, what)
    if first is None:
        return None
    return pc.list_parent_indices(entities)[first[0]].as_py(), first[1]


def _first_bad_offsets(entities: pa.ListArray, text: pa.Array) -> tuple[int, str] | None:
    """``(row, what)`` of the first entity whose span is not ``0 <= start <= end <= len(text)``."""
    flat = entities.flatten()
    if not len(flat):
        return None
    lengths = pc.take(pc.utf8_length(text), pc.list_parent_indices(entities))
    start, end = flat.field("start"), flat.field("end")
    bad = pc.or_(pc.or_(pc.less(start, 0), pc.less(end, start)), pc.greater(end, lengths))
    if not pc.any(bad).as_py():
        return None
    at = pc.index(bad, True).as_py()
    what = (
        f"an entity span [{start[at].as_py()}, {end[at].as_py()}) outside its text of {lengths[at].as_py()} characters"
    )
    return pc.list_parent_indices(entities)[at].as_py(), what


def check_docs(path, offsets: bool = False) -> None:
    """The docs contract (unique column names included) and whole entities in ``path``; with ``offsets``,
    also every entity's span inside its document's text (``convert`` maps them)."""
    path = Path(path)
    contracts.check_schema(path, contracts.DOCS)
    row = 0
    for batch in contracts.iter_batches(path, ["doc_id", "entities", *(["text"] if offsets else [])]):
        entities = batch.column(1)
        broken = _first_broken_entity(entities)
        if entities.null_count:
            broken = (pc.index(entities.is_null(), True).as_py(), "a null list")
        if broken is None and offsets:
            broken = _first_bad_offsets(entities, batch.column(2))
        if broken is not None:
            at, what = broken
            doc_id = batch.column(0)[at].as_py()
            raise InputError(path, f"column 'entities' holds {what}", f"row {row + at}, doc_id {doc_id}")
        row += batch.num_rows
