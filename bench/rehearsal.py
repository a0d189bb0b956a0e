"""Paper-scale rehearsal of the corpus half of the DAG, and its projection to full Wikipedia.

Builds the English sample dump replicated (fresh page ids per copy) into a Wikimedia-style
multistream dump with its index (100 pages per bz2 stream) of at least ``--words`` words of
clean text, then runs the workflow itself on it, ``extract_slice`` → ``merge_slices`` →
``clean`` → ``ngrams`` → ``sample``, with ``--slices`` extraction jobs and ``--shards`` shards
on ``--cores`` cores (wall time and job count). Then it re-runs one job of each stage alone,
with the workflow's own shell command, under ``os.wait4`` (exact CPU time and peak RSS of
the job and its children; Snakemake's benchmark files sample every 30 s after the first 30,
which misses most of a minute-long job), and reports per stage, the jobs being of equal size:

* throughput per core (words of clean text per CPU-second; XML MB per CPU-second for extract);
* peak memory per job;
* the job count;
* the projection to full English Wikipedia (2,266M words, BURT §4.1 / ULR-BERT §4.1) and
  Chinese Wikipedia (380M characters, BURT §4.1, taken as 380M tokens at the English per-token
  rates) with the paper configs' job counts (32 / 8 slices, 64 / 16 shards) on 1, 4 and 16
  nodes of 32 cores: wall time per stage (a stage's jobs run side by side up to the cores, each
  taking its share of the stage's CPU time) and the critical path.

The dump and the run live under ``--work`` (default ``bench/work/rehearsal``, git-ignored).

    flock /work/heavy.lock python bench/rehearsal.py --write-md     # the "## Scaling" section
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import math
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(
    0, str(Path(__file__).resolve().parents[1] / "tests")
)  # test-only helpers (pmi_python, multistream_writer)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness import REPO, Run, machine, markdown_table, measure, write_section
from multistream_writer import write_multistream

SAMPLE = Path("wiki/en/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
STAGES = ["extract_slice", "merge_slices", "clean", "ngrams", "sample"]  # merge_slice_stats: one tiny job
TARGETS = {"enwiki (2,266M words)": (2_266e6, 32, 64), "zhwiki (380M characters)": (380e6, 8, 16)}
NODE_CORES = 32
WORDS_PER_COPY_GUESS = 400_000  # clean words per copy of the sample; the real count is measured


def build(args, sample: Path) -> tuple[Path, Path, int]:
    copies = math.ceil(args.words / WORDS_PER_COPY_GUESS)
    dump = args.work / f"enwiki-rehearsal-x{copies}-multistream.xml.bz2"
    index = args.work / f"enwiki-rehearsal-x{copies}-multistream-index.txt.bz2"
    if not (dump.exists() and index.exists()):
        print(f"writing {dump} ({copies} copies of the sample) ...", flush=True)
        write_multistream(sample, dump, index, copies=copies)
    return dump, index, copies


def write_config(args, dump: Path, index: Path) -> Path:
    config = yaml.safe_load((REPO / "workflow/config/demo.yaml").read_text())
    config.update(run=args.run, data_root=str(args.work))
    config["corpus"] = {
        "languages": ["en"],
        "shards": args.shards,
        "en": {"dumps": {"rehearsal": {"path": dump.name, "index": {"path": index.name}, "slices": args.slices}}},
    }
    config["ngrams"] = {}
    config["sample"] = {"size": args.sample}
    config["evaluate"]["tasks"] = {"en": []}
    path = args.work / "rehearsal.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def run_workflow(args, config: Path) -> float:
    targets = [f"results/{args.run}/sample/ulr/en/rehearsal/shard-{k:03d}.parquet" for k in range(args.shards)]
    targets.append(f"results/{args.run}/corpus/en/docs/rehearsal/extract-stats.json")
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        *targets,
        "--cores",
        str(args.cores),
        "--configfile",
        str(config),
        "--quiet",
        "rules",
    ]
    started = time.perf_counter()
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    subprocess.run(cmd, cwd=REPO, check=True, env=env)
    return time.perf_counter() - started


def job_commands(args, config: Path) -> dict[str, str]:
    """The shell command of the first job of each stage, as the workflow runs it."""
    targets = [f"results/{args.run}/sample/ulr/en/rehearsal/shard-{k:03d}.parquet" for k in range(args.shards)]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    plan = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            *targets,
            "-n",
            "-p",
            "--forceall",
            "--cores",
            "1",
            "--configfile",
            str(config),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    commands, rule = {}, None
    for line in plan.splitlines():
        if line.startswith("rule "):
            rule = line.removeprefix("rule ").rstrip(":")
        elif line.startswith("Shell command: ") and rule in STAGES and rule not in commands:
            commands[rule] = line.removeprefix("Shell command: ")
    return commands


def remeasure(args, config: Path) -> dict[str, Run]:
    runs = {}
    for stage, command in job_commands(args, config).items():
        print(f"re-running one {stage} job ...", flush=True)
        runs[stage] = measure(
            ["bash", "-c", f"export PYTHONPATH={REPO}; {command}"],
            args.work / f"{stage}.log",
            env={"OMP_NUM_THREADS": "1", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"},
        )
    return runs


def stage_measures(results: Path) -> dict[str, dict]:
    measures = {}
    for stage in STAGES:
        rows = []
        for tsv in sorted((results / "benchmarks" / stage).rglob("*.tsv")):
            with tsv.open() as handle:
                rows += list(csv.DictReader(handle, delimiter="\t"))

        def number(row, key):
            try:
                return float(row[key])
            except (KeyError, ValueError):
                return 0.0

        cpu = sum(number(r, "cpu_time") or number(r, "s") for r in rows)
        measures[stage] = {
            "jobs": len(rows),
            "wall": sum(number(r, "s") for r in rows),
            "cpu": cpu,
            "longest": max((number(r, "s") for r in rows), default=0.0),
            "peak_rss_mb": max((number(r, "max_rss") for r in rows), default=0.0),
        }
    return measures


def corpus_words(results: Path) -> int:
    words = 0
    for path in (results / "corpus/en/sentences/rehearsal").glob("shard-*.parquet"):
        text = pq.read_table(path, columns=["text"]).column("text")
        words += pc.sum(pc.list_value_length(pc.utf8_split_whitespace(text))).as_py() or 0
    return words


def stage_wall(core_seconds: float, jobs: int, cores: int) -> float:
    """Wall time of a stage whose ``jobs`` equal jobs share ``core_seconds``, on ``cores`` cores."""
    return math.ceil(jobs / min(jobs, cores)) * core_seconds / jobs


def projection(measures: dict, words: int) -> tuple[list[list[str]], list[str]]:
    rows, critical = [], []
    for target, (target_words, slices, shards) in TARGETS.items():
        jobs = {"extract_slice": slices, "merge_slices": shards, "clean": shards, "ngrams": shards, "sample": shards}
        for nodes in (1, 4, 16):
            cores = nodes * NODE_CORES
            walls = {
                stage: stage_wall(measures[stage]["cpu"] * target_words / words, jobs[stage], cores) for stage in STAGES
            }
            total = sum(walls.values())
            slowest = max(walls, key=walls.get)
            rows.append([target, str(nodes), *[f"{walls[s] / 60:.1f}" for s in STAGES], f"{total / 60:.1f}", slowest])
        critical.append(target)
    return rows, critical


def hours(seconds: float) -> str:
    return f"{seconds / 3600:.2f} h"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-root", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--work", type=Path, default=REPO / "bench" / "work" / "rehearsal")
    parser.add_argument("--words", type=float, default=100e6, help="clean words to reach (default 100M)")
    parser.add_argument("--slices", type=int, default=8)
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--cores", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--sample", type=int, default=500_000, help="sentences sampled (default 500,000)")
    parser.add_argument("--run", default="rehearsal")
    parser.add_argument("--write-md", action="store_true", help="update the ## Scaling section of BENCHMARKS.md")
    parser.add_argument(
        "--job-walls",
        action="store_true",
        help="no re-run: take each job's wall time from the run as its CPU time (an upper bound "
        "where other work shared the cores) and Snakemake's sampled peak RSS",
    )
    args = parser.parse_args(argv)
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    sample = args.data_root / SAMPLE
    if not sample.exists():
        raise SystemExit(f"error: {sample} not found (pass --data-root)")
    build_started = time.perf_counter()
    dump, index, copies = build(args, sample)
    build_seconds = time.perf_counter() - build_started
    config = write_config(args, dump, index)
    record = args.work / f"{args.run}-workflow.json"  # the wall time of the run that did the work
    done = (REPO / "results" / args.run / "sample/ulr/en/rehearsal/shard-000.parquet").exists() and record.exists()
    wall = run_workflow(args, config)
    if done:
        wall = json.loads(record.read_text())["wall"]
    else:
        record.write_text(json.dumps({"wall": wall}))
    results = REPO / "results" / args.run
    measures = stage_measures(results)
    if args.job_walls:
        for m in measures.values():
            m.update(cpu=m["wall"], job_cpu=m["wall"] / max(m["jobs"], 1))
    else:
        for stage, run in remeasure(args, config).items():
            measures[stage].update(
                cpu=run.cpu * measures[stage]["jobs"], job_cpu=run.cpu, job_wall=run.wall, peak_rss_mb=run.peak_rss_mb
            )
    words = corpus_words(results)
    merged = json.loads((results / "corpus/en/docs/rehearsal/extract-stats.json").read_text())
    xml_mb = merged["bytes_uncompressed"] / 1e6
    unit = "wall s" if args.job_walls else "CPU s"
    rate_unit = "words per job-second" if args.job_walls else "words per CPU-s"
    head = ["stage", "jobs", f"{unit} per job", f"{unit}, all jobs", rate_unit, "peak RSS per job MB"]
    rows = []
    for stage in STAGES:
        m = measures[stage]
        rate = f"{words / m['cpu']:,.0f}" if m["cpu"] else "n/a"
        if stage == "extract_slice" and m["cpu"]:
            rate += f" ({xml_mb / m['cpu']:.2f} XML MB)"
        rows.append([stage, str(m["jobs"]), f"{m['job_cpu']:.1f}", f"{m['cpu']:.1f}", rate, f"{m['peak_rss_mb']:.0f}"])
    proj_rows, _ = projection(measures, words)
    proj_head = ["corpus", "nodes", *[f"{s} min" for s in STAGES], "critical path min", "slowest stage"]
    command = shlex.join(["python", "bench/rehearsal.py", *(argv if argv is not None else sys.argv[1:])])
    section = "\n".join(
        [
            "## Scaling",
            "",
            f"Run {datetime.date.today().isoformat()} on {machine(sys.executable, '')}.",
            "",
            f"Command (from the repo root): `{command}`",
            "",
            (
                f"Rehearsal: the English sample written {copies} times (fresh page ids) as a multistream dump "
                f"with its index: {xml_mb:,.0f} MB of XML, {dump.stat().st_size / 1e6:,.0f} MB bz2 "
                f"(built in {build_seconds:.0f} s), {words:,} words of clean text. The workflow's corpus half "
                f"ran on {args.cores} cores with {args.slices} slices and {args.shards} shards in {wall:.0f} s "
                f"wall ({sum(m['jobs'] for m in measures.values())} jobs, and one merge_slice_stats job), on a machine "
                "shared with other work. "
                + (
                    "Per stage: each job's wall time from the rules' benchmark files, taken as its CPU time (an upper "
                    "bound: other work shared the 2 cores, load average about 4), and the peak RSS Snakemake sampled."
                    if args.job_walls
                    else "Per stage: one job re-run alone under `os.wait4` (exact CPU time and peak RSS), times the job "
                    "count (the jobs are of equal size)."
                )
            ),
            "",
            markdown_table(head, rows),
            "",
            (
                f"Projection with the paper configs' job counts (enwiki: 32 slices, 64 shards; zhwiki: 8 slices, "
                f"16 shards), on nodes of {NODE_CORES} cores, from the CPU seconds per word above (zhwiki's 380M "
                "characters taken as 380M tokens at the English rates; its OpenCC `convert` stage is not in the "
                "rehearsal). A stage's jobs run side by side up to the cores; stages follow each other on the "
                "critical path (merge_slices waits for every slice; sample for every shard)."
            ),
            "",
            markdown_table(proj_head, proj_rows),
            "",
        ]
    )
    print(section)
    Path(args.work / "scaling.json").write_text(
        json.dumps({"measures": measures, "words": words, "wall": wall, "xml_mb": xml_mb}, indent=1)
    )
    if args.write_md:
        write_section("Scaling", section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
