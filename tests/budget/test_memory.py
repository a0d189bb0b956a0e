"""What a bf16 autocast step keeps (pipeline/budget/memory.py, issue 53 §2): Korthikanti et al.'s activations with
the layer norms' inputs and the softmax output in float32, and autocast's bf16 copy of every matrix beside the
float32 weights, gradients and AdamW moments; a fused member holds its own copy."""

from __future__ import annotations

import pytest

from pipeline.budget import memory
from pipeline.budget.cost import ARCHITECTURES

BASE, LARGE, XXLARGE = (ARCHITECTURES[n] for n in ("bert-base-uncased", "bert-large-uncased", "albert-xxlarge-v2"))


def test_a_layer_keeps_float32_layer_norm_inputs_and_softmax_output():
    s, b, h, a = 128, 32, BASE.hidden, BASE.hidden // 64
    korthikanti = 34 * s * b * h + 5 * a * s * s * b  # every tensor 16-bit
    fp32 = 2 * 2 * s * b * h + 2 * a * s * s * b  # two layer norms' inputs and the softmax output: 2 bytes more
    assert memory.activation_bytes(BASE, b, s) == BASE.layers * (korthikanti + fp32)


def test_the_weights_have_a_bf16_copy_for_the_matrix_products():
    matrices = BASE.layers * (4 * 768**2 + 2 * 768 * 3072)
    assert memory.matrix_parameters(BASE, shared_layers=False) == matrices
    member = memory.member_bytes(BASE, 32, 128, corrected=False)
    weights = 16 * memory.stored_parameters(BASE, False)
    assert member == weights + 2 * matrices + memory.activation_bytes(BASE, 32, 128)
    # ALBERT casts its one shared layer once, and its embedding projection
    shared = memory.matrix_parameters(XXLARGE, shared_layers=True)
    assert shared == 4 * 4096**2 + 2 * 4096 * 16384 + 128 * 4096
    # pre-training also reads the MLM decoder's tied embedding in bf16
    job = memory.training_memory(BASE, 64, 128, corrected=False)
    assert job.static_gb * memory.GB == pytest.approx(weights + 2 * (matrices + BASE.vocab * 768))


def test_the_stacks_the_plan_sizes_shrink_to_what_fits():
    """BERT-large at GLUE's batch 32: 6 members (7 when every tensor was counted 16-bit); ChID on the wwm-ext
    shape at batch 8 x 10 candidates: 5."""
    assert memory.largest_fused_members(LARGE, 32, 128) == 6
    assert memory.largest_fused_members(ARCHITECTURES["chinese-bert-wwm-ext"], 80, 256) == 5
