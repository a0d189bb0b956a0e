"""The universal-analogy and STS sentence-transformers evaluators give the `evaluate` stage's numbers."""

from __future__ import annotations

import json

import pytest
from finetune_builders import NLI_TRAIN
from testdata import DEMO_DATA

from pipeline.cli import build_parser, main
from pipeline.finetune.finetune import train


@pytest.fixture(scope="module")
def finetuned(tiny_model, tmp_path_factory):
    out = tmp_path_factory.mktemp("st") / "sbert"
    argv = [
        "finetune",
        "--model",
        str(tiny_model),
        "--recipe",
        "sbert-nli",
        "--nli",
        str(NLI_TRAIN),
        "--max-steps",
        "3",
        "--batch-size",
        "8",
        "--lr",
        "1e-3",
        "--out",
        str(out),
    ]
    train(build_parser(argv).parse_args(argv))
    return out


@pytest.mark.parametrize("task", ["analogy", "sts"])
def test_evaluator_equals_the_evaluate_stage(finetuned, tmp_path, task):
    from sentence_transformers import SentenceTransformer

    from pipeline.finetune.evaluator import STSEvaluator, UniversalAnalogyEvaluator

    metrics_path = tmp_path / f"{task}.json"
    assert (
        main(
            [
                "evaluate",
                task,
                "--model",
                str(finetuned),
                "--data",
                str(DEMO_DATA),
                "--max-length",
                "64",
                "--out",
                str(metrics_path),
            ]
        )
        == 0
    )
    stage = json.loads(metrics_path.read_text())
    model = SentenceTransformer(str(finetuned), device="cpu")
    if task == "analogy":
        evaluator = UniversalAnalogyEvaluator.from_data_root(DEMO_DATA, max_length=64)
        scores = evaluator(model)
        assert scores["analogy_overall"] == stage["overall"]
        for level in ("word", "phrase", "sentence"):
            assert scores[f"analogy_{level}_avg"] == stage["levels"][level]["avg"]
        assert evaluator.last_result["categories"] == stage["categories"]
        assert evaluator.primary_metric == "analogy_overall" and evaluator(model) == scores
    else:
        evaluator = STSEvaluator.from_data_root(DEMO_DATA, max_length=64)
        scores = evaluator(model)
        assert scores["sts_avg"] == stage["avg"] and evaluator.primary_metric == "sts_avg"
        assert evaluator(model) == scores  # a trainer calls it again and again
        assert all(scores[f"sts_{name}"] == value for name, value in stage["scores"].items())


def test_stsb_dev_is_the_selection_metric_and_never_a_test_set(finetuned):
    from sentence_transformers import SentenceTransformer

    from pipeline.finetune.evaluator import evaluators_for

    chosen = evaluators_for(DEMO_DATA, ["analogy", "sts", "stsb-dev"], max_length=64)
    assert [e.name for e in chosen] == ["stsb-dev", "sts", "analogy"]
    dev = chosen[0]
    assert list(dev.sets) == ["STS-B-dev"]
    scores = dev(SentenceTransformer(str(finetuned), device="cpu"))
    assert set(scores) == {"stsb-dev_STS-B-dev", "stsb-dev_spearman"} and dev.primary_metric == "stsb-dev_spearman"
    assert dev(SentenceTransformer(str(finetuned), device="cpu")) == scores


def test_training_logs_evaluations_and_keeps_the_best_dev_checkpoint(tiny_model, tmp_path):
    out = tmp_path / "selected"
    argv = [
        "finetune",
        "--model",
        str(tiny_model),
        "--recipe",
        "sbert-nli",
        "--nli",
        str(NLI_TRAIN),
        "--max-steps",
        "6",
        "--batch-size",
        "8",
        "--lr",
        "1e-3",
        "--max-length",
        "64",
        "--out",
        str(out),
        "--eval-data",
        str(DEMO_DATA),
        "--eval-steps",
        "3",
        "--eval-tasks",
        "stsb-dev,sts,analogy",
        "--select-best",
    ]
    train(build_parser(argv).parse_args(argv))
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    evaluations = [e for e in log if "eval" in e]
    assert [e["step"] for e in evaluations] == [3, 6]
    assert all(
        {"eval_stsb-dev_spearman", "eval_sts_avg", "eval_analogy_overall"} <= set(e["eval"]) for e in evaluations
    )
    config = json.loads((out / "finetune_config.json").read_text())
    best = max(evaluations, key=lambda e: e["eval"]["eval_stsb-dev_spearman"])
    assert config["best_checkpoint_step"] == best["step"]
    assert config["best_metric"] == pytest.approx(best["eval"]["eval_stsb-dev_spearman"])


def test_the_saved_heads_belong_to_the_best_checkpoint(tiny_model, tmp_path, monkeypatch):
    """With selection on STS-B dev, the encoder comes from the best checkpoint: so does ``heads.pt``
    (sbert-nli's softmax head included), not the last step's heads. The trainer keeps the heads beside
    every checkpoint and loads them back with the best one (pipeline/finetune/twin_trainer.py)."""
    import torch

    from pipeline.finetune import finetune

    kept = []  # keep the work folder (its checkpoints) instead of removing it after the run
    monkeypatch.setattr(finetune.shutil, "rmtree", lambda path, **kw: kept.append(path))
    out = tmp_path / "selected"
    argv = ["finetune", "--model", str(tiny_model), "--recipe", "sbert-nli", "--nli", str(NLI_TRAIN)]
    argv += ["--max-steps", "6", "--batch-size", "8", "--lr", "1e-2", "--max-length", "64", "--out", str(out)]
    argv += ["--eval-data", str(DEMO_DATA), "--eval-steps", "3", "--eval-tasks", "stsb-dev", "--seed", "1"]
    argv.append("--select-best")
    train(build_parser(argv).parse_args(argv))
    best = json.loads((out / "finetune_config.json").read_text())["best_checkpoint_step"]
    work = tmp_path / ".selected.work"
    saved, at_best = torch.load(out / "heads.pt"), torch.load(work / f"checkpoint-{best}" / "heads.pt")
    assert saved.keys() == at_best.keys() == {"nli"}
    assert all(torch.equal(saved["nli"][k], at_best["nli"][k]) for k in saved["nli"])
    assert best == 3, best  # the seed and lr are chosen so: the last step is not the best
    if best != 6:  # the last step's heads differ: the check above could fail
        last = torch.load(work / "checkpoint-6" / "heads.pt")
        assert not all(torch.equal(saved["nli"][k], last["nli"][k]) for k in saved["nli"])
