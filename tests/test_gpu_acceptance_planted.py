"""Every row of the GPU acceptance run can fail (issue 53 §2), shown on CPU with real runs and planted faults.

- fused = solo: a stack whose members are permuted, trained on another member's batches, or not trained fails
  the rule the float32 row applies (pipeline/acceptance/verdicts.py ``fused_verdict``), on the learnable task the
  run trains (pipeline/acceptance/jobs.py ``make_glue``), where the seeds part by far more than the tolerance;
- memory: a planted under-estimate fails the row;
- step floor: steps that are not time = floor + FLOPs / rate (one shape, a negative intercept, a shape far off the
  line) fail the row;
- DDP: two processes at half the batch match one process at the whole batch; one process's gradients alone (as if
  the ranks never averaged theirs) do not;
- preflight: every missing piece is reported at once, in seconds, and no job runs.
"""

from __future__ import annotations

import itertools

import pytest
from testdata import REPO

from pipeline.acceptance import estimates, host, jobs, run_time, verdicts
from pipeline.acceptance.layout import PROFILES
from pipeline.classify import fused_training
from pipeline.cli import main

SEEDS = 4


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    """The run's own data and tiny BERT-base stand-in, made by the pipeline's stages from the demo dump."""
    work = tmp_path_factory.mktemp("acceptance")
    data = jobs.make_data(work / "data")
    glue = jobs.make_glue(work / "data", data["sentences"])
    profile = PROFILES["cpu"]
    model = jobs.make_model(work, "bert-base", data["sentences"], profile.models["bert-base"], profile.vocab_size)
    return {"work": work, "glue": glue, "model": model, "data": data}


def classify(task, name: str, fuse: int, lr: float | None = None) -> dict:
    p = PROFILES["cpu"]
    out = task["work"] / "classify" / name
    argv = ["classify", "--model", task["model"], "--task", "sst2", "--data", task["glue"], "--seeds", SEEDS]
    argv += ["--fuse", fuse, "--max-steps", p.classify_steps, "--batch-size", p.fp32_batch, "--max-length", 128]
    argv += ["--lr", lr or p.classify_lr, "--warmup-ratio", 0, "--dropout", 0, "--no-test", "--out", out]
    assert main([str(a) for a in argv]) == 0
    return jobs.per_seed_losses(out)


@pytest.fixture(scope="module")
def solo(task):
    return classify(task, "solo", 1)


def test_a_fused_stack_passes_and_its_seeds_lie_far_apart(task, solo):
    fused = classify(task, "fused", SEEDS)
    verdict = verdicts.fused_verdict(solo, fused, verdicts.FLOAT32_TOLERANCE)
    assert verdict.ok, verdict.result
    assert verdicts.closest_seeds(solo) > 10 * verdicts.FLOAT32_TOLERANCE  # the task parts the seeds


def test_a_permuted_stack_fails(solo):
    seeds = sorted(solo)
    for order in itertools.permutations(seeds):
        if list(order) == seeds:
            continue
        permuted = {seed: solo[other] for seed, other in zip(seeds, order, strict=True)}
        assert not verdicts.fused_verdict(solo, permuted, verdicts.FLOAT32_TOLERANCE).ok, order


def test_a_stack_trained_on_another_member_s_batches_fails(task, solo, monkeypatch):
    """Each member fed the next member's batches (its own head, its own seed otherwise)."""
    original, seen = fused_training.member_batches, []

    def next_members_batches(trainer, steps):
        seen.append(trainer)
        index = len(seen) - 1

        def stream():
            yield from original(seen[(index + 1) % len(seen)], steps)

        return stream()

    monkeypatch.setattr(fused_training, "member_batches", next_members_batches)
    swapped = classify(task, "fused-swapped", SEEDS)
    verdict = verdicts.fused_verdict(solo, swapped, verdicts.FLOAT32_TOLERANCE)
    assert not verdict.ok, verdict.result


def test_an_untrained_stack_fails(task, solo):
    untrained = classify(task, "fused-untrained", SEEDS, lr=1e-12)
    verdict = verdicts.fused_verdict(solo, untrained, verdicts.FLOAT32_TOLERANCE)
    assert not verdict.ok, verdict.result


def test_seeds_too_close_to_tell_fail_the_row():
    """A task on which every seed trains alike cannot show a permuted stack: the row fails, saying so."""
    solo = {"0": 0.69310, "1": 0.69311, "2": 0.69312}
    verdict = verdicts.fused_verdict(solo, dict(solo), verdicts.FLOAT32_TOLERANCE)
    assert not verdict.ok and "too close" in verdict.result
    bf16 = verdicts.fused_verdict({"0": 0.5, "1": 0.6}, {"0": 0.505, "1": 0.596})  # bound: a tenth of 0.1
    assert bf16.ok and "tolerance 1.0e-02" in bf16.result


def test_a_planted_memory_under_estimate_fails(task):
    """The memory model's real estimate of a stack; a peak 30% above it (the estimate planted low) fails, one within
    the margin passes, one far below is corrected."""
    estimate = estimates.fused_estimate(task["model"], 32, 16)
    assert verdicts.memory_verdict(1.3 * estimate, estimate)[0] == "FAIL"
    assert verdicts.memory_verdict(estimate, estimate / 1.3)[0] == "FAIL"  # the same: an estimate 1.3x too low
    assert verdicts.memory_verdict(1.05 * estimate, estimate)[0] == "ok"
    assert verdicts.memory_verdict(0.5 * estimate, estimate)[0] == "corrected"
    assert verdicts.memory_verdict(None, estimate)[0] == "FAIL"


def test_the_step_floor_is_the_intercept_and_a_bad_fit_fails():
    """Issue 53 §3: the floor is what a step costs beyond its FLOPs. Shapes on a line give its intercept; one shape,
    a line through zero or below, or a shape far off the line fail the row."""
    line = [(flops, 0.002 + flops / 400e12) for flops in (1e12, 4e12, 9e12)]  # 2 ms + FLOPs at 400 TFLOP/s
    verdict, floor = verdicts.floor_fit(line)
    assert verdict.ok and floor == pytest.approx(0.002) and "400 TFLOP/s" in verdict.result
    assert not verdicts.floor_fit(line[:1])[0].ok  # one shape: no line
    assert not verdicts.floor_fit([(x, x / 400e12) for x, _ in line])[0].ok  # no floor: a full step is FLOPs alone
    assert not verdicts.floor_fit([(x, y - 0.004) for x, y in line])[0].ok  # a negative floor
    bent = [*line, (16e12, 3 * (0.002 + 16e12 / 400e12))]  # a shape three times slower than the line
    assert not verdicts.floor_fit(bent)[0].ok


def test_ddp_matches_one_process_and_unequal_gradients_fail(task):
    p = PROFILES["cpu"]
    tokens = jobs.tokenize(task["work"], task["model"], task["data"]["sample"])
    base = ["pretrain", "--data", tokens, "--model", task["model"], "--objective", "mlm", "--dropout", 0]
    base += ["--max-steps", 4, "--lr", p.lr, "--warmup", 0, "--batching", "random", "--num-workers", 0, "--restart"]
    outs = {name: task["work"] / "ddp" / name for name in ("one", "two", "alone")}
    for name, batch in (("one", p.pretrain_batch), ("alone", p.pretrain_batch // 2)):
        assert main([str(a) for a in [*base, "--batch-size", batch, "--out", outs[name]]]) == 0
    two = [*base, "--batch-size", p.pretrain_batch // 2, "--out", outs["two"]]
    job = jobs.run_job("ddp-2", two, task["work"], 300, launcher=jobs.rule_launcher(2), env={"OMP_NUM_THREADS": "1"})
    assert job.status == 0, job.tail()
    start = jobs.weights(task["model"])
    one, two_w, alone = (jobs.weights(outs[name]) for name in ("one", "two", "alone"))
    ok = verdicts.ddp_verdict(start, one, two_w, verdicts.DDP_TOLERANCE["cpu"])
    assert ok.ok, ok.result
    # rank 0 stepping on its own half-batch gradients, never averaged with rank 1's: unequal gradients
    unequal = verdicts.ddp_verdict(start, one, alone, verdicts.DDP_TOLERANCE["cpu"])
    assert not unequal.ok, unequal.result


def test_preflight_reports_every_missing_piece_at_once(tmp_path, monkeypatch, capsys):
    """Two missing modules, an output folder that is a file and a run longer than its budget: all four named,
    one summary line, exit status 2, within the preflight's bound, and no job started."""
    monkeypatch.setattr(host, "RUN_MODULES", ("json", "no_such_module_a", "no_such_module_b"))
    monkeypatch.setattr(run_time, "run_need", lambda device, quick: {"seconds": 9999, "gpu_gb": 0, "disk_gb": 0})
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    argv = ["gpu-acceptance", "--device", "cpu", "--out", tmp_path / "out", "--work", blocker / "work"]
    assert main([str(a) for a in [*argv, "--budget-s", 60]]) == 2
    err = capsys.readouterr().err
    assert "no_such_module_a" in err and "no_such_module_b" in err and "work folder" in err and "time:" in err
    assert err.strip().splitlines()[-1].startswith("error: ") and "4 problem(s)" in err
    assert not (tmp_path / "out" / "acceptance.json").exists()


def test_the_bundle_carries_what_the_host_lacks_at_the_lock_s_versions():
    from pipeline.acceptance import gpu_bundle

    needed = gpu_bundle.run_distributions()
    assert {"jsonschema", "referencing", "rpds-py", "torch", "transformers"} <= set(needed)
    carried = gpu_bundle.carried(needed, gpu_bundle.lock_pins())
    names = {c.split("==")[0] for c in carried}
    assert "jsonschema" in names and not names & host.HOST_HAS
    assert not names & set(host.HOST_LACKS) - {"jsonschema"}  # no corpus-stage package: the data is made here
    pins = gpu_bundle.lock_pins()
    assert all(f"{name}=={pins[name]}" in carried for name in names)
    assert gpu_bundle.tree_bytes() < gpu_bundle.LIMIT and (REPO / ".gitignore").read_text().count("/.gpu-bundle/")
