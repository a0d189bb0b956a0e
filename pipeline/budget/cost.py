"""GPU cost model: the training FLOPs of a workload and the GPU-hours they take at a stated utilisation.

FLOPs per processed token (docs/design.md "GPU budget"): a training step costs ``6N + 12·L·H·T``
per token, the forward and backward passes through every weight (6 per weight: Kaplan et al.
2020, §2.1) plus the attention scores and values over the ``T`` positions of the sequence
(PaLM, Chowdhery et al. 2022, App. B); a gradient-free forward pass (MiSAD's scoring of
candidate n-grams, ULR-BERT §3.3) costs a third, ``2N + 4·L·H·T``. ``N`` is the parameters a
token passes through: every Transformer layer as applied (ALBERT's shared layer counts once per
layer), the input embedding projection where it is factorised (ALBERT's E × H) and the output
vocabulary projection (V × E, tied to the input embeddings in these models). For BERT-base this
is 108.4M, the "110M" the papers quote, and at 40% of an H100's dense bf16 peak it gives the
0.59M tokens/s that BERT-base pre-training reaches there.

Processed tokens include padding: ``tokens / (1 - padding_share)``, with the share measured by
``bench/loader.py`` for each input format. GPU-hours are ``FLOPs / (peak × MFU) / 3600`` on one of
:data:`GPUS`, the MFU stated by the caller (:data:`DEFAULT_MFU` unless given).

A small step is not FLOPs-bound: an eager PyTorch step launches every kernel of the forward and
backward passes and of the optimiser from the host, whatever the batch holds. So a job costs the
larger of its FLOPs time and ``steps × floor`` (:func:`job_hours`), the floor a model's per-step
time at no work (:func:`step_floor_seconds`: a time per Transformer layer, from a public
measurement cited in ``workloads.yaml``). The floor is host-bound, the same on every GPU.
A BiLSTM step's floor grows with its size (:func:`bilstm_step_seconds`): its recurrence is a loop
of dependent time steps, each at least a kernel launch and at most as fast as the GPU's float32
arithmetic on the recurrent matrix product.

Every estimate carries its FLOPs time beside it (:class:`JobCost`), so that a plan shows how far
its floor-bound total is from the work it does. A fused job (several runs of one grid stacked in
one model, each step running every member, issue 41) costs the larger of its members' FLOPs time
and its steps × the solo floor × the operator ratio measured at its size (:func:`fused_job_cost`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

# The measured inputs of the model: tokens per example, padding shares, per-step floors (bench/gpu_step.py
# writes its measurement here), a multiple-choice example's candidates; each value cites its source.
WORKLOADS = Path(__file__).with_name("workloads.yaml")
DEFAULT_MFU = 0.40  # BERT pre-training on an H100 with fused attention; Hugging Face run_mlm is near 0.24


@dataclass(frozen=True)
class GPU:
    name: str
    peak_tflops: float  # dense bf16 tensor-core peak, TFLOP/s
    fp32_tflops: float  # float32 (CUDA-core, not tensor-core) peak, TFLOP/s


# The vendors' datasheets: dense (not 2:4-sparse) bf16 tensor-core throughput of the SXM parts, and
# their float32 throughput (H100 / H200 SXM 67, A100 19.5 TFLOP/s).
GPUS = {
    "h100": GPU("NVIDIA H100 SXM", 989.4, 67.0),
    "h200": GPU("NVIDIA H200 SXM", 989.4, 67.0),
    "a100": GPU("NVIDIA A100 SXM", 312.0, 19.5),
}


@dataclass(frozen=True)
class JobCost:
    """GPU-hours of some work (each job at least its floor) and the FLOPs time of the same work at the
    stated MFU; they add, and scale by a count of like jobs. ``floor_hours`` is its steps × per-step floor
    alone: what a job split over several GPUs (DDP, the same global batch) still takes on each, since every
    process runs every step (pipeline/plan/schedule.py)."""

    hours: float = 0.0
    flops_hours: float = 0.0
    floor_hours: float = 0.0

    def __add__(self, other: JobCost) -> JobCost:
        return JobCost(
            self.hours + other.hours, self.flops_hours + other.flops_hours, self.floor_hours + other.floor_hours
        )

    def __mul__(self, count: float) -> JobCost:
        return JobCost(self.hours * count, self.flops_hours * count, self.floor_hours * count)

    __rmul__ = __mul__


@dataclass(frozen=True)
class Architecture:
    """The shape of a Transformer encoder, as its ``config.json`` gives it."""

    layers: int
    hidden: int
    intermediate: int
    vocab: int
    embedding: int | None = None  # ALBERT's factorised embedding size E; None: E = hidden

    @property
    def parameters(self) -> int:
        """``N``: the weights a token passes through (see the module docstring)."""
        embedding = self.embedding or self.hidden
        per_layer = 4 * self.hidden**2 + 2 * self.hidden * self.intermediate  # Q, K, V, O and the FFN
        projection = embedding * self.hidden if embedding != self.hidden else 0
        return self.layers * per_layer + projection + self.vocab * embedding

    def training_flops_per_token(self, length: int) -> int:
        """``6N + 12·L·H·T``: forward and backward of one token in a sequence of ``length`` positions."""
        return 6 * self.parameters + 12 * self.layers * self.hidden * length

    def forward_flops_per_token(self, length: int) -> int:
        """``2N + 4·L·H·T``: a gradient-free forward pass."""
        return 2 * self.parameters + 4 * self.layers * self.hidden * length

    def step_floor_seconds(self, per_layer_ms: float) -> float:
        """The least time one eager training step (forward, backward, optimiser) of this encoder takes,
        at ``per_layer_ms`` per Transformer layer as applied (ALBERT's shared layer counts per layer)."""
        return self.layers * per_layer_ms / 1000


# The released checkpoints the configs name, from their config.json on the Hugging Face hub.
ARCHITECTURES = {
    "bert-base-uncased": Architecture(12, 768, 3072, 30522),
    "bert-large-uncased": Architecture(24, 1024, 4096, 30522),
    "bert-base-chinese": Architecture(12, 768, 3072, 21128),
    "chinese-bert-wwm-ext": Architecture(12, 768, 3072, 21128),
    "albert-base-v2": Architecture(12, 768, 3072, 30000, embedding=128),
    "albert-xxlarge-v2": Architecture(12, 4096, 16384, 30000, embedding=128),
    "electra-base-discriminator": Architecture(12, 768, 3072, 30522),
    "electra-base-generator": Architecture(12, 256, 1024, 30522, embedding=768),
    "electra-large-discriminator": Architecture(24, 1024, 4096, 30522),
    "electra-large-generator": Architecture(24, 256, 1024, 30522, embedding=1024),
    "all-MiniLM-L6-v2": Architecture(6, 384, 1536, 30522),
}


@dataclass(frozen=True)
class Workload:
    """What one job computes: ``tokens`` real tokens trained on (forward and backward) in sequences of
    ``length`` positions, and ``forward_tokens`` passed forward without gradients, each padded by
    ``padding_share`` of the processed tokens."""

    architecture: Architecture
    tokens: float
    length: int
    padding_share: float = 0.0
    forward_tokens: float = 0.0

    def __post_init__(self):
        if not 0 <= self.padding_share < 1:
            raise ValueError(f"padding_share must be in [0, 1), got {self.padding_share}")

    @property
    def processed_tokens(self) -> float:
        """Tokens through the model with gradients, padding included."""
        return self.tokens / (1 - self.padding_share)

    @property
    def flops(self) -> float:
        padded = 1 / (1 - self.padding_share)
        train = self.tokens * padded * self.architecture.training_flops_per_token(self.length)
        forward = self.forward_tokens * padded * self.architecture.forward_flops_per_token(self.length)
        return train + forward


def gpu_hours(flops: float, gpu: str = "h100", mfu: float = DEFAULT_MFU) -> float:
    """Hours of one GPU that ``flops`` take at model FLOPs utilisation ``mfu`` of its dense bf16 peak."""
    if gpu not in GPUS:
        raise ValueError(f"unknown GPU {gpu!r}; choose from {', '.join(GPUS)}")
    if not 0 < mfu <= 1:
        raise ValueError(f"mfu must be in (0, 1], got {mfu}")
    return flops / (GPUS[gpu].peak_tflops * 1e12 * mfu) / 3600


@cache
def workloads() -> dict:
    """``workloads.yaml``, read once, its floors checked (pipeline/budget/workloads_file.py)."""
    from pipeline.budget.workloads_file import read_workloads

    return read_workloads(WORKLOADS)


def architecture(repo: str) -> Architecture | None:
    """The shape of a hub repository's model (``org/name``, by its name), None where it is not listed."""
    return ARCHITECTURES.get(repo.rsplit("/", 1)[-1])


def job_hours(flops: float, steps: float, floor_seconds: float, gpu: str = "h100", mfu: float = DEFAULT_MFU) -> float:
    """Hours of one GPU for a job of ``steps`` optimizer steps computing ``flops``: the larger of its FLOPs
    time at ``mfu`` and ``steps × floor_seconds`` (a step takes at least its launch and optimiser time)."""
    if steps < 0 or floor_seconds < 0:
        raise ValueError(f"steps and floor_seconds must be >= 0, got {steps} and {floor_seconds}")
    return max(gpu_hours(flops, gpu, mfu), steps * floor_seconds / 3600)


def job_cost(flops: float, steps: float, floor_seconds: float, gpu: str = "h100", mfu: float = DEFAULT_MFU) -> JobCost:
    """:func:`job_hours` with the FLOPs time and the floor time beside it."""
    return JobCost(
        job_hours(flops, steps, floor_seconds, gpu, mfu), gpu_hours(flops, gpu, mfu), steps * floor_seconds / 3600
    )


def fused_job_cost(
    member_flops: list[float],
    steps: float,
    floor_seconds: float,
    operator_ratio: float,
    gpu: str = "h100",
    mfu: float = DEFAULT_MFU,
) -> JobCost:
    """A fused job of ``len(member_flops)`` runs stepping together (issue 41 §2): the larger of the FLOPs
    time of all its members and its ``steps`` × the fused floor, the solo ``floor_seconds`` scaled by the
    ``operator_ratio`` measured at that many members (operators a fused step dispatches over a solo
    step's; workloads.yaml ``fused_operator_ratio``)."""
    if operator_ratio <= 0:
        raise ValueError(f"operator_ratio must be > 0, got {operator_ratio}")
    return job_cost(sum(member_flops), steps, floor_seconds * operator_ratio, gpu, mfu)


def bilstm_step_seconds(
    hidden: int,
    batch: int,
    time_steps: float,
    launch_seconds: float,
    gpu: str = "h100",
    sentences: int = 2,
    passes: int = 3,
) -> float:
    """The least time one training step of a BiLSTM of ``hidden`` units per direction takes: its recurrence
    runs ``time_steps`` dependent steps per sentence and pass (``sentences`` of a pair, forward and a
    backward of about twice its kernels: ``passes``), each the larger of one kernel launch and the
    recurrent product of both directions, 2 × 2·batch·hidden·4·hidden FLOPs, at the GPU's float32 peak
    (the bilstm stage trains in float32)."""
    recurrent = 2 * 2 * batch * hidden * 4 * hidden
    per_step = max(launch_seconds, recurrent / (GPUS[gpu].fp32_tflops * 1e12))
    return sentences * passes * time_steps * per_step


def tokens_per_second(architecture: Architecture, length: int, gpu: str = "h100", mfu: float = DEFAULT_MFU) -> float:
    """Training tokens per second one GPU processes at ``mfu`` (padding included)."""
    return GPUS[gpu].peak_tflops * 1e12 * mfu / architecture.training_flops_per_token(length)


def assumptions(
    gpu: str = "h100", mfu: float = DEFAULT_MFU, per_layer_ms: float | None = None, floor_source: str | None = None
) -> str:
    """The line every estimate prints with it; ``floor_source`` says where the per-step floor comes from."""
    line = (
        f"FLOPs per token 6N + 12·L·H·T (training), 2N + 4·L·H·T (forward only); {GPUS[gpu].name} at "
        f"{GPUS[gpu].peak_tflops:g} TFLOP/s dense bf16, {100 * mfu:g}% MFU; padding counted as processed"
    )
    if per_layer_ms is not None:
        line += (
            f"; each job at least steps × a per-step floor of {per_layer_ms:g} ms per Transformer layer "
            f"({12 * per_layer_ms:g} ms for 12 layers, {24 * per_layer_ms:g} ms for 24; "
            f"{floor_source or 'workloads.yaml step_floor'})"
        )
    return line
