"""Every input of the sample config can be fetched: a public URL and the checksum of our copy."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import yaml
from testdata import REPO, dry_run_jobs

SAMPLE = REPO / "workflow" / "config" / "sample.yaml"


def test_every_sample_dump_names_its_source_and_checksum(data_root):
    corpus = yaml.safe_load(SAMPLE.read_text())["corpus"]
    dumps = [spec for lang in corpus["languages"] for spec in corpus[lang]["dumps"].values()]
    assert len(dumps) == 3
    for spec in dumps:
        assert spec["url"].startswith("https://"), spec["path"]
        assert hashlib.sha256((data_root / spec["path"]).read_bytes()).hexdigest() == spec["sha256"], spec["path"]
        if "member" in spec:  # a file inside a PyPI wheel: the wheel itself is pinned too
            assert spec["url"].endswith(".whl") and len(spec["archive_sha256"]) == 64


def test_an_empty_data_root_is_built_by_downloads_alone(tmp_path):
    """With nothing under data_root, the DAG still resolves: every missing input is a download job."""
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "-n",
        "--quiet",
        "rules",
        "--cores",
        "1",
        "--configfile",
        str(SAMPLE),
        "--config",
        f"data_root={tmp_path / 'data'}",
        "--until",
        "download",
    ]
    done = subprocess.run(command, check=False, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    counts = dict(line.split()[:2] for line in done.stdout.splitlines() if line.startswith(("download ", "total ")))
    sources = yaml.safe_load((REPO / "workflow" / "data" / "evaluation-sources.yaml").read_text())
    dumps = yaml.safe_load(SAMPLE.read_text())["corpus"]
    expected = sum(len(dumps[lang]["dumps"]) for lang in dumps["languages"]) + len(
        {path for files in sources.values() for path in files}
    )
    assert counts == {"download": str(expected), "total": str(expected)}


def test_every_job_of_the_sample_finds_its_inputs_on_an_empty_data_root(tmp_path):
    """The whole sample DAG (not only the downloads) resolves from nothing: classify's GLUE training
    sets, the two rebuilt from parts included, are download jobs that the classify jobs wait for."""
    root = tmp_path / "data"
    done, jobs = dry_run_jobs(SAMPLE, root)
    assert done.returncode == 0, done.stderr[-2000:]
    for path in ("glue/CoLA/train.tsv", "glue/RTE/train.tsv"):
        assert sum(job.startswith("download:") and f"output: {root / path}\n" in job for job in jobs) == 1, path
        assert any(job.startswith("classify:") and str(root / path) in job for job in jobs), path
