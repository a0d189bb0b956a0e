"""The workflow extracts a multistream dump part in `slices` jobs, with the same shards as one job."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import yaml
from testdata import REPO

MULTISTREAM = "wiki/multistream/elwikivoyage-pages-articles-p2566p2583.multistream"


def _config(tmp_path: Path, data_root: Path, run: str, slices: int) -> Path:
    config = yaml.safe_load((REPO / "workflow/config/demo.yaml").read_text())
    config.update(run=run, data_root=str(data_root))
    config["corpus"]["languages"] = ["en"]
    config["corpus"]["shards"] = 3
    del config["corpus"]["zh"]
    config["corpus"]["en"]["dumps"] = {
        "voyage": {
            "path": f"{MULTISTREAM}.xml.bz2",
            "slices": slices,
            "index": {"path": f"{MULTISTREAM}-index.xml.bz2"},
        }
    }
    config["evaluate"]["tasks"] = {"en": []}
    path = tmp_path / f"{run}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _snakemake(*args: str) -> str:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", *args], cwd=REPO, capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


def test_sliced_extraction_jobs_write_the_shards_of_one_job(data_root, tmp_path):
    runs = {slices: f"pytest-ms{slices}-{uuid.uuid4().hex[:6]}" for slices in (1, 3)}
    try:
        for slices, run in runs.items():
            config = _config(tmp_path, data_root, run, slices)
            folder = f"results/{run}/corpus/en/docs/voyage"
            targets = [f"{folder}/extract-stats.json", *(f"{folder}/shard-{k:03d}.parquet" for k in range(3))]
            plan = _snakemake(*targets, "-n", "--cores", "2", "--configfile", str(config))
            if slices > 1:  # one job per slice, one merge per shard
                assert re.search(rf"^extract_slice +{slices}$", plan, re.MULTILINE)
                assert re.search(r"^merge_slices +3$", plan, re.MULTILINE)
            else:
                assert "extract_slice" not in plan
            _snakemake(*targets, "--cores", "2", "--configfile", str(config))
        for shard in ("shard-000", "shard-001", "shard-002"):
            one, three = (
                REPO / "results" / run / "corpus/en/docs/voyage" / f"{shard}.parquet" for run in runs.values()
            )
            assert one.read_bytes() == three.read_bytes(), shard
    finally:
        for run in runs.values():
            shutil.rmtree(REPO / "results" / run, ignore_errors=True)


def test_slices_without_an_index_are_refused(data_root, tmp_path):
    config = yaml.safe_load(_config(tmp_path, data_root, "pytest-noindex", 2).read_text())
    del config["corpus"]["en"]["dumps"]["voyage"]["index"]
    path = tmp_path / "noindex.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--configfile", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode != 0 and "no multistream index" in result.stdout + result.stderr
