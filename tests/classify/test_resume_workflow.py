"""The workflow passes classify.resume_every only to jobs that fuse (issue 47 §5): a job whose K is capped to 1
by the GPU's memory trains its runs one by one, and classify refuses --resume-every without fusing."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml
from testdata import dry_run_jobs

from pipeline.fused_groups import fused_runs
from pipeline.workflow_config import resolve_config

REPO = Path(__file__).resolve().parents[2]


def test_a_job_capped_to_one_run_at_a_time_gets_no_resume_every(tmp_path):
    """paper-en's BERT-large pair on RTE at length 512: batch 16 fuses 2 runs and saves every 100 steps; batch 32
    fits one run per GPU (pipeline/budget/memory.py: a bf16 step's weight copies and float32 layer-norm and softmax
    outputs counted), so its job gets --fuse 1 and no --resume-every."""
    config = yaml.safe_load((REPO / "workflow/config/paper-en.yaml").read_text(encoding="utf-8"))
    section = config["classify"]
    section["glue"] = {"models": ["bert-large-uncased", "bert-large-uncased+mlm"], "tasks": ["rte"]}
    section["batch_sizes"] = {"glue": [16, 32], "clue": [8, 16]}
    section["max_length"] = {"glue": 512, "clue": [128, 256]}
    section["resume_every"] = 100
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    spec = resolve_config(path)["models"]["backbones"]["bert-large-uncased"]
    assert [fused_runs(spec, section["fuse"], batch, 512, "rte") for batch in (16, 32)] == [2, 1]
    done, blocks = dry_run_jobs(path, tmp_path / "data", print_commands=True)
    assert done.returncode == 0, done.stderr[-3000:]
    found = {}
    for block in blocks[1:]:
        command = re.search(r"^Shell command: (.*)$", block, re.MULTILINE)
        if block.startswith("classify_fused_") and command:
            words = shlex.split(command.group(1).split(" > ", 1)[0])
            options = {word: words[i + 1] for i, word in enumerate(words) if word in ("--batch-size", "--fuse")}
            found[options["--batch-size"]] = (options["--fuse"], words.count("--resume-every"))
    assert found == {"16": ("2", 1), "32": ("1", 0)}
