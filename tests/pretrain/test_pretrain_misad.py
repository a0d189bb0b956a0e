"""MiSAD: w is never masked in S; S, w and R are well-formed for BERT and ALBERT; scores and loss by hand."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from torch import nn
from transformers import AutoModelForMaskedLM, AutoTokenizer

from pipeline.pretrain.misad import MisadCollator, choose_by_mlm_score, mlm_scores
from pipeline.pretrain.objectives import PretrainingModel
from pipeline.pretrain.token_dataset import TokenDataset, build_arrow_cache


@pytest.fixture(scope="module", params=["bert", "albert"])
def setup(request, tiny_en, albert_en, marked_en, tokens_en, dataset_en, tmp_path_factory):
    from pipeline.cli import main

    if request.param == "bert":
        return AutoTokenizer.from_pretrained(tiny_en), dataset_en, tiny_en
    out = tmp_path_factory.mktemp("albert") / "tokens.parquet"
    assert (
        main(["tokenize", "--marked", str(marked_en), "--model", str(albert_en), "--lang", "en", "--out", str(out)])
        == 0
    )
    return (
        AutoTokenizer.from_pretrained(albert_en),
        TokenDataset(build_arrow_cache(out, out.with_suffix(".arrow"))),
        albert_en,
    )


def real(row_ids: torch.Tensor, mask: torch.Tensor) -> list[int]:
    return row_ids[mask.bool()].tolist()


def test_s_w_r_are_well_formed_and_w_is_never_masked(setup):
    tokenizer, dataset, _ = setup
    collator = MisadCollator(tokenizer, "random", seed=1)
    rows = [dataset[i] for i in range(len(dataset))]
    checked = 0
    for lo in range(0, len(rows), 64):
        part = rows[lo : lo + 64]
        batch = collator(part)
        for i, row in enumerate(part):
            ids = row["input_ids"].tolist()
            assert ids[0] == tokenizer.cls_token_id and ids[-1] == tokenizer.sep_token_id
            if not batch["misad_valid"][i]:
                continue
            w = real(batch["w_input_ids"][i], batch["w_attention_mask"][i])
            r = real(batch["r_input_ids"][i], batch["r_attention_mask"][i])
            assert w[0] == r[0] == tokenizer.cls_token_id and w[-1] == r[-1] == tokenizer.sep_token_id
            core = w[1:-1]
            starts = [
                k for k in range(len(ids)) if ids[k : k + len(core)] == core and r == ids[:k] + ids[k + len(core) :]
            ]
            assert starts, "S = R with w put back in its place"
            start = starts[0]
            one_word = len(set(row["word_ids"][start : start + len(core)].tolist())) == 1  # the fallback
            assert [start, start + len(core)] in row["ngram_spans"].tolist() or one_word
            s = batch["input_ids"][i, : len(ids)].tolist()
            labels = batch["labels"][i, : len(ids)]
            assert s[start : start + len(core)] == core and (labels[start : start + len(core)] == -100).all()
            assert labels[0] == labels[len(ids) - 1] == -100
            assert len(r) > 2  # R is never empty
            checked += 1
    assert checked > 300


def test_sentence_without_ngrams_falls_back_to_one_word(setup):
    tokenizer, dataset, _ = setup
    row = dict(dataset[0])
    row["ngram_spans"] = np.zeros((0, 2), np.int32)
    candidates = MisadCollator(tokenizer, "random").candidates(row)
    word_ids = row["word_ids"]
    assert len(candidates) == 1
    start, end = candidates[0]
    assert len(set(word_ids[start:end].tolist())) == 1 and word_ids[start - 1] != word_ids[start]
    whole = dict(row, ngram_spans=np.array([[1, len(row["input_ids"]) - 1]], np.int32))  # the whole sentence
    assert all((s, e) != (1, len(row["input_ids"]) - 1) for s, e in MisadCollator(tokenizer).candidates(whole))


def test_mlm_scores_match_the_full_model_and_the_lowest_is_chosen(setup):
    tokenizer, dataset, model_dir = setup
    model = AutoModelForMaskedLM.from_pretrained(model_dir).eval()
    collator = MisadCollator(tokenizer, "mlm-score", seed=0)
    rows = [dataset[i] for i in range(8)]
    batch = collator(rows)
    scores = mlm_scores(
        model,
        batch["score_input_ids"],
        batch["score_attention_mask"],
        batch["candidates"],
        tokenizer.mask_token_id,
        chunk_tokens=300,
    )
    for i, row in enumerate(rows):
        ids = torch.tensor(row["input_ids"], dtype=torch.long)
        for c, (start, end) in enumerate(batch["candidates"][i].tolist()):
            if start < 0:
                assert scores[i, c] == float("inf")
                continue
            masked = ids.clone()
            masked[start:end] = tokenizer.mask_token_id
            with torch.no_grad():
                probs = model(input_ids=masked[None]).logits[0].softmax(-1)
            expected = probs[torch.arange(start, end), ids[start:end]].mean()  # (1/|w|) Σ P(x_k | S\w)
            assert scores[i, c].item() == pytest.approx(expected.item(), rel=1e-4)
    built = choose_by_mlm_score(model, batch, collator, tokenizer.mask_token_id, torch.device("cpu"))
    for i in range(len(rows)):
        start, end = batch["candidates"][i, scores[i].argmin()].tolist()
        w = real(built["w_input_ids"][i], built["w_attention_mask"][i])
        assert w[1:-1] == rows[i]["input_ids"][start:end].tolist()


class _Embedding(nn.Module):
    """A stand-in encoder: the hidden state of token id t is ``table[t]``."""

    def __init__(self, table):
        super().__init__()
        self.table = nn.Parameter(torch.tensor(table))

    def forward(self, input_ids, attention_mask, **_):
        return SimpleNamespace(last_hidden_state=self.table[input_ids])


def test_misad_loss_by_hand():
    stub = nn.Module()
    stub.base_model = _Embedding([[0.0, 0.0], [2.0, 0.0], [0.0, 3.0], [1.0, 1.0]])
    stub.base_model.embeddings = None
    stub.config = SimpleNamespace(hidden_size=2, pad_token_id=0, _attn_implementation="eager", model_type="bert")
    module = PretrainingModel.__new__(PretrainingModel)
    nn.Module.__init__(module)
    module.mlm, module.discriminator, module.pooling, module.misad_loss_variant = stub, None, "mean", "equation"
    s_hidden = torch.tensor([[[5.0, 0.0]], [[0.0, 1.0]]])  # E_S = (1, 0) and (0, 1) after normalising
    ones = torch.ones(2, 1, dtype=torch.long)
    w_ids = torch.tensor([[1], [3]])  # E_w = (1, 0) and (1, 1)/√2
    r_ids = torch.tensor([[2], [3]])  # E_R = (0, 1)
    valid = torch.tensor([True, False])
    loss = module.misad_loss(s_hidden, ones, w_ids, ones, r_ids, ones, valid)["misad"]
    # (E_w + E_R - E_S) = (1 + 0 - 1, 0 + 1 - 0) = (0, 1): mean of squares over 2 units = 0.5
    assert loss.item() == pytest.approx(0.5)
    both = module.misad_loss(s_hidden, ones, w_ids, ones, r_ids, ones, torch.tensor([True, True]))["misad"]
    second = ((2**-0.5 * 2 - 0) ** 2 + (2**-0.5 * 2 - 1) ** 2) / 2  # (√2, √2) - (0, 1)
    assert both.item() == pytest.approx((0.5 + second) / 2)


def test_sentences_without_an_ngram_are_counted_as_fallbacks(setup):
    tokenizer, dataset, _ = setup
    collator = MisadCollator(tokenizer, "random", seed=0)
    rows = [dataset[i] for i in range(len(dataset))]
    batch = collator(rows)
    counts = batch["masking_stats"].counts
    expected_none = expected_fallbacks = 0
    for row in rows:
        word_ids = np.asarray(row["word_ids"])
        content = np.flatnonzero(word_ids >= 0)
        spans = [
            (s, e)
            for s, e in np.asarray(row["ngram_spans"]).reshape(-1, 2)
            if content[0] <= s < e <= content[-1] + 1 and (s, e) != (content[0], content[-1] + 1)
        ]
        if not spans:
            words = len(set(word_ids[content].tolist()))
            expected_fallbacks += words > 1
            expected_none += words <= 1
    assert counts["misad_rows"] == len(rows) and counts["misad_fallbacks"] == expected_fallbacks > 0
    assert counts["misad_none"] == expected_none == int((~batch["misad_valid"]).sum())
