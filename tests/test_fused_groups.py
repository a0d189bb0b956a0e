"""Which fine-tuning runs of a config fuse, how many at once, and how a fused job's runs split into stacked
models (pipeline/fused_groups.py; issue 41 §2)."""

from __future__ import annotations

import pytest

from pipeline.budget.cost import ARCHITECTURES
from pipeline.budget.memory import largest_fused_members
from pipeline.fused_groups import backbone_of, checkpoint_groups, fused_runs, sequences_per_example, stack_sizes


@pytest.mark.parametrize(
    ("members", "most", "sizes"),
    [
        (50, 16, [13, 13, 12, 12]),
        (5, 5, [5]),
        (5, 2, [2, 2, 1]),
        (30, 7, [6, 6, 6, 6, 6]),
        (3, 1, [1, 1, 1]),
        (0, 4, []),
    ],
)
def test_stacks_are_the_fewest_of_at_most_k_and_balanced(members, most, sizes):
    assert stack_sizes(members, most) == sizes
    assert sum(sizes) == members and all(size <= most for size in sizes)


def test_a_stack_of_no_run_is_refused():
    with pytest.raises(ValueError, match="at least one"):
        stack_sizes(4, 0)


BACKBONES = ["bert-base-uncased", "bert-large-uncased", "albert-base-v2"]
BASE = "hub:google-bert/bert-base-uncased@86b5e0934494bd15c9632b12f734a8a67f723594"
LARGE = "hub:google-bert/bert-large-uncased@6da4b6a26a1877e173fca3225479512db81a5e5b"


def test_a_label_starts_from_its_backbone_as_the_workflow_resolves_it():
    assert backbone_of("bert-base-uncased", BACKBONES) == "bert-base-uncased"
    assert backbone_of("bert-base-uncased+burt.packed", BACKBONES) == "bert-base-uncased"
    assert backbone_of("bert-base-uncased+mlm+twin.k7", BACKBONES) == "bert-base-uncased"  # the first "+"
    assert backbone_of("roberta-base+mlm", BACKBONES) is None  # no such backbone
    assert backbone_of("bert-base-uncased-mine", BACKBONES) is None  # a prefix is not a backbone
    # an evaluate.models entry is a model of its own, whatever its name
    assert backbone_of("bert-base-uncased+released", BACKBONES, separate=["bert-base-uncased+released"]) is None


def test_models_of_one_backbone_group_and_a_model_alone_does_not():
    labels = [
        "bert-base-uncased",
        "bert-large-uncased+mlm",
        "bert-base-uncased+mlm",
        "albert-base-v2+misad",
        "sbert",
        "bert-base-uncased+mlm",  # listed twice: once in the group
        "bert-large-uncased",
    ]
    assert checkpoint_groups(labels, BACKBONES, separate=["sbert"]) == {
        "bert-base-uncased": ["bert-base-uncased", "bert-base-uncased+mlm"],
        "bert-large-uncased": ["bert-large-uncased+mlm", "bert-large-uncased"],
    }
    assert checkpoint_groups(["albert-base-v2"], BACKBONES) == {}


def test_k_is_the_configured_fuse_capped_by_the_runs_that_fit_one_gpu():
    large = ARCHITECTURES["bert-large-uncased"]
    fits = largest_fused_members(large, 32, 128)
    assert 1 < fits < 16  # BERT-large at batch 32 is bound by memory
    assert fused_runs(LARGE, 16, 32, 128, "sst2") == fits
    assert fused_runs(LARGE, 2, 32, 128, "sst2") == 2  # the config's K where it fits
    assert fused_runs(BASE, 16, 8, 128, "sst2") == 16
    # a multiple-choice example is one sequence per candidate in the step's batch (ChID: 10)
    assert sequences_per_example("chid") == 10 and sequences_per_example("sst2") == 1
    chinese = "hub:google-bert/bert-base-chinese@8d2a91f91cc38c96bb8b4556ba70c392f8d5ee55"
    assert fused_runs(chinese, 16, 16, 256, "chid") == largest_fused_members(
        ARCHITECTURES["bert-base-chinese"], 160, 256
    )
    assert fused_runs(chinese, 16, 16, 256, "chid") < fused_runs(chinese, 16, 16, 256, "tnews")
    # an architecture the cost model does not know (a tiny model, a path): K as configured
    assert fused_runs("tiny", 16, 32, 128, "sst2") == 16
    assert fused_runs(None, 5, 32, 128, "sst2") == 5
    # ALBERT stores its one shared layer once
    albert = "hub:albert/albert-xxlarge-v2"
    assert fused_runs(albert, 64, 8, 128, "sst2") == largest_fused_members(
        ARCHITECTURES["albert-xxlarge-v2"], 8, 128, shared_layers=True
    )
