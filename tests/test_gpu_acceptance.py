"""The GPU acceptance run (pipeline/acceptance, issue 53): its table, its files, the launch line it takes from the
pretrain rule and the logs it reads, each checked fast here; the whole CPU form runs in CI inside the simulation
of the GPU host (.ci/host_simulation.sh), not in pytest, whose time it would double. The planted failures (a
permuted stack, another member's batches, an untrained member, an under-estimated memory, DDP with unequal
gradients) are in tests/test_gpu_acceptance_planted.py."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from testdata import REPO

from pipeline import experiments
from pipeline.acceptance import jobs
from pipeline.acceptance.layout import PRETRAIN_RUNS, expected_rows
from pipeline.acceptance.results import Results, table
from pipeline.acceptance.rows import Acceptance, plan_file
from pipeline.budget import acceptance_file
from pipeline.errors import InputError
from pipeline.workflow_config import resolve_config


def acceptance(tmp_path, device="cpu") -> Acceptance:
    return Acceptance(device, tmp_path / "work", 0, Results(tmp_path / "out", {"card": "test", "date": "today"}))


def test_ci_runs_the_host_simulation_and_make_has_the_targets():
    ci = (REPO / ".ci" / "run").read_text()
    assert ".ci/host_simulation.sh" in ci and "make gpu-acceptance DEVICE=cpu" not in ci
    makefile = (REPO / "Makefile").read_text()
    assert "gpu-acceptance:" in makefile and "gpu-bundle:" in makefile and "DEVICE ?= cuda" in makefile
    assert "-m pipeline gpu-acceptance" in makefile


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
    assert groups == {
        "pretrain",
        "fused fp32",
        "fused bf16",
        "fused chid",
        "memory",
        "floor",
        "ddp",
        "resume",
        "torchrun",
    }
    named = {name for _, name in rows}
    for wanted in ("bert-base+nsp", "bert-base+sop", "electra-base+misad", "albert-xxlarge+misad.released"):
        assert wanted in named
    assert {"bert-base K=4", "bert-base K=16", "bert-large K=7", "wwm-ext ChID 256", "2 processes = 1 process"} <= named
    # a memory row beside every pre-training job and every bf16 stack, at the papers' fine-tuning dropout
    memory = [name for group, name in rows if group == "memory"]
    assert len(memory) == sum(group in ("pretrain", "fused bf16") for group, _ in rows)
    assert "bert-large K=7 dropout 0.1" in memory
    quick = expected_rows(7, quick=True)
    assert set(quick) < set(rows) and len(quick) <= len(rows) // 2


def test_what_the_run_writes_is_what_the_plan_reads(tmp_path):
    run = acceptance(tmp_path)
    run.plan = {"mfu": {"mlm": 0.31}, "fused_ms": {1: 24.0, 4: 7.2, 16: 2.4}, "memory_factor": {"fused": 1.2}}
    run.row("pretrain", "bert-base+mlm", True, "loss 10.4 -> 7.9 (finite, falling)", "1 tokens/s")
    run.row("memory", "bert-base K=4", None, "estimate 1.0 MB, peak n/a (CPU)")
    summary = plan_file(run, "NVIDIA A100-SXM4-80GB", 12)
    assert summary["step_floor_per_layer_ms"] == 2.0 and summary["fused_ratio"] == {1: 1.0, 4: 0.3, 16: 0.1}
    path = tmp_path / "acceptance.yaml"
    import yaml

    path.write_text(yaml.safe_dump({**summary, "device": "cuda"}))
    assert acceptance_file.read_acceptance(path)["mfu"] == {"mlm": 0.31}
    path.write_text(yaml.safe_dump(summary))  # the CPU form's file: refused by the plan
    with pytest.raises(InputError, match="device"):
        acceptance_file.read_acceptance(path)
    printed = table(run.results.rows).splitlines()
    assert printed[0].startswith("pretrain | bert-base+mlm | ok ") and "n/a" in printed[1]


def test_each_row_is_in_the_output_folder_as_it_finishes(tmp_path):
    """A run cut off at its limit keeps what it measured: the table and the JSON hold every finished row, and the
    folder holds at most the host's 8 files, none deeper than the folder itself."""
    import json

    run = acceptance(tmp_path)
    run.row("ddp", "2 processes = 1 process", True, "1e-06 of the update")
    out = tmp_path / "out"
    assert json.loads((out / "acceptance.json").read_text())["rows"][0]["row"] == "2 processes = 1 process"
    run.row("resume", "fused K=2 killed + rerun", False, "exit 1")
    assert "| resume | fused K=2 killed + rerun | FAIL |" in (out / "acceptance.md").read_text()
    assert "FAIL resume" in (out / "acceptance.log").read_text()
    files = list(out.rglob("*"))
    assert len(files) <= 8 and all(f.parent == out for f in files)


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
    """The branches only a GPU takes, on recorded numbers: a peak beside its estimate (a stack 1.05x: ok; 0.5x:
    corrected, its factor kept per kind; 1.5x: FAIL), and MFU from a train log as the plan counts FLOPs."""
    import json

    from pipeline.acceptance.estimates import flops_per_token

    run = acceptance(tmp_path)
    run.device, run.peak_tflops = "cuda", 1000.0
    run.memory_row("fused", "bert-base K=4", jobs.Job("f", 0, 1.0, "", peak_bytes=int(10.5e9)), 10e9)
    run.memory_row("fused", "bert-large K=7", jobs.Job("f", 0, 1.0, "", peak_bytes=int(5e9)), 10e9)
    run.memory_row("pretrain", "bert-base+mlm", jobs.Job("p", 0, 1.0, "", peak_bytes=int(15e9)), 10e9)
    assert run.plan["memory_factor"] == {"fused": 1.05, "pretrain": 1.5}
    verdicts = {r["row"]: r["verdict"] for r in run.results.rows}
    assert verdicts == {"bert-base K=4": "ok", "bert-large K=7": "ok", "bert-base+mlm": "FAIL"}
    assert "scaled by it" in run.results.rows[1]["result"] and "run out" in run.results.rows[2]["result"]

    model, out = tmp_path / "model", tmp_path / "pretrained"
    model.mkdir()
    out.mkdir()
    config = {"num_hidden_layers": 12, "hidden_size": 768, "intermediate_size": 3072, "vocab_size": 30522}
    (model / "config.json").write_text(json.dumps(config))
    steps = [{"step": i, "loss": 10.0 - i, "tokens": 1000, "tokens_per_s": 1e6, "padding_share": 0.5} for i in range(8)]
    (out / "train_log.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    run.pretrain_row("bert-base+mlm", model, "mlm", jobs.Job("p", 0, 1.0, "", peak_bytes=None), out)
    processed = 2e6  # tokens/s over 1 - padding share
    assert run.plan["mfu"]["mlm"] == pytest.approx(processed * flops_per_token(model, "mlm") / 1e15, abs=1e-4)
    pretrain = [r for r in run.results.rows if r["group"] == "pretrain"]
    assert pretrain[-1]["verdict"] == "ok" and "MFU" in pretrain[-1]["measure"]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("quick", [False, True])
def test_the_time_estimate_counts_the_processes_and_jobs_the_rows_start(tmp_path, monkeypatch, device, quick):
    """run_time.py counts what rows.py ``launches`` lists; here the rows themselves run with counting stand-ins
    for the jobs (each job fails at once), so a row or job added to the run without its launch, or a launch
    without its job, makes the estimate drift and this fails."""
    import json

    from pipeline.acceptance import run_time
    from pipeline.acceptance.layout import PROFILES, model_names

    started = {"processes": 0, "jobs": 0}

    def count(processes: int, jobs_: int) -> None:
        started["processes"] += processes
        started["jobs"] += jobs_

    def run_jobs(batch, work, timeout, env=None):
        count(1, len(batch))
        return [jobs.Job(name, 1, 0.0, "") for name, _ in batch]

    def run_job(name, argv, work, timeout, launcher=None, env=None):
        ranks = int(launcher[launcher.index("--nproc_per_node") + 1]) if launcher else 0
        count(1 + ranks, max(ranks, 1))
        return jobs.Job(name, 1, 0.0, "")

    def killed_and_resumed(name, argv, save_folder, work, timeout):
        count(1, 1)  # the run that is killed; then its rerun
        rerun = jobs.run_job(name, argv, work, timeout)
        rerun.extra["killed_at"] = None
        return rerun

    monkeypatch.setattr(jobs, "run_jobs", run_jobs)
    monkeypatch.setattr(jobs, "run_job", run_job)
    monkeypatch.setattr(jobs, "killed_and_resumed", killed_and_resumed)
    monkeypatch.setattr(jobs, "tokenize", lambda work, model, marked: tmp_path / "tokens.parquet")
    config = {"num_hidden_layers": 2, "hidden_size": 32, "intermediate_size": 128, "vocab_size": 1000}
    models = {}
    for name in model_names(device, quick):
        models[name] = tmp_path / "models" / name
        models[name].mkdir(parents=True)
        (models[name] / "config.json").write_text(json.dumps(config))
    models.setdefault("bert-large", models["bert-base"])
    run = Acceptance("cpu", tmp_path / "work", 1e18, Results(tmp_path / "out", {}), quick)
    run.device, run.profile = device, PROFILES[device]
    run.run_rows({"sample": tmp_path / "s", "pairs": tmp_path / "p"}, tmp_path / "glue", models)
    expected = run_time.counts(device, quick)
    assert started == {"processes": expected["processes"], "jobs": expected["jobs"]}
    assert {g for g, _ in expected_rows(run.large_k, quick)} <= {r["group"] for r in run.results.rows}


def test_a_fused_pair_measures_the_fine_tuning_mfu_the_plan_reads(tmp_path):
    """On CUDA a pair at a grid's shape gives the MFU of its solo and fused steps: each seed's processed tokens
    (metrics.json, padding included) at the plan's FLOPs per token, over its seconds (classify's seed line), over
    the card's peak; the plan's file carries it and the schema takes it. A pair with no tokens fails."""
    import json

    import yaml

    from pipeline.acceptance.estimates import architecture_of
    from pipeline.acceptance.layout import fused_batches

    run = acceptance(tmp_path)
    run.device, run.peak_tflops = "cuda", 1000.0
    model = tmp_path / "wwm-ext"
    model.mkdir()
    config = {"num_hidden_layers": 12, "hidden_size": 768, "intermediate_size": 3072, "vocab_size": 21128}
    (model / "config.json").write_text(json.dumps(config))
    pair = fused_batches("cuda", False, 7, 6)[1][-1]
    assert (pair.group, pair.shape, pair.k, pair.candidates, pair.length) == (
        "fused chid",
        "multiple-choice",
        6,
        10,
        256,
    )
    rows_run = pair.steps(run.profile) * pair.batch * pair.candidates
    outs, done = [], []
    for kind, seconds in (("solo", 2.0), ("fused", 1.0)):
        out = tmp_path / kind
        out.mkdir()
        per_seed = {
            str(s): {
                "train_loss": 2.0 + s / 10 + (1e-5 if kind == "fused" else 0),
                "processed_tokens": {"padded": [rows_run * 256]},
            }
            for s in range(pair.k)
        }
        (out / "metrics.json").write_text(json.dumps({"per_seed": per_seed}))
        log = "".join(f"seed {s}: 10 steps in {seconds} s (40.0 train examples/s)\n" for s in range(pair.k))
        outs.append(out)
        done.append(jobs.Job(kind, 0, 1.0, log))
    run.pair_row(pair, model, done, outs)
    flops = rows_run * 256 * architecture_of(model)[0].training_flops_per_token(256)
    assert run.plan["finetune_mfu"]["multiple-choice"] == {1: round(flops / 2.0 / 1e15, 4), 6: round(flops / 1e15, 4)}
    row = run.results.rows[-1]
    assert row["verdict"] == "ok" and "MFU solo" in row["measure"] and row["row"] == "wwm-ext ChID 256"
    run.plan["fused_ms"] = {1: 24.0, 16: 2.4}  # the GLUE pair's
    summary = {**plan_file(run, "NVIDIA H100 80GB HBM3", 12), "device": "cuda"}
    path = tmp_path / "acceptance.yaml"
    path.write_text(yaml.safe_dump(summary))
    assert acceptance_file.read_acceptance(path)["finetune_mfu"]["multiple-choice"][6] == pytest.approx(
        flops / 1e15, abs=1e-4
    )
    (outs[1] / "metrics.json").unlink()  # no processed tokens: the MFU cannot be found, the row fails
    run.pair_row(pair, model, done, outs)
    assert run.results.rows[-1]["verdict"] == "FAIL"


def test_pretrain_steps_are_timed_at_steady_state(tmp_path):
    """Issue 53 §3: the warm-up is left out, a log's ``step_seconds`` (the step's own compute) is the time where
    it has them, and from an older log every step that opens an epoch (its loader's workers start) is left out."""
    import json

    out = tmp_path / "pretrained"
    out.mkdir()
    steps = [
        {"step": i, "epoch": i // 5, "loss": 1.0, "tokens": 100, "tokens_per_s": 100.0 if i % 5 else 10.0}
        for i in range(1, 21)
    ]
    (out / "train_log.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    timed = jobs.timed_steps(out, 4)
    assert [e["step"] for e in timed] == [6, 7, 8, 9, 11, 12, 13, 14, 16, 17, 18, 19]  # no epoch's first step
    assert jobs.throughput(out, 4) == (100.0, 100.0)
    (out / "train_log.jsonl").write_text("".join(json.dumps({**s, "step_seconds": 0.5}) + "\n" for s in steps))
    assert len(jobs.timed_steps(out, 4)) == 16 and jobs.throughput(out, 4) == (200.0, 200.0)


def test_the_floor_row_fits_the_shapes_and_feeds_the_plan(tmp_path):
    """On CUDA the MLM shapes' steps give the floor, per Transformer layer (not a solo classify step); each shape's
    MFU lands in acceptance.yaml pretrain_mfu, which the schema takes."""
    import json

    import yaml

    from pipeline.acceptance.estimates import architecture_of
    from pipeline.acceptance.layout import PROFILES, SHAPE_RUNS, pretrain_shape
    from pipeline.budget.cost import ARCHITECTURES

    run = acceptance(tmp_path)
    run.device, run.peak_tflops = "cuda", 1000.0
    run.profile = PROFILES["cuda"]
    models = {}
    for backbone, arch_name in (("bert-base", "bert-base-uncased"), ("bert-large", "bert-large-uncased")):
        arch = ARCHITECTURES[arch_name]
        models[backbone] = tmp_path / "models" / backbone
        models[backbone].mkdir(parents=True)
        config = {"num_hidden_layers": arch.layers, "hidden_size": arch.hidden}
        config |= {"intermediate_size": arch.intermediate, "vocab_size": arch.vocab}
        (models[backbone] / "config.json").write_text(json.dumps(config))
    models["albert-xxlarge"] = models["bert-large"]  # a third shape of 24 layers
    for backbone, label in [("bert-base", "mlm"), *SHAPE_RUNS]:
        arch, _ = architecture_of(models[backbone])
        sequences, length = pretrain_shape("cuda", label)
        flops = sequences * length * arch.training_flops_per_token(length)
        seconds = arch.layers * 0.0015 + flops / 400e12  # 1.5 ms a layer beyond the FLOPs at 400 TFLOP/s
        out = tmp_path / "work" / "pretrain" / f"{backbone}+{label}"
        out.mkdir(parents=True)
        entries = [
            {"step": i, "epoch": 0, "loss": 9.0 - i / 10, "tokens": sequences * length, "tokens_per_s": 1.0}
            | {"step_seconds": seconds}
            for i in range(1, 21)
        ]
        (out / "train_log.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))
        job = jobs.Job(label, 0, 1.0, "", peak_bytes=int(1e9))
        run.pretrain_row(f"{backbone}+{label}", models[backbone], "mlm", job, out)
    run.floor_row(models)
    row = next(r for r in run.results.rows if r["group"] == "floor")
    assert row["verdict"] == "ok" and run.plan["floor_ms"] == pytest.approx(1.5)
    shapes = run.plan["pretrain_mfu"]
    assert set(shapes) == {"base", "large", "xxlarge"} and set(shapes["large"]) == {"sentences", "packed"}
    run.plan["fused_ms"] = {1: 24.0, 16: 2.4}  # a solo classify step of 2 ms a layer: not the floor any more
    summary = plan_file(run, "NVIDIA H100 80GB HBM3", 12)
    assert summary["step_floor_per_layer_ms"] == pytest.approx(1.5)
    path = tmp_path / "acceptance.yaml"
    path.write_text(yaml.safe_dump({**summary, "device": "cuda"}))
    assert acceptance_file.read_acceptance(path)["pretrain_mfu"]["base"]["packed"] > 0
