"""The time, GPU memory and disk the acceptance run needs before it starts (docs/stages/acceptance.md "Time"),
which the preflight (pipeline/acceptance/host.py) checks against the budget, the card and the disk."""

from __future__ import annotations

from pipeline.acceptance import rows
from pipeline.acceptance.estimates import PAPER_FUSE

# The run's time, as preflight checks it against --budget-s (docs/stages/acceptance.md "Time"): a process start
# (Python, torch, transformers, the CUDA context), a job's own start and save, the models' random initialisation,
# and the steps at an assumed share of the card's peak. On CPU the figures are the CPU form's, measured on 2 cores.
TIME = {
    "cuda": {"process_s": 12.0, "job_s": 3.0, "model_s": 12.0, "mfu": 0.25, "tflops": 989.0},
    "cpu": {"process_s": 6.0, "job_s": 1.5, "model_s": 2.0, "mfu": None, "tflops": None},
}


def run_need(device: str, quick: bool) -> dict:
    """What the run needs before it starts (host.preflight): ``seconds``, ``gpu_gb`` (the largest job, as the
    memory model estimates it) and ``disk_gb`` (the models and saves it writes), from the released shapes."""
    from pipeline.budget import cost, memory

    t, p = TIME[device], rows.PROFILES[device]
    pretrain = rows.QUICK_PRETRAIN if quick else rows.PRETRAIN_RUNS
    # processes: the pretrain batch, 2 fused pairs (fp32, bf16 base), memory, DDP 1 + 2, (large pair, resume 3,
    # torchrun) in the full run; jobs: every stage run in them
    processes = 1 + 2 + 1 + 3 + (0 if quick else 2 + 3 + 1)
    jobs = len(pretrain) + 4 + 2 + 3 + (0 if quick else 2 + 1 + 3 + 1)
    models = 2 if quick else 4
    seconds = processes * t["process_s"] + jobs * t["job_s"] + models * t["model_s"]
    base, large = cost.ARCHITECTURES["bert-base-uncased"], cost.ARCHITECTURES["bert-large-uncased"]
    xxlarge = cost.ARCHITECTURES["albert-xxlarge-v2"]
    if t["tflops"]:
        tokens = p.pretrain_batch * 128 * p.pretrain_steps
        flops = len(pretrain) * tokens * base.training_flops_per_token(128)
        flops += 0 if quick else p.pretrain_batch * 128 * p.albert_steps * xxlarge.training_flops_per_token(128)
        fused = p.classify_batch * 128 * p.classify_steps * 2  # solo and fused, each K runs
        flops += fused * (
            PAPER_FUSE * base.training_flops_per_token(128) + (0 if quick else 7 * large.training_flops_per_token(128))
        )
        seconds += flops / (t["tflops"] * 1e12 * t["mfu"])
    gb = memory.GB
    largest = PAPER_FUSE * memory.member_bytes(base, p.classify_batch, 128, corrected=False) / gb
    if not quick:
        largest = max(largest, memory.GPU_GB * memory.HEADROOM)  # BERT-large's K fills the plan's share
    if device == "cpu":
        largest = 0.0
    params = base.parameters * (len(pretrain) + 4) + (0 if quick else large.parameters + xxlarge.parameters)
    disk = 4 * params / gb + 16 * rows.RESUME_K * base.parameters / gb
    return {"seconds": seconds, "gpu_gb": largest, "disk_gb": disk if device == "cuda" else 0.5}
