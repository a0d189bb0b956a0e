"""MiSAD's two losses (docs/method.md §3): ULR-BERT §3.2's equation and the authors' released ``run_mse.py``.

Each is computed through the pipeline (collator, ``PretrainingModel``) on a tiny random BERT and checked
against a direct transcription, written here with plain transformers calls: every input encoded on its
own by ``BertModel``, a ``BertPooler`` on ``[CLS]``, Hugging Face's own masked-LM loss.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from transformers import AutoModelForMaskedLM, AutoTokenizer, BertForPreTraining
from transformers.models.bert.modeling_bert import BertPooler

from pipeline.cli import build_parser
from pipeline.pretrain.objectives import PretrainingModel, make_data
from pipeline.pretrain.pretrain import train


def batch_for(variant: str, tokenizer, dataset, rows: int = 24, seed: int = 5) -> dict:
    _, collator = make_data("misad", dataset, tokenizer, seed, 64, "random", misad_loss=variant)
    batch = collator([dataset[i] for i in range(rows)])
    batch.pop("masking_stats")
    return batch


def model_for(tiny_en, variant: str) -> PretrainingModel:
    torch.manual_seed(0)
    mlm = AutoModelForMaskedLM.from_pretrained(tiny_en, attn_implementation="eager")
    module = PretrainingModel(mlm, "misad", "pooler", 0.0, misad_loss=variant)
    with torch.no_grad():
        # a freshly initialised tiny BERT gives nearly the same [CLS] state to every input (E_w = E_R = E_S,
        # where the released loss is 0): larger weights make it depend on the text, so the check sees a loss
        for name, weight in module.named_parameters():
            if weight.ndim == 2 and "embeddings" not in name:
                weight.normal_(0, 0.3)
    return module.eval()  # no dropout: the pipeline and the transcription see the same network


def transcription(module: PretrainingModel, batch: dict, variant: str) -> dict[str, float]:
    """The loss terms written out: the released lines (normalize(E^w + E^R), MSE with E^S, MLM on S and on
    masked R) or ULR-BERT §3.2 (``MSE(E^w + E^R, E^S)``, E's of unit length; MLM on S)."""
    bert = module.mlm  # BertForMaskedLM
    pooler = BertPooler(bert.config)
    pooler.load_state_dict(module.pooler.state_dict())

    def embed(ids, mask):  # "the pooled output of the [CLS] token" of each input encoded alone
        return pooler(bert.bert(input_ids=ids, attention_mask=mask).last_hidden_state)

    valid = batch["misad_valid"]
    e_s = embed(batch["input_ids"], batch["attention_mask"])[valid]
    e_w = embed(batch["w_input_ids"], batch["w_attention_mask"])[valid]
    e_r = embed(batch["r_input_ids"], batch["r_attention_mask"])[valid]
    e_w, e_r, e_s = F.normalize(e_w, dim=-1), F.normalize(e_r, dim=-1), F.normalize(e_s, dim=-1)
    mlm_s = bert(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["labels"]).loss
    if variant == "equation":
        misad = ((e_w + e_r - e_s) ** 2).mean()
        return {"mlm": mlm_s.item(), "misad": misad.item(), "loss": (mlm_s + misad).item()}
    combined = e_w + e_r
    combined = combined / combined.norm(dim=-1, keepdim=True)
    misad = ((combined - e_s) ** 2).mean()
    mlm_r = bert(
        input_ids=batch["r_input_ids"], attention_mask=batch["r_attention_mask"], labels=batch["r_labels"]
    ).loss
    return {"mlm": mlm_s.item(), "misad": misad.item(), "mlm_r": mlm_r.item(), "loss": (mlm_s + misad + mlm_r).item()}


@pytest.mark.parametrize("variant", ["equation", "released"])
def test_each_loss_equals_its_transcription(tiny_en, dataset_en, variant):
    tokenizer = AutoTokenizer.from_pretrained(tiny_en)
    batch = batch_for(variant, tokenizer, dataset_en)
    assert batch["misad_valid"].sum() >= 20
    module = model_for(tiny_en, variant)
    with torch.no_grad():
        got = {key: value.item() for key, value in module(**batch).items()}
        expected = transcription(module, batch, variant)
    assert set(got) == set(expected)
    for key in expected:
        assert got[key] == pytest.approx(expected[key], rel=1e-4, abs=1e-6), key
    assert got["misad"] > 1e-3  # a random model is far from either identity: the check has something to see


def test_the_two_losses_differ_on_the_same_batch(tiny_en, dataset_en):
    """The re-normalisation changes the MiSAD term itself, not only the terms beside it."""
    tokenizer = AutoTokenizer.from_pretrained(tiny_en)
    batch = batch_for("released", tokenizer, dataset_en)
    with torch.no_grad():
        released = model_for(tiny_en, "released")(**batch)["misad"].item()
        equation = model_for(tiny_en, "equation")(**{k: v for k, v in batch.items() if k != "r_labels"})["misad"]
    assert abs(released - equation.item()) > 1e-3


def test_the_released_collator_masks_r_and_leaves_s_and_w_as_the_equations(tiny_en, dataset_en):
    tokenizer = AutoTokenizer.from_pretrained(tiny_en)
    released, equation = batch_for("released", tokenizer, dataset_en), batch_for("equation", tokenizer, dataset_en)
    assert "r_labels" not in equation
    for key in ("input_ids", "labels", "w_input_ids", "misad_valid"):  # R's masking draws from a stream of its own
        assert torch.equal(released[key], equation[key]), key
    valid = released["misad_valid"]
    r_labels, r_clean = released["r_labels"], equation["r_input_ids"]
    labelled = r_labels != -100
    assert not labelled[~valid].any()  # no R: nothing to predict
    assert torch.equal(r_labels[labelled], r_clean[labelled])  # the labels are R's own tokens
    changed = released["r_input_ids"] != r_clean
    assert not (changed & ~labelled).any()  # only labelled positions change
    assert (released["r_input_ids"][labelled] == tokenizer.mask_token_id).float().mean() > 0.5  # 80/10/10
    special = torch.isin(r_clean, torch.tensor(tokenizer.all_special_ids))
    rate = labelled.sum().item() / (~special & (released["r_attention_mask"] == 1))[valid].sum().item()
    assert 0.08 < rate < 0.22  # BERT's 15%


def test_the_released_pooler_starts_fresh_and_seeded(tiny_en, tmp_path):
    """run_mse.py starts a fresh BertPooler; the equation's pooler starts from the checkpoint's (ULR-BERT §3.2)."""
    checkpoint = tmp_path / "with-pooler"
    torch.manual_seed(7)
    BertForPreTraining(AutoModelForMaskedLM.from_pretrained(tiny_en).config).save_pretrained(checkpoint)
    saved = BertForPreTraining.from_pretrained(checkpoint).bert.pooler.dense.weight

    def started(variant):
        torch.manual_seed(3)
        module = PretrainingModel(AutoModelForMaskedLM.from_pretrained(tiny_en), "misad", "pooler", misad_loss=variant)
        return module.start_pooler(checkpoint), module.pooler.dense.weight.detach().clone()

    (new_a, fresh_a), (new_b, fresh_b) = started("released"), started("released")
    assert new_a is new_b is True and torch.equal(fresh_a, fresh_b)  # a function of the seed
    assert not torch.allclose(fresh_a, saved)
    new, loaded = started("equation")
    assert new is False and torch.equal(loaded, saved)


def test_the_released_loss_needs_the_pooler(tiny_en):
    mlm = AutoModelForMaskedLM.from_pretrained(tiny_en)
    with pytest.raises(ValueError, match="--pooling pooler"):
        PretrainingModel(mlm, "misad", "mean", misad_loss="released")
    with pytest.raises(ValueError, match="unknown MiSAD loss"):
        PretrainingModel(mlm, "misad", "pooler", misad_loss="paper")


def test_a_released_run_logs_rs_mlm_and_records_its_loss(tokens_en, tiny_en, tmp_path):
    out = tmp_path / "released"
    argv = ["pretrain", "--data", tokens_en, "--model", tiny_en, "--objective", "misad", "--out", out]
    argv += ["--max-steps", 2, "--batch-size", 8, "--misad-choice", "random", "--pooling", "pooler"]
    argv += ["--misad-loss", "released"]
    argv = [str(a) for a in argv]
    train(build_parser(argv).parse_args(argv))
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert all(e["loss"] == pytest.approx(e["mlm"] + e["misad"] + e["mlm_r"], rel=1e-5) for e in log)
    config = json.loads((out / "pretrain_config.json").read_text())
    assert config["misad_loss"] == "released" and config["new_pooler"] is True
    assert config["span_max_words"] == 6


def test_a_released_loss_without_the_pooler_is_refused_at_the_command_line(tokens_en, tiny_en, tmp_path, capsys):
    from pipeline.cli import main

    argv = ["pretrain", "--data", tokens_en, "--model", tiny_en, "--objective", "misad", "--out", tmp_path / "x"]
    assert main([str(a) for a in [*argv, "--misad-loss", "released"]]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "--misad-loss" in err and "--pooling pooler" in err
    assert not (tmp_path / "x").exists()


def test_by_hand_the_equation_wants_a_half_negative_dot_product_and_the_released_loss_does_not():
    """Unit E^w = (1, 0), E^R = (0, 1), E^S = (1, 1)/√2: the released loss is 0; the equation's is
    ((1 - 1/√2)² · 2) / 2. With E^w·E^R = -1/2 and E^S = E^w + E^R (unit length), the equation's is 0."""
    from types import SimpleNamespace

    from torch import nn

    class Rows(nn.Module):  # token id -> fixed hidden state, the first position read as [CLS]
        def __init__(self, table):
            super().__init__()
            self.table = nn.Parameter(torch.tensor(table), requires_grad=False)

        def forward(self, input_ids, attention_mask=None, **_):
            return SimpleNamespace(last_hidden_state=self.table[input_ids])

    half = [-0.5, 3**0.5 / 2]  # E^w·E^R = -1/2
    stub = nn.Module()
    stub.base_model = Rows([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], half])
    stub.base_model.embeddings = None
    stub.config = SimpleNamespace(hidden_size=2, pad_token_id=0, _attn_implementation="eager", model_type="bert")
    module = PretrainingModel.__new__(PretrainingModel)
    nn.Module.__init__(module)
    module.mlm, module.discriminator, module.pooling = stub, None, "mean"
    ones, valid = torch.ones(1, 1, dtype=torch.long), torch.tensor([True])
    s = torch.tensor([[[2**-0.5, 2**-0.5]]])

    def loss(variant, w, r, s_hidden):
        module.misad_loss_variant = variant
        labels = torch.full((1, 1), -100)  # R's MLM term has no labelled position here: no head is called
        return module.misad_loss(s_hidden, ones, torch.tensor([[w]]), ones, torch.tensor([[r]]), ones, valid, labels)

    assert loss("released", 1, 2, s)["misad"].item() == pytest.approx(0.0, abs=1e-7)
    assert loss("equation", 1, 2, s)["misad"].item() == pytest.approx((1 - 2**-0.5) ** 2)
    s_sum = torch.tensor([[[1.0 - 0.5, 3**0.5 / 2]]])  # E^w + E^R, of unit length
    assert loss("equation", 1, 3, s_sum)["misad"].item() == pytest.approx(0.0, abs=1e-7)
    assert np.isclose(float(torch.tensor([1.0, 0.0]) @ torch.tensor(half)), -0.5)


def test_a_released_loss_from_an_electra_discriminator_is_refused(tokens_en, electra_en, tmp_path, capsys):
    """ELECTRA's discriminator has no masked-LM head for R's term: one line, exit 2, before any training."""
    from pipeline.cli import main

    argv = ["pretrain", "--data", tokens_en, "--model", electra_en, "--objective", "misad", "--out", tmp_path / "x"]
    argv += ["--pooling", "pooler", "--misad-loss", "released", "--max-steps", 1]
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "ELECTRA" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()
