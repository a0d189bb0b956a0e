"""Hostile configs: names that would leave ``results/``, keys given twice (docs/behaviour.md)."""

from __future__ import annotations

import pytest
from test_workflow_config import SCHEMA, snakemake
from testdata import REPO

from pipeline.workflow_config import ConfigError, check, check_unique_keys

BASE = {"run": "r", "data_root": "d", "corpus": {"languages": ["en"], "en": {"dumps": {"p": {"path": "x"}}}}}


@pytest.mark.parametrize("name", ["..", ".", ".hidden", "a/b", "../x"])
def test_a_run_name_that_is_not_a_plain_folder_name_is_refused(name):
    with pytest.raises(ConfigError, match="run: "):
        check({**BASE, "run": name}, SCHEMA)


@pytest.mark.parametrize("name", ["..", "."])
def test_a_model_name_that_is_not_a_plain_folder_name_is_refused(name):
    with pytest.raises(ConfigError, match="does not match"):
        check({**BASE, "models": {"backbones": {name: "tiny"}}}, SCHEMA)


def test_names_with_dots_inside_stay_allowed():
    check({**BASE, "run": "paper-en.v2", "models": {"backbones": {"bert-base.1": "tiny"}}}, SCHEMA)


def test_run_dot_dot_writes_nothing_outside_results():
    def outside_results():  # what a run's outputs would add to the repository root (.snakemake: the lock)
        return {p.name for p in REPO.iterdir()} - {".snakemake"}

    before = outside_results()
    result = snakemake("--config", "run=..", "--until", "extract")
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "run: '..' does not match" in output, output[-2000:]
    assert outside_results() == before


def test_a_key_given_twice_in_a_configfile_is_refused(tmp_path):
    config = tmp_path / "twice.yaml"
    config.write_text((REPO / "workflow" / "config" / "demo.yaml").read_text() + "run: other\n")
    with pytest.raises(
        ConfigError, match=r"twice.yaml: key 'run' given twice in one mapping \(line \d+ and line \d+\)"
    ):
        check_unique_keys([config])
    result = snakemake("--configfile", str(config))
    assert result.returncode != 0 and "key 'run' given twice" in result.stdout + result.stderr


def test_a_key_given_twice_deeper_down_is_refused(tmp_path):
    config = tmp_path / "nested.yaml"
    config.write_text("run: r\npretrain:\n  lr: 5.0e-5\n  batch_size: 8\n  lr: 1.0e-4\n")
    with pytest.raises(ConfigError, match=r"key 'lr' given twice in one mapping \(line 3 and line 5\)"):
        check_unique_keys([config])


def test_the_shipped_configs_have_no_key_twice():
    check_unique_keys(sorted((REPO / "workflow" / "config").glob("*.yaml")))
