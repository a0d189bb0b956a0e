"""NSP / SOP pairs: consecutive sentences, negatives, the tokenizer's pair template."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from transformers import AutoTokenizer

from pipeline.pretrain.sentence_pairs import PairCollator, PairTemplate, SentencePairs, content, successor_index
from pipeline.pretrain.token_dataset import TokenDataset, build_arrow_cache


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
    # a plain sample (no sampled column): every row whose next sentence is in the data is a first
    assert not dataset_en.has_sampled and nsp.without_next == len(dataset_en) - len(nsp)
    assert nsp.firsts.tolist() == np.flatnonzero(successor_index(doc, dataset_en.column("sent_id")) >= 0).tolist()
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
    pairs.set_epoch(0)  # the epoch's pairs are drawn here
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


@pytest.fixture(scope="module")
def pair_sample(marked_en, tiny_en, tmp_path_factory):
    """``marked_en``'s sample of 150 sentences made with --with-next, tokenized for ``tiny_en``:
    ``(sample stats, token file, TokenDataset)``."""
    from pipeline.cli import main

    work = tmp_path_factory.mktemp("pair-sample")
    sample, tokens = work / "sample.parquet", work / "tokens.parquet"
    argv = ["sample", "--marked", marked_en, "--size", 150, "--seed", 3, "--with-next", "--out", sample]
    assert main([str(a) for a in argv]) == 0
    argv = ["tokenize", "--marked", sample, "--model", tiny_en, "--lang", "en", "--max-length", 64, "--out", tokens]
    assert main([str(a) for a in argv]) == 0
    stats = json.loads(sample.with_suffix(".stats.json").read_text())
    return stats, tokens, TokenDataset(build_arrow_cache(tokens, work / "tokens.arrow"))


def test_pairs_start_from_exactly_the_sampled_sentences_with_a_next_one(pair_sample):
    """ULR-BERT §7.1: NSP / SOP get one pair per sampled sentence that is not the last of its document."""
    stats, _, dataset = pair_sample
    assert dataset.has_sampled
    doc, sent, sampled = (dataset.column(name) for name in ("doc_id", "sent_id", "sampled"))
    assert sampled.sum() == stats["sentences_out"] == 150 and (~sampled).sum() == stats["next_only_rows"] > 0
    present = set(zip(doc.tolist(), sent.tolist()))
    expected = [i for i in range(len(dataset)) if sampled[i] and (doc[i], sent[i] + 1) in present]
    for task in ("nsp", "sop"):
        pairs = SentencePairs(dataset, task, seed=0)
        assert pairs.firsts.tolist() == expected
        assert len(pairs) == 150 - pairs.without_next == stats["sampled_with_next"]
        assert pairs.without_next == stats["sampled_without_next"]
        for a in pairs.firsts:
            assert (doc[pairs.next[a]], sent[pairs.next[a]]) == (doc[a], sent[a] + 1)


def test_nsp_negatives_come_from_sampled_sentences_of_other_documents(pair_sample):
    _, _, dataset = pair_sample
    doc, sampled = dataset.column("doc_id"), dataset.column("sampled")
    nsp = SentencePairs(dataset, "nsp", seed=0)
    by_content = {}
    for j in range(len(dataset)):
        by_content.setdefault(tuple(content(dataset[j]).tolist()), []).append(j)
    negatives = 0
    for i in range(len(nsp)):
        item = nsp[i]
        if item["pair_label"]:
            a = int(nsp.firsts[i])
            rows = by_content[tuple(item["second"].tolist())]
            assert any(sampled[j] and doc[j] != doc[a] for j in rows)
            negatives += 1
    assert negatives > 30


def test_nsp_examples_per_epoch_are_the_sampled_sentences_with_a_next_one(pair_sample, tiny_en, tmp_path, cli):
    """pretrain's examples per epoch: the sampled sentences less those without a next sentence."""
    stats, tokens, _ = pair_sample
    out = tmp_path / "nsp"
    args = ["--data", tokens, "--model", tiny_en, "--objective", "nsp", "--max-steps", 1, "--batch-size", 8]
    assert cli("pretrain", *args, "--out", out) == 0
    config = json.loads((out / "pretrain_config.json").read_text())
    assert config["examples"] == stats["sentences_out"] - stats["sampled_without_next"]
    assert pq.read_schema(tokens).field("sampled").type == "bool"


def test_other_objectives_refuse_the_pair_sample(pair_sample, tiny_en, tmp_path, cli, capsys):
    """Its rows present only as next sentences are no sample of single sentences (MLM would train on them)."""
    _, tokens, _ = pair_sample
    args = ["--data", tokens, "--model", tiny_en, "--objective", "mlm", "--max-steps", 1, "--batch-size", 8]
    assert cli("pretrain", *args, "--out", tmp_path / "mlm") == 2
    assert "NSP / SOP's, not mlm's" in capsys.readouterr().err


def test_nsp_groups_by_the_epochs_drawn_pairs(dataset_en):
    """Length grouping sorts NSP pairs by both sentences of the epoch's pair, negatives included, so a
    batch of pairs carries little padding (BENCHMARKS.md "loader": 44.5% before)."""
    from pipeline.pretrain.batching import example_lengths

    pairs = SentencePairs(dataset_en, "nsp", seed=0)
    for epoch in (0, 1):
        pairs.set_epoch(epoch)
        exact = [len(pairs[i]["first"]) + len(pairs[i]["second"]) for i in range(len(pairs))]
        # the rows' lengths less the two sentences' own [CLS] ... [SEP]
        assert (example_lengths(pairs, dataset_en) - 4).tolist() == exact
    again = SentencePairs(dataset_en, "nsp", seed=0)
    again.set_epoch(1)
    assert again.seconds.tolist() == pairs.seconds.tolist()  # a function of (seed, epoch) only
