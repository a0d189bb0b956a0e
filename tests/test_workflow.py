"""The Snakemake workflow: lint, config validation, the demo DAG end to end, reruns."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from testdata import DEMO_DATA, REPO

SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def snakemake(*args, check=True):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run([*SNAKEMAKE, *args], check=False, cwd=REPO, capture_output=True, text=True, env=env)
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


@pytest.fixture
def run_name():
    name = f"pytest-{uuid.uuid4().hex[:8]}"
    yield name
    shutil.rmtree(REPO / "results" / name, ignore_errors=True)


@pytest.fixture
def demo_run_name(run_name):
    """The end-to-end demo's run: a run of its own, removed afterwards; or, where ``ULR_CI_DEMO_RUN`` names one,
    that run, kept: CI's SLURM part compares its cluster demo with this demo instead of running a local demo of
    its own (.ci/run, .ci/slurm_cluster.sh)."""
    kept = os.environ.get("ULR_CI_DEMO_RUN", "")
    if not kept:
        return run_name
    shutil.rmtree(REPO / "results" / kept, ignore_errors=True)
    return kept


def test_demo_dag_runs_end_to_end(demo_run_name, tmp_path):
    run_name = demo_run_name
    snakemake("--cores", "2", "--config", f"run={run_name}")
    results = REPO / "results" / run_name
    for lang in ("en", "zh"):
        files = sorted((results / "corpus" / lang / "sentences" / "demo").glob("*.parquet"))
        assert [f.name for f in files] == ["shard-000.parquet", "shard-001.parquet"]
        assert sum(pq.read_metadata(f).num_rows for f in files) > 50
        for shard in ("shard-000", "shard-001"):
            for preset in ("ulr", "burt"):  # the demo's objectives read both (ngrams.presets)
                marked = pq.read_table(results / "ngrams" / preset / lang / "demo" / shard / "marked.parquet")
                assert sum(len(spans) for spans in marked["spans"].to_pylist()) > 0, preset
            sources = pq.read_table(results / "ngrams-corpus" / lang / "demo" / shard / "ngrams.parquet")["source"]
            assert "corpus" in sources.to_pylist()
        assert (results / "kenlm" / lang / "lm.binary").stat().st_size > 0
    zh_text = "".join(pq.read_table(results / "corpus/zh/sentences/demo/shard-000.parquet")["text"].to_pylist())
    assert "国" in zh_text and "國" not in zh_text
    for model in ("tiny", "tiny+mlm", "tiny+burt"):
        assert (results / "models" / model / "config.json").exists(), model
        assert (results / "metrics" / "analogy" / f"{model}.mean.json").exists(), model
        assert (results / "figures" / model / "analogy_tsne_differences.png").exists(), model
    for table in ("analogy", "sts", "wordsim", "geogranno", "faq"):
        text = (results / "tables" / f"{table}.md").read_text()
        assert "published" in text and ("tiny" in text or table == "faq"), table
    assert "bm25" in (results / "tables" / "faq.md").read_text()
    for table in ("bilstm_snli", "transfer"):  # paper 004: the demo's tiny BiLSTM-BF-combined
        assert "| bilstm-bf-combined-16 | bf-combined |" in (results / "tables" / f"{table}.md").read_text(), table
    # fine-tuning: tiny -> tiny+burt -> tiny+burt+twin, evaluated into the tables
    twin = results / "finetune" / "tiny+burt+twin"
    assert (twin / "modules.json").exists() and (twin / "train_log.jsonl").exists()
    for task in ("analogy", "sts", "wordsim", "geogranno"):
        assert (results / "metrics" / task / "tiny+burt+twin.mean.json").exists(), task
    assert "| tiny+burt+twin | mean | Pooling: MEAN |" in (results / "tables" / "ablation.md").read_text()
    glue = (results / "tables" / "glue.md").read_text()  # classify: tiny models on the two demo fixtures
    for model in ("tiny", "tiny+mlm", "tiny+burt"):
        assert (results / "metrics" / "glue" / f"{model}.json").exists() and f"| {model} | – | dev |" in glue, model
    # every rule's log folder; tensorboard holds the training jobs' live curves (docs/running.md)
    rules = {path.name for path in (results / "logs").iterdir() if path.name != "tensorboard"}
    for stage in ("pretrain", "finetune", "classify", "bilstm"):
        assert list((results / "logs" / "tensorboard" / stage).rglob("events.out.tfevents.*")), stage
    scoreboard = json.loads((results / "scoreboard.json").read_text())  # every claim listed, with its verdict
    assert len(scoreboard["claims"]) >= 20 and sum(scoreboard["claim_counts"].values()) == len(scoreboard["claims"])
    assert "Reproduction scoreboard" in (results / "scoreboard.md").read_text()
    assert rules >= {
        "extract",
        "convert",
        "clean",
        "ngrams",
        "kenlm",
        "ngrams_corpus",
        "sample",
        "tiny_model",
        "tokenize",
        "pretrain",
        "word2vec",
        "evaluate",
        "figures",
        "tables",
        "finetune",
        "classify",
        "classify_summary",
        "bilstm",
    }
    for rule in rules:
        assert list((results / "benchmarks" / rule).rglob("*.tsv")), rule
    assert "Nothing to be done" in snakemake("-n", "--config", f"run={run_name}").stdout
    # Model cards, corpus statistics, training curves and the report (docs/design.md "Layout")
    card = (results / "models" / "tiny+burt" / "README.md").read_text()
    assert card.startswith("---\n") and "burt" in card and (results / "models" / "tiny" / "README.md").exists()
    assert "articles_kept" in (results / "report" / "corpus_stats.html").read_text()
    assert (results / "report" / "training" / "tiny+burt.png").stat().st_size > 0
    snakemake("--report", str(tmp_path / "report.html"), "--config", f"run={run_name}")  # not an output of a rule
    assert (tmp_path / "report.html").stat().st_size > 0


def test_a_changed_dump_reruns_its_language_only(run_name, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(DEMO_DATA, data)
    config = tmp_path / "config.yaml"
    config.write_text(
        (REPO / "workflow/config/demo.yaml")
        .read_text()
        .replace("run: demo", f"run: {run_name}")
        .replace("workflow/demo/data", str(data))
    )
    snakemake("--cores", "2", "--configfile", str(config), "--until", "clean")
    dump = data / "wiki/en/enwiki-demo-pages-articles.xml"
    dump.write_text(dump.read_text().replace("capital and largest city", "largest city and capital"))
    plan = snakemake("-n", "--configfile", str(config), "--until", "clean").stdout
    assert "lang=en" in plan and "lang=zh" not in plan and "rule convert" not in plan


def test_every_stage_has_help(cli, capsys):
    from pipeline.cli import STAGES

    for stage in STAGES:
        assert cli(stage, "--help") == 0
        assert "--out" in capsys.readouterr().out


def test_report_rule_reads_its_tables_from_the_registry():
    """Issue 57: the rule's tables are the registry's (pipeline/report/table_specs.py), not a second list."""
    import re

    from pipeline.report.table_specs import TABLE_NAMES

    text = (REPO / "workflow" / "rules" / "report.smk").read_text()
    assert "from pipeline.report.table_specs import TABLE_NAMES" in text
    assert re.search(r"^TABLES = list\(TABLE_NAMES\)$", text, re.MULTILINE)
    assert not [name for name in TABLE_NAMES if f'"{name}"' in text]  # no table named here by hand


def test_a_task_whose_data_is_absent_is_left_out_of_the_dag(tmp_path, run_name):
    data = tmp_path / "data"
    shutil.copytree(DEMO_DATA, data)
    shutil.rmtree(data / "scws")
    config = tmp_path / "config.yaml"
    config.write_text((REPO / "workflow/config/demo.yaml").read_text().replace("workflow/demo/data", str(data)))
    without = snakemake("-n", "--configfile", str(config), "--config", f"run={run_name}")
    assert "skipping scws" in without.stderr and "/metrics/scws/" not in without.stdout + without.stderr
    present = snakemake("-n", "--config", f"run={run_name}")
    assert "/metrics/scws/" in present.stdout + present.stderr and "skipping" not in present.stderr
