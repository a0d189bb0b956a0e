"""The scoreboard's numbers and tests: one model's value in a table, Welch's test across seeds, the sign
rule where there is no seed spread, and how several columns or pairs combine into one verdict
(docs/stages/report.md "The scoreboard")."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

ALPHA = 0.05  # each direction, one-sided: the claims are directional
POWER = 0.80


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


def is_ours(row: dict) -> bool:
    return not row["label"].startswith("published: ")


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
        preferred = [f for f in facets if f is None or re.match(r"(?i)(all|average|avg)\b", f)]
        facet = (preferred or facets)[0]
    return next(row for row in rows if row.get("facet") == facet)


def row_of(table: dict, label: str, pooling: str | None = None, facet: str | None = None) -> dict | None:
    """The table row that stands for one model (see :func:`_pick`)."""
    return _pick([r for r in table["rows"] if is_ours(r) and r["label"] == label], pooling, facet)


def value(table: dict, label: str, column: str, pooling: str | None = None, facet: str | None = None):
    row = row_of(table, label, pooling, facet)
    if row is None:
        return None
    mean = row["cells"].get(column)
    if mean is None:
        return None
    std = row["cells"].get(f"{column}_std")
    n = _seed_count(row)
    std = float(std) if std is not None and n >= 2 else None
    return Value(label, row.get("pooling"), row.get("facet"), float(mean), std, n)


def mean_value(values: list[Value]) -> Value:
    """The mean of one model's columns, as one number without a seed spread (the columns' seeds are not
    paired here)."""
    first = values[0]
    return Value(
        first.label,
        first.pooling,
        first.facet,
        sum(v.mean for v in values) / len(values),
        None,
        min(v.n for v in values),
    )


# -------------------------------------------------------------------------------------- statistics
def welch(high: Value, low: Value) -> dict:
    """Welch's one-sided tests of high > low and of high < low, and the smallest difference detectable at
    80% power."""
    from scipy import stats

    se = math.sqrt(high.std**2 / high.n + low.std**2 / low.n)
    if se == 0:
        return {"test": "none: no spread between seeds", "p": None, "p_reversed": None, "detectable": None}
    df = se**4 / ((high.std**2 / high.n) ** 2 / (high.n - 1) + (low.std**2 / low.n) ** 2 / (low.n - 1))
    tests = {
        side: stats.ttest_ind_from_stats(
            high.mean, high.std, high.n, low.mean, low.std, low.n, equal_var=False, alternative=side
        ).pvalue
        for side in ("greater", "less")
    }
    detectable = (stats.t.ppf(1 - ALPHA, df) + stats.t.ppf(POWER, df)) * se
    return {
        "test": f"Welch's t-test, one-sided each way, α = {ALPHA} ({high.n} and {low.n} seeds)",
        "p": float(tests["greater"]),
        "p_reversed": float(tests["less"]),
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
    """One column: holds / reversed where Welch's test across seeds finds the difference in that direction,
    inconclusive where it finds neither; without a seed spread, the sign at the table's printed decimals."""
    difference = high.mean - low.mean
    if high.std is not None and low.std is not None and high.n >= 2 and low.n >= 2:
        test = welch(high, low)
        if test["p"] is not None:
            found = "holds" if test["p"] < ALPHA else "reversed" if test["p_reversed"] < ALPHA else "inconclusive"
            return {"verdict": found, "difference": difference, **test}
    resolution = 10.0**-decimals
    rounded = round(difference, decimals)
    return {
        "verdict": "holds" if rounded > 0 else "reversed" if rounded < 0 else "inconclusive",
        "difference": difference,
        "test": (
            f"none: n = {min(high.n, low.n)} without a seed spread; the sign at the table's {resolution:g}, "
            "which tells no effect from noise"
        ),
        "p": None,
        "p_reversed": None,
        "detectable": resolution,
    }


def with_bootstrap(result: dict, test: dict) -> dict:
    """A column's verdict from the paired bootstrap over items, in place of the sign rule."""
    found = "holds" if test["p"] < ALPHA else "reversed" if test["p_reversed"] < ALPHA else "inconclusive"
    return {**result, **test, "verdict": found, "detectable": None}


def combine(verdicts: list[str], at_least: int) -> str:
    """A claim over several columns (or pairs): holds where at least ``at_least`` hold; reversed where so many
    are reversed that ``at_least`` can no longer hold; inconclusive otherwise."""
    if verdicts.count("holds") >= at_least:
        return "holds"
    if verdicts.count("reversed") > len(verdicts) - at_least:
        return "reversed"
    return "inconclusive"
