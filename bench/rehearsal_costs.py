"""Where a dress rehearsal's time goes: per rule and per job kind, from a finished rehearsal's own files.

Reads ``results/<paper run>-rehearsal/`` (``snakemake.log``, the rule's ``benchmark:`` files and
``rehearsal.json``) and prints, per rule, the jobs, their wall seconds and CPU seconds (Snakemake's
benchmark ``s`` and ``cpu_time``), the kinds they cover (pipeline/rehearsal/coverage.py) and the share of
the run's CPU time; then the start-up a job pays before any work: ``python -m pipeline STAGE`` with the
imports of torch and transformers' ``AutoModel``, timed here (``--startup-runs``), times the jobs that pay it. A
rehearsal is CPU-bound on 2 cores when the CPU seconds over the cores come near Snakemake's wall time.

    python bench/rehearsal_costs.py results/paper-en-rehearsal [--write-md]
"""

from __future__ import annotations

import argparse
import csv
import itertools
import re
import resource
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pipeline.rehearsal import coverage

_BENCHMARK = re.compile(r"^\s+benchmark: (.*)$", re.MULTILINE)
# Rules whose jobs import torch and transformers before they work (every model stage).
MODEL_RULES = re.compile(
    r"^(evaluate|figures|classify|pretrain|finetune|bilstm|tiny_model|tokenize|training_curves|word2vec)"
)


def job_benchmarks(log: str, root: Path) -> list[tuple[coverage.Job, dict]]:
    """(job, its benchmark row) of each finished job of a Snakemake log."""
    done = {job.jobid for job in coverage.finished_jobs(log)}
    found = []
    starts = [m.start() for m in re.finditer(r"^(?:local)?rule \S+:$", log, re.MULTILINE)] + [len(log)]
    for start, end in itertools.pairwise(starts):
        block = log[start:end]
        job = coverage.jobs(block)[0]
        path = _BENCHMARK.search(block)
        if job.jobid not in done or not path:
            continue
        tsv = root / path.group(1).strip()
        if tsv.is_file():
            rows = list(csv.DictReader(tsv.open(encoding="utf-8"), delimiter="\t"))
            if rows:
                found.append((job, rows[-1]))
    return found


def by_kind_report(rows: list[tuple[coverage.Job, dict]], rehearsal: Path, top: int) -> None:
    """The CPU seconds of the costliest job kinds (rule and backbone family: pipeline/rehearsal/coverage.py)."""
    import yaml

    config_path = rehearsal / "rehearsal.yaml"
    if not config_path.is_file():
        return
    reader = coverage.KindReader(yaml.safe_load(config_path.read_text(encoding="utf-8")))
    by_kind: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for job, row in rows:
        try:
            kinds = reader.kinds(job)
        except (KeyError, ValueError):  # a job the kind reader does not know (the rehearsal's own `all`)
            kinds = {(job.rule,)}
        name = " ".join(sorted({" / ".join(str(part) for part in kind[:2]) for kind in kinds})) or job.rule
        by_kind[name][0] += 1
        by_kind[name][1] += float(row.get("cpu_time") or 0)
    print(f"\n{len(by_kind)} kinds (rule / family); the {top} costliest by CPU seconds:")
    print("| kind | jobs | CPU s |")
    print("|---|---:|---:|")
    for name, (jobs, cpu) in sorted(by_kind.items(), key=lambda item: -item[1][1])[:top]:
        print(f"| {name} | {jobs} | {cpu:,.0f} |")


def startup_cpu_seconds(runs: int) -> float:
    """CPU seconds (user + system, children) of importing what every model job imports first, best of ``runs``."""
    best = float("inf")
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [sys.executable, "-c", "import pipeline.cli, torch; from transformers import AutoModel"], check=True
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rehearsal", type=Path, help="results/<paper run>-rehearsal")
    parser.add_argument("--startup-runs", type=int, default=3)
    parser.add_argument("--top", type=int, default=20, help="rules listed (the rest summed)")
    args = parser.parse_args(argv)
    log = (args.rehearsal / "snakemake.log").read_text(encoding="utf-8", errors="replace")
    rows = job_benchmarks(log, args.rehearsal.resolve().parents[1])
    by_rule: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for job, row in rows:
        rule = job.rule
        entry = by_rule[rule.split("classify_fused_")[0] + ("classify_fused" if "classify_fused_" in rule else "")]
        entry[0] += 1
        entry[1] += float(row.get("s") or 0)
        entry[2] += float(row.get("cpu_time") or 0)
    total_cpu = sum(e[2] for e in by_rule.values()) or 1.0
    total_wall = sum(e[1] for e in by_rule.values())
    print("| rule | jobs | wall s | CPU s | CPU s per job | share of CPU |")
    print("|---|---:|---:|---:|---:|---:|")
    ranked = sorted(by_rule.items(), key=lambda item: -item[1][2])
    for rule, (jobs, wall, cpu) in ranked[: args.top]:
        print(f"| {rule} | {jobs} | {wall:,.0f} | {cpu:,.0f} | {cpu / jobs:.1f} | {cpu / total_cpu:.0%} |")
    rest = ranked[args.top :]
    if rest:
        jobs, wall, cpu = (sum(e[i] for _, e in rest) for i in range(3))
        print(
            f"| {len(rest)} other rules | {jobs} | {wall:,.0f} | {cpu:,.0f} | {cpu / max(jobs, 1):.1f} | {cpu / total_cpu:.0%} |"
        )
    print(f"| all | {len(rows)} | {total_wall:,.0f} | {total_cpu:,.0f} | | |")
    by_kind_report(rows, args.rehearsal, args.top)
    model_jobs = sum(e[0] for rule, e in by_rule.items() if MODEL_RULES.match(rule))
    startup = startup_cpu_seconds(args.startup_runs)
    print(
        f"\nstart-up (pipeline.cli, torch, transformers.AutoModel): {startup:.1f} CPU s a job, "
        f"x {model_jobs} model jobs = {startup * model_jobs:,.0f} CPU s ({startup * model_jobs / total_cpu:.0%} of "
        "the jobs' CPU time; Snakemake samples a job's CPU time, so short jobs under-count it)"
    )
    record = args.rehearsal / "rehearsal.json"
    if record.is_file():
        import json

        summary = json.loads(record.read_text(encoding="utf-8"))
        print(
            f"snakemake wall {summary['snakemake_seconds']:,.0f} s for {summary['jobs_executed']} jobs; "
            f"whole stage {summary['wall_seconds']:,.0f} s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
