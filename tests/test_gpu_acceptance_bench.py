"""bench/gpu_acceptance.py (issue 48 §1): its table, its file, the launch line it takes from the pretrain rule and
the logs it reads, each checked fast here; the whole CPU form runs in CI (`make gpu-acceptance DEVICE=cpu`,
.ci/run), not in pytest, whose time it would double."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from testdata import REPO

from bench import acceptance_jobs as jobs
from bench.gpu_acceptance import (
    PRETRAIN_RUNS,
    Acceptance,
    expected_rows,
    plan_file,
    table,
    write_yaml,
)
from pipeline import experiments
from pipeline.budget import acceptance_file
from pipeline.errors import InputError
from pipeline.workflow_config import resolve_config


def test_ci_runs_the_cpu_form_and_make_has_the_target():
    assert "make gpu-acceptance DEVICE=cpu" in (REPO / ".ci" / "run").read_text()
    makefile = (REPO / "Makefile").read_text()
    assert "gpu-acceptance:" in makefile and "DEVICE ?= cuda" in makefile


@pytest.mark.parametrize("name", ["paper-en", "paper-zh"])
def test_every_objective_a_paper_config_trains_has_a_row(name):
    config = resolve_config(REPO / "workflow" / "config" / f"{name}.yaml")
    trained = {(run.objective, run.settings.get("misad_loss")) for run in experiments.runs(config["pretrain"]).values()}
    covered = {label.partition(".") for _, label in PRETRAIN_RUNS}
    for objective, loss in trained:
        variant = "released" if loss == "released" and objective.startswith("misad") else ""
        assert (objective, "." if variant else "", variant) in covered, (objective, loss)


def test_the_table_names_every_row_the_issue_asks_for():
    rows = expected_rows(7)
    groups = {group for group, _ in rows}
    assert groups == {"pretrain", "classify", "resume", "torchrun", "memory"}
    named = {name for _, name in rows}
    for wanted in ("bert-base+nsp", "bert-base+sop", "electra-base+misad", "albert-xxlarge+misad.released"):
        assert wanted in named
    assert {"bert-base K=1 (solo)", "bert-base K=4", "bert-base K=16", "bert-large K=7"} <= named
    # a memory row beside every training job but the resume and torchrun checks
    assert sum(group == "memory" for group, _ in rows) == sum(group in ("pretrain", "classify") for group, _ in rows)


def test_what_the_bench_writes_is_what_the_plan_reads(tmp_path):
    run = Acceptance("cpu", tmp_path, deadline=0)
    run.plan = {"mfu": {"mlm": 0.31}, "fused_ms": {1: 24.0, 4: 7.2, 16: 2.4}, "memory_factor": {"fused": 1.2}}
    run.row("pretrain", "bert-base+mlm", True, "loss 10.4 -> 7.9 (finite, falling)", "1 tokens/s")
    run.row("memory", "bert-base K=4", None, "estimate 1.0 MB, peak n/a (CPU)")
    summary = plan_file(run, "NVIDIA A100-SXM4-80GB", 12)
    assert summary["step_floor_per_layer_ms"] == 2.0 and summary["fused_ratio"] == {1: 1.0, 4: 0.3, 16: 0.1}
    path = tmp_path / "acceptance.yaml"
    write_yaml(path, {**summary, "device": "cuda"}, "# header\n")
    assert acceptance_file.read_acceptance(path)["mfu"] == {"mlm": 0.31}
    write_yaml(path, summary, "# header\n")  # the CPU form's file: refused by the plan
    with pytest.raises(InputError, match="device"):
        acceptance_file.read_acceptance(path)
    printed = table(run.rows).splitlines()
    assert printed[0].startswith("pretrain | bert-base+mlm | ok ") and "n/a" in printed[1]


def test_torchrun_goes_through_the_pretrain_rule_s_launch_line():
    """The launcher is the rule's own function, read from workflow/rules/functions/pretrain.smk and run; the
    bench puts it before ``-m pipeline pretrain`` as the rule's shell line does."""
    assert jobs.rule_launcher(1) == ["torchrun", "--standalone", "--nproc_per_node", "1"]
    assert jobs.rule_launcher(4)[-1] == "4"
    assert jobs.rule_shell().startswith("{params.launcher:q} -m pipeline pretrain --data")


def test_the_seed_line_classify_logs_is_the_one_read(caplog):
    from pipeline.classify.classify import log_seed

    outcome = {"seed": 3, "steps": 20, "train_seconds": 1.0, "train_examples_per_second": 640.0, "train_loss": 0.69}
    with caplog.at_level(logging.INFO, logger="pipeline.classify"):
        log_seed(outcome)
    assert jobs.seed_speeds(caplog.text, batch=32) == {3: pytest.approx(50.0)}


def test_losses_fall_only_when_finite_and_lower_at_the_end():
    assert jobs.falling([7.0, 6.9, 6.8, 6.5, 6.4, 6.2, 6.0, 5.9])
    assert not jobs.falling([6.0, 6.1, 6.2, 6.3])
    assert not jobs.falling([7.0, float("nan"), 6.0, 5.0])
    assert not jobs.falling([7.0, 6.0])  # too few steps to tell


def test_a_classify_output_compares_by_numbers_and_prediction_bytes(tmp_path):
    for name, prediction in (("a", "0\t1\n"), ("b", "0\t1\n"), ("c", "0\t0\n")):
        folder = Path(tmp_path / name)
        folder.mkdir()
        (folder / "metrics.json").write_text('{"per_seed": {"0": {"train_loss": 0.5}}}')
        (folder / "dev_predictions.seed0.tsv").write_text(prediction)
    assert jobs.same_outcome(tmp_path / "a", tmp_path / "b")[0]
    assert jobs.same_outcome(tmp_path / "a", tmp_path / "c") == (False, "predictions differ: dev_predictions.seed0.tsv")


def test_the_cuda_only_rows_measure_and_feed_the_plan(tmp_path):
    """The branches only a GPU takes, on recorded numbers: a peak beside its estimate (a stack 1.5x off is
    corrected, a job of solo runs is shown but not fed), and MFU from a train log as the plan counts FLOPs."""
    import json

    from bench.gpu_acceptance import flops_per_token

    run = Acceptance("cpu", tmp_path, deadline=0)
    run.device, run.peak_tflops = "cuda", 1000.0
    run.memory_row("classify", "bert-base K=4", jobs.Job("f", 0, 1.0, "", peak_bytes=int(15e9)), 10e9)
    run.memory_row("solo", "bert-base K=1", jobs.Job("s", 0, 1.0, "", peak_bytes=int(30e9)), 10e9)
    run.memory_row("pretrain", "bert-base+mlm", jobs.Job("p", 0, 1.0, "", peak_bytes=int(9.5e9)), 10e9)
    assert run.plan["memory_factor"] == {"fused": 1.5, "pretrain": 0.95}
    run.memory_rows()
    verdicts = {r["row"]: r["verdict"] for r in run.rows}
    assert verdicts == {"bert-base K=4": "ok", "bert-base K=1": "n/a", "bert-base+mlm": "ok"}
    assert "scaled by it" in run.rows[0]["result"]

    model, out = tmp_path / "model", tmp_path / "out"
    model.mkdir()
    out.mkdir()
    config = {"num_hidden_layers": 12, "hidden_size": 768, "intermediate_size": 3072, "vocab_size": 30522}
    (model / "config.json").write_text(json.dumps(config))
    steps = [{"step": i, "loss": 10.0 - i, "tokens": 1000, "tokens_per_s": 1e6, "padding_share": 0.5} for i in range(8)]
    (out / "train_log.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    run.pretrain_row("bert-base+mlm", model, "mlm", jobs.Job("p", 0, 1.0, "", peak_bytes=None), out)
    processed = 2e6  # tokens/s over 1 - padding share
    assert run.plan["mfu"]["mlm"] == pytest.approx(processed * flops_per_token(model, "mlm") / 1e15, abs=1e-4)
    assert run.rows[-1]["verdict"] == "ok" and "MFU" in run.rows[-1]["measure"]
