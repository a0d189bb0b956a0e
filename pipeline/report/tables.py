"""Stage ``tables``: metrics JSONs → the papers' result tables (docs/method.md §5.6 "Tables").

This module owns the stage's command line and its output files; the tables and their order are the
registry's (:mod:`pipeline.report.table_specs`), their rows are :mod:`pipeline.report.assemble`'s.

One file set per paper table: universal analogy (ULR-BERT Table 2 / BURT Table VIII /
ALBURT Table 4) and its PPR / PNR (ALBURT Table 6), sentence similarity (BURT twin Table 2),
phrase and word similarity (twin Table 3: word sets, PPDB, SemEval-2013 5(a), SCWS, merged from their
tasks' files), sentence similarity in SentEval's protocol (twin Table 2 with the transfer harness's
trained STS-B / SICK-R regression), GEOGRANNO retrieval (ULR-BERT Tables 4, 8 and 9)
and FAQ retrieval (BURT Table X). Each table is written as ``DIR/<table>.md``, ``.csv``,
``.tex`` and ``.html`` (the page ``snakemake --report`` shows), with the paper's columns,
headers and decimals.

Rows: one per (model name, pooling) of the metrics files, in the order the files are given
(GEOGRANNO tables: one per split, "all" = train + dev first; FAQ: one per data set, then their
average), then the papers' published rows, labelled "published: <paper row name> (<paper>,
<table>)", unless --no-published. Every table is always written, so a workflow knows its outputs before the run: a table no metrics
file feeds holds the published rows only. Empty cells print as "–" ("--" in LaTeX, empty in
CSV). ``DIR/tables.json`` indexes every row: the metrics file, run config, seed, checkpoint
and code version that made it, or the paper and table it was copied from.

Bad input (a missing file, an unknown task, a missing key, two runs with the same name and
pooling) stops the stage naming the file and the key. The output appears all at once or not
at all, even when the stage is killed: the files are written into a hidden folder beside ``--out``,
which then takes its place in one step (:class:`pipeline.atomic.AtomicFolder`); an ``--out`` holding
any file the stage does not write, hidden or not (a ``.notes`` beside an earlier set, a ``.git/``), is
refused untouched (docs/behaviour.md, "Outputs are never someone else's files").
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from pipeline import provenance
from pipeline.atomic import AtomicFolder, json_text
from pipeline.output_guard import refuse_inputs
from pipeline.report import assemble, metrics_files, published, render
from pipeline.report.table_specs import TABLE_NAMES, TABLES

log = logging.getLogger("pipeline.tables")

FORMATS = ("md", "csv", "tex", "html")
INDEX = "tables.json"


def output_names() -> list[str]:
    """Every file the stage writes into ``--out``: the workflow's declared outputs (workflow/rules/report.smk)."""
    return [f"{name}.{fmt}" for name in TABLE_NAMES for fmt in FORMATS] + [INDEX]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--metrics", nargs="*", default=[], type=Path, help="metrics JSONs of `evaluate`, in row order")
    parser.add_argument("--out", required=True, type=Path, help="output directory")
    parser.add_argument("--no-published", action="store_true", help="leave out the papers' published rows")
    parser.add_argument(
        "--gain-over",
        metavar="MODEL_NAME",
        help="fill the analogy table's Gain column with each run's difference to this model's row",
    )
    parser.add_argument("--published-file", type=Path, default=published.PUBLISHED, help=argparse.SUPPRESS)


def build_tables(
    metrics: list[metrics_files.MetricsFile],
    with_published: bool = True,
    gain_over: str | None = None,
    published_file: Path = published.PUBLISHED,
) -> list[assemble.Table]:
    tables = []
    for spec in TABLES:
        rows = assemble.run_rows(spec, metrics)
        assemble.add_gain(spec, rows, gain_over)
        if with_published:
            rows += assemble.published_rows(published.rows_for(spec, published_file))
        tables.append(assemble.Table(spec, rows))
    return tables


def render_files(table: assemble.Table) -> dict[str, str]:
    display = assemble.display_grid(table)
    return {
        "md": render.to_markdown(display),
        "csv": render.to_csv(assemble.flat_grid(table)),
        "tex": render.to_latex(display, table.spec.name),
        "html": render.to_html(display),
    }


def index(tables: list[assemble.Table], metrics: list[metrics_files.MetricsFile], params: dict) -> dict:
    """tables.json: per table its files and, row by row, where the numbers came from."""
    inputs = [provenance.file_fingerprint(item.path) for item in metrics]
    return {
        "provenance": provenance.make("tables", params, inputs=inputs),
        "metrics": [
            {
                "path": provenance.portable_path(item.path),
                "task": item.task,
                "model": item.model,
                "provenance": item.provenance,
            }
            for item in metrics
        ],
        "tables": {
            table.spec.name: {
                "title": table.spec.title,
                "task": table.spec.task,
                "merged_tasks": [task for task, _ in table.spec.merged],
                "files": {fmt: f"{table.spec.name}.{fmt}" for fmt in FORMATS},
                "columns": [{"key": c.key, "header": f"{c.group} {c.header}".strip()} for c in table.spec.columns],
                "rows": [
                    {
                        "label": row.label,
                        "pooling": row.pooling,
                        "facet": row.facet,
                        "cells": row.cells,
                        "source": row.trace,
                    }
                    for row in table.rows
                ],
            }
            for table in tables
        },
    }


def run(args: argparse.Namespace) -> None:
    # the folder is replaced whole: never one that holds a metrics JSON it reads (a tables.json given as
    # --metrics, the one name of its own the folder may hold) or the published rows
    refuse_inputs(args.out, files=[*args.metrics, args.published_file])
    metrics = [metrics_files.load(path) for path in args.metrics]
    tables = build_tables(metrics, not args.no_published, args.gain_over, args.published_file)
    params = {
        "metrics": [provenance.portable_path(p) for p in args.metrics],
        "published": not args.no_published,
        "gain_over": args.gain_over,
        "tables": list(TABLE_NAMES),
    }
    # the whole set appears at once: written into a hidden folder beside --out, swapped in when complete
    with AtomicFolder(args.out, output_names()) as folder:
        for table in tables:
            for fmt, text in render_files(table).items():
                (folder / f"{table.spec.name}.{fmt}").write_text(text, encoding="utf-8")
        (folder / INDEX).write_text(json_text(index(tables, metrics, params)), encoding="utf-8")
    for table in tables:
        runs = sum(1 for row in table.rows if "metrics_file" in row.trace)
        log.info("%s: %d run rows, %d published rows", table.spec.name, runs, len(table.rows) - runs)
    log.info("wrote %d tables to %s", len(tables), args.out)
