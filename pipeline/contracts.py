"""The data contracts between stages: one fixed Parquet schema per stage output.

This module is the single place where the schemas are defined, with their descriptions;
readers and writers of every stage go through :func:`open_writer` / :func:`read_table`, which
check them. The table in docs/design.md "Data contracts" is rendered from :data:`CONTRACTS` by
:func:`markdown` (``python -m pipeline.contracts --write docs/design.md`` rewrites it;
tests/test_contracts_doc.py fails when the page and this module differ).

Offsets are half-open ``[start, end)`` Python string indices (Unicode code points) unless a
schema says otherwise.
"""

from __future__ import annotations

import argparse
import json
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import InputError, reading

PROVENANCE_KEY = b"pipeline.provenance"


@dataclass(frozen=True)
class Contract:
    """One stage output: its schema and what its rows and columns mean (rendered by :func:`markdown`)."""

    name: str
    schema: pa.Schema
    written_by: str
    row: str  # what one row is
    columns: dict[str, str]  # column → a short note, for the columns that need one
    notes: str  # the details a reader of the files needs


CONTRACTS: dict[str, Contract] = {}


def _contract(name: str, schema: pa.Schema, *, written_by: str, row: str, columns: dict[str, str], notes: str):
    """Register ``schema`` as the contract of the output ``name`` and return it."""
    unknown = set(columns) - set(schema.names)
    assert not unknown, f"{name}: notes for columns the schema lacks: {sorted(unknown)}"
    CONTRACTS[name] = Contract(name, schema, written_by, row, columns, " ".join(notes.split()))
    return schema


ENTITY = pa.struct([("start", pa.int32()), ("end", pa.int32()), ("target", pa.string())])

DOCS = _contract(
    "docs",
    pa.schema(
        [
            pa.field("doc_id", pa.int64(), nullable=False),
            pa.field("title", pa.string(), nullable=False),
            pa.field("text", pa.string(), nullable=False),
            pa.field("entities", pa.list_(ENTITY), nullable=False),
        ]
    ),
    written_by="`extract` (`merge-slices` for a sliced part), then `convert` (zh)",
    row="article",
    columns={
        "doc_id": "MediaWiki page id, unique in the corpus",
        "text": "paragraphs and headings, one per line",
        "entities": "link surfaces, character offsets",
    },
    notes="""`text` holds the article's paragraphs and headings, one per line (`\\n` marks every
    boundary); `entities` are the internal links' surface spans in `text`, with the linked
    article's title as `target`.""",
)

SENTENCES = _contract(
    "sentences",
    pa.schema(
        [
            pa.field("doc_id", pa.int64(), nullable=False),
            pa.field("sent_id", pa.int32(), nullable=False),
            pa.field("text", pa.string(), nullable=False),
            pa.field("entities", pa.list_(ENTITY), nullable=False),
        ]
    ),
    written_by="`clean`",
    row="clean sentence",
    columns={"text": "cleaned", "entities": "link surfaces, character offsets"},
    notes="""`sent_id` counts the document's kept sentences from 0 in reading order; `entities`
    are the link spans remapped into the cleaned sentence (links destroyed by cleaning, or
    crossing a sentence boundary, are dropped and counted in the stage's stats).""",
)

SPAN = pa.struct(
    [
        ("start", pa.int32()),
        ("end", pa.int32()),
        ("n", pa.int8()),
        ("pmi", pa.float64()),
        ("source", pa.string()),
    ]
)

NGRAMS = _contract(
    "ngrams",
    pa.schema(
        [
            pa.field("doc_id", pa.int64(), nullable=False),
            pa.field("ngram", pa.string(), nullable=False),
            pa.field("n", pa.int8(), nullable=False),
            pa.field("count", pa.int32(), nullable=False),
            pa.field("pmi", pa.float64()),
            pa.field("rank", pa.int32(), nullable=False),
            pa.field("source", pa.string(), nullable=False),
        ]
    ),
    written_by="`ngrams` (one vocabulary per `--preset`: `ulr`, `burt`)",
    row="kept n-gram of a document",
    columns={
        "count": "in the document",
        "pmi": "null where an entity span has no document PMI",
        "rank": "1 = best in the document",
        "source": "`pmi` / `entity` / `corpus`",
    },
    notes="""`source` is `pmi` (document-level PMI), `entity` (an extracted link surface) or
    `corpus` (corpus-level PMI from the KenLM statistics, `--mode corpus`).""",
)

MARKED = _contract(
    "marked",
    pa.schema(
        [
            pa.field("doc_id", pa.int64(), nullable=False),
            pa.field("sent_id", pa.int32(), nullable=False),
            pa.field("text", pa.string(), nullable=False),
            pa.field("spans", pa.list_(SPAN), nullable=False),
        ]
    ),
    written_by="`ngrams`; `sample` (the pre-training sample; per preset, the same sentences)",
    row="sentence",
    columns={"spans": "word offsets in English, character offsets in Chinese"},
    notes="""Sentences with their matched n-gram spans (greedy longest match, docs/method.md §2).
    Span offsets count words (whitespace tokens) in English and characters in Chinese.""",
)

SAMPLED = pa.field("sampled", pa.bool_(), nullable=False)

MARKED_PAIRS = _contract(
    "marked pairs",
    pa.schema([*MARKED, SAMPLED]),
    written_by="`sample --with-next` (the NSP / SOP sample)",
    row="sentence",
    columns={"sampled": "false: present only as a sampled sentence's next sentence"},
    notes="""The `marked` columns, plus `sampled`: true for the M sampled sentences (the same set as
    without `--with-next`), false for a sentence written only because it follows a sampled one
    (same `doc_id`, `sent_id` + 1). NSP and SOP (ULR-BERT §7.1) pair every sampled sentence with
    its next sentence, so they see as many examples as the single-sentence objectives.""",
)

TOKEN_SPAN = pa.struct([("start", pa.int32()), ("end", pa.int32())])

TOKENS = _contract(
    "tokens",
    pa.schema(
        [
            pa.field("doc_id", pa.int64(), nullable=False),
            pa.field("sent_id", pa.int32(), nullable=False),
            pa.field("input_ids", pa.list_(pa.int32()), nullable=False),
            pa.field("word_ids", pa.list_(pa.int32()), nullable=False),
            pa.field("ngram_spans", pa.list_(TOKEN_SPAN), nullable=False),
            pa.field("entity_spans", pa.list_(TOKEN_SPAN), nullable=False),
        ]
    ),
    written_by="`tokenize` (one dataset per n-gram preset and backbone)",
    row="marked sentence of the sample",
    columns={
        "input_ids": "with the tokenizer's special tokens",
        "ngram_spans": "token offsets, `[CLS]` counted",
        "entity_spans": "token offsets, `[CLS]` counted",
    },
    notes="""`input_ids` is the whole model input, special tokens included (`[CLS] … [SEP]`), cut
    at `--max-length`. `word_ids` gives, per token, the index of the n-gram unit it belongs to
    (the whitespace word in English, the character in Chinese; -1 for special tokens). Span
    offsets are half-open `[start, end)` indices into `input_ids` (so `[CLS]` counts):
    `ngram_spans` hold the marked n-grams (by default every source: pmi, corpus and entity),
    `entity_spans` the entity spans only. The metadata's provenance names the tokenizer and the
    SHA-256 of its vocabulary.""",
)


TOKENS_PAIRS = _contract(
    "tokens pairs",
    pa.schema([*TOKENS, SAMPLED]),
    written_by="`tokenize` of a `marked pairs` sample",
    row="marked sentence of the NSP / SOP sample",
    columns={"sampled": "as in `marked pairs`"},
    notes="""The `tokens` columns, plus `marked pairs`' `sampled`, carried through: NSP and SOP take
    the sampled rows as first sentences and the others only as their next sentences.""",
)

BEGIN_MARKER = "<!-- contracts:begin"
END_MARKER = "<!-- contracts:end -->"
REGENERATE = "python -m pipeline.contracts --write docs/design.md"


def _type(arrow_type: pa.DataType) -> str:
    """An Arrow type as the table prints it: ``list<{start int32, end int32}>``."""
    if pa.types.is_list(arrow_type):
        return f"list<{_type(arrow_type.value_type)}>"
    if pa.types.is_struct(arrow_type):
        return "{" + ", ".join(f"{field.name} {_type(field.type)}" for field in arrow_type) + "}"
    return str(arrow_type)


def _column(contract: Contract, field: pa.Field) -> str:
    note = contract.columns.get(field.name)
    nullable = "nullable" if field.nullable else ""
    extra = "; ".join(part for part in (nullable, note) if part)
    return f"`{field.name}` {_type(field.type)}" + (f" ({extra})" if extra else "")


def markdown() -> str:
    """The contract table of docs/design.md (between the markers), rendered from :data:`CONTRACTS`."""
    lines = ["| output | written by | one row per | columns (Arrow types) |", "|---|---|---|---|"]
    for contract in CONTRACTS.values():
        columns = ", ".join(_column(contract, field) for field in contract.schema)
        lines.append(f"| {contract.name} | {contract.written_by} | {contract.row} | {columns} |")
    lines.append("")
    for contract in CONTRACTS.values():
        lines += textwrap.wrap(f"- **{contract.name}**: {contract.notes}", width=100, subsequent_indent="  ")
    return "\n".join(lines) + "\n"


def _marked_block(text: str) -> re.Match | None:
    return re.search(
        rf"({re.escape(BEGIN_MARKER)}[^\n]*\n)(.*?)(^{re.escape(END_MARKER)})", text, re.DOTALL | re.MULTILINE
    )


def documented(text: str) -> str | None:
    """The text between the contract markers of a page, or None where the page has no markers."""
    found = _marked_block(text)
    return found.group(2) if found else None


def with_table(text: str) -> str:
    """``text`` with the block between its contract markers replaced by :func:`markdown`."""
    found = _marked_block(text)
    if found is None:
        raise ValueError(f"no {BEGIN_MARKER} … {END_MARKER} block")
    return text[: found.start(2)] + markdown() + text[found.end(2) :]


def _metadata(provenance: dict | None) -> dict[bytes, bytes] | None:
    if provenance is None:
        return None
    return {PROVENANCE_KEY: json.dumps(provenance, sort_keys=True).encode()}


def open_writer(path, schema: pa.Schema, provenance: dict | None = None) -> pq.ParquetWriter:
    """A Parquet writer for ``schema`` with the run's provenance in the file metadata."""
    return pq.ParquetWriter(
        str(path),
        schema.with_metadata(_metadata(provenance)),
        compression="zstd",
        write_statistics=["doc_id"],
    )


def write_table(path, table: pa.Table, schema: pa.Schema, provenance: dict | None = None) -> None:
    with open_writer(path, schema, provenance) as writer:
        writer.write_table(table.cast(schema.with_metadata(_metadata(provenance))))


def check_unique_columns(path, found: pa.Schema) -> None:
    """Refuse a file that names a column twice: Arrow would pick one of them silently, or fail looking it up."""
    repeated = sorted({name for name in found.names if found.names.count(name) > 1})
    if repeated:
        raise InputError(
            path, f"column {repeated[0]!r} appears {found.names.count(repeated[0])} times (each must be unique)"
        )


def check_schema(path, schema: pa.Schema, columns: list[str] | None = None) -> None:
    """Fail with a message naming the file unless it has the contract's columns (each once) and types, and
    no nulls where the contract allows none (a column the file declares nullable is checked
    against its row groups' null counts, or refused where the file has no statistics for it)."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file not found")
    if path.is_dir():
        raise InputError(path, "is a directory, expected a Parquet file")
    try:
        with reading(path):
            metadata = pq.ParquetFile(path).metadata
            found = metadata.schema.to_arrow_schema()
    except InputError as exc:
        raise InputError(path, f"not a readable Parquet file: {exc.message}") from exc
    check_unique_columns(path, found)
    for name in columns or schema.names:
        expected = schema.field(name).type
        if name not in found.names:
            raise InputError(path, f"missing column {name!r} (this stage reads {columns or schema.names})")
        if not found.field(name).type.equals(expected):
            raise InputError(path, f"column {name!r} has type {found.field(name).type}, expected {expected}")
        if not schema.field(name).nullable and found.field(name).nullable:
            _check_no_nulls(path, metadata, name)


def sampled_variant(paths, plain: pa.Schema, with_sampled: pa.Schema) -> pa.Schema:
    """``with_sampled`` where every file carries ``sampled`` (a ``sample --with-next`` output and what is
    made from it, the NSP / SOP data), ``plain`` where none does; every file is checked against it. A
    mix is refused: its sentence pairs would be neither."""
    paths = [Path(path) for path in paths]
    for path in paths:
        check_schema(path, plain)
    pairs = ["sampled" in pq.read_schema(path).names for path in paths]
    if any(pairs) and not all(pairs):
        raise InputError(paths[pairs.index(False)], "a file without column 'sampled' among --with-next ones")
    if not any(pairs):
        return plain
    for path in paths:
        check_schema(path, with_sampled)
    return with_sampled


def _check_no_nulls(path: Path, metadata: pq.FileMetaData, name: str) -> None:
    index = metadata.schema.names.index(name) if name in metadata.schema.names else None
    for group in range(metadata.num_row_groups):
        if index is None:  # a nested column: its leaves are not one physical column
            raise InputError(path, f"column {name!r} is nullable in the file but may not hold nulls here")
        stats = metadata.row_group(group).column(index).statistics
        if stats is None or not stats.has_null_count:
            raise InputError(
                path,
                f"column {name!r} is nullable in the file and its null count is unknown "
                "(this stage allows no nulls in it)",
            )
        if stats.null_count:
            raise InputError(
                path, f"column {name!r} holds {stats.null_count} null(s) (row group {group}); this stage allows none"
            )


def read_table(path, schema: pa.Schema, columns: list[str] | None = None) -> pa.Table:
    """Read a stage output, checking that it carries the contract's columns and types."""
    check_schema(path, schema, columns)
    with reading(path):
        return pq.read_table(path, columns=columns or schema.names)


def num_rows(path) -> int:
    """Rows of a Parquet file, from its footer."""
    with reading(path):
        return pq.ParquetFile(path).metadata.num_rows


def iter_batches(path, columns: list[str] | None = None, batch_rows: int = 65_536):
    """Record batches of a Parquet file, one row group at a time; a corrupt page fails with an error
    naming the file.

    Memory is bounded by the largest row group, whatever the file's size: Arrow's reader over the
    whole file reads ahead across row groups, which made ``clean``'s peak grow with its shard
    (1.07 GB on a 13M-word shard, 0.24 GB read a row group at a time; BENCHMARKS "Scaling").
    Every writer of the pipeline cuts its row groups by size (``extract --batch-docs/--batch-chars``,
    the per-batch writes of the shard stages). A row group never spans two batches either way."""
    with reading(path):
        parquet = pq.ParquetFile(path)
        for group in range(parquet.num_row_groups):
            yield from parquet.iter_batches(batch_size=batch_rows, row_groups=[group], columns=columns)


def iter_rows(path, schema: pa.Schema, columns: list[str] | None = None, batch_rows: int = 2048):
    """Row dicts of a stage output, a batch at a time, so memory does not grow with the file."""
    check_schema(path, schema, columns)
    for batch in iter_batches(path, columns or schema.names, batch_rows):
        yield batch.to_pylist()


def read_provenance(path) -> dict:
    metadata = pq.read_schema(path).metadata or {}
    raw = metadata.get(PROVENANCE_KEY)
    return json.loads(raw) if raw else {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.contracts", description="Print the data-contract table of docs/design.md."
    )
    parser.add_argument("--write", type=Path, metavar="PAGE", help="rewrite the table between PAGE's contract markers")
    args = parser.parse_args(argv)
    if args.write is None:
        print(markdown(), end="")
    else:
        args.write.write_text(with_table(args.write.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
