"""Nested ``--config`` overrides get the schema's types; a bad key gets one line, not the schema."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from testdata import REPO

from pipeline.workflow_config import ConfigError, check, coerce

SCHEMA = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())


def test_strings_become_the_types_the_schema_asks_for():
    config = {
        "run": "demo",
        "data_root": "d",
        "corpus": {
            "languages": ["en"],
            "shards": "3",
            "en": {"dumps": {"p": {"path": "x.xml"}}, "keep_lists": "true", "clean": {"max_tokens": "40"}},
        },
        "ngrams": {"top_k": "100", "threshold": "1.5", "lowercase": "false"},
        "pretrain": {"lr": "1e-4", "max_steps": "0"},
        "kenlm": {"memory": "4G"},
    }
    coerce(config, SCHEMA)
    assert config["corpus"]["shards"] == 3 and config["corpus"]["en"]["keep_lists"] is True
    assert config["corpus"]["en"]["clean"]["max_tokens"] == 40
    assert config["ngrams"] == {"top_k": 100, "threshold": 1.5, "lowercase": False}
    assert config["pretrain"] == {"lr": 1e-4, "max_steps": 0}
    assert config["kenlm"]["memory"] == "4G"  # a string stays a string
    assert coerce({"ngrams": {"threshold": "null"}}, SCHEMA)["ngrams"]["threshold"] is None
    check(config, SCHEMA)


def test_a_string_that_is_no_number_is_reported_with_its_key():
    config = coerce(
        {
            "run": "r",
            "data_root": "d",
            "corpus": {"languages": ["en"], "en": {"dumps": {"p": {"path": "x"}}}},
            "ngrams": {"top_k": "many"},
        },
        SCHEMA,
    )
    with pytest.raises(ConfigError, match=r"ngrams.top_k: 'many' is not of type 'integer'"):
        check(config, SCHEMA)


def test_an_unknown_key_names_it_and_the_allowed_ones():
    with pytest.raises(ConfigError) as caught:
        check(
            {
                "run": "r",
                "data_root": "d",
                "corpus": {"languages": ["en"], "en": {"dumps": {"p": {"path": "x"}}}},
                "ngrams": {"topk": 100},
            },
            SCHEMA,
        )
    message = str(caught.value)
    assert "unknown key ngrams.topk; allowed: batch_chars, corpus_ablation, entities" in message
    assert len(message.splitlines()) == 2


def snakemake(*args):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [str(Path(sys.executable).parent / "snakemake"), "-n", "-p", "--cores", "1", "--forceall", *args],
        check=False,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_readme_example_overrides_a_nested_number():
    """README: ``--config ngrams='{top_k: 100}'`` (the shell passes ngrams={top_k: 100})."""
    result = snakemake("--config", "ngrams={top_k: 100, lowercase: true}", "corpus={shards: 3}")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-2000:]
    ngrams = [line for line in output.splitlines() if line.startswith("Shell command: python -m pipeline ngrams")]
    assert ngrams and all("--top-k 100" in line and "--lowercase" in line for line in ngrams)
    assert "shard-002" in output


def test_an_unknown_override_is_one_line_not_the_schema():
    result = snakemake("--config", "ngrams={topk: 100}")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "unknown key ngrams.topk; allowed: batch_chars, corpus_ablation, entities, lowercase" in output
    assert len(output.splitlines()) < 15
