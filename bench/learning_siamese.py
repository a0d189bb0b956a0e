"""Does Siamese fine-tuning learn? STS-B test Spearman before and after each ``finetune`` recipe, on CPU.

The start is a checkpoint never trained for sentence similarity, made by our own stages: the real
English sample (extract → clean), a tiny random BERT with a WordPiece vocabulary learned from it
(``tiny-model``) and, with ``--start tiny+mlm`` (the default), ``--mlm-steps`` of masked-LM
pre-training (``pretrain --objective mlm``) on ``--rows`` sampled sentences (ngrams → sample →
tokenize). Each recipe (``sbert-nli``, ``nli-mnrl``, ``twin``) fine-tunes that start through the
``finetune`` stage's CLI, and the start and every result are scored by ``evaluate sts`` (STS-B test:
Spearman ×100 of the cosine, BURT twin §4.1).

Data: NLI training pairs are SNLI dev + MultiNLI dev matched and mismatched (``nli/``; their train
sets are not on this machine; none of them overlaps STS-B). ``twin`` also reads the demo PPDB 2.0
pack (``workflow/demo/data/ppdb/ppdb-2.0-demo-phrasal``, 54 rules): the stage needs each pair's
entailment relation, which the human-labelled PPDB sample under the data root does not give.

CPU sizing (the recipes' settings otherwise: batch 16, Adam β2 0.98, linear warm-up 10%, mean
pooling, [u; v; |u−v|] heads, dropout 0.1): ``--epochs 2`` passes over the NLI data (papers: SBERT 1,
twin 2; one pass is 1,843 batches of NLI, twin's twice as many steps) and ``--lr 1e-3`` (papers:
2e-5, tuned for a pre-trained BERT: a tiny model barely moves at it). The start's MLM: 600 steps of
32 sentences at lr 5e-4. Everything is seeded; ``--start tiny`` skips the MLM.

Usage (repo root): ``python bench/learning_siamese.py [--data ../shared/data] [--write-md PATH]``
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

from testdata import EN_SAMPLE

from pipeline.cli import main as cli

NLI = (
    "nli/snli_dev_test_csv/snli_1.0_dev.csv",
    "nli/mnli_dev/multinli_1.0_dev_matched.csv",
    "nli/mnli_dev/multinli_1.0_dev_mismatched.csv",
)
PPDB = REPO / "workflow" / "demo" / "data" / "ppdb" / "ppdb-2.0-demo-phrasal"
RECIPES = ("sbert-nli", "nli-mnrl", "twin")


def stage(*argv) -> float:
    """``python -m pipeline ARGV`` in this process; its wall time in seconds."""
    started = time.perf_counter()
    if cli([str(a) for a in argv]) != 0:
        raise RuntimeError(f"python -m pipeline {' '.join(map(str, argv))} failed")
    return time.perf_counter() - started


def build_start(args, work: Path) -> tuple[Path, float]:
    """The start checkpoint through the stages' own commands, and the seconds it took."""
    seconds = stage("extract", "--dump", args.data / EN_SAMPLE, "--lang", "en", "--out", work / "docs")
    seconds += stage("clean", "--input", work / "docs" / "shard-000.parquet", "--lang", "en", "--out", work / "sents")
    seconds += stage("tiny-model", "--sentences", work / "sents", "--lang", "en", "--out", work / "tiny")
    if args.start == "tiny":
        return work / "tiny", seconds
    marked, sample, tokens = work / "ngrams" / "marked.parquet", work / "sample.parquet", work / "tokens.parquet"
    seconds += stage(
        *("ngrams", "--sentences", work / "sents" / "shard-000.parquet", "--lang", "en", "--lowercase"),
        *("--out", work / "ngrams"),
    )
    seconds += stage("sample", "--marked", marked, "--size", args.rows, "--out", sample)
    seconds += stage(
        "tokenize", "--marked", sample, "--model", work / "tiny", "--lang", "en", "--out", tokens, "--max-length", 128
    )
    seconds += stage(
        *("pretrain", "--data", tokens, "--model", work / "tiny", "--objective", "mlm", "--out", work / "mlm"),
        *("--max-steps", args.mlm_steps, "--batch-size", 32, "--lr", args.mlm_lr, "--warmup", 0.05),
    )
    return work / "mlm", seconds


def stsb_test(args, model: Path, out: Path) -> float:
    stage("evaluate", "sts", "--model", model, "--data", args.data, "--out", out)
    return json.loads(out.read_text())["scores"]["STS-B"]


def finetune(args, recipe: str, start: Path, out: Path) -> dict:
    argv = ["finetune", "--model", start, "--recipe", recipe, "--out", out, "--seed", args.seed]
    argv += [x for path in NLI for x in ("--nli", args.data / path)]
    argv += ["--epochs", args.epochs, "--lr", args.lr, "--batch-size", args.batch_size]
    if recipe == "twin":
        argv += ["--ppdb", args.ppdb, "--objectives", args.objectives]
    seconds = stage(*argv)
    config = json.loads((out / "finetune_config.json").read_text())
    return {
        "recipe": recipe,
        "steps": config["max_steps"],
        "nli_pairs": config["data"]["nli_pairs"],
        "seconds": seconds,
    }


def markdown(results: list[dict], start: float, args, build_seconds: float) -> str:
    lines = [
        (
            f"`python bench/learning_siamese.py --start {args.start}`: a tiny random BERT (`tiny-model` defaults: "
            f"2 layers, hidden 64, WordPiece 4000 on the English sample)"
            + (f" + {args.mlm_steps} MLM steps on {args.rows:,} sampled sentences" if args.start == "tiny+mlm" else "")
            + f", built in {build_seconds / 60:.1f} min. Fine-tuned on SNLI dev + MultiNLI dev "
            f"({results[0]['nli_pairs']:,} pairs; twin {args.objectives} also on `{args.ppdb.name}`): {args.epochs} epochs, lr {args.lr}, batch {args.batch_size}, "
            "mean pooling, the recipes' other settings. STS-B test Spearman ×100 (`evaluate sts`)."
        ),
        "",
        "| recipe | start | end | Δ | steps | wall |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r['recipe']} | {start:.1f} | {r['end']:.1f} | {r['end'] - start:+.1f} | {r['steps']} | "
            f"{r['seconds'] / 60:.1f} min |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--start", choices=("tiny", "tiny+mlm"), default="tiny+mlm")
    parser.add_argument("--recipes", nargs="+", choices=RECIPES, default=list(RECIPES))
    parser.add_argument("--rows", type=int, default=8000, help="sampled sentences for MLM")
    parser.add_argument("--mlm-steps", type=int, default=600)
    parser.add_argument("--mlm-lr", type=float, default=5e-4)
    parser.add_argument("--ppdb", type=Path, default=PPDB, help="twin: PPDB 2.0 pack with entailment relations")
    parser.add_argument("--objectives", default="nli+pi+ptc", help="twin: the tasks trained (Table 4)")
    parser.add_argument("--epochs", type=float, default=2.0, help="passes over the NLI data")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--write-md", type=Path, help="also write the markdown table here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        start_model, build_seconds = build_start(args, work)
        start = stsb_test(args, start_model, work / "start.json")
        print(f"start ({args.start}): STS-B test {start:.1f} ({build_seconds / 60:.1f} min)", flush=True)
        results = []
        for recipe in args.recipes:
            result = finetune(args, recipe, start_model, work / recipe)
            result["end"] = stsb_test(args, work / recipe, work / f"{recipe}.json")
            print(f"{recipe:>9}: STS-B test {start:.1f} -> {result['end']:.1f} ({result['seconds'] / 60:.1f} min)")
            results.append(result)
    table = markdown(results, start, args, build_seconds)
    print()
    print(table)
    if args.write_md:
        args.write_md.write_text(table)


if __name__ == "__main__":
    main()
