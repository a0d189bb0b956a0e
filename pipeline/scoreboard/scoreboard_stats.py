"""The scoreboard's numbers and tests: one model's value in a table, Welch's test across seeds, "untested"
where neither seeds nor items can test a difference (the sign of a difference tells no effect from noise),
and how several columns or pairs combine into one verdict (docs/stages/report.md "The scoreboard").

Every verdict is a one-sided test at :data:`ALPHA` = 2.5% in each direction, so that "holds" and "reversed"
together are wrong at most 5% of the time about two equal models. A claim over several columns or pairs
is one family: "holds on all N" is an intersection–union test (Berger 1982), each column at its own 2.5%,
no correction needed; "at least k of N" (k < N) and "reversed" (enough columns reversed that k of N cannot
hold) count columns decided on Holm's adjusted p-values (Holm 1979)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

ALPHA = 0.025  # each direction, one-sided: the claims are directional; both together at most 5%
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


def seed_count(row: dict) -> int:
    """The distinct seeds of a row: one seed listed five times is one run, not five."""
    seeds = (row.get("source") or {}).get("seed")
    return len(set(seeds)) if isinstance(seeds, list) and seeds else 1


def repeated_seeds(row: dict) -> bool:
    seeds = (row.get("source") or {}).get("seed")
    return isinstance(seeds, list) and len(set(seeds)) < len(seeds)


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
    n = seed_count(row)
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
    80% power by the one-sided test at ALPHA, (t_{1-ALPHA} + t_{POWER}) · SE over Welch's degrees of
    freedom (t₀.₉₇₅ + t₀.₈₀ at 2.5%). The variances are scaled by the larger std before they are squared,
    so that a finite std whose square overflows (1e200) is tested like any other."""
    from scipy import stats

    scale = max(high.std, low.std)
    if scale == 0:
        return {"test": "none: no spread between seeds", "p": None, "p_reversed": None, "detectable": None}
    high_var, low_var = (high.std / scale) ** 2 / high.n, (low.std / scale) ** 2 / low.n
    se_scaled = math.sqrt(high_var + low_var)
    df = (high_var + low_var) ** 2 / (high_var**2 / (high.n - 1) + low_var**2 / (low.n - 1))
    # t from the scaled difference: scipy's ttest_ind_from_stats squares the std and overflows at 1e200
    t = ((high.mean / scale) - (low.mean / scale)) / se_scaled
    tests = {"greater": stats.t.sf(t, df), "less": stats.t.cdf(t, df)}
    detectable = (stats.t.ppf(1 - ALPHA, df) + stats.t.ppf(POWER, df)) * se_scaled * scale
    return {
        "test": f"Welch's t-test ({high.n} and {low.n} seeds)",
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


def verdict(high: Value, low: Value) -> dict:
    """One column across seeds: holds / reversed where Welch's test finds the difference in that direction at
    ALPHA (2.5% each way), inconclusive where it finds neither; untested where a side has no seed spread
    (the sign of a difference tells no effect from noise: two equal models would "hold" or be "reversed"
    nine times in ten)."""
    difference = high.mean - low.mean
    if high.std is not None and low.std is not None and high.n >= 2 and low.n >= 2:
        test = welch(high, low)
        if test["p"] is not None:
            return {"verdict": decide(test["p"], test["p_reversed"]), "difference": difference, **test}
        why = "no spread between seeds on either side"
    else:
        why = f"n = {min(high.n, low.n)} without a seed spread"
    return {
        "verdict": "untested",
        "difference": difference,
        "test": f"none: {why}",
        "p": None,
        "p_reversed": None,
        "detectable": None,
    }


def decide(p: float, p_reversed: float, alpha: float = ALPHA) -> str:
    """A one-sided test each way, each at ``alpha``: the two verdicts a test can give, together at 2 · alpha."""
    return "holds" if p < alpha else "reversed" if p_reversed < alpha else "inconclusive"


def with_items(result: dict, test: dict) -> dict:
    """A column's verdict from a test over items (:mod:`.scoreboard_items`) in place of "untested"; the
    result says why where no test over items could run either."""
    if "untested" in test:
        return {**result, "test": f"{result['test']}; {test['untested']}"}
    return {**result, **test, "verdict": decide(test["p"], test["p_reversed"]), "detectable": None}


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values (Holm 1979): the family-wise error stays at α over all of them."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def adjust_family(results: list[dict], at_least: int) -> list[dict]:
    """The tested results of one family (a claim's columns, or its pairs), each verdict decided at ALPHA on
    the p-value its part of the claim needs; untested and not-run results are left as they are.

    * **holds**: where the claim needs all of the family's results (``at_least`` = every one that ran),
      each is judged on its own p, unadjusted: the claim holds only if every one holds, an
      intersection–union test (Berger 1982), whose family-wise error is at most ALPHA with no correction.
      Where it needs at least k of N (k < N), on Holm's adjusted p (``p_holm``): k columns that hold under
      Holm's family-wise control are k true effects, but with probability at most ALPHA.
    * **reversed**: always on Holm's adjusted ``p_reversed`` (``p_reversed_holm``): one reversal of N
      refutes "all N", so N chances to err must share ALPHA.

    Each result records which it got (``adjustment``), so the tables can say it."""
    tested = [i for i, r in enumerate(results) if r.get("p") is not None and r["verdict"] != "not run"]
    ran = sum(1 for r in results if r["verdict"] != "not run")
    if len(tested) < 2:
        return results
    every_one = at_least >= ran
    adjusted = holm([results[i]["p"] for i in tested])
    adjusted_reversed = holm([results[i]["p_reversed"] for i in tested])
    family = len(tested)
    out = list(results)
    for i, p, p_reversed in zip(tested, adjusted, adjusted_reversed):
        result = {**results[i], "p_reversed_holm": p_reversed}
        if every_one:
            result["adjustment"] = (
                f"holds: own p, all {ran} must hold (intersection–union test); reversed: Holm over {family}"
            )
            result["verdict"] = decide(results[i]["p"], p_reversed)
        else:
            result["p_holm"] = p
            result["adjustment"] = f"holds and reversed: Holm over {family} (at least {at_least} of {ran})"
            result["verdict"] = decide(p, p_reversed)
        out[i] = result
    return out


def combine(verdicts: list[str], at_least: int) -> str:
    """A claim over several columns (or pairs): holds where at least ``at_least`` hold; reversed where so many
    are reversed that ``at_least`` can no longer hold; untested where the untested ones could still decide
    it either way; inconclusive otherwise."""
    if verdicts.count("holds") >= at_least:
        return "holds"
    if verdicts.count("reversed") > len(verdicts) - at_least:
        return "reversed"
    untested = verdicts.count("untested")
    if untested and (
        verdicts.count("holds") + untested >= at_least
        or verdicts.count("reversed") + untested > len(verdicts) - at_least
    ):
        return "untested"
    return "inconclusive"
