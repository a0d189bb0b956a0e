"""What a paper table is made of: :class:`TableSpec`, its columns (:class:`Column`, :class:`Joined`) and its
Gain column (:class:`Gain`); docs/method.md §5.6 "Tables".

A spec names the columns in the paper's order with the paper's headers and decimals, the published rows it
shows (ids in ``published.yaml``) and where its run rows come from: the files of its ``task``, then the files
of its ``merged`` tasks, each read by a *cells* function that turns one metrics file into (facet, cells)
pairs. How rows are filled from them is :func:`pipeline.report.assemble.run_rows`; the tables themselves are
in the ``*_tables`` modules and listed in :mod:`pipeline.report.table_specs`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pipeline.report.metrics_files import MetricsFile


@dataclass(frozen=True)
class Column:
    """One numeric column: ``key`` links it to ``published.yaml``; ``metric_scale`` converts
    the metrics' percentages into the paper's unit (FAQ MRR is printed on a 0-1 scale)."""

    key: str
    header: str
    group: str = ""
    decimals: int = 1
    metric_scale: float = 1.0


@dataclass(frozen=True)
class Joined:
    """Columns the paper prints in one cell, e.g. Table 8's "29.6/58.9/67.1" (CSV keeps them apart)."""

    header: str
    keys: tuple[str, ...]
    separator: str = "/"
    optional_tail: bool = False  # print "52.1" rather than "52.1 ± –" where only the first is known


# (facet value or None, {column key: value in metric units or None}) for each row of one file
Cells = list[tuple[str | None, dict[str, float | None]]]
CellsOf = Callable[[MetricsFile], Cells]


@dataclass(frozen=True)
class Gain:
    """The Gain column: a run row's ``of`` minus its base row's ``of`` (the base row has the same facet).

    The base row is the row of the model that ``--gain-over`` names; without it, the row of the model that
    ``base`` names for the row's model (None: the row has no base). With ``same_columns`` a row is compared
    only with a base that filled the same columns, for an ``of`` that averages the columns a run filled."""

    column: str
    of: str
    base: Callable[[str], str | None] | None = None
    same_columns: bool = False


@dataclass(frozen=True)
class TableSpec:
    """One paper table. Run rows: one per (model, pooling, facet) of the files of ``task``; the files of each
    ``merged`` task (read by its own cells function, in the order given) fill the cells they have numbers for
    in the row of the same model, pooling and facet, or start that row where the ``task`` gave none. A merged
    task named in ``every_pooling`` scores the model itself, not one pooling of it (a fine-tuned classifier's
    GLUE average: classify-summary writes pooling null), and fills the model's rows of that facet at every
    pooling. Then ``row_order`` sorts the rows by facet and ``finish`` fills what is computed from a row's
    merged cells (an average over the columns of several tasks)."""

    name: str
    title: str
    task: str
    columns: tuple[Column, ...]
    published: tuple[str, ...]
    cells: CellsOf
    facet: str | None = None
    joined: tuple[Joined, ...] = ()
    gain: Gain | None = None
    notes: tuple[str, ...] = ()
    merged: tuple[tuple[str, CellsOf], ...] = ()
    every_pooling: tuple[str, ...] = ()
    row_order: Callable[[str | None], tuple] | None = None
    finish: Callable[[dict[str, float | None]], None] | None = None

    @property
    def sources(self) -> tuple[tuple[str, CellsOf], ...]:
        """(task, cells function) of every task whose files fill the table, the table's own task first."""
        return ((self.task, self.cells), *self.merged)

    def column(self, key: str) -> Column:
        return next(column for column in self.columns if column.key == key)
