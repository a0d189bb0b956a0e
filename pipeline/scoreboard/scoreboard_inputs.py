"""The scoreboard's inputs, read as untrusted (docs/behaviour.md; docs/stages/report.md "The scoreboard"):
the claims (claims.yaml), the run's tables (tables.json) and its config (a JSON file). Anything malformed
stops the stage with one line naming the file and the field; numbers must be numbers (not booleans),
finite, and standard deviations not negative. Run templates are matched by plain string operations, and
a claim's ``x`` is a glob, so that no label can make the matcher backtrack.
"""

from __future__ import annotations

import json
import math
import string
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from pipeline.errors import InputError, reading
from pipeline.report.table_specs import TABLES
from pipeline.small_files import MIB, read_small_text

CLAIMS = Path(__file__).with_name("claims.yaml")
SPECS = {spec.name: spec for spec in TABLES}
REHEARSAL_SUFFIX = "-rehearsal"  # pipeline/rehearsal/rehearsal.py names a rehearsal's run <paper run>-rehearsal
SUFFIX_CHARACTERS = frozenset(string.ascii_letters + string.digits + "_-")  # an experiment suffix: ".packed"


def _kind(value) -> str:
    return "null" if value is None else type(value).__name__


def _load_json(path: Path, what: str):
    """A JSON file's value; one :class:`InputError` naming ``path`` for anything that is not JSON."""
    text = read_small_text(path, 64 * MIB, what)  # a regular file (never a FIFO), bounded, UTF-8
    try:
        return json.loads(text)
    except RecursionError:
        raise InputError(path, f"not {what}: JSON nested too deeply") from None
    except ValueError as exc:  # json.JSONDecodeError, and ints beyond Python's digit limit
        raise InputError(path, f"not {what}: {exc}") from None


def _finite(value) -> bool:
    """A real number: not a boolean (JSON's true is not 1), not NaN or infinite."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


# ----------------------------------------------------------------------------------------- claims
@dataclass(frozen=True)
class Template:
    """A run template ``PREFIX{x}MIDDLE[{s}SUFFIX]`` (claims.yaml): matched by plain string operations, in
    time linear in the label's length, so that no label can make the matcher backtrack."""

    prefix: str
    middle: str
    has_suffix: bool
    suffix: str

    @classmethod
    def parse(cls, text: str) -> Template:
        if text.count("{x}") != 1:
            raise ValueError("needs exactly one {x}")
        prefix, rest = text.split("{x}")
        if "{s}" in prefix or rest.count("{s}") > 1:
            raise ValueError("takes at most one {s}, after {x}")
        middle, suffix = rest.split("{s}") if "{s}" in rest else (rest, "")
        if any(brace in part for part in (prefix, middle, suffix) for brace in "{}"):
            raise ValueError("knows only the placeholders {x} and {s}")
        return cls(prefix, middle, "{s}" in rest, suffix)

    def match(self, label: str) -> tuple[str, str] | None:
        """(x, s) where ``label`` fits, the shortest x (the longest experiment suffix s); else None."""
        if len(label) < len(self.prefix) + len(self.suffix) or not (
            label.startswith(self.prefix) and label.endswith(self.suffix)
        ):
            return None
        core = label[len(self.prefix) : len(label) - len(self.suffix)]
        candidates = []
        if self.has_suffix:
            dot = core.rfind(".")
            if dot >= 0 and len(core) > dot + 1 and set(core[dot + 1 :]) <= SUFFIX_CHARACTERS:
                candidates.append((core[:dot], core[dot:]))
        candidates.append((core, ""))
        for rest, suffix in candidates:
            if len(rest) > len(self.middle) and rest.endswith(self.middle):
                return rest[: len(rest) - len(self.middle)], suffix
        return None

    def fill(self, x: str, s: str) -> str:
        return self.prefix + x + self.middle + (s if self.has_suffix else "") + self.suffix


def glob_match(pattern: str, text: str) -> bool:
    """``pattern``, where ``*`` stands for any text, fits all of ``text`` (case-insensitive). The pieces
    between stars are found left to right with ``str.find``: linear, nothing to backtrack."""
    pattern, text = pattern.casefold(), text.casefold()
    pieces = pattern.split("*")
    if len(pieces) == 1:
        return text == pattern
    first, *middle, last = pieces
    if len(text) < len(first) + len(last) or not (text.startswith(first) and text.endswith(last)):
        return False
    position, end = len(first), len(text) - len(last)
    for piece in middle:
        found = text.find(piece, position, end)
        if found < 0:
            return False
        position = found + len(piece)
    return True


class ClaimsReader:
    """Checks one claims file field by field; every refusal names the claim and the field."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, where: str, message: str):
        raise InputError(self.path, f"{where}: {message}")

    def text(self, node: dict, key: str, where: str, required: bool = True) -> str | None:
        value = node.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value.strip():
            self.fail(f"{where}.{key}", f"expected text, found {_kind(value)}")
        return value

    def mapping(self, node: dict, key: str, where: str, required: bool = True) -> dict | None:
        value = node.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, dict):
            self.fail(f"{where}.{key}", f"expected a mapping, found {_kind(value)}")
        return value

    def count(self, node: dict, key: str, where: str, low: int, high: int) -> int | None:
        value = node.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            self.fail(f"{where}.{key}", f"expected a whole number from {low} to {high}, found {value!r:.40}")
        return value

    def columns(self, node: dict, key: str, where: str, known: set[str]) -> list[str]:
        value = node.get(key)
        if not isinstance(value, list) or not value or not all(isinstance(c, str) for c in value):
            self.fail(f"{where}.{key}", f"expected a non-empty list of column names, found {_kind(value)}")
        unknown = [c for c in value if c not in known]
        if unknown:
            self.fail(f"{where}.{key}", f"no column {unknown[0]!r:.60} in this table")
        if len(set(value)) != len(value):
            self.fail(f"{where}.{key}", "a column is named twice")
        return list(value)

    def side(self, claim: dict, name: str, where: str, known: set[str]) -> dict:
        where = f"{where}.{name}"
        side = self.mapping(claim, name, where.rsplit(".", 1)[0])
        run = self.text(side, "run", where)
        try:
            template = Template.parse(run)
        except ValueError as exc:
            self.fail(f"{where}.run", f"a run template {exc}")
        x = self.text(side, "x", where, required=False)
        paper = self.mapping(side, "paper", where)
        ref = {
            "source": self.text(paper, "source", f"{where}.paper"),
            "row": self.text(paper, "row", f"{where}.paper"),
            "nth": self.count(paper, "nth", f"{where}.paper", 1, 1000) or 1,
        }
        corrected = self.mapping(paper, "corrected", f"{where}.paper", required=False) or {}
        for column, number in corrected.items():
            if column not in known or not _finite(number):
                self.fail(f"{where}.paper.corrected", f"expected column: number, found {column!r:.40}: {number!r:.40}")
        return {"run": run, "template": template, "x": x, "paper": ref, "corrected": dict(corrected)}

    def claim(self, claim, index: int) -> dict:
        where = f"claims[{index}]"
        if not isinstance(claim, dict):
            self.fail(where, f"expected a mapping, found {_kind(claim)}")
        identity = self.text(claim, "id", where)
        where = f"claim {identity!r:.60}"
        record = {key: self.text(claim, key, where) for key in ("paper", "where", "quote", "table")}
        spec = SPECS.get(record["table"])
        if spec is None:
            self.fail(f"{where}.table", f"no table {record['table']!r:.60}")
        known = {c.key for c in spec.columns}
        if ("column" in claim) == ("columns" in claim):
            self.fail(where, "needs either column or columns")
        columns = self.columns(claim, "columns", where, known) if "columns" in claim else None
        if columns is None:
            columns = [self.text(claim, "column", where)]
            if columns[0] not in known:
                self.fail(f"{where}.column", f"no column {columns[0]!r:.60} in table {record['table']}")
        at_least = self.count(claim, "at_least", where, 1, len(columns)) or len(columns)
        fallback = self.mapping(claim, "fallback", where, required=False)
        if fallback is not None:
            fallback = {
                "columns": self.columns(fallback, "columns", f"{where}.fallback", known),
                "why": self.text(fallback, "why", f"{where}.fallback"),
            }
        sides = {name: self.side(claim, name, where, known) for name in ("higher", "lower")}
        return {
            "id": identity,
            **record,
            "columns": columns,
            "at_least": at_least,
            "fallback": fallback,
            "pooling": self.text(claim, "pooling", where, required=False),
            "facet": self.text(claim, "facet", where, required=False),
            "derived": self.text(claim, "derived", where, required=False),
            "beyond": self.text(claim, "beyond", where, required=False),
            **sides,
        }


@cache
def load_claims(path: Path = CLAIMS) -> list[dict]:
    """The claims, checked: each names a table and columns that exist and two sides with a run template."""
    with reading(path):
        text = Path(path).read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text)
    except RecursionError:
        raise InputError(path, "not a claims file: nested too deeply") from None
    except yaml.YAMLError as exc:
        raise InputError(path, f"cannot read the claims: {' '.join(str(exc).split())}") from None
    claims = data.get("claims") if isinstance(data, dict) else None
    if not isinstance(claims, list) or not claims:
        raise InputError(path, "expected a non-empty list under 'claims'")
    reader = ClaimsReader(path)
    checked = [reader.claim(claim, index) for index, claim in enumerate(claims)]
    seen = set()
    for claim in checked:
        if claim["id"] in seen:
            raise InputError(path, f"claim {claim['id']!r:.60}: id given twice")
        seen.add(claim["id"])
    return checked


# ----------------------------------------------------------------------------------------- tables
def _check_row(path: Path, where: str, row) -> None:
    if not isinstance(row, dict):
        raise InputError(path, f"{where}: expected an object, found {_kind(row)}")
    if not isinstance(row.get("label"), str):
        raise InputError(path, f"{where}.label: expected text, found {_kind(row.get('label'))}")
    for key in ("pooling", "facet"):
        if row.get(key) is not None and not isinstance(row[key], str):
            raise InputError(path, f"{where}.{key}: expected text or null, found {_kind(row[key])}")
    cells = row.get("cells")
    if not isinstance(cells, dict):
        raise InputError(path, f"{where}.cells: expected an object, found {_kind(cells)}")
    for key, number in cells.items():
        if number is None:
            continue
        if not _finite(number):
            raise InputError(path, f"{where}.cells.{key:.60}: expected a finite number or null, found {number!r:.40}")
        if key.endswith("_std") and number < 0:
            raise InputError(path, f"{where}.cells.{key:.60}: a standard deviation cannot be negative ({number!r})")
    source = row.get("source")
    if source is not None and not isinstance(source, dict):
        raise InputError(path, f"{where}.source: expected an object, found {_kind(source)}")
    _check_seed(path, f"{where}.source", source or {})
    # the files merged into the row (pipeline/report/assemble.py): the seeds of the columns each filled
    merged = (source or {}).get("merged")
    if merged is not None and not isinstance(merged, list):
        raise InputError(path, f"{where}.source.merged: expected a list, found {_kind(merged)}")
    for index, entry in enumerate(merged or []):
        at = f"{where}.source.merged[{index}]"
        if not isinstance(entry, dict):
            raise InputError(path, f"{at}: expected an object, found {_kind(entry)}")
        columns = entry.get("columns")
        if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
            raise InputError(path, f"{at}.columns: expected a list of column names, found {_kind(columns)}")
        _check_seed(path, at, entry)


def _check_seed(path: Path, where: str, source: dict) -> None:
    seed = source.get("seed")
    seeds = seed if isinstance(seed, list) else [seed]
    if seed is not None and not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        raise InputError(path, f"{where}.seed: expected a seed or a list of seeds, found {seed!r:.40}")


def read_tables(path: Path) -> dict:
    """tables.json's tables the claims can read: name -> {rows}, each row checked (label, pooling, facet,
    numbers that are numbers, standard deviations that are not negative, seeds)."""
    data = _load_json(path, "a tables index")
    if not isinstance(data, dict) or not isinstance(data.get("tables"), dict):
        raise InputError(path, "not a tables index: no 'tables' object")
    tables = {}
    for name, table in data["tables"].items():
        if name not in SPECS:
            continue  # a table this code does not know: no claim reads it
        where = f"tables.{name}"
        if not isinstance(table, dict) or not isinstance(table.get("rows"), list):
            raise InputError(path, f"{where}.rows: expected a list of rows")
        for index, row in enumerate(table["rows"]):
            _check_row(path, f"{where}.rows[{index}]", row)
        tables[name] = table
    return tables


# ----------------------------------------------------------------------------------------- config
def read_config(path: Path) -> dict:
    """The run's config (a JSON file the workflow writes), checked against the config schema as the
    workflow checks it, so that the plan is made only from a config the workflow would run."""
    from snakemake.exceptions import WorkflowError

    from pipeline.workflow_config import ConfigError, against_schema

    config = _load_json(path, "a config")
    if not isinstance(config, dict):
        raise InputError(path, f"not a config: expected a JSON object, found {_kind(config)}")
    try:
        against_schema(config)
    except (ConfigError, ValueError, WorkflowError) as exc:  # WorkflowError: a schema miss, from validate
        raise InputError(path, " ".join(str(exc).split())[:300]) from None
    return config


def is_rehearsal(config: dict) -> bool:
    """A rehearsal's config (pipeline/rehearsal/rehearsal.py runs ``<paper run>-rehearsal``)."""
    return str(config.get("run", "")).endswith(REHEARSAL_SUFFIX)


def plan_labels(plan_rows: list[dict]) -> dict[tuple[str, str, int], str]:
    """(source, row name, nth row of that name) -> the run label the plan maps it to, planned rows only."""
    mapped, count = {}, {}
    for record in plan_rows:
        key = (record.get("source"), record.get("row"))
        count[key] = count.get(key, 0) + 1
        if record.get("status") == "planned" and record.get("label"):
            mapped[(*key, count[key])] = record["label"]
    return mapped


def plan_rows(config: dict, path: Path | str = "config") -> list[dict]:
    """The plan's records for ``config`` (the GPU-hours are not used here)."""
    from pipeline.budget import cost
    from pipeline.plan import plan

    try:
        return plan.Planner(config, "h100", cost.DEFAULT_MFU).records()
    except (KeyError, TypeError, AttributeError, ValueError) as exc:  # a config the schema let through
        raise InputError(path, f"cannot make the plan of this config: {type(exc).__name__}: {exc}"[:300]) from None
