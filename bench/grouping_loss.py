"""Does length-grouped batching change what MLM learns? Held-out loss with and without it, against seed noise.

Length grouping (pipeline/pretrain/batching.py, the default for single sentences) puts sentences
of similar length in one batch, which cuts padding from 66% to 6% (docs/stages/pretrain.md). It
also changes which sentences share a batch, so a user may ask whether it changes training. The
real English sample as the workflow makes it (``testdata.build_token_sample``: extract → clean →
ngrams → sample → tokenize), all-MiniLM-L6-v2 with a new MLM head, MLM for ``--steps`` steps,
``--heldout`` sentences scored every ``--eval-every`` steps (the same masks for every run):

- ``grouped``: ``--batching length-grouped``, seed 0;
- ``random``: ``--batching random``, seed 0;
- ``random, seed 1``: the noise yardstick, random batching with another seed (other batches, other
  masks, the other head initialisation).

Agreement within noise: at every evaluation after step 0, the grouped run's held-out loss differs
from the random run's by no more than the two random seeds differ from each other at their largest
gap (plus 0.05 nats of slack).

Usage (repo root): ``python bench/grouping_loss.py [--data ../shared/data] [--steps 200]``; prints the Markdown table for BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from testdata import build_token_sample, minilm_path

from pipeline.cli import main as cli

RUNS = {"grouped": ("length-grouped", 0), "random": ("random", 0), "random, seed 1": ("random", 1)}
SLACK = 0.05


def run(batching: str, seed: int, tokens: Path, out: Path, args) -> tuple[list[dict], float]:
    argv = ["pretrain", "--data", tokens, "--model", minilm_path(), "--objective", "mlm", "--out", out]
    argv += ["--max-steps", args.steps, "--batch-size", args.batch_size, "--lr", args.lr, "--warmup", 0.05]
    argv += ["--heldout", args.heldout, "--eval-every", args.eval_every, "--batching", batching, "--seed", seed]
    started = time.perf_counter()
    assert cli([str(a) for a in argv]) == 0
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    return [entry for entry in log if "heldout_token_loss" in entry], time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--rows", type=int, default=4000, help="sampled sentences")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--heldout", type=int, default=512)
    parser.add_argument("--eval-every", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        tokens = build_token_sample(args.data, work / "sample", args.rows, minilm_path())
        results = {
            name: run(b, s, tokens, work / name.replace(", ", "-").replace(" ", ""), args)
            for name, (b, s) in RUNS.items()
        }
    curves = {name: [e["heldout_token_loss"] for e in evaluations] for name, (evaluations, _) in results.items()}
    steps = [e["step"] for e in results["grouped"][0]]
    grouping_gap = [abs(a - b) for a, b in zip(curves["grouped"][1:], curves["random"][1:], strict=True)]
    seed_gap = [abs(a - b) for a, b in zip(curves["random"][1:], curves["random, seed 1"][1:], strict=True)]
    agree = max(grouping_gap) <= max(seed_gap) + SLACK
    lines = [
        (
            f"`python bench/grouping_loss.py --steps {args.steps}`: MLM from all-MiniLM-L6-v2 (new head) on "
            f"{args.rows:,} real English sample sentences, {args.heldout} held out; batch {args.batch_size}, "
            f"lr {args.lr}. Held-out masked-token loss (nats):"
        ),
        "",
        "| step | " + " | ".join(RUNS) + " | grouped − random |",
        "|---:|" + "---:|" * (len(RUNS) + 1),
    ]
    for i, step in enumerate(steps):
        cells = " | ".join(f"{curves[name][i]:.3f}" for name in RUNS)
        lines.append(f"| {step} | {cells} | {curves['grouped'][i] - curves['random'][i]:+.3f} |")
    wall = ", ".join(f"{name} {seconds / 60:.1f} min" for name, (_, seconds) in results.items())
    lines += [
        "",
        (
            f"Largest grouped-vs-random gap after step 0: {max(grouping_gap):.3f}; largest gap between the two "
            f"random seeds: {max(seed_gap):.3f}. Agreement within noise (gap ≤ seed gap + {SLACK}): "
            f"**{'yes' if agree else 'no'}**. Wall: {wall}."
        ),
    ]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
