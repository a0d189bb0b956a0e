"""Packed input (BURT §5.2): blocks of the concatenated sentences, spans and word ids carried into them."""

from __future__ import annotations

import json

import numpy as np
import pytest
from transformers import AutoTokenizer

from pipeline.cli import build_parser
from pipeline.models.runtime import World
from pipeline.pretrain.batching import epoch_batches, padding_counts
from pipeline.pretrain.masking import MaskingCollator
from pipeline.pretrain.packing import PackedDataset
from pipeline.pretrain.pretrain import TrainingHalted, train
from pipeline.pretrain.span_sampling import longest_non_overlapping
from pipeline.pretrain.token_dataset import SPAN_COLUMNS

BLOCK = 32  # short blocks on the 64-token fixture rows: many boundaries, many cut spans


@pytest.fixture(scope="module")
def tokenizer(tiny_en):
    return AutoTokenizer.from_pretrained(tiny_en)


@pytest.fixture(scope="module")
def packed(dataset_en, tokenizer):
    return PackedDataset(dataset_en, tokenizer, BLOCK)


def content_and_spans(dataset):
    """The concatenated content (each row without [CLS] / [SEP]) and every span in content coordinates."""
    ids, spans, at = [], {name: [] for name in SPAN_COLUMNS}, 0
    for i in range(len(dataset)):
        row = dataset[i]
        ids.append(row["input_ids"][1:-1])
        for name in SPAN_COLUMNS:
            spans[name] += [(at + s - 1, at + e - 1) for s, e in np.asarray(row[name]).reshape(-1, 2)]
        at += len(row["input_ids"]) - 2
    return np.concatenate(ids), spans


def args_for(*argv):
    argv = ["pretrain", *map(str, argv)]
    return build_parser(argv).parse_args(argv)


def test_blocks_are_contiguous_slices_of_the_concatenated_content(packed, dataset_en, tokenizer):
    content, _ = content_and_spans(dataset_en)
    blocks = [packed[i] for i in range(len(packed))]
    assert len(blocks) == -(-len(content) // (BLOCK - 2)) > 10
    assert all(len(b["input_ids"]) == BLOCK for b in blocks[:-1]) and 2 < len(blocks[-1]["input_ids"]) <= BLOCK
    assert (packed.lengths() == [len(b["input_ids"]) for b in blocks]).all()
    for b in blocks:  # the tokenizer's own single-sentence template around each block
        assert b["input_ids"][0] == tokenizer.cls_token_id and b["input_ids"][-1] == tokenizer.sep_token_id
        assert not np.isin(b["input_ids"][1:-1], [tokenizer.cls_token_id, tokenizer.sep_token_id]).any()
    assert np.array_equal(np.concatenate([b["input_ids"][1:-1] for b in blocks]), content)
    assert [b["idx"] for b in blocks] == list(range(len(blocks)))


def test_spans_keep_their_tokens_and_those_cut_by_a_boundary_are_counted(packed, dataset_en):
    _, spans = content_and_spans(dataset_en)
    width = BLOCK - 2
    cut = dict.fromkeys(SPAN_COLUMNS, 0)
    for name in SPAN_COLUMNS:
        expected = [[] for _ in range(len(packed))]
        for s, e in spans[name]:
            block = s // width
            if e <= (block + 1) * width:  # wholly inside one block: kept, shifted past the block's [CLS]
                expected[block].append((s - block * width + 1, e - block * width + 1))
            else:
                cut[name] += 1
        for i in range(len(packed)):
            assert sorted(map(tuple, packed[i][name].tolist())) == sorted(expected[i])
    assert packed.cut_spans() == cut and cut["ngram_spans"] > 0


def test_word_ids_are_unique_within_a_block(packed, dataset_en):
    width = BLOCK - 2
    row_of = np.repeat(np.arange(len(dataset_en)), dataset_en.lengths() - 2)  # content token -> its row
    words = np.concatenate([dataset_en[i]["word_ids"][1:-1] for i in range(len(dataset_en))])
    for i in range(len(packed)):
        block = packed[i]["word_ids"]
        assert block[0] == block[-1] == -1
        rows = row_of[i * width : (i + 1) * width]
        original = words[i * width : (i + 1) * width]
        seen = block[1:-1] >= 0
        assert (seen == (original >= 0)).all()
        # one block word per (sentence, word), and the order of words kept
        assert len(set(block[1:-1][seen])) == len(set(zip(rows[seen], original[seen])))
        assert (np.diff(block[1:-1][seen]) >= 0).all()


def test_burt_masks_whole_ngrams_in_packed_blocks(packed, tokenizer):
    collator = MaskingCollator(tokenizer, "ngram", seed=0)
    examples = [packed[i] for i in range(len(packed) - 1)]
    batch = collator(examples)
    masked = (batch["labels"] != -100).numpy()
    for row, example in zip(masked, examples):
        eligible = ~np.isin(example["input_ids"], collator.special_ids)
        for start, end in longest_non_overlapping(example["ngram_spans"], eligible):
            assert row[start:end].all() or not row[start:end].any()  # a kept n-gram is masked whole or not at all
    stats = batch["masking_stats"]
    assert stats.masked_by_source["pmi"] > 0 and stats.counts["masked_in_ngrams"] > 0
    assert 0.12 < stats.counts["masked_tokens"] / stats.counts["eligible_tokens"] < 0.18
    assert padding_counts(batch) == {"": (0, masked.size)}  # full blocks: no padding at all


def test_only_the_batch_with_the_last_block_is_padded(packed, tokenizer):
    collator = MaskingCollator(tokenizer, "token", seed=0)
    last = packed[len(packed) - 1]
    batch = collator([packed[0], packed[1], last])
    assert padding_counts(batch) == {"": (BLOCK - len(last["input_ids"]), 3 * BLOCK)}


def test_a_packed_run_trains_and_records_its_input(tokens_en, tiny_en, dataset_en, tokenizer, tmp_path):
    out = tmp_path / "packed"
    common = ["--data", tokens_en, "--model", tiny_en, "--objective", "burt", "--input", "packed"]
    train(args_for(*common, "--max-length", 64, "--max-steps", 3, "--batch-size", 4, "--out", out))
    config = json.loads((out / "pretrain_config.json").read_text())
    packed = PackedDataset(dataset_en, tokenizer, 64)
    assert config["input"] == "packed" and config["max_length"] == 64 and config["batching"] == "random"
    assert config["provenance"]["params"]["input"] == "packed" and config["provenance"]["params"]["max_length"] == 64
    assert config["examples"] == config["packing"]["blocks"] == len(packed)
    assert config["packing"]["cut_spans"] == packed.cut_spans() and config["packing"]["rows"] == len(dataset_en)
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    batches = epoch_batches(len(packed), 0, 0, 4, World())
    assert [e["tokens"] for e in log] == [int(packed.lengths()[b].sum()) for b in batches[:3]]
    assert [e["padding_share"] for e in log] == [0.0] * 3
    stats = json.loads((out / "stats.json").read_text())
    assert stats["padding_share"] == 0.0 and stats["masking"]["counts"]["rows"] == 12


def test_a_packed_run_resumes_exactly(tokens_en, tiny_en, tmp_path):
    from safetensors.torch import load_file

    common = ["--data", tokens_en, "--model", tiny_en, "--objective", "wwm", "--input", "packed"]
    common += ["--max-length", 48, "--max-steps", 4, "--batch-size", 4, "--save-every", 2]
    train(args_for(*common, "--out", tmp_path / "straight"))
    with pytest.raises(TrainingHalted):
        train(args_for(*common, "--out", tmp_path / "resumed"), halt_after=3)
    train(args_for(*common, "--out", tmp_path / "resumed", "--resume"))
    a, b = (load_file(tmp_path / name / "model.safetensors") for name in ("straight", "resumed"))
    assert all(a[k].equal(b[k]) for k in a)


@pytest.mark.parametrize("objective", ["misad", "nsp", "sop"])
def test_packed_input_is_refused_for_sentence_and_pair_objectives(objective, tokens_en, tiny_en, tmp_path, cli, capsys):
    argv = ["--data", tokens_en, "--model", tiny_en, "--objective", objective, "--input", "packed"]
    assert cli("pretrain", *argv, "--out", tmp_path / "x") == 2
    error = capsys.readouterr().err
    assert "packed input is for" in error and objective in error and len(error.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists() and not (tmp_path / ".x.work").exists()


def test_sentence_input_refuses_another_max_length_than_the_token_data(tokens_en, tiny_en, tmp_path, cli, capsys):
    argv = ["--data", tokens_en, "--model", tiny_en, "--objective", "mlm", "--max-length", 128]
    assert cli("pretrain", *argv, "--out", tmp_path / "x") == 2
    assert "tokenized at 64" in capsys.readouterr().err


def test_blocks_longer_than_the_model_positions_are_refused(tokens_en, tiny_en, tmp_path, cli, capsys):
    argv = ["--data", tokens_en, "--model", tiny_en, "--objective", "mlm", "--input", "packed"]
    assert cli("pretrain", *argv, "--out", tmp_path / "x") == 2  # the default block, 512 > the tiny model's 128
    assert "pass --max-length 128" in capsys.readouterr().err
