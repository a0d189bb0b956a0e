"""Rows of one paper table from metrics files and published numbers, then the printed grid.

The one place where a spec (:mod:`pipeline.report.spec`) becomes rows: :func:`run_rows` fills the run rows
from the files of the table's task and of its merged tasks (one merge rule for every table), :func:`add_gain`
fills the Gain column (one rule, whether the base row is named by ``--gain-over`` or by the spec) and
:func:`published_rows` adds the papers' rows. A :class:`Table` holds numbers (in the paper's units) and
where each row came from; a :class:`Grid` holds the strings a writer prints: the paper's decimals, "+" on
signed rows, ``None`` for an empty cell. The display grid follows the paper's layout (column groups,
joined cells such as "29.6/58.9/67.1"); the flat grid, for CSV, has one column per number.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from pipeline.errors import InputError
from pipeline.report.metrics_files import MetricsFile
from pipeline.report.published import PublishedRow
from pipeline.report.spec import TableSpec

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
    """The run rows of a table: one per (model, pooling, facet), from the files of every task of the table.

    The table's own task goes first, then each merged task in the spec's order, each task's files in the
    order given. A file's cells go to the row of its model, pooling and facet (a file of no pooling from a task
    of ``spec.every_pooling``: to each of its model's rows of that facet): the first file of a row starts it
    (its trace names the task where it is a merged one); a later file fills the cells it has numbers for and
    is listed under the trace's ``merged``, with its task, columns and seeds. Then ``row_order`` sorts the
    rows and ``finish`` fills what is computed from a row's merged cells."""
    rows: list[Row] = []
    by_key: dict[tuple, Row] = {}
    for task, cells_of in spec.sources:
        seen: dict[tuple, MetricsFile] = {}
        for item in metrics:
            if item.task != task:
                continue
            for facet, cells in cells_of(item):
                key = (item.model["name"], item.model["pooling"], facet)
                if key in seen:
                    what = "a row" if task == spec.task else f"{task} numbers"
                    raise InputError(
                        item.path,
                        f"table {spec.name!r} already has {what} for model {key[0]!r}, pooling {key[1]!r}"
                        + (f", {facet}" if facet else "")
                        + f" from {seen[key].path}; give the runs distinct names (--name)",
                    )
                seen[key] = item
                scaled = {
                    column: _to_paper_units(value, spec.column(column).metric_scale) for column, value in cells.items()
                }
                targets = [by_key[key]] if key in by_key else []
                if task in spec.every_pooling and key[1] is None:
                    targets = [row for (name, _, at), row in by_key.items() if (name, at) == (key[0], facet)]
                if not targets:
                    trace = item.trace() if task == spec.task else {**item.trace(), "task": task}
                    row = by_key[key] = Row(
                        key[0], key[1], facet, {**dict.fromkeys(c.key for c in spec.columns), **scaled}, trace=trace
                    )
                    rows.append(row)
                for row in targets:
                    row.cells.update({column: value for column, value in scaled.items() if value is not None})
                    row.trace.setdefault("merged", []).append({"task": task, "columns": sorted(cells), **item.trace()})
    if spec.row_order is not None:
        rows.sort(key=lambda row: spec.row_order(row.facet))
    if spec.finish is not None:
        for row in rows:
            spec.finish(row.cells)
    return rows


def _to_paper_units(value: float | None, scale: float) -> float | None:
    # in decimal, so that 87.15 % becomes 0.8715 and not 0.8714999...
    if value is None or scale == 1:
        return value
    return float(Decimal(repr(value)) * Decimal(repr(scale)))


def add_gain(spec: TableSpec, rows: list[Row], gain_over: str | None) -> None:
    """Fill the Gain column (:class:`~pipeline.report.spec.Gain`): each run row's difference to its base row
    of the same facet, the row of the model ``gain_over`` names or, without it, the one ``spec.gain.base``
    names for the row's model (the first such row)."""
    gain = spec.gain
    if gain is None:
        return
    if gain_over is not None:
        base_of = lambda label: gain_over
    elif gain.base is not None:
        base_of = gain.base
    else:
        return
    first: dict[tuple, Row] = {}
    for row in rows:
        first.setdefault((row.label, row.facet), row)
    if gain_over is not None and rows and not any(label == gain_over for label, _ in first):
        log.warning("%s: no run named %r to compute the Gain column against", spec.name, gain_over)

    def filled(row: Row) -> set[str]:
        return {key for key, value in row.cells.items() if key != gain.column and value is not None}

    for row in rows:
        base = first.get((base_of(row.label), row.facet))
        if base is None or base is row or None in (row.cells[gain.of], base.cells[gain.of]):
            continue
        if not gain.same_columns or filled(row) == filled(base):
            row.cells[gain.column] = row.cells[gain.of] - base.cells[gain.of]


def row_notes(table: Table) -> list[str]:
    """The notes shown under the table, "row label: note": a published row's (published.yaml), and
    those a run's metrics carry (``notes``: e.g. a substitute data set), once each."""
    notes = []
    for row in table.rows:
        source = row.trace.get("published")
        if source and source.get("note"):
            notes.append(f"{row.label}: {source['note']}")  # the label names the paper and table
        for trace in [row.trace, *row.trace.get("merged", [])]:
            notes += [f"{row.label}: {note}" for note in trace.get("notes", [])]
    return list(dict.fromkeys(notes))


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
        list(spec.notes) + row_notes(table),
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
    return Grid(spec.title, headers, groups, numeric, body, list(spec.notes) + row_notes(table))
