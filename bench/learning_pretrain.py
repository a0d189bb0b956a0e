"""Does pre-training learn? Held-out masked-token and whole-n-gram accuracy over a few hundred CPU steps.

The real English sample as the workflow makes it (extract → clean → ngrams → sample → tokenize, the
stages' own commands: ``testdata.build_token_sample``), tokenised for the packaged all-MiniLM-L6-v2,
which ``pretrain`` gives a new MLM head. Each objective continues it for ``--steps`` steps with
``--heldout`` sentences set aside, scored before the first step and every ``--eval-every`` steps
(pipeline/pretrain/heldout.py: BERT's token masking and BURT's whole-n-gram masking, the same
masks for every objective). The baseline is the model's own start: the step-0 evaluation.

Usage (repo root): ``python bench/learning_pretrain.py [--data ../shared/data] [--steps 300] [--write-md]``
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

KEYS = ("heldout_token_acc", "heldout_ngram_acc", "heldout_token_loss")


def run(objective: str, tokens: Path, out: Path, args) -> dict:
    argv = ["pretrain", "--data", tokens, "--model", minilm_path(), "--objective", objective, "--out", out]
    argv += ["--max-steps", args.steps, "--batch-size", args.batch_size, "--lr", args.lr, "--warmup", 0.05]
    argv += ["--heldout", args.heldout, "--eval-every", args.eval_every, "--misad-choice", "random"]
    started = time.perf_counter()
    assert cli([str(a) for a in argv]) == 0
    seconds = time.perf_counter() - started
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    evaluations = [entry for entry in log if "heldout_token_acc" in entry]
    return {"objective": objective, "seconds": seconds, "evaluations": evaluations}


def markdown(results: list[dict], args, rows: int) -> str:
    lines = [
        (
            f"`python bench/learning_pretrain.py --steps {args.steps}`: all-MiniLM-L6-v2 (new MLM head) on {rows:,} real "
            f"English sample sentences, {args.heldout} of them held out; batch {args.batch_size}, lr {args.lr}; "
            "MiSAD with w drawn at random."
        ),
        "",
        "| objective | step | held-out masked-token acc. | held-out whole-n-gram acc. | held-out token loss | wall |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        for i, entry in enumerate(result["evaluations"]):
            wall = f"{result['seconds'] / 60:.1f} min" if i == len(result["evaluations"]) - 1 else ""
            lines.append(
                f"| {result['objective']} | {entry['step']} | {100 * entry['heldout_token_acc']:.1f} | "
                f"{100 * entry['heldout_ngram_acc']:.1f} | {entry['heldout_token_loss']:.2f} | {wall} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--objectives", nargs="+", default=["mlm", "burt", "misad"])
    parser.add_argument("--rows", type=int, default=4000, help="sampled sentences")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--heldout", type=int, default=512)
    parser.add_argument("--eval-every", type=int, default=50)
    parser.add_argument("--write-md", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        tokens = build_token_sample(args.data, work / "sample", args.rows, minilm_path())
        results = [run(objective, tokens, work / objective, args) for objective in args.objectives]
    for result in results:
        first, last = result["evaluations"][0], result["evaluations"][-1]
        print(
            f"{result['objective']:>6}: masked-token acc {100 * first['heldout_token_acc']:.1f} -> "
            f"{100 * last['heldout_token_acc']:.1f}, whole-n-gram acc {100 * first['heldout_ngram_acc']:.1f} -> "
            f"{100 * last['heldout_ngram_acc']:.1f} ({result['seconds'] / 60:.1f} min)"
        )
    if args.write_md:
        print()
        print(markdown(results, args, args.rows))


if __name__ == "__main__":
    main()
