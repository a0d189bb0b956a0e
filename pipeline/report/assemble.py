"""Rows of one paper table from metrics files and published numbers, then the printed grid.

A :class:`Table` holds numbers (in the paper's units) and where each row came from; a
:class:`Grid` holds the strings a writer prints: the paper's decimals, "+" on signed rows,
``None`` for an empty cell. The display grid follows the paper's layout (column groups,
joined cells such as "29.6/58.9/67.1"); the flat grid, for CSV, has one column per number.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from pipeline.errors import InputError
from pipeline.report.metrics_files import MetricsFile
from pipeline.report.published import PublishedRow
from pipeline.report.table_specs import TableSpec

log = logging.getLogger("pipeline.tables")


@dataclass
class Row:
    label: str  # the model name of a run, "published: ..." for a paper's row
    pooling: str | None
    facet: str | None
    cells: dict[str, float | None]
    signed: bool = False
    trace: dict = field(default_factory=dict)  # metrics file and run, or the paper and table


@dataclass
class Table:
    spec: TableSpec
    rows: list[Row]


@dataclass
class Grid:
    title: str
    headers: list[str]
    groups: list[str]  # one per column ("" where none); adjacent equal groups span
    numeric: list[bool]
    rows: list[list[str | None]]
    notes: list[str]


def run_rows(spec: TableSpec, metrics: list[MetricsFile]) -> list[Row]:
    """One row per (model, pooling[, facet]) of the files of the table's task, in the order given.

    A table with ``extra_tasks`` fills one row from the files of several tasks (same model, pooling
    and facet); its trace lists every file. ``row_order`` then sorts the rows by facet."""
    rows: list[Row] = []
    seen: dict[tuple, MetricsFile] = {}
    by_key: dict[tuple, Row] = {}
    for item in metrics:
        if item.task != spec.task and item.task not in spec.extra_tasks:
            continue
        for facet, cells in spec.cells(item):
            key = (item.model["name"], item.model["pooling"], facet)
            if (*key, item.task) in seen:
                raise InputError(
                    item.path,
                    f"table {spec.name!r} already has a row for model "
                    f"{key[0]!r}, pooling {key[1]!r}"
                    + (f", {facet}" if facet else "")
                    + f" from {seen[(*key, item.task)].path}; give the runs distinct names (--name)",
                )
            seen[(*key, item.task)] = item
            scaled = {
                column: _to_paper_units(value, spec.column(column).metric_scale) for column, value in cells.items()
            }
            if key in by_key:  # another task's file of the same row
                by_key[key].cells.update({column: value for column, value in scaled.items() if value is not None})
                by_key[key].trace.setdefault("more", []).append(item.trace())
                continue
            row = Row(
                item.model["name"],
                item.model["pooling"],
                facet,
                {**dict.fromkeys(c.key for c in spec.columns), **scaled},
                trace=item.trace(),
            )
            by_key[key] = row
            rows.append(row)
    if spec.row_order is not None:
        rows.sort(key=lambda row: spec.row_order(row.facet))
    return merge_rows(spec, rows, metrics)


def merge_rows(spec: TableSpec, rows: list[Row], metrics: list[MetricsFile]) -> list[Row]:
    """Add the cells of the spec's other tasks to the row of the same (model, pooling), or to a new
    row where the model has no file of the main task; each row's trace lists the merged files."""
    if not spec.merged:
        return rows
    by_key = {(row.label, row.pooling): row for row in rows if row.facet is None}
    for task, cells_of in spec.merged:
        seen: dict[tuple, MetricsFile] = {}
        for item in metrics:
            if item.task != task:
                continue
            key = (item.model["name"], item.model["pooling"])
            if key in seen:
                raise InputError(
                    item.path,
                    f"table {spec.name!r} already has {task} numbers for model {key[0]!r}, "
                    f"pooling {key[1]!r} from {seen[key].path}; give the runs distinct names",
                )
            seen[key] = item
            cells = cells_of(item)
            row = by_key.get(key)
            if row is None:  # the first file of this model names the row, as a main-task file does
                row = by_key[key] = Row(
                    key[0],
                    key[1],
                    None,
                    dict.fromkeys(c.key for c in spec.columns),
                    trace={**item.trace(), "task": task},
                )
                rows.append(row)
            else:
                row.trace.setdefault("merged", []).append({"task": task, "columns": sorted(cells), **item.trace()})
            row.cells.update(
                {column: _to_paper_units(value, spec.column(column).metric_scale) for column, value in cells.items()}
            )
    if spec.finish is not None:
        for row in rows:
            spec.finish(row.cells)
    return rows


def _to_paper_units(value: float | None, scale: float) -> float | None:
    # in decimal, so that 87.15 % becomes 0.8715 and not 0.8714999...
    if value is None or scale == 1:
        return value
    return float(Decimal(repr(value)) * Decimal(repr(scale)))


def add_gain(spec: TableSpec, rows: list[Row], baseline: str | None) -> None:
    """Fill the Gain column: each run row's difference to the ``baseline`` model's row (same facet)."""
    if spec.gain is None:
        return
    if baseline is None:
        if spec.gain_base is not None:
            _add_gain_per_row(spec, rows)
        return
    gain_key, of_key = spec.gain
    bases = {}
    for row in rows:
        if row.label == baseline:
            bases.setdefault(row.facet, row)
    if rows and not bases:
        log.warning("%s: no run named %r to compute the Gain column against", spec.name, baseline)
    for row in rows:
        base = bases.get(row.facet)
        if base is not None and row is not base and None not in (row.cells[of_key], base.cells[of_key]):
            row.cells[gain_key] = row.cells[of_key] - base.cells[of_key]


def _add_gain_per_row(spec: TableSpec, rows: list[Row]) -> None:
    """Each run row's difference to the row that ``spec.gain_base`` names for it (same facet), where
    both filled the same columns (an average over other tasks is not comparable)."""
    gain_key, of_key = spec.gain
    by_label = {(row.label, row.facet): row for row in rows}

    def filled(row):
        return {key for key, value in row.cells.items() if key != gain_key and value is not None}

    for row in rows:
        base = by_label.get((spec.gain_base(row.label), row.facet))
        if base is not None and row.cells[of_key] is not None and filled(row) == filled(base):
            row.cells[gain_key] = row.cells[of_key] - base.cells[of_key]


def published_notes(table: Table) -> list[str]:
    """The notes of the table's published rows (published.yaml), shown under the table: "row label: note"."""
    notes = []
    for row in table.rows:
        source = row.trace.get("published")
        if source and source.get("note"):
            notes.append(f"{row.label}: {source['note']}")  # the label names the paper and table
    return notes


def published_rows(rows: list[PublishedRow]) -> list[Row]:
    return [
        Row(row.label, row.pooling, row.facet, dict(row.cells), row.signed, trace={"published": row.source})
        for row in rows
    ]


def format_number(value: float | None, decimals: int, signed: bool = False) -> str | None:
    """Round half up on the number's shortest decimal form (36.25 → "36.3", as a reader rounds),
    not on its binary value; never "-0.0"; "+" on signed rows."""
    if value is None:
        return None
    rounded = Decimal(repr(value)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    if rounded == 0:
        rounded = abs(rounded)
    return f"{rounded:+f}" if signed and rounded != 0 else f"{rounded:f}"


def _leading(table: Table) -> tuple[list[str], list[str]]:
    headers = ["Model", "Pooling"] + ([table.spec.facet] if table.spec.facet else [])
    return headers, [""] * len(headers)


def _leading_cells(table: Table, row: Row) -> list[str | None]:
    return [row.label, row.pooling] + ([row.facet] if table.spec.facet else [])


def flat_grid(table: Table) -> Grid:
    """One column per number, headers "Group header" (for CSV)."""
    spec = table.spec
    headers, groups = _leading(table)
    headers += [f"{c.group} {c.header}".strip() for c in spec.columns]
    body = [
        _leading_cells(table, row) + [format_number(row.cells[c.key], c.decimals, row.signed) for c in spec.columns]
        for row in table.rows
    ]
    return Grid(
        spec.title,
        headers,
        groups + [""] * len(spec.columns),
        [False] * len(groups) + [True] * len(spec.columns),
        body,
        list(spec.notes) + published_notes(table),
    )


def display_grid(table: Table) -> Grid:
    """The paper's layout: grouped headers, joined cells."""
    spec = table.spec
    headers, groups = _leading(table)
    numeric = [False] * len(headers)
    joined = {j.keys[0]: j for j in spec.joined}
    hidden = {key for j in spec.joined for key in j.keys[1:]}
    layout = []  # (header, group, keys, separator)
    for column in spec.columns:
        if column.key in hidden:
            continue
        if column.key in joined:
            layout.append((joined[column.key].header, "", joined[column.key].keys, joined[column.key].separator))
        else:
            layout.append((column.header, column.group, (column.key,), ""))
    headers += [header for header, _, _, _ in layout]
    groups += [group for _, group, _, _ in layout]
    numeric += [True] * len(layout)
    body = []
    for row in table.rows:
        cells = _leading_cells(table, row)
        for _, _, keys, separator in layout:
            parts = [format_number(row.cells[key], spec.column(key).decimals, row.signed) for key in keys]
            if joined.get(keys[0]) is not None and joined[keys[0]].optional_tail:
                parts = parts[:1] + [p for p in parts[1:] if p is not None]
            cells.append(None if all(p is None for p in parts) else separator.join(p or "–" for p in parts))
        body.append(cells)
    return Grid(spec.title, headers, groups, numeric, body, list(spec.notes) + published_notes(table))
