"""Would a paper run work on this GPU, and what would it cost? One command (issue 48 §1).

    make gpu-acceptance                  # CUDA: the papers' architectures, random weights, under 8 minutes (H100)
    make gpu-acceptance DEVICE=cpu       # CPU: tiny models of the same families, every row (CI runs this)

Runs the pipeline's own entry points (``python -m pipeline STAGE``, each training job a process of its own;
bench/acceptance_jobs.py) on data the repository carries (the demo's English dump through ``extract``,
``clean``, ``ngrams``, ``sample`` and ``tokenize``), a few dozen steps each, and checks the paths only a GPU
takes: bf16 autocast in every objective, fused stacks under ``vmap`` on CUDA, the memory model that sizes each
stack, CUDA random state across a resume, torchrun. Rows:

- ``pretrain`` for every objective the paper configs use (mlm, wwm, burt, spanbert, entity, MiSAD with the
  equation and the released loss, nsp, sop), on BERT-base, MiSAD on ELECTRA-base, and ALBERT-xxlarge MiSAD at
  the paper's batch (64): every loss finite and falling (the last quarter of the steps below the first),
  tokens/s, and the model FLOPs utilisation, counted as the plan counts a job's FLOPs (pipeline/budget/cost.py:
  padding processed, MiSAD's w and R passes and its scored candidates, ELECTRA's generator);
- ``classify --fuse K`` at BERT-base for K = 1, 4, 16 and BERT-large at the largest K the plan allows
  (pipeline/fused_groups.py's cap, pipeline/budget/memory.py): each member's training loss against its solo
  run with dropout off (equal within :data:`TOLERANCE`: float32 on CPU, bf16 autocast on CUDA, where the
  stacked and the single matrix products round differently), and ms per member-step;
- memory: the estimate of pipeline/budget/memory.py beside ``torch.cuda.max_memory_allocated`` of every
  job above (within 15%, or the plan's estimate is corrected by the measured factor);
- a fused job killed (SIGKILL) after its first resume save and run again gives the numbers and prediction
  files of the same job run straight through, dropout on;
- ``torchrun --nproc_per_node 1`` through the pretrain rule's own launch line.

It prints one table and writes ``OUT/acceptance.json`` (every row) and ``OUT/acceptance.yaml``; on CUDA also
``pipeline/budget/acceptance.yaml`` (the card's name and the date, the step floor, the fused ratios, the MFU
per objective and the memory factors), which the plan reads (pipeline/budget/acceptance_file.py): its
assumption line then says "measured on CARD, DATE". A CPU run never writes there. Exit status 1 when a row
fails.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import acceptance_jobs as jobs

REPO = jobs.REPO
# every objective the paper configs train (paper-en: MiSAD and its span and entity variants with the released
# loss, the equation in its ulr-electra experiment), and wwm and entity, which the configs offer; .released: the
# released run_mse.py's loss (--misad-loss released --pooling pooler)
PRETRAIN_OBJECTIVES = [
    "mlm", "wwm", "burt", "spanbert", "entity", "misad", "misad.released", "misad-span.released",
    "misad-entity.released", "nsp", "sop",
]  # fmt: skip
PRETRAIN_RUNS = [("bert-base", label) for label in PRETRAIN_OBJECTIVES]
PRETRAIN_RUNS += [("electra-base", "misad"), ("albert-xxlarge", "misad.released")]  # ULR-ELECTRA; Table 2's xxlarge
BASE_KS = [4, 16]
RESUME_K = 2  # a save holds K members' weights and AdamW moments (5 GB at K 4 on BERT-base): kept small
TOLERANCE = {"cpu": 1e-4, "cuda": 2e-2}  # |member loss - solo loss|: float32 (docs: 4 decimals); bf16 (8-bit mantissa)
MEMORY_TOLERANCE = 0.15
# the plan's keys (pipeline/plan/plan_costs.py objective_mfu) of the runs not on BERT-base
MFU_KEYS = {"electra-base+misad": "electra+misad", "albert-xxlarge+misad.released": "albert-xxlarge+misad"}
PAPER_FUSE = 16  # classify.fuse in paper-en.yaml and paper-zh.yaml


@dataclass(frozen=True)
class Profile:
    """The sizes of one form of the run: the models (tiny-model options, and the budget's architecture
    they stand for, for the estimates), steps, batches."""

    models: dict  # name -> tiny-model options
    vocab_size: int
    pretrain_steps: int
    pretrain_batch: int
    albert_steps: int
    lr: float
    classify_steps: int
    classify_batch: int
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
        resume_steps=30,
        resume_every=10,
        skip_steps=4,
    ),
    "cpu": Profile(  # tiny_hub's base / large / xxlarge proportions (pipeline/rehearsal/tiny_hub.py)
        models={
            "bert-base": ["--hidden", "32", "--layers", "2", "--heads", "2"],
            "bert-large": ["--hidden", "48", "--layers", "4", "--heads", "4"],
            "electra-base": ["--family", "electra", "--hidden", "32", "--layers", "2", "--heads", "2"],
            "albert-xxlarge": [
                "--family",
                "albert",
                "--hidden",
                "64",
                "--layers",
                "3",
                "--heads",
                "1",
                "--embedding-size",
                "16",
            ],
        },
        vocab_size=1000,
        pretrain_steps=8,
        pretrain_batch=16,
        albert_steps=8,
        lr=1e-3,
        classify_steps=4,
        classify_batch=8,
        resume_steps=8,
        resume_every=2,
        skip_steps=2,
    ),
}


class Acceptance:
    """The run: its rows, and what the plan's file is made of."""

    def __init__(self, device: str, work: Path, deadline: float):
        self.device, self.work, self.deadline = device, work, deadline
        self.profile = PROFILES[device]
        self.rows: list[dict] = []
        self.memory: list[dict] = []
        self.plan = {"mfu": {}, "fused_ms": {}, "memory_factor": {}}
        self.peak_tflops = peak_tflops() if device == "cuda" else None
        self.tolerance = TOLERANCE[device]
        self.large_k = 0

    def row(self, group: str, name: str, ok: bool | None, result: str, measure: str = "") -> None:
        verdict = "ok" if ok else "n/a" if ok is None else "FAIL"
        self.rows.append({"group": group, "row": name, "verdict": verdict, "result": result, "measure": measure})
        print(f"{verdict:4} {group:8} {name:26} {result}  {measure}", flush=True)

    def left(self) -> float:
        return self.deadline - time.monotonic()

    # ------------------------------------------------------------------ pre-training
    def pretrain(self, data: dict, models: dict) -> None:
        p = self.profile
        tokens = {
            name: {kind: jobs.tokenize(self.work, models[name], data[kind]) for kind in ("sample", "pairs")}
            for name in ("bert-base",)
        }
        tokens["electra-base"] = {"sample": jobs.tokenize(self.work, models["electra-base"], data["sample"])}
        tokens["albert-xxlarge"] = {"sample": jobs.tokenize(self.work, models["albert-xxlarge"], data["sample"])}
        for backbone, label in PRETRAIN_RUNS:
            objective, _, loss = label.partition(".")
            name = f"{backbone}+{label}"
            if self.left() < 0:
                self.row("pretrain", name, False, "skipped: the time budget ran out")
                continue
            albert = backbone == "albert-xxlarge"
            steps = p.albert_steps if albert else p.pretrain_steps
            kind = "pairs" if objective in ("nsp", "sop") else "sample"
            out = self.work / "pretrain" / name
            argv = ["pretrain", "--data", tokens[backbone][kind], "--model", models[backbone], "--objective", objective]
            argv += ["--max-steps", steps, "--batch-size", p.pretrain_batch, "--lr", p.lr, "--warmup", 0.1]
            argv += ["--num-workers", 2, "--restart", "--out", out]
            if loss == "released":  # the released run_mse.py's loss reads the trained pooler (paper-en.yaml)
                argv += ["--misad-loss", "released", "--pooling", "pooler"]
            job = jobs.run_job(name, argv, self.work, timeout=max(self.left(), 60))
            self.pretrain_row(name, models[backbone], objective, job, out)

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
                # puts w and R in the FLOPs per token (workloads.yaml misad.extra_train_passes), so S is taken
                # as that share: the MFU then turns the plan's FLOPs into the measured time
                processed_s /= 1 + misad_extra_passes()
            mfu = processed_s * flops_per_token(model, objective) / (self.peak_tflops * 1e12)
            measure += f", MFU {100 * mfu:.1f}%"
            self.plan["mfu"][MFU_KEYS.get(name, name.split("+", 1)[1])] = round(mfu, 4)
        else:
            measure += ", MFU n/a (CPU)" if self.device == "cpu" else ", MFU n/a (no known peak for this card)"
        self.row("pretrain", name, falls, result, measure)
        inputs = 1 + misad_extra_passes() if objective.startswith("misad") else 1  # the estimate counts w, R
        length = jobs.longest_batch(out, self.profile.pretrain_batch, inputs)
        self.memory_row("pretrain", name, job, pretrain_estimate(model, objective, self.profile.pretrain_batch, length))

    # ------------------------------------------------------------------ fused fine-tuning
    def classify(self, glue: Path, models: dict) -> None:
        p = self.profile
        large_k = largest_k(models["bert-large"], p.classify_batch)
        self.large_k = large_k
        for backbone, ks in (("bert-base", BASE_KS), ("bert-large", [large_k])):
            if self.left() < 0:
                self.row("classify", backbone, False, "skipped: the time budget ran out")
                continue
            solo = self.classify_job(f"{backbone}-solo", models[backbone], glue, max(ks), 1)
            solo_loss = jobs.per_seed_losses(solo.out)
            solo_ms = jobs.seed_speeds(solo.log, p.classify_batch)
            ok = solo.status == 0 and len(solo_loss) == max(ks)
            floor = sum(solo_ms.values()) / max(len(solo_ms), 1)
            self.row(
                "classify",
                f"{backbone} K=1 (solo)",
                ok,
                f"{len(solo_loss)} solo runs, dropout 0" if ok else f"exit {solo.status}: {solo.tail()}",
                f"{floor:.1f} ms per step",
            )
            self.memory_row("solo", f"{backbone} K=1", solo, fused_estimate(models[backbone], p.classify_batch, 1))
            if backbone == "bert-base" and ok:
                self.plan["fused_ms"][1] = floor
            for k in ks:
                if self.left() < 0:
                    self.row("classify", f"{backbone} K={k}", False, "skipped: the time budget ran out")
                    continue
                fused = self.classify_job(f"{backbone}-fused{k}", models[backbone], glue, k, k)
                losses = jobs.per_seed_losses(fused.out)
                ms = jobs.seed_speeds(fused.log, p.classify_batch)
                if fused.status != 0 or len(losses) != k or not ok:
                    self.row("classify", f"{backbone} K={k}", False, f"exit {fused.status}: {fused.tail()}")
                    continue
                diff = max(abs(losses[s] - solo_loss[s]) for s in losses)
                member = sum(ms.values()) / max(len(ms), 1)
                self.row(
                    "classify",
                    f"{backbone} K={k}",
                    diff <= self.tolerance and math.isfinite(diff),
                    f"max |member - solo| loss {diff:.2e} (tolerance {self.tolerance:g})",
                    f"{member:.2f} ms per member-step ({member / floor:.3f} of solo)",
                )
                if backbone == "bert-base":
                    self.plan["fused_ms"][k] = member
                self.memory_row(
                    "classify", f"{backbone} K={k}", fused, fused_estimate(models[backbone], p.classify_batch, k)
                )

    def classify_job(self, name: str, model: Path, glue: Path, seeds: int, fuse: int) -> jobs.Job:
        p = self.profile
        out = self.work / "classify" / name
        argv = ["classify", "--model", model, "--task", "sst2", "--data", glue, "--seeds", seeds, "--fuse", fuse]
        argv += ["--max-steps", p.classify_steps, "--batch-size", p.classify_batch, "--max-length", 128]
        argv += ["--dropout", 0, "--no-test", "--bf16", "--out", out]
        job = jobs.run_job(name, argv, self.work, timeout=max(self.left(), 60))
        job.out = out
        return job

    def resume(self, glue: Path, models: dict) -> None:
        """The fused job killed after a save and run again, against the same job straight through."""
        p = self.profile
        argv = ["classify", "--model", models["bert-base"], "--task", "sst2", "--data", glue, "--seeds", RESUME_K]
        argv += [
            "--fuse",
            RESUME_K,
            "--max-steps",
            p.resume_steps,
            "--batch-size",
            p.classify_batch,
            "--max-length",
            128,
        ]
        argv += ["--dropout", 0.1, "--no-test", "--bf16", "--resume-every", p.resume_every]
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
        self.row(
            "resume",
            f"fused K={RESUME_K} killed + rerun",
            ok,
            result,
            f"dropout 0.1, save every {p.resume_every} steps",
        )

    def torchrun(self, data: dict, models: dict) -> None:
        """torchrun --nproc_per_node 1 through the pretrain rule's launch line."""
        launcher = jobs.rule_launcher(1)
        tokens = jobs.tokenize(self.work, models["bert-base"], data["sample"])
        out = self.work / "pretrain" / "torchrun-mlm"
        argv = ["pretrain", "--data", tokens, "--model", models["bert-base"], "--objective", "mlm", "--generator="]
        argv += ["--max-steps", self.profile.pretrain_steps, "--batch-size", self.profile.pretrain_batch]
        argv += ["--lr", self.profile.lr, "--resume", "--num-workers", 1, "--out", out]
        job = jobs.run_job("torchrun", argv, self.work, max(self.left(), 60), launcher=launcher)
        values = jobs.losses(out)
        ok = job.status == 0 and bool(values) and all(math.isfinite(v) for v in values)
        result = f"{len(values)} steps, loss {values[-1]:.3f}" if ok else f"exit {job.status}: {job.tail()}"
        self.row("torchrun", "pretrain rule, 1 process", ok, result, " ".join(launcher))

    # ------------------------------------------------------------------ memory
    def memory_row(self, group: str, name: str, job: jobs.Job, estimate_bytes: float | None) -> None:
        """The job's peak beside the estimate. ``group`` "solo": a job of sequential one-run fits (the Trainer's),
        shown but not fed to the plan, which sizes stacks (``fused``) and pre-training jobs (``pretrain``)."""
        kind = {"pretrain": "pretrain", "classify": "fused"}.get(group)
        if self.device == "cpu":  # the estimate runs (so it cannot rot); torch measures no CPU peak
            shown = f"estimate {estimate_bytes / 1e6:.1f} MB" if estimate_bytes else "no estimate"
            self.memory.append({"row": name, "verdict": "n/a", "result": f"{shown}, peak n/a (CPU)", "kind": kind})
            return
        if job.peak_bytes is None or not estimate_bytes:
            self.memory.append({"row": name, "verdict": "FAIL", "result": "no peak or estimate", "kind": kind})
            return
        factor = job.peak_bytes / estimate_bytes
        ok = abs(factor - 1) <= MEMORY_TOLERANCE
        result = f"estimate {estimate_bytes / 1e9:.2f} GB, peak {job.peak_bytes / 1e9:.2f} GB ({factor:.2f}x)"
        if kind is None:
            verdict = "ok" if ok else "n/a"
            result += "" if ok else " (sequential solo runs, not fed to the plan)"
        else:  # the largest ratio of its kind: the correction never leaves a measured job above its estimate
            self.plan["memory_factor"][kind] = max(self.plan["memory_factor"].get(kind, 0.0), factor)
            verdict = "ok" if ok else "corrected"
        self.memory.append({"row": name, "verdict": verdict, "result": result, "kind": kind, "factor": factor})

    def memory_rows(self) -> None:
        for entry in self.memory:
            verdict = entry["verdict"]
            ok = None if verdict == "n/a" else verdict != "FAIL"
            note = " (outside 15%: the plan's estimate is scaled by it)" if verdict == "corrected" else ""
            self.row("memory", entry["row"], ok, entry["result"] + note)


# ------------------------------------------------------------------ estimates, as the plan makes them
def architecture_of(model: Path):
    """The budget's :class:`~pipeline.budget.cost.Architecture` of a model folder, from its ``config.json``:
    on CUDA the released checkpoint's shape (tiny-model --architecture), on CPU the tiny one's, so that the
    estimates run in both forms; and whether it shares its layers (ALBERT)."""
    from pipeline.budget.cost import Architecture

    config = json.loads((model / "config.json").read_text(encoding="utf-8"))
    embedding = config.get("embedding_size")
    embedding = embedding if embedding and embedding != config["hidden_size"] else None
    arch = Architecture(
        config["num_hidden_layers"], config["hidden_size"], config["intermediate_size"], config["vocab_size"], embedding
    )
    return arch, config.get("model_type") == "albert"


def peak_tflops() -> float | None:
    """The dense bf16 peak of the card, from the budget's table (pipeline/budget/cost.py GPUS); None if unknown."""
    import torch

    from pipeline.budget import cost

    name = torch.cuda.get_device_name(0).lower()
    return next((gpu.peak_tflops for key, gpu in cost.GPUS.items() if key in name), None)


def misad_extra_passes() -> float:
    from pipeline.budget import cost

    return cost.workloads()["misad"]["extra_train_passes"]


def flops_per_token(model: Path, objective: str) -> float:
    """FLOPs per processed token as the plan counts a pre-training job's (pipeline/plan/plan_costs.py
    pretrain_cost, plan_models.py generator_cost), at its 128 tokens: the training passes, MiSAD's w and R and
    its scored candidates (the default --misad-choice mlm-score, the plain ``misad`` objective), an ELECTRA
    generator's (``generator/``)."""
    from pipeline.budget import cost

    work = cost.workloads()
    arch, _ = architecture_of(model)
    flops = arch.training_flops_per_token(128)
    if objective.startswith("misad"):
        flops *= 1 + work["misad"]["extra_train_passes"]
        if objective == "misad":
            flops += work["misad"]["scored_candidates"] * arch.forward_flops_per_token(128)
    if (model / "generator" / "config.json").exists():
        flops += architecture_of(model / "generator")[0].training_flops_per_token(128)
    return flops


def pretrain_estimate(model: Path, objective: str, batch: int, length: int) -> float | None:
    """pipeline/budget/memory.py's estimate of the job, as the plan calls it (MiSAD's extra passes), without a
    measured correction, at the longest padded batch the job ran."""
    if length <= 0:
        return None
    from pipeline.budget import cost, memory

    passes = 1 + (cost.workloads()["misad"]["extra_train_passes"] if objective.startswith("misad") else 0)
    arch, shared = architecture_of(model)
    found = memory.training_memory(arch, batch, length, passes, shared_layers=shared, corrected=False)
    return found.total_gb * memory.GB


def fused_estimate(model: Path, batch: int, members: int) -> float:
    """K members' memory as pipeline/budget/memory.py counts a fused stack (``member_bytes``), uncorrected."""
    from pipeline.budget import memory

    arch, shared = architecture_of(model)
    return members * memory.member_bytes(arch, batch, 128, shared_layers=shared, corrected=False)


def largest_k(model: Path, batch: int) -> int:
    """The largest stack the plan allows (pipeline/fused_groups.py ``fused_runs``: the paper configs'
    ``classify.fuse`` 16 capped by pipeline/budget/memory.py, measured factor included): BERT-large at batch 32
    x 128 tokens, 7."""
    from pipeline.budget import memory

    arch, shared = architecture_of(model)
    return min(PAPER_FUSE, memory.largest_fused_members(arch, batch, 128, shared_layers=shared))


# ------------------------------------------------------------------ output
def expected_rows(large_k: int) -> list[tuple[str, str]]:
    """Every row the table must have (group, row): a run that lacks one fails, so the CPU form in CI proves
    that every path still runs."""
    pretrain = [f"{backbone}+{label}" for backbone, label in PRETRAIN_RUNS]
    classify = [f"{b} K={k}" for b, ks in (("bert-base", BASE_KS), ("bert-large", [large_k])) for k in [1, *ks]]
    rows = [("pretrain", name) for name in pretrain]
    rows += [("classify", name + " (solo)" if name.endswith("K=1") else name) for name in classify]
    rows += [("resume", f"fused K={RESUME_K} killed + rerun"), ("torchrun", "pretrain rule, 1 process")]
    return rows + [("memory", name) for name in pretrain + classify]


def table(rows: list[dict]) -> str:
    widths = [max(len(r[key]) for r in rows) for key in ("group", "row", "verdict")]
    lines = []
    for r in rows:
        cells = [r["group"].ljust(widths[0]), r["row"].ljust(widths[1]), r["verdict"].ljust(widths[2])]
        lines.append(" | ".join([*cells, r["result"] + (f"; {r['measure']}" if r["measure"] else "")]))
    return "\n".join(lines)


def plan_file(run: Acceptance, card: str, layers: int) -> dict:
    """What the plan reads (pipeline/budget/acceptance_file.py SCHEMA); ``layers``: BERT-base's, over which its
    solo step is the per-layer floor, as workloads.yaml states the floor."""
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


def write_yaml(path: Path, data: dict, header: str) -> None:
    """Written whole or not at all (pipeline/atomic.py): a killed run never leaves the plan half a file."""
    import yaml

    from pipeline.atomic import AtomicFiles

    with AtomicFiles() as files:
        files.temp(path).write_text(header + yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=tuple(PROFILES), default="cuda")
    parser.add_argument("--out", type=Path, help="default results/gpu-acceptance/DEVICE")
    parser.add_argument("--budget-s", type=float, default=420, help="start no job after this (the run < 8 min)")
    parser.add_argument("--no-plan", action="store_true", help="CUDA: do not write pipeline/budget/acceptance.yaml")
    args = parser.parse_args(argv)
    started = time.monotonic()
    out = (args.out or REPO / "results" / "gpu-acceptance" / args.device).resolve()
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("error: --device cuda and torch sees no CUDA device; `make gpu-acceptance DEVICE=cpu` runs the CPU form")
        return 2
    if args.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
    card = torch.cuda.get_device_name(0) if args.device == "cuda" else "CPU (tiny models)"
    run = Acceptance(args.device, out / "work", started + args.budget_s)
    print(f"gpu-acceptance on {card}, {datetime.date.today().isoformat()}: {out}", flush=True)
    data = jobs.make_data(run.work / "data")
    glue = jobs.make_glue(run.work, data["sentences"])
    models = {
        name: jobs.make_model(run.work, name, data["sentences"], options, run.profile.vocab_size)
        for name, options in run.profile.models.items()
    }
    run.pretrain(data, models)
    run.classify(glue, models)
    run.resume(glue, models)
    run.torchrun(data, models)
    run.memory_rows()
    present = {(r["group"], r["row"]) for r in run.rows}
    for group, name in expected_rows(run.large_k):
        if (group, name) not in present:
            run.rows.append({"group": group, "row": name, "verdict": "FAIL", "result": "row missing", "measure": ""})
    seconds = time.monotonic() - started
    print(f"\ngpu-acceptance on {card}, {datetime.date.today().isoformat()}, {seconds:.0f} s\n{table(run.rows)}")
    summary = plan_file(run, card, architecture_of(models["bert-base"])[0].layers)
    from pipeline.budget.acceptance_file import ACCEPTANCE, check

    check({**summary, "device": "cuda"}, out / "acceptance.yaml")  # the writer kept to the schema, CPU form too
    (out / "acceptance.json").write_text(json.dumps({**summary, "seconds": round(seconds), "rows": run.rows}, indent=1))
    header = "# bench/gpu_acceptance.py: what a paper run measured on this card (pipeline/budget/acceptance_file.py)\n"
    write_yaml(out / "acceptance.yaml", summary, header)
    failed = [r for r in run.rows if r["verdict"] == "FAIL"]
    if args.device == "cuda" and not args.no_plan and not failed:
        write_yaml(ACCEPTANCE, check(summary, ACCEPTANCE), header)
        print(f"wrote {ACCEPTANCE.relative_to(REPO)}: the plan now reads it")
    elif args.device == "cuda" and failed:
        print("a row failed: pipeline/budget/acceptance.yaml not written")
    print(f"{len(run.rows) - len(failed)} of {len(run.rows)} rows passed or n/a; {seconds:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
