"""The dry run's time against the config's size: ``snakemake -n`` on the demo config with 1,000 and 3,000
extra backbones (each a "tiny" BERT, so each adds its jobs: tiny_model, evaluate_en, figures), on this tree
and on a baseline commit (a ``git worktree`` of ``--baseline``, default the commit before the wildcard
constraints stopped listing every name).

A dry run linear in the config's size takes about 3x the time at 3,000 that it takes at 1,000; before, each
job's paths carried an alternation of every model's name, and the dry run grew with the square of the count
(docs/design.md, BENCHMARKS.md "Dry run at scale").

    python bench/dry_run_scale.py --write-md          # the "## Dry run at scale" section
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from harness import REPO, machine, markdown_table, measure, write_section

BASELINE = "cf1478e"  # the last commit whose rules constrained labels with one_of(every name)


def config_with(count: int, folder: Path) -> Path:
    """The demo config with ``count`` more tiny backbones (its own run name, so no result is shared)."""
    config = yaml.safe_load((REPO / "workflow/config/demo.yaml").read_text())
    config["run"] = f"dry-run-scale-{count}"
    config["data_root"] = str(REPO / config["data_root"])
    for k in range(count):
        config["models"]["backbones"][f"extra-{k}"] = "tiny"
    path = folder / f"backbones-{count}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def dry_run(tree: Path, config: Path, log: Path) -> float:
    return measure(
        [sys.executable, "-m", "snakemake", "-n", "-q", "--cores", "1", "--configfile", str(config)],
        log,
        env={"PYTHONPATH": str(tree)},
        cwd=tree,
    ).wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--counts", type=int, nargs=2, default=[1000, 3000])
    parser.add_argument("--baseline", default=BASELINE, help="commit to compare with ('' for none)")
    parser.add_argument("--write-md", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        trees = {"this tree": REPO}
        if args.baseline:
            subprocess.run(["git", "worktree", "add", "--detach", str(scratch / "baseline"), args.baseline], check=True)
            trees[f"baseline {args.baseline}"] = scratch / "baseline"
        try:
            rows = []
            for name, tree in trees.items():
                times = [dry_run(tree, config_with(n, scratch), scratch / f"{n}.log") for n in args.counts]
                ratio = times[1] / times[0]
                rows.append([name, *(f"{t:.1f} s" for t in times), f"{ratio:.2f}"])
                print(
                    f"{name}: {args.counts[0]} backbones {times[0]:.1f} s, {args.counts[1]} {times[1]:.1f} s, ratio {ratio:.2f}"
                )
        finally:
            if args.baseline:
                subprocess.run(["git", "worktree", "remove", "--force", str(scratch / "baseline")], check=True)
    head = ["tree", f"{args.counts[0]:,} backbones", f"{args.counts[1]:,} backbones", "ratio"]
    table = markdown_table(head, rows)
    print(table)
    if args.write_md:
        section = (
            "## Dry run at scale\n\n"
            f"`python bench/dry_run_scale.py --write-md`: `snakemake -n` on the demo config with {args.counts[0]:,} "
            f"and {args.counts[1]:,} extra tiny backbones (each adds a tiny_model, an evaluate_en and a figures "
            "job), wall time; a linear dry run has a ratio near "
            f"{args.counts[1] / args.counts[0]:.0f}. Machine: {machine(sys.executable)}.\n\n{table}\n"
        )
        write_section("Dry run at scale", section)


if __name__ == "__main__":
    main()
