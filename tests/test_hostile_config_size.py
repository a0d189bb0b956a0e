"""A config with thousands of models plans in time linear in its size (docs/behaviour.md, BENCHMARKS.md
"Dry run at scale"). Snakemake copies a rule's wildcard constraints into each of its paths and rewrites them
once per job: a constraint listing every model made each job cost as much as the config was long, and the dry
run grow with the square of the count (3,000 backbones: 50 s; 12,000: past 300 s). Here, no rule's paths
may grow with the number of backbones, tiny or pinned on the hub, nor of pre-training runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from testdata import REPO

HASH = "0123456789abcdef0123456789abcdef01234567"


def config_with(count: int, kind: str, folder: Path) -> Path:
    """The demo config with ``count`` more backbones of ``kind``; ``pretrained``: each also pre-trained."""
    config = yaml.safe_load((REPO / "workflow/config/demo.yaml").read_text())
    names = [f"extra-{k}" for k in range(count)]
    for k, name in enumerate(names):
        config["models"]["backbones"][name] = f"hub:org/model-{k}@{HASH}" if kind == "hub" else "tiny"
    if kind == "pretrained":
        config["pretrain"]["backbones"] += names
    path = folder / f"{kind}-{count}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def longest_path_pattern(config: Path) -> tuple[int, str]:
    """The longest output, log or benchmark pattern of any rule (constraints included), and its rule."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    cwd = Path.cwd()
    os.chdir(REPO)
    try:
        with SnakemakeApi(OutputSettings()) as api:
            workflow = api.workflow(
                resource_settings=ResourceSettings(cores=1),
                config_settings=ConfigSettings(configfiles=[config]),
                snakefile=REPO / "Snakefile",
                workdir=REPO,
            )._workflow
            return max(
                (len(str(path)), rule.name)
                for rule in workflow.rules
                for path in [*rule.output, *rule.log, *([rule.benchmark] if rule.benchmark else [])]
            )
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize("kind", ["tiny", "hub", "pretrained"])
def test_no_rule_path_grows_with_the_number_of_models(tmp_path, kind):
    few = longest_path_pattern(config_with(3, kind, tmp_path))
    many = longest_path_pattern(config_with(400, kind, tmp_path))
    assert many == few, f"{many[1]}: its paths grew from {few[0]} to {many[0]} characters with 400 {kind} backbones"
