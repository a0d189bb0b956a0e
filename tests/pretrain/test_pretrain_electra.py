"""ELECTRA backbones: generator MLM + discriminator replaced-token detection (+ MiSAD on the discriminator)."""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from transformers import AutoModel, ElectraForMaskedLM, ElectraForPreTraining

from pipeline.cli import build_parser
from pipeline.models.loading import ELECTRA_GENERATORS, generator_for
from pipeline.pretrain import electra
from pipeline.pretrain.pretrain import train


def args_for(*argv):
    argv = ["pretrain", *map(str, argv)]
    return build_parser(argv).parse_args(argv)


def log_of(out):
    return [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]


def test_the_registry_names_each_released_pair(tmp_path):
    assert generator_for("google/electra-base-discriminator") == "google/electra-base-generator"
    assert generator_for("google/electra-small-discriminator", "my/generator") == "my/generator"
    assert all(
        d.endswith("-discriminator") and g == d.replace("-discriminator", "-generator")
        for d, g in ELECTRA_GENERATORS.items()
    )


def test_generator_and_discriminator_share_embeddings(electra_en):
    generator = ElectraForMaskedLM.from_pretrained(electra_en / "generator")
    discriminator = ElectraForPreTraining.from_pretrained(electra_en)
    assert electra.share_embeddings(generator, discriminator)
    assert generator.electra.embeddings is discriminator.electra.embeddings
    assert generator.get_output_embeddings().weight is discriminator.electra.embeddings.word_embeddings.weight


def test_replaced_tokens_and_their_labels():
    input_ids = torch.tensor([[1, 5, 6, 7, 2]])
    labels = torch.tensor([[-100, 8, -100, 7, -100]])  # positions 1 and 3 masked (originals 8 and 7)
    replaced = torch.tensor([[1, 8, 6, 9, 2]])  # the generator restored 8 and replaced 7 by 9

    class Head:
        @staticmethod
        def discriminator_predictions(hidden):
            return hidden[..., 0]

    hidden = torch.zeros(1, 5, 1)
    loss = electra.rtd_loss(Head, hidden, replaced, input_ids, labels, torch.ones(1, 5))
    expected = torch.nn.functional.binary_cross_entropy_with_logits(torch.zeros(5), torch.tensor([0, 0, 0, 1, 0.0]))
    assert loss == pytest.approx(expected.item())


@pytest.mark.parametrize("objective", ["burt", "misad"])
def test_electra_trains_with_its_own_objective(objective, tokens_en, electra_en, tmp_path):
    out = tmp_path / objective
    train(
        args_for(
            "--data",
            tokens_en,
            "--model",
            electra_en,
            "--objective",
            objective,
            "--out",
            out,
            "--max-steps",
            12,
            "--batch-size",
            16,
            "--lr",
            2e-3,
            "--warmup",
            0.05,
            "--misad-choice",
            "random",
        )
    )
    log = log_of(out)
    terms = {"mlm", "rtd", "misad"} if objective == "misad" else {"mlm", "rtd"}
    assert all(terms <= set(e) for e in log)
    assert all(
        e["loss"] == pytest.approx(sum(e[k] * (50.0 if k == "rtd" else 1.0) for k in terms), rel=1e-5) for e in log
    )
    assert sum(e["rtd"] for e in log[-3:]) / 3 < sum(e["rtd"] for e in log[:2]) / 2  # the discriminator learns
    # the discriminator is the model kept (AutoModel: ElectraModel); the pair goes on in generator/
    assert AutoModel.from_pretrained(out).config.architectures == ["ElectraForPreTraining"]
    assert ElectraForMaskedLM.from_pretrained(out / "generator").config.hidden_size == 16
    assert json.loads((out / "pretrain_config.json").read_text())["generator"] == str(electra_en / "generator")


def test_ulr_electra_trains_misad_with_a_fresh_pooler_and_the_papers_equation(tokens_en, electra_en, tmp_path):
    """paper-en's ULR-ELECTRA rows (ULR-BERT Tables 2 and 8): MiSAD on [CLS] through a pooler started fresh
    (ELECTRA has none), §3.2's equation (the released loss needs a masked-LM head), beside ELECTRA's terms."""
    out = tmp_path / "ulr-electra"
    flags = ["--max-steps", 6, "--batch-size", 16, "--lr", 2e-3, "--misad-choice", "random"]
    train(args_for("--data", tokens_en, "--model", electra_en, "--objective", "misad", "--out", out, *flags,
                   "--pooling", "pooler", "--misad-loss", "equation"))  # fmt: skip
    log = log_of(out)
    assert log and all({"mlm", "rtd", "misad"} <= set(e) for e in log)
    assert AutoModel.from_pretrained(out).config.architectures == ["ElectraForPreTraining"]


def test_a_discriminator_without_generator_is_refused(tokens_en, electra_en, tmp_path, cli, capsys):
    lonely = tmp_path / "lonely"
    shutil.copytree(electra_en, lonely, ignore=shutil.ignore_patterns("generator"))
    assert cli("pretrain", "--data", tokens_en, "--model", lonely, "--objective", "mlm", "--out", tmp_path / "x") == 2
    assert "--generator" in capsys.readouterr().err and not (tmp_path / "x").exists()
