"""Stage ``scoreboard``: how far a run reproduced the papers (docs/stages/report.md "The scoreboard").

Two parts, from the run's tables (``tables.json`` of :mod:`pipeline.report.tables`) and the plan of its
config (:mod:`pipeline.report.plan`):

* **Published numbers.** Every published number whose row the plan maps to a run of this config: ours
  (mean ± std over seeds, and n), the paper's, Δ, and whether the paper's figure lies inside the 95%
  confidence interval of our seeds' mean (Student's t over n - 1 degrees of freedom), which only n ≥ 2
  seeds with a spread can tell.
* **Claims.** Every comparative claim of ``claims.yaml`` (the papers' words, with their section): the
  two sides as the plan maps them, else by role in this run (which makes a verdict about this run's
  models, "not comparable at this scale"), and a verdict: *holds*, *does not hold* or *not run*.
  With n ≥ 2 seeds and a spread on both sides the verdict is Welch's one-sided t-test at α = 0.05
  (scipy's ``ttest_ind_from_stats``), and the smallest difference the run could have detected is
  (t₀.₉₅ + t₀.₈₀) · SE over Welch's degrees of freedom (80% power); otherwise there is no seed test
  and the verdict is the sign of the difference, resolved to the table's printed decimals.

Nothing is hidden: a claim whose runs are absent is listed as *not run* with what is missing. Output:
``DIR/scoreboard.json``, ``.md`` and ``.html`` (the report's first section), all at once or not at all.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from pipeline import provenance
from pipeline.atomic import AtomicFiles, json_text
from pipeline.errors import InputError
from pipeline.report import published, scoreboard_render
from pipeline.report.table_specs import TABLES

log = logging.getLogger("pipeline.scoreboard")

CLAIMS = Path(__file__).with_name("claims.yaml")
ALPHA = 0.05  # one-sided, the claims are directional
POWER = 0.80
VERDICTS = ("holds", "does not hold", "not run")
SPECS = {spec.name: spec for spec in TABLES}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tables", required=True, type=Path, help="tables.json of the tables stage")
    parser.add_argument(
        "--config-json",
        required=True,
        help="the run's config as the workflow resolved it, as JSON text (the plan is made from it)",
    )
    parser.add_argument("--out", required=True, type=Path, help="output directory")
    parser.add_argument("--claims-file", type=Path, default=CLAIMS, help=argparse.SUPPRESS)


# ----------------------------------------------------------------------------------------- inputs
@cache
def load_claims(path: Path = CLAIMS) -> list[dict]:
    """The claims, checked: each names a table and column that exist and two sides with a run template."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(path, f"cannot read the claims: {exc}") from None
    claims = data.get("claims") if isinstance(data, dict) else None
    if not isinstance(claims, list) or not claims:
        raise InputError(path, "expected a non-empty list under 'claims'")
    seen = set()
    for claim in claims:
        where = claim.get("id") if isinstance(claim, dict) else None
        required = ("id", "paper", "where", "quote", "table", "column", "higher", "lower")
        if not isinstance(claim, dict) or any(key not in claim for key in required):
            raise InputError(path, f"a claim needs {', '.join(required)}", where=where)
        if claim["id"] in seen:
            raise InputError(path, "claim id given twice", where=where)
        seen.add(claim["id"])
        spec = SPECS.get(claim["table"])
        if spec is None or claim["column"] not in {c.key for c in spec.columns}:
            raise InputError(path, f"no column {claim['column']!r} in table {claim['table']!r}", where=where)
        for side in ("higher", "lower"):
            if not isinstance(claim[side].get("run"), str) or not isinstance(claim[side].get("paper"), dict):
                raise InputError(path, f"{side} needs a run template and a paper row", where=where)
            try:
                re.compile(_template(claim[side]["run"], claim[side].get("x")))
            except re.error as exc:
                raise InputError(path, f"{side}.x is not a regular expression: {exc}", where=where) from None
    return claims


def read_tables(path: Path) -> dict:
    """tables.json's tables: name -> {rows, columns}."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(path, f"not a tables index: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("tables"), dict):
        raise InputError(path, "not a tables index: no 'tables' object")
    return data["tables"]


def plan_labels(plan_rows: list[dict]) -> dict[tuple[str, str, int], str]:
    """(source, row name, nth row of that name) -> the run label the plan maps it to, planned rows only."""
    mapped, count = {}, {}
    for record in plan_rows:
        key = (record.get("source"), record.get("row"))
        count[key] = count.get(key, 0) + 1
        if record.get("status") == "planned" and record.get("label"):
            mapped[(*key, count[key])] = record["label"]
    return mapped


def plan_rows(config: dict) -> list[dict]:
    """The plan's records for ``config`` (the GPU-hours are not used here)."""
    from pipeline.report import cost, plan

    return plan.Planner(config, "h100", cost.DEFAULT_MFU).records()


# ------------------------------------------------------------------------------------ our values
@dataclass(frozen=True)
class Value:
    """One number of ours: the mean over seeds, their sample std (None: no spread known), n seeds."""

    label: str
    pooling: str | None
    facet: str | None
    mean: float
    std: float | None
    n: int

    def as_json(self) -> dict:
        return {
            "label": self.label,
            "pooling": self.pooling,
            "facet": self.facet,
            "mean": self.mean,
            "std": self.std,
            "n": self.n,
        }


def _is_ours(row: dict) -> bool:
    return not str(row.get("label", "")).startswith("published: ")


def _seed_count(row: dict) -> int:
    seeds = (row.get("source") or {}).get("seed")
    return len(seeds) if isinstance(seeds, list) and seeds else 1


def _pick(rows: list[dict], pooling: str | None, facet: str | None) -> dict | None:
    """The row of one model: the pooling asked for, else mean, else the first; the facet asked for where the
    model has it, else no facet, else "all" / "average", else the first (GLUE's rows are all "dev")."""
    if pooling is not None:
        rows = [row for row in rows if row.get("pooling") in (pooling, None)]
    elif len({row.get("pooling") for row in rows}) > 1:
        rows = [row for row in rows if row.get("pooling") == "mean"] or rows
    facets = list(dict.fromkeys(row.get("facet") for row in rows))
    if not facets:
        return None
    if facet not in facets:
        preferred = [f for f in facets if f is None or re.match(r"(?i)(all|average|avg)\b", str(f))]
        facet = (preferred or facets)[0]
    return next(row for row in rows if row.get("facet") == facet)


def value(table: dict, label: str, column: str, pooling: str | None = None, facet: str | None = None):
    row = _pick([r for r in table["rows"] if _is_ours(r) and r["label"] == label], pooling, facet)
    if row is None:
        return None
    mean = row["cells"].get(column)
    if not isinstance(mean, int | float) or not math.isfinite(mean):
        return None
    std = row["cells"].get(f"{column}_std")
    n = _seed_count(row)
    std = float(std) if isinstance(std, int | float) and math.isfinite(std) and n >= 2 else None
    return Value(label, row.get("pooling"), row.get("facet"), float(mean), std, n)


# -------------------------------------------------------------------------------------- statistics
def welch(high: Value, low: Value) -> dict:
    """Welch's one-sided test of high > low, and the smallest difference detectable at 80% power."""
    from scipy import stats

    se = math.sqrt(high.std**2 / high.n + low.std**2 / low.n)
    if se == 0:
        return {"test": "none: no spread between seeds", "p": None, "detectable": None}
    df = se**4 / ((high.std**2 / high.n) ** 2 / (high.n - 1) + (low.std**2 / low.n) ** 2 / (low.n - 1))
    result = stats.ttest_ind_from_stats(
        high.mean, high.std, high.n, low.mean, low.std, low.n, equal_var=False, alternative="greater"
    )
    detectable = (stats.t.ppf(1 - ALPHA, df) + stats.t.ppf(POWER, df)) * se
    return {
        "test": f"Welch's t-test, one-sided, α = {ALPHA} ({high.n} and {low.n} seeds)",
        "p": float(result.pvalue),
        "detectable": float(detectable),
    }


def inside_interval(ours: Value, paper: float) -> bool | None:
    """Whether ``paper`` lies in the 95% confidence interval of our mean (None: n < 2 or no spread)."""
    from scipy import stats

    if ours.std is None or ours.n < 2:
        return None
    half = stats.t.ppf(0.975, ours.n - 1) * ours.std / math.sqrt(ours.n)
    return abs(ours.mean - paper) <= half


def verdict(high: Value, low: Value, decimals: int) -> dict:
    difference = high.mean - low.mean
    if high.std is not None and low.std is not None and high.n >= 2 and low.n >= 2:
        test = welch(high, low)
        if test["p"] is not None:
            holds = difference > 0 and test["p"] < ALPHA
            return {"verdict": "holds" if holds else "does not hold", "difference": difference, **test}
    resolution = 10.0**-decimals
    return {
        "verdict": "holds" if round(difference, decimals) > 0 else "does not hold",
        "difference": difference,
        "test": f"none: n = {min(high.n, low.n)} without a seed spread; the sign, at the table's {resolution:g}",
        "p": None,
        "detectable": resolution,
    }


# ---------------------------------------------------------------------------------------- claims
def _template(text: str, x_pattern: str | None) -> str:
    """A run template as a regex: {x} and {s} are named groups, the rest literal."""
    parts = re.split(r"(\{x\}|\{s\})", text)
    regex = ""
    for part in parts:
        if part == "{x}":
            regex += f"(?P<x>{x_pattern or '.+?'})"
        elif part == "{s}":
            regex += r"(?P<s>(?:\.[A-Za-z0-9_-]+)?)"
        else:
            regex += re.escape(part)
    return regex


def role_pairs(claim: dict, labels: set[str]) -> list[tuple[str, str]]:
    """(higher label, lower label) pairs of this run that fit the claim's run templates."""
    x_pattern = claim["higher"].get("x") or claim["lower"].get("x")
    high = re.compile(_template(claim["higher"]["run"], x_pattern))
    pairs = []
    for label in sorted(labels):
        found = high.fullmatch(label)
        if not found:
            continue
        low = claim["lower"]["run"].replace("{x}", found.groupdict().get("x") or "")
        low = low.replace("{s}", found.groupdict().get("s") or "")
        if low in labels and low != label:
            pairs.append((label, low))
    return pairs


def paper_value(claim_side: dict, published_rows: dict, column: str) -> float | None:
    ref = claim_side["paper"]
    row = published_rows.get((ref["source"], ref["row"], ref.get("nth", 1)))
    return None if row is None else row.get(column)


def judge_claim(claim: dict, tables: dict, mapped: dict, published_rows: dict) -> dict:
    spec = SPECS[claim["table"]]
    column = claim["column"]
    decimals = next(c.decimals for c in spec.columns if c.key == column)
    refs = [
        (claim[s]["paper"]["source"], claim[s]["paper"]["row"], claim[s]["paper"].get("nth", 1))
        for s in ("higher", "lower")
    ]
    paper = [paper_value(claim[s], published_rows, column) for s in ("higher", "lower")]
    record = {
        "id": claim["id"],
        "paper": claim["paper"],
        "where": claim["where"],
        "quote": claim["quote"],
        "table": claim["table"],
        "column": column,
        "paper_rows": [f"{ref[1]} ({ref[0]})" for ref in refs],
        "paper_difference": None if None in paper else paper[0] - paper[1],
    }
    table = tables.get(claim["table"])
    labels = {row["label"] for row in table["rows"] if _is_ours(row)} if table else set()
    if all(ref in mapped for ref in refs):
        pairs, comparable = [(mapped[refs[0]], mapped[refs[1]])], True
    else:
        pairs, comparable = role_pairs(claim, labels), False
    record["comparable"] = comparable
    record["pairs"] = []
    pooling, facet = claim.get("pooling"), claim.get("facet")
    for high_label, low_label in pairs:
        high = value(table, high_label, column, pooling, facet) if table else None
        low = value(table, low_label, column, pooling, facet) if table else None
        if high is None or low is None:
            missing = [label for label, v in ((high_label, high), (low_label, low)) if v is None]
            record["pairs"].append({"higher": high_label, "lower": low_label, "verdict": "not run", "missing": missing})
            continue
        record["pairs"].append({"higher": high.as_json(), "lower": low.as_json(), **verdict(high, low, decimals)})
    verdicts = [pair["verdict"] for pair in record["pairs"]]
    if not verdicts or set(verdicts) == {"not run"}:
        record["verdict"] = "not run"
        record["why"] = (
            f"runs missing from table {claim['table']}: "
            + ", ".join(sorted({m for p in record["pairs"] for m in p.get("missing", [])}))
            if record["pairs"]
            else f"this config makes no runs of the roles {claim['higher']['run']} / {claim['lower']['run']}"
        )
    else:
        judged = [v for v in verdicts if v != "not run"]
        record["verdict"] = "holds" if all(v == "holds" for v in judged) else "does not hold"
        if len(judged) > 1:
            record["why"] = f"holds for {judged.count('holds')} of {len(judged)} pairs of this run"
    return record


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
            ours = value(table, label, column.key, cells["_pooling"], cells["_facet"]) if table else None
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
def build(tables: dict, config: dict, claims: list[dict], plan_records: list[dict] | None = None) -> dict:
    records = plan_records if plan_records is not None else plan_rows(config)
    mapped = plan_labels(records)
    published_rows = published_index()
    judged = [judge_claim(claim, tables, mapped, published_rows) for claim in claims]
    counts = {v: sum(1 for c in judged if c["verdict"] == v) for v in VERDICTS}
    numbers = published_numbers(tables, mapped, published_rows)
    return {
        "run": config.get("run"),
        "claims": judged,
        "claim_counts": counts,
        "comparable_claims": sum(1 for c in judged if c["comparable"] and c["verdict"] != "not run"),
        "published_numbers": numbers,
        "published_counts": {
            "mapped_rows": len(mapped),
            "compared": sum(1 for n in numbers if n["status"] == "compared"),
            "not_run": sum(1 for n in numbers if n["status"] == "not run"),
            "within_seed_spread": sum(1 for n in numbers if n.get("within_seed_spread") is True),
        },
    }


def run(args: argparse.Namespace) -> None:
    try:
        config = json.loads(args.config_json)
    except ValueError as exc:
        raise InputError("--config-json", f"not JSON: {exc}") from None
    if not isinstance(config, dict):
        raise InputError("--config-json", "not a JSON object")
    board = build(read_tables(args.tables), config, load_claims(args.claims_file))
    board["provenance"] = provenance.make(
        "scoreboard", {"claims": str(args.claims_file.name)}, inputs=[provenance.file_fingerprint(args.tables)]
    )
    with AtomicFiles() as files:
        files.temp(args.out / "scoreboard.json").write_text(json_text(board), encoding="utf-8")
        files.temp(args.out / "scoreboard.md").write_text(scoreboard_render.markdown(board), encoding="utf-8")
        files.temp(args.out / "scoreboard.html").write_text(scoreboard_render.to_html(board), encoding="utf-8")
    counts = board["claim_counts"]
    log.info(
        "%d claims: %d hold, %d do not hold, %d not run; %d published numbers compared",
        len(board["claims"]),
        counts["holds"],
        counts["does not hold"],
        counts["not run"],
        board["published_counts"]["compared"],
    )
