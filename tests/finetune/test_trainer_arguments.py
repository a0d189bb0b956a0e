"""The sentence-transformers ``TrainingArguments`` that the ``finetune`` and ``finetune-semeval`` stages build,
field by field. The expected values are written out as literals (taken from each stage's own construction of
its arguments before the two shared one builder), so a change to either stage's arguments shows here."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from finetune_builders import NLI_TRAIN, PPDB
from sentence_transformers import SentenceTransformerTrainingArguments
from sentence_transformers.base.sampler import BatchSamplers
from testdata import DEMO_DATA

from pipeline.cli import build_parser
from pipeline.finetune.finetune import training_arguments
from pipeline.finetune.finetune_semeval import fine_tune
from pipeline.finetune.schedule import PaperScheduleBatchSampler
from pipeline.tasks import semeval5a
from pipeline.tasks.data_root import DataRoot

GPU = torch.cuda.is_available()  # bf16, use_cpu and pinned memory follow the machine


def parsed(*argv):
    argv = [str(a) for a in argv]
    return build_parser(argv).parse_args(argv)


def differences(built, expected: dict) -> dict:
    """Every field of the arguments ``built`` that differs from ``expected`` (the rest at the defaults):
    field -> (built, expected)."""
    reference = SentenceTransformerTrainingArguments(**expected)
    assert type(built) is SentenceTransformerTrainingArguments
    return {
        field.name: (getattr(built, field.name), getattr(reference, field.name))
        for field in dataclasses.fields(reference)
        if getattr(built, field.name) != getattr(reference, field.name)
    }


# the fields both stages set alike
MACHINE = {"bf16": GPU, "use_cpu": not GPU, "logging_steps": 1, "disable_tqdm": True, "max_grad_norm": 1.0}
SCHEDULE = {"lr_scheduler_type": "linear", "optim": "adamw_torch"}
TWIN_ADAM = {"adam_beta1": 0.9, "adam_beta2": 0.98, "adam_epsilon": 1e-9, "weight_decay": 0.0}
SBERT_ADAMW = {"adam_beta1": 0.9, "adam_beta2": 0.999, "adam_epsilon": 1e-6, "weight_decay": 0.01}
# the finetune stage's fields that no case below varies, and those of a run without evaluation
FINETUNE = {"dataloader_drop_last": True, "dataloader_pin_memory": GPU, "greater_is_better": True}
NO_EVALUATION = {"eval_strategy": "no", "eval_steps": None, "load_best_model_at_end": False}


@pytest.fixture(autouse=True)
def _no_tracker_override(monkeypatch):
    monkeypatch.delenv("ULR_REPORT_TO", raising=False)  # the tracker comes from the flag alone


def finetune_cases(model, out):
    """(finetune argv, the warm-up steps the stage passes, the expected fields but output_dir)."""
    common = ("finetune", "--model", model, "--nli", NLI_TRAIN, "--out", out)
    return [
        (  # twin: the paper's schedule, no evaluation, no checkpoints, TensorBoard (the stage's own callback)
            [*common, "--recipe", "twin", "--ppdb", PPDB, "--max-steps", 7, "--batch-size", 4, "--seed", 3],
            1,
            {
                **MACHINE,
                **SCHEDULE,
                **TWIN_ADAM,
                "max_steps": 7,
                "per_device_train_batch_size": 4,
                "learning_rate": 2e-5,
                "warmup_steps": 1,
                "seed": 3,
                "data_seed": 3,
                **FINETUNE,
                **NO_EVALUATION,
                "report_to": "none",
                "dataloader_num_workers": 0,
                "save_strategy": "no",
                "save_steps": 500,
                "save_total_limit": 1,
                "metric_for_best_model": None,
                "batch_sampler": BatchSamplers.BATCH_SAMPLER,
                "multi_dataset_batch_sampler": PaperScheduleBatchSampler,
            },
        ),
        (  # sbert-nli: SBERT's AdamW, evaluation with selection of the best checkpoint, wandb, workers
            [
                *common,
                *("--recipe", "sbert-nli", "--max-steps", 20, "--batch-size", 8, "--lr", 1e-4, "--seed", 1),
                *("--eval-data", DEMO_DATA, "--eval-steps", 5, "--select-best", "--num-workers", 2),
                *("--report-to", "wandb"),
            ],
            2,
            {
                **MACHINE,
                **SCHEDULE,
                **SBERT_ADAMW,
                "max_steps": 20,
                "per_device_train_batch_size": 8,
                "learning_rate": 1e-4,
                "warmup_steps": 2,
                "seed": 1,
                "data_seed": 1,
                **FINETUNE,
                "report_to": ["wandb"],
                "dataloader_num_workers": 2,
                "save_strategy": "steps",
                "save_steps": 5,
                "save_total_limit": 2,
                "eval_strategy": "steps",
                "eval_steps": 5,
                "load_best_model_at_end": True,
                "metric_for_best_model": "eval_stsb-dev_spearman",
                "batch_sampler": BatchSamplers.BATCH_SAMPLER,
                "multi_dataset_batch_sampler": "round_robin",
            },
        ),
        (  # nli-mnrl: batches without duplicate texts, resume checkpoints every 4 steps, no tracker
            [*common, "--recipe", "nli-mnrl", "--max-steps", 9, "--save-every", 4, "--report-to", "none"],
            0,
            {
                **MACHINE,
                **SCHEDULE,
                **TWIN_ADAM,
                "max_steps": 9,
                "per_device_train_batch_size": 16,
                "learning_rate": 2e-5,
                "warmup_steps": 0,
                "seed": 0,
                "data_seed": 0,
                **FINETUNE,
                **NO_EVALUATION,
                "report_to": "none",
                "dataloader_num_workers": 0,
                "save_strategy": "steps",
                "save_steps": 4,
                "save_total_limit": 1,
                "metric_for_best_model": None,
                "batch_sampler": BatchSamplers.NO_DUPLICATES,
                "multi_dataset_batch_sampler": "round_robin",
            },
        ),
    ]


@pytest.mark.parametrize("case", range(3), ids=["twin", "sbert-nli", "nli-mnrl"])
def test_the_finetune_stage_builds_its_arguments_as_before(tiny_model, tmp_path, case):
    argv, warmup, expected = finetune_cases(tiny_model, tmp_path / "out")[case]
    args = parsed(*argv)
    work = tmp_path / "work"
    built = training_arguments(args, work, warmup, args.recipe == "twin")
    assert differences(built, {"output_dir": str(work), **expected}) == {}


class Built(Exception):
    """Raised by the stand-in trainer once it holds the arguments: nothing is trained."""

    def __init__(self, arguments):
        super().__init__("arguments built")
        self.arguments = arguments


def semeval_arguments(monkeypatch, argv, work):
    """The arguments ``finetune_semeval.fine_tune`` hands its trainer (caught before any training)."""
    import sentence_transformers

    def catch(*_, args, **__):
        raise Built(args)

    monkeypatch.setattr(sentence_transformers, "SentenceTransformerTrainer", catch)
    train = DataRoot(DEMO_DATA).load(semeval5a.load)["train"]  # 16 pairs
    with pytest.raises(Built) as built:
        fine_tune(parsed(*argv), train, work)
    return built.value.arguments


@pytest.mark.parametrize(
    "extra, expected",
    [
        (  # 3 passes over 16 pairs at batch 8: 6 steps, 10% of them warm-up (rounded up: 1)
            ("--epochs", 3, "--batch-size", 8, "--lr", 1e-3),
            {"max_steps": 6, "per_device_train_batch_size": 8, "learning_rate": 1e-3, "warmup_steps": 1, "seed": 0},
        ),
        (  # --max-steps instead of epochs; a quarter of 10 steps warm up (rounded up: 3); the defaults' lr
            ("--max-steps", 10, "--warmup", 0.25, "--batch-size", 4, "--seed", 5),
            {"max_steps": 10, "per_device_train_batch_size": 4, "learning_rate": 3e-5, "warmup_steps": 3, "seed": 5},
        ),
    ],
    ids=["epochs", "max-steps"],
)
def test_the_semeval_stage_builds_its_arguments_as_before(tiny_model, tmp_path, monkeypatch, extra, expected):
    argv = ["finetune-semeval", "--model", tiny_model, "--data", DEMO_DATA, "--out", tmp_path / "m.json", *extra]
    work = tmp_path / "work"
    built = semeval_arguments(monkeypatch, argv, work)
    expected = {
        **MACHINE,
        **SCHEDULE,
        **TWIN_ADAM,  # twin §3.3's Adam
        **expected,
        "output_dir": str(work),
        "data_seed": expected["seed"],
        "report_to": "none",
        "save_strategy": "no",
        "dataloader_drop_last": False,
    }
    assert differences(built, expected) == {}
