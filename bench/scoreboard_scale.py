"""How the scoreboard's tests over items scale with the items (issue 55 §3: 200,000 STS pairs did not finish in
5 minutes), against a named baseline in the same run.

Each row times one test of two models on ``n`` items with the module's 2,000 replicates, the way the
scoreboard calls it: the paired bootstrap over pairs of a Spearman column (STS, the word sets), the paired
bootstrap over items of a mean (GEOGRANNO, FAQ), McNemar's test of an accuracy. Scores are realistic: gold
uniform on [0, 5] rounded to 0.2 (ties, as STS's), each model's cosine = gold + its own noise. Peak memory
is Python's traced peak (the draws are numpy arrays, which tracemalloc sees).

The baseline is ``pipeline/scoreboard/scoreboard_bootstrap.py`` at ``--baseline`` (a git revision; default
3fa9b82, before the one sort a list), loaded from ``git show``; it runs only up to ``--baseline-max`` items,
as it sorts every list once a chunk of replicates (quadratic in the items).

Usage (repo root): ``python bench/scoreboard_scale.py [--sizes 25000,50000,100000,200000]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import tracemalloc
import types
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.harness import module_at
from pipeline.scoreboard import scoreboard_bootstrap as current


def baseline_module(revision: str, folder: Path) -> types.ModuleType:
    """scoreboard_bootstrap.py as it was at ``revision`` (git show), imported from a file of its own."""
    return module_at(revision, "pipeline/scoreboard/scoreboard_bootstrap.py", folder)


def two_models(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    gold = np.round(rng.uniform(0, 5, n) * 5) / 5
    return gold, gold + rng.normal(0, 1.5, n), gold + rng.normal(0, 1.5, n)


def timed(call) -> tuple[float, float, dict]:
    tracemalloc.start()
    started = time.perf_counter()
    try:
        result = call()
        seconds = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return seconds, peak / 2**20, result


def cases(module, n: int):
    gold, a, b = two_models(n)
    scored = lambda predicted: [(1.0, module.Scored(gold, predicted))]
    hits = lambda x: [(np.abs(x - gold) < 1).astype(np.float64)]
    yield "spearman bootstrap", lambda: module.correlation_bootstrap("spearman", scored(a), scored(b))
    yield "mean bootstrap", lambda: module.paired_bootstrap(hits(a), hits(b))
    yield "McNemar", lambda: module.mcnemar(hits(a)[0], hits(b)[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="25000,50000,100000,200000")
    parser.add_argument("--baseline", default="3fa9b82")
    parser.add_argument("--baseline-max", type=int, default=50000, help="largest n the baseline runs at")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        baseline = baseline_module(args.baseline, Path(folder))
    current.mcnemar(np.ones(3), np.zeros(3))  # scipy's import, outside the timings
    baseline.mcnemar(np.ones(3), np.zeros(3))
    print("| test | items | now | peak MiB | baseline | ratio | same p |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for n in (int(size) for size in args.sizes.split(",")):
        for (name, now), (_, before) in zip(cases(current, n), cases(baseline, n)):
            seconds, peak, result = timed(now)
            if n <= args.baseline_max:
                old_seconds, _, old = timed(before)
                same = "yes" if old.get("p") == result.get("p") else f"no ({old.get('p')} vs {result.get('p')})"
                compared = f"{old_seconds:,.1f} s | {old_seconds / seconds:,.1f}x | {same}"
            else:
                compared = "not run | - | -"
            print(f"| {name} | {n:,} | {seconds:,.1f} s | {peak:,.0f} | {compared} |", flush=True)


if __name__ == "__main__":
    main()
