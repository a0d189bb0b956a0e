"""CI: a demo run on the SLURM cluster equals the local run, and its GPU jobs were submitted right.

Usage: python .ci/compare_runs.py LOCAL_RUN CLUSTER_RUN SNAKEMAKE_VERBOSE_LOG

Every output of the local run (logs and benchmarks aside) must exist in the cluster run with
the same content: Parquet tables equal (their metadata names the run's paths), model weights,
KenLM binaries byte for byte, word vectors equal (gensim's file also pickles the
time it was made), metrics, stats and tables with the same numbers (timings, code version and
provenance aside, the run's name replaced; also in model cards). Figures only need to exist: PCA and t-SNE run with
the job's thread count, and float sums in another order move a pixel.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

import pyarrow.parquet as pq

SKIPPED = {"logs", "benchmarks"}
# Timings of the stats sidecars (*.stats.json, stats.json); metrics carry none.
# "run": the scoreboard names its run, as provenance does
VOLATILE = {"provenance", "source", "code_version", "seconds", "words_per_second", "tokens_per_second", "run"}
RUN_NAME = re.compile(r"results/[^/\s]+/")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def numbers(value):
    """A JSON document without its provenance and timings (which name the run and the clock)."""
    if isinstance(value, dict):
        return {k: numbers(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [numbers(v) for v in value]
    if isinstance(value, str):
        return RUN_NAME.sub("results/RUN/", value)
    return value


def same(local: Path, cluster: Path) -> bool:
    if local.name == ".pipeline-files.json":  # a folder's record of what it wrote, each file with its hash:
        # the same files listed; their contents are compared file by file below, some by numbers alone
        return set(json.loads(local.read_text())["files"]) == set(json.loads(cluster.read_text())["files"])
    if local.suffix == ".parquet":
        return pq.read_table(local).equals(pq.read_table(cluster))
    if local.suffix == ".json":
        return numbers(json.loads(local.read_text())) == numbers(json.loads(cluster.read_text()))
    if local.suffix == ".kv":
        from gensim.models import KeyedVectors

        a, b = KeyedVectors.load(str(local)), KeyedVectors.load(str(cluster))
        return a.index_to_key == b.index_to_key and (a.vectors == b.vectors).all()
    if local.suffix in (".jsonl", ".log", ".png"):  # training logs (timings), figures (see above)
        return True
    if local.suffix in (".md", ".csv", ".tex", ".html"):  # model cards name their base model by its run path
        return RUN_NAME.sub("results/RUN/", local.read_text()) == RUN_NAME.sub("results/RUN/", cluster.read_text())
    return digest(local) == digest(cluster)


def main(local_run: str, cluster_run: str, log_path: str) -> int:
    local, cluster = Path(local_run), Path(cluster_run)
    files = [p for p in sorted(local.rglob("*")) if p.is_file() and not SKIPPED & set(p.relative_to(local).parts)]
    problems = []
    for path in files:
        other = cluster / path.relative_to(local)
        if not other.exists():
            problems.append(f"missing in the cluster run: {other}")
        elif not same(path, other):
            problems.append(f"differs: {path.relative_to(local)}")
    calls = [
        line.split("sbatch call: ", 1)[1] for line in Path(log_path).read_text().splitlines() if "sbatch call: " in line
    ]
    gpu_calls = [c for c in calls if "--gpus" in c]
    if not any(re.search(r"--comment '?rule_pretrain_", c) for c in gpu_calls):
        problems.append("pretrain was not submitted as a GPU job")
    for call in gpu_calls:
        if not re.search(r"-p gpu\b", call) or not re.search(r"--cpus-per-gpu=\d+", call):
            problems.append(f"GPU job without its partition or CPUs: {call}")
    cpu_calls = [c for c in calls if "--gpus" not in c]
    for call in cpu_calls:
        if not re.search(r"-p cpu\b", call) or "--cpus-per-task=" not in call:
            problems.append(f"CPU job without its partition or CPUs: {call}")
    print(f"compared {len(files)} files; {len(calls)} sbatch calls ({len(gpu_calls)} GPU jobs)")
    if not gpu_calls:
        problems.append("no GPU job was submitted")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
