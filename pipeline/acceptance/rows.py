"""The rows of the GPU acceptance run (docs/stages/acceptance.md): what each job is, and its verdict (what the run
starts, and the sizes: pipeline/acceptance/layout.py).

Groups:

- ``pretrain``: every objective the paper configs train, on BERT-base, MiSAD on ELECTRA-base and ALBERT-xxlarge
  MiSAD at the paper's batch: every loss finite and falling; tokens/s; MFU as the plan counts FLOPs;
- ``fused fp32``: ``classify --fuse K`` against K solo runs in float32, TF32 off in the jobs themselves, dropout 0,
  at :data:`~pipeline.acceptance.verdicts.FLOAT32_TOLERANCE` (pipeline/acceptance/verdicts.py: the seeds must
  lie further apart than the tolerance, so that a permuted stack fails);
- ``fused bf16``: the same at the grids' shape (GLUE: 128 tokens, batch 32, K = 16 on BERT-base, and BERT-large
  at the largest K the plan allows) in bf16 autocast, its tolerance a share of the seeds' measured spread; ms per
  member-step, the fused ratios the plan reads; BERT-base's solo and fused MFU (acceptance.yaml finetune_mfu);
- ``fused chid``: the same for a multiple-choice task, ChID at 256 tokens on the wwm-ext shape (BERT-base with
  the Chinese vocabulary) at its grid's batch 8, ten candidates an example, at the K the plan allows there; its
  solo and fused MFU (bf16 on CUDA; float32 at tiny sizes on CPU);
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
from pathlib import Path

from pipeline.acceptance import estimates, jobs, verdicts
from pipeline.acceptance.layout import (
    BASE_K,
    DDP_STEPS,
    FINETUNE_DROPOUT,
    FLOOR_ROW,
    FP32,
    MEMORY_STEPS,
    MFU_KEYS,
    PRETRAIN_RUNS,
    PROFILES,
    QUICK_SHAPE_RUNS,
    RESUME_K,
    SHAPE_RUNS,
    SIZE,
    Pair,
    chid_k,
    fused_batches,
    memory_shapes,
    pretrain_runs,
    pretrain_shape,
    pretrain_steps,
)
from pipeline.acceptance.results import Results


class Acceptance:
    """The run: its rows (written to the output folder as each finishes), and what the plan's file is made of."""

    def __init__(self, device: str, work: Path, deadline: float, results: Results, quick: bool = False):
        self.device, self.work, self.deadline, self.results, self.quick = device, work, deadline, results, quick
        self.profile = PROFILES[device]
        self.plan = {"mfu": {}, "fused_ms": {}, "memory_factor": {}, "finetune_mfu": {}, "pretrain_mfu": {}}
        self.peak_tflops = estimates.peak_tflops() if device == "cuda" else None
        self.large_k, self.chid_k = 0, 0
        self.ddp_one: jobs.Job | None = None  # DDP's one-process job, run in pretrain's batch

    def run_rows(self, data: dict, glue: Path, models: dict) -> None:  # the floor row: after pretrain's jobs
        """Every row, in the order layout.py ``launches`` lists their processes."""
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
    def pretrain(self, data: dict, models: dict) -> None:
        p, runs = self.profile, pretrain_runs(self.quick)
        tokens = {}
        for backbone in {b for b, _ in runs}:
            tokens[backbone] = {"sample": jobs.tokenize(self.work, models[backbone], data["sample"])}
            if any(b == backbone and label in ("nsp", "sop") for b, label in runs):
                tokens[backbone]["pairs"] = jobs.tokenize(self.work, models[backbone], data["pairs"])
        if self.out_of_time("pretrain", [f"{b}+{label}" for b, label in runs]):
            return
        batch = []
        for backbone, label in runs:
            objective, _, variant = label.partition(".")
            sequences, length = pretrain_shape(self.device, label)
            out = self.work / "pretrain" / f"{backbone}+{label}"
            kind = "pairs" if objective in ("nsp", "sop") else "sample"
            argv = ["pretrain", "--data", tokens[backbone][kind], "--model", models[backbone], "--objective", objective]
            argv += ["--max-steps", pretrain_steps(self.device, backbone), "--batch-size", sequences, "--lr", p.lr]
            argv += ["--warmup", 0.1, "--num-workers", 2, "--restart", "--out", out]
            if variant == "released":  # the released run_mse.py's loss reads the trained pooler (paper-en.yaml)
                argv += ["--misad-loss", "released", "--pooling", "pooler"]
            if variant == "packed":  # BURT §5.2: the sentences concatenated and cut into blocks
                argv += ["--input", "packed", "--max-length", length]
            batch.append((f"{backbone}+{label}", argv))
        batch.append(self.ddp_one_spec(data, models))  # needs no process of its own
        done = jobs.run_jobs(batch, self.work, max(self.left(), 60))
        self.ddp_one = done.pop()
        for (backbone, label), job in zip(runs, done, strict=True):
            out = self.work / "pretrain" / job.name
            self.pretrain_row(job.name, models[backbone], label.partition(".")[0], job, out)
        self.floor_row(models)

    def floor_row(self, models: dict) -> None:
        """The step floor (issue 53 §3): what a step costs beyond its FLOPs, the intercept of the MLM shapes' step
        times against their FLOPs, per Transformer layer as the plan applies it (verdicts.py ``floor_fit``)."""
        points = []
        for backbone, label in [("bert-base", "mlm"), *(QUICK_SHAPE_RUNS if self.quick else SHAPE_RUNS)]:
            out = self.work / "pretrain" / f"{backbone}+{label}"
            steps = jobs.timed_steps(out, self.profile.skip_steps)
            if not steps:
                continue
            arch, _ = estimates.architecture_of(models[backbone])
            length = pretrain_shape(self.device, label)[1]
            processed = sum(e["tokens"] / (1 - e.get("padding_share", 0.0)) for e in steps) / len(steps)
            seconds = sum(e["seconds"] for e in steps) / len(steps)
            points.append((processed * arch.training_flops_per_token(length) / arch.layers, seconds / arch.layers))
        verdict, floor = verdicts.floor_fit(points)
        if self.device == "cpu":  # the wall clock of tiny steps on a shared CPU: shown, not judged
            self.row("floor", FLOOR_ROW, None, verdict.result + " (CPU: the floor is a GPU's)")
            return
        if verdict.ok:
            self.plan["floor_ms"] = 1000 * floor
        self.row("floor", FLOOR_ROW, verdict.ok, verdict.result, f"{len(points)} shapes, per Transformer layer")

    def pretrain_row(self, name: str, model: Path, objective: str, job: jobs.Job, out: Path) -> None:
        """``name``: BACKBONE+LABEL (layout.py ``pretrain_runs``)."""
        values = jobs.losses(out)
        backbone, _, label = name.partition("+")
        sequences, length = pretrain_shape(self.device, label)
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
            mfu = processed_s * estimates.flops_per_token(model, objective, length) / (self.peak_tflops * 1e12)
            measure += f", MFU {100 * mfu:.1f}%"
            if (backbone, label) in PRETRAIN_RUNS:  # each objective's figure, on its family
                self.plan["mfu"][MFU_KEYS.get(name, name.split("+", 1)[1])] = round(mfu, 4)
            if objective == "mlm" and backbone in SIZE:  # each size's and input's (acceptance.yaml pretrain_mfu)
                shape = "packed" if label.endswith(".packed") else "sentences"
                self.plan["pretrain_mfu"].setdefault(SIZE[backbone], {})[shape] = round(mfu, 4)
        else:
            measure += ", MFU n/a (CPU)" if self.device == "cpu" else ", MFU n/a (no known peak for this card)"
        self.row("pretrain", name, falls, result, measure)
        inputs = 1 + estimates.misad_extra_passes() if objective.startswith("misad") else 1  # the estimate counts w, R
        longest = jobs.longest_batch(out, sequences, inputs)
        kind = "electra" if name.startswith("electra") else "pretrain"
        estimate = estimates.pretrain_estimate(model, objective, sequences, longest)
        self.memory_row(kind, name, job, estimate)

    # ------------------------------------------------------------------ fused fine-tuning
    def classify_argv(
        self,
        name: str,
        model: Path,
        glue: Path,
        seeds: int,
        fuse: int,
        batch: int,
        bf16: bool,
        pair: Pair | None = None,
    ):
        p = self.profile
        out = self.work / "classify" / name
        task, length, steps = (pair.task, pair.length, pair.steps(p)) if pair else ("sst2", 128, p.classify_steps)
        argv = ["classify", "--model", model, "--task", task, "--data", glue, "--seeds", seeds, "--fuse", fuse]
        argv += ["--max-steps", steps, "--batch-size", batch, "--max-length", length, "--lr", p.classify_lr]
        argv += ["--warmup-ratio", 0, "--dropout", 0, "--no-test", "--out", out]
        return (name, argv + (["--bf16"] if bf16 else [])), out

    def fused_pairs(self, pairs: list[Pair], data: Path, models: dict, extra: list | None = None) -> list:
        """For each pair, K solo runs and one fused stack of the same K seeds, compared seed by seed; all in one
        process (float32 pairs with TF32 off in it), and the ``extra`` jobs after them: their Jobs."""
        if not pairs or self.left() <= 0:
            for pair in pairs:
                self.row(pair.group, pair.label, False, "skipped: the time budget ran out")
            return []
        specs, outs = [], []
        for pair in pairs:
            model, tag = models[pair.backbone], f"{pair.backbone}-{pair.task}-{'bf16' if pair.bf16 else 'fp32'}"
            for kind, fuse in (("solo", 1), ("fused", pair.k)):
                spec, out = self.classify_argv(
                    f"{tag}-{kind}{pair.k}", model, data, pair.k, fuse, pair.batch, pair.bf16, pair
                )
                specs.append(spec)
                outs.append(out)
        done = jobs.run_jobs(specs + (extra or []), self.work, max(self.left(), 60), None if pairs[0].bf16 else FP32)
        for n, pair in enumerate(pairs):
            self.pair_row(pair, models[pair.backbone], done[2 * n : 2 * n + 2], outs[2 * n : 2 * n + 2])
        return done[len(specs) :]

    def pair_row(self, pair: Pair, model: Path, done: list, outs: list) -> None:
        """The pair's verdict (pipeline/acceptance/verdicts.py ``fused_verdict``), ms per member-step, and on CUDA
        the MFU of its solo and fused steps (what the plan costs fine-tuning at: acceptance.yaml finetune_mfu)."""
        solo, fused = done
        if solo.status != 0 or fused.status != 0:
            failed = solo if solo.status != 0 else fused
            self.row(pair.group, pair.label, False, f"{failed.name} exit {failed.status}: {failed.tail()}")
            return
        solo_loss, fused_loss = jobs.per_seed_losses(outs[0]), jobs.per_seed_losses(outs[1])
        verdict = verdicts.fused_verdict(solo_loss, fused_loss, None if pair.bf16 else verdicts.FLOAT32_TOLERANCE)
        solo_ms, member_ms = jobs.mean_speed(solo.log, pair.batch), jobs.mean_speed(fused.log, pair.batch)
        ratio = member_ms / solo_ms if solo_ms else math.nan
        measure = f"{member_ms:.2f} ms per member-step ({ratio:.3f} of solo)"
        if pair.shape and self.peak_tflops:
            rows_run = pair.steps(self.profile) * pair.batch * pair.candidates
            mfu = {
                k: estimates.finetune_mfu(
                    model, jobs.padded_tokens(out), jobs.seed_seconds(job.log), rows_run, self.peak_tflops
                )
                for k, out, job in ((1, outs[0], solo), (pair.k, outs[1], fused))
            }
            if None in mfu.values():
                verdict = verdicts.Verdict(False, verdict.result + "; no processed tokens or seconds to find the MFU")
            else:
                self.plan["finetune_mfu"].setdefault(pair.shape, {}).update({k: round(v, 4) for k, v in mfu.items()})
                measure += f", MFU solo {100 * mfu[1]:.1f}%, fused {100 * mfu[pair.k]:.1f}%"
        elif pair.shape:
            measure += ", MFU n/a (CPU)" if self.device == "cpu" else ", MFU n/a (no known peak for this card)"
        self.row(pair.group, pair.label, verdict.ok, verdict.result, measure)
        if pair.backbone == "bert-base" and (pair.bf16 or self.device == "cpu"):  # the plan's ratios: the grid
            self.plan["fused_ms"][1] = solo_ms
            self.plan["fused_ms"][pair.k] = member_ms

    def classify(self, glue: Path, models: dict) -> None:
        p = self.profile
        self.large_k = estimates.largest_k(models["bert-large"], p.classify_batch)
        if "wwm-ext" in models:
            self.chid_k = chid_k(self.device, models["wwm-ext"])
        if self.device == "cpu":  # bf16 autocast is the GPU's path: its rows are n/a on CPU
            for backbone, k in (("bert-base", BASE_K), ("bert-large", self.large_k)):
                self.row("fused bf16", f"{backbone} K={k}", None, "bf16 autocast runs on CUDA only")
        batches = fused_batches(self.device, self.quick, self.large_k, self.chid_k)
        for batch in batches[:-1]:
            self.fused_pairs(batch, glue, models)
        memory = self.memory_specs(glue, models)  # in the last batch's process: no process of their own
        self.memory_rows(models, self.fused_pairs(batches[-1], glue, models, memory))

    def memory_specs(self, glue: Path, models: dict) -> list:
        """The fused stacks at the papers' fine-tuning dropout (0.1), bf16 where the GPU runs it, for
        :data:`MEMORY_STEPS`: their peaks against the memory model's estimate of a stack (what sizes K in the
        plan; :meth:`memory_rows`)."""
        batch = []
        for backbone, k in memory_shapes(self.quick, self.large_k):
            spec, _ = self.classify_argv(
                f"{backbone}-memory{k}",
                models[backbone],
                glue,
                k,
                k,
                self.profile.classify_batch,
                self.device == "cuda",
            )
            name, argv = spec
            argv[argv.index("--dropout") + 1] = FINETUNE_DROPOUT
            argv[argv.index("--max-steps") + 1] = MEMORY_STEPS
            batch.append((name, argv))
        return batch

    def memory_rows(self, models: dict, done: list) -> None:
        shapes = memory_shapes(self.quick, self.large_k)
        if len(done) != len(shapes):  # the batch was skipped: the time budget ran out
            for backbone, k in shapes:
                self.row("memory", f"{backbone} K={k} dropout 0.1", False, "skipped: the time budget ran out")
            return
        for (backbone, k), job in zip(shapes, done, strict=True):
            estimate = estimates.fused_estimate(models[backbone], self.profile.classify_batch, k)
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

    def ddp_argv(self, data: dict, models: dict) -> list:
        tokens = jobs.tokenize(self.work, models["bert-base"], data["sample"])
        argv = ["pretrain", "--data", tokens, "--model", models["bert-base"], "--objective", "mlm", "--dropout", 0]
        argv += ["--max-steps", DDP_STEPS, "--lr", self.profile.lr, "--warmup", 0, "--batching", "random"]
        return argv + ["--num-workers", 0, "--restart"]

    def ddp_one_spec(self, data: dict, models: dict) -> tuple[str, list]:
        """DDP's one process at the whole batch (:meth:`ddp`)."""
        out = self.work / "ddp" / "1-process"
        return "ddp-1", [*self.ddp_argv(data, models), "--batch-size", self.profile.pretrain_batch, "--out", out]

    def ddp(self, data: dict, models: dict) -> None:
        """``pretrain`` MLM for a few steps as two processes at half the batch and as one at the whole, dropout 0,
        from the same weights: the weights must agree (pipeline/acceptance/verdicts.py ``ddp_verdict``)."""
        name = "2 processes = 1 process"
        if self.out_of_time("ddp", [name]):
            return
        p = self.profile
        outs = {n: self.work / "ddp" / f"{n}-process" for n in (1, 2)}
        name_one, argv_one = self.ddp_one_spec(data, models)
        one = self.ddp_one or jobs.run_job(name_one, argv_one, self.work, 300)  # run beside pretrain's jobs
        launcher = jobs.rule_launcher(2)
        half = [*self.ddp_argv(data, models), "--batch-size", p.pretrain_batch // 2, "--out", outs[2]]
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


def plan_file(run: Acceptance, card: str, layers: int) -> dict:
    """What the plan reads (pipeline/budget/acceptance_file.py SCHEMA); ``layers``: BERT-base's, over which its
    solo step is the per-layer floor, as workloads.yaml states the floor."""
    import datetime

    import torch

    fused = run.plan["fused_ms"]
    solo = fused.get(1)
    # the intercept of step time against FLOPs (floor_row); without one (CPU) a solo classify step, never read
    floor = run.plan.get("floor_ms") or (solo / layers if solo else 0.0)
    measured = {key: run.plan[key] for key in ("finetune_mfu", "pretrain_mfu") if run.plan.get(key)}
    return {
        "card": card,
        "date": datetime.date.today().isoformat(),
        "device": run.device,
        "torch": torch.__version__.split("+")[0],
        "step_floor_per_layer_ms": round(floor, 4),
        "fused_ratio": {k: round(ms / solo, 4) for k, ms in sorted(fused.items())} if solo else {},
        "mfu": run.plan["mfu"],
        "memory_factor": {kind: round(f, 4) for kind, f in run.plan["memory_factor"].items()},
    } | measured
