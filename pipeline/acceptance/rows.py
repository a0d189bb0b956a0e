"""The rows of the GPU acceptance run (docs/stages/acceptance.md): what each job is, and its verdict.

Groups:

- ``pretrain``: every objective the paper configs train, on BERT-base, MiSAD on ELECTRA-base and ALBERT-xxlarge
  MiSAD at the paper's batch: every loss finite and falling; tokens/s; MFU as the plan counts FLOPs;
- ``fused fp32``: ``classify --fuse K`` against K solo runs in float32, TF32 off in the jobs themselves, dropout 0,
  at :data:`~pipeline.acceptance.verdicts.FLOAT32_TOLERANCE` (pipeline/acceptance/verdicts.py: the seeds must
  lie further apart than the tolerance, so that a permuted stack fails);
- ``fused bf16``: the same at the grids' shape (GLUE: 128 tokens, batch 32, K = 16 on BERT-base, and BERT-large
  at the largest K the plan allows) in bf16 autocast, its tolerance a share of the seeds' measured spread; ms per
  member-step, the fused ratios the plan reads;
- ``memory``: each job's peak against pipeline/budget/memory.py's estimate, at the papers' fine-tuning dropout
  (0.1): above it by more than the margin fails; each job kind keeps its own factor;
- ``resume``: a fused job killed (SIGKILL) after its first save and run again gives the numbers and prediction
  files of the same job run straight through;
- ``ddp``: two processes at half the batch give the weights of one process at the whole batch (gloo on CPU; two
  ranks on one GPU through gloo, NCCL where there are GPUs enough);
- ``torchrun``: the pretrain rule's own launch line, one process.
"""

from __future__ import annotations

import math
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from pipeline.acceptance import estimates, jobs, verdicts
from pipeline.acceptance.results import Results

# every objective the paper configs train (paper-en: MiSAD and its span and entity variants with the released
# loss, the equation in its ulr-electra experiment), and wwm and entity, which the configs offer; .released: the
# released run_mse.py's loss (--misad-loss released --pooling pooler)
PRETRAIN_OBJECTIVES = [
    "mlm", "wwm", "burt", "spanbert", "entity", "misad", "misad.released", "misad-span.released",
    "misad-entity.released", "nsp", "sop",
]  # fmt: skip
PRETRAIN_RUNS = [("bert-base", label) for label in PRETRAIN_OBJECTIVES]
PRETRAIN_RUNS += [("electra-base", "misad"), ("albert-xxlarge", "misad.released")]  # ULR-ELECTRA; Table 2's xxlarge
QUICK_PRETRAIN = [("bert-base", "mlm"), ("bert-base", "misad.released"), ("electra-base", "misad")]
FP32_K = 4
BASE_K = estimates.PAPER_FUSE
RESUME_K = 2  # a save holds K members' weights and AdamW moments (5 GB at K 4 on BERT-base): kept small
FINETUNE_DROPOUT = 0.1  # the papers' fine-tuning dropout (ULR-BERT §5.1.2): memory is measured at it
# the plan's keys (pipeline/plan/plan_costs.py objective_mfu) of the runs not on BERT-base
MFU_KEYS = {"electra-base+misad": "electra+misad", "albert-xxlarge+misad.released": "albert-xxlarge+misad"}
FP32 = {"NVIDIA_TF32_OVERRIDE": "0"}  # cuBLAS and cuDNN: no TF32 in the float32 jobs, whatever torch's flags say
DDP_STEPS = 4
QUICK_LEAVES_OUT = ("bert-large", "albert-xxlarge")  # models --quick does not build (no row of theirs runs)


@dataclass(frozen=True)
class Profile:
    """The sizes of one form of the run: the models (tiny-model options), steps, batches."""

    models: dict  # name -> tiny-model options
    vocab_size: int
    pretrain_steps: int
    pretrain_batch: int
    albert_steps: int
    lr: float
    classify_steps: int
    classify_batch: int  # the grids' batch (bf16 rows)
    fp32_batch: int
    classify_lr: float
    resume_steps: int
    resume_every: int
    skip_steps: int  # steps left out of tokens/s (warm-up)


PROFILES = {
    "cuda": Profile(
        models={
            "bert-base": ["--architecture", "bert-base-uncased"],
            "bert-large": ["--architecture", "bert-large-uncased"],
            "electra-base": ["--architecture", "electra-base-discriminator"],
            "albert-xxlarge": ["--architecture", "albert-xxlarge-v2"],
        },
        vocab_size=4000,
        pretrain_steps=20,
        pretrain_batch=64,  # the ULR runs' batch (paper-en.yaml ulr*)
        albert_steps=12,
        lr=1e-4,
        classify_steps=20,
        classify_batch=32,  # GLUE's grid (8-64): the batch at which paper-en's BERT-large fuses 7
        fp32_batch=8,
        classify_lr=1e-4,
        resume_steps=30,
        resume_every=10,
        skip_steps=4,
    ),
    "cpu": Profile(  # tiny_hub's base / large / xxlarge proportions (pipeline/rehearsal/tiny_hub.py)
        models={
            "bert-base": ["--hidden", "32", "--layers", "2", "--heads", "2"],
            "bert-large": ["--hidden", "48", "--layers", "4", "--heads", "4"],
            "electra-base": ["--family", "electra", "--hidden", "32", "--layers", "2", "--heads", "2"],
            "albert-xxlarge": ["--family", "albert", "--hidden", "64", "--layers", "3", "--heads", "1"]
            + ["--embedding-size", "16"],
        },
        vocab_size=1000,
        pretrain_steps=8,
        pretrain_batch=16,
        albert_steps=8,
        lr=1e-3,
        classify_steps=6,
        classify_batch=8,
        fp32_batch=8,
        classify_lr=3e-3,
        resume_steps=8,
        resume_every=2,
        skip_steps=2,
    ),
}


@dataclass(frozen=True)
class Launch:
    """One process batch the run starts (pipeline/acceptance/jobs.py ``run_jobs`` / ``run_job``), as
    pipeline/acceptance/run_time.py counts its time: the OS processes (a torchrun launcher and each of its ranks
    count: each imports torch), the stage runs in them (each loads and saves a model), and what they train, one
    ``(backbone, sequences a step, tokens a sequence, member-steps, float32)`` per kind of step."""

    group: str
    processes: int
    jobs: int
    work: tuple = ()


def model_names(device: str, quick: bool) -> list[str]:
    """The models the run builds (tiny-model), in order."""
    return [name for name in PROFILES[device].models if not (quick and name in QUICK_LEAVES_OUT)]


def bf16_pairs(device: str, quick: bool, large_k: int) -> list[tuple[str, int]]:
    """(backbone, K) of the fused bf16 pairs: the grids' shape, on CUDA only (bf16 autocast is the GPU's path)."""
    if device != "cuda":
        return []
    return [("bert-base", BASE_K)] + ([] if quick else [("bert-large", large_k)])


def memory_shapes(quick: bool, large_k: int) -> list[tuple[str, int]]:
    """(backbone, K) of the stacks whose peak is measured at the papers' fine-tuning dropout."""
    return [("bert-base", BASE_K)] + ([] if quick else [("bert-large", large_k)])


def launches(device: str, quick: bool, large_k: int) -> list[Launch]:
    """Every process batch :meth:`Acceptance.run_rows` starts, in order: what run_time.py's estimate counts
    (tests/test_gpu_acceptance.py runs the rows with counting stand-ins for the jobs and checks the two agree)."""
    p = PROFILES[device]
    bf16 = device == "cuda"
    found = [Launch("fused fp32", 1, 2, (("bert-base", p.fp32_batch, 128, 2 * FP32_K * p.classify_steps, True),))]
    for backbone, k in bf16_pairs(device, quick, large_k):
        found.append(Launch("fused bf16", 1, 2, ((backbone, p.classify_batch, 128, 2 * k * p.classify_steps, False),)))
    shapes = memory_shapes(quick, large_k)
    work = tuple((b, p.classify_batch, 128, k * p.classify_steps, not bf16) for b, k in shapes)
    found.append(Launch("memory", 1, len(shapes), work))
    runs = QUICK_PRETRAIN if quick else PRETRAIN_RUNS
    work = tuple(
        (b, p.pretrain_batch, 128, p.albert_steps if b == "albert-xxlarge" else p.pretrain_steps, False)
        for b, _ in runs
    )
    found.append(Launch("pretrain", 1, len(runs), work))
    ddp = (("bert-base", p.pretrain_batch, 128, DDP_STEPS, False),)
    found += [Launch("ddp", 1, 1, ddp), Launch("ddp", 1 + 2, 2, ddp)]  # torchrun and its 2 ranks
    if not quick:
        resume = (("bert-base", p.fp32_batch, 128, RESUME_K * p.resume_steps, not bf16),)
        found += [Launch("resume", 1, 1, resume), Launch("resume", 1, 1), Launch("resume", 1, 1, resume)]
        found.append(Launch("torchrun", 1 + 1, 1, (("bert-base", p.pretrain_batch, 128, p.pretrain_steps, False),)))
    return found


class Acceptance:
    """The run: its rows (written to the output folder as each finishes), and what the plan's file is made of."""

    def __init__(self, device: str, work: Path, deadline: float, results: Results, quick: bool = False):
        self.device, self.work, self.deadline, self.results, self.quick = device, work, deadline, results, quick
        self.profile = PROFILES[device]
        self.plan = {"mfu": {}, "fused_ms": {}, "memory_factor": {}}
        self.peak_tflops = estimates.peak_tflops() if device == "cuda" else None
        self.large_k = 0

    def run_rows(self, data: dict, glue: Path, models: dict) -> None:
        """Every row, in the order :func:`launches` lists their processes."""
        self.classify(glue, models)
        self.pretrain(data, models)
        self.ddp(data, models)
        if not self.quick:
            self.resume(glue, models)
            self.torchrun(data, models)

    def row(self, group: str, name: str, ok: bool | None, result: str, measure: str = "") -> None:
        self.results.row(group, name, ok, result, measure)

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def out_of_time(self, group: str, names: list[str]) -> bool:
        if self.left() > 0:
            return False
        for name in names:
            self.row(group, name, False, "skipped: the time budget ran out")
        return True

    # ------------------------------------------------------------------ pre-training
    def pretrain_runs(self) -> list[tuple[str, str]]:
        return QUICK_PRETRAIN if self.quick else PRETRAIN_RUNS

    def pretrain(self, data: dict, models: dict) -> None:
        p, runs = self.profile, self.pretrain_runs()
        tokens = {}
        for backbone in {b for b, _ in runs}:
            tokens[backbone] = {"sample": jobs.tokenize(self.work, models[backbone], data["sample"])}
            if any(b == backbone and label in ("nsp", "sop") for b, label in runs):
                tokens[backbone]["pairs"] = jobs.tokenize(self.work, models[backbone], data["pairs"])
        if self.out_of_time("pretrain", [f"{b}+{label}" for b, label in runs]):
            return
        batch = []
        for backbone, label in runs:
            objective, _, loss = label.partition(".")
            steps = p.albert_steps if backbone == "albert-xxlarge" else p.pretrain_steps
            out = self.work / "pretrain" / f"{backbone}+{label}"
            kind = "pairs" if objective in ("nsp", "sop") else "sample"
            argv = ["pretrain", "--data", tokens[backbone][kind], "--model", models[backbone], "--objective", objective]
            argv += ["--max-steps", steps, "--batch-size", p.pretrain_batch, "--lr", p.lr, "--warmup", 0.1]
            argv += ["--num-workers", 2, "--restart", "--out", out]
            if loss == "released":  # the released run_mse.py's loss reads the trained pooler (paper-en.yaml)
                argv += ["--misad-loss", "released", "--pooling", "pooler"]
            batch.append((f"{backbone}+{label}", argv))
        for (backbone, label), job in zip(runs, jobs.run_jobs(batch, self.work, max(self.left(), 60)), strict=True):
            self.pretrain_row(
                job.name, models[backbone], label.partition(".")[0], job, self.work / "pretrain" / job.name
            )

    def pretrain_row(self, name: str, model: Path, objective: str, job: jobs.Job, out: Path) -> None:
        values = jobs.losses(out)
        if job.status != 0 or not values:
            self.row("pretrain", name, False, f"exit {job.status}: {job.tail()}")
            return
        falls = jobs.falling(values)
        tokens_s, processed_s = jobs.throughput(out, self.profile.skip_steps)
        result = f"loss {values[0]:.3f} -> {values[-1]:.3f} ({'finite, falling' if falls else 'NOT falling/finite'})"
        measure = f"{tokens_s:,.0f} tokens/s"
        if self.peak_tflops:
            if objective.startswith("misad"):  # train_log's tokens hold w and R beside S; the plan counts S and
                # puts w and R in the FLOPs per token (workloads.yaml misad.extra_train_passes)
                processed_s /= 1 + estimates.misad_extra_passes()
            mfu = processed_s * estimates.flops_per_token(model, objective) / (self.peak_tflops * 1e12)
            measure += f", MFU {100 * mfu:.1f}%"
            self.plan["mfu"][MFU_KEYS.get(name, name.split("+", 1)[1])] = round(mfu, 4)
        else:
            measure += ", MFU n/a (CPU)" if self.device == "cpu" else ", MFU n/a (no known peak for this card)"
        self.row("pretrain", name, falls, result, measure)
        inputs = 1 + estimates.misad_extra_passes() if objective.startswith("misad") else 1  # the estimate counts w, R
        length = jobs.longest_batch(out, self.profile.pretrain_batch, inputs)
        kind = "electra" if name.startswith("electra") else "pretrain"
        estimate = estimates.pretrain_estimate(model, objective, self.profile.pretrain_batch, length)
        self.memory_row(kind, name, job, estimate)

    # ------------------------------------------------------------------ fused fine-tuning
    def classify_argv(self, name: str, model: Path, glue: Path, seeds: int, fuse: int, batch: int, bf16: bool):
        p = self.profile
        out = self.work / "classify" / name
        argv = ["classify", "--model", model, "--task", "sst2", "--data", glue, "--seeds", seeds, "--fuse", fuse]
        argv += ["--max-steps", p.classify_steps, "--batch-size", batch, "--max-length", 128, "--lr", p.classify_lr]
        argv += ["--warmup-ratio", 0, "--dropout", 0, "--no-test", "--out", out]
        return (name, argv + (["--bf16"] if bf16 else [])), out

    def fused_pair(self, backbone: str, model: Path, glue: Path, k: int, batch: int, bf16: bool) -> None:
        """K solo runs and one fused stack of the same K seeds, compared seed by seed."""
        group, label = ("fused bf16", f"{backbone} K={k}") if bf16 else ("fused fp32", f"{backbone} K={k}")
        if self.out_of_time(group, [label]):
            return
        solo_spec, solo_out = self.classify_argv(f"{backbone}-solo{k}-{group[-4:]}", model, glue, k, 1, batch, bf16)
        fused_spec, fused_out = self.classify_argv(f"{backbone}-fused{k}-{group[-4:]}", model, glue, k, k, batch, bf16)
        solo, fused = jobs.run_jobs([solo_spec, fused_spec], self.work, max(self.left(), 60), None if bf16 else FP32)
        solo_loss, fused_loss = jobs.per_seed_losses(solo_out), jobs.per_seed_losses(fused_out)
        if solo.status != 0 or fused.status != 0:
            failed = solo if solo.status != 0 else fused
            self.row(group, label, False, f"{failed.name} exit {failed.status}: {failed.tail()}")
            return
        verdict = verdicts.fused_verdict(solo_loss, fused_loss, None if bf16 else verdicts.FLOAT32_TOLERANCE)
        solo_ms, member_ms = jobs.mean_speed(solo.log, batch), jobs.mean_speed(fused.log, batch)
        ratio = member_ms / solo_ms if solo_ms else math.nan
        self.row(group, label, verdict.ok, verdict.result, f"{member_ms:.2f} ms per member-step ({ratio:.3f} of solo)")
        if backbone == "bert-base" and (bf16 or self.device == "cpu"):  # the plan's ratios: the grid, in bf16
            self.plan["fused_ms"][1] = solo_ms
            self.plan["fused_ms"][k] = member_ms

    def classify(self, glue: Path, models: dict) -> None:
        p = self.profile
        self.large_k = estimates.largest_k(models["bert-large"], p.classify_batch)
        self.fused_pair("bert-base", models["bert-base"], glue, FP32_K, p.fp32_batch, bf16=False)
        if self.device == "cpu":  # bf16 autocast is the GPU's path: its rows are n/a on CPU
            for backbone, k in (("bert-base", BASE_K), ("bert-large", self.large_k)):
                self.row("fused bf16", f"{backbone} K={k}", None, "bf16 autocast runs on CUDA only")
        for backbone, k in bf16_pairs(self.device, self.quick, self.large_k):
            self.fused_pair(backbone, models[backbone], glue, k, p.classify_batch, bf16=True)
        self.memory_jobs(glue, models)

    def memory_jobs(self, glue: Path, models: dict) -> None:
        """The fused stacks at the papers' fine-tuning dropout (0.1), bf16 where the GPU runs it: their peaks
        against the memory model's estimate of a stack (what sizes K in the plan)."""
        p = self.profile
        shapes = memory_shapes(self.quick, self.large_k)
        if self.out_of_time("memory", [f"{b} K={k} dropout 0.1" for b, k in shapes]):
            return
        batch, outs = [], []
        for backbone, k in shapes:
            spec, out = self.classify_argv(
                f"{backbone}-memory{k}", models[backbone], glue, k, k, p.classify_batch, self.device == "cuda"
            )
            name, argv = spec
            argv[argv.index("--dropout") + 1] = FINETUNE_DROPOUT
            batch.append((name, argv))
            outs.append(out)
        for (backbone, k), job in zip(shapes, jobs.run_jobs(batch, self.work, max(self.left(), 60)), strict=True):
            estimate = estimates.fused_estimate(models[backbone], p.classify_batch, k)
            self.memory_row("fused", f"{backbone} K={k} dropout 0.1", job, estimate)

    # ------------------------------------------------------------------ resume, DDP, torchrun
    def resume(self, glue: Path, models: dict) -> None:
        """The fused job killed after a save and run again, against the same job straight through."""
        p = self.profile
        name = f"fused K={RESUME_K} killed + rerun"
        if self.out_of_time("resume", [name]):
            return
        (_, argv), _ = self.classify_argv("resume", models["bert-base"], glue, RESUME_K, RESUME_K, p.fp32_batch, True)
        argv = argv[: argv.index("--out")] + (["--bf16"] if self.device == "cuda" else [])
        argv[argv.index("--dropout") + 1] = FINETUNE_DROPOUT
        argv[argv.index("--max-steps") + 1] = p.resume_steps
        argv += ["--resume-every", p.resume_every]
        straight, broken = self.work / "resume" / "straight", self.work / "resume" / "killed"
        shutil.rmtree(self.work / "resume", ignore_errors=True)  # an earlier run's save would be resumed
        first = jobs.run_job("resume-straight", [*argv, "--out", straight], self.work, max(self.left(), 60))
        again = jobs.killed_and_resumed(
            "resume-killed", [*argv, "--out", broken], broken / ".resume", self.work, max(self.left(), 60)
        )
        same, why = jobs.same_outcome(straight, broken)
        killed = again.extra["killed_at"]
        ok = first.status == 0 and again.status == 0 and killed is not None and same
        result = f"killed at {killed}, rerun: {why}" if killed else "never killed: the job ended before a save"
        self.row("resume", name, ok, result, f"dropout {FINETUNE_DROPOUT}, save every {p.resume_every} steps")

    def ddp(self, data: dict, models: dict) -> None:
        """``pretrain`` MLM for a few steps as two processes at half the batch and as one at the whole, dropout 0,
        from the same weights: the weights must agree (pipeline/acceptance/verdicts.py ``ddp_verdict``)."""
        name = "2 processes = 1 process"
        if self.out_of_time("ddp", [name]):
            return
        p = self.profile
        tokens = jobs.tokenize(self.work, models["bert-base"], data["sample"])
        outs = {n: self.work / "ddp" / f"{n}-process" for n in (1, 2)}
        base = ["pretrain", "--data", tokens, "--model", models["bert-base"], "--objective", "mlm", "--dropout", 0]
        base += ["--max-steps", DDP_STEPS, "--lr", p.lr, "--warmup", 0, "--batching", "random", "--num-workers", 0]
        base += ["--restart"]
        one = jobs.run_job("ddp-1", [*base, "--batch-size", p.pretrain_batch, "--out", outs[1]], self.work, 300)
        launcher = jobs.rule_launcher(2)
        half = [*base, "--batch-size", p.pretrain_batch // 2, "--out", outs[2]]
        two = jobs.run_job("ddp-2", half, self.work, 300, launcher=launcher, env={"OMP_NUM_THREADS": "1"})
        if one.status != 0 or two.status != 0:
            failed = one if one.status != 0 else two
            self.row("ddp", name, False, f"{failed.name} exit {failed.status}: {failed.tail()}")
            return
        start, weights = jobs.weights(models["bert-base"]), {n: jobs.weights(o) for n, o in outs.items()}
        verdict = verdicts.ddp_verdict(start, weights[1], weights[2], verdicts.DDP_TOLERANCE[self.device])
        backend = "gloo" if self.device == "cpu" else "NCCL or gloo (ranks on one GPU)"
        self.row(
            "ddp",
            name,
            verdict.ok,
            verdict.result,
            f"{DDP_STEPS} steps, batch {p.pretrain_batch} = 2 x half, {backend}",
        )

    def torchrun(self, data: dict, models: dict) -> None:
        """torchrun --nproc_per_node 1 through the pretrain rule's launch line."""
        if self.out_of_time("torchrun", ["pretrain rule, 1 process"]):
            return
        launcher = jobs.rule_launcher(1)
        tokens = jobs.tokenize(self.work, models["bert-base"], data["sample"])
        out = self.work / "pretrain" / "torchrun-mlm"
        argv = ["pretrain", "--data", tokens, "--model", models["bert-base"], "--objective", "mlm", "--generator="]
        argv += ["--max-steps", self.profile.pretrain_steps, "--batch-size", self.profile.pretrain_batch]
        argv += ["--lr", self.profile.lr, "--restart", "--num-workers", 1, "--out", out]
        job = jobs.run_job("torchrun", argv, self.work, max(self.left(), 60), launcher=launcher)
        values = jobs.losses(out)
        ok = job.status == 0 and bool(values) and all(math.isfinite(v) for v in values)
        result = f"{len(values)} steps, loss {values[-1]:.3f}" if ok else f"exit {job.status}: {job.tail()}"
        self.row("torchrun", "pretrain rule, 1 process", ok, result, " ".join(launcher))

    # ------------------------------------------------------------------ memory
    def memory_row(self, kind: str, name: str, job: jobs.Job, estimate: float | None) -> None:
        """The job's peak beside the estimate (pipeline/acceptance/verdicts.py ``memory_verdict``); each job kind
        (pretrain, electra, fused) keeps the largest factor measured in it."""
        if self.device == "cpu":  # the estimate runs (so it cannot rot); torch measures no CPU peak
            shown = f"estimate {estimate / 1e6:.1f} MB" if estimate else "no estimate"
            self.row("memory", name, None, f"{shown}, peak n/a (CPU)")
            return
        verdict, text, factor = verdicts.memory_verdict(job.peak_bytes, estimate)
        if factor is not None:
            self.plan["memory_factor"][kind] = max(self.plan["memory_factor"].get(kind, 0.0), factor)
        self.row("memory", name, verdict != "FAIL", text)


def expected_rows(large_k: int, quick: bool = False) -> list[tuple[str, str]]:
    """Every row the table must have (group, row): a run that lacks one fails, so the CPU form in CI proves that
    every path still runs."""
    runs = QUICK_PRETRAIN if quick else PRETRAIN_RUNS
    pretrain = [f"{backbone}+{label}" for backbone, label in runs]
    bf16 = [("bert-base", BASE_K)] + ([] if quick else [("bert-large", large_k)])
    rows = [("pretrain", name) for name in pretrain]
    rows += [("fused fp32", f"bert-base K={FP32_K}")] + [("fused bf16", f"{b} K={k}") for b, k in bf16]
    rows += [("memory", name) for name in pretrain] + [("memory", f"{b} K={k} dropout 0.1") for b, k in bf16]
    rows += [("ddp", "2 processes = 1 process")]
    if not quick:
        rows += [("resume", f"fused K={RESUME_K} killed + rerun"), ("torchrun", "pretrain rule, 1 process")]
    return rows


def plan_file(run: Acceptance, card: str, layers: int) -> dict:
    """What the plan reads (pipeline/budget/acceptance_file.py SCHEMA); ``layers``: BERT-base's, over which its
    solo step is the per-layer floor, as workloads.yaml states the floor."""
    import datetime

    import torch

    fused = run.plan["fused_ms"]
    solo = fused.get(1)
    return {
        "card": card,
        "date": datetime.date.today().isoformat(),
        "device": run.device,
        "torch": torch.__version__.split("+")[0],
        "step_floor_per_layer_ms": round(solo / layers, 4) if solo else 0.0,
        "fused_ratio": {k: round(ms / solo, 4) for k, ms in sorted(fused.items())} if solo else {},
        "mfu": run.plan["mfu"],
        "memory_factor": {kind: round(f, 4) for kind, f in run.plan["memory_factor"].items()},
    }
