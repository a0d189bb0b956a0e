"""How often the scoreboard says "holds" or "reversed" about two EQUAL models (issue 46 §2), before and after.

Each scenario draws two models with the same expected score on realistic item counts many times, and judges
the pair with the rule the scoreboard used before (main) and the test it uses now
(pipeline/scoreboard/scoreboard_items.py, scoreboard_stats.py). Every "holds" or "reversed" is false; a test
at α = 0.05 one-sided each way should give at most ~5% in each direction (~10% in all, fewer for a claim
over several columns under Holm's correction).

* **STS** (twin-sts-over-bert): 1,379 pairs (STS-B test), gold scores uniform on [0, 5], each model's cosine
  = gold + its own noise (same variance). Before: the sign of the Spearman difference at the table's 0.1.
  Now: the paired bootstrap over pairs.
* **Analogy** (burt-analogy-*): capital-common's 506 questions, all ordered pairs of 23 word pairs. A
  question's odds are the sum of its two pairs' difficulty (shared) and of each model's own affinity to
  those pairs (drawn alike for both). Before: the paired bootstrap over questions. Now: the cluster
  bootstrap over word pairs.
* **SNLI** (bf-snli-*): 9,824 test pairs, each with its own difficulty (Beta, mean 0.8), both models right
  independently with that chance. Before: the sign at the table's 0.1. Now: McNemar's exact test.
* **Transfer, all of 10 columns** (bf-transfer-over-max): ten test sets of the SentEval sizes, scored as
  above. Before: the sign per column at 0.1, "reversed" when one column is. Now: McNemar per column, Holm
  over the ten, ``combine`` as the scoreboard does. Beside it, the rule of main where seeds exist (Welch per
  column across 5 seeds, no correction) against Welch with Holm.

Usage (repo root): ``python bench/scoreboard_false_verdicts.py [--sims 200]`` (prints the BENCHMARKS.md table;
~3 minutes on 2 busy cores at 200).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pipeline.scoreboard import scoreboard_bootstrap as items
from pipeline.scoreboard.scoreboard_stats import Value, combine, decide, holm, welch

TRANSFER_SIZES = (10662, 3775, 10000, 10606, 1821, 500, 4927, 4927, 3750, 3750)  # MR ... STS14 (SentEval)


def sign_rule(difference: float, decimals: int = 1) -> str:
    """main's rule without a seed spread: the sign of the difference at the table's printed decimals."""
    rounded = round(difference, decimals)
    return "holds" if rounded > 0 else "reversed" if rounded < 0 else "inconclusive"


def tested(result: dict) -> str:
    return decide(result["p"], result["p_reversed"])


def sts(rng: np.random.Generator) -> tuple[str, str]:
    gold = rng.uniform(0, 5, 1379)
    a, b = gold + rng.normal(0, 2, 1379), gold + rng.normal(0, 2, 1379)
    before = sign_rule(100 * (stats.spearmanr(a, gold).statistic - stats.spearmanr(b, gold).statistic))
    scored = lambda p: [(1.0, items.Scored(gold, p))]
    return before, tested(items.correlation_bootstrap("spearman", scored(a), scored(b)))


QUESTIONS = np.asarray([[i, j] for i in range(23) for j in range(23) if i != j])


def analogy(rng: np.random.Generator) -> tuple[str, str]:
    difficulty = rng.normal(0, 1, 23)

    def model() -> np.ndarray:
        affinity = rng.normal(0, 1, 23)  # which pairs this model happens to know: alike in law for both
        logit = -0.5 + (difficulty + affinity)[QUESTIONS].sum(axis=1)
        return (rng.random(len(QUESTIONS)) < 1 / (1 + np.exp(-logit))).astype(np.float64)

    a, b = model(), model()
    before = tested(items.paired_bootstrap([a], [b]))
    after = tested(items.cluster_bootstrap([items.Hits(a, QUESTIONS)], [items.Hits(b, QUESTIONS)]))
    return before, after


def accuracy_pair(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    chance = rng.beta(4, 1, n)  # each item's difficulty, mean 0.8
    return (rng.random(n) < chance).astype(np.float64), (rng.random(n) < chance).astype(np.float64)


def snli(rng: np.random.Generator) -> tuple[str, str]:
    a, b = accuracy_pair(rng, 9824)
    return sign_rule(100 * (a.mean() - b.mean())), tested(items.mcnemar(a, b))


def transfer(rng: np.random.Generator) -> tuple[str, str]:
    before, results = [], []
    for n in TRANSFER_SIZES:
        a, b = accuracy_pair(rng, n)
        before.append(sign_rule(100 * (a.mean() - b.mean())))
        results.append({**items.mcnemar(a, b), "verdict": "inconclusive"})
    p = holm([r["p"] for r in results])
    p_reversed = holm([r["p_reversed"] for r in results])
    return combine(before, 10), combine([decide(x, y) for x, y in zip(p, p_reversed)], 10)


def transfer_seeds(rng: np.random.Generator) -> tuple[str, str]:
    """Welch per column across 5 seeds: without a correction (main) and with Holm's."""
    results = []
    for _ in TRANSFER_SIZES:
        a, b = rng.normal(80, 1, 5), rng.normal(80, 1, 5)
        test = welch(
            Value("a", None, None, a.mean(), a.std(ddof=1), 5), Value("b", None, None, b.mean(), b.std(ddof=1), 5)
        )
        results.append(test)
    before = combine([tested(r) for r in results], 10)
    p, p_reversed = holm([r["p"] for r in results]), holm([r["p_reversed"] for r in results])
    return before, combine([decide(x, y) for x, y in zip(p, p_reversed)], 10)


# name -> (simulation, rule before, test now, how many times --sims it runs: the cheap ones run more)
SCENARIOS = {
    "STS, 1,379 pairs": (sts, "sign at 0.1", "paired bootstrap over pairs", 1),
    "analogy, 506 questions from 23 pairs": (analogy, "bootstrap over questions", "cluster bootstrap over pairs", 5),
    "SNLI, 9,824 pairs": (snli, "sign at 0.1", "McNemar exact", 10),
    "transfer, all of 10 columns": (transfer, "sign at 0.1 per column", "McNemar per column + Holm", 10),
    "transfer, all of 10, 5 seeds": (transfer_seeds, "Welch per column", "Welch per column + Holm", 10),
}


def rates(verdicts: list[str]) -> tuple[float, float]:
    return verdicts.count("holds") / len(verdicts), verdicts.count("reversed") / len(verdicts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sims", type=int, default=200, help="pairs of equal models per scenario")
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    lines = [
        "| scenario | pairs of equal models | before | holds | reversed | after | holds | reversed |",
        "|---|---:|---|---:|---:|---|---:|---:|",
    ]
    for name, (simulate, before_name, after_name, times) in SCENARIOS.items():
        started = time.monotonic()
        before, after = zip(*(simulate(rng) for _ in range(args.sims * times)))
        (bh, br), (ah, ar) = rates(list(before)), rates(list(after))
        lines.append(
            f"| {name} | {args.sims * times} | {before_name} | {bh:.1%} | {br:.1%} | {after_name} | {ah:.1%} | {ar:.1%} |"
        )
        print(f"{name}: {time.monotonic() - started:.1f} s", file=sys.stderr)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
