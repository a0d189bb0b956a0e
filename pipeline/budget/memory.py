"""GPU memory of a training job, for the plan (pipeline/plan/plan.py): does a row fit one 80 GB GPU at
its paper's batch size, and if not, how is the batch split.

A job holds, per GPU, what a bf16 mixed-precision step keeps (``torch.autocast`` with bfloat16: the pretrain stage
on a GPU, classify's ``--bf16``, which the paper configs set), counted from Korthikanti et al. 2022, *Reducing
Activation Recomputation in Large Transformer Models*, §4.1 (16-bit activations, no recomputation), and from
what autocast keeps beside them (PyTorch's "Automatic Mixed Precision" reference, torch.amp: its op lists and
its weight cache):

- the weights, their gradients and Adam's two moments in fp32 (mixed precision keeps fp32 masters):
  16 bytes per stored parameter (ALBERT stores its one shared layer once: Lan et al. 2020, §3.1);
- the bf16 copy of every matrix a matrix product reads: autocast casts a float32 weight to bf16 for
  ``linear`` / ``matmul`` (the ops that autocast to lower precision) and keeps the cast in its weight cache
  (``torch.autocast(cache_enabled=True)``, the default) until the forward ends, and the backward reads it: 2
  bytes per parameter of the Transformer layers' matrices (once for ALBERT's shared layer; its embedding
  projection too), and in pre-training of the MLM decoder's tied embedding. A fused stack's members each have
  their own weights, so each its own copy (:func:`member_bytes`);
- the activations of every Transformer layer as applied, for ``b`` sequences of ``s`` positions, hidden size
  ``h`` and ``a`` heads (``h / 64``, as every model here): Korthikanti's ``34·s·b·h + 5·a·s²·b`` bytes assume
  every tensor 16-bit, but autocast runs ``layer_norm`` and ``softmax`` in float32 (both on its list of ops
  that autocast to float32), so each of a layer's two layer norms keeps a float32 input (the residual sum of a
  float32 layer-norm output and a bf16 branch: 4 bytes, not 2, ``+4·s·b·h`` for the two) and the attention
  keeps its float32 softmax output (4 bytes, not 2: ``+2·a·s²·b``): ``38·s·b·h + 7·a·s²·b``
  (:data:`HIDDEN_BYTES`, :data:`SCORE_BYTES`). The attention term is an upper bound (fused attention keeps no
  ``s²`` scores), kept so the estimate errs on the side of splitting. A step that keeps several passes'
  graphs (MiSAD's S, w and R; a Siamese step's two sentences) holds each pass's activations at once;
- the output projection's logits on the masked tokens (15%), fp32, with their gradient.

Where the total passes :data:`GPU_GB` (less :data:`HEADROOM` for the allocator and the CUDA context),
the batch is split into the fewest equal micro-batches that fit: ``grad_accum`` steps on one GPU, or as
many DDP processes (``gpus``), the same optimiser batch either way.

Once the GPU acceptance run (python -m pipeline gpu-acceptance) has measured the peak of real jobs, an estimate more than
15% off is scaled by the measured ratio of its kind (pipeline/budget/acceptance_file.py, ``memory_factor``), so
the splits and the fused stack sizes follow the card, not the formula alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.budget.acceptance_file import memory_factor
from pipeline.budget.cost import Architecture

GPU_GB = 80.0  # an H100 / A100 80 GB
HEADROOM = 0.9  # the share a job can use: the CUDA context and allocator fragmentation take the rest
MASKED_SHARE = 0.15  # BERT's masking rate: the tokens the MLM head projects onto the vocabulary
GB = 1e9
# the bytes a bf16 autocast step keeps per Transformer layer (module docstring): per s·b·h (Korthikanti's 34, the
# two layer norms' float32 inputs 4 more) and per a·s²·b (Korthikanti's 5, the float32 softmax output 2 more)
HIDDEN_BYTES, SCORE_BYTES = 38, 7
BF16_COPY = 2  # bytes of autocast's bf16 copy of a weight that a matrix product reads


def stored_parameters(arch: Architecture, shared_layers: bool) -> int:
    """The parameters a checkpoint stores: one layer where ALBERT shares it across all, else every layer,
    plus the embeddings (tokens, 512 positions) and the factorised projection."""
    embedding = arch.embedding or arch.hidden
    per_layer = 4 * arch.hidden**2 + 2 * arch.hidden * arch.intermediate
    layers = 1 if shared_layers else arch.layers
    projection = embedding * arch.hidden if embedding != arch.hidden else 0
    return layers * per_layer + projection + (arch.vocab + 512) * embedding


def matrix_parameters(arch: Architecture, shared_layers: bool) -> int:
    """The stored parameters matrix products read, of which autocast keeps a bf16 copy: the Transformer layers'
    matrices (one layer where ALBERT shares it) and the factorised embedding projection."""
    embedding = arch.embedding or arch.hidden
    projection = embedding * arch.hidden if embedding != arch.hidden else 0
    return (1 if shared_layers else arch.layers) * (
        4 * arch.hidden**2 + 2 * arch.hidden * arch.intermediate
    ) + projection


@dataclass(frozen=True)
class Memory:
    """A job's memory per GPU at its batch, and the split that fits (``parts`` 1: none needed)."""

    static_gb: float
    activation_gb: float  # at the whole batch on one GPU
    parts: int

    @property
    def total_gb(self) -> float:
        return self.static_gb + self.activation_gb

    @property
    def per_part_gb(self) -> float:
        return self.static_gb + self.activation_gb / self.parts

    def text(self, batch: int) -> str:
        if self.parts == 1:
            return f"{self.total_gb:.1f} GB per GPU at batch {batch}: fits one {GPU_GB:.0f} GB GPU"
        micro = batch // self.parts
        return (
            f"{self.total_gb:.1f} GB at batch {batch} on one GPU, more than {GPU_GB:.0f} GB: split as {self.parts} x "
            f"{micro} ({self.per_part_gb:.1f} GB each), grad_accum {self.parts} on one GPU or gpus {self.parts}"
        )


def activation_bytes(arch: Architecture, batch: int, length: int, passes: float = 1.0) -> float:
    """The activations every Transformer layer keeps for the backward, ``passes`` forward passes of ``batch``
    sequences of ``length`` tokens (see the module docstring)."""
    heads = max(arch.hidden // 64, 1)
    per_layer = length * batch * arch.hidden * HIDDEN_BYTES + SCORE_BYTES * heads * length**2 * batch
    return passes * arch.layers * per_layer


def training_memory(
    arch: Architecture,
    batch: int,
    length: int,
    passes: float = 1.0,
    shared_layers: bool = False,
    corrected: bool = True,
) -> Memory:
    """The memory of a training step of ``batch`` sequences of ``length`` tokens, ``passes`` forward passes
    kept for the backward (see the module docstring), and the fewest micro-batches that fit a GPU.
    ``corrected``: scaled by the measured factor where there is one (False: the formula alone, which
    python -m pipeline gpu-acceptance checks)."""
    factor = memory_factor("pretrain") if corrected else 1.0
    copies = matrix_parameters(arch, shared_layers) + arch.vocab * (arch.embedding or arch.hidden)  # MLM decoder
    static = factor * (16 * stored_parameters(arch, shared_layers) + BF16_COPY * copies)
    logits = 2 * 4 * MASKED_SHARE * batch * length * arch.vocab
    activations = factor * (activation_bytes(arch, batch, length, passes) + logits)
    budget = GPU_GB * GB * HEADROOM
    parts = 1
    while static + activations / parts > budget and parts < batch and batch % (parts * 2) == 0:
        parts *= 2
    return Memory(static / GB, activations / GB, parts)


def largest_fused_members(arch: Architecture, batch: int, length: int, shared_layers: bool = False) -> int:
    """The most fine-tuning runs of ``arch`` at ``batch`` x ``length`` that fit one GPU as one stacked model
    (pipeline/classify/fused_training.py; issue 41 §2): each member holds its own weights, gradients and
    AdamW moments (16 bytes per parameter), the bf16 copy of its matrices, and its own batch's activations, so K members take K times
    one run's memory (measured: the saved activations grow exactly by K, BENCHMARKS "classify: fused
    seeds"). A classification head replaces the MLM projection, so no vocabulary logits are counted.
    At least 1 (a run that does not fit alone is the memory line's to split, not this)."""
    return max(1, int(GPU_GB * GB * HEADROOM // member_bytes(arch, batch, length, shared_layers)))


def member_bytes(
    arch: Architecture, batch: int, length: int, shared_layers: bool = False, corrected: bool = True
) -> float:
    """One fused member's memory (:func:`largest_fused_members`), scaled by the measured factor where there is
    one and ``corrected``."""
    static = 16 * stored_parameters(arch, shared_layers) + BF16_COPY * matrix_parameters(arch, shared_layers)
    member = static + activation_bytes(arch, batch, length)
    return (memory_factor("fused") if corrected else 1.0) * member
