"""The papers' published numbers (``published.yaml``), as rows of the output tables.

The file is checked against the table specs when it is read: every source a table names must
exist, its columns must be columns of that table, and every row must have one value (a number
or null) per column. A mistake in the transcription therefore fails loudly, naming the source
and the row, instead of shifting numbers into the wrong column.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import yaml

from pipeline.errors import InputError
from pipeline.report.spec import TableSpec

PUBLISHED = Path(__file__).with_name("published.yaml")


@dataclass(frozen=True)
class PublishedRow:
    name: str
    cells: dict[str, float | None]
    pooling: str | None
    facet: str | None
    signed: bool
    source: dict  # paper, table, caption, note: where the numbers were read

    @property
    def label(self) -> str:
        return f"published: {self.name} ({self.source['paper']}, {self.source['table']})"


@functools.lru_cache(maxsize=4)
def _load(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(path, f"cannot read the published numbers: {exc}") from exc
    if not isinstance(data, dict) or not {"papers", "sources"} <= data.keys():
        raise InputError(path, "expected top-level keys 'papers' and 'sources'")
    return data


def _row(path: Path, source_id: str, source: dict, paper: dict, spec: TableSpec, index: int, row: dict):
    where = f"{source_id}, row {index + 1}"
    values = row.get("values")
    if not isinstance(row.get("name"), str) or not isinstance(values, list) or not row.get("note"):
        raise InputError(path, "a row needs a name, a list of values and a note", where=where)
    if len(values) != len(source["columns"]):
        raise InputError(path, f"{len(values)} values for {len(source['columns'])} columns", where=where)
    for value in values:
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value)
        ):
            raise InputError(path, f"value {value!r} is not a number or null", where=where)
    cells = dict.fromkeys(column.key for column in spec.columns)
    cells.update(zip(source["columns"], (None if v is None else float(v) for v in values)))
    facet = row.get("split", source.get("split")) or row.get("dataset", source.get("dataset"))
    return PublishedRow(
        name=row["name"],
        cells=cells,
        pooling=row.get("pooling"),
        facet=facet,
        signed=bool(row.get("signed")),
        source={
            "source_id": source_id,
            "paper": paper["short"],
            "paper_file": paper["file"],
            "cite": paper["cite"],
            "table": source["table"],
            "caption": source["caption"],
            "note": row["note"],
        },
    )


def rows_for(spec: TableSpec, path: Path = PUBLISHED) -> list[PublishedRow]:
    """The published rows of one output table, in the order of its sources and of the papers."""
    data = _load(Path(path))
    rows = []
    for source_id in spec.published:
        source = data["sources"].get(source_id)
        if source is None:
            raise InputError(path, f"table {spec.name!r} names source {source_id!r}, which is not in the file")
        paper = data["papers"].get(source.get("paper"))
        if paper is None:
            raise InputError(path, f"unknown paper {source.get('paper')!r}", where=source_id)
        unknown = [key for key in source.get("columns", []) if key not in {c.key for c in spec.columns}]
        if unknown or not source.get("columns"):
            raise InputError(path, f"columns {unknown} are not columns of table {spec.name!r}", where=source_id)
        for index, row in enumerate(source.get("rows") or []):
            rows.append(_row(Path(path), source_id, source, paper, spec, index, row))
    return rows
