"""NSP / SOP pairs: consecutive sentences, negatives, the tokenizer's pair template."""

from __future__ import annotations

import numpy as np
import pytest
from transformers import AutoTokenizer

from pipeline.pretrain.sentence_pairs import PairCollator, PairTemplate, SentencePairs, content, successor_index


def test_successor_index_by_hand():
    doc_ids = np.array([7, 5, 5, 9, 5, 7])
    sent_ids = np.array([1, 1, 0, 0, 3, 0])
    assert successor_index(doc_ids, sent_ids).tolist() == [-1, -1, 1, -1, -1, 0]


@pytest.mark.parametrize("which", ["bert", "albert"])
def test_pair_template_and_longest_first_truncation(which, tiny_en, albert_en):
    tokenizer = AutoTokenizer.from_pretrained(tiny_en if which == "bert" else albert_en)
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    template = PairTemplate(tokenizer)
    ids, segments = template.build(np.array([10, 11]), np.array([12]), 64)
    assert ids.tolist() == [cls, 10, 11, sep, 12, sep] and segments.tolist() == [0, 0, 0, 0, 1, 1]
    ids, _ = template.build(np.arange(20, 25), np.array([30, 31]), 7)  # 4 content tokens fit: 2 + 2
    assert ids.tolist() == [cls, 20, 21, sep, 30, 31, sep]


def test_nsp_and_sop_pairs(dataset_en, tiny_en):
    nsp = SentencePairs(dataset_en, "nsp", seed=0)
    sop = SentencePairs(dataset_en, "sop", seed=0)
    doc = dataset_en.column("doc_id")
    assert len(nsp) == len(sop) > 300
    labels = []
    for i in range(len(nsp)):
        a = int(nsp.firsts[i])
        b = int(nsp.next[a])
        first, second = content(dataset_en[a]), content(dataset_en[b])
        item = nsp[i]
        assert item["first"].tolist() == first.tolist()
        if item["pair_label"]:
            assert item["second"].tolist() != second.tolist()
            assert any(
                doc[j] != doc[a] and content(dataset_en[j]).tolist() == item["second"].tolist()
                for j in range(len(dataset_en))
            )
        else:
            assert item["second"].tolist() == second.tolist()
        swapped = sop[i]
        order = (second, first) if swapped["pair_label"] else (first, second)
        assert [x.tolist() for x in (swapped["first"], swapped["second"])] == [x.tolist() for x in order]
        labels.append(item["pair_label"])
    assert 0.4 < np.mean(labels) < 0.6
    nsp.set_epoch(1)
    assert [nsp[i]["pair_label"] for i in range(50)] != labels[:50]  # a new draw each epoch


def test_pair_collator(dataset_en, tiny_en):
    tokenizer = AutoTokenizer.from_pretrained(tiny_en)
    pairs = SentencePairs(dataset_en, "sop", seed=0)
    batch = PairCollator(tokenizer, max_length=64, seed=0)([pairs[i] for i in range(16)])
    assert batch["input_ids"].shape[1] <= 64
    for i in range(16):
        real = batch["attention_mask"][i].bool()
        ids = batch["input_ids"][i][real]
        special = (ids == tokenizer.cls_token_id) | (ids == tokenizer.sep_token_id)
        assert special.sum() == 3 and (batch["labels"][i][real][special] == -100).all()
        segments = batch["token_type_ids"][i][real].tolist()
        assert segments == sorted(segments) and segments[0] == 0 and segments[-1] == 1
        assert (batch["labels"][i] != -100).sum() > 0
    assert set(batch["pair_labels"].tolist()) <= {0, 1}


def test_nsp_relabelled_negatives_are_counted(dataset_en, tiny_en):
    tokenizer = AutoTokenizer.from_pretrained(tiny_en)
    pairs = SentencePairs(dataset_en, "nsp", seed=0)
    collator = PairCollator(tokenizer, 64, seed=0)
    normal = collator([pairs[i] for i in range(len(pairs))])
    assert normal["masking_stats"].counts["nsp_relabelled"] == 0 and normal["pair_labels"].sum() > 100
    pairs.doc_ids = np.zeros_like(pairs.doc_ids)  # one document: no negative can be found
    batch = collator([pairs[i] for i in range(len(pairs))])
    counts = batch["masking_stats"].counts
    assert batch["pair_labels"].sum() == 0 and counts["pairs"] == len(pairs)
    assert counts["nsp_relabelled"] == int(normal["pair_labels"].sum())  # every drawn negative, relabelled


def test_the_pair_head_starts_from_berts_pretrained_nsp_head(tokens_en, tiny_en, tmp_path, cli):
    """A BertForPreTraining checkpoint carries its NSP head (pooler + cls.seq_relationship): NSP and SOP
    start from it; a masked-LM-only checkpoint has none, and the head starts at random (recorded)."""
    import json
    import shutil

    import torch
    from transformers import BertForPreTraining

    from pipeline.pretrain.objectives import PairHead, pretrained_pair_head

    with_nsp = tmp_path / "bert-with-nsp"
    shutil.copytree(tiny_en, with_nsp)
    torch.manual_seed(5)
    pretraining = BertForPreTraining.from_pretrained(tiny_en)  # the tiny MLM plus a (new) pooler and NSP head
    pretraining.save_pretrained(with_nsp)
    state = pretrained_pair_head(with_nsp)
    assert torch.equal(state["classifier.weight"], pretraining.cls.seq_relationship.weight)
    assert torch.equal(state["dense.bias"], pretraining.bert.pooler.dense.bias)
    assert pretrained_pair_head(tiny_en) is None
    head = PairHead(pretraining.config.hidden_size)
    assert head.load_pretrained(with_nsp) and torch.equal(head.dense.weight, pretraining.bert.pooler.dense.weight)
    for model, new in ((with_nsp, False), (tiny_en, True)):
        out = tmp_path / f"nsp-{new}"
        args = ["--data", tokens_en, "--model", model, "--objective", "nsp", "--max-steps", 1, "--batch-size", 8]
        assert cli("pretrain", *args, "--out", out) == 0
        assert json.loads((out / "pretrain_config.json").read_text())["new_pair_head"] is new
