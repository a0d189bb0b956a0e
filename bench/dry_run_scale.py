"""The dry run's time against the config's size: ``snakemake -n`` on the demo config with N extra
backbones (default 3,000, 6,000 and 12,000; each a "tiny" BERT, so each adds its jobs: tiny_model,
evaluate_en, finetune_semeval, evaluate_frozen, figures), on this tree and, with ``--baseline``, on a
commit (a ``git worktree`` of it).

Each count doubles the one before: a dry run linear in the config's size takes about twice the time
at 2N that it takes at N (a little less, since the start is a fixed cost), and its marginal cost, seconds
per 1,000 more backbones, stays level; a quadratic one doubles its marginal cost at each step
(docs/design.md, BENCHMARKS.md "Dry run scale").

    python bench/dry_run_scale.py --write-md                      # the "## Dry run scale" section
    python bench/dry_run_scale.py 750 1500 3000 --kind pretrained  # each extra backbone also pre-trained
    python bench/dry_run_scale.py 1000 3000 --baseline cf1478e     # the quadratic rules, for comparison
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from harness import REPO, Run, machine, markdown_table, measure, write_section

KINDS = {
    "tiny": "a tiny BERT trained on the demo corpus",
    "hub": "a hub model pinned to a commit (a download_model job each)",
    "pretrained": "a tiny BERT, also pre-trained with the demo's objectives",
}
COMMIT = "0123456789abcdef0123456789abcdef01234567"  # any 40 hex digits: a dry run fetches nothing


def config_with(count: int, kind: str, folder: Path) -> Path:
    """The demo config with ``count`` more backbones of ``kind`` (its own run name, so no result is shared)."""
    config = yaml.safe_load((REPO / "workflow/config/demo.yaml").read_text())
    config["run"] = f"dry-run-scale-{kind}-{count}"
    config["data_root"] = str(REPO / config["data_root"])
    names = [f"extra-{k}" for k in range(count)]
    for k, name in enumerate(names):
        config["models"]["backbones"][name] = f"hub:org/model-{k}@{COMMIT}" if kind == "hub" else "tiny"
    if kind == "pretrained":
        config["pretrain"]["backbones"] += names
    path = folder / f"backbones-{kind}-{count}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def dry_run(tree: Path, config: Path, log: Path) -> tuple[Run, int]:
    """The dry run's wall, CPU and peak RSS, and its number of jobs (the last line of its job table)."""
    # --quiet rules: the job table is printed, not each job (printing 80,000 jobs is not the DAG's cost)
    run = measure(
        [sys.executable, "-m", "snakemake", "-n", "--quiet", "rules", "--cores", "1", "--configfile", str(config)],
        log,
        env={"PYTHONPATH": str(tree)},
        cwd=tree,
    )
    totals = re.findall(r"^total\s+(\d+)$", log.read_text(), re.MULTILINE)
    if not totals:
        raise SystemExit(f"error: {log}: the dry run printed no job table")
    return run, int(totals[-1])


def rows_of(name: str, counts: list[int], runs: list[tuple[Run, int]]) -> list[list[str]]:
    """One row per count: time, ratio to the count before, marginal seconds per 1,000 backbones, memory."""
    rows = []
    for k, (count, (run, jobs)) in enumerate(zip(counts, runs)):
        if k:
            before = runs[k - 1][0]
            ratio = f"{run.wall / before.wall:.2f} (x{count / counts[k - 1]:g})"
            marginal = f"{1000 * (run.wall - before.wall) / (count - counts[k - 1]):.1f} s"
        else:
            ratio = marginal = "-"
        rows.append(
            [name, f"{count:,}", f"{jobs:,}", f"{run.wall:.1f} s", f"{run.cpu:.1f} s", ratio, marginal]
            + [f"{run.peak_rss_mb:,.0f} MB"]
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("counts", type=int, nargs="*", default=[3000, 6000, 12000], help="backbones added")
    parser.add_argument("--kind", choices=sorted(KINDS), default="tiny", help="what each added backbone is")
    parser.add_argument("--baseline", default="", help="a commit to measure beside this tree")
    parser.add_argument("--write-md", action="store_true")
    args = parser.parse_args(argv)
    if len(args.counts) < 2 or sorted(set(args.counts)) != args.counts or args.counts[0] < 1:
        parser.error("counts: two or more, increasing, each at least 1")
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        trees = {"this tree": REPO}
        if args.baseline:
            subprocess.run(["git", "worktree", "add", "--detach", str(scratch / "baseline"), args.baseline], check=True)
            trees[f"baseline {args.baseline}"] = scratch / "baseline"
        try:
            rows = []
            for name, tree in trees.items():
                runs = []
                for count in args.counts:
                    runs.append(dry_run(tree, config_with(count, args.kind, scratch), scratch / f"{count}.log"))
                    run, jobs = runs[-1]
                    print(
                        f"{name}: {count} backbones, {jobs} jobs: {run.wall:.1f} s, {run.peak_rss_mb:.0f} MB",
                        flush=True,
                    )
                rows += rows_of(name, args.counts, runs)
        finally:
            if args.baseline:
                subprocess.run(["git", "worktree", "remove", "--force", str(scratch / "baseline")], check=True)
    head = ["tree", "backbones", "jobs", "wall", "CPU", "ratio to the row above", "per 1,000 more", "peak RSS"]
    table = markdown_table(head, rows)
    print(table)
    if args.write_md:
        section = (
            "## Dry run scale\n\n"
            f"`python bench/dry_run_scale.py --write-md{' --kind ' + args.kind if args.kind != 'tiny' else ''}"
            f"{' ' + ' '.join(map(str, args.counts)) if args.counts != [3000, 6000, 12000] else ''}`: "
            f"`snakemake -n --quiet rules` on the demo config with "
            f"{', '.join(f'{n:,}' for n in args.counts)} extra backbones, each {KINDS[args.kind]}. "
            "Wall and CPU time and peak RSS of the one process; a linear dry run has a ratio a little under "
            "the counts' ratio (its start is a fixed cost) and a level cost per 1,000 more backbones. "
            f"Machine: {machine(sys.executable)}.\n\n{table}\n"
        )
        write_section("Dry run scale", section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
