"""The time, GPU memory and disk the acceptance run needs before it starts (docs/stages/acceptance.md "Time"),
which the preflight (pipeline/acceptance/host.py) checks against the budget, the card and the disk.

What the run starts is read from where its rows are defined (pipeline/acceptance/layout.py ``launches`` and
``model_names``), so that a row or job added there is counted here (tests/test_gpu_acceptance.py runs the rows
with counting stand-ins for the jobs and checks both agree)."""

from __future__ import annotations

from pipeline.acceptance import layout
from pipeline.acceptance.estimates import PAPER_FUSE

# The run's time, as preflight checks it against --budget-s (docs/stages/acceptance.md "Time"): a process start
# (Python, torch, transformers, the CUDA context), a job's own start and save, the models' random initialisation,
# and the steps at an assumed share of the card's peak (bf16, or float32 with TF32 off for the fp32 rows). On CPU
# the figures are the CPU form's, measured on 2 cores.
TIME = {
    "cuda": {"process_s": 12.0, "job_s": 3.0, "model_s": 12.0, "mfu": 0.25, "tflops": 989.0, "fp32_tflops": 67.0},
    "cpu": {"process_s": 6.0, "job_s": 1.5, "model_s": 2.0, "mfu": None, "tflops": None, "fp32_tflops": None},
}
# the papers' architectures the CUDA run builds (layout.PROFILES["cuda"] ``--architecture``), for the FLOPs
ARCHITECTURE_OF = {
    name: options[options.index("--architecture") + 1] for name, options in layout.PROFILES["cuda"].models.items()
}


def large_k() -> int:
    """BERT-large's K, as pipeline/acceptance/estimates.py ``largest_k`` finds it on the CUDA run's model."""
    from pipeline.budget import cost, memory

    arch = cost.ARCHITECTURES[ARCHITECTURE_OF["bert-large"]]
    return min(PAPER_FUSE, memory.largest_fused_members(arch, layout.PROFILES["cuda"].classify_batch, 128))


def chid_k() -> int:
    """The ChID stack's K, as layout.py ``chid_k`` finds it on the CUDA run's wwm-ext model."""
    from pipeline.budget import cost, memory

    p = layout.PROFILES["cuda"]
    arch = cost.ARCHITECTURES[ARCHITECTURE_OF["wwm-ext"]]
    return min(PAPER_FUSE, memory.largest_fused_members(arch, p.chid_batch * layout.jobs.CHID_CANDIDATES, 256))


def counts(device: str, quick: bool) -> dict:
    """``processes``, ``jobs`` and ``models`` the run starts (layout.py ``launches``, ``model_names``)."""
    plan = layout.launches(device, quick, large_k(), chid_k())
    return {
        "processes": sum(launch.processes for launch in plan),
        "jobs": sum(launch.jobs for launch in plan),
        "models": len(layout.model_names(device, quick)),
    }


def step_seconds(device: str, quick: bool) -> float:
    """The steps' FLOPs (pipeline/budget/cost.py's training FLOPs per token at each step's shape) at the assumed
    share of the card's bf16 peak (float32's for the fp32 rows); 0 on CPU, whose figures are measured whole."""
    from pipeline.budget import cost

    t = TIME[device]
    if not t["tflops"]:
        return 0.0
    seconds = 0.0
    for launch in layout.launches(device, quick, large_k(), chid_k()):
        for backbone, sequences, length, member_steps, float32 in launch.work:
            arch = cost.ARCHITECTURES[ARCHITECTURE_OF[backbone]]
            flops = sequences * length * member_steps * arch.training_flops_per_token(length)
            seconds += flops / ((t["fp32_tflops"] if float32 else t["tflops"]) * 1e12 * t["mfu"])
    return seconds


def run_need(device: str, quick: bool) -> dict:
    """What the run needs before it starts (host.preflight): ``seconds``, ``gpu_gb`` (the largest job, as the
    memory model estimates it) and ``disk_gb`` (the models and saves it writes), from the released shapes."""
    from pipeline.budget import cost, memory

    t, p, n = TIME[device], layout.PROFILES[device], counts(device, quick)
    seconds = n["processes"] * t["process_s"] + n["jobs"] * t["job_s"] + n["models"] * t["model_s"]
    seconds += step_seconds(device, quick)
    base = cost.ARCHITECTURES[ARCHITECTURE_OF["bert-base"]]
    gb = memory.GB
    largest = PAPER_FUSE * memory.member_bytes(base, p.classify_batch, 128, corrected=False) / gb
    if not quick:
        largest = max(largest, memory.GPU_GB * memory.HEADROOM)  # BERT-large's K fills the plan's share
    if device == "cpu":
        largest = 0.0
    pretrain = layout.QUICK_PRETRAIN if quick else layout.PRETRAIN_RUNS
    built = {name: cost.ARCHITECTURES[ARCHITECTURE_OF[name]] for name in layout.model_names("cuda", quick)}
    params = base.parameters * (len(pretrain) + 4) + sum(a.parameters for n, a in built.items() if n != "bert-base")
    disk = 4 * params / gb + 16 * layout.RESUME_K * base.parameters / gb
    return {"seconds": seconds, "gpu_gb": largest, "disk_gb": disk if device == "cuda" else 0.5}
