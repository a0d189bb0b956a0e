"""The report's run summary (workflow/report/workflow.rst, rendered by Snakemake's report with Jinja2): what
a reader sees in the browser reads as text, not as a Python value."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import jinja2

from pipeline.workflow_config import resolve_config

REPO = Path(__file__).parents[2]


def rendered(config_name: str) -> str:
    config = json.loads(json.dumps(resolve_config(REPO / "workflow" / "config" / config_name), default=str))
    config.setdefault("run", config_name)
    template = jinja2.Template((REPO / "workflow" / "report" / "workflow.rst").read_text(encoding="utf-8"))
    return template.render(snakemake=SimpleNamespace(config=config))


def test_the_presets_read_as_words_not_a_python_dict():
    demo = rendered("demo.yaml")
    assert "the presets burt (read by burt) (" in demo and "{'burt'" not in demo
    paper = rendered("paper-en.yaml")
    assert "the presets burt (read by burt), ulr (read by misad) (" in paper
