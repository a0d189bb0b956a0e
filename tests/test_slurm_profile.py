"""The SLURM profile as shipped: the sbatch line the executor plugin builds for every job.

Each config is planned (a dry run, threads uncapped as in a cluster run) with and without
workflow/profiles/slurm; every job's resources are handed to the plugin's own functions that
build the sbatch call (``get_submit_command``, ``set_gres_string``, the partition choice), and
the line is checked: GPUs, CPUs, memory and time as the rule declares them. GPU rules are the
rules whose jobs ask for a ``gpu``; each has one entry under the profile's ``set-resources``.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
import yaml
from testdata import REPO

slurm_plugin = pytest.importorskip("snakemake_executor_plugin_slurm")
from snakemake_executor_plugin_slurm.partitions import get_best_partition, read_partition_file
from snakemake_executor_plugin_slurm.submit_string import get_submit_command
from snakemake_executor_plugin_slurm.utils import set_gres_string

PROFILE = REPO / "workflow" / "profiles" / "slurm"
CONFIGS = ["demo.yaml", "paper-en.yaml", "paper-zh.yaml"]
# The evaluations that encode with a transformer; baselines (bags of vectors, lexical) need no GPU.
CPU_ONLY_LABELS = re.compile(r"(^|\.)(bm25|tfidf|input-embeddings)$|^word2vec-")


class _Resources(dict):
    __getattr__ = dict.get


class PlannedJob:
    """What the plugin reads of a job: its rule name, threads, wildcards and resources."""

    def __init__(self, name: str, fields: dict[str, str]):
        self.name = name
        self.threads = int(fields.get("threads", 1))
        self.wildcards = fields.get("wildcards", "")
        self.resources = _Resources()
        for item in fields.get("resources", "").split(", "):
            key, _, value = item.partition("=")
            self.resources[key] = int(value) if value.isdigit() else value
        self.is_local = name in local_rules()

    def __repr__(self) -> str:
        return f"{self.name}[{self.wildcards}]"


def _snakemake(*args: str) -> str:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", *args], cwd=REPO, capture_output=True, text=True, env=env, check=False
    )
    if result.returncode != 0:
        raise AssertionError(f"snakemake -n {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout + result.stderr


@cache
def planned_jobs(config: str, profile: bool) -> tuple[PlannedJob, ...]:
    # A cluster run does not cap threads at the local cores; --cores 1024 plans it the same way.
    # --forceall: every job of the config, whatever outputs an earlier local run left in results/
    args = ["--cores", "1024", "--forceall", "--configfile", f"workflow/config/{config}"]
    if profile:
        args += ["--profile", str(PROFILE.relative_to(REPO))]
    jobs, name, fields = [], None, {}
    for line in _snakemake(*args).splitlines():
        match = re.match(r"^(local)?rule (\w+):$", line)
        if match:
            if name:
                jobs.append(PlannedJob(name, fields))
            name, fields = match.group(2), {}
        elif name and re.match(r"^    (wildcards|threads|resources): ", line):
            key, _, value = line.strip().partition(": ")
            fields[key] = value
        elif name and not line.startswith("    "):
            jobs.append(PlannedJob(name, fields))
            name = None
    return tuple(job for job in jobs if job.name != "all")


@cache
def local_rules() -> frozenset[str]:
    """Rules that run where snakemake runs (``localrules:``), never submitted."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    cwd = Path.cwd()
    os.chdir(REPO)
    try:
        with SnakemakeApi(OutputSettings()) as api:
            workflow = api.workflow(
                resource_settings=ResourceSettings(cores=1),
                config_settings=ConfigSettings(),
                snakefile=REPO / "Snakefile",
                workdir=REPO,
            )
            return frozenset(workflow._workflow._localrules)
    finally:
        os.chdir(cwd)


def profile() -> dict:
    return yaml.safe_load((PROFILE / "config.yaml").read_text())


def sbatch_line(job: PlannedJob) -> str:
    partitions = read_partition_file(REPO / profile()["slurm-partition-config"])
    partition = get_best_partition(partitions, job, logging.getLogger("slurm-plugin"))
    params = {
        "run_uuid": "run",
        "slurm_logfile": "slurm.log",
        "comment_str": f"rule_{job.name}",
        "account": "",
        "partition": f"-p {partition}" if partition else "",
        "workdir": str(REPO),
    }
    return get_submit_command(job, params) + set_gres_string(job)


def gpu_rules(config: str) -> set[str]:
    return {job.name for job in planned_jobs(config, True) if job.resources.get("gpu")}


def test_profile_needs_no_conda_and_overrides_no_cpus():
    settings = profile()
    assert "software-deployment-method" not in settings and "use-conda" not in settings
    assert "cpus_per_task" not in settings.get("default-resources", {})
    assert all("cpus_per_task" not in entry for entry in settings["set-resources"].values())


def test_set_resources_name_exactly_the_gpu_rules():
    rules = set(_snakemake("--list-rules", "--configfile", "workflow/config/demo.yaml").split())
    listed = set(profile()["set-resources"])
    assert listed <= rules, f"set-resources names rules that do not exist: {sorted(listed - rules)}"
    gpu = set().union(*(gpu_rules(config) for config in CONFIGS))
    # the rules a config makes one per group of models (classify_fused_*) declare cpus_per_gpu themselves
    own = {job.name for config in CONFIGS for job in planned_jobs(config, True) if job.resources.get("cpus_per_gpu")}
    gpu -= own - listed
    assert gpu <= listed, f"GPU rules without a set-resources entry (their cpus_per_gpu): {sorted(gpu - listed)}"
    planned = {job.name for config in CONFIGS for job in planned_jobs(config, True)}
    assert not (listed & planned) - gpu, f"set-resources entries for rules that ask no GPU: {(listed & planned) - gpu}"


@pytest.mark.parametrize("config", CONFIGS)
def test_sbatch_line_of_every_gpu_job(config):
    local = {(job.name, job.wildcards): job for job in planned_jobs(config, False)}
    cpus_per_gpu = {rule: entry["cpus_per_gpu"] for rule, entry in profile()["set-resources"].items()}
    checked = 0
    for job in planned_jobs(config, True):
        gpus = job.resources.get("gpu") or 0
        if not gpus:
            continue
        cpus_per_gpu.setdefault(job.name, job.resources.get("cpus_per_gpu"))  # a rule that declares its own
        line = sbatch_line(job)
        declared = local[(job.name, job.wildcards)]
        assert " -p gpu" in line, (job, line)
        assert line.endswith(f" --gpus={gpus}") or f"--gpus={job.resources.get('gpu_model')}:{gpus}" in line
        assert f"--cpus-per-gpu={cpus_per_gpu[job.name]}" in line, (job, line)
        assert cpus_per_gpu[job.name] * gpus == declared.threads, f"{job}: threads and cpus_per_gpu disagree"
        assert f"--mem {declared.resources['mem_mb']}" in line and f"-t {declared.resources['runtime']}" in line
        checked += 1
    assert checked, f"{config}: no GPU job planned"


@pytest.mark.parametrize("config", CONFIGS)
def test_cpu_jobs_ask_no_gpu_and_their_threads(config):
    local = {(job.name, job.wildcards): job for job in planned_jobs(config, False)}
    for job in planned_jobs(config, True):
        label = dict(item.split("=", 1) for item in job.wildcards.split(", ") if "=" in item).get("label", "")
        if job.name.startswith("evaluate") and CPU_ONLY_LABELS.search(label):
            assert not job.resources.get("gpu"), job
        if job.resources.get("gpu") or job.is_local:
            continue
        line = sbatch_line(job)
        declared = local[(job.name, job.wildcards)]
        assert "--gpus" not in line and " -p cpu" in line, (job, line)
        assert f"--cpus-per-task={declared.threads}" in line, (job, line)
        assert f"--mem {declared.resources['mem_mb']}" in line and f"-t {declared.resources['runtime']}" in line


def test_downloads_stay_on_the_submit_host():
    downloads = [job for job in planned_jobs("paper-en.yaml", True) if job.name == "download"]
    assert downloads and all(job.is_local for job in downloads)


def test_kenlm_memory_is_a_share_of_the_job():
    output = _snakemake(
        "--cores",
        "1024",
        "--configfile",
        "workflow/config/paper-en.yaml",
        "--profile",
        str(PROFILE.relative_to(REPO)),
        "--forcerun",
        "kenlm",
        "--until",
        "kenlm",
    )
    mem_mb = next(job.resources["mem_mb"] for job in planned_jobs("paper-en.yaml", True) if job.name == "kenlm")
    share = yaml.safe_load((REPO / "workflow/config/paper-en.yaml").read_text())["kenlm"]["memory"]
    assert f"--memory {int(mem_mb * float(share.rstrip('%')) / 100)}M" in output
