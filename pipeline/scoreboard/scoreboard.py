"""Stage ``scoreboard``: how far a run reproduced the papers (docs/stages/report.md "The scoreboard").

Two parts, from the run's tables (``tables.json`` of :mod:`pipeline.report.tables`) and the plan of its
config (:mod:`pipeline.plan.plan`):

* **Published numbers.** Every published number whose row the plan maps to a run of this config: ours
  (mean ± std over seeds, and n), the paper's, Δ, and whether the paper's figure lies inside the 95%
  confidence interval of our seeds' mean (Student's t over n - 1 degrees of freedom), which only n ≥ 2
  seeds with a spread can tell.
* **Claims.** Every comparative claim of ``claims.yaml`` (the papers' words, with their section): the
  two sides as the plan maps them, else by role in this run (which makes a verdict about this run's
  models, "not comparable at this scale"), and a verdict: *holds* (higher, beyond noise), *reversed*
  (lower, beyond noise) or *inconclusive* from a test; *untested* where none can run (counted apart: the
  sign of a difference tells no effect from noise); *not run* where a side is missing. With n ≥ 2
  distinct seeds and a spread on both sides a column is judged by Welch's t-test at α = 2.5% in each
  direction (so that "holds" and "reversed" together err at most 5% on equal models), with the smallest
  difference the run could have detected, (t₀.₉₇₅ + t₀.₈₀) · SE over Welch's degrees of freedom (80%
  power); otherwise by a test over the items both models were scored on, at the same level
  (:mod:`.scoreboard_items`: McNemar, a paired bootstrap over items or pairs, a cluster bootstrap over
  word pairs for analogy, a word pair one cluster at every level). A claim over several columns counts
  the columns that hold: "on all transfer tasks" holds where every column holds at its own 2.5% (an
  intersection–union test), "4 out of 6 tasks" counts columns held on Holm's adjusted p-values, and
  "reversed" is always counted on Holm's; a claim's pairs are one family the same way (every pair must
  hold).
  The seeds are fine-tuning seeds of one pre-training run per model: a verdict about a pre-training
  objective says so. A rehearsal's models are stand-ins, so its scoreboard judges nothing.

Every input is read as untrusted (docs/behaviour.md): a malformed table, config or claim stops the stage
with one line naming the file and the field. Nothing is hidden: a claim whose runs are absent is listed
as *not run* with what is missing. Output: ``DIR/scoreboard.json``, ``.md`` and ``.html`` (the report's
first section), all at once or not at all.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from pipeline import provenance
from pipeline.atomic import AtomicFiles, json_text
from pipeline.output_guard import refuse_read_files
from pipeline.report import published
from pipeline.report.table_specs import TABLES
from pipeline.scoreboard import scoreboard_items, scoreboard_render
from pipeline.scoreboard.scoreboard_inputs import (
    CLAIMS,
    SPECS,
    glob_match,
    is_rehearsal,
    load_claims,
    plan_labels,
    plan_rows,
    read_config,
    read_tables,
)
from pipeline.scoreboard.scoreboard_stats import (
    Value,
    adjust_family,
    combine,
    inside_interval,
    is_ours,
    mean_value,
    repeated_seeds,
    row_of,
    value,
    verdict,
    with_items,
)

__all__ = ["CLAIMS", "VERDICTS", "Value", "build", "load_claims", "plan_labels", "plan_rows", "read_tables"]

log = logging.getLogger("pipeline.scoreboard")

VERDICTS = ("holds", "inconclusive", "reversed", "untested", "not run", "not judged")
TESTED = VERDICTS[:3]  # the verdicts of a test; "untested" is counted apart from them
# the papers whose claims compare pre-training objectives (ULR-BERT's MiSAD, BURT's PMI masking)
OBJECTIVE_PAPERS = ("ulr", "burt")
SEEDS_MEASURE = (
    "the seeds are fine-tuning seeds of one pre-training run per model: they measure fine-tuning noise, "
    "not how the pre-training objective varies between pre-training runs"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tables", required=True, type=Path, help="tables.json of the tables stage")
    parser.add_argument(
        "--config",
        required=True,
        type=Path,
        help="the run's config as the workflow resolved it, a JSON file (the plan is made from it)",
    )
    parser.add_argument("--out", required=True, type=Path, help="output directory")
    parser.add_argument("--claims-file", type=Path, default=CLAIMS, help=argparse.SUPPRESS)


# ---------------------------------------------------------------------------------------- claims
def role_pairs(claim: dict, labels: set[str]) -> list[tuple[str, str]]:
    """(higher label, lower label) pairs of this run that fit the claim's run templates."""
    x_glob = claim["higher"]["x"] or claim["lower"]["x"]
    pairs = []
    for label in sorted(labels):
        found = claim["higher"]["template"].match(label)
        if found is None or (x_glob is not None and not glob_match(x_glob, found[0])):
            continue
        low = claim["lower"]["template"].fill(*found)
        if low in labels and low != label:
            pairs.append((label, low))
    return pairs


def column_value(table: dict, label: str, column: str, pooling: str | None = None, facet: str | None = None):
    """One model's value in one column, its seeds those of the file that filled the column: a merged task's
    own where one did (ULR-BERT Table 8's GLUE dev average, over the fine-tuning seeds, beside a GEOGRANNO
    score evaluated once), else the row's."""
    row = row_of(table, label, pooling, facet)
    if row is None:
        return None
    source = row.get("source") or {}
    filled_by = [merged for merged in source.get("merged") or [] if column in merged.get("columns", [])]
    if filled_by:
        row = {**row, "source": {**source, "seed": filled_by[-1].get("seed")}}
    return value({"rows": [row]}, label, column, pooling, facet)


def paper_value(side: dict, published_rows: dict, column: str) -> float | None:
    """The paper's cell, or its correction where claims.yaml gives one (a misprint noted in published.yaml)."""
    if column in side["corrected"]:
        return side["corrected"][column]
    ref = side["paper"]
    row = published_rows.get((ref["source"], ref["row"], ref["nth"]))
    return None if row is None else row.get(column)


def _paper_comparison(claim: dict, published_rows: dict, columns: list[str]) -> dict:
    """The paper's own difference (one column) or how many of its columns the paper's higher row wins."""
    pairs = [tuple(paper_value(claim[s], published_rows, c) for s in ("higher", "lower")) for c in columns]
    if len(columns) == 1:
        high, low = pairs[0]
        return {"paper_difference": None if None in (high, low) else high - low}
    known = [(h, lo) for h, lo in pairs if None not in (h, lo)]
    return {"paper_difference": None, "paper_columns_higher": f"{sum(h > lo for h, lo in known)} of {len(known)}"}


def _judge_column(claim: dict, table: dict | None, high: Value, low: Value, labels: tuple[str, str], columns) -> dict:
    """One column (or the mean of a fallback's columns): Welch's test across seeds where both sides have a
    spread, else the test over items where both rows' metrics carry per-item outcomes, else untested."""
    result = verdict(high, low)
    if result["verdict"] == "untested" and table is not None:
        rows = [row_of(table, label, claim["pooling"], claim["facet"]) for label in labels]
        if len(columns) == 1:
            test = scoreboard_items.bootstrap(claim["table"], columns[0], *rows)
        else:
            test = scoreboard_items.bootstrap_mean(claim["table"], columns, *rows)
        result = with_items(result, test)
    return result


def judge_pair(claim: dict, table: dict | None, high_label: str, low_label: str) -> dict:
    pooling, facet = claim["pooling"], claim["facet"]
    get = lambda label, column: column_value(table, label, column, pooling, facet) if table else None
    columns = claim["columns"]
    labels = (high_label, low_label)
    if len(columns) == 1 and claim["fallback"] and None in (get(high_label, columns[0]), get(low_label, columns[0])):
        # the claim's own cell needs a column this run has not got: the columns both sides have
        shared = [c for c in claim["fallback"]["columns"] if None not in (get(high_label, c), get(low_label, c))]
        if shared:
            high = mean_value([get(high_label, c) for c in shared])
            low = mean_value([get(low_label, c) for c in shared])
            result = _judge_column(claim, table, high, low, labels, shared)
            judged_on = {"columns": shared, "why": claim["fallback"]["why"]}
            return {"higher": high.as_json(), "lower": low.as_json(), **result, "judged_on": judged_on}
    results = []
    for column in columns:
        high, low = get(high_label, column), get(low_label, column)
        if high is None or low is None:
            missing = [label for label, v in ((high_label, high), (low_label, low)) if v is None]
            results.append({"column": column, "verdict": "not run", "missing": missing})
        else:
            result = _judge_column(claim, table, high, low, labels, [column])
            results.append({"column": column, "higher": high.as_json(), "lower": low.as_json(), **result})
    if len(columns) == 1:
        only = results[0]
        return {key: val for key, val in only.items() if key != "column"} | (
            {"higher": high_label, "lower": low_label} if only["verdict"] == "not run" else {}
        )
    ran = [r for r in results if r["verdict"] != "not run"]
    if len(ran) < len(results):
        # a count over columns is judged only on all of them: "4 out of 6" over 5 would say something else
        missing = sorted({m for r in results for m in r.get("missing", [])})
        return {"higher": high_label, "lower": low_label, "verdict": "not run", "missing": missing, "columns": results}
    # the columns are one family: "all N hold" is an intersection–union test (each column at its own level);
    # "at least k of N" and "reversed" (one reversal of ten refutes "all ten") count on Holm's p-values
    results = adjust_family(results, claim["at_least"])
    found = combine([r["verdict"] for r in results], claim["at_least"])
    return {
        "higher": {"label": high_label},
        "lower": {"label": low_label},
        "verdict": found,
        "columns": results,
        "columns_holding": f"{[r['verdict'] for r in results].count('holds')} of {len(results)}",
    }


def claim_header(claim: dict, published_rows: dict) -> dict:
    """What a claim's record says before its verdict: the quote, its table and columns, the paper's rows and
    the paper's own difference."""
    columns = claim["columns"]
    return {
        "id": claim["id"],
        "paper": claim["paper"],
        "where": claim["where"],
        "quote": claim["quote"],
        "table": claim["table"],
        "column": columns[0] if len(columns) == 1 else None,
        "columns": columns,
        "at_least": claim["at_least"],
        "derived": claim["derived"],
        "paper_rows": [f"{claim[s]['paper']['row']} ({claim[s]['paper']['source']})" for s in ("higher", "lower")],
        **_paper_comparison(claim, published_rows, columns),
    }


def judge_claim(claim: dict, tables: dict, mapped: dict, published_rows: dict) -> dict:
    refs = [tuple(claim[s]["paper"][k] for k in ("source", "row", "nth")) for s in ("higher", "lower")]
    record = claim_header(claim, published_rows)
    table = tables.get(claim["table"])
    labels = {row["label"] for row in table["rows"] if is_ours(row)} if table else set()
    if all(ref in mapped for ref in refs):
        pairs, comparable = [(mapped[refs[0]], mapped[refs[1]])], True
    else:
        pairs, comparable = role_pairs(claim, labels), False
    record["comparable"] = comparable
    # the pairs of one claim are one family too, and every pair must hold: each pair at its own level for
    # "holds", Holm over their p-values for "reversed"
    judged_pairs = [judge_pair(claim, table, high, low) for high, low in pairs]
    record["pairs"] = adjust_family(judged_pairs, sum(1 for pair in judged_pairs if pair["verdict"] != "not run"))
    verdicts = [pair["verdict"] for pair in record["pairs"]]
    judged = [v for v in verdicts if v != "not run"]
    if not judged:
        record["verdict"] = "not run"
        record["why"] = (
            f"runs missing from table {claim['table']}: "
            + ", ".join(sorted({m for p in record["pairs"] for m in p.get("missing", [])}))
            if record["pairs"]
            else f"this config makes no runs of the roles {claim['higher']['run']} / {claim['lower']['run']}"
        )
    else:
        record["verdict"] = combine(judged, len(judged))
        if len(judged) > 1:
            record["why"] = f"holds for {judged.count('holds')} of {len(judged)} pairs of this run"
    fallbacks = [p["judged_on"] for p in record["pairs"] if p.get("judged_on")]
    if fallbacks:
        # the paper's difference on the same columns, so that the two differences stay comparable
        shared = fallbacks[0]["columns"]
        means = []
        for side in ("higher", "lower"):
            cells = [paper_value(claim[side], published_rows, column) for column in shared]
            means.append(None if None in cells else sum(cells) / len(cells))
        record["judged_on"] = {**fallbacks[0], "paper_difference": None if None in means else means[0] - means[1]}
    record["tests"] = tests_used(record["pairs"])
    if claim["paper"] in OBJECTIVE_PAPERS and any(t.startswith("Welch") for t in record["tests"]):
        record["seeds"] = SEEDS_MEASURE  # beside a verdict that used seeds, and only there
    if claim["beyond"]:
        record["beyond"] = claim["beyond"]
    return record


def tests_used(pairs: list[dict]) -> list[str]:
    """The names of the tests behind a claim's verdicts (the part of each test's text before its counts)."""
    texts = [p.get("test") for p in pairs] + [c.get("test") for p in pairs for c in p.get("columns", [])]
    tested = [t.split(" (")[0] for t in texts if t and not t.startswith("none")]
    return sorted(set(tested))


def not_judged(claim: dict, published_rows: dict, why: str) -> dict:
    """A claim listed without a verdict (a rehearsal's stand-in models)."""
    return {
        **claim_header(claim, published_rows),
        "comparable": False,
        "pairs": [],
        "verdict": "not judged",
        "why": why,
    }


# ------------------------------------------------------------------------------- published numbers
def published_index(path: Path = published.PUBLISHED) -> dict[tuple[str, str, int], dict]:
    """(source, row name, nth row of that name) -> the published row's cells, pooling and facet."""
    rows = {}
    for spec in TABLES:
        by_source: dict[str, list] = {}
        for row in published.rows_for(spec, path):  # in the order of the spec's sources and their rows
            by_source.setdefault(row.source["source_id"], []).append(row)
        for source_id, source_rows in by_source.items():
            count: dict[str, int] = {}
            for row in source_rows:
                count[row.name] = count.get(row.name, 0) + 1
                rows.setdefault(
                    (source_id, row.name, count[row.name]), {**row.cells, "_pooling": row.pooling, "_facet": row.facet}
                )
    return rows


def table_of(source_id: str) -> str | None:
    return next((spec.name for spec in TABLES if source_id in spec.published), None)


def published_numbers(tables: dict, mapped: dict, published_rows: dict) -> list[dict]:
    numbers = []
    for (source_id, name, nth), label in mapped.items():
        table_name = table_of(source_id)
        cells = published_rows.get((source_id, name, nth))
        if table_name is None or cells is None:
            continue
        spec = SPECS[table_name]
        table = tables.get(table_name)
        for column in spec.columns:
            paper = cells.get(column.key)
            if paper is None or column.key.endswith("_std"):
                continue
            ours = column_value(table, label, column.key, cells["_pooling"], cells["_facet"]) if table else None
            entry = {
                "table": table_name,
                "source": source_id,
                "row": name,
                "label": label,
                "column": column.key,
                "paper": paper,
                "ours": ours.as_json() if ours else None,
            }
            if ours is None:
                entry["status"] = "not run"
            else:
                entry["delta"] = ours.mean - paper
                entry["within_seed_spread"] = inside_interval(ours, paper)
                entry["status"] = "compared"
            numbers.append(entry)
    return numbers


# ------------------------------------------------------------------------------------------ output
def build(
    tables: dict, config: dict, claims: list[dict], plan_records: list[dict] | None = None, config_path="config"
) -> dict:
    published_rows = published_index()
    rehearsal = is_rehearsal(config)
    if rehearsal:
        why = (
            "a rehearsal: its models are tiny random stand-ins trained for a few steps "
            "(docs/stages/rehearsal.md), so their scores say nothing about the papers' claims"
        )
        judged = [not_judged(claim, published_rows, why) for claim in claims]
        mapped, numbers = {}, []
    else:
        records = plan_records if plan_records is not None else plan_rows(config, config_path)
        mapped = plan_labels(records)
        judged = [judge_claim(claim, tables, mapped, published_rows) for claim in claims]
        numbers = published_numbers(tables, mapped, published_rows)
    counts = {v: sum(1 for c in judged if c["verdict"] == v) for v in VERDICTS}
    repeated = sorted(
        {row["label"] for table in tables.values() for row in table["rows"] if is_ours(row) and repeated_seeds(row)}
    )
    return {
        "run": config.get("run"),
        "rehearsal": rehearsal,
        "seeds": SEEDS_MEASURE,
        "claims": judged,
        "claim_counts": counts,
        "comparable_claims": sum(1 for c in judged if c["comparable"] and c["verdict"] in TESTED),
        "tests": sorted({t for c in judged for t in c.get("tests", [])}),
        "repeated_seeds": repeated,
        "published_numbers": numbers,
        "published_counts": {
            "mapped_rows": len(mapped),
            "compared": sum(1 for n in numbers if n["status"] == "compared"),
            "not_run": sum(1 for n in numbers if n["status"] == "not run"),
            "within_seed_spread": sum(1 for n in numbers if n.get("within_seed_spread") is True),
        },
    }


JSON_FILE, MARKDOWN_FILE, HTML_FILE = "scoreboard.json", "scoreboard.md", "scoreboard.html"  # the files of --out


def run(args: argparse.Namespace) -> None:
    # the workflow's --out holds its inputs (results/RUN/config.json): only its own three names are refused
    inputs = [args.tables, args.config, args.claims_file]
    refuse_read_files([args.out / name for name in (JSON_FILE, MARKDOWN_FILE, HTML_FILE)], inputs, "the scoreboard")
    claims = load_claims(args.claims_file)
    tables = read_tables(args.tables)
    config = read_config(args.config)
    board = build(tables, config, claims, config_path=args.config)
    board["provenance"] = provenance.make(
        "scoreboard",
        {"claims": str(args.claims_file.name)},
        inputs=[provenance.file_fingerprint(args.tables), provenance.file_fingerprint(args.config)],
    )
    with AtomicFiles() as files:
        files.temp(args.out / JSON_FILE).write_text(json_text(board), encoding="utf-8")
        files.temp(args.out / MARKDOWN_FILE).write_text(scoreboard_render.markdown(board), encoding="utf-8")
        files.temp(args.out / HTML_FILE).write_text(scoreboard_render.to_html(board), encoding="utf-8")
    if board["repeated_seeds"]:
        log.info("a seed listed more than once counts once: %s", ", ".join(board["repeated_seeds"]))
    counts = board["claim_counts"]
    log.info(
        "%d claims: %s; %d published numbers compared",
        len(board["claims"]),
        ", ".join(f"{counts[v]} {v}" for v in VERDICTS),
        board["published_counts"]["compared"],
    )
