"""How often the scoreboard says "holds" or "reversed" about two EQUAL models, per claim family (issues 46 §2
and 54 §2), before and after.

Each scenario draws two models with the same expected score on realistic item counts many times and judges
the pair with the scoreboard's rule before (``pipeline/scoreboard/scoreboard_stats.py`` and
``scoreboard_bootstrap.py`` at ``--baseline``, loaded from ``git show``: α = 0.05 each way, Holm's correction
of both directions for every family, each analogy level's pairs clustered apart) and now (2.5% each way; "all
N hold" an intersection–union test, Holm for "at least k of N" and for "reversed"; one cluster per word pair
across levels). Every "holds" or "reversed" is false, and the two together should stay at or below 5%.

* **STS** (twin-sts-over-bert, one column): 1,379 pairs (STS-B test), gold uniform on [0, 5], each model's
  cosine = gold + its own noise (same variance); the paired bootstrap over pairs.
* **Analogy, one level** (burt-analogy-*, word_avg): capital-common's 506 questions, all ordered pairs of 23
  word pairs. A question's odds are the sum of its two pairs' difficulty (shared) and of each model's own
  affinity to those pairs (drawn alike for both); the cluster bootstrap over word pairs.
* **Analogy across levels** (ulr-analogy-average, avg): 23 semantic and 23 syntactic word pairs, each wrapped
  at three levels (506 questions a level and kind, 3,036 in all). A model's affinity to a word pair is the
  same at every level (it knows athens : greece or not) plus a smaller one of each level; a phrase or
  sentence file wraps each pair in two templates, one as (A, B), one as (C, D), so its own pairs are 46
  (as the real files). Before: each level's file pairs clustered apart (230 clusters); beside it, that
  clustering at 2.5%, to show what the level alone does; now: one cluster per word pair (46).
* **SNLI** (bf-snli-*, one column): 9,824 test pairs, each with its own difficulty (Beta, mean 0.8), both
  models right independently with that chance; McNemar's exact test.
* **Transfer, all of 10 columns** (bf-transfer-over-max): ten test sets of the SentEval sizes, scored as SNLI,
  McNemar per column; and the same claim over 5 seeds a column (Welch per column).
* **CLUE, at least 4 of 6** (burt-clue-over-*): six columns over 5 seeds (Welch per column).
* **All of 10, nine far higher** (the intersection–union test's least favourable case, not equal models):
  nine columns 5 points higher over 5 seeds, one equal; every "holds" is false, as the claim is.

Usage (repo root): ``python bench/scoreboard_false_verdicts.py [--sims 200]`` (prints the BENCHMARKS.md table).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.harness import machine, module_at
from pipeline.scoreboard import scoreboard_bootstrap as items
from pipeline.scoreboard import scoreboard_stats as stats_now

TRANSFER_SIZES = (10662, 3775, 10000, 10606, 1821, 500, 4927, 4927, 3750, 3750)  # MR ... STS14 (SentEval)
BASELINE = "1564949"  # main before issue 54 §2: 5% each way, Holm everywhere, analogy clusters per level


class Rules:
    """The scoreboard's rules before (the baseline's modules) and now, on the same test results."""

    def __init__(self, folder: Path, revision: str):
        self.stats_before = module_at(revision, "pipeline/scoreboard/scoreboard_stats.py", folder)
        self.items_before = module_at(revision, "pipeline/scoreboard/scoreboard_bootstrap.py", folder)

    def single(self, result: dict) -> dict[str, str]:
        """One column: the same p-values decided at each rule's level."""
        return {
            "before": self.stats_before.decide(result["p"], result["p_reversed"]),
            "now": stats_now.decide(result["p"], result["p_reversed"]),
        }

    def family(self, results: list[dict], at_least: int) -> dict[str, str]:
        """A claim over several columns: before, Holm's correction of both directions and the count; now, the
        family as the scoreboard adjusts it."""
        tested = [{**r, "verdict": "inconclusive"} for r in results]
        before = self.stats_before.holm_family(tested)
        now = stats_now.adjust_family(tested, at_least)
        return {
            "before": self.stats_before.combine([r["verdict"] for r in before], at_least),
            "now": stats_now.combine([r["verdict"] for r in now], at_least),
        }


def sts(rng: np.random.Generator, rules: Rules) -> dict[str, str]:
    gold = rng.uniform(0, 5, 1379)
    a, b = gold + rng.normal(0, 2, 1379), gold + rng.normal(0, 2, 1379)
    scored = lambda p: [(1.0, items.Scored(gold, p))]
    return rules.single(items.correlation_bootstrap("spearman", scored(a), scored(b)))


def ordered_pairs(count: int) -> np.ndarray:
    return np.asarray([[i, j] for i in range(count) for j in range(count) if i != j])


QUESTIONS = ordered_pairs(23)


def analogy(rng: np.random.Generator, rules: Rules) -> dict[str, str]:
    difficulty = rng.normal(0, 1, 23)

    def model() -> np.ndarray:
        affinity = rng.normal(0, 1, 23)  # which pairs this model happens to know: alike in law for both
        logit = -0.5 + (difficulty + affinity)[QUESTIONS].sum(axis=1)
        return (rng.random(len(QUESTIONS)) < 1 / (1 + np.exp(-logit))).astype(np.float64)

    a, b = model(), model()
    return rules.single(items.cluster_bootstrap([items.Hits(a, QUESTIONS)], [items.Hits(b, QUESTIONS)]))


LEVELS = ("word", "phrase", "sentence")


def analogy_levels(rng: np.random.Generator, rules: Rules) -> dict[str, str]:
    """ulr-analogy-average's six pools (three levels, semantic and syntactic) over 46 word pairs."""
    difficulty = rng.normal(0, 1, 46)  # the pair's own difficulty, at every level and for both models
    by_level = rng.normal(0, 0.5, (len(LEVELS), 46))  # what its level's template adds, for both models

    def model() -> list[np.ndarray]:
        affinity = rng.normal(0, 1, 46)  # the model knows the word pair at every level, or not
        own_level = rng.normal(0, 0.5, (len(LEVELS), 46))
        pools = []
        for level in range(len(LEVELS)):
            for first in (0, 23):  # the semantic pairs, then the syntactic ones
                pair = first + QUESTIONS
                odds = (difficulty + by_level[level] + affinity + own_level[level])[pair].sum(axis=1)
                pools.append((rng.random(len(pair)) < 1 / (1 + np.exp(0.5 - odds))).astype(np.float64))
        return pools

    a, b = model(), model()
    # each file's own pairs: a phrase or sentence file wraps each word pair in two templates, (A, B) and (C, D)
    own = [QUESTIONS if level == "word" else QUESTIONS + [0, 23] for level in LEVELS for _ in (0, 23)]
    traced = [first + QUESTIONS for _ in LEVELS for first in (0, 23)]
    per_level = rules.items_before.cluster_bootstrap(
        [rules.items_before.Hits(h, p) for h, p in zip(a, own)], [rules.items_before.Hits(h, p) for h, p in zip(b, own)]
    )
    by_word_pair = items.cluster_bootstrap(
        [items.Hits(h, p, w) for h, p, w in zip(a, own, traced)],
        [items.Hits(h, p, w) for h, p, w in zip(b, own, traced)],
    )
    return {
        "before": rules.stats_before.decide(per_level["p"], per_level["p_reversed"]),
        "per level at 2.5%": stats_now.decide(per_level["p"], per_level["p_reversed"]),
        "now": stats_now.decide(by_word_pair["p"], by_word_pair["p_reversed"]),
    }


def accuracy_pair(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    chance = rng.beta(4, 1, n)  # each item's difficulty, mean 0.8
    return (rng.random(n) < chance).astype(np.float64), (rng.random(n) < chance).astype(np.float64)


def snli(rng: np.random.Generator, rules: Rules) -> dict[str, str]:
    return rules.single(items.mcnemar(*accuracy_pair(rng, 9824)))


def transfer(rng: np.random.Generator, rules: Rules) -> dict[str, str]:
    return rules.family([items.mcnemar(*accuracy_pair(rng, n)) for n in TRANSFER_SIZES], 10)


def welch_columns(rng: np.random.Generator, differences: list[float]) -> list[dict]:
    """Welch's test per column over 5 seeds (std 1 in law), the higher side ``difference`` up."""
    results = []
    for difference in differences:
        a, b = rng.normal(80 + difference, 1, 5), rng.normal(80, 1, 5)
        value = lambda x, name: stats_now.Value(name, None, None, x.mean(), x.std(ddof=1), 5)
        results.append(stats_now.welch(value(a, "a"), value(b, "b")))
    return results


def transfer_seeds(rng: np.random.Generator, rules: Rules) -> dict[str, str]:
    return rules.family(welch_columns(rng, [0.0] * 10), 10)


def clue_seeds(rng: np.random.Generator, rules: Rules) -> dict[str, str]:
    return rules.family(welch_columns(rng, [0.0] * 6), 4)


def nine_far_higher(rng: np.random.Generator, rules: Rules) -> dict[str, str]:
    return rules.family(welch_columns(rng, [5.0] * 9 + [0.0]), 10)


SINGLE = {"before": "5% each way", "now": "2.5% each way"}
ALL_OF_N = {
    "before": "5% each way, Holm both ways",
    "now": "2.5% each way; holds: each column at its own level (intersection–union); reversed: Holm",
}
K_OF_N = {"before": "5% each way, Holm both ways", "now": "2.5% each way, Holm both ways"}
ANALOGY_LEVELS = {
    "before": "clusters per level and template (230 pairs), 5% each way",
    "per level at 2.5%": "clusters per level and template (230 pairs), 2.5% each way",
    "now": "one cluster per word pair across levels (46 pairs), 2.5% each way",
}
# name -> (simulation, how many times --sims it runs (the cheap ones run more), the test, the rules' names)
SCENARIOS = {
    "STS, 1,379 pairs (one column)": (sts, 1, "paired bootstrap over pairs", SINGLE),
    "analogy, 506 questions from 23 pairs (one level)": (analogy, 5, "cluster bootstrap over pairs", SINGLE),
    "analogy avg, 46 word pairs at 3 levels (3,036 questions)": (
        analogy_levels,
        2,
        "cluster bootstrap over pairs",
        ANALOGY_LEVELS,
    ),
    "SNLI, 9,824 pairs (one column)": (snli, 10, "McNemar exact", SINGLE),
    "transfer, all of 10 columns": (transfer, 10, "McNemar per column", ALL_OF_N),
    "transfer, all of 10, 5 seeds": (transfer_seeds, 10, "Welch per column", ALL_OF_N),
    "CLUE, at least 4 of 6, 5 seeds": (clue_seeds, 10, "Welch per column", K_OF_N),
    "all of 10 with nine 5 points higher and one equal, 5 seeds (not equal models)": (
        nine_far_higher,
        10,
        "Welch per column",
        ALL_OF_N,
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sims", type=int, default=200, help="pairs of equal models per scenario (x its factor)")
    parser.add_argument("--baseline", default=BASELINE, help="the git revision of the rule before")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        rules = Rules(Path(folder), args.baseline)
    rng = np.random.default_rng(2026)
    lines = [
        "| scenario | pairs of models | test | rule | holds | reversed | holds + reversed |",
        "|---|---:|---|---|---:|---:|---:|",
    ]
    for name, (simulate, times, test, names) in SCENARIOS.items():
        started = time.monotonic()
        runs = [simulate(rng, rules) for _ in range(args.sims * times)]
        for rule, label in names.items():
            verdicts = [run[rule] for run in runs]
            holds, reversed_ = verdicts.count("holds") / len(runs), verdicts.count("reversed") / len(runs)
            lines.append(
                f"| {name} | {len(runs)} | {test} | {label} | {holds:.1%} | {reversed_:.1%} | {holds + reversed_:.1%} |"
            )
        print(f"{name}: {time.monotonic() - started:.1f} s", file=sys.stderr)
    print("\n".join(lines))
    print(f"\nMachine: {machine(sys.executable)}; --sims {args.sims}, baseline {args.baseline}.")


if __name__ == "__main__":
    main()
