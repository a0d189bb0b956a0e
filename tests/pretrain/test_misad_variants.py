"""ULR-BERT §7.2's MiSAD variants (w a random span or a named entity) and MiSAD's pooler sentence vector (§3.2)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file
from transformers import AutoModel, AutoTokenizer, BertForPreTraining

from pipeline.pretrain.misad import MisadCollator
from pipeline.pretrain.objectives import make_data
from pipeline.pretrain.pooler import DENSE_FOLDER, Pooler
from pipeline.pretrain.span_sampling import longest_non_overlapping, truncated_geometric, word_units


def rows_of(dataset):
    return [dataset[i] for i in range(len(dataset))]


def words_in(word_ids: np.ndarray, start: int, end: int) -> int:
    return len(set(word_ids[start:end].tolist()))


def whole_words(word_ids: np.ndarray, start: int, end: int) -> bool:
    return word_ids[start - 1] != word_ids[start] and (end == len(word_ids) or word_ids[end] != word_ids[end - 1])


def test_misad_span_draws_one_whole_word_span_by_spanberts_law(tiny_en, dataset_en):
    tokenizer = AutoTokenizer.from_pretrained(tiny_en)
    rows = rows_of(dataset_en)
    lengths = []
    for epoch in range(3):
        collator = MisadCollator(tokenizer, "random", seed=3, w_source="span")
        collator.set_epoch(epoch)
        for row in rows:
            word_ids = np.asarray(row["word_ids"])
            words = word_units(word_ids, word_ids >= 0)
            candidates = collator.candidates(row)
            if len(words) < 2:
                assert len(candidates) == 0
                continue
            assert len(candidates) == 1
            start, end = candidates[0].tolist()
            assert whole_words(word_ids, start, end) and word_ids[start] >= 0 and word_ids[end - 1] >= 0
            n = words_in(word_ids, start, end)
            assert 1 <= n <= min(6, len(words) - 1)  # R keeps at least one word
            if len(words) > 6:
                lengths.append(n)
    law = truncated_geometric(0.2, 1, 6)
    observed = np.bincount(lengths, minlength=7)[1:] / len(lengths)
    assert len(lengths) > 1000 and np.abs(observed - law).max() < 0.03


def test_misad_entity_draws_a_kept_entity_uniformly_and_counts_fallbacks(tiny_en, dataset_en):
    tokenizer = AutoTokenizer.from_pretrained(tiny_en)
    rows = rows_of(dataset_en)
    collator = MisadCollator(tokenizer, "random", seed=0, w_source="entity")
    batch = collator(rows)
    fallbacks = 0
    several = []  # rows with more than one kept entity
    for i, row in enumerate(rows):
        word_ids = np.asarray(row["word_ids"])
        content = np.flatnonzero(word_ids >= 0)
        whole = (int(content[0]), int(content[-1]) + 1)
        spans = [(s, e) for s, e in np.asarray(row["entity_spans"]).reshape(-1, 2).tolist() if (s, e) != whole]
        kept = longest_non_overlapping(np.array(spans).reshape(-1, 2), word_ids >= 0)
        if not batch["misad_valid"][i]:
            continue
        w = batch["w_input_ids"][i][batch["w_attention_mask"][i].bool()].tolist()[1:-1]
        chosen = [(s, e) for s, e in kept if row["input_ids"][s:e].tolist() == w]
        if kept:
            assert chosen, "w is one of the sentence's kept entity spans"
            if len(kept) > 1:
                several.append(row)
        else:
            fallbacks += 1
            assert len(w) >= 1
    assert batch["masking_stats"].counts["misad_fallbacks"] == fallbacks > 0
    assert len(several) > 10
    # uniform: over epochs, a sentence with several entities gets each of them as w
    row = several[0]
    draws = set()
    for epoch in range(40):
        collator.set_epoch(epoch)
        built = collator([row])
        draws.add(tuple(built["w_input_ids"][0][built["w_attention_mask"][0].bool()].tolist()))
    word_ids = np.asarray(row["word_ids"])
    assert len(draws) == len(longest_non_overlapping(np.asarray(row["entity_spans"]).reshape(-1, 2), word_ids >= 0))


@pytest.mark.parametrize("source", ["span", "entity"])
def test_the_choice_of_w_is_deterministic_per_example_seed_and_epoch(source, tiny_en, dataset_en):
    tokenizer = AutoTokenizer.from_pretrained(tiny_en)
    rows = rows_of(dataset_en)[:200]

    def ws(seed, epoch, part):
        collator = MisadCollator(tokenizer, "random", seed=seed, w_source=source)
        collator.set_epoch(epoch)
        batch = collator(part)
        return [tuple(r[m.bool()].tolist()) for r, m in zip(batch["w_input_ids"], batch["w_attention_mask"])]

    first = ws(0, 0, rows)
    assert first == ws(0, 0, rows)
    assert first[50:] == ws(0, 0, rows[50:])  # whatever the batch
    assert first != ws(0, 1, rows) and first != ws(1, 0, rows)


def test_the_variants_draw_w_uniformly_whatever_the_choice(tiny_en, dataset_en):
    tokenizer = AutoTokenizer.from_pretrained(tiny_en)
    with pytest.raises(ValueError):
        MisadCollator(tokenizer, "mlm-score", w_source="entity")
    for objective, source in (("misad", "ngram"), ("misad-span", "span"), ("misad-entity", "entity")):
        _, collator = make_data(objective, dataset_en, tokenizer, 0, 64, misad_choice="mlm-score")
        assert collator.w_source == source
        assert collator.choice == ("mlm-score" if objective == "misad" else "random")


def run_args(tokens, model, objective, out, *extra):
    return ["--data", tokens, "--model", model, "--objective", objective, "--out", out, "--batch-size", 8, *extra]


@pytest.mark.parametrize("objective", ["misad-span", "misad-entity"])
def test_a_short_run_of_each_variant(objective, tokens_en, tiny_en, tmp_path, cli):
    out = tmp_path / objective
    assert cli("pretrain", *run_args(tokens_en, tiny_en, objective, out, "--max-steps", 2)) == 0
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert len(log) == 2 and all(e["loss"] == pytest.approx(e["mlm"] + e["misad"], rel=1e-5) for e in log)
    config = json.loads((out / "pretrain_config.json").read_text())
    assert config["objective"] == objective and config["misad_choice"] == "random" and config["new_pooler"] is None
    stats = json.loads((out / "stats.json").read_text())["masking"]["counts"]
    assert stats["misad_rows"] == 16 and (stats["misad_fallbacks"] == 0 or objective == "misad-entity")


def test_the_pooler_starts_from_the_checkpoint_and_is_saved_with_the_model(tokens_en, tiny_en, tmp_path, cli):
    """MiSAD with BERT's pooler (ULR-BERT §3.2): it starts from the checkpoint's pooler where there is one, and
    the trained pooler loads with AutoModel (pooler_output) and sentence-transformers (2_Dense)."""
    from sentence_transformers import SentenceTransformer

    with_pooler = tmp_path / "bert-with-pooler"
    shutil.copytree(tiny_en, with_pooler)
    torch.manual_seed(7)
    start = BertForPreTraining.from_pretrained(tiny_en)  # the tiny MLM plus a (new) pooler
    start.save_pretrained(with_pooler)
    pooler = Pooler(start.config.hidden_size)
    assert pooler.load_pretrained(with_pooler) and torch.equal(pooler.dense.weight, start.bert.pooler.dense.weight)
    without = tmp_path / "bert-without-pooler"  # a masked LM as a foreign pipeline saves it: no pooler
    shutil.copytree(tiny_en, without)
    state = load_file(without / "model.safetensors")
    save_file({k: v for k, v in state.items() if ".pooler." not in k}, without / "model.safetensors")
    assert not Pooler(start.config.hidden_size).load_pretrained(without)

    for model, new in ((with_pooler, False), (without, True)):
        out = tmp_path / f"pooler-{new}"
        extra = ("--max-steps", 2, "--pooling", "pooler", "--lr", 1e-2, "--warmup", 0, "--misad-choice", "random")
        assert cli("pretrain", *run_args(tokens_en, model, "misad", out, *extra)) == 0
        config = json.loads((out / "pretrain_config.json").read_text())
        assert config["new_pooler"] is new and config["pooling"] == "pooler"
    out = tmp_path / "pooler-False"
    dense = load_file(out / DENSE_FOLDER / "model.safetensors")
    saved = load_file(out / "model.safetensors")
    assert torch.equal(saved["bert.pooler.dense.weight"], dense["linear.weight"])
    assert not torch.allclose(saved["bert.pooler.dense.weight"], start.bert.pooler.dense.weight)  # it trained
    encoder = AutoModel.from_pretrained(out).eval()
    assert torch.equal(encoder.pooler.dense.weight, dense["linear.weight"])
    st = SentenceTransformer(str(out), device="cpu")
    texts = ["anarchism is a political philosophy", "the state system"]
    batch = st.tokenizer(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        expected = encoder(**batch).pooler_output
    assert torch.allclose(st.encode(texts, convert_to_tensor=True), expected, atol=1e-5)
    card = (out / "README.md").read_text()
    assert "pooler pooling" in card


def test_pooler_pooling_is_refused_for_an_objective_without_misad(tokens_en, tiny_en, tmp_path, cli, capsys):
    out = tmp_path / "mlm-pooler"
    assert cli("pretrain", *run_args(tokens_en, tiny_en, "mlm", out, "--max-steps", 1, "--pooling", "pooler")) == 2
    assert "pooler" in capsys.readouterr().err and not out.exists()


def test_the_pooler_is_saved_under_each_architectures_own_names():
    from transformers import AlbertConfig, BertConfig, ElectraConfig

    from pipeline.pretrain.pooler import base_model_pooler_keys

    assert base_model_pooler_keys(BertConfig()) == {
        "dense.weight": "pooler.dense.weight",
        "dense.bias": "pooler.dense.bias",
    }
    assert base_model_pooler_keys(AlbertConfig()) == {"dense.weight": "pooler.weight", "dense.bias": "pooler.bias"}
    assert base_model_pooler_keys(ElectraConfig()) == {}  # no pooler: sentence-transformers' 2_Dense only
