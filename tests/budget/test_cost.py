"""The cost model on hand-computed cases (pipeline.budget.cost.py)."""

from __future__ import annotations

import pytest

from pipeline.budget.cost import ARCHITECTURES, Architecture, Workload, gpu_hours, tokens_per_second


def test_bert_base_by_hand():
    bert = ARCHITECTURES["bert-base-uncased"]
    # 12 layers x (4 x 768^2 + 2 x 768 x 3072) + 30522 x 768 (the tied output projection)
    assert bert.parameters == 12 * (4 * 589_824 + 2 * 2_359_296) + 23_440_896 == 108_375_552
    # 6N + 12 L H T at T = 128
    assert bert.training_flops_per_token(128) == 650_253_312 + 14_155_776 == 664_409_088
    assert bert.forward_flops_per_token(128) == 216_751_104 + 4_718_592
    # the anchor: BERT-base at 40% of an H100's 989.4 TFLOP/s consumes about 0.55-0.6M tokens/s
    assert tokens_per_second(bert, 128) == pytest.approx(0.4 * 989.4e12 / 664_409_088)
    assert 550_000 < tokens_per_second(bert, 128) < 600_000


def test_albert_counts_its_shared_layer_once_per_layer_and_its_factorised_embedding():
    albert = ARCHITECTURES["albert-base-v2"]
    assert albert.parameters == 12 * 7_077_888 + 128 * 768 + 30000 * 128


def test_one_epoch_of_ulr_pretraining_by_hand():
    """10M sentences of 32 tokens at 20% padding, length 128, on BERT-base: H100 hours at 40% MFU."""
    bert = ARCHITECTURES["bert-base-uncased"]
    work = Workload(bert, tokens=10_000_000 * 32, length=128, padding_share=0.2)
    assert work.processed_tokens == pytest.approx(400_000_000)
    assert work.flops == pytest.approx(400_000_000 * 664_409_088)
    hours = 400_000_000 * 664_409_088 / (989.4e12 * 0.4) / 3600
    assert gpu_hours(work.flops) == pytest.approx(hours) == pytest.approx(0.1865, abs=1e-4)
    assert gpu_hours(work.flops, "a100", 0.5) == pytest.approx(400_000_000 * 664_409_088 / (312e12 * 0.5) / 3600)


def test_forward_only_tokens_cost_a_third_of_the_weights():
    tiny = Architecture(layers=1, hidden=2, intermediate=4, vocab=10)
    assert tiny.parameters == 4 * 4 + 2 * 2 * 4 + 10 * 2 == 52
    work = Workload(tiny, tokens=3, length=5, forward_tokens=6)
    assert work.flops == 3 * (6 * 52 + 12 * 1 * 2 * 5) + 6 * (2 * 52 + 4 * 1 * 2 * 5)


@pytest.mark.parametrize("bad", [{"padding_share": 1.0}, {"padding_share": -0.1}])
def test_padding_share_is_a_share(bad):
    with pytest.raises(ValueError, match="padding_share"):
        Workload(ARCHITECTURES["bert-base-uncased"], tokens=1, length=8, **bad)


def test_unknown_gpu_and_mfu_are_refused():
    with pytest.raises(ValueError, match="unknown GPU"):
        gpu_hours(1e15, "v100")
    with pytest.raises(ValueError, match="mfu"):
        gpu_hours(1e15, "h100", 0)


def test_a_job_costs_at_least_its_steps_at_the_floor():
    from pipeline.budget.cost import job_hours

    bert = ARCHITECTURES["bert-base-uncased"]
    # 1.5 ms per layer (workloads.yaml step_floor): BERT-base 18 ms, BERT-large 36 ms, ALBERT's shared layer 12 times
    assert bert.step_floor_seconds(1.5) == pytest.approx(0.018)
    assert ARCHITECTURES["bert-large-uncased"].step_floor_seconds(1.5) == pytest.approx(0.036)
    assert ARCHITECTURES["albert-base-v2"].step_floor_seconds(1.5) == pytest.approx(0.018)
    # the GLUE batch-8 step: 8 x 128 tokens are 2.2 ms of FLOPs at 40% of an H100, so the floor rules
    step = Workload(bert, tokens=8 * 128, length=128).flops
    assert gpu_hours(step) * 3600 == pytest.approx(0.00172, abs=1e-4)
    assert job_hours(1000 * step, 1000, 0.018) == pytest.approx(1000 * 0.018 / 3600)
    # a long-sequence step is FLOPs-bound: the floor changes nothing
    big = Workload(bert, tokens=64 * 512, length=512).flops
    assert job_hours(1000 * big, 1000, 0.018) == pytest.approx(gpu_hours(1000 * big))
    with pytest.raises(ValueError, match="steps"):
        job_hours(1.0, -1, 0.018)
