"""A backbone's family and size from its name (pipeline/backbone_family.py): the one classification that the
budget, the plan, the grouping of fused runs and the rehearsal's stand-ins all read."""

from __future__ import annotations

import pytest

from pipeline.backbone_family import family_kind, shares_layers, size_of


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("albert/albert-xxlarge-v2", "albert"),
        ("google/electra-base-discriminator", "electra"),
        ("FacebookAI/roberta-large", "roberta"),
        ("xlnet/xlnet-base-cased", "xlnet"),
        ("sentence-transformers/bert-base-nli-mean-tokens", "sbert"),
        ("hfl/chinese-bert-wwm-ext", "chinese"),
        ("google-bert/bert-base-uncased", "bert"),
        ("tiny", None),
    ],
)
def test_the_first_family_a_name_marks_wins(name, kind):
    assert family_kind(name) == kind


def test_only_albert_stores_one_shared_layer():
    assert shares_layers("albert/albert-base-v2") and shares_layers("albert-xxlarge-v2")
    # the organisation is not the name: a BERT published by an "albert" account is a BERT
    assert not shares_layers("albert/bert-base-uncased")
    assert not any(shares_layers(repo) for repo in ("google-bert/bert-large-uncased", "google/electra-base-generator"))


def test_sizes_from_the_name():
    assert [size_of(n) for n in ("albert-xxlarge-v2", "bert-large-uncased", "bert-base-chinese")] == [
        "xxlarge",
        "large",
        "base",
    ]
