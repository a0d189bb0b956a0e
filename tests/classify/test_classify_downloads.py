"""classify.download: the configured GLUE tasks' splits come from GLUE's release archives, each checked
by a published checksum; a configured task whose source has none stops the workflow at parse time."""

from __future__ import annotations

import yaml
from testdata import REPO, dry_run_jobs

PAPER_EN = REPO / "workflow" / "config" / "paper-en.yaml"
SOURCES = REPO / "workflow" / "data" / "classification-sources.yaml"


def test_paper_glue_archives_are_fetched_with_their_checksums_and_unpacked_for_the_jobs(tmp_path):
    done, jobs = dry_run_jobs(PAPER_EN, tmp_path / "data", print_commands=True)
    assert done.returncode == 0, done.stderr[-2000:]
    archives = yaml.safe_load(SOURCES.read_text())["archives"]
    for name in ("glue-MNLI.zip", "glue-QNLIv2.zip", "glue-QQP-clean.zip", "glue-STS-B.zip"):
        (job,) = [job for job in jobs if job.startswith("download:") and f"downloads/{name}\n" in job]
        spec = archives[name]
        flags = [f"--{algorithm} {spec[algorithm]}" for algorithm in ("sha256", "md5") if spec.get(algorithm)]
        assert flags and all(flag in job for flag in flags), name
        assert f"--url {spec['url']}" in job
    unpacked = tmp_path / "data" / "glue" / "QQP" / "train.tsv"
    assert any(job.startswith("classify_unpack:") and f"output: {unpacked}\n" in job for job in jobs)
    # paper-en fuses its models' runs by backbone (classify.fuse_checkpoints): classify_fused_* jobs read it
    assert any(
        job.startswith(("classify:", "classify_fused_")) and "task=qqp" in job and str(unpacked) in job for job in jobs
    )
    # CLUE's archives (no published checksum) are not part of a GLUE-only run
    assert "cluebenchmark" not in done.stdout


def test_a_configured_task_without_a_checksum_stops_the_workflow(tmp_path):
    clue = "classify={'clue': {'models': ['bert-base-uncased'], 'tasks': ['tnews']}, 'download': True}"
    done, _ = dry_run_jobs(PAPER_EN, tmp_path / "data", clue)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "classify.download needs a checksum" in output and "tnews_public.zip" in output
    assert "iflytek_public.zip" not in output  # only the configured tasks' sources are named
