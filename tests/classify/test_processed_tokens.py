"""Every classify run records the tokens its training batches held (issue 48 §2), and the plan's measurement
from the data (pipeline/classify/token_measure.py) gives the same figure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.classify import tasks, token_measure, training
from pipeline.classify.classify import load_splits
from pipeline.models.tokenizer_check import load_tokenizer


def classify(cli, model, task, root, out, *extra) -> dict:
    args = ("--model", model, "--task", task, "--data", root, "--out", out, "--allow-substitutes", "--no-test")
    assert cli("classify", *args, "--eval-batch-size", "32", *extra) == 0
    return json.loads((Path(out) / "metrics.json").read_text(encoding="utf-8"))


def measured(model, task_name, root, batch, length, seeds=1) -> tuple[dict, int]:
    """token_measure's figure for the run's training file, and the number of training examples."""
    task = tasks.get(task_name)
    splits, _ = load_splits(task, Path(root), 0.0, 0, allow_substitutes=True)
    found = token_measure.measure(task, load_tokenizer(str(model)), splits["train"], [batch], [length], seeds)
    return found[length], len(splits["train"])


def test_a_run_records_its_tokens_per_epoch_as_the_measurement_counts_them(cli, tiny_en, demo_root, tmp_path):
    """Two epochs of RTE's demo rows at batch 8: epoch 0 is what token_measure counts for seed 0, to the token
    (the same reader, encoding, sampler and padding); the real tokens are every epoch's; totals add up."""
    result = classify(
        cli, tiny_en, "rte", demo_root, tmp_path / "a", "--seeds", "2", "--batch-size", "8", "--epochs", "2"
    )
    figure, examples = measured(tiny_en, "rte", demo_root, 8, 128)
    for seed in ("0", "1"):
        tokens = result["per_seed"][seed]["processed_tokens"]
        assert len(tokens["per_epoch"]) == 2
        assert tokens["padded"] == sum(e["padded"] for e in tokens["per_epoch"])
        assert tokens["real"] == sum(e["real"] for e in tokens["per_epoch"]) == 2 * figure["real"]
        assert all(e["real"] < e["padded"] for e in tokens["per_epoch"])  # the demo's rows differ in length
    assert result["per_seed"]["0"]["processed_tokens"]["per_epoch"][0]["padded"] == figure["padded"][8][0]
    assert figure["rows"] == examples


def test_a_run_stopped_mid_epoch_counts_only_the_batches_it_trained_on(cli, tiny_en, demo_root, tmp_path):
    """--max-steps 3 of an epoch of 4 batches: the loader collates one batch ahead, which is not counted."""
    result = classify(cli, tiny_en, "sst2", demo_root, tmp_path / "a", "--batch-size", "8", "--max-steps", "3")
    task = tasks.get("sst2")
    splits, _ = load_splits(task, demo_root, 0.0, 0)
    features = training.encoding.encode(task, load_tokenizer(str(tiny_en)), splits["train"], 128)
    _, longest, real = token_measure.feature_shapes(features)
    settings = training.Settings(8, 1e-4, 1, 3, 128, 0.1, 0.01, 128, 30)
    order = token_measure.data_order(len(features), settings, 0)[:3]
    tokens = result["per_seed"]["0"]["processed_tokens"]
    assert tokens["per_epoch"] == [
        {"padded": sum(len(b) * int(longest[b].max()) for b in order), "real": sum(int(real[b].sum()) for b in order)}
    ]


def test_a_fused_member_counts_its_rows_at_the_stacks_length(cli, tiny_en, demo_root, tmp_path):
    """Seeds 0 and 1 fused: each member's batch is padded to the longer of the two (fused_training.stack_batches),
    as token_measure counts a stack of two orders; the solo run of seed 0 counts its own batches' length."""
    fused = classify(cli, tiny_en, "rte", demo_root, tmp_path / "f", "--seeds", "2", "--fuse", "2", "--batch-size", "8")
    solo = classify(cli, tiny_en, "rte", demo_root, tmp_path / "s", "--seeds", "1", "--batch-size", "8")
    figure, _ = measured(tiny_en, "rte", demo_root, 8, 128, seeds=2)
    for seed in ("0", "1"):
        assert fused["per_seed"][seed]["processed_tokens"]["per_epoch"][0]["padded"] == figure["padded"][8][1]
    assert solo["per_seed"]["0"]["processed_tokens"]["per_epoch"][0]["padded"] == figure["padded"][8][0]
    assert figure["padded"][8][1] > figure["padded"][8][0]
    assert fused["per_seed"]["0"]["processed_tokens"]["real"] == solo["per_seed"]["0"]["processed_tokens"]["real"]


def test_length_grouped_runs_record_the_grouped_measurement(cli, tiny_en_real, data_root, tmp_path):
    """--group-by-length on SST-2's first 256 training rows at batch 8 (enough for Hugging Face's mega-batches
    of 8 batches; below 4 x 8 x 8 rows it groups nothing): a solo run of seed 0 and a fused pair of seeds 0
    and 1 record, for epoch 0, the grouped figures token_measure gives for 1 and 2 orders, to the token (the
    plan's figures for classify.group_by_length: true). Grouping pads less than random order, solo and fused;
    a stack of two grouped members pads to the longer of their batches, which come from different
    mega-batches."""
    from classify_builders import small_root

    root = small_root(data_root, tmp_path / "root", rows=256)
    extra = ("--batch-size", "8", "--max-length", "64", "--group-by-length")
    solo = classify(cli, tiny_en_real, "sst2", root, tmp_path / "s", "--seeds", "1", *extra)
    fused = classify(cli, tiny_en_real, "sst2", root, tmp_path / "f", "--seeds", "2", "--fuse", "2", *extra)
    figure, _ = measured(tiny_en_real, "sst2", root, 8, 64, seeds=2)
    assert solo["per_seed"]["0"]["processed_tokens"]["per_epoch"][0]["padded"] == figure["grouped"][8][0]
    for seed in ("0", "1"):
        assert fused["per_seed"][seed]["processed_tokens"]["per_epoch"][0]["padded"] == figure["grouped"][8][1]
    grouped, random_order = figure["grouped"][8], figure["padded"][8]
    assert grouped[0] < 0.9 * random_order[0] and grouped[1] < 0.9 * random_order[1]
    assert grouped[0] < grouped[1]  # a stack pads each step to the longer of its members' batches


@pytest.mark.parametrize(
    "task, model, length",
    [
        ("rte", "tiny_en_real", 128),
        ("stsb", "tiny_en_real", 128),
        ("chid", "tiny_zh", 256),
        ("tnews", "tiny_zh", 128),
        ("cluewsc", "tiny_zh", 128),
        ("c3", "tiny_zh", 256),
        ("cmrc2018", "tiny_zh", 256),
    ],
    ids=["rte", "stsb", "fewclue-chid", "fewclue-tnews", "fewclue-cluewsc", "c3", "cmrc2018"],
)
def test_the_plans_figure_is_within_ten_percent_of_a_real_run(cli, real_root, request, tmp_path, task, model, length):
    """A tiny model fine-tunes 3 epochs at batch 8 on the first rows of a real data-root file, one task of each
    head (pair classification: RTE's train.tsv; regression: the STS Benchmark; FewCLUE's ChID, multiple choice
    of 7 candidates, TNEWS and the span-marked CLUEWSC; C3, options paired with the dialogue; CMRC 2018's
    windows, its trial set standing in for the train file); the plan's figure for that file, batch and length
    (tokens per example of epoch 0's order, times examples and epochs: pipeline/plan/plan_costs.py) is within
    10% of the tokens the run records."""
    path = request.getfixturevalue(model)
    epochs = 3
    result = classify(
        cli, path, task, real_root, tmp_path / task, "--batch-size", "8", "--epochs", epochs, "--max-length", length
    )
    figure, examples = measured(path, task, real_root, 8, length)
    recorded = result["per_seed"]["0"]["processed_tokens"]
    plan = figure["padded"][8][0] / examples * examples * epochs
    print(
        f"{task}: the plan's {plan:,.0f} padded tokens against the run's {recorded['padded']:,} ({plan / recorded['padded'] - 1:+.2%})"
    )
    assert abs(plan - recorded["padded"]) <= 0.10 * recorded["padded"]
    assert figure["real"] * epochs == recorded["real"]


@pytest.mark.parametrize("task", ["rte", "cluewsc"])
def test_the_committed_figures_are_what_the_data_root_measures(cli, data_root, tmp_path, task):
    """The committed pipeline/budget/classify_tokens.yaml, not only a fresh measurement (issue 53 §4): RTE (English,
    2,490 pairs) and CLUEWSC (Chinese, span-marked) measured again on the data root at the file's grid give their
    committed entries, figure for figure; and every task it measures reads the file the data root would give it
    now (the full measurement, a few minutes: python -m pipeline measure-tokens --write, then git diff)."""
    from pipeline.budget.classify_tokens import TOKENS, read_tokens
    from pipeline.classify.measure_tokens import training_file

    committed = read_tokens(TOKENS)
    grid = [
        "--seeds",
        committed["seeds"],
        "--batch-sizes",
        *committed["batch_sizes"],
        "--lengths",
        *committed["lengths"],
    ]
    out = tmp_path / "tokens.yaml"
    assert cli("measure-tokens", "--data", data_root, "--tasks", task, *grid, "--out", out) == 0
    benchmark = tasks.get(task).benchmark
    assert read_tokens(out)["measured"][benchmark][task] == committed["measured"][benchmark][task]
    for benchmark, entries in committed["measured"].items():
        for name, record in entries.items():
            split, files = training_file(tasks.get(name), data_root)
            assert (split, "+".join(str(p.relative_to(data_root)) for p in files)) == (record["split"], record["file"])
