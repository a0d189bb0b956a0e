"""Each fine-tuning recipe trains under its own paper's optimiser (pipeline/finetune/recipes.py OPTIMISERS)."""

from __future__ import annotations

import json

import pytest
from finetune_builders import NLI_TRAIN
from transformers import Trainer

from pipeline.cli import build_parser
from pipeline.finetune.finetune import train, training_arguments
from pipeline.finetune.recipes import OPTIMISERS, RECIPES


def args_for(*argv):
    argv = ["finetune", *map(str, argv)]
    return build_parser(argv).parse_args(argv)


def test_every_recipe_has_an_optimiser():
    assert set(OPTIMISERS) == set(RECIPES)


@pytest.mark.parametrize(
    "recipe, betas, eps, decay",
    [
        ("twin", (0.9, 0.98), 1e-9, 0.0),  # BURT twin §3.3
        ("sbert-nli", (0.9, 0.999), 1e-6, 0.01),  # SBERT §3.1 as sentence-transformers' fit() ran it
    ],
)
def test_the_trainer_builds_the_recipes_optimiser(tiny_model, tmp_path, recipe, betas, eps, decay):
    args = args_for(
        "--model", tiny_model, "--recipe", recipe, "--nli", NLI_TRAIN, "--out", tmp_path / "out", "--max-steps", 3
    )
    arguments = training_arguments(args, tmp_path / "work", 1, recipe == "twin")
    cls, kwargs = Trainer.get_optimizer_cls_and_kwargs(arguments)
    assert cls.__name__ == "AdamW" and kwargs["betas"] == betas and kwargs["eps"] == eps
    assert arguments.weight_decay == decay and arguments.learning_rate == 2e-5
    assert arguments.lr_scheduler_type == "linear" and arguments.max_grad_norm == 1.0


def test_sbert_nli_records_sberts_optimiser_not_the_twin_recipes(tiny_model, tmp_path):
    out = tmp_path / "sbert"
    train(
        args_for(
            "--model",
            tiny_model,
            "--recipe",
            "sbert-nli",
            "--nli",
            NLI_TRAIN,
            "--out",
            out,
            "--max-steps",
            2,
            "--batch-size",
            4,
        )
    )
    recorded = json.loads((out / "finetune_config.json").read_text())["optimizer"]
    assert recorded == {"name": "AdamW", "betas": [0.9, 0.999], "eps": 1e-6, "weight_decay": 0.01}
    assert recorded != OPTIMISERS["twin"].record()
