"""What a stack of one costs against a solo run on CPU (docs/stages/classify.md, "Fused seeds").

With ``--fuse K`` above 1 every group of a classify job trains through the fused path, a run left alone in
its job too (a stack of one: its own key's dropout masks, as in any stack), where it used to train solo
(``training.run_seed``, torch's own masks). This runs the stage's own command on one seed, dropout 0.1, of a
tiny random BERT (2 layers, 32 wide, the classify tests' model; a WordPiece vocabulary of the demo fixtures)
on the demo SST-2 fixture, ``--fuse 2`` (a stack of one) against ``--fuse 1`` (solo), interleaved, and reads
from each job's log the seed's training seconds (its line "N steps in S s") and the seed's span from
"ready to fine-tune" to that line (model load, training and dev prediction). A tiny model's step is bound by
the operators it dispatches, where the fused step's extra operators (vmap's reshapes, eager attention, the
hashed masks: bench/fused_ops.py) show most.

Usage (repo root): ``python bench/stack_of_one.py [--steps 300] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

DEMO = REPO / "workflow" / "demo" / "data"
STEP_LINE = re.compile(r"seed 0: (\d+) steps in ([0-9.]+) s")


def tiny_model(out: Path) -> str:
    """The classify tests' tiny BERT (tests/classify/classify_builders.py): 2 layers, 32 wide, random weights."""
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertTokenizerFast

    from pipeline.classify import tasks
    from pipeline.pretrain.tiny_model import SPECIAL_TOKENS, learn_vocabulary, tiny_bert

    task = tasks.TASKS["sst2"]
    texts = [e.text_a for split in ("train", "dev") for e in task.read(task.split_files(DEMO, split))]
    vocab = learn_vocabulary(texts, 400, min_frequency=1)
    wordpiece = BertWordPieceTokenizer({token: i for i, token in enumerate(vocab)}, lowercase=True)
    tokenizer = BertTokenizerFast(tokenizer_object=wordpiece._tokenizer, do_lower_case=True, **SPECIAL_TOKENS)
    tiny_bert(tokenizer, hidden=32, layers=2, heads=2, max_length=128, seed=0).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return str(out)


def stamp(line: str) -> float:
    return datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()


def job(model: str, fuse: int, steps: int, out: Path) -> tuple[float, float]:
    """(training seconds, the seed's span in seconds) of one classify job of one seed at ``--fuse``."""
    argv = [sys.executable, "-m", "pipeline", "classify", "--model", model, "--task", "sst2", "--data", str(DEMO)]
    argv += ["--seeds", "1", "--max-steps", str(steps), "--batch-size", "8", "--lr", "1e-3", "--dropout", "0.1"]
    argv += ["--eval-batch-size", "32", "--no-test", "--report-to", "none", "--fuse", str(fuse), "--out", str(out)]
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(argv, cwd=REPO, env=environment, capture_output=True, text=True, check=True)
    lines = (done.stdout + done.stderr).splitlines()
    ready = stamp(next(line for line in lines if "ready to fine-tune" in line))
    seed_line = next(line for line in lines if STEP_LINE.search(line))
    found = STEP_LINE.search(seed_line)
    if int(found.group(1)) != steps:
        raise SystemExit(f"error: the job ran {found.group(1)} steps, not {steps}")
    return float(found.group(2)), stamp(seed_line) - ready


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="stack-of-one-") as scratch:
        model = tiny_model(Path(scratch) / "tiny-en")
        runs = {"solo (--fuse 1)": [], "stack of one (--fuse 2)": []}
        for attempt in range(args.repeat):  # interleaved: the machine's load falls on both alike
            for name, fuse in (("solo (--fuse 1)", 1), ("stack of one (--fuse 2)", 2)):
                runs[name].append(job(model, fuse, args.steps, Path(scratch) / f"{fuse}-{attempt}"))
    medians = {name: [statistics.median(values) for values in zip(*found)] for name, found in runs.items()}
    print(f"one seed of a 2 x 32 BERT, {args.steps} steps at batch 8, dropout 0.1, one thread; median of {args.repeat}")
    print("| path | training s | ms a step | seed's span s |")
    print("|---|---:|---:|---:|")
    for name, (train, span) in medians.items():
        print(f"| {name} | {train:.2f} | {1000 * train / args.steps:.1f} | {span:.2f} |")
    (solo_train, solo_span), (one_train, one_span) = medians.values()
    print(f"stack of one / solo: training {one_train / solo_train:.2f}x, seed's span {one_span / solo_span:.2f}x")


if __name__ == "__main__":
    main()
